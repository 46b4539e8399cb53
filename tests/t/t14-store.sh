#!/bin/sh
# The run database: created where asked, refused when it is not ours or too new, left
# intact by a killed recorder and by two recorders at once; rm deletes a run.
. tests/t/lib.sh

runs_in() { sql "$1" "select count(*) from run"; }
recording() { grep -q 'recording pid' "$T/$1.err" 2>/dev/null; }
sum() { md5sum <"$1"; }

# --- a database in a directory that does not exist yet: created, nested, for
# $RSSWATCH_DB (and the default place); an explicit --db makes no directory (a typo)
expect_exit 125 "--db in a missing nested directory: refused" \
	"$RSW" record -q -i 10ms --db "$T/new/a/b/runs.db" -- "$HOG" sleep 50ms exit 0
check "--db in a missing nested directory: nothing created" test ! -e "$T/new"
run env RSSWATCH_DB="$T/new/a/b/runs.db" "$RSW" record -q -i 10ms -- "$HOG" sleep 50ms exit 0
check "database in a missing nested directory: created" test -s "$T/new/a/b/runs.db"
check "the new database holds the run" test "$(runs_in "$T/new/a/b/runs.db")" -eq 1
RSSWATCH_DB="$T/env/deep/x.db" run "$RSW" record -q -- "$HOG" exit 0
check "\$RSSWATCH_DB in a missing directory: created and used" \
	sh -c "[ $RC -eq 0 ] && [ \$(sqlite3 '$T/env/deep/x.db' 'select count(*) from run') -eq 1 ]"

# --- a read-only directory (a read-only tmpfs, so that root cannot write either)
mkdir "$T/ro"
if mount -t tmpfs -o ro,size=1m tmpfs "$T/ro" 2>"$T/mount.err"; then
	at_exit umount "$T/ro"
	expect_exit 1 "database in a read-only directory, attach: exit 1" \
		"$RSW" record -q --db "$T/ro/x.db" -p $$
	check "read-only directory: the message names the directory" grep -q "$T/ro.*read-only" "$ERR"
	expect_exit 125 "database in a read-only directory, launch: exit 125" \
		"$RSW" record -q --db "$T/ro/x.db" -- "$HOG" touch "$T/ran" exit 0
	check "read-only directory: the command was not run" test ! -e "$T/ran"
	expect_exit 1 "database in a missing directory under a read-only one: exit 1" \
		"$RSW" record -q --db "$T/ro/sub/x.db" -p $$
	check "read-only directory: nothing left in it" test -z "$(ls -A "$T/ro")"
else
	skip "cannot mount a read-only tmpfs: $(cat "$T/mount.err")"
	skip "read-only directory (message)"
	skip "read-only directory (launch)"
	skip "read-only directory (command not run)"
	skip "read-only directory (nested)"
	skip "read-only directory (nothing left)"
fi

# --- an existing database on a read-only file system can still be read
mkdir "$T/rofs"
if mount -t tmpfs -o size=4m,mode=0755 tmpfs "$T/rofs" 2>"$T/mount.err"; then
	at_exit umount "$T/rofs"
	"$RSW" record -q --db "$T/rofs/x.db" -- "$HOG" exit 0 2>/dev/null
	mount -o remount,ro "$T/rofs"
	expect_exit 0 "ls of a database on a read-only file system: exit 0" "$RSW" ls --db "$T/rofs/x.db"
	check "ls of a database on a read-only file system lists its run" grep -q 'exited with 0' "$OUT"
else
	skip "cannot mount a tmpfs: $(cat "$T/mount.err")"
	skip "ls on a read-only file system"
fi

# --- files that are not ours
printf 'hello, I am a text file\n' >"$T/text.db"
s0=$(sum "$T/text.db")
expect_exit 1 "a text file as database, record: exit 1" "$RSW" record -q --db "$T/text.db" -p $$
check "text file: 'not an rsswatch database'" grep -q "not an rsswatch database" "$ERR"
expect_exit 1 "a text file as database, ls: exit 1" "$RSW" ls --db "$T/text.db"
check "text file: ls says 'not an rsswatch database'" grep -q "not an rsswatch database" "$ERR"
expect_exit 125 "a text file as database, launch: exit 125" "$RSW" record -q --db "$T/text.db" -- "$HOG" exit 0
check "text file unchanged" test "$(sum "$T/text.db")" = "$s0"

