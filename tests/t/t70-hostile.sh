#!/bin/sh
# rsswatch as root beside another user who means harm: a page that shrinks under the
# recorder, a stale page of a dead process whose pid is reused, squatted page names,
# planted symlinks and pre-created files for the database, its directory and -o
# files. The other user is a numeric uid with no account (setpriv needs none); pids
# are reused through /proc/sys/kernel/ns_last_pid. Needs root; prints TAP.
. tests/t/lib.sh

HOSTILE="$BUILD/tests/bin/hostile"
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null 2>&1 || [ ! -x "$HOSTILE" ]; then
	echo "1..0 # SKIP needs root, setpriv and $HOSTILE"
	exit 0
fi

# Two uids that no account and no process use: the hostile user, and a user it harms.
. tests/t/hostile.sh
need_uids 61070

# $PUB: a directory everyone can write, as /tmp is; $SHM: the page directory, sticky
# as /dev/shm is. Both inside $T, which the suite removes.
PUB="$T/pub"
SHM="$T/shm"
mkdir -m 1777 "$PUB" "$SHM"
chmod 1777 "$PUB" "$SHM"
RSSWATCH_SHM_DIR=$SHM
export RSSWATCH_SHM_DIR
DB="$T/db/rsswatch.db"

# --- 1. a page that its owner shrinks and regrows while root reads it ---------------
spawn shrink $AS_EVIL "$HOSTILE" shrink "$PUB/shrink.ready"
SHRINK=$!
if wait_until 10 test -e "$PUB/shrink.ready"; then
	bus=0
	for i in 1 2 3; do
		run "$RSW" record -q -i 1ms -d 1500ms --db "$DB" -p "$SHRINK"
		[ "$RC" -eq 0 ] || { bus=$((bus + 1)); diag "try $i: exit status $RC"; }
	done
	check "hostile page: 3 recordings at 1ms of a page shrunk in a loop end normally" \
		test "$bus" -eq 0
else
	not_ok "hostile page: the user's program started"
fi
kill -KILL "$SHRINK" 2>/dev/null
finish "$SHRINK"

# --- 2. the database: planted symlinks, pre-created files, unsafe directories --------
"$RSW" record -q --db "$DB" -- "$HOG" exit 0 2>/dev/null	# a run to read later
mkdir -m 700 "$T/rootdir" "$T/safe"
# A symlink another user planted where root's database is to be made.
$AS_EVIL ln -s "$T/rootdir/target.db" "$PUB/l.db"
expect_exit 125 "db: a symlink planted by another user: refused" \
	"$RSW" record -q --db "$PUB/l.db" -- "$HOG" exit 0
check "db: ... and nothing made where it leads" test ! -e "$T/rootdir/target.db"
check "db: ... the message names the directory and the fix" grep -Eq "$PUB can be written by every user.*(chmod go-w|a directory of your own)" "$ERR"
# The same, with directories still to be made: none is made where the link leads.
$AS_EVIL ln -s "$T/rootdir" "$PUB/d"
expect_exit 125 "db: new directories through another user's symlink: refused" \
	env RSSWATCH_DB="$PUB/d/new/runs.db" "$RSW" record -q -- "$HOG" exit 0
check "db: ... and no directory made where it leads" test ! -e "$T/rootdir/new"
# Even root's own symlink: the database is opened without following one.
ln -s "$T/safe/real.db" "$T/safe/l.db"
expect_exit 125 "db: a symlink in a safe directory: refused" \
	"$RSW" record -q --db "$T/safe/l.db" -- "$HOG" exit 0
check "db: ... says it is a symbolic link" grep -q "$T/safe/l.db is a symbolic link" "$ERR"
check "db: ... and nothing made where it leads" test ! -e "$T/safe/real.db"
# A file another user made first, writable by all, in a directory all can write.
$AS_EVIL sh -c "umask 0; : >'$PUB/x.db'"
expect_exit 125 "db: a world-writable file pre-created by another user: refused" \
	"$RSW" record -q --db "$PUB/x.db" -- "$HOG" exit 0
