#!/bin/sh
# record --follow: a service restarted by a small supervisor (one instance exits, one is
# killed with a signal, one is OOM-killed in a memory cgroup where that can be made,
# one is still running when rsswatch is stopped) is recorded as one series of runs;
# ls --series, the RUN forms sID and sID:N, the restart gap, SIGINT and -d while
# waiting, the polling fallback, -p PID -n PATTERN, -g CGROUP, and hostile names.
# Prints TAP.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/memcg.sh"

tag=$$
cg=""
parent=$(memcg_dir)
if [ "$(id -u)" -eq 0 ] && [ -n "$parent" ] && [ -d "$parent" ] &&
	mkdir "$parent/rsw-t74-$tag" 2>/dev/null; then
	cg="$parent/rsw-t74-$tag"
	at_exit "rmdir '$cg' 2>/dev/null"
	if [ -f "$cg/memory.limit_in_bytes" ]; then
		echo 64M >"$cg/memory.limit_in_bytes"
	else
		echo 64M >"$cg/memory.max"
	fi
fi

# The supervisor: starts the instances one after the other, each as soon as the last
# ended, with argv[0] "fsvc-TAG" (the pattern; the supervisor's own command line does
# not carry it: it comes in the environment).
cat >"$T/sup.sh" <<'EOF'
name=$SVC_NAME
( exec -a "$name" "$HOG" +8M sleep 700ms exit 3 )
( exec -a "$name" "$HOG" +8M sleep 300ms raise 15 )
if [ -n "$SVC_CG" ]; then
	( echo "$BASHPID" >"$SVC_CG/cgroup.procs" && exec -a "$name" "$HOG" +8M sleep 300ms +256M )
else
	( exec -a "$name" "$HOG" +8M sleep 300ms raise 9 )
fi
( exec -a "$name" "$HOG" +8M touch "$SVC_LAST" sleep 30s )
EOF

waiting() { grep -q "waiting for a process" "$1"; }
runs_now() { "$RSW" ls --json | sqlite3 :memory: "select json_array_length(readfile('/dev/stdin'))" 2>/dev/null; }

# --- usage -----------------------------------------------------------------------
"$RSW" record --db "$T/none.db" -q -- true
"$RSW" ls --db "$T/none.db" --series >"$OUT" 2>&1
check "ls --series before any series: one line that says so, no header" \
	test "$(cat "$OUT")" = "no series recorded yet (record --follow makes them)"
expect_exit 2 "--follow without -n or -g is a usage error" "$RSW" record --follow -p $$
check "  it says what --follow goes with" grep -q -- "--follow goes with -n PATTERN" "$ERR"
expect_exit 2 "--follow with a command is a usage error" "$RSW" record --follow -- true
expect_exit 2 "--follow with a bad pattern is a usage error" "$RSW" record --follow -n 'a('

# --- one series of four instances ------------------------------------------------
spawn rec env OOM_OUT="$T/oom.out" "$RSW" record -n "^fsvc-$tag" --follow -i 50ms \
	--on-oom 'echo "$RSSWATCH_RUN $RSSWATCH_EVENT" >>"$OOM_OUT"'
rec=$!
if wait_until 10 waiting "$T/rec.err"; then ok "with no match yet, record --follow waits"; else not_ok "with no match yet, record --follow waits"; diag "$(cat "$T/rec.err")"; fi
SVC_NAME="fsvc-$tag" SVC_CG="$cg" SVC_LAST="$T/last" HOG="$HOG" bash "$T/sup.sh" \
	>"$T/sup.out" 2>&1 &
sup=$!
_bg="$_bg $sup"
if wait_until 30 test -e "$T/last" && wait_until 10 grep -q "as run 4 " "$T/rec.err"; then
	ok "the fourth instance is being recorded"
else
	not_ok "the fourth instance is being recorded"
	diag "$(cat "$T/rec.err")"
fi
sleep 0.2	# a few samples of it (not a synchronisation: the run exists already)
kill -INT "$rec"
finish "$rec"
check "SIGINT while recording an instance ends with status 0" test "$RC" -eq 0
kill -KILL "$sup" 2>/dev/null

"$RSW" ls --series --json >"$T/series.json"
check "ls --series --json is valid JSON" jvalid "$T/series.json"
S=$(jget "$T/series.json" '$[0].series')
check "one series of 4 runs" test "$(jget "$T/series.json" '$[0].runs')" = "[1,2,3,4]"
check "the series is named after its first run" test "$S" = 1
if [ -n "$cg" ]; then
	want='["exited","signaled","oom_killed","stopped"]'
else
	want='["exited","signaled","signaled","stopped"]'
