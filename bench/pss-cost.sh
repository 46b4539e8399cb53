#!/bin/sh
# Cost of one --pss read (smaps_rollup) against the size of the target.
#
#   make bench-bin && bench/pss-cost.sh [READS]
#
# For each size (64 MiB, 256 MiB, 1 GiB, 2 GiB of touched anonymous memory, 4 KiB
# pages), memhog holds it and build/bench/pssread reads /proc/PID/smaps_rollup READS
# times (default 21) through one kept-open fd, as record --pss does. Prints the median,
# min and max wall time of a read, and the median per GiB.
set -eu
BUILD=${BUILD:-build}
READS=${1:-21}
HOG=$BUILD/tests/bin/memhog
PSSREAD=$BUILD/bench/pssread
for f in "$HOG" "$PSSREAD"; do
	[ -x "$f" ] || { echo "missing $f: run 'make bench-bin' first" >&2; exit 2; }
done
tmp=$(mktemp -d)
hog=
trap '[ -n "$hog" ] && kill $hog 2>/dev/null; rm -rf "$tmp"' EXIT
printf '%-10s %10s %10s %10s %10s %10s %12s\n' size rss_MiB pss_MiB median_ms min_ms max_ms ms_per_GiB
for size in 64M 256M 1G 2G; do
	rm -f "$tmp/ready" "$tmp/stop"
	"$HOG" +$size touch "$tmp/ready" await "$tmp/stop" &
	hog=$!
	while [ ! -e "$tmp/ready" ]; do sleep 0.05; done
	set -- $("$PSSREAD" "$hog" "$READS")
	awk -v s=$size -v rss=$1 -v pss=$2 -v med=$3 -v lo=$4 -v hi=$5 'BEGIN {
		printf "%-10s %10.0f %10.0f %10.2f %10.2f %10.2f %12.2f\n", s, rss / 1024, pss / 1024,
			med, lo, hi, med / (rss / 1048576) }'
	touch "$tmp/stop"
	wait $hog || true
	hog=
done
