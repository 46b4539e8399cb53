#!/bin/sh
# bench/kpeak-real.sh [ROUNDS]: what the eBPF engine costs real programs. Each program
# runs alone, under `rsswatch record -i 1s --no-bpf --`, under the same with a program
# that does nothing attached to rss_stat beside it (bench/bpffloor: the floor of any
# program there, where the engine's runs), and under `rsswatch record -i 1s --` (the
# engine on), the four in turns, ROUNDS (5) times; its own wall time is taken
# by a wrapper around it (so the recorder's start-up and its engine's load are not
# counted), and the medians are compared with the program's alone. The programs:
# - xz: `xz -6 -T1` of 6.9 MB of text (seq output), a compressor's tables and buffers;
# - gcc: `gcc -O2 -c` of src/render/svg.c, a compiler's many small allocations;
# - python: a loop making 64 MiB bytes objects, 50 times: each is a fresh mapping
#   (above glibc's largest mmap threshold, 32 MiB), 16,384 page faults a loop.
# Each program runs once first, untimed, to warm the page cache.
# Needs root (the engine loads only as root).
set -eu
. "$(dirname "$0")/lib.sh"
rounds=${1:-5}
B=${BUILD:-build}
rsw=${RSW:-$B/rsswatch}
floor=$B/bench/bpffloor
[ -x "$rsw" ] && [ -x "$floor" ] || { echo "run 'make bench-bin' first" >&2; exit 2; }
command -v xz >/dev/null && command -v gcc >/dev/null && command -v python3 >/dev/null ||
	{ echo "needs xz, gcc and python3" >&2; exit 2; }
tmp=$(mktemp -d)
chmod 700 "$tmp"
trap 'rm -rf "$tmp"' EXIT
seq 1 1000000 >"$tmp/in.txt"

# The program NAME's command line, run by sh with its output discarded.
prog() {
	case $1 in
	xz) echo "xz -6 -T1 -c '$tmp/in.txt'" ;;
	gcc) echo "gcc -O2 -Isrc -I'$B/gen' -c src/render/svg.c -o '$tmp/svg.o'" ;;
	python) echo "python3 -c 'for i in range(50): b = b\"x\" * (64 << 20)'" ;;
	esac
}

# one PROG MODE(alone|nobpf|floor|bpf): the program's wall time in ms
one() {
	cmd="s=\$(date +%s%N); $(prog "$1") >/dev/null; e=\$(date +%s%N); echo \$(( (e - s) / 1000000 )) >'$tmp/ms'"
	case $2 in
	alone) sh -c "$cmd" ;;
	nobpf) "$rsw" record -q --no-bpf --db "$tmp/b.db" -i 1s -- sh -c "$cmd" >/dev/null 2>&1 ;;
	floor)
		"$floor" empty >"$tmp/floor" &
		f=$!
		until grep -q attached "$tmp/floor" 2>/dev/null; do
			kill -0 "$f" 2>/dev/null || { echo "bpffloor failed" >&2; exit 2; }
			sleep 0.01
		done
		"$rsw" record -q --no-bpf --db "$tmp/b.db" -i 1s -- sh -c "$cmd" >/dev/null 2>&1
		kill "$f"
		wait "$f" ;;
	bpf) "$rsw" record -q --db "$tmp/b.db" -i 1s -- sh -c "$cmd" >/dev/null 2>&1 ;;
	esac
	cat "$tmp/ms"
}

printf '%-7s %10s %18s %18s %18s\n' program alone "--no-bpf" "+ empty program" "the engine"
for p in ${PROGS:-xz gcc python}; do
	for m in alone nobpf floor bpf; do : >"$tmp/$p.$m"; done
	one $p alone >/dev/null
	r=0
	while [ $r -lt "$rounds" ]; do
		for m in alone nobpf floor bpf; do one $p $m >>"$tmp/$p.$m"; done
		r=$((r + 1))
	done
	a=$(median <"$tmp/$p.alone")
	n=$(median <"$tmp/$p.nobpf")
	f=$(median <"$tmp/$p.floor")
	k=$(median <"$tmp/$p.bpf")
	printf '%-7s %8d ms %8d ms %6.1f%% %8d ms %6.1f%% %8d ms %6.1f%%\n' "$p" "$a" "$n" \
		"$(awk -v x="$n" -v a="$a" 'BEGIN { print 100 * x / a }')" "$f" \
		"$(awk -v x="$f" -v a="$a" 'BEGIN { print 100 * x / a }')" "$k" \
		"$(awk -v x="$k" -v a="$a" 'BEGIN { print 100 * x / a }')"
done
