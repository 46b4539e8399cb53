#!/bin/sh
# rsswatch side by side with the tools users would pick instead, in one run (issue 15):
#
#   make bench            about 6 minutes on 2 cores
#   make bench QUICK=1    under a minute: one short repetition of each, the tools at once
#                         (for CI: it shows that every tool still runs, its figures mean little)
#
# The tools, each watching the same kind of target in the same run:
#   rsswatch   build/rsswatch record -q (-p PID, or -- COMMAND)
#   bash loop  the story's loop: while kill -0 $PID; do echo "$(date) $(ps -o rss= -p $PID)"
#              >>LOG; sleep 1; done (three processes per sample)
#   pidstat    pidstat -r -p PID 1 (sysstat)
#   psutil     bench/psutil-sampler.py: memory_info() every interval, as psrecord does
#   time -v    /usr/bin/time -v: wait4's ru_maxrss, the exact peak of a launched command
#   floors     build/bench/statmloop (one pread of statm per interval, nothing stored) and
#              build/bench/timerloop (an empty timer loop: the cost of waking up)
# The measurements (the method of each is in docs/dev/BENCHMARKS.md):
#   1. CPU per sample and the tool's own peak RSS (wait4, in bench/rusage), at 1 s and at
#      each tool's fastest interval: the CPU time of the tool's process over a window of a
#      long run that leaves out its start (bench/cpuwindow) over the samples in it; for
#      the bash loop, whose cost is its children's, a long run minus a short one (wait4)
#   2. peak capture at 1 s: a spike between samples, a process that allocates and exits
#      between two samples, a tree whose child spikes; against time -v's figure
#   3. end detection: from the target's exit (stamped by build/bench/endstamp) to the tool
#      noticing it (rsswatch: the run's ended_at; the others: when their loop ends)
#   4. trees of 10, 100 and 1,000 processes: CPU per sample (as bench/tree-cost.sh)
#   5. the target's slowdown: pages a page-touching loop (build/bench/touchloop) manages per
#      second, alone and with each tool at its fastest interval (rsswatch also with --no-bpf)
#   6. storage: bytes per sample (the database's growth, checkpointed; the others' files)
#   7. the eBPF engine (as root): a page-touching target's rate at -i 1s beside the engine,
#      --no-bpf and --no-bpf with an empty program on rss_stat (the floor); the error of
#      a peak's time, engine against --no-bpf; its recorder's CPU per sample at 10 ms
# Raw figures go to $BUILD/bench/raw.txt; bench/report.py turns them into one table of
# ratios, printed and written to $BUILD/bench/table.md and table.json. The figures are
# not judged here: this script fails only when a tool cannot run.
set -eu
BUILD=${BUILD:-build}
QUICK=${QUICK:-0}
cd "$(dirname "$0")/.."
RSW=$BUILD/rsswatch
RUSAGE=$BUILD/bench/rusage
HOG=$BUILD/tests/bin/memhog
PY=/usr/bin/python3
OUT=$BUILD/bench
for f in "$RSW" "$RUSAGE" "$HOG" "$BUILD/bench/statmloop" "$BUILD/bench/timerloop" \
	"$BUILD/bench/forktree" "$BUILD/bench/endstamp" "$BUILD/bench/touchloop" \
	"$BUILD/bench/cpuwindow"; do
	[ -x "$f" ] || { echo "bench: missing $f: run 'make bench-bin' first" >&2; exit 2; }
done
for p in bash ps pgrep pidstat sqlite3 /usr/bin/time; do
	command -v "$p" >/dev/null 2>&1 ||
		{ echo "bench: missing $p: run 'scripts/deps.sh bench' (as root)" >&2; exit 2; }
done
"$PY" -c 'import psutil' 2>/dev/null ||
	{ echo "bench: missing python3-psutil: run 'scripts/deps.sh bench' (as root)" >&2; exit 2; }

if [ "$QUICK" = 1 ]; then
	# 1. at 1 s: seconds of the long and the short runs, and the repetitions (all at once)
	SLOW_LONG=4 SLOW_SHORT=1 REPS=1
	FAST_LONG=4 FAST_SHORT=1	# 1. at fast intervals, one after the other, REPS times
	PEAK_REPS=1 END_REPS=1
	TREE_LONG=4 TREE_REPS=1
	TOUCH_MS=1000 TOUCH_REPS=1
	APART=0	# the tools that full runs measure one at a time run at once: only a check
