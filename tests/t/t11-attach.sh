#!/bin/sh
# rsswatch record -p PID: attach to a process that is not our child, see how it ends,
# stop cleanly on SIGINT or after -d, and refuse pids that cannot be recorded.
. tests/t/lib.sh

recording() { grep -q 'recording pid' "$T/rec.err" 2>/dev/null; }

# --- the target exits with status 5; the test shell (its parent) reaps it promptly
spawn hog "$HOG" +8M await "$T/go1" exit 5
hog=$!
spawn rec "$RSW" record -i 10ms -p "$hog"
rec=$!
wait_until 10 recording
touch "$T/go1"
finish "$hog" 10
check "the target itself exited 5" test "$RC" -eq 5
finish "$rec"
check "rsswatch -p exits 0 when its target exits (got $RC)" test "$RC" -eq 0
show_json
check "outcome exited, exit_code 5 (got $(sfield outcome) $(sfield exit_code))" \
	test "$(sfield outcome) $(sfield exit_code)" = "exited 5"
check "run stored with mode pid and the target's pid" test "$(sfield mode) $(sfield pid)" = "pid $hog"
check "run target is the process's command line" test "$(sfield target)" = "$HOG +8M await $T/go1 exit 5"
check "attach summary says 'exited with 5'" grep -q '^outcome *exited with 5$' "$T/rec.err"

# --- the target is killed by a signal
spawn hog "$HOG" await "$T/go2" raise 15
hog=$!
: >"$T/rec.err"
spawn rec "$RSW" record -i 10ms -p "$hog"
rec=$!
wait_until 10 recording
touch "$T/go2"
finish "$hog" 10
finish "$rec"
show_json
check "attached target killed by SIGTERM: outcome signaled, signal 15, rsswatch exits 0 (got $(sfield outcome) $(sfield signal) $RC)" \
	test "$(sfield outcome) $(sfield signal) $RC" = "signaled 15 0"

# --- SIGINT to rsswatch: recording stops, the target lives on
spawn hog "$HOG" +4M await "$T/go3" exit 0
hog=$!
: >"$T/rec.err"
spawn rec "$RSW" record -i 10ms -p "$hog"
rec=$!
wait_until 10 recording
kill -INT "$rec"
finish "$rec" 10
check "SIGINT in attach mode: rsswatch exits 0 (got $RC)" test "$RC" -eq 0
check "SIGINT in attach mode: the target is still alive" alive "$hog"
show_json
check "SIGINT in attach mode: outcome stopped (got $(sfield outcome))" test "$(sfield outcome)" = stopped
check "stopped run has an end time" test -n "$(sfield ended_at)"
check "summary says the target is still running" grep -q '^outcome *still running' "$T/rec.err"
: >"$T/rec.err"
spawn rec "$RSW" record -i 10ms -p "$hog"
rec=$!
wait_until 10 recording
kill -TERM "$rec"
finish "$rec" 10
show_json
check "SIGTERM in attach mode: exit 0, outcome stopped, target alive (got $RC $(sfield outcome))" \
	sh -c "[ '$RC $(sfield outcome)' = '0 stopped' ] && [ -d /proc/$hog ]"

# --- -d: stops after the duration, target alive
expect_exit 0 "-d 1s in attach mode exits 0" "$RSW" record -q -i 100ms -d 1s -p "$hog"
show_json
check "-d 1s: outcome stopped, target alive" sh -c "[ '$(sfield outcome)' = stopped ] && [ -d /proc/$hog ]"
check "-d 1s at 100ms: 10 or 11 samples (got $(sfield samples))" \
	sh -c "[ $(sfield samples) -ge 10 ] && [ $(sfield samples) -le 11 ]"
# the largest process of a one-process run is the target, named (at 1 s its status is
# read afresh at every sample, never cached)
expect_exit 0 "-d 1s at 1s in attach mode exits 0" "$RSW" record -q -i 1s -d 1s -p "$hog"
show_json
check "one process: the largest process is the target, pid and name (got $(sfield peak_process_pid) $(sfield peak_process_comm))" \
	test "$(sfield peak_process_pid) $(sfield peak_process_comm)" = "$hog memhog"
touch "$T/go3"
finish "$hog" 10

