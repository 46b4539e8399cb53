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

# A uid that no account and no process uses.
EVIL=
for u in $(seq 61070 61199); do
	getent passwd "$u" >/dev/null 2>&1 && continue
	[ -n "$(ps -o pid= -u "$u" 2>/dev/null)" ] && continue
	EVIL=$u
	break
done
if [ -z "$EVIL" ]; then
	echo "1..0 # SKIP no free uid in 61070..61199"
	exit 0
fi
# A command, not a function: a function run in the background is a subshell, and $!
# would be its pid instead of the command's.
AS_EVIL="setpriv --reuid=$EVIL --regid=$EVIL --clear-groups"

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
# stays); a process that does not use the library then gets the same pid.
spawn stale "$HOSTILE" stale "$T/stale.ready"
STALE=$!
wait_until 10 test -e "$T/stale.ready"
kill -KILL "$STALE"
finish "$STALE"
check "pid reuse: the killed process left its page" test -f "$SHM/rsswatch.$STALE"
spawn reuse "$HOSTILE" at "$STALE" "$HOG" touch "$T/reuse.ready" await "$T/reuse.go"
REUSE=$!
if wait_until 10 test -e "$T/reuse.ready"; then
	run "$RSW" record -q -i 10ms -d 500ms --db "$DB" -p "$STALE"
	check "pid reuse: recording pid $STALE again: exit 0" test "$RC" -eq 0
	"$RSW" show --json --db "$DB" >"$T/reuse.json" 2>/dev/null
	"$RSW" export --format csv --db "$DB" >"$T/reuse.csv" 2>/dev/null
	check "pid reuse: the new process is not given the dead one's mark" \
		test "$(jget "$T/reuse.json" '$.marks')" = "[]"
	check "pid reuse: nor its gauge" eval "! grep -q stale_gauge '$T/reuse.csv'"
else
	skip "pid reuse: pid $STALE was taken by another process before the test could"
	skip "pid reuse: (mark)"
	skip "pid reuse: (gauge)"
fi
touch "$T/reuse.go"
finish "$REUSE"

done_testing
