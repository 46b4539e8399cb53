#!/bin/sh
# bench/exit-records-cost.sh [SECONDS] [ROUNDS]: what reading the kernel's exit records
# (taskstats) costs the recorder, per second of recording. rsswatch records an idle
# process at 1 s, with and without the listener (RSSWATCH_NO_TASKSTATS=1), on a quiet
# host and while a loop elsewhere on the host starts and ends short processes (every
# exit on the host reaches the listener, which keeps only the run's). CPU from wait4
# (bench/rusage), medians over ROUNDS. Needs root (the listener needs CAP_NET_ADMIN).
set -eu
. "$(dirname "$0")/lib.sh"
secs=${1:-20}
rounds=${2:-3}
B=${BUILD:-build}
rsw=$B/rsswatch
ru=$B/bench/rusage
[ -x "$rsw" ] && [ -x "$ru" ] || { echo "run 'make bench-bin' first" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'kill $idle $churn 2>/dev/null; rm -rf "$tmp"' EXIT
churn=
sleep 100000 &
idle=$!

# cpu_per_s LISTENER(0|1): rsswatch's CPU per second of recording, in microseconds
cpu_per_s() {
	env RSSWATCH_NO_TASKSTATS=$((1 - $1)) "$ru" "$rsw" record -q --db "$tmp/b.db" -i 1s \
		-d "${secs}s" -p "$idle" 2>"$tmp/ru" >/dev/null || true
	sed -n 's/.*cpu_s=\([0-9.]*\).*/\1/p' "$tmp/ru" | awk -v s="$secs" '{ printf "%.0f\n", $1 * 1e6 / s }'
}

for load in quiet churn; do
	if [ "$load" = churn ]; then
		sh -c 'while :; do /bin/true; done' &
		churn=$!
	fi
	rate=$(exits_per_s)
	for l in 0 1; do
		: >"$tmp/cpu$l"
	done
	r=0
	while [ $r -lt "$rounds" ]; do
		for l in 0 1; do cpu_per_s $l >>"$tmp/cpu$l"; done
		r=$((r + 1))
	done
	off=$(median <"$tmp/cpu0")
	on=$(median <"$tmp/cpu1")
	printf '%-6s %6d exits/s   without %6d us/s   with %6d us/s   listener %6d us/s\n' \
		"$load" "$rate" "$off" "$on" $((on - off))
	[ -n "$churn" ] && kill "$churn" && wait "$churn" 2>/dev/null || true
	churn=
done