# --- attached after an old peak: VmHWM stays at it, so a spike between two samples
# below it leaves no trace in /proc. The summary and show say so (and how to see them);
# with --reset-peak they say nothing of it, and the spike is the run's peak. The eBPF
# engine is off (--no-bpf): it sees such a spike (tests/t/t83-kernel-peaks.sh).
spawn hog "$HOG" +200M - touch "$T/old" await "$T/gob1" spike 64M touch "$T/spiked1" \
	await "$T/end1"
hog=$!
wait_until 10 test -e "$T/old"
: >"$T/rec.err"
spawn rec "$RSW" record --no-bpf -i 1s -p "$hog"
rec=$!
wait_until 10 recording
touch "$T/gob1"
wait_until 10 test -e "$T/spiked1"
touch "$T/end1"
finish "$hog" 10
finish "$rec"
show_json
diag "attached after a 200 MiB peak, a 64 MiB spike: peak_rss $(sfield peak_rss_bytes), hwm_before $(sfield hwm_before_bytes)"
blind='^blind     peaks between samples below the earlier 2[0-9][0-9].[0-9] MiB high-water mark cannot be seen; --reset-peak makes them visible (it also lowers the target.s own ru_maxrss)$'
check "late attach: the summary says spikes below the old VmHWM cannot be seen" grep -q "$blind" "$T/rec.err"
"$RSW" show >"$T/show.txt" 2>&1
check "late attach: show says so too" grep -q "$blind" "$T/show.txt"
check "late attach: the earlier peak is stated" grep -q '^earlier   peak 2[0-9][0-9].[0-9] MiB before recording' "$T/show.txt"
"$RSW" report -o "$T/blind.html" >/dev/null 2>&1
check "late attach: the report's card says so" grep -q 'Peaks between samples below it cannot be seen (--reset-peak makes them visible' "$T/blind.html"

spawn hog "$HOG" +200M - touch "$T/old2" await "$T/gob2" spike 64M touch "$T/spiked2" \
	await "$T/end2"
hog=$!
wait_until 10 test -e "$T/old2"
: >"$T/rec.err"
spawn rec "$RSW" record -i 1s --reset-peak -p "$hog"
rec=$!
wait_until 10 recording
touch "$T/gob2"
wait_until 10 test -e "$T/spiked2"
# a sample after the spike (VmHWM holds it), or the exit record at the end
touch "$T/end2"
finish "$hog" 10
finish "$rec"
show_json
diag "--reset-peak: peak_rss $(sfield peak_rss_bytes), hwm_before $(sfield hwm_before_bytes)"
check "--reset-peak: no such line in the summary" sh -c '! grep -q "^blind " "$1"' - "$T/rec.err"
"$RSW" show >"$T/show.txt" 2>&1
check "--reset-peak: none in show" sh -c '! grep -q "^blind " "$1"' - "$T/show.txt"
check "--reset-peak: a peak_reset event with the VmHWM it reset" \
	grep -q '"kind":"peak_reset","pid":'"$hog"',"detail":"hwm_before_bytes=2[0-9]\{8\}"' "$T/show.json"

# --- pids that cannot be recorded
"$HOG" exit 0 &
dead=$!
wait "$dead"
expect_exit 1 "a reaped child's pid $dead: exit 1" "$RSW" record -q -p "$dead"
check "a reaped pid: 'no such process' naming the pid" grep -q "pid $dead: no such process" "$ERR"
expect_exit 1 "pid 4194000 (above pid_max): exit 1" "$RSW" record -q -p 4194000
check "pid 4194000: 'no such process'" grep -q "4194000.*no such process" "$ERR"
check "pid 4194000: one line on stderr" test "$(lines "$ERR")" -eq 1

for p in 0 -1 abc "" 12x 99999999999; do
	expect_exit 2 "invalid pid '$p': exit 2" "$RSW" record -q -p "$p"
	case "$p" in ""|-1) ;; *) check "invalid pid '$p': the message names it" grep -q "'$p'" "$ERR" ;; esac
done

# A zombie has no memory to record: refused, not recorded as an empty run.
"$HOG" exit 0 &
zombie=$!
wait_until 5 gone "$zombie"
expect_exit 1 "a zombie (unreaped child): exit 1" "$RSW" record -q -p "$zombie"
wait "$zombie"