fi
got=$(jget "$T/series.json" '$[0].outcomes')
if [ "$got" = "$want" ]; then ok "outcomes: $want"; else not_ok "outcomes: $want"; diag "got $got"; diag "$(cat "$T/rec.err")"; fi
if [ -n "$cg" ]; then
	check "--on-oom ran once in the series, for the OOM-killed instance's run (3)" \
		test "$(cat "$T/oom.out" 2>/dev/null)" = "3 oom_kill"
else
	check "--on-oom ran for none of the instances (none was OOM-killed)" test ! -e "$T/oom.out"
fi
gaps_ok=1
for i in 0 1 2; do
	g=$(jget "$T/series.json" "\$[0].restart_gaps_s[$i]")
	diag "restart gap $((i + 1)): ${g}s"
	# an honest bound on a loaded machine: the wait is event-driven, not a poll
	[ -n "$g" ] && awk -v g="$g" 'BEGIN { exit !(g >= 0 && g < 1.0) }' || gaps_ok=0
done
check "three restart gaps, each under 1 s" test "$gaps_ok" = 1
check "no gap for the first run (4 runs, 3 gaps)" \
	test "$(jget "$T/series.json" '$[0].restart_gaps_s[3]')" = ""

"$RSW" ls --series >"$OUT"
check "ls --series: one line for the series with its outcomes" \
	grep -Eq "^ +s$S +4 .* 4 runs: exited, signaled, (oom_killed|signaled), stopped \(restarts after [0-9.]+(us|ms|s), [0-9.]+(us|ms|s), [0-9.]+(us|ms|s)\)$" "$OUT"
check "ls --series: a header and one line" test "$(lines "$OUT")" -eq 2

show_json "s$S"
check "show sID is the series' last run" test "$(sfield id)" = 4
check "  its series field" test "$(sfield series)" = "$S"
check "  a restart event, after run 3, with the gap" \
	grep -q '"kind":"restart","pid":[0-9]*,"detail":"gap_us=[0-9]* after_run=3"' "$T/show.json"
show_json 1
check "the first run has series = its own id" test "$(sfield series)" = 1
check "  and no restart event" sh -c "! grep -q '\"kind\":\"restart\"' '$T/show.json'"
expect_exit 0 "compare s$S:2 compares the series' last two runs" "$RSW" compare "s$S:2"
check "  runs 3 and 4" grep -q "run 3 .*run 4" "$OUT"
expect_exit 0 "plot s$S:4 draws the whole series" "$RSW" plot "s$S:4" -o "$T/s.svg"
expect_exit 2 "show s$S:2 names several runs: a usage error" "$RSW" show "s$S:2"
expect_exit 1 "show s99: no such series" "$RSW" show s99
check "  says so" grep -q "no series 99" "$ERR"
expect_exit 2 "show s1x: not a RUN" "$RSW" show s1x

# a run recorded without --follow has "series": null
expect_exit 0 "a run without --follow" "$RSW" record -q -i 50ms -- "$HOG" +1M
show_json
check "  has \"series\":null" grep -q '"series":null' "$T/show.json"

# --- SIGINT and -d while waiting: clean, no run ------------------------------------
before=$(runs_now)
spawn wait "$RSW" record -n "^fsvc-none-$tag" --follow
w=$!
wait_until 10 waiting "$T/wait.err"
kill -INT "$w"
finish "$w"
check "SIGINT while waiting for the first instance: status 0" test "$RC" -eq 0
check "  no run stored" test "$(runs_now)" = "$before"
t0=$(now_ms)
run "$RSW" record -n "^fsvc-none-$tag" --follow -d 600ms
t1=$(now_ms)
check "-d is the total: ends while waiting, status 0" test "$RC" -eq 0
check "  after about 600ms (waited $((t1 - t0))ms)" test $((t1 - t0)) -ge 550
check "  no run stored" test "$(runs_now)" = "$before"

# --- polling where the connector is not to be used ---------------------------------
spawn poll env RSSWATCH_NO_PROCCN=1 "$RSW" record -n "^fsvc-poll-$tag" --follow -i 50ms
p=$!
wait_until 10 waiting "$T/poll.err"
for i in 1 2; do bash -c "exec -a fsvc-poll-$tag '$HOG' +4M sleep 300ms"; done
wait_until 10 grep -q "restarted after" "$T/poll.err"
kill -INT "$p"
finish "$p"
check "without process events: status 0" test "$RC" -eq 0
check "  says once that it polls every 100ms" \
	test "$(grep -c 'no process events.*every 100ms' "$T/poll.err")" -eq 1
"$RSW" ls --series --json >"$T/series.json"
check "  two runs in a new series" test "$(jget "$T/series.json" '$[0].outcomes')" = '["exited","exited"]'

