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
free_uid() {	# free_uid FROM: the first free uid from FROM on, up to FROM + 99
	for _u in $(seq "$1" $(($1 + 99))); do
		getent passwd "$_u" >/dev/null 2>&1 && continue
		[ -n "$(ps -o pid= -u "$_u" 2>/dev/null)" ] && continue
		echo "$_u"
		return 0
	done
	return 1
}
EVIL=$(free_uid 61070)
VICTIM=$(free_uid 61170)
if [ -z "$EVIL" ] || [ -z "$VICTIM" ]; then
	echo "1..0 # SKIP no free uids in 61070..61269"
	exit 0
fi
# A command, not a function: a function run in the background is a subshell, and $!
# would be its pid instead of the command's.
AS_EVIL="setpriv --reuid=$EVIL --regid=$EVIL --clear-groups"
AS_VICTIM="setpriv --reuid=$VICTIM --regid=$VICTIM --clear-groups"

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
shows_mark() { "$RSW" show --json --db "$DB" 2>/dev/null | grep -qF "\"label\":\"$1\""; }
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
	wait_until 5 shows_mark "victim mark 1"
	touch "$PUB/$_name.go"
	wait_until 5 shows_mark "victim mark 2"
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

done_testing
