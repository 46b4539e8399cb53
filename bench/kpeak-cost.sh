#!/bin/sh
# bench/kpeak-cost.sh [SECONDS] [ROUNDS] [THREADS]: what the eBPF peak engine costs. A workload
# that faults pages in and out as fast as it can (bench/pagetouch: 64 MiB mapped,
# touched and unmapped in a loop, every fault a change of the kernel's page counts)
# runs alone, under `rsswatch record -i 1s --no-bpf`, under the same with a program that
# does nothing attached to rss_stat beside it (bench/bpffloor: the floor of any program
# there), and under `rsswatch record -i 1s` (the engine's program on rss_stat runs at
# each of those changes). Its pages a second
# give the workload's cost; the recorder's own CPU per second (it is attached with -p,
# so wait4 counts it alone) gives rsswatch's. Medians over ROUNDS, side by side in one
# run. THREADS (1) threads fault at once, each its own 64 MiB: on many CPUs, what the
# engine's shared counters cost when every CPU updates them. Needs root (the engine
# loads only as root).
set -eu
. "$(dirname "$0")/lib.sh"
secs=${1:-10}
rounds=${2:-5}
threads=${3:-1}
B=${BUILD:-build}
rsw=${RSW:-$B/rsswatch}
ru=$B/bench/rusage
pt=$B/bench/pagetouch
[ -x "$rsw" ] && [ -x "$ru" ] && [ -x "$pt" ] || { echo "run 'make bench-bin' first" >&2; exit 2; }
tmp=$(mktemp -d)
chmod 700 "$tmp"
trap 'rm -rf "$tmp"' EXIT

# one MODE(alone|nobpf|floor|bpf): "PAGES_PER_S RECORDER_US_PER_S"
one() {
	fl=
	if [ "$1" = floor ]; then
		"$B/bench/bpffloor" empty >"$tmp/floor.out" 2>&1 &
		fl=$!
		until grep -q attached "$tmp/floor.out" 2>/dev/null; do
			kill -0 "$fl" 2>/dev/null || { echo "bpffloor failed: $(cat "$tmp/floor.out")" >&2; exit 2; }
			sleep 0.01
		done
	fi
	"$pt" "$secs" 64 "$threads" >"$tmp/pt" &
	w=$!
	rec=0
	if [ "$1" != alone ]; then
		flag=
		[ "$1" = nobpf ] || [ "$1" = floor ] && flag=--no-bpf
		rm -f "$tmp/b.db"
		"$ru" "$rsw" record -q $flag --db "$tmp/b.db" -i 1s -p "$w" 2>"$tmp/ru" >/dev/null || true
		rec=$(sed -n 's/.*cpu_s=\([0-9.]*\).*/\1/p' "$tmp/ru" | awk -v s="$secs" '{ printf "%.0f", $1 * 1e6 / s }')
	fi
	wait "$w"
	[ -z "$fl" ] || { kill "$fl"; wait "$fl" 2>/dev/null || true; }
	echo "$(sed -n 's/pages_per_s=//p' "$tmp/pt") $rec"
}

modes="alone nobpf floor bpf"
[ -x "$B/bench/bpffloor" ] || modes="alone nobpf bpf"
for m in $modes; do : >"$tmp/$m"; done
r=0
while [ $r -lt "$rounds" ]; do
	for m in $modes; do one $m >>"$tmp/$m"; done
	r=$((r + 1))
done
base=$(cut -d' ' -f1 "$tmp/alone" | median)
for m in $modes; do
	p=$(cut -d' ' -f1 "$tmp/$m" | median)
	printf '%-6s %9d pages/s (%5.1f%% of alone)   recorder %6d us/s\n' "$m" "$p" \
		"$(awk -v p="$p" -v b="$base" 'BEGIN { print 100 * p / b }')" "$(cut -d' ' -f2 "$tmp/$m" | median)"
done