sqlite3 "$T/other.db" "create table accounts (name text, balance int); insert into accounts values ('a', 1);"
s0=$(sum "$T/other.db")
expect_exit 1 "another program's SQLite database, record: exit 1" "$RSW" record -q --db "$T/other.db" -p $$
check "other SQLite database: 'not an rsswatch database'" grep -q "not an rsswatch database" "$ERR"
expect_exit 1 "another program's SQLite database, ls: exit 1" "$RSW" ls --db "$T/other.db"
expect_exit 1 "another program's SQLite database, show: exit 1" "$RSW" show --db "$T/other.db"
check "other SQLite database unchanged (checksum)" test "$(sum "$T/other.db")" = "$s0"
check "other SQLite database: no -wal or -shm left beside it" \
	sh -c "[ ! -e '$T/other.db-wal' ] && [ ! -e '$T/other.db-shm' ]"

expect_exit 1 "a directory as database: exit 1" "$RSW" record -q --db "$T" -p $$

# --- a database from a newer rsswatch
"$RSW" record -q --db "$T/newer.db" -- "$HOG" exit 0 2>/dev/null
sql "$T/newer.db" "PRAGMA user_version = 99"
s0=$(sum "$T/newer.db")
expect_exit 1 "a newer schema, record: exit 1" "$RSW" record -q --db "$T/newer.db" -p $$
check "newer schema: the message names version 99" grep -q "99" "$ERR"
expect_exit 1 "a newer schema, ls: exit 1" "$RSW" ls --db "$T/newer.db"
check "newer schema: ls names version 99" grep -q "99" "$ERR"
check "newer schema: database unchanged" test "$(sum "$T/newer.db")" = "$s0"

# --- runs that do not exist
"$RSW" record -q -- "$HOG" exit 0 2>/dev/null
expect_exit 1 "show 9999: exit 1" "$RSW" show 9999
check "show 9999: 'no run 9999'" grep -q "no run 9999" "$ERR"
expect_exit 2 "show abc: exit 2" "$RSW" show abc
expect_exit 2 "show 0: exit 2" "$RSW" show 0
expect_exit 1 "export 9999: exit 1" "$RSW" export 9999 --format csv
expect_exit 1 "show on a missing database: exit 1" "$RSW" show --db "$T/missing.db"
check "show on a missing database creates nothing" test ! -e "$T/missing.db"

# A run that can be found but not read whole (a table gone): one line, exit 1, and
# nothing leaked on the way out (AddressSanitizer's leak report under SANITIZE=1)
cp "$RSSWATCH_DB" "$T/broken.db"
sql "$T/broken.db" "DROP TABLE process"
expect_exit 1 "show of a run whose process table is gone: exit 1" "$RSW" show --db "$T/broken.db"
check "show of a broken run: one line on stderr, nothing leaked ($(head -c 200 "$ERR"))" \
	test "$(lines "$ERR")" -eq 1
check "show of a broken run: says what is missing" grep -q 'cannot read run [0-9]*: no such table: process' "$ERR"

# Output that cannot be written is an error, said once, for every verb that prints
for v in "show" "show --json" "ls" "ls --json" "export --format csv" "--help"; do
	# shellcheck disable=SC2086
	"$RSW" $v >/dev/full 2>"$T/full.err"
	rc=$?
	check "$v >/dev/full: exit 1 and one line saying so (exit $rc)" \
		test "$rc" -eq 1 -a "$(lines "$T/full.err")" -eq 1 -a "$(grep -c 'cannot write to standard output: no space left on device' "$T/full.err")" -eq 1
done

