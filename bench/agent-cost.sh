#!/bin/sh
# rsswatch agent with 1, 10 and 100 targets: CPU per target per second, and the scrape
# latency of its /metrics; beside prometheus-process-exporter (Debian's package) given
# the same targets, where it is installed. Run after `make bench-bin`, as root or not:
#
#   bench/agent-cost.sh [WINDOW_S]        (default 20 s per measurement)
#   NS="100" bench/agent-cost.sh          only some of the target counts
#
# Each target is an idle `sleep` under a name of its own (argv[0] agbench-I), matched by
# one config line `name=tI match=^agbench-I( |$)`. The agent samples every 1 s and is
# scraped once a second (as Prometheus would, at a fast scrape interval); its CPU time
# is taken over WINDOW_S seconds after a 5 s start (build/bench/cpuwindow). The exporter
# gets one group per target (cmdline regex) and the same scrapes; it reads /proc at each
# scrape. Prints one line per measurement.
set -eu
BUILD=${BUILD:-build}
WIN=${1:-20}
PORT=${PORT:-19581}
XPORT=${XPORT:-19582}
DIR=$(mktemp -d /tmp/rsw-agent-bench.XXXXXX)
chmod 700 "$DIR"
PIDS=""
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null || true; done
	rm -rf "$DIR"
}
trap cleanup EXIT

targets() {	# N: starts N sleeps and writes the configs
	: >"$DIR/agent.conf"
	printf 'process_names:\n' >"$DIR/px.yml"
	i=1
	while [ "$i" -le "$1" ]; do
		bash -c 'exec -a "$0" sleep 100000' "agbench-$i" &
		PIDS="$PIDS $!"
		printf 'name=t%d match="^agbench-%d( |$)"\n' "$i" "$i" >>"$DIR/agent.conf"
		printf '  - name: "t%d"\n    cmdline:\n    - "^agbench-%d( |$)"\n' "$i" "$i" >>"$DIR/px.yml"
		i=$((i + 1))
	done
}

scrapes() {	# URL SECONDS: one scrape a second; latencies (s) on stdout
	end=$(( $(date +%s) + $2 ))
	while [ "$(date +%s)" -lt "$end" ]; do
		curl -s -o /dev/null -w '%{time_total}\n' "$1" || true
		sleep 1
	done
}

pct() {	# P FILE: the P-th percentile of a column of numbers, in ms
	sort -n "$2" | awk -v p="$1" '{ a[NR] = $1 } END { i = int(NR * p / 100 + 0.5); if (i < 1) i = 1; printf "%.2f", a[i] * 1000 }'
}

for n in ${NS:-1 10 100}; do
	targets "$n"
	"$BUILD/rsswatch" agent -q --config "$DIR/agent.conf" --db "$DIR/r$n.db" -i 1s \
		--listen "127.0.0.1:$PORT" &
	agent=$!
	PIDS="$PIDS $agent"
	scrapes "http://127.0.0.1:$PORT/metrics" $((WIN + 8)) >"$DIR/lat$n" &
	sc=$!
	ns=$("$BUILD/bench/cpuwindow" "$agent" 5000 $((WIN * 1000)))
	wait "$sc" || true
	up=$(curl -s "http://127.0.0.1:$PORT/metrics" | grep -c '^rsswatch_agent_target_up{.*} 1$' || true)
	bytes=$(curl -s -o /dev/null -w '%{size_download}' "http://127.0.0.1:$PORT/metrics" || echo 0)
	kill -TERM "$agent"
	wait "$agent" || true
	echo "agent targets=$n up=$up cpu_ms_per_target_s=$(echo "$ns $n $WIN" | awk '{ printf "%.4f", $1 / 1e6 / $2 / $3 }') scrape_ms_median=$(pct 50 "$DIR/lat$n") p90=$(pct 90 "$DIR/lat$n") bytes=$bytes"
	if command -v prometheus-process-exporter >/dev/null 2>&1; then
		prometheus-process-exporter -config.path "$DIR/px.yml" \
			-web.listen-address "127.0.0.1:$XPORT" >"$DIR/px.log" 2>&1 &
		px=$!
		PIDS="$PIDS $px"
		scrapes "http://127.0.0.1:$XPORT/metrics" $((WIN + 8)) >"$DIR/xlat$n" &
		sc=$!
		if ! ns=$("$BUILD/bench/cpuwindow" "$px" 5000 $((WIN * 1000))); then
			echo "process-exporter targets=$n: it did not run through the window:"
			cat "$DIR/px.log"
			exit 1
		fi
		wait "$sc" || true
		kill "$px"
		wait "$px" || true
		echo "process-exporter targets=$n cpu_ms_per_target_s=$(echo "$ns $n $WIN" | awk '{ printf "%.4f", $1 / 1e6 / $2 / $3 }') scrape_ms_median=$(pct 50 "$DIR/xlat$n") p90=$(pct 90 "$DIR/xlat$n")"
	fi
	for p in $PIDS; do kill "$p" 2>/dev/null || true; done
	PIDS=""
done
