#!/bin/sh
# The restart gap of record --follow: a supervisor loop restarts a small service
# (memhog holding 4 MiB for 300 ms, argv[0] set to a tag) as soon as it exits, N + 1
# times; rsswatch records each instance as a run of one series, and stores with each
# run after the first a "restart" event whose gap_us runs from the end of the previous
# instance (its exit, seen through its pidfd) to the new run's first sample. The gap
# thus holds the previous run's finish and summary, the supervisor's fork and exec,
# the wait for the new process and the attach.
# Prints the median, smallest and largest of the N gaps, with the proc connector's
# events (the default) and with the polling fallback (RSSWATCH_NO_PROCCN=1).
# Usage: bench/follow-gap.sh [N] (default 10; about 4 s per mode).
BUILD=${BUILD:-build}
bin=$BUILD/rsswatch
hog=$BUILD/tests/bin/memhog
[ -x "$bin" ] && [ -x "$hog" ] || { echo "follow-gap: build first (make bench-bin)" >&2; exit 2; }
n=${1:-10}
dir=$(mktemp -d /tmp/follow-gap.XXXXXX) || exit 1	# mktemp -d makes it 0700
trap 'rm -rf "$dir"' EXIT

# measure MODE ENV...: one series of n + 1 instances; prints one line
measure() {
	mode=$1
	shift
	db="$dir/$mode.db"
	tag="fgap-$mode-$$"
	env "$@" "$bin" record -n "^$tag" --follow -i "${INTERVAL:-100ms}" --db "$db" \
		>/dev/null 2>"$dir/$mode.err" &
	rec=$!
	until grep -q "waiting for a process" "$dir/$mode.err"; do sleep 0.05; done
	i=0
	while [ "$i" -le "$n" ]; do
		bash -c 'exec -a "$0" "$1" +4M sleep 300ms' "$tag" "$hog"
		i=$((i + 1))
	done
	until [ "$(grep -c 'restarted after' "$dir/$mode.err")" -ge "$n" ]; do sleep 0.05; done
	kill -INT "$rec"
	wait "$rec"
	sqlite3 "$db" "SELECT substr(detail, 8, instr(detail, ' ') - 8) FROM event
		       WHERE kind = 'restart'" | sort -n >"$dir/$mode.gaps"
	awk -v mode="$mode" '{ g[NR] = $1 }
		END { m = NR % 2 ? g[(NR + 1) / 2] : (g[NR / 2] + g[NR / 2 + 1]) / 2;
		      printf "%-10s %3d restarts  median %7.2f ms  min %7.2f ms  max %7.2f ms\n",
			     mode, NR, m / 1000, g[1] / 1000, g[NR] / 1000 }' "$dir/$mode.gaps"
}

measure events
measure polling RSSWATCH_NO_PROCCN=1
