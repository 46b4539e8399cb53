#!/bin/sh
# Another user's process churn beside an agent of 0, 100 and 1,024 waiting targets, for
# two builds side by side: how many fork+exec of /bin/true a loop of another uid gets
# through in WINDOW_S seconds, and the agent's CPU meanwhile. Run as root after
# `make bench-bin` in both trees:
#
#   bench/agent-churn.sh OLD_BUILD NEW_BUILD [ROUNDS] [WINDOW_S]   (default 3 rounds, 5 s)
#
# Each target is a pattern nothing matches (`^churnbench-I$`): every target waits, as
# a fleet's targets do between instances. The builds take turns within each round;
# the figures are the medians over the rounds.
set -eu
ulimit -n 65536 2>/dev/null || true
OLD=$1
NEW=$2
ROUNDS=${3:-3}
WIN=${4:-5}
CHURN=${CHURN:-$NEW/bench/churn}
DIR=$(mktemp -d /tmp/rsw-churn.XXXXXX)
chmod 711 "$DIR"
UID_OTHER=${UID_OTHER:-61099}
AGENT=""
cleanup() {
	[ -n "$AGENT" ] && kill "$AGENT" 2>/dev/null
	rm -rf "$DIR"
}
trap cleanup EXIT

conf() {	# N
	: >"$DIR/c$1.conf"
	i=1
	while [ "$i" -le "$1" ]; do
		printf 'name=t%d match=^churnbench-%d$\n' "$i" "$i" >>"$DIR/c$1.conf"
		i=$((i + 1))
	done
}

ticks() {	# PID: utime + stime in clock ticks
	awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"
}

measure() {	# BUILD N: prints "forks cpu_s"
	cpu=0
	if [ "$2" -gt 0 ]; then
		"$1/rsswatch" agent -q --db "$DIR/db-$2.db" --config "$DIR/c$2.conf" -i 1s \
			2>"$DIR/agent.err" &
		AGENT=$!
		# started when every target waits (its threads are up) and the CPU of the start
		# has settled
		tries=0
		while [ "$(ls "/proc/$AGENT/task" 2>/dev/null | wc -l)" -lt "$2" ] && [ "$tries" -lt 600 ]; do
			sleep 0.1; tries=$((tries + 1))
		done
		sleep 2
		t0=$(ticks "$AGENT")
	fi
	n=$(setpriv --reuid="$UID_OTHER" --regid="$UID_OTHER" --clear-groups "$CHURN" "$WIN")
	if [ "$2" -gt 0 ]; then
		t1=$(ticks "$AGENT")
		cpu=$(awk -v a="$t0" -v b="$t1" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", (b - a) / hz }')
		kill "$AGENT"
		wait "$AGENT" 2>/dev/null || true
		AGENT=""
	fi
	echo "$n $cpu"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

for n in 0 100 1024; do conf "$n"; done
: >"$DIR/raw"
r=1
while [ "$r" -le "$ROUNDS" ]; do
	for n in 0 100 1024; do
		for b in old new; do
			[ "$b" = old ] && build=$OLD || build=$NEW
			echo "$b $n $(measure "$build" "$n")" >>"$DIR/raw"
		done
	done
	r=$((r + 1))
done
cat "$DIR/raw" >&2
printf '| targets | build | fork+exec in %s s (median of %s) | agent CPU s in that time |\n|---|---|---|---|\n' "$WIN" "$ROUNDS"
for n in 0 100 1024; do
	for b in old new; do
		f=$(awk -v b="$b" -v n="$n" '$1 == b && $2 == n { print $3 }' "$DIR/raw" | median)
		c=$(awk -v b="$b" -v n="$n" '$1 == b && $2 == n { print $4 }' "$DIR/raw" | median)
		echo "| $n | $b | $f | $c |"
	done
done
