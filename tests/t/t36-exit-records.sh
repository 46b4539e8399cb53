#!/bin/sh
# Exit records (taskstats): a process that lives 5 ms between two samples still leaves
# its exact peak; an attached target's peak from before the attach is kept apart; a
# recorder without root says its peaks are sampled, and still takes wait4's.
. tests/t/lib.sh
MiB=1048576
last="(SELECT max(id) FROM run)"
q() { sqlite3 "$RSSWATCH_DB" "$1"; }

if [ "$(id -u)" -ne 0 ]; then
	skip "exit records need root"
	done_testing
	exit 0
fi

# A child of the launched command maps 100 MiB and lives about 5 ms, 300 ms after the
# first sample and long before the next (at 1 h: however slow the machine, only the
# first sample and the one at the end, after the child, are taken).
expect_exit 0 "a 5 ms child between two samples: exit 0" \
	"$RSW" record -q -i 1h -- sh -c "sleep 0.3; '$HOG' +100M sleep 5ms exit 0; sleep 0.3"
check "exit records were read" test "$(q "SELECT exit_records FROM run WHERE id = $last")" = 1
check "no sample saw it: the highest sampled RSS is under 50 MiB" \
	test "$(q "SELECT max(rss) FROM sample WHERE run_id = $last")" -lt $((50 * MiB))
# (under a sanitizer build, memhog's leak checker is a second process sharing its memory)
hog="run_id = $last AND comm = 'memhog' ORDER BY peak_rss DESC, first_ns LIMIT 1"
row=$(q "SELECT peak_rss, peak_source, ended, exit_code FROM process WHERE $hog")
diag "memhog's row: $row"
check "the child is in the process table with its exact peak (>= 100 MiB)" \
	test "${row%%|*}" -ge $((100 * MiB))
check "its peak is from the exit record, and it exited 0" \
	test "$(q "SELECT peak_source || ',' || ended || ',' || exit_code FROM process WHERE $hog")" = "exit record,exited,0"
check "the run's peak is at least the child's" \
	test "$(q "SELECT peak_rss FROM run WHERE id = $last")" -ge "${row%%|*}"
check "the largest process is the child" \
	test "$(q "SELECT peak_process_comm FROM run WHERE id = $last")" = memhog
# known only from its record, it still has its start and exit events, in that order,
# between 0.2 s and the run's end, the exit naming its exact peak
hogpid=$(q "SELECT pid FROM process WHERE $hog")
evs=$(q "SELECT kind || ' ' || detail FROM event WHERE run_id = $last AND pid = ${hogpid:-0}
	AND t >= (SELECT started_at FROM run WHERE id = $last) + 200000000
	AND t <= (SELECT ended_at FROM run WHERE id = $last) ORDER BY t, rowid" | tr '\n' ';')
diag "memhog's events: $evs"
case "$evs" in
"proc_start ppid="*" comm=memhog;proc_exit comm=memhog peak_rss="*"kB;") ok "its start and exit are events" ;;
*) not_ok "its start and exit are events" ;;
esac
check "the exit event's peak is the exact one" \
	test "$(q "SELECT detail FROM event WHERE run_id = $last AND pid = ${hogpid:-0} AND kind = 'proc_exit'")" = \
	"comm=memhog peak_rss=$(( ${row%%|*} / 1024 ))kB"

# When a process known only from its exit record lived. The record says how long it
# lived, not when it ended: it is read as it comes, and the process ended then (it was
# placed at the next sample, or at the run's end). A chain of two lives from about 0.3 s
# to 0.4 s, between samples 2 s apart, in a run of 1.4 s.
expect_exit 0 "a chain of two between two samples: exit 0" \
	"$RSW" record -q -i 2s -- sh -c "sleep 0.3; sh -c '$HOG +20M sleep 100ms exit 0; :'; sleep 1; :"
