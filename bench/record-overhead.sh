#!/bin/sh
# Cost of recording one process: rsswatch beside the bash loop it replaces, in one run.
#
#   make bench-bin && bench/record-overhead.sh [REPEATS]
#
# For each repetition, against the same idle target (memhog holding 256 MiB):
#   rsswatch  record -p PID -i 1ms -d 10s -q      (about 10,000 samples)
#   rsswatch  record -p PID -i 1s  -d 10s -q      (the default interval)
#   timerloop an empty 1 ms timerfd loop for 10 s: the cost of waking up alone
#   bash loop ps -o rss= -p PID | awk, with date, appended to a file, every 0.1 s, 50 times
# (bench_sample measures the sampling work without the timer: build/bench/bench_sample PID)
# and prints CPU time per sample (user+system, from wait4, descendants included) and the
# peak RSS of the recorder, then the medians and the ratio. Needs root for nothing.
set -eu
BUILD=${BUILD:-build}
REPEATS=${1:-5}
RSW=$BUILD/rsswatch
RUSAGE=$BUILD/bench/rusage
HOG=$BUILD/tests/bin/memhog
for f in "$RSW" "$RUSAGE" "$HOG"; do
	[ -x "$f" ] || { echo "missing $f: run 'make bench-bin' first" >&2; exit 2; }
done
tmp=$(mktemp -d)
trap 'kill $hog 2>/dev/null; rm -rf "$tmp"' EXIT
"$HOG" +256M await "$tmp/stop" &
hog=$!
while ! grep -q '^VmRSS:.*[0-9]\{6\} kB' /proc/$hog/status 2>/dev/null; do sleep 0.05; done

samples_of() {	# samples_of DB: the samples of the last run, from rsswatch itself
	"$RSW" show --db "$1" --json | grep -o '"samples":[0-9]*' | cut -d: -f2
}
measure() {	# measure NAME SAMPLES-COMMAND -- COMMAND...: appends "NAME us_per_sample maxrss_kib"
	name=$1; shift
	"$RUSAGE" "$@" 2>"$tmp/ru" >/dev/null || true
	ru=$(tail -n 1 "$tmp/ru")
	cpu=${ru#cpu_s=}; cpu=${cpu%% *}
	rss=${ru#*maxrss_kib=}
	echo "$name $cpu $rss" >>"$tmp/raw"
}

loop_script='
pid=$1; out=$2; n=0
while kill -0 "$pid" 2>/dev/null && [ $n -lt 50 ]; do
	echo "$(date +%H:%M:%S) $(ps -o rss= -p "$pid" | awk "{print \$1}")" >>"$out"
	n=$((n + 1))
	sleep 0.1
done'

for i in $(seq "$REPEATS"); do
	rm -f "$tmp"/db*
	measure rsswatch-1ms "$RSW" record --db "$tmp/db1" -q -p "$hog" -i 1ms -d 10s
	echo "rsswatch-1ms-samples $(samples_of "$tmp/db1")" >>"$tmp/raw"
	measure rsswatch-1s "$RSW" record --db "$tmp/db2" -q -p "$hog" -i 1s -d 10s
	echo "rsswatch-1s-samples $(samples_of "$tmp/db2")" >>"$tmp/raw"
	measure timer-only "$BUILD/bench/timerloop" 1000 10
	echo "timer-only-samples 10000" >>"$tmp/raw"
	rm -f "$tmp/loop.log"
	measure bash-loop bash -c "$loop_script" loop "$hog" "$tmp/loop.log"
	echo "bash-loop-samples $(wc -l <"$tmp/loop.log")" >>"$tmp/raw"
done
"$BUILD/bench/bench_sample" "$hog"
touch "$tmp/stop"

awk -v procs="$(ls -d /proc/[0-9]* 2>/dev/null | wc -l)" '
	/-samples / { key = $1; sub(/-samples$/, "", key); s[key, ++ns[key]] = $2; next }
	{ c[$1, ++nc[$1]] = $2; r[$1, nc[$1]] = $3 }
	function median(arr, key, n,   i, j, t, v) {
		for (i = 1; i <= n; i++) v[i] = arr[key, i]
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
		return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
	}
	END {
		printf "%d repetitions, %d processes on the host\n", nc["bash-loop"], procs
		printf "%-14s %10s %14s %16s\n", "recorder", "samples", "cpu/sample", "peak RSS"
		split("rsswatch-1ms rsswatch-1s timer-only bash-loop", names, " ")
		for (k = 1; k <= 4; k++) {
			n = names[k]
			for (i = 1; i <= nc[n]; i++) per[n, i] = c[n, i] / s[n, i] * 1e6
			us[n] = median(per, n, nc[n])
			printf "%-14s %10d %11.1f us %12.0f KiB\n", n, median(s, n, nc[n]), us[n], median(r, n, nc[n])
		}
		printf "bash loop / rsswatch at 1ms: %.0fx more CPU per sample\n", us["bash-loop"] / us["rsswatch-1ms"]
		printf "rsswatch at 1 kHz: %.2f%% of one core, of which waking up 1,000 times a second costs %.2f%%\n", us["rsswatch-1ms"] / 1000 * 100, us["timer-only"] / 1000 * 100
	}' "$tmp/raw"