else
	SLOW_LONG=30 SLOW_SHORT=2 REPS=3
	FAST_LONG=6 FAST_SHORT=1
	PEAK_REPS=5 END_REPS=5
	TREE_LONG=7 TREE_REPS=2
	TOUCH_MS=2000 TOUCH_REPS=3
	APART=1
fi

mkdir -p "$OUT"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rsswatch-bench.XXXXXX")
live=	# long-lived targets started here and not reaped yet
# On the way out the long-lived targets (memhog, forktree and its children) are told to
# end through their stop file, and waited for, before the file goes: killing forktree
# alone would leave its children waiting for a file that no longer exists.
cleanup() {
	touch "$tmp/stop"
	for p in $live; do wait "$p" 2>/dev/null || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
raw=$OUT/raw.txt
: >"$raw"
say() { echo "bench: $*" >&2; }
# die MESSAGE: stop, also from a job in the background (the script checks after each wait)
die() {
	echo "bench: $*" >&2
	: >"$tmp/failed"
	exit 1
}
# joined: wait for the jobs whose pids are in $jobs; stop if one of them died
jobs=
joined() {
	for j in $jobs; do wait "$j" || true; done
	jobs=
	[ ! -e "$tmp/failed" ] || exit 1
}
t_start=$(date +%s)
forks_start=$(awk '/^processes/ { print $2 }' /proc/stat)

# The story's loop, one sample per interval until the count or the target's end; with a
# 5th argument, the sum over the target and its children (one ps per sample). After the
# loop it appends "end UNIX_SECONDS.MICROSECONDS": when it noticed the end.
loop_script='pid=$1 log=$2 count=$3 pause=$4 tree=$5 i=0
while kill -0 "$pid" 2>/dev/null && [ "$i" -lt "$count" ]; do
	if [ -n "$tree" ]; then
		echo "$(date +%s) $(ps -o rss= -p "$pid" --ppid "$pid" | awk "{ s += \$1 } END { print s }")" >>"$log"
	else
		echo "$(date +%s) $(ps -o rss= -p "$pid")" >>"$log"
	fi
	i=$((i + 1))
	sleep "$pause"
done
echo "end $EPOCHREALTIME" >>"$log"'

# The seconds of MS milliseconds, as sleep(1) and python read them
secs_of() { awk -v ms="$1" 'BEGIN { printf "%g", ms / 1000 }'; }

# run_tool TOOL MS SECONDS FILE PID...: one watcher of PID (the first; all of them for
# pidstat and statm, which take a list) every MS milliseconds for SECONDS at most, under
# rusage. Its output goes to FILE (rsswatch: the database FILE.db), its rusage line to
# FILE.ru. With TREE=1 in the environment, the loop and psutil sum the children too, and
# rsswatch records the tree. With WINDOW="START LENGTH" (seconds), FILE.win gets the CPU
# time in nanoseconds that the tool's process took from START to START + LENGTH after it
# started (its CPU-time clock: build/bench/cpuwindow).
run_tool() {
	local tool=$1 ms=$2 secs=$3 f=$4 pid count tr rpid
	shift 4
	pid=$1
	count=$((secs * 1000 / ms))
	[ "$count" -ge 1 ] || count=1
	case $tool in
	rsswatch | rsswatch-nox | rsswatch-nobpf)
		# rsswatch-nox: without the exit records of the host; -nobpf: without the
		# eBPF engine (which, as root, is on for rsswatch)
		tr=
		[ "${TREE:-0}" = 1 ] && tr=-t
		[ "$tool" = rsswatch-nobpf ] && tr="$tr --no-bpf"
		set -- env RSSWATCH_NO_TASKSTATS=$([ "$tool" = rsswatch-nox ] && echo 1 || echo 0) \
			"$RSW" record --db "$f.db" -q $tr -p "$pid" -i "${ms}ms" -d "${secs}s" ;;
	bashloop)
		set -- bash -c "$loop_script" loop "$pid" "$f" "$count" "$(secs_of "$ms")" \
			"$([ "${TREE:-0}" = 1 ] && echo tree)" ;;
	pidstat)
		set -- env LC_ALL=C pidstat -r -p "$(echo "$@" | tr ' ' ,)" $((ms / 1000)) "$count" ;;
	psutil)
		set -- "$PY" bench/psutil-sampler.py -i "$(secs_of "$ms")" -d "$secs" -o "$f" \
			$([ "${TREE:-0}" = 1 ] && echo --children) "$pid" ;;
	statm)
		set -- "$BUILD/bench/statmloop" $((ms * 1000)) "$secs" "$@" ;;
	timer)
		set -- "$BUILD/bench/timerloop" $((ms * 1000)) "$secs" ;;
	*)
		die "unknown tool $tool" ;;
	esac
	rm -f "$f" "$f.db" "$f.db-wal" "$f.db-shm" "$f.win"
	if [ "$tool" = pidstat ]; then
		"$RUSAGE" "$@" >"$f" 2>"$f.ru" &
	else
		"$RUSAGE" "$@" >"$f.out" 2>"$f.ru" &
	fi
	rpid=$!
	# shellcheck disable=SC2086
	[ -z "${WINDOW:-}" ] || window_of "$rpid" $WINDOW >"$f.win" 2>"$f.win.err" || true
	wait "$rpid" || true
}