ms="(first_ns / 1000000) || ',' || (end_ns / 1000000)"
hog="run_id = $last AND comm = 'memhog' ORDER BY first_ns LIMIT 1"
kid=$(q "SELECT $ms FROM process WHERE $hog")
mid=$(q "SELECT $ms FROM process WHERE run_id = $last AND pid = (SELECT ppid FROM process WHERE $hog)")
top=$(q "SELECT $ms FROM process WHERE run_id = $last AND pid = (SELECT ppid FROM process WHERE run_id = $last AND pid = (SELECT ppid FROM process WHERE $hog))")
diag "start,end in ms: memhog $kid, its shell $mid, the target $top"
check "memhog ended when it did (a second or so before the run's end), not at the run's end" \
	test "${kid#*,}" -le $((${top#*,} - 500))
check "memhog started when it did (at least 250 ms), and lived at least 90 ms" \
	test "${kid%,*}" -ge 250 -a "${kid#*,}" -ge $((${kid%,*} + 90))
check "its shell started no later than memhog (100 ms slack) and ended no earlier" \
	test "${mid%,*}" -le $((${kid%,*} + 100)) -a "${mid#*,}" -ge $((${kid#*,} - 100))
check "memhog started before its shell ended, which ended before the target" \
	test "${kid%,*}" -le "${mid#*,}" -a "${mid#*,}" -le $((${top#*,} - 500))

# A child sharing its parent's address space (clone CLONE_VM, as vfork and posix_spawn
# do before the exec) holds the same pages: they count once in the totals.
SHM="$BUILD/tests/bin/sharemm"
expect_exit 0 "a CLONE_VM child of a 100 MiB process: exit 0" "$RSW" record -q -i 20ms -- "$SHM" 100
check "both processes are in the table" \
	test "$(q "SELECT count(*) FROM process WHERE run_id = $last AND comm = 'sharemm'")" -ge 2
check "the sampled total counts the shared 100 MiB once (under 150 MiB)" \
	test "$(q "SELECT max(rss) FROM sample WHERE run_id = $last")" -lt $((150 * MiB))
check "the run's peak is the one address space's (100..150 MiB)" \
	test "$(q "SELECT peak_rss >= 100 * $MiB AND peak_rss < 150 * $MiB FROM run WHERE id = $last")" = 1
expect_exit 0 "the same with --pss: exit 0" "$RSW" record -q -i 20ms --pss=20ms -- "$SHM" 100
check "--pss: the summed PSS counts the shared 100 MiB once too (under 150 MiB)" \
	test "$(q "SELECT max(pss) FROM sample WHERE run_id = $last")" -lt $((150 * MiB))
check "--pss: and it was read (at least 100 MiB)" \
	test "$(q "SELECT max(pss) FROM sample WHERE run_id = $last")" -ge $((100 * MiB))
check "the peak's time lies within the run, whatever its source" \
	test "$(q "SELECT count(*) FROM run WHERE peak_rss_at NOT BETWEEN started_at AND ended_at")" = 0

# The same child under an attached tree (-p -t): the record is attributed through its
# parent, which is a member. The child starts once the recorder has stored its first
# sample (the recorder attached, its listeners open); the next sample is an hour away,
# and the run ends with the target. The eBPF engine is off (--no-bpf): with it, its
# page counts give an equal peak with its own time (tests/t/t83-kernel-peaks.sh).
stored_sample() { [ "$(q "SELECT count(*) FROM sample WHERE run_id = (SELECT max(id) FROM run WHERE outcome = 'running')")" -ge 1 ] 2>/dev/null; }
# attached_tree NAME SCRIPT: a shell that runs SCRIPT once recorded (-i 1h -t -p) and
# the recorder's first sample is stored; its pid in $pid, the recorder's status in $RC.
attached_tree() {
	spawn "$1" sh -c "until [ -e '$T/$1_go' ]; do sleep 0.01; done; $2; sleep 0.2"
	pid=$!
	spawn "$1rec" "$RSW" record --no-bpf -q -i 1h -t -p "$pid"
	_rec=$!
	wait_until 30 stored_sample
	touch "$T/$1_go"
	finish "$_rec"
}
attached_tree tree "'$HOG' +100M sleep 5ms exit 0"
check "-p -t of a shell whose child lives 5 ms: exit 0 (got $RC)" test "$RC" -eq 0
check "-p -t: the child's exact peak is the run's (>= 100 MiB)" \
	test "$(q "SELECT peak_rss FROM run WHERE id = $last")" -ge $((100 * MiB))
check "-p -t: from the exit record" \
	test "$(q "SELECT peak_source FROM run WHERE id = $last")" = "exit record"
finish "$pid"

# A chain of three that lives between two samples of an attached tree: the deepest's
# record comes first, before its parent and grandparent are known. It still joins the
# run, with its exact peak (it was dropped when records were retried only once).
attached_tree chain "sh -c \"sh -c '$HOG +100M sleep 5ms exit 0; :'; :\""
check "-p -t, a chain of three between two samples: exit 0 (got $RC)" test "$RC" -eq 0
check "-p -t chain: memhog's exact peak is the run's (>= 100 MiB)" \
	test "$(q "SELECT peak_rss >= 100 * $MiB AND peak_source = 'exit record' FROM run WHERE id = $last")" = 1
# (under the leak checker of a SANITIZE build, memhog's tracer child, which shares its
# address space, is a second process named memhog with the same peak)
check "-p -t chain: memhog is in the process table, from its exit record" \
	test "$(q "SELECT count(*) FROM process WHERE run_id = $last AND comm = 'memhog' AND peak_rss >= 100 * $MiB")" -ge 1
finish "$pid"

# A member seen at the first sample that ends before the second: its exit event is at
# the end its exit record gives (read within 100 ms of it), not at the sample that
# found it gone: here none does (the next is at 1 h; the target ends a second later,
# once the member is seen gone here), and it had no exit event at all. The member goes
# on when the recorder has stored its first sample.
spawn ender sh -c "'$HOG' await '$T/ender_go' sleep 100ms exit 0; sleep 1; '$HOG' await '$T/ender_stop' exit 0"
pid=$!
wait_until 10 sh -c "[ -n \"\$(cat /proc/$pid/task/$pid/children)\" ]"
member=$(cat "/proc/$pid/task/$pid/children" | tr -d ' ')
spawn enderrec "$RSW" record -q -i 1h -t -p "$pid"
rec=$!
wait_until 30 stored_sample
touch "$T/ender_go"
wait_until 30 gone "$member"
gone_ms=$(now_ms)
touch "$T/ender_stop"
finish "$rec"
check "-p -t, a member ends between samples: exit 0 (got $RC)" test "$RC" -eq 0
kid_ms=$(q "SELECT (t - (SELECT started_at FROM run WHERE id = $last)) / 1000000 FROM event
	WHERE run_id = $last AND kind = 'proc_exit' AND pid = ${member:-0}")
seen_ms=$((gone_ms - $(q "SELECT started_at / 1000000 FROM run WHERE id = $last")))
end_ms=$(q "SELECT (ended_at - started_at) / 1000000 FROM run WHERE id = $last")
diag "the member's exit event at ${kid_ms:-none} ms, seen gone here at $seen_ms ms, the run's end at $end_ms ms"
check "the member that ended between samples has its exit event (at ${kid_ms:-none} ms)" test -n "$kid_ms"
check "... at its own end (within 150 ms of $seen_ms ms), not the run's ($end_ms ms)" \
	test "${kid_ms:-99999}" -le $((seen_ms + 150)) -a "${kid_ms:-99999}" -le $((end_ms - 700))
finish "$pid"

# An attached process that peaked at 200 MiB before the attach, idles, then exits: its
# exit record says 200 MiB, which is history, not the run's.
# It exits once its run holds a sample (a fixed sleep ended it before a slow attach).
spawn old "$HOG" +200M - await "$T/old_go" exit 0 "$T"
pid=$!
at_exit "touch '$T/old_go'"
wait_until 5 sh -c "grep -q '^VmHWM:.* [0-9]\{6,\} kB' /proc/$pid/status && [ \$(awk '/^VmRSS/ { print \$2 }' /proc/$pid/status) -lt 51200 ]"
spawn oldrec "$RSW" record -q -i 100ms -p "$pid"
rec=$!
wait_until 30 stored_sample
touch "$T/old_go"
finish "$rec"
check "attach after an old peak: exit 0 (got $RC)" test "$RC" -eq 0
check "attach: hwm_before holds the old peak (>= 200 MiB)" \
	test "$(q "SELECT hwm_before FROM run WHERE id = $last")" -ge $((200 * MiB))
check "attach: the run's peak is its own (under 50 MiB), not the exit record's history" \
	test "$(q "SELECT peak_rss FROM run WHERE id = $last")" -lt $((50 * MiB))
finish "$pid"

# One process attached whose children hold memory: said at the start and in the summary.
spawn kids sh -c "'$HOG' +40M sleep 5s & '$HOG' +20M sleep 5s & wait; : $T"
kids=$!
wait_until 10 sh -c "[ \$(cat /proc/$kids/task/$kids/children | wc -w) -eq 2 ] && grep -q '^VmRSS:.* [0-9]\{5,\} kB' /proc/\$(cut -d' ' -f1 /proc/$kids/task/$kids/children)/status"
expect_exit 0 "-p of a shell with two children: exit 0" "$RSW" record -i 100ms -d 300ms -p "$kids"
check "the start says the descendants are not recorded" \
	grep -q "^rsswatch: pid $kids has 2 descendants holding .* MiB, not recorded (add -t)" "$ERR"
check "the summary says it too" grep -q '^note      2 descendants held up to .* MiB, not recorded (add -t)' "$ERR"
check "no 'before recording' line when the old peak is no higher than the run's" \
	sh -c "! grep -q '^earlier ' '$ERR'"
finish "$kids" 1

# Without root (nobody): no exit records; a launched command's peak still comes from
# wait4, exact.
if id nobody >/dev/null 2>&1; then
	mkdir -p -m 700 "$T/nobody" && chown nobody "$T/nobody"
	expect_exit 0 "as nobody: a 5 ms child: exit 0" \
		su nobody -s /bin/sh -c "'$RSW' record -q -i 1s --db '$T/nobody/r.db' -- sh -c \"sleep 0.3; '$HOG' +100M sleep 5ms exit 0; sleep 0.5\""
	check "as nobody: exit records were not read" \
		test "$(sqlite3 "$T/nobody/r.db" "SELECT exit_records FROM run")" = 0
	check "as nobody: the peak is wait4's, >= 100 MiB" \
		test "$(sqlite3 "$T/nobody/r.db" "SELECT peak_rss >= 100 * $MiB AND peak_source = 'wait4' FROM run")" = 1
	# the largest process is a sampled one, smaller: the summary says the two differ
	run su nobody -s /bin/sh -c "'$RSW' show --db '$T/nobody/r.db' 1"
	check "as nobody: the largest process line says wait4's peak is another's" \
		grep -q "^largest .* as sampled; the 10[0-9]\.[0-9] MiB from wait4 is a process of the tree not sampled at its height" "$OUT"
	# A member that ends just before the target, after the last sample: nothing says
	# so, yet it is not running once the run is over.
	expect_exit 0 "as nobody: a member ends after the last sample: exit 0" \
		su nobody -s /bin/sh -c "'$RSW' record -q -i 200ms --db '$T/nobody/r.db' -- sh -c 'sleep 0.3 & sleep 1; wait'"
	check "as nobody: no member is left running, each has an end" \
		test "$(sqlite3 "$T/nobody/r.db" "SELECT count(*) FROM process WHERE run_id = (SELECT max(id) FROM run) AND (ended = 'running' OR end_ns IS NULL)")" = 0
else
	for k in 1 2 3 4 5 6; do skip "no user nobody"; done
fi
done_testing
