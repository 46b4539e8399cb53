#!/bin/sh
# make lint: the one-way include rule between the layers of src/ (docs/dev/ARCHITECTURE.md),
# the one-way calls inside the store (store.c -> write.c), and no banned functions
# anywhere in C sources. Prints each violation and exits 1 when there is one.
#
# A file in src/LAYER/ may include, of the project's headers, only those of the layers
# allowed below (its own layer always). Single headers allowed across a layer are
# named in full.
set -u
cd "$(dirname "$0")/.." || exit 2

allowed() {	# allowed LAYER: the layers (or headers) that LAYER may include
	case "$1" in
	base) echo "base" ;;
	bpf) echo "" ;;
	source) echo "base lib/page.h bpf" ;;
	store) echo "base" ;;
	metrics) echo "base store/run.h source/cgroup.h" ;;
	record) echo "base source store metrics" ;;
	model) echo "base store/run.h" ;;
	render) echo "base store/run.h model/model.h" ;;
	cli) echo "base store metrics record model render" ;;
	*) echo "" ;;
	esac
}


bad=0
for f in $(find src -name '*.[ch]' | sort); do
	layer=$(echo "$f" | cut -d/ -f2)
	ok_list=$(allowed "$layer")
	for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
		case "$inc" in
		*/*) ;;
		*) continue ;;	# a header next to the file
		esac
		top=${inc%%/*}
		[ "$top" = "$layer" ] && continue
		ok=0
		for a in $ok_list; do
			if [ "$a" = "$top" ] || [ "$a" = "$inc" ]; then
				ok=1
				break
			fi
		done
		if [ "$ok" = 0 ]; then
			echo "$f: includes $inc: layer $layer may include only: $ok_list"
			bad=1
		fi
	done
done

# Calls in the store go one way, from opening and closing to the writer: write.c calls
# none of the functions that store.c defines (docs/dev/ARCHITECTURE.md, src/store).
for fn in $(grep -v '^static' src/store/store.c |
	    sed -n 's/^[a-z][a-z0-9_ *]*[ *]\([a-z_][a-z0-9_]*\)(.*/\1/p'); do
	if grep -nE "\b$fn\(" src/store/write.c; then
		echo "src/store/write.c calls $fn (store.c): store.c calls write.c, not the other way round"
		bad=1
	fi
done

# Functions with a safer replacement in every case: snprintf, strlcpy_rsw or buf_*,
# strtol with an end check (parse.h), strtok_r.
banned='\b(sprintf|vsprintf|strcpy|strcat|strncat|atoi|atol|atoll|strtok|gets)\('
if grep -nE "$banned" $(find src lib tests bench examples -name '*.[ch]' | sort) | grep -v 'lint: allow'; then
	echo "banned functions above: use snprintf, strlcpy_rsw or buf_*, parse.h's parsers, strtok_r"
	bad=1
fi
[ "$bad" = 0 ] && echo "lint: include rule, store calls and banned functions: ok"
exit "$bad"