check "db: ... and no run went into it" test ! -s "$PUB/x.db"
# Another user's file in a safe directory.
: >"$T/safe/theirs.db"
chown "$EVIL" "$T/safe/theirs.db"
chmod 600 "$T/safe/theirs.db"
expect_exit 125 "db: another user's file: refused" \
	"$RSW" record -q --db "$T/safe/theirs.db" -- "$HOG" exit 0
check "db: ... says whose it is" grep -q "belongs to another user (uid $EVIL)" "$ERR"
# A directory its group may write.
mkdir -m 770 "$T/gw"
expect_exit 1 "db: a group-writable directory: refused" "$RSW" record -q --db "$T/gw/x.db" -p $$
check "db: ... and no database made there" test ! -e "$T/gw/x.db"
# $XDG_STATE_HOME in another user's directory, its rsswatch a symlink to root's.
mkdir "$T/xdg" "$T/rootstate"
chown "$EVIL" "$T/xdg"
$AS_EVIL ln -s "$T/rootstate" "$T/xdg/rsswatch"
RSSWATCH_DB= XDG_STATE_HOME="$T/xdg" run "$RSW" record -q -- "$HOG" exit 0
check "db: \$XDG_STATE_HOME through another user's symlink: refused (exit $RC)" test "$RC" -eq 125
check "db: ... and nothing made where it leads" test -z "$(ls -A "$T/rootstate")"
# What rsswatch makes, only its owner may read: the runs hold command lines.
expect_exit 0 "db: a new database in new directories" \
	env RSSWATCH_DB="$T/fresh/a/runs.db" "$RSW" record -q -- "$HOG" exit 0
check "db: ... the database is 0600" test "$(stat -c %a "$T/fresh/a/runs.db")" = 600
check "db: ... the directories 0700" \
	test "$(stat -c %a "$T/fresh") $(stat -c %a "$T/fresh/a")" = "700 700"

# --- 10. a reader only reads; errors say what went wrong ------------------------------
mkdir -m 755 "$T/shared"
"$RSW" record -q --db "$T/shared/runs.db" -- "$HOG" exit 0 2>/dev/null
chmod 644 "$T/shared/runs.db"
run $AS_EVIL "$RSW" ls --db "$T/shared/runs.db"
check "read-only: a user who may only read the database lists it (exit $RC)" \
	eval "[ $RC -eq 0 ] && grep -q 'exited with 0' '$OUT'"
[ "$RC" -eq 0 ] || diag_run
run $AS_EVIL "$RSW" show --db "$T/shared/runs.db"
check "read-only: ... and shows its run (exit $RC)" test "$RC" -eq 0
# A corrupt database: rm says what is wrong, not "not an error".
for i in 1 2; do "$RSW" record -q --db "$T/corrupt.db" -- "$HOG" exit 0 2>/dev/null; done
yes garbage | head -c 8192 | dd of="$T/corrupt.db" bs=4096 seek=3 conv=notrunc 2>/dev/null
expect_exit 1 "rm on a corrupt database: exit 1" "$RSW" rm 1 --db "$T/corrupt.db"
check "rm on a corrupt database: the message is not 'not an error'" \
	eval "grep -q . '$ERR' && ! grep -q 'not an error' '$ERR'"
# A migration that fails (the tables exist, the version says they do not).
"$RSW" record -q --db "$T/migr.db" -- "$HOG" exit 0 2>/dev/null
sql "$T/migr.db" "PRAGMA user_version = 0"
expect_exit 125 "a failed migration: exit 125" "$RSW" record -q --db "$T/migr.db" -- "$HOG" exit 0
check "a failed migration: SQLite's reason, not 'not an error'" \
	grep -q "cannot set up the database: table .* already exists" "$ERR"

