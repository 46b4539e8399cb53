#!/bin/sh
# Where rsswatch's CPU per sample goes at a slow interval (default 1 s): the recorder's
# two threads beside bench/readfloor doing the same reads and nothing else.
#
#   make bench-bin && bench/cost-breakdown.sh [SECONDS [REPEATS [INTERVAL_MS]]]
#
# Each repetition runs at once, on one idle target holding 64 MiB:
#   rsswatch record -q -p PID -i INTERVAL -d SECONDS   (sampling thread and writer thread)
#   readfloor with MASK 0 (the wake-up alone), 64 (+ one statm read), 1 (+ status), 63
#   (the six reads of one rsswatch sample: status, stat, io, meminfo, memory pressure,
#   a directory's fstat)
# and takes each thread's time on CPU (the first field of /proc/PID/task/TID/schedstat,
# in ns) over a window that leaves out 2 s at the start and 2 s at the end, divided by
# the ticks in it. Prints each figure's median over the repetitions.
set -eu
BUILD=${BUILD:-build}
SECS=${1:-30}
REPEATS=${2:-3}
MS=${3:-1000}
RSW=$BUILD/rsswatch
FLOOR=$BUILD/bench/readfloor
HOG=$BUILD/bench/memhog
[ -x "$HOG" ] || HOG=$BUILD/tests/bin/memhog
for f in "$RSW" "$FLOOR" "$HOG"; do
	[ -x "$f" ] || { echo "missing $f: run 'make bench-bin tests-built' first" >&2; exit 2; }
done
[ "$SECS" -ge 8 ] || { echo "cost-breakdown: SECONDS must be at least 8" >&2; exit 2; }
tmp=$(mktemp -d)
chmod 700 "$tmp"
hog=
trap '[ -n "$hog" ] && kill "$hog" 2>/dev/null; rm -rf "$tmp"' EXIT
"$HOG" +64M sleep 100000s >/dev/null 2>&1 &
hog=$!
sleep 0.5

# cpu_ns PID: "TID NS" for each thread of PID
cpu_ns() {
	for t in /proc/"$1"/task/*; do
		echo "${t##*/} $(cut -d' ' -f1 "$t/schedstat" 2>/dev/null || echo 0)"
	done
}

win=$((SECS - 4))
ticks=$((win * 1000 / MS))
rep=1
while [ "$rep" -le "$REPEATS" ]; do
	rm -f "$tmp"/x.db*
	"$RSW" record --db "$tmp/x.db" -q -p "$hog" -i "${MS}ms" -d "${SECS}s" >/dev/null 2>&1 &
	pids="rsswatch=$!"
	for m in 0 64 1 63; do
		"$FLOOR" $((MS * 1000)) "$SECS" "$hog" "$m" >/dev/null &
		pids="$pids mask$m=$!"
	done
	sleep 2
	for p in $pids; do cpu_ns "${p#*=}" >"$tmp/a.${p%%=*}"; done
	sleep "$win"
	for p in $pids; do cpu_ns "${p#*=}" >"$tmp/b.${p%%=*}"; done
	for p in $pids; do
		name=${p%%=*}
		# threads in the order they started: the first is the sampling thread
		join "$tmp/a.$name" "$tmp/b.$name" | sort -n | awk -v n="$name" -v t="$ticks" '
			{ us = ($3 - $2) / 1000 / t
			  if (n != "rsswatch") { print n, us; next }
			  print (NR == 1 ? "rsswatch-sampling" : "rsswatch-writer"), us; all += us }
			END { if (n == "rsswatch") print "rsswatch-all", all }'
	done >>"$tmp/figures"
	for p in $pids; do wait "${p#*=}" || true; done
	rep=$((rep + 1))
done

echo "CPU per sample at ${MS} ms, median of $REPEATS (us):"
for name in mask0 mask64 mask1 mask63 rsswatch-sampling rsswatch-writer rsswatch-all; do
	awk -v n="$name" '$1 == n { print $2 }' "$tmp/figures" | sort -n |
		awk -v n="$name" '{ v[NR] = $1 } END { if (NR) printf "  %-18s %8.1f\n", n, v[int((NR + 1) / 2)] }'
done
