#!/bin/sh
# rsswatch as root beside another user who means harm, part two: files that user can
# put where root writes or reads. FIFOs at -o names; a database whose schema version
# is negative; a symlink flipped under the database's directories while root makes
# them; a reader holding a snapshot of a shared database; process names that are
# spreadsheet formulas; too few descriptors; cgroup paths with "..". The other user is
# a numeric uid with no account (setpriv needs none). Needs root; prints TAP.
. tests/t/lib.sh

HOSTILE=${HOSTILE:-$BUILD/tests/bin/hostile}
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null 2>&1; then
	echo "1..0 # SKIP needs root and setpriv"
	exit 0
fi

. tests/t/hostile.sh
need_uids 61270

# The host this was written against lets root open another user's FIFO and follow
# another user's symlink in a sticky directory; the tests ask for the same, and put the
# settings back at the end.
for _k in protected_fifos protected_symlinks; do
	_v=$(cat "/proc/sys/fs/$_k" 2>/dev/null) || continue
	[ "$_v" = 0 ] && continue
	echo 0 >"/proc/sys/fs/$_k" && at_exit "echo $_v >/proc/sys/fs/$_k"
done

PUB="$T/pub"
mkdir -m 1777 "$PUB"
chmod 1777 "$PUB"
DB="$T/db/rsswatch.db"
"$RSW" record -q --db "$DB" -- "$HOG" +1M exit 0 >/dev/null 2>&1

# --- 1. -o: another user's FIFO, never written into -----------------------------------
# With a reader: the report would go to that user. Root then opens the FIFO itself, as
# a writer, to let the reader end.
fifo_read() {	# fifo_read NAME: a FIFO of the other user's at $PUB/NAME, read into $PUB/NAME.got
	$AS_EVIL mkfifo -m 666 "$PUB/$1"
	spawn "fifo-$1" $AS_EVIL sh -c 'exec cat "$1" >"$1.got"' - "$PUB/$1"
	READER=$!
}
fifo_read r.html
expect_exit 1 "-o: report into another user's FIFO with a reader: refused" \
	"$RSW" report --db "$DB" -o "$PUB/r.html"
check "-o: ... the message names the path and says FIFO" grep -q "$PUB/r.html.*FIFO" "$ERR"
# (the old code's reader has ended already: nobody would open the FIFO to read)
timeout 5 sh -c ': >"$1"' - "$PUB/r.html"
finish "$READER" 10
check "-o: ... the reader got nothing" test ! -s "$PUB/r.html.got"

# Without a reader: the writer must not wait for one.
$AS_EVIL mkfifo -m 666 "$PUB/e.csv"
LIMIT=10 expect_exit 1 "-o: export into another user's FIFO, no reader: refused at once" \
	"$RSW" export --db "$DB" --format csv -o "$PUB/e.csv"
$AS_EVIL mkfifo -m 666 "$PUB/p.svg"
LIMIT=10 expect_exit 1 "-o: plot into a FIFO: refused" "$RSW" plot last --db "$DB" -o "$PUB/p.svg"
mkfifo -m 600 "$T/own.html"
LIMIT=10 expect_exit 1 "-o: report into root's own FIFO: refused too" \
	"$RSW" report --db "$DB" -o "$T/own.html"
# model -o draws the runs: three runs with a parameter
for n in 1 2 3; do
	"$RSW" record -q --db "$DB" --param n=$n -- "$HOG" +${n}M exit 0 >/dev/null 2>&1
done
$AS_EVIL mkfifo -m 666 "$PUB/m.svg"
LIMIT=10 expect_exit 1 "-o: model into a FIFO: refused" \
	"$RSW" model 'peak ~ n' --db "$DB" -o "$PUB/m.svg"
$AS_EVIL mkfifo -m 666 "$PUB/c.html"
LIMIT=10 expect_exit 1 "-o: compare into a FIFO: refused" \
	"$RSW" compare 2 3 --db "$DB" -o "$PUB/c.html"

# What stays: /dev/null, standard output as - and /dev/stdout, and new files, now 0600.
expect_exit 0 "-o /dev/null: written" "$RSW" export --db "$DB" --format csv -o /dev/null
expect_exit 0 "-o -: export to standard output" sh -c \
	'cd "$1" && exec "$2" export --db "$3" --format csv -o -' - "$T" "$RSW" "$DB"
check "-o -: ... the rows are on standard output, no file named -" \
	sh -c 'grep -q "^time," "$1" && test ! -e "$2/-"' - "$OUT" "$T"