# --- --listen across instances: /metrics follows the series -----------------------
PORT=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
spawn lis "$RSW" record -n "^fsvc-lis-$tag" --follow -i 50ms --listen "127.0.0.1:$PORT"
l=$!
wait_until 10 waiting "$T/lis.err"
scrape() { curl -s "http://127.0.0.1:$PORT/metrics" >"$T/lis.m"; }
served() { scrape && grep -q "^rsswatch_run_outcome{run=\"$1\",.*outcome=\"$2\"} 1" "$T/lis.m"; }
bash -c "exec -a fsvc-lis-$tag '$HOG' +4M touch '$T/lis1' await '$T/lis1.go'" &
i1=$!
wait_until 10 test -e "$T/lis1"
r1=$(sql "$RSSWATCH_DB" "select max(id) from run")
check "--follow --listen: the first instance is served as running" wait_until 10 served "$r1" running
touch "$T/lis1.go"
wait "$i1"
check "  its end is served while the next is awaited" wait_until 10 served "$r1" exited
bash -c "exec -a fsvc-lis-$tag '$HOG' +4M touch '$T/lis2' await '$T/lis2.go'" &
i2=$!
wait_until 10 test -e "$T/lis2"
newer_run() { [ "$(sql "$RSSWATCH_DB" "select max(id) from run")" -gt "$1" ]; }
wait_until 10 newer_run "$r1"
r2=$(sql "$RSSWATCH_DB" "select max(id) from run")
check "  the next instance is served as a new run ($r2), running" wait_until 10 served "$r2" running
check "  with its resident bytes" grep -q "^rsswatch_resident_bytes{run=\"$r2\"," "$T/lis.m"
touch "$T/lis2.go"
wait "$i2"
kill -INT "$l"
finish "$l"
check "  status 0 at the end" test "$RC" -eq 0

# --- SIGINT in the same wake-up as the instance's end ------------------------------
# The recorder is stopped while its instance ends and SIGINT comes: when it goes on, it
# reads both at once. The run is the instance's end, and the stop still holds (it used
# to be taken for the run's and lost: the recorder waited for a next instance forever).
spawn both "$RSW" record -n "^fsvc-both-$tag" --follow -i 50ms
b=$!
wait_until 10 waiting "$T/both.err"
bash -c "exec -a fsvc-both-$tag '$HOG' +4M touch '$T/both1' await '$T/both1.go'" &
i1=$!
wait_until 10 test -e "$T/both1"
wait_until 10 grep -q "as run " "$T/both.err"
kill -STOP "$b"
touch "$T/both1.go"
wait "$i1"
kill -INT "$b"
kill -CONT "$b"
finish "$b" 20
check "SIGINT read with the instance's end: status 0, no wait for a next" test "$RC" -eq 0
check "  the run is the instance's end" \
	test "$(sql "$RSSWATCH_DB" "select outcome from run order by id desc limit 1")" = exited
check "  and says it stopped waiting" grep -q "stopped waiting" "$T/both.err"

# --- -p PID -n PATTERN: PID first, then the pattern --------------------------------
# PID ends once its run holds a sample (one that ends before has no run: it is gone)
"$HOG" await "$T/pn1.go" &
first=$!
_bg="$_bg $first"
at_exit "touch '$T/pn1.go'"
before=$(sql "$RSSWATCH_DB" "select ifnull(max(id), 0) from run")
spawn pn "$RSW" record -p "$first" -n "^fsvc-pn-$tag" --follow -i 50ms
pn=$!
sampled() { [ "$(sql "$RSSWATCH_DB" "select ifnull(max(samples), 0) from run where id > $before \
	and pid = $first")" -ge 1 ] 2>/dev/null; }
wait_until 20 sampled
touch "$T/pn1.go"
wait "$first"
wait_until 10 waiting "$T/pn.err"
bash -c "exec -a fsvc-pn-$tag '$HOG' +4M sleep 300ms"
wait_until 10 grep -q "restarted after" "$T/pn.err"
kill -INT "$pn"
finish "$pn"
"$RSW" ls --series --json >"$T/series.json"
S=$(jget "$T/series.json" '$[0].series')
show_json "$S"
check "-p PID -n PATTERN: the series starts with PID" test "$(sfield pid)" = "$first"
check "  then the next match: 2 runs" test "$(jget "$T/series.json" '$[0].runs' | tr -cd , | wc -c)" -eq 1