# --- the recorder killed by SIGKILL in the middle of a run
K="$T/kill.db"
has_samples() { [ "$(sql "$K" "select count(*) from sample" 2>/dev/null)" -gt 0 ] 2>/dev/null; }
since() { [ $(( $(now_ms) - t0 )) -ge "$1" ]; }
t0=$(now_ms)
spawn krec "$RSW" record -q -i 10ms --db "$K" -- "$HOG" +16M await "$T/kill_go"
krec=$!
wait_until 10 has_samples
wait_until 10 since 2000
kill -KILL "$krec"
t_kill=$(( $(now_ms) - t0 ))
finish "$krec" 5
touch "$T/kill_go"
check "killed recorder: integrity_check ok" test "$(sql "$K" "PRAGMA integrity_check")" = ok
"$RSW" ls --json --db "$K" >"$T/kls.json"
check "killed recorder: ls --json says interrupted" \
	test "$(jget "$T/kls.json" '$[0].outcome')" = interrupted
"$RSW" show --json --db "$K" >"$T/show.json"
check "killed recorder: show --json says interrupted" test "$(sfield outcome)" = interrupted
check "killed recorder: the interrupted run has an end time" test -n "$(sfield ended_at)"
n=$(sql "$K" "select count(*) from sample")
last_ms=$(sql "$K" "select max(elapsed_ns) / 1000000 from sample")
diag "killed at ${t_kill}ms after start; $n samples stored, the last at ${last_ms}ms"
# A batch is written every 5 s or every 256 samples (2.56 s at 10 ms), whichever comes first.
check "killed recorder: samples cover all but the last batch (last at ${last_ms}ms, killed at ${t_kill}ms)" \
	test "$last_ms" -ge $(( t_kill - 2560 - 400 ))
# the run's clock starts at the command's exec: the first sample may come tens of ms later
first_ms=$(sql "$K" "select min(elapsed_ns) / 1000000 from sample")
span=$((last_ms - first_ms))
check "killed recorder: the sample count fits the covered time ($n for ${first_ms}..${last_ms}ms at 10ms)" \
	test "$n" -ge $(( span / 10 * 8 / 10 )) -a "$n" -le $(( span / 10 + 2 ))
check "killed recorder: the run's sample count matches its rows" test "$(sfield samples)" -eq "$n"
expect_exit 0 "a database left by a killed recorder takes new runs" \
	"$RSW" record -q --db "$K" -- "$HOG" exit 0
"$RSW" show 1 --json --db "$K" >"$T/show.json"
check "the interrupted run stays interrupted beside a new run" \
	test "$(sql "$K" "select count(*) from run") $(sfield outcome)" = "2 interrupted"

# --- two recorders writing to one database at once
C="$T/conc.db"
"$RSW" record -q --db "$C" -- "$HOG" exit 0 2>/dev/null	# the schema exists before the race
spawn h1 "$HOG" await "$T/conc_go"
h1=$!
spawn h2 "$HOG" await "$T/conc_go"
h2=$!
spawn c1 "$RSW" record -q -i 1ms -d 2s --db "$C" -p "$h1"
c1=$!
spawn c2 "$RSW" record -q -i 1ms -d 2s --db "$C" -p "$h2"
c2=$!
finish "$c1"
rc1=$RC
finish "$c2"
rc2=$RC
touch "$T/conc_go"
finish "$h1" 10
finish "$h2" 10
check "two recorders at once: both exit 0 ($rc1, $rc2)" test "$rc1" -eq 0 -a "$rc2" -eq 0
check "two recorders at once: integrity_check ok" test "$(sql "$C" "PRAGMA integrity_check")" = ok
for p in "$h1" "$h2"; do
	row=$(sql "$C" "select outcome || ' ' || samples || ' ' || (select count(*) from sample where run_id = run.id) from run where pid = $p")
	set -- $row
	diag "pid $p: $row"
	check "concurrent run of pid $p: outcome stopped" test "${1:-}" = stopped
	check "concurrent run of pid $p: 1000..2001 samples in 2s at 1ms (got ${2:-none})" \
		test "${2:-0}" -ge 1000 -a "${2:-0}" -le 2001
	check "concurrent run of pid $p: every sample stored (${3:-0} rows)" test "${3:-0}" = "${2:-x}"
