#!/bin/sh
# make demo: records the pipeline example with and without its bug and shows both runs.
# The runs go to a database of their own (build/demo.db, or $DEMO_DB), made afresh each
# time.
set -eu
BUILD=${BUILD:-build}
RSW=$BUILD/rsswatch
export RSSWATCH_DB="${DEMO_DB:-$BUILD/demo.db}"
rm -f "$RSSWATCH_DB" "$RSSWATCH_DB-wal" "$RSSWATCH_DB-shm"

# Bold headings on a terminal only: a log or a pipe gets plain text.
if [ -t 1 ]; then
	say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
else
	say() { printf '\n== %s\n' "$*"; }
fi

say "rsswatch record: the pipeline with the bug (8 workers, 32 MiB partitions)"
"$RSW" record -i 20ms -l "pipeline --bug" -- "$BUILD/examples/pipeline" --workers 8 --bug
say "rsswatch record: the same pipeline, fixed"
"$RSW" record -i 20ms -l "pipeline fixed" -- "$BUILD/examples/pipeline" --workers 8

say "rsswatch ls"
"$RSW" ls
say "rsswatch show 1   (with the bug: buffers pile up, memory grows with the workers)"
"$RSW" show 1
say "rsswatch show 2   (fixed: memory stays at about two buffers)"
"$RSW" show 2
if "$RSW" compare --help >/dev/null 2>&1; then
	say "rsswatch compare 1 2"
	"$RSW" compare 1 2
fi
say "rsswatch export 2 --format csv (first lines)"
"$RSW" export 2 --format csv | head -n 4

# What holds the memory, with no change to the program: examples/scale calls nothing of
# rsswatch. Its table is paid once, its buffers once per item; recorded with --stacks
# at three sizes, the stacks at each peak name both, and model says which grows.
if [ "$(id -u)" = 0 ] && "$RSW" record -q --stacks -- true >/dev/null 2>&1; then
	ids=
	for n in 1 2 4; do
		say "rsswatch record --stacks --param n=$n -- scale $n   (a 64 MiB table, 16 MiB an item)"
		"$RSW" record -q --stacks --param n=$n -l "scale n=$n" -- "$BUILD/examples/scale" "$n"
		ids="$ids $("$RSW" show last --json | sed -n 's/^{"id":\([0-9]*\),.*/\1/p')"
	done
	set -- $ids
	say "rsswatch show $3   (n=4: the stacks holding the memory at its peak)"
	"$RSW" show "$3" | sed -n '/^at the peak/,/^$/p'
	say "rsswatch model 'stack[alloc_item_buffer] ~ n' $*   (grows with n)"
	"$RSW" model 'stack[alloc_item_buffer] ~ n' "$@"
	say "rsswatch model 'stack[alloc_constraint_table] ~ n' $*   (flat)"
	"$RSW" model 'stack[alloc_constraint_table] ~ n' "$@"
else
	say "record --stacks (what holds the memory) needs root and the eBPF engine: left out"
fi
printf '\nThe runs are in %s: try "RSSWATCH_DB=%s %s show 1 --json".\n' \
	"$RSSWATCH_DB" "$RSSWATCH_DB" "$RSW"