# --- -g CGROUP: recorded again when it holds a process again -----------------------
if [ -n "$cg" ]; then
	spawn cgf "$RSW" record -g "$cg" --follow -i 50ms
	g=$!
	# a run of -g lasts while the cgroup holds a process: each instance starts once
	# rsswatch has seen the cgroup empty and waits (a service manager's restart delay)
	cg_waits() { test "$(grep -c "waiting for a process in memory cgroup" "$T/cgf.err")" -ge "$1"; }
	for i in 1 2; do
		wait_until 10 cg_waits "$i"
		bash -c "echo \$\$ >'$cg/cgroup.procs' && exec '$HOG' +4M sleep 300ms"
	done
	wait_until 10 grep -q "restarted after" "$T/cgf.err"
	kill -INT "$g"
	finish "$g"
	"$RSW" ls --series --json >"$T/series.json"
	check "-g --follow: two runs in a series, status 0" \
		test "$(jget "$T/series.json" '$[0].outcomes')" = '["exited","exited"]' -a "$RC" -eq 0

	# A listed process whose memory cannot be read is no new instance. cgroup.procs
	# lists a process in its exit (an OOM victim whose memory is being freed, for a
	# few milliseconds: a run of 7 ms came 3 ms after a kill) until its exit is done;
	# a husk (memhog's "husk" step: its main thread ended) stays so for as long as it
	# lives. Each look at the cgroup made a run of no sample.
	bash -c "echo \$\$ >'$cg/cgroup.procs' && exec '$HOG' +4M touch '$T/husk' husk" \
		>/dev/null 2>&1 &
	husk=$!
	husk_only() { test -e "$T/husk" && ! grep -q '^VmRSS' "/proc/$husk/status" &&
		grep -qx "$husk" "$cg/cgroup.procs"; }
	if wait_until 10 husk_only; then
		before=$(sql "$RSSWATCH_DB" 'select max(id) from run')
		spawn husk "$RSW" record -g "$cg" --follow -i 50ms
		h=$!
		cg_waits_in() { test "$(grep -c "waiting for a process in memory cgroup" "$1")" -ge "$2"; }
		wait_until 10 cg_waits_in "$T/husk.err" 1
		bash -c "echo \$\$ >'$cg/cgroup.procs' && exec '$HOG' +4M sleep 300ms"
		wait_until 10 cg_waits_in "$T/husk.err" 2
		kill -INT "$h"
		finish "$h"
		nruns=$(sql "$RSSWATCH_DB" "select count(*) from run where id > $before")
		empty=$(sql "$RSSWATCH_DB" "select count(*) from run where id > $before and samples = 0")
		diag "-g --follow beside a husk: $nruns runs, $empty of them with no sample"
		check "-g --follow: a husk in the cgroup makes no run; the one instance does" \
			test "$nruns" -eq 1 -a "$empty" -eq 0 -a "$RC" -eq 0
	else
		not_ok "-g --follow: a husk in the cgroup (memhog husk) could be made"
	fi
	kill -KILL "$husk" 2>/dev/null
	wait "$husk" 2>/dev/null
	wait_until 10 sh -c "! grep -q . '$cg/cgroup.procs'"
else
	skip "-g --follow needs root and a memory cgroup controller"
fi

# --- hostile names: data, never code -----------------------------------------------
evil="fsvc-evil-$tag \$(touch $T/pwned)\`touch $T/pwned2\`
second line"
cp "$HOG" "$T/x\$(touch pw)"
spawn evil "$RSW" record -n "^fsvc-evil-$tag" --follow -i 50ms
e=$!
wait_until 10 waiting "$T/evil.err"
for i in 1 2; do
	EVIL="$evil" bash -c 'exec -a "$EVIL" "$0" +4M sleep 300ms' "$T/x\$(touch pw)"
done
wait_until 10 grep -q "restarted after" "$T/evil.err"
kill -INT "$e"
finish "$e"
check "hostile names: status 0" test "$RC" -eq 0
check "  nothing of the names was run" test ! -e "$T/pwned" -a ! -e "$T/pwned2" -a ! -e pw -a ! -e "$T/pw"
"$RSW" ls --series --json >"$T/series.json"
check "  two runs in a series" test "$(jget "$T/series.json" '$[0].outcomes')" = '["exited","exited"]'
"$RSW" ls -n 2 >"$OUT"
check "  ls: one line per run (no newline of a name leaks)" test "$(lines "$OUT")" -eq 3
show_json
target=$(sfield target)
case "$target" in
"'fsvc-evil-$tag \$(touch $T/pwned)\`touch $T/pwned2\`"?"second line' +4M sleep 300ms")
	ok "  the target is stored as text, quoted as a shell reads it back (its newline made printable)" ;;
*)	not_ok "  the target is stored as text, quoted as a shell reads it back (its newline made printable)"; diag "$target" ;;
esac
check "  stderr shows the name without control characters" \
	sh -c "! grep -q '^second line' '$T/evil.err'"

done_testing
