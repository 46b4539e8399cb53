#!/bin/sh
# Writes the generated parts of docs/guide/storage.md, the columns of run, sample,
# proc_sample and process, from the column tables, src/store/columns.c (with their
# output names and /metrics families). The parts lie between
# "<!-- generated: NAME -->" and "<!-- end generated -->"; test_columns fails while
# a doc differs from what this script writes. Look at the diff before committing it.
#   scripts/gen-storage-doc.sh    BUILD=DIR and WERROR=1 as for the build (make check's:
#                                 WERROR=1), so that it does not rebuild the others
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
make --no-print-directory BUILD="$BUILD" ${WERROR:+WERROR=$WERROR} "$BUILD/tests/test_columns" >/dev/null
if ! out=$(RSW_UPDATE_DOC=1 "$BUILD/tests/test_columns" 2>&1); then
	echo "$out" >&2
	exit 1
fi
git --no-pager diff --stat -- docs/guide/storage.md 2>/dev/null || true
