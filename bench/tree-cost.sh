#!/bin/sh
# CPU cost per sample of recording a tree of processes (--tree), beside a full /proc
# scan and the bash loops of the story, for trees of 10, 100 and 1,000 processes.
#
#   make bench-bin && bench/tree-cost.sh [REPEATS]
#
# The tree: build/bench/forktree N 256 (a parent and N idle children holding 256 KiB
# each). For each repetition (default 5), CPU time (user+system of the command and its
# descendants, from wait4 in build/bench/rusage) divided by the samples taken:
#   rsswatch    record -t -p ROOT -i 100ms -d 5s -q   (about 50 samples; startup and the
#               first sample's opens of every member's files included)
#   procscan    20 scans of /proc/*/stat for every process (what ps does per call)
#   ps-ppid     ps -o rss= --ppid ROOT | awk (sum), 5 times: one ps per sample
#   loop-per-pid  for p in $(pgrep -P ROOT): ps -o rss= -p $p, summed: the story's loop
#               widened to a tree; one sample (N=1000: over the first 100 children,
#               scaled by 10, since one sample takes minutes)
# Then the medians, and whether 1,000 processes at 10 Hz stay under 5% of one core.
set -eu
BUILD=${BUILD:-build}
REPEATS=${1:-5}
RSW=$BUILD/rsswatch
RUSAGE=$BUILD/bench/rusage
TREE=$BUILD/bench/forktree
SCAN=$BUILD/bench/procscan
for f in "$RSW" "$RUSAGE" "$TREE" "$SCAN"; do
	[ -x "$f" ] || { echo "missing $f: run 'make bench-bin' first" >&2; exit 2; }
done
tmp=$(mktemp -d)
root=
trap '[ -n "$root" ] && touch "$tmp/stop"; rm -rf "$tmp"' EXIT

cpu_of() {	# cpu_of COMMAND...: the CPU seconds of COMMAND
	"$RUSAGE" "$@" 2>"$tmp/ru" >/dev/null || true
	ru=$(tail -n 1 "$tmp/ru")
	ru=${ru#cpu_s=}
	echo "${ru%% *}"
}
ppid_script='i=0; while [ $i -lt 5 ]; do ps -o rss= --ppid "$1" | awk "{ s += \$1 } END { print s }"; i=$((i + 1)); done'
loop_script='for p in $(pgrep -P "$1" | head -n "$2"); do ps -o rss= -p "$p"; done | awk "{ s += \$1 } END { print s }"'

: >"$tmp/raw"
for n in 10 100 1000; do
	rm -f "$tmp/stop"
	"$TREE" "$n" 256 "$tmp/stop" >"$tmp/ready" &
	root=$!
	while ! grep -q ready "$tmp/ready" 2>/dev/null; do sleep 0.1; done
	procs=$(ls -d /proc/[0-9]* 2>/dev/null | wc -l)
	for i in $(seq "$REPEATS"); do
		rm -f "$tmp/db"*
		c=$(cpu_of "$RSW" record --db "$tmp/db" -q -t -p "$root" -i 100ms -d 5s)
		s=$(sqlite3 "$tmp/db" 'SELECT samples FROM run ORDER BY id DESC LIMIT 1')
		m=$(sqlite3 "$tmp/db" "SELECT max(c) FROM (SELECT count(*) c FROM proc_at_sample GROUP BY elapsed_ns)")
		echo "$n rsswatch $c $s $procs $m" >>"$tmp/raw"
		echo "$n procscan $(cpu_of "$SCAN" 20) 20 $procs" >>"$tmp/raw"
		echo "$n ps-ppid $(cpu_of sh -c "$ppid_script" - "$root") 5 $procs" >>"$tmp/raw"
	done
	if [ "$n" -eq 1000 ]; then
		echo "$n loop-per-pid $(cpu_of bash -c "$loop_script" - "$root" 100) 0.1 $procs" >>"$tmp/raw"
	else
		echo "$n loop-per-pid $(cpu_of bash -c "$loop_script" - "$root" "$n") 1 $procs" >>"$tmp/raw"
	fi
	touch "$tmp/stop"
	wait "$root" || true
	root=
done
cp "$tmp/raw" "${TREE_COST_RAW:-/dev/null}" 2>/dev/null || true

awk '
	{ key = $1 " " $2; k = ++cnt[key]; v[key, k] = $3 / $4 * 1000; procs[$1] = $5
	  if ($2 == "rsswatch") { members[$1] = $6; samples[key, k] = $4 } }
	function median(key, n,   i, j, t, a) {
		for (i = 1; i <= n; i++) a[i] = v[key, i]
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	END {
		printf "%-6s %-7s %-9s %14s %14s %14s %16s\n", "tree", "procs", "members", "rsswatch", "procscan", "ps --ppid", "loop per pid"
		split("10 100 1000", ns, " ")
		for (i = 1; i <= 3; i++) {
			n = ns[i]
			printf "%-6s %-7s %-9s %11.3f ms %11.3f ms %11.3f ms %13.1f ms\n", n, procs[n], members[n],
				median(n " rsswatch", cnt[n " rsswatch"]), median(n " procscan", cnt[n " procscan"]),
				median(n " ps-ppid", cnt[n " ps-ppid"]), median(n " loop-per-pid", cnt[n " loop-per-pid"])
		}
		r = median("1000 rsswatch", cnt["1000 rsswatch"])
		printf "\nCPU per sample, medians of %d (loop per pid: one sample). 1,000 processes at 10 Hz:\n", cnt["10 rsswatch"]
		printf "rsswatch %.3f ms x 10 = %.1f%% of one core: target (under 5%%) %s\n", r, r, r * 10 / 10 < 5 ? "met" : "NOT met"
	}' "$tmp/raw"