# window_of RUSAGE_PID START LENGTH: the CPU nanoseconds of rusage's child (the tool, all
# its threads) between START and START + LENGTH seconds from now (nothing when the tool
# was not running at both ends)
window_of() {
	local tp= i=0
	while [ -z "$tp" ] && [ $i -lt 500 ]; do
		tp=$(pgrep -P "$1" || true)
		[ -n "$tp" ] || sleep 0.01
		i=$((i + 1))
	done
	[ -n "$tp" ] || { echo "no process under rusage pid $1" >&2; return 0; }
	"$BUILD/bench/cpuwindow" "$tp" "$(awk -v s="$2" 'BEGIN { print int(s * 1000) }')" \
		$(($3 * 1000)) || true
}

# cpu_of FILE, maxrss_of FILE: from FILE.ru, seconds and KiB (0 without FILE.ru)
cpu_of() { sed -n 's/.*cpu_s=\([0-9.]*\).*/\1/p' "$1.ru" 2>/dev/null | tail -n 1 | grep . || echo 0; }
maxrss_of() { sed -n 's/.*maxrss_kib=\([0-9]*\).*/\1/p' "$1.ru" 2>/dev/null | tail -n 1 | grep . || echo 0; }

# samples_of TOOL MS SECONDS FILE PID: the samples the tool took (0 when it ran not at all)
samples_of() {
	case $1 in
	rsswatch*) [ -f "$4.db" ] && sqlite3 "$4.db" 'SELECT samples FROM run' 2>/dev/null || echo 0 ;;
	bashloop) grep -c '^[0-9]' "$4" 2>/dev/null || true ;;
	pidstat) awk -v pid="$5" '$1 != "Average:" && $3 == pid' "$4" 2>/dev/null | wc -l ;;
	psutil) grep -c '^[0-9]' "$4" 2>/dev/null || true ;;
	statm) sed -n 's/^samples=\([0-9]*\).*/\1/p' "$4.out" 2>/dev/null || echo 0 ;;
	timer) [ -f "$4.ru" ] && echo $(($3 * 1000 / $2)) || echo 0 ;;
	esac
}

# bytes_of TOOL FILE: what the tool stored (rsswatch: its database, checkpointed; 0 when
# the tool did not run)
bytes_of() {
	if [ "${1%-nox}" = rsswatch ] && [ -f "$2.db" ]; then
		sqlite3 "$2.db" 'PRAGMA wal_checkpoint(TRUNCATE);' >/dev/null
		wc -c <"$2.db"
	elif [ "${1%-nox}" != rsswatch ] && [ "$1" != statm ] && [ "$1" != timer ] && [ -f "$2" ]; then
		wc -c <"$2"
	else
		echo 0
	fi
}

# check TOOL SAMPLES FILE: a tool that took no sample could not run: stop here
check() {
	[ "${2:-0}" -gt 0 ] || die "$1 took no sample (its output: $3*)"
}

