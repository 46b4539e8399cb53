#!/bin/sh
# rsswatch as root beside another user who goes for the recorder's time rather than its
# files: a page directory filled with names the recorder looks at, a page whose
# counters change at every read, marks from before the recording, a page name taken by
# the target's own user, a recorder that cannot keep up. Set up as t70 is (uids with no
# account, setpriv); the page directory is a sticky directory on /dev/shm's tmpfs, as
# the real one is. Needs root; prints TAP.
. tests/t/lib.sh

HOSTILE=${HOSTILE:-"$BUILD/tests/bin/hostile"}	# another build's helper may be given
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null 2>&1 || [ ! -x "$HOSTILE" ]; then
	echo "1..0 # SKIP needs root, setpriv and $HOSTILE"
	exit 0
fi

. tests/t/hostile.sh
need_uids 61370

PUB="$T/pub"
mkdir -m 1777 "$PUB"
chmod 1777 "$PUB"
SHM=$(mktemp -d /dev/shm/rsw-t77.XXXXXX 2>/dev/null) || SHM="$T/shm"
mkdir -p "$SHM"
chmod 1777 "$SHM"
case "$SHM" in /dev/shm/*) at_exit "rm -rf '$SHM'" ;; esac
RSSWATCH_SHM_DIR=$SHM
export RSSWATCH_SHM_DIR
DB="$T/db/rsswatch.db"
last_run() { sql "$DB" "SELECT max(id) FROM run"; }

# --- 1. /dev/shm filled with names the recorder would look at ------------------------
# The target does not use the library. Another user squats its page name, makes
# 100,000 files at its fallback names and changes the directory every 50 ms, so that a
# look for the page is never spared. Sampling at 10ms for 3 s must keep its pace.
spawn plain "$HOG" touch "$T/plain.ready" await "$T/plain.go"
PLAIN=$!
wait_until 10 test -e "$T/plain.ready"
spawn shmflood $AS_EVIL "$HOSTILE" shmflood "$PLAIN" 100000 "$PUB/shmflood.ready" "$PUB/shmflood.stop"
FLOOD=$!
wait_until 120 eval "test -e '$PUB/shmflood.ready' || gone $FLOOD"
if [ -e "$PUB/shmflood.ready" ]; then
	run "$RSW" record -i 10ms -d 3s --db "$DB" -p "$PLAIN"
	n=$(sql "$DB" "SELECT count(*) FROM sample WHERE run_id = $(last_run)")
	diag "/dev/shm flood: $n samples in 3 s at 10ms (300 asked)"
	check "/dev/shm flood: the recording ends normally (exit $RC)" test "$RC" -eq 0
	check "/dev/shm flood: sampling keeps its pace ($n of 300 samples, at least 150)" \
		test "$n" -ge 150
	check "/dev/shm flood: the squat is said once" \
		test "$(grep -c 'took the name of the shared page' "$ERR")" -eq 1
	check "/dev/shm flood: ... as another user's" \
		grep -q "another user took the name of the shared page of pid $PLAIN (a file of uid $EVIL)" "$ERR"
	check "/dev/shm flood: sampling is not said to fall behind" \
		sh -c '! grep -q "sampling fell behind" "$1"' - "$ERR"
	grep -q "took the name" "$ERR" || diag_run
else
	not_ok "/dev/shm flood: the other user made its 100,000 files"
	diag "$(cat "$T/shmflood.err")"
fi
touch "$PUB/shmflood.stop" "$T/plain.go"
finish "$FLOOD"
finish "$PLAIN"

# --- 2. the page name taken by the target's own user ---------------------------------
# The victim's user makes a directory at the victim's page name before it starts: the
# warning names the victim's own user, not "another user".
future_pid() {
	_p=$(( $(cat /proc/sys/kernel/ns_last_pid) + 300 ))
	while [ -e "/proc/$_p" ] || [ -e "$SHM/rsswatch.$_p" ]; do _p=$((_p + 1)); done
	echo "$_p"
}
# shows_mark PID LABEL: the latest run is of PID and has that mark.
shows_mark() {
	"$RSW" show --json --db "$DB" 2>/dev/null >"$T/shows.json" &&
		grep -qF "\"pid\":$1," "$T/shows.json" && grep -qF "\"label\":\"$2\"" "$T/shows.json"
}
for try in 1 2 3 4 5; do
	pid=$(future_pid)
	$AS_VICTIM mkdir "$SHM/rsswatch.$pid"
	spawn own "$HOSTILE" at "$pid" $AS_VICTIM "$HOSTILE" victim "$PUB/own.ready" \
		"$PUB/own.go" "$PUB/own.end"
	AT=$!
	wait_until 10 eval "test -e '$PUB/own.ready' || gone $AT"
	[ -e "$PUB/own.ready" ] && break
	finish "$AT"
	rm -rf "$SHM/rsswatch.$pid"
done
if [ -e "$PUB/own.ready" ]; then
	spawn own-rec "$RSW" record -i 10ms -d 20s --db "$DB" -p "$pid"
	REC=$!
	wait_until 10 shows_mark "$pid" "victim mark 1"
	touch "$PUB/own.go" "$PUB/own.end"
	finish "$AT"
	finish "$REC"
	check "own squat: the victim's mark is recorded from its fallback page" shows_mark "$pid" "victim mark 1"
	check "own squat: the warning names the target's own user" \
		grep -q "the target's own user took the name of the shared page of pid $pid (a directory of uid $VICTIM)" "$T/own-rec.err"
	check "own squat: ... and does not blame another user" \
		sh -c '! grep -q "another user" "$1"' - "$T/own-rec.err"
	grep -q "took the name" "$T/own-rec.err" || diag "$(cat "$T/own-rec.err")"
	rm -rf "$SHM/rsswatch.$pid"
else
	skip "own squat: no free pid could be had for the victim"
fi

# --- 3. a recorder that cannot keep up says so ----------------------------------------
# A recorder stopped (SIGSTOP) for 2.5 s at -i 10ms takes no sample where 250 are
# asked: once it runs again, one line says so, and the run holds an event.
spawn slow-target "$HOG" touch "$T/slow.ready" await "$T/slow.go"
SLOWT=$!
wait_until 10 test -e "$T/slow.ready"
spawn slow-rec "$RSW" record -q -i 10ms --db "$DB" -p "$SLOWT"
SLOWR=$!
samples_of() { sql "$DB" "SELECT coalesce(sum(samples), 0) FROM run WHERE pid = $1" 2>/dev/null; }
wait_until 10 eval "[ \"\$(samples_of $SLOWT)\" -gt 0 ]"
stopped() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | grep -q '^[tT]'; }
kill -STOP "$SLOWR"
wait_until 5 stopped "$SLOWR"
resume_at=$(( $(now_ms) + 2500 ))
wait_until 5 eval "[ \$(now_ms) -ge $resume_at ]"	# the stall itself, not a wait for it
kill -CONT "$SLOWR"
wait_until 10 grep -q "sampling fell behind" "$T/slow-rec.err"
kill -INT "$SLOWR"
finish "$SLOWR"
touch "$T/slow.go"
finish "$SLOWT"
check "behind: the recorder says that sampling fell behind" \
	grep -q "rsswatch: warning: sampling fell behind: .* samples in .* where .* were asked (every 10ms)" "$T/slow-rec.err"
check "behind: ... in one line" test "$(grep -c 'sampling fell behind' "$T/slow-rec.err")" -eq 1
check "behind: ... and the run holds an event" \
	test "$(sql "$DB" "SELECT count(*) FROM event WHERE kind = 'sampling_behind' AND run_id = $(last_run) AND detail GLOB 'asked=* taken=*'")" -eq 1
grep -q "fell behind" "$T/slow-rec.err" || diag "$(cat "$T/slow-rec.err")"

# --- 4. counters that change at every read --------------------------------------------
# Another user's program adds to 64 counters as fast as it can for 3 s while root
# records it at 1ms. Each counter is stored at most 10 times a second, its last value
# always: the rows and the database stay small, the final values exact.
expect_exit 0 "counter flood for 3 s at 1ms: exit 0" \
	"$RSW" record -q -i 1ms --db "$T/cflood.db" -- $AS_EVIL "$HOSTILE" counters 3000
CF="$T/cflood.db"
rows=$(sql "$CF" "SELECT count(*) FROM counter")
names=$(sql "$CF" "SELECT count(DISTINCT name) FROM counter")
secs=$(sql "$CF" "SELECT (ended_at - started_at) / 1000000000 + 1 FROM run")
bound=$(( 64 * (10 * secs + 2) ))
size=$(( $(stat -c %s "$CF") + $(stat -c %s "$CF-wal" 2>/dev/null || echo 0) ))
diag "counter flood: $rows rows for $names counters in about $secs s; database $size bytes"
check "counter flood: 64 counters stored" test "$names" -eq 64
check "counter flood: at most 10 rows a second each ($rows, bound $bound)" test "$rows" -le "$bound"
check "counter flood: the database stays below 1.5 MB ($size bytes)" test "$size" -lt 1500000
bad=0
while read -r _w name value; do
	got=$(sql "$CF" "SELECT value FROM counter WHERE name = '$name' ORDER BY elapsed_ns DESC LIMIT 1")
	[ "$got" = "$value" ] || { bad=$((bad + 1)); diag "$name: stored $got, last $value"; }
done <"$OUT"
check "counter flood: the last stored value of each is its final one" \
	test "$bad" -eq 0 -a "$(grep -c '^counter ' "$OUT")" -eq 64
check "counter flood: the coalescing is said once" \
	test "$(grep -c 'counters of pid .* changed more than 10 times a second' "$ERR")" -eq 1
check "counter flood: ... and stored as an event" \
	test "$(sql "$CF" "SELECT count(*) FROM event WHERE kind = 'counters_coalesced' AND detail GLOB 'coalesced=* stored=*'")" -eq 1

# --- 5. marks made before the recording began -----------------------------------------
# The victim marks, then root attaches: that mark is before the run's start, and show
# says so instead of placing it at +0ms.
spawn early $AS_VICTIM "$HOSTILE" victim "$PUB/early.ready" "$PUB/early.go" "$PUB/early.end"
EARLY=$!
if wait_until 10 test -e "$PUB/early.ready"; then
	expect_exit 0 "early mark: recording after the mark: exit 0" \
		"$RSW" record -q -i 10ms -d 500ms --db "$T/early.db" -p "$EARLY"
	"$RSW" show --db "$T/early.db" >"$T/early.txt" 2>&1
	"$RSW" show --json --db "$T/early.db" >"$T/early.json" 2>&1
	check "early mark: show gives it a negative offset" \
		grep -Eq '^  A -[0-9.]+m?s +.*victim mark 1$' "$T/early.txt"
	check "early mark: show --json gives it a negative elapsed_s" \
		test "$(sqlite3 :memory: "select json_extract(readfile('$T/early.json'), '\$.marks[0].elapsed_s') < 0")" = 1
	grep -q "victim mark 1" "$T/early.txt" && diag "$(grep 'victim mark 1' "$T/early.txt")"
else
	not_ok "early mark: the victim started"
fi
touch "$PUB/early.go" "$PUB/early.end"
finish "$EARLY"

done_testing
