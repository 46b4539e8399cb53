#!/bin/sh
# bench/stacks-cost.sh [ROUNDS]: what record --stacks costs a program, in each of its
# modes, beside the engine without stacks and beside heaptrack. Each program runs
# alone, under `rsswatch record -i 1s --` (the engine, no stacks), under `rsswatch
# record -i 1s --stacks=MODE --` for mmap (the default), faults and malloc, and under
# `heaptrack`, in turns, ROUNDS (5) times, after one untimed run. MODES="alone bpf
# stacks faults malloc heaptrack" (the default) picks the ways, PROGS the programs. The program's own wall time is taken by a wrapper around it (the
# recorder's start-up, the engine's load and the end's symbolisation are not counted);
# heaptrack cannot trace through a wrapper (its preload is not inherited), so it is
# timed around `heaptrack PROG`, its start and its final write included. The CPU of
# each way (wait4 of the whole, bench/rusage) minus the CPU alone is the recorder's;
# the largest RSS of the mmap loop's runs (2 MiB of its own) is the recorder's.
# The programs:
# - mmap: bench/mmaploop, 20,000 maps, touches and unmaps of 1 MiB: the worst case,
#   two traced system calls in every 10-20 us;
# - xz: `xz -6 -T1` of 6.9 MB of text: a compressor's tables and buffers;
# - gcc: `gcc -O2 -c` of src/render/svg.c: a compiler's many small allocations;
# - python: 2,000,000 small strings in a list (pymalloc's arenas, a growing list);
# - big: python making 64 MiB bytes objects, 50 times (a fresh mapping each).
# Before the rounds, strace counts each program's traced calls (mmap, munmap, mremap,
# brk), printed with the table. Needs root; heaptrack and strace where present.
set -eu
. "$(dirname "$0")/lib.sh"
rounds=${1:-5}
B=${BUILD:-build}
rsw=${RSW:-$B/rsswatch}
ru=$B/bench/rusage
loop=$B/bench/mmaploop
[ -x "$rsw" ] && [ -x "$ru" ] && [ -x "$loop" ] || { echo "run 'make bench-bin' first" >&2; exit 2; }
for c in xz gcc python3; do
	command -v $c >/dev/null || { echo "needs $c" >&2; exit 2; }
done
# heaptrack and strace are optional: their columns are 0 where they are missing
all_modes="alone bpf stacks faults malloc heaptrack"
modes=${MODES:-$all_modes}
command -v heaptrack >/dev/null || modes=$(echo "$modes" | sed 's/heaptrack//')
have_strace=$(command -v strace >/dev/null && echo 1 || echo 0)
tmp=$(mktemp -d)
chmod 700 "$tmp"
trap 'rm -rf "$tmp"' EXIT
seq 1 1000000 >"$tmp/in.txt"

# one PROG MODE(alone|bpf|stacks|faults|malloc|heaptrack): "WALL_MS CPU_S MAXRSS_KIB"
one() {
	cmd="s=\$(date +%s%N); eval \"\$0\" >/dev/null; e=\$(date +%s%N); echo \$(( (e - s) / 1000000 )) >'$tmp/ms'"
	pc=$(stacks_prog "$1")
	case $2 in
	alone) "$ru" sh -c "$cmd" "$pc" 2>"$tmp/ru" ;;
	bpf) "$ru" "$rsw" record -q --db "$tmp/b.db" -i 1s -- sh -c "$cmd" "$pc" \
		>/dev/null 2>"$tmp/ru" ;;
	stacks | faults | malloc)
		sm=$([ "$2" = stacks ] && echo mmap || echo "$2")
		"$ru" "$rsw" record -q --stacks=$sm --db "$tmp/b.db" -i 1s -- sh -c "$cmd" "$pc" \
		>/dev/null 2>"$tmp/ru" ;;
	heaptrack)
		s=$(date +%s%N)
		eval "\"$ru\" heaptrack -o \"$tmp/ht\" $pc" >/dev/null 2>"$tmp/ru.all"
		e=$(date +%s%N)
		echo $(((e - s) / 1000000)) >"$tmp/ms"
		grep cpu_s= "$tmp/ru.all" >"$tmp/ru"
		rm -f "$tmp"/ht* ;;
	esac
	echo "$(cat "$tmp/ms") $(sed -n 's/.*cpu_s=\([0-9.]*\) maxrss_kib=\([0-9]*\).*/\1 \2/p' "$tmp/ru" | tail -n 1)"
}

ratio() { awk -v x="$1" -v a="$2" 'BEGIN { if (x) printf "%.1f%%", 100 * x / a; else printf "-" }'; }
col() { awk -v c="$1" '{ print $c }'; }

# one column a way: its wall time and its share of alone's; then the CPU each way took
# beyond the program's own (wait4 of the whole minus alone's)
printf '%-7s %9s' program "calls/s"
for m in $all_modes; do printf ' %18s' "$(echo "$m" | sed 's/^bpf$/the engine/; s/^stacks$/--stacks=mmap/;
	s/^faults$/--stacks=faults/; s/^malloc$/--stacks=malloc/')"; done
printf '   CPU beyond alone (ms):'
for m in bpf stacks faults malloc; do printf ' %s' "$m"; done
echo
for p in ${PROGS:-mmap xz gcc python big}; do
	for m in $all_modes; do echo "0 0 0" >"$tmp/$p.$m"; done
	for m in $modes; do : >"$tmp/$p.$m"; done
	echo "0 total" >"$tmp/strace"
	[ "$have_strace" = 0 ] || eval "strace -f -c -e trace=mmap,munmap,mremap,brk -o $tmp/strace $(stacks_prog $p)" >/dev/null 2>&1
	calls=$(awk '$NF == "total" { print $(NF - 1) }' "$tmp/strace")
	one $p alone >/dev/null
	r=0
	while [ $r -lt "$rounds" ]; do
		for m in $modes; do one $p $m >>"$tmp/$p.$m"; done
		r=$((r + 1))
	done
	for m in $all_modes; do
		eval "w_$m=\$(col 1 <\"$tmp/$p.$m\" | median)"
		eval "c_$m=\$(col 2 <\"$tmp/$p.$m\" | median)"
		eval "r_$m=\$(col 3 <\"$tmp/$p.$m\" | median)"
	done
	printf '%-7s %9d' "$p" "$(awk -v c="$calls" -v w="$w_alone" 'BEGIN { print int(c * 1000 / w) }')"
	for m in $all_modes; do
		eval "w=\$w_$m"
		if [ $m = alone ]; then printf ' %15d ms' "$w"; else printf ' %8d ms %7s' "$w" "$(ratio "$w" "$w_alone")"; fi
	done
	printf '  '
	for m in bpf stacks faults malloc; do
		eval "c=\$c_$m"
		printf ' %s' "$(awk -v a="$c" -v b="$c_alone" 'BEGIN { if (a) printf "%.0f", 1000 * (a - b); else printf "-" }')"
	done
	echo
	[ "$p" = mmap ] && echo "#  mmap: largest RSS: alone $r_alone KiB, the engine $r_bpf KiB, --stacks=mmap $r_stacks KiB, faults $r_faults KiB, malloc $r_malloc KiB, heaptrack $r_heaptrack KiB"
done