done
check "two recorders at once: no 'cannot write' complaints" \
	sh -c "! grep -q 'cannot write' '$T/c1.err' '$T/c2.err'"

# --- rm
R="$T/rm.db"
for i in 1 2 3; do "$RSW" record -q -i 10ms --db "$R" -- "$HOG" sleep 30ms exit 0 2>/dev/null; done
check "rm: three runs to start with" test "$(sql "$R" "select count(*) from run")" -eq 3
check "rm: run 2 has samples" test "$(sql "$R" "select count(*) from sample where run_id = 2")" -gt 0
expect_exit 0 "rm 2: exit 0" "$RSW" rm 2 --db "$R"
check "rm 2: says so" grep -qx "removed run 2" "$OUT"
"$RSW" ls --json --db "$R" >"$T/rls.json"
check "rm 2: ls no longer lists run 2" \
	test "$(sqlite3 :memory: "select group_concat(json_extract(value, '\$.id')) from json_each(readfile('$T/rls.json'))")" = "3,1"
check "rm 2: its samples are gone" test "$(sql "$R" "select count(*) from sample where run_id = 2")" -eq 0
check "rm 2: other runs' samples stay" test "$(sql "$R" "select count(*) from sample where run_id in (1, 3)")" -gt 0
expect_exit 1 "rm 2 again (missing): exit 1" "$RSW" rm 2 --db "$R"
check "rm of a missing run names it" grep -q "no run 2" "$ERR"
expect_exit 1 "rm 9999: exit 1" "$RSW" rm 9999 --db "$R"
expect_exit 1 "rm 1 9999: exit 1" "$RSW" rm 1 9999 --db "$R"
check "rm 1 9999: run 1 removed anyway" test "$(sql "$R" "select count(*) from run where id = 1")" -eq 0
expect_exit 2 "rm abc: exit 2" "$RSW" rm abc --db "$R"

spawn hog "$HOG" await "$T/rm_go"
hog=$!
spawn rrec "$RSW" record -i 10ms --db "$R" -p "$hog"
rrec=$!
wait_until 10 recording rrec
expect_exit 1 "rm of a run being recorded: exit 1" "$RSW" rm last --db "$R"
check "rm of a run being recorded: says it is still being recorded" grep -q "still being recorded" "$ERR"
check "rm of a run being recorded: the run stays" \
	test "$(sql "$R" "select count(*) from run where pid = $hog")" -eq 1
kill -INT "$rrec"
finish "$rrec"
touch "$T/rm_go"
finish "$hog" 10
expect_exit 0 "rm of the same run once its recording ended: exit 0" "$RSW" rm last --db "$R"
check "rm last removed the ended run" test "$(sql "$R" "select count(*) from run where pid = $hog")" -eq 0

# A recorder stays small on a new database too: the schema is made in a short-lived
# child (store.h, STORE_SMALL), not in the recorder, whose heap would otherwise keep
# the migration's pages (about 170 KiB more than any later run's).
heap_of() {	# heap_of DB: the [heap] KiB of a recorder of a 3 s run into DB, 1 s in
	spawn heaprec "$RSW" record -q -i 20ms -d 3s --db "$1" -- sleep 3
	_hr=$!
	wait_until 5 sh -c "grep -q libc /proc/$_hr/maps 2>/dev/null" && sleep 1
	awk '/^[0-9a-f]+-/ { h = ($6 == "[heap]") } /^Rss:/ && h { print $2; exit }' \
		"/proc/$_hr/smaps" 2>/dev/null
	finish "$_hr"
}
h1=$(heap_of "$T/small.db")
h2=$(heap_of "$T/small.db")
if ldd "$RSW" 2>/dev/null | grep -q libasan; then
	skip "the recorder's heap (AddressSanitizer allocates apart from it)"
else
	check "the first run into a new database keeps no more heap than the next (${h1:-?} KiB, then ${h2:-?} KiB)" \
		test -n "$h1" -a -n "$h2" -a "${h1:-0}" -le "$((${h2:-0} + 48))"
fi
check "... and the database it made is whole: both runs are in it" \
	test "$(sql "$T/small.db" "select count(*) from run")" -eq 2

done_testing