# cost KEY TOOL MS LONG SHORT PID...: the tool's CPU per sample, appended to raw as
# "KEY TOOL MS cpu_long cpu_short samples_long samples_short maxrss_long bytes_long
# bytes_short window_cpu window_samples". A long run of LONG seconds; for the bash loop
# (whose CPU is mostly its children's) and where SHORT is not 0, also a short one, so
# that long minus short leaves out the start-up (both at once with PAR=1). Every tool but
# the bash loop is also measured over a window of the long run that leaves out its
# first and last 1.5 s (LONG - 3 seconds, half-way between samples at 1 s: the samples
# in it are known).
cost() {
	local key=$1 tool=$2 ms=$3 long=$4 short=$5 f cl sl ss=0 win= wn=0
	shift 5
	f=$tmp/$key-$tool-$ms-${REP:-0}
	[ "$tool" != bashloop ] || [ "$short" -gt 0 ] || short=1
	if [ "$tool" != bashloop ]; then
		win="1.5 $((long - 3))"
		wn=$(((long - 3) * 1000 / ms))
	fi
	rm -f "$f-s"*
	if [ "$short" -gt 0 ] && [ "${PAR:-0}" = 1 ]; then
		WINDOW=$win run_tool "$tool" "$ms" "$long" "$f-l" "$@" &
		cl=$!
		run_tool "$tool" "$ms" "$short" "$f-s" "$@"
		wait "$cl"
	else
		WINDOW=$win run_tool "$tool" "$ms" "$long" "$f-l" "$@"
		[ "$short" -eq 0 ] || run_tool "$tool" "$ms" "$short" "$f-s" "$@"
	fi
	sl=$(samples_of "$tool" "$ms" "$long" "$f-l" "$1")
	[ "$short" -eq 0 ] || ss=$(samples_of "$tool" "$ms" "$short" "$f-s" "$1")
	check "$tool" "$sl" "$f-l"
	[ -z "$win" ] || [ -s "$f-l.win" ] || die "$tool: no CPU figure for its window:" \
		"$(cat "$f-l.win.err" "$f-l.ru" 2>/dev/null)"
	# the samples in the window: at fast intervals, as many fewer as the tool took fewer
	# than its interval asks for over the whole run (a late wake-up takes one sample)
	if [ -n "$win" ] && [ "$ms" -lt 1000 ]; then
		wn=$(((long - 3) * sl / long))
	fi
	echo "$key $tool $ms $(cpu_of "$f-l") $(cpu_of "$f-s" || echo 0) $sl $ss" \
		"$(maxrss_of "$f-l") $(bytes_of "$tool" "$f-l") $(bytes_of "$tool" "$f-s")" \
		"$(cat "$f-l.win" 2>/dev/null || echo 0) $wn" >>"$raw"
}

# --- 1. CPU per sample and own peak RSS, one idle process holding 64 MiB ---------------
"$HOG" +64M await "$tmp/stop" &
hog=$!
live=$hog
while ! grep -q '^VmRSS:.*[0-9]\{5\} kB' /proc/$hog/status 2>/dev/null; do sleep 0.05; done

say "1. CPU per sample at 1 s: every tool $REPS times at once, ${SLOW_LONG} s"
forks0=$(awk '/^processes/ { print $2 }' /proc/stat)
for rep in $(seq "$REPS"); do
	for t in rsswatch rsswatch-nox bashloop pidstat psutil statm timer; do
		REP=$rep PAR=1 cost cpu "$t" 1000 "$SLOW_LONG" "$SLOW_SHORT" "$hog" &
		jobs="$jobs $!"
	done
	sleep 0.3	# the repetitions wake a third of a second apart
done
joined
# every process that ends on the host reaches rsswatch's exit-record listener
echo "meta forks_per_s_1s $((($(awk '/^processes/ { print $2 }' /proc/stat) - forks0) / SLOW_LONG))" >>"$raw"
say "1. CPU per sample at fast intervals: one tool at a time, ${FAST_LONG} s, $REPS times"
for rep in $(seq "$REPS"); do
	for tm in rsswatch:1 rsswatch:10 rsswatch-nobpf:10 psutil:10 statm:1 statm:10 timer:1 \
		timer:10; do
		short=0	# only for the database's growth
		[ "$tm" != rsswatch:1 ] || short=$FAST_SHORT
		if [ "$APART" = 1 ]; then
			cost cpu "${tm%:*}" "${tm#*:}" "$FAST_LONG" "$short" "$hog"
		else
			cost cpu "${tm%:*}" "${tm#*:}" "$FAST_LONG" "$short" "$hog" &
			jobs="$jobs $!"
		fi
	done
	joined
done
touch "$tmp/stop"
wait "$hog" 2>/dev/null || true
live=
rm -f "$tmp/stop"