# --- 2. -o files: never through another user's link, never into their file -----------
printf 'secret\n' >"$T/victim"
$AS_EVIL ln -s "$T/victim" "$PUB/r.html"
$AS_EVIL ln -s "$T/victim" "$PUB/e.csv"
$AS_EVIL ln -s "$T/victim" "$PUB/p.svg"
expect_exit 1 "-o: report through another user's symlink: refused" \
	"$RSW" report --db "$DB" -o "$PUB/r.html"
expect_exit 1 "-o: export through another user's symlink: refused" \
	"$RSW" export --db "$DB" --format csv -o "$PUB/e.csv"
expect_exit 1 "-o: plot through another user's symlink: refused" \
	"$RSW" plot last --db "$DB" -o "$PUB/p.svg"
check "-o: the file the symlinks lead to is untouched" test "$(cat "$T/victim")" = secret
check "-o: the message says why" grep -q "symbolic link made by another user" "$ERR"
$AS_EVIL sh -c "umask 0; : >'$PUB/pre.csv'"
expect_exit 0 "-o: export over a file another user made first: exit 0" \
	"$RSW" export --db "$DB" --format csv -o "$PUB/pre.csv"
check "-o: ... the output is a new file of root's, not theirs" \
	test "$(stat -c %u "$PUB/pre.csv")" = 0
check "-o: ... holding the export" grep -q '^time,' "$PUB/pre.csv"
expect_exit 0 "-o: report to a new file: exit 0" "$RSW" report --db "$DB" -o "$T/new.html"
check "-o: ... no temporary file left beside it" \
	test -z "$(ls -A "$T" | grep '^\.new.html')"

# --- 4. a dead process's page, and a new process under its pid -----------------------
# The first process makes a page with a mark and a gauge and is killed (its page
# stays); a process that does not use the library then gets the same pid (another
# process may take it first: then all again, a few times).
for try in 1 2 3 4 5; do
	rm -f "$T/stale.ready" "$T/reuse.ready"
	spawn stale "$HOSTILE" stale "$T/stale.ready"
	STALE=$!
	wait_until 10 test -e "$T/stale.ready"
	kill -KILL "$STALE"
	finish "$STALE"
	spawn reuse "$HOSTILE" at "$STALE" "$HOG" touch "$T/reuse.ready" await "$T/reuse.go"
	REUSE=$!
	wait_until 10 eval "test -e '$T/reuse.ready' || gone $REUSE"
	[ -e "$T/reuse.ready" ] && break
	finish "$REUSE"
done
if [ -e "$T/reuse.ready" ]; then
	check "pid reuse: the killed process left its page" test -f "$SHM/rsswatch.$STALE"
	run "$RSW" record -q -i 10ms -d 500ms --db "$DB" -p "$STALE"
	check "pid reuse: recording pid $STALE again: exit 0" test "$RC" -eq 0
	"$RSW" show --json --db "$DB" >"$T/reuse.json" 2>/dev/null
	"$RSW" export --format csv --db "$DB" >"$T/reuse.csv" 2>/dev/null
	check "pid reuse: the new process is not given the dead one's mark" \
		test "$(jget "$T/reuse.json" '$.marks')" = "[]"
	check "pid reuse: nor its gauge" eval "! grep -q stale_gauge '$T/reuse.csv'"
	touch "$T/reuse.go"
	finish "$REUSE"
else
	skip "pid reuse: the dead process's pid was taken by another process each time"
fi