expect_exit 0 "-o /dev/stdout: report" "$RSW" report --db "$DB" -o /dev/stdout
check "-o /dev/stdout: ... on standard output" grep -q "<html" "$OUT"
umask 022
"$RSW" report --db "$DB" -o "$T/new.html" 2>/dev/null
"$RSW" export --db "$DB" --format csv -o "$T/new.csv" 2>/dev/null
check "-o: a new report is 0600 ($(stat -c %a "$T/new.html" 2>/dev/null))" \
	test "$(stat -c %a "$T/new.html" 2>/dev/null)" = 600
check "-o: a new export is 0600 ($(stat -c %a "$T/new.csv" 2>/dev/null))" \
	test "$(stat -c %a "$T/new.csv" 2>/dev/null)" = 600

# --- 2. a negative schema version: refused as corrupt, no crash ----------------------
for v in -1 -5 -2147483648; do
	cp "$DB" "$T/neg.db"
	sql "$T/neg.db" "PRAGMA user_version = $v"
	expect_exit 1 "schema version $v: ls refuses it" "$RSW" ls --db "$T/neg.db"
	check "schema version $v: ... as corrupt, in one line" \
		sh -c 'test "$(wc -l <"$1")" -eq 1 && grep -q "corrupt.*$2" "$1"' - "$ERR" "$v"
	expect_exit 125 "schema version $v: record refuses it" \
		"$RSW" record -q --db "$T/neg.db" -- "$HOG" exit 0
	check "schema version $v: ... nothing ran as SQL" test "$(sql "$T/neg.db" \
		"SELECT count(*) FROM run")" = "$(sql "$DB" "SELECT count(*) FROM run")"
done
sql "$T/neg.db" "PRAGMA user_version = 1000"
expect_exit 1 "schema version 1000: newer than this rsswatch" "$RSW" ls --db "$T/neg.db"
check "schema version 1000: ... says so" grep -q "newer than this rsswatch" "$ERR"

# --- 3. the database's directories, made while another user flips a symlink ----------
# $PUB/x is, in turn, nothing, a symlink to a private directory of root's, nothing, and
# a symlink to a directory of the other user's. Root makes $PUB/x/sub/deeper for its
# database, again and again; nothing may ever be made inside the private directory
# (nor in the other user's). A directory $PUB/x that root made itself ends the other
# user's game (they cannot remove it from the sticky $PUB): it is removed after each try.
# (--db makes no directories; $RSSWATCH_DB, as the default place, does.)
mkdir -m 700 "$T/private"
$AS_EVIL mkdir -m 755 "$PUB/theirs"
if [ -x "$HOSTILE" ]; then
	spawn flip $AS_EVIL "$HOSTILE" flip "$PUB/x" "$T/private" "$PUB/theirs" "$PUB/flip.ready"
	FLIP=$!
	wait_until 10 test -e "$PUB/flip.ready"
	made=0 bad=0 tries=${RACE_TRIES:-1000}
	for i in $(seq "$tries"); do
		env RSSWATCH_DB="$PUB/x/sub/deeper/r.db" "$RSW" record -q --no-cgroup -- true \
			>/dev/null 2>&1 &&
			made=$((made + 1))
		if [ -n "$(ls -A "$T/private")" ] || [ -n "$(ls -A "$PUB/theirs")" ]; then
			bad=$((bad + 1))
			[ "$bad" -eq 1 ] && diag "try $i: made $(ls -A "$T/private" "$PUB/theirs" | tr '\n' ' ')"
			rm -rf "$T/private/"* "$PUB/theirs/"*
		fi
		[ -d "$PUB/x" ] && [ ! -L "$PUB/x" ] && rm -rf "$PUB/x"
	done
	kill -KILL "$FLIP" 2>/dev/null
	diag "$tries tries: $made databases made in root's own directories, $bad elsewhere"
	check "dirs: $tries tries against a flipping symlink: nothing made in the private or the other user's directory ($bad)" \
		test "$bad" -eq 0
else
	skip "dirs: needs $HOSTILE"
fi

# --- 4. a reader of a shared database holds a snapshot while root records -------------
# The other user may read the database (0644 in a 0755 directory) and keeps a read
# transaction open. Root fills the WAL past its bound (4.1 MB: 1000 pages) with rows of
# its own, then records at 1 ms: the WAL must not grow further (by one batch at most)
# while the snapshot is held, the recorder says why once, and writes everything once
# the reader lets go.
PY=$(command -v /usr/bin/python3 || command -v python3)
mkdir -m 755 "$T/shared"
SDB="$T/shared/runs.db"
"$RSW" record -q --db "$SDB" -- "$HOG" exit 0 >/dev/null 2>&1
chmod 644 "$SDB"
spawn walrec "$RSW" record -q -i 1ms -d 15s --db "$SDB" -- "$HOG" +1M sleep 15s
WREC=$!
wait_until 10 test -s "$SDB-wal"
spawn reader $AS_EVIL "$PY" -c '
import os, sqlite3, sys, time
c = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True, isolation_level=None)
c.execute("BEGIN")
c.execute("SELECT count(*) FROM sample").fetchall()
open(sys.argv[2], "w").close()
end = time.time() + 60
while not os.path.exists(sys.argv[3]) and time.time() < end:
	time.sleep(0.05)