# --- 2. peak capture at 1 s ----------------------------------------------------------
# pidstat_max FILE PID, loop_max FILE: the largest RSS reported, in KiB (0: none)
pidstat_max() {
	awk -v pid="$2" '$1 != "Average:" && $3 == pid && $7 + 0 > m { m = $7 + 0 } END { print m + 0 }' "$1"
}
loop_max() { awk '/^[0-9]/ && $2 + 0 > m { m = $2 + 0 } END { print m + 0 }' "$1"; }

say "2. peak capture at 1 s: a spike, an exit, a tree; $PEAK_REPS times"
for rep in $(seq "$PEAK_REPS"); do
	for c in spike exit tree; do
		f=$tmp/peak-$c
		rm -f "$f".*
		# the case's command line; the same program three times at once: under time -v,
		# under rsswatch, and alone with the others watching its pid
		case $c in
		spike) set -- "$HOG" +32M sleep 1500ms spike 128M sleep 1500ms ;;
		exit) set -- "$HOG" sleep 1300ms +192M sleep 50ms ;;
		tree) set -- sh -c '"$0" +16M sleep 1300ms spike 128M sleep 1200ms; exit $?' "$HOG" ;;
		esac
		/usr/bin/time -v -o "$f.time" "$@" >/dev/null 2>&1 &
		tv=$!
		"$RSW" record --db "$f.db" -q -i 1s -- "$@" >/dev/null 2>&1 &
		rw=$!
		"$@" >/dev/null 2>&1 &
		pid=$!
		tr=0
		[ "$c" = tree ] && tr=1
		run_tool bashloop 1000 30 "$f.loop" "$pid" &
		w1=$!
		run_tool pidstat 1000 30 "$f.pidstat" "$pid" &
		w2=$!
		TREE=$tr run_tool psutil 1000 30 "$f.psutil" "$pid" &
		w3=$!
		wait "$pid" || true
		wait "$tv" "$rw" "$w1" "$w2" "$w3" || true
		ref=$(sed -n 's/.*Maximum resident set size (kbytes): *//p' "$f.time")
		[ -n "$ref" ] || die "time -v gave no figure ($f.time)"
		rsw=$(sqlite3 "$f.db" 'SELECT peak_rss / 1024 FROM run' 2>/dev/null || true)
		[ -n "$rsw" ] || die "rsswatch recorded nothing (case $c)"
		grep -q '^# peak' "$f.psutil" || die "the psutil sampler did not run (case $c)"
		check bashloop "$(grep -c . "$f.loop")" "$f.loop"
		echo "peak $c time $rep $ref $ref" >>"$raw"
		echo "peak $c rsswatch $rep $rsw $ref" >>"$raw"
		echo "peak $c bashloop $rep $(loop_max "$f.loop") $ref" >>"$raw"
		echo "peak $c pidstat $rep $(pidstat_max "$f.pidstat" "$pid") $ref" >>"$raw"
		echo "peak $c psutil $rep $(($(sed -n 's/^# peak //p' "$f.psutil") / 1024)) $ref" >>"$raw"
	done
done