# A kernel thread (kthreadd, pid 2) has no memory of its own.
if [ "$(cat /proc/2/comm 2>/dev/null)" = kthreadd ]; then
	expect_exit 1 "a kernel thread (pid 2): exit 1" "$RSW" record -q -p 2
else
	skip "no kthreadd at pid 2 (in a pid namespace)"
fi

# --- a process hidden by hidepid=2
mkdir -p "$T/hp"
chown 65534:65534 "$T/hp"	# its own directory: the database may not be in one all can write
cat >"$T/hidepid.sh" <<EOS
mount -t proc -o hidepid=2 proc /proc || exit 200
exec setpriv --reuid=65534 --regid=65534 --clear-groups "$RSW" record -q --db "$T/hp/db" -p 1
EOS
run unshare -m sh "$T/hidepid.sh"
if [ "$RC" -eq 200 ] || { [ "$RC" -ne 1 ] && grep -q 'unshare' "$ERR"; }; then
	skip "cannot mount proc with hidepid=2 in a mount namespace: $(head -1 "$ERR")"
	skip "hidepid message"
else
	check "pid 1 hidden by hidepid=2: exit 1 (got $RC)" test "$RC" -eq 1
	check "hidden pid: the message names pid 1 (got: $(head -1 "$ERR"))" grep -q 'pid 1[^0-9]' "$ERR"
fi

# One long argument (64 KiB) hides none after it in the stored command line: it keeps
# its head and says how much was cut, and the arguments after it follow.
LONGARG=$(head -c 65536 /dev/zero | tr '\0' x)
spawn longarg sh -c 'sleep 30; :' "$LONGARG" after-one after-two
LPID=$!
wait_until 10 sh -c 'grep -q after-two "/proc/$1/cmdline"' - "$LPID"
expect_exit 0 "a process with a 64 KiB argument: attached for 200ms" \
	"$RSW" record -q -d 200ms --db "$T/long.db" -p "$LPID"
pkill -P "$LPID" sleep 2>/dev/null; kill "$LPID" 2>/dev/null
target=$(sqlite3 "$T/long.db" "SELECT target FROM run")
diag "stored: $(printf '%s' "$target" | cut -c1-40)...$(printf '%s' "$target" | tail -c 60)"
check "the target keeps the arguments after the long one" \
	sh -c 'printf "%s" "$1" | grep -q "x\[+[0-9]* bytes\] after-one after-two$"' - "$target"
check "the stored command line stays bounded (${#target} bytes)" test "${#target}" -le 4200

# --- the target ends between the attach and the recorder's first read of it (held in
# the stand-in NVML's start, which comes between the two): its end, not an error
nvml=$BUILD/fake/cuda/libnvidia-ml.so.1
if [ -f "$nvml" ]; then
	printf 'device 0 total 141G\n' >"$T/gap.nvml"
	spawn gaphog "$HOG" await "$T/gap.go" exit 3
	hog=$!
	spawn gap env RSSWATCH_NVML_LIB="$nvml" FAKE_NVML_SCRIPT="$T/gap.nvml" \
		FAKE_NVML_INIT_HOLD="$T/gap.hold" "$RSW" record --db "$T/gap.db" -i 10ms -p "$hog"
	rec=$!
	at_exit "touch '$T/gap.hold' '$T/gap.go'"
	wait_until 10 test -e "$T/gap.hold.held"
	touch "$T/gap.go"
	finish "$hog" 10
	touch "$T/gap.hold"
	finish "$rec"
	check "ended before the first read: exit 0 (got $RC: $(tail -1 "$T/gap.err"))" test "$RC" -eq 0
	check "  it says so" grep -q "pid $hog ended before its first sample" "$T/gap.err"
	check "  the run's outcome is its exit, not a stop (got $(sqlite3 "$T/gap.db" \
		"select outcome || ' ' || ifnull(exit_code, '-') from run"))" \
		test "$(sqlite3 "$T/gap.db" "select outcome || ' ' || exit_code from run")" = "exited 3"
else
	skip "the stand-in NVML is not built"
fi

done_testing
