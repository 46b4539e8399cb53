#!/bin/sh
# bench/peak-time.sh [ROUNDS]: how far the time rsswatch gives a peak is from the truth,
# with the eBPF engine and without it (--no-bpf), at -i 1s, side by side in one run.
# The workload (tests/bin/memhog) maps and touches 100 MiB, stamps CLOCK_REALTIME at
# once after its last page, unmaps it and sleeps: its peak is reached at that last
# page, a few microseconds before the stamp. (It stamps once before too: the first
# stamp's stdio buffer is a new heap page, which would make the true peak a moment
# after the stamp.) The error is the stamp minus the run's
# peak_rss_at (positive: the time given is before the stamp); its median and largest
# absolute value over ROUNDS (9) runs. Needs root (the engine loads only as root).
set -eu
. "$(dirname "$0")/lib.sh"
rounds=${1:-9}
B=${BUILD:-build}
rsw=$B/rsswatch
hog=$B/tests/bin/memhog
[ -x "$rsw" ] && [ -x "$hog" ] || { echo "run 'make bench-bin' first" >&2; exit 2; }
tmp=$(mktemp -d)
chmod 700 "$tmp"
trap 'rm -rf "$tmp"' EXIT

# one FLAG...: "ERROR_US SOURCE" of one run
one() {
	rm -f "$tmp/b.db" "$tmp/st" "$tmp/pre"
	"$rsw" record -q "$@" --db "$tmp/b.db" -i 1s -- \
		"$hog" stamp "$tmp/pre" sleep 200ms +100M stamp "$tmp/st" - sleep 1100ms >/dev/null 2>&1
	at=$(sqlite3 "$tmp/b.db" "select peak_rss_at from run order by id desc limit 1")
	src=$(sqlite3 "$tmp/b.db" "select replace(peak_source, ' ', '_') from run order by id desc limit 1")
	echo "$(( ($(cat "$tmp/st") - at) / 1000 )) $src"
}

: >"$tmp/bpf"
: >"$tmp/nobpf"
r=0
while [ $r -lt "$rounds" ]; do
	one >>"$tmp/bpf"
	one --no-bpf >>"$tmp/nobpf"
	r=$((r + 1))
done
for m in bpf nobpf; do
	med=$(cut -d' ' -f1 "$tmp/$m" | median)
	worst=$(cut -d' ' -f1 "$tmp/$m" | awk '{ v = $1 < 0 ? -$1 : $1; if (v > w) w = v } END { print w + 0 }')
	srcs=$(cut -d' ' -f2 "$tmp/$m" | sort | uniq -c | awk '{ printf "%s%s x%s", s, $2, $1; s = ", " }')
	printf '%-6s error median %9d us, largest %9d us   (peak sources: %s)\n' "$m" "$med" "$worst" "$srcs"
done