# --- 3. end detection ----------------------------------------------------------------
# now_ns_of "S.US": nanoseconds from bash's $EPOCHREALTIME
ns_of() { awk -v t="$1" 'BEGIN { split(t, a, "."); printf "%s%s000\n", a[1], a[2] }'; }
say "3. end detection at 1 s: $END_REPS times"
for rep in $(seq "$END_REPS"); do
	f=$tmp/end
	rm -f "$f".*
	ms=$((1300 + rep * 373 % 700))	# the end falls at a different phase each time
	"$BUILD/bench/endstamp" "$ms" "$f.stamp" "$f.pid" &
	sup=$!
	"$RSW" record --db "$f.launched.db" -q -i 1s -- "$BUILD/bench/endstamp" "$ms" "$f.stamp2" \
		>/dev/null 2>&1 &
	rl=$!
	while [ ! -s "$f.pid" ]; do sleep 0.01; done
	pid=$(cat "$f.pid")
	"$RSW" record --db "$f.attached.db" -q -p "$pid" -i 1s >/dev/null 2>&1 &
	ra=$!
	run_tool bashloop 1000 30 "$f.loop" "$pid" &
	w1=$!
	bash -c 'LC_ALL=C pidstat -r -p "$1" 1 >/dev/null; echo "end $EPOCHREALTIME" >"$2"' \
		- "$pid" "$f.pidstat" &
	w2=$!
	run_tool psutil 1000 30 "$f.psutil" "$pid" &
	w3=$!
	wait "$sup" "$rl" "$ra" "$w1" "$w2" "$w3" || true
	st=$(cat "$f.stamp")
	st2=$(cat "$f.stamp2")
	[ -n "$st" ] && [ -n "$st2" ] || die "endstamp wrote no stamp"
	ea=$(sqlite3 "$f.attached.db" 'SELECT ended_at FROM run' 2>/dev/null || true)
	el=$(sqlite3 "$f.launched.db" 'SELECT ended_at FROM run' 2>/dev/null || true)
	[ -n "$ea" ] && [ -n "$el" ] || die "rsswatch recorded no end"
	lp=$(sed -n 's/^end //p' "$f.loop")
	pp=$(sed -n 's/^end //p' "$f.pidstat")
	up=$(sed -n 's/^# end \([0-9]*\) .*/\1/p' "$f.psutil")
	[ -n "$lp" ] && [ -n "$pp" ] && [ -n "$up" ] || die "a peer did not see the end"
	echo "end rsswatch $rep $((ea - st))" >>"$raw"
	echo "end rsswatch-launched $rep $((el - st2))" >>"$raw"
	echo "end bashloop $rep $(($(ns_of "$lp") - st))" >>"$raw"
	echo "end pidstat $rep $(($(ns_of "$pp") - st))" >>"$raw"
	echo "end psutil $rep $((up - st))" >>"$raw"
done

# --- 4. trees of 10, 100 and 1,000 processes -----------------------------------------
say "4. trees of 10, 100, 1,000 processes: rsswatch alone, then the others at once"
for n in 10 100 1000; do
	rm -f "$tmp/stop" "$tmp/ready"
	"$BUILD/bench/forktree" "$n" 256 "$tmp/stop" >"$tmp/ready" &
	root=$!
	live=$root
	i=0
	while ! grep -q ready "$tmp/ready" 2>/dev/null; do
		sleep 0.1
		i=$((i + 1))
		[ $i -lt 600 ] || die "forktree $n did not start"
	done
	pids="$root $(pgrep -P "$root" | tr '\n' ' ')"
	for rep in $(seq "$TREE_REPS"); do
		# shellcheck disable=SC2086
		if [ "$APART" = 1 ]; then
			TREE=1 cost "tree$n" rsswatch 100 "$TREE_LONG" 0 $pids
		else
			TREE=1 cost "tree$n" rsswatch 100 "$TREE_LONG" 0 $pids &
			jobs="$jobs $!"
		fi
		for tm in bashloop:1000 pidstat:1000 psutil:100 statm:100 timer:100; do
			# shellcheck disable=SC2086
			TREE=1 PAR=1 cost "tree$n" "${tm%:*}" "${tm#*:}" "$TREE_LONG" 0 $pids &
			jobs="$jobs $!"
		done
		joined
	done
	touch "$tmp/stop"
	wait "$root" || true
	live=
done
rm -f "$tmp/stop"