' "$SDB" "$PUB/reader.ready" "$T/reader.release"
READER=$!
if wait_until 10 test -e "$PUB/reader.ready"; then
	sql "$SDB" "CREATE TABLE junk (x); INSERT INTO junk SELECT randomblob(1000) FROM generate_series(1, 5000)"
	w0=$(stat -c %s "$SDB-wal")
	wmax=$w0
	end=$(( $(now_ms) + 8000 ))
	while [ "$(now_ms)" -lt "$end" ]; do	# measuring for 8 s, not waiting for something
		w=$(stat -c %s "$SDB-wal" 2>/dev/null || echo 0)
		[ "$w" -gt "$wmax" ] && wmax=$w
		sleep 0.1
	done
	: >"$T/reader.release"
	finish "$READER" 10
	finish "$WREC" 30
	diag "WAL: $w0 bytes after the filling, at most $wmax while the reader held its snapshot"
	check "wal: a held snapshot: the WAL grew by at most one batch (512 KiB: $w0 -> $wmax)" \
		test "$wmax" -le $((w0 + 524288))
	check "wal: ... the recorder said why, once" \
		test "$(grep -c "reached its bound.*a reader keeps it from being emptied" "$T/walrec.err")" -eq 1
	check "wal: ... and wrote again once the reader let go" \
		grep -q "writing to the database again" "$T/walrec.err"
	n=$(sql "$SDB" "SELECT count(*) FROM sample WHERE run_id = (SELECT max(id) FROM run)")
	check "wal: ... every sample stored ($n, at 1 ms for 15 s)" test "$n" -ge 10000
	w=$(stat -c %s "$SDB-wal" 2>/dev/null || echo 0)
	check "wal: ... and the WAL is back within its bound ($w)" test "$w" -le 4194304
else
	not_ok "wal: the reader began its transaction"
	kill -KILL "$WREC" "$READER" 2>/dev/null
fi

# --- 5. process names that are formulas: CSV cells as text ---------------------------
for name in "=cmd|'/c calc'!" "+SUM(1+1)" "@SUM(A1)" "-2+3"; do
	# the shell keeps the name to its end (its exit record says it, however late a
	# loaded machine's first sample comes): the workload is its child, not an exec
	"$RSW" record -q -i 10ms --db "$T/csv.db" -- sh -c \
		'printf "%s" "$1" >/proc/$$/comm; "$2" +1M sleep 100ms; exit 0' - "$name" "$HOG" \
		>/dev/null 2>&1
	"$RSW" export --db "$T/csv.db" --format csv --procs >"$T/procs.csv" 2>"$ERR"
	q=$(printf '%s' "$name" | sed 's/"/""/g')
	check "csv: a process named $name is one text cell \"'$name\"" \
		grep -qF ",\"'$q\"," "$T/procs.csv"
	check "csv: ... and never a bare cell" sh -c '! cut -d, -f5 "$1" | grep -q "^[-=+@]"' \
		- "$T/procs.csv"
done

# --- 6. too few descriptors: the real cause named, not --memory-limit -----------------
run sh -c 'ulimit -n 8 && exec "$@"' - "$RSW" record -q --db "$T/fd.db" -- "$HOG" exit 0
check "ulimit -n 8: record does not blame --memory-limit, which was not given" \
	sh -c '! grep -q -- "--memory-limit" "$1"' - "$ERR"
check "ulimit -n 8: ... it names the cause" grep -q "too few file descriptors\|too many open files" "$ERR"

# --- 6. -g: no "..", and only a directory on a cgroup file system ----------------------
# A plain directory that looks like a v1 memory cgroup, reached from the hierarchy by
# "..": another user could make such a tree and have root record figures of their choice.
mkdir -p "$T/fakecg"
echo 12345678 >"$T/fakecg/memory.usage_in_bytes"
: >"$T/fakecg/cgroup.procs"
up=$(printf '/..%.0s' 1 2 3 4 5 6 7 8 9 10)
expect_exit 1 "-g through '..' to a plain directory: refused" \
	"$RSW" record -q -d 10ms --db "$T/g.db" -g "$up$T/fakecg"
check "-g ..: ... said so" grep -q "'\.\.' component" "$ERR"

done_testing