# --- 8. a recorder killed while its command runs under --memory-limit ---------------
. tests/t/memcg.sh
CGD=$(memcg_dir)
if [ -n "$CGD" ] && [ -d "$CGD" ]; then
	# The command forks: both processes outlive the recorder in its cgroup.
	spawn cgrec "$RSW" record -q --memory-limit 64M --db "$DB" -- \
		"$HOG" +4M fork touch "$T/cg.ready" await "$T/cg.go"
	CGREC=$!
	at_exit "rmdir '$CGD/rsswatch-$CGREC' 2>/dev/null"	# should there be a failure
	wait_until 10 test -e "$T/cg.ready"
	LEFT=$(cat "$CGD/rsswatch-$CGREC/cgroup.procs" 2>/dev/null | tr '\n' ' ')
	kill -KILL "$CGREC"
	finish "$CGREC"
	check "killed recorder: its cgroup stays, with the command's processes in it" \
		test -n "$(cat "$CGD/rsswatch-$CGREC/cgroup.procs" 2>/dev/null)"
	expect_exit 0 "killed recorder: the next --memory-limit run works" \
		"$RSW" record -q --memory-limit 64M --db "$DB" -- "$HOG" exit 0
	check "killed recorder: the next start removes the abandoned cgroup" \
		test ! -d "$CGD/rsswatch-$CGREC"
	check "killed recorder: ... and says where its processes went" \
		grep -q "left in $CGD/rsswatch-$CGREC by a recorder that was killed moved to $CGD\$" "$ERR"
	mine=$(sed -n 's/^[0-9]*:[^:]*memory[^:]*:\(.*\)$/\1/p;s/^0::\(.*\)$/\1/p' /proc/self/cgroup | head -1)
	moved=0
	for p in $LEFT; do
		alive "$p" && grep -q ":$mine\$" "/proc/$p/cgroup" && moved=$((moved + 1))
	done
	check "killed recorder: the $(echo $LEFT | wc -w) processes still run, in the parent cgroup" \
		test "$moved" -eq "$(echo $LEFT | wc -w)" -a "$moved" -gt 0
	touch "$T/cg.go"
else
	skip "no memory cgroup controller: the cleanup after a killed recorder"
fi

# --- 9. squatting: another user takes the page name of a pid to come ---------------
# A pid some way ahead of the last one handed out, and free.
future_pid() {
	_p=$(( $(cat /proc/sys/kernel/ns_last_pid) + 300 ))
	while [ -e "/proc/$_p" ] || [ -e "$SHM/rsswatch.$_p" ]; do _p=$((_p + 1)); done
	echo "$_p"
}
# squat_case NAME HOW AS...: EVIL makes $SHM/rsswatch.PID (HOW: file or dir) for a
# future PID; then a victim run as AS... (empty: root) gets that pid and uses the
# library while root records it.
# shows_mark PID LABEL: the latest run is of PID and has that mark (the last case's run,
# with the same marks, must not stand for this one's).
shows_mark() {
	"$RSW" show --json --db "$DB" 2>/dev/null >"$T/shows.json" &&
		grep -qF "\"pid\":$1," "$T/shows.json" && grep -qF "\"label\":\"$2\"" "$T/shows.json"
}
squat_case() {
	_name=$1 _how=$2
	shift 2
	# The pid can be taken by another process before the victim gets it: try again
	# with another, a few times.
	for _try in 1 2 3 4 5; do
		_pid=$(future_pid)
		if [ "$_how" = dir ]; then
			$AS_EVIL mkdir "$SHM/rsswatch.$_pid"
		else
			$AS_EVIL "$HOSTILE" squat "$SHM/rsswatch.$_pid"
		fi
		spawn "$_name" "$HOSTILE" at "$_pid" "$@" "$HOSTILE" victim "$PUB/$_name.ready" \
			"$PUB/$_name.go" "$PUB/$_name.end"
		_at=$!
		wait_until 10 eval "test -e '$PUB/$_name.ready' || gone $_at"
		[ -e "$PUB/$_name.ready" ] && break
		finish "$_at"
		rm -rf "$SHM/rsswatch.$_pid"
	done
	if [ ! -e "$PUB/$_name.ready" ]; then
		skip "squatting ($_name): no free pid could be had for the victim"
		return
	fi
	spawn "$_name-rec" "$RSW" record -i 10ms -d 20s --db "$DB" -p "$_pid"
	_rec=$!
	# The second mark once the first is stored (or the wait gave up on it), the end
	# once the second is.
	wait_until 5 shows_mark "$_pid" "victim mark 1"
	touch "$PUB/$_name.go"
	wait_until 5 shows_mark "$_pid" "victim mark 2"
	touch "$PUB/$_name.end"
	finish "$_at"
	finish "$_rec"
	"$RSW" show --json --db "$DB" >"$T/$_name.json" 2>/dev/null
	check "squatting ($_name): the victim's library set up (rsw_init returned 0)" \
		grep -qx "init 0" "$T/$_name.out"
	check "squatting ($_name): both of the victim's marks are recorded" \
		eval "grep -q 'victim mark 1' '$T/$_name.json' && grep -q 'victim mark 2' '$T/$_name.json'"
	check "squatting ($_name): nothing of the squatter's page is" \
		eval "! grep -q squatted '$T/$_name.json'"
	check "squatting ($_name): the recorder warns that another user took the name" \
		grep -q "another user took the name of the shared page of pid $_pid" "$T/$_name-rec.err"
	grep -q "another user took" "$T/$_name-rec.err" || diag "$(cat "$T/$_name-rec.err")"
}
squat_case squat-file file $AS_VICTIM
squat_case squat-dir dir