# --- 5. the target's slowdown ---------------------------------------------------------
say "5. slowdown of a page-touching target, $TOUCH_MS ms alone and with each tool, $TOUCH_REPS times"
for rep in $(seq "$TOUCH_REPS"); do
	for tm in none:0 rsswatch:1 rsswatch-nobpf:1 psutil:10 bashloop:1000 pidstat:1000 statm:1; do
		t=${tm%:*}
		f=$tmp/touch-$t
		"$BUILD/bench/touchloop" 500 "$TOUCH_MS" 16 >"$f.rate" &
		pid=$!
		w=
		if [ "$t" != none ]; then
			run_tool "$t" "${tm#*:}" 60 "$f" "$pid" &
			w=$!
		fi
		wait "$pid" || die "touchloop failed"
		[ -z "$w" ] || wait "$w" || true
		rate=$(sed -n 's/^pages_per_s=//p' "$f.rate")
		[ -n "$rate" ] || die "touchloop gave no rate"
		[ "$t" = none ] || check "$t" "$(samples_of "$t" "${tm#*:}" 60 "$f" "$pid")" "$f"
		echo "touch $t $rep $rate" >>"$raw"
	done
done

# --- 7. the eBPF engine (as root, where it loads) --------------------------------------
# a. the target's slowdown at -i 1s: the page-touching loop alone, under --no-bpf, under
#    --no-bpf with an empty program on rss_stat beside it (build/bench/bpffloor: the floor
#    of any program there), and under the engine; rounds alternated
# b. the error of the peak's time at -i 1s, the engine against --no-bpf (bench/peak-time.sh:
#    a 100 MiB block, the workload's CLOCK_REALTIME stamp at its last page)
# c. the recorder's CPU per sample at 10 ms with the engine and with --no-bpf (section 1's
#    fast-interval runs, rsswatch and rsswatch-nobpf)
if [ "$(id -u)" = 0 ] && "$RSW" record -v -q --db "$tmp/probe.db" -- /bin/true 2>&1 |
	grep -q "exact peaks from the kernel's page counts"; then
	say "7a. the engine's cost to a page-touching target at -i 1s, $TOUCH_REPS rounds"
	for rep in $(seq "$TOUCH_REPS"); do
		for m in alone nobpf floor engine; do
			f=$tmp/eng-$m
			fl=
			if [ $m = floor ]; then
				"$BUILD/bench/bpffloor" empty >"$f.floor" 2>&1 &
				fl=$!
				until grep -q attached "$f.floor" 2>/dev/null; do
					kill -0 "$fl" 2>/dev/null || die "bpffloor: $(cat "$f.floor")"
					sleep 0.01
				done
			fi
			"$BUILD/bench/touchloop" 500 "$TOUCH_MS" 16 >"$f.rate" &
			pid=$!
			w=
			case $m in
			nobpf | floor) "$RSW" record -q --no-bpf --db "$f.db" -i 1s -p "$pid" \
				>/dev/null 2>&1 & w=$! ;;
			engine) "$RSW" record -q --db "$f.db" -i 1s -p "$pid" >/dev/null 2>&1 & w=$! ;;
			esac
			wait "$pid" || die "touchloop failed"
			[ -z "$w" ] || wait "$w" || true
			[ -z "$fl" ] || { kill "$fl"; wait "$fl" 2>/dev/null || true; }
			rate=$(sed -n 's/^pages_per_s=//p' "$f.rate")
			[ -n "$rate" ] || die "touchloop gave no rate"
			echo "engtouch $m $rep $rate" >>"$raw"
		done
	done
	say "7b. the error of the peak's time at -i 1s, the engine and --no-bpf, $PEAK_REPS rounds"
	for rep in $(seq "$PEAK_REPS"); do
		for m in engine nobpf; do
			f=$tmp/pt-$m
			rm -f "$f.db" "$f.st" "$f.pre"
			"$RSW" record -q $([ $m = nobpf ] && echo --no-bpf) --db "$f.db" -i 1s -- \
				"$HOG" stamp "$f.pre" sleep 200ms +100M stamp "$f.st" - sleep 1100ms \
				>/dev/null 2>&1 || die "peak time: the recording failed"
			at=$(sqlite3 "$f.db" "select peak_rss_at from run order by id desc limit 1")
			echo "peaktime $m $rep $((($(cat "$f.st") - at) / 1000))" >>"$raw"
		done
	done
else
	say "7. the eBPF engine: skipped (not root, or the engine cannot load here)"
fi

# --- the machine, and the table --------------------------------------------------------
t_end=$(date +%s)
forks_end=$(awk '/^processes/ { print $2 }' /proc/stat)
{
	echo "meta date $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "meta quick $QUICK"
	echo "meta wall_s $((t_end - t_start))"
	echo "meta cpus $(nproc)"
	echo "meta cpu_model $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
	echo "meta kernel $(uname -r)"
	echo "meta os $(. /etc/os-release 2>/dev/null && echo "${PRETTY_NAME:-unknown}")"
	if grep -q '^flags.* hypervisor' /proc/cpuinfo; then
		echo "meta virt virtual machine"
	else
		echo "meta virt bare metal"
	fi
	echo "meta mem_kib $(awk '/^MemTotal/ { print $2 }' /proc/meminfo)"
	echo "meta procs $(ls -d /proc/[0-9]* | wc -l)"
	echo "meta forks_per_s $(((forks_end - forks_start) / (t_end - t_start + 1)))"
	echo "meta loadavg $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "meta rsswatch $("$RSW" --version 2>/dev/null | head -n 1) $(git describe --always --dirty 2>/dev/null || true)"
} >>"$raw"
"$PY" bench/report.py "$raw" "$OUT/table.md" "$OUT/table.json"
