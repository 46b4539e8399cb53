#!/bin/sh
# bench/busy-set.sh [SECONDS] [ROUNDS] [INTERVAL]: what telling a set's exit records
# from the host's other exits costs, and what it saves. rsswatch records a launched
# command (its own cgroup: a set) every INTERVAL (5s), with the proc connector (its fork events tell the
# set's processes) and without it (RSSWATCH_NO_PROCCN=1: every record of an unknown
# process waits for the next drain, up to 2,048, and the rest are dropped), on a quiet
# host and while a loop elsewhere starts and ends /bin/true as fast as it can. CPU
# from wait4 (bench/rusage), medians over ROUNDS; records dropped from the run's
# exit_records_lost event. Needs root (exit records need CAP_NET_ADMIN).
set -eu
. "$(dirname "$0")/lib.sh"
secs=${1:-20}
rounds=${2:-3}
every=${3:-5s}
B=${BUILD:-build}
rsw=$B/rsswatch
ru=$B/bench/rusage
[ -x "$rsw" ] && [ -x "$ru" ] || { echo "run 'make bench-bin' first" >&2; exit 2; }
tmp=$(mktemp -d)
chmod 700 "$tmp"
trap 'kill $churn 2>/dev/null; rm -rf "$tmp"' EXIT
churn=

# one CONNECTOR(0|1): "CPU_US_PER_S DROPPED" for one recording
one() {
	rm -f "$tmp/b.db"
	env RSSWATCH_NO_PROCCN=$((1 - $1)) "$ru" "$rsw" record -q --db "$tmp/b.db" -i "$every" \
		-- sleep "$secs" 2>"$tmp/ru" >/dev/null || true
	cpu=$(sed -n 's/.*cpu_s=\([0-9.]*\).*/\1/p' "$tmp/ru" | awk -v s="$secs" '{ printf "%.0f", $1 * 1e6 / s }')
	d=$("$rsw" show --db "$tmp/b.db" --json | grep -o 'dropped=[0-9]*' | head -1 | cut -d= -f2)
	echo "$cpu ${d:-0}"
}

for load in quiet churn; do
	if [ "$load" = churn ]; then
		sh -c 'while :; do /bin/true; done' &
		churn=$!
	fi
	rate=$(exits_per_s)
	: >"$tmp/r0"
	: >"$tmp/r1"
	r=0
	while [ $r -lt "$rounds" ]; do
		for c in 0 1; do one $c >>"$tmp/r$c"; done
		r=$((r + 1))
	done
	printf '%-6s %6d exits/s   without the connector %6d us/s, %5d dropped   with %6d us/s, %5d dropped\n' \
		"$load" "$rate" "$(cut -d' ' -f1 "$tmp/r0" | median)" "$(cut -d' ' -f2 "$tmp/r0" | median)" \
		"$(cut -d' ' -f1 "$tmp/r1" | median)" "$(cut -d' ' -f2 "$tmp/r1" | median)"
	[ -n "$churn" ] && kill "$churn" && wait "$churn" 2>/dev/null || true
	churn=
done