# --- 11. a flood of marks: each one stored or counted lost, exactly once -------------
# Another user's program writes marks as fast as it can for 2 s (millions: the ring
# holds 256) while root records it at 10ms. At most 2,000 a second are stored (and
# 2,000 at once); the rest are said at once and then at most every 10 s, stored as one
# event, and with the marks stored they add up to the number written.
expect_exit 0 "a flood of marks for 2 s: exit 0" \
	"$RSW" record -q -i 10ms --db "$DB" -- $AS_EVIL "$HOSTILE" flood 2000
written=$(sed -n 's/^marks //p' "$OUT")
stored=$(sql "$DB" "SELECT count(*) FROM mark WHERE run_id = (SELECT max(id) FROM run)")
lost=$(sql "$DB" "SELECT substr(detail, 7, instr(detail, ' ') - 7) FROM event WHERE kind = 'marks_lost' AND run_id = (SELECT max(id) FROM run)")
diag "flood: $written marks written, $stored stored, $lost counted lost"
check "flood: more than 100,000 marks written ($written)" test "${written:-0}" -gt 100000
# (at least one full ring: a recorder starved on a loaded machine reads the ring less
# often, 1,210 were seen in CI and 3,916 at load 8; never above the rate and the burst)
check "flood: at least a ring, at most 2,000 a second and a burst of 2,000 ($stored for 2 s)" \
	test "$stored" -ge 256 -a "$stored" -le 6600
check "flood: stored + counted lost = written ($stored + $lost = $written)" \
	test $((stored + ${lost:-0})) -eq "${written:-0}"
check "flood: the losses said in at most 2 lines" test "$(grep -c 'marks of pid .* were not stored' "$ERR")" -le 2
check "flood: the stored event tells the overrun from the rate limit" \
	test "$(sql "$DB" "SELECT count(*) FROM event WHERE kind = 'marks_lost' AND detail GLOB 'count=* overrun=* over_rate=*'")" -ge 1
check "flood: no rows dropped by the store" sh -c '! grep -q "rows dropped" "$1"' - "$ERR"
expect_exit 0 "flood: show" "$RSW" show --db "$DB"
check "flood: show lists 52 marks and counts the rest in one line" \
	test "$(grep -c '  flood [0-9]*$' "$OUT")" -eq 52 -a "$(grep -c "^  \.\.\. and $((stored - 52)) more marks" "$OUT")" -eq 1
expect_exit 0 "flood: show --events" "$RSW" show --events --db "$DB"
check "flood: show --events lists every mark ($stored)" test "$(grep -c '  flood [0-9]*$' "$OUT")" -eq "$stored"
check "flood: show --events lists the marks_lost event" grep -q "marks_lost.*count=$lost " "$OUT"

done_testing
