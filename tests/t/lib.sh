# Shared helpers for the shell suites: sourced by tests/t/tNN-*.sh, which run from the
# repository root with BUILD set (default build). Every test prints one TAP line; the
# suite ends with the plan "1..N" and exits 1 when any test failed.
#
#   ok DESC / not_ok DESC / skip DESC      one TAP line each
#   check DESC CMD...                      ok when CMD succeeds
#   run CMD...                             CMD with stdout in $OUT, stderr in $ERR, its
#                                          status in $RC; killed after $LIMIT s (60)
#   expect_exit CODE DESC CMD...           run CMD; ok when its status is CODE
#   wait_until SECS CMD...                 poll CMD until it succeeds or SECS pass
#   spawn NAME CMD...                      CMD in the background ($!), output in
#                                          $T/NAME.out and $T/NAME.err
#   finish PID [SECS]                      wait for a background PID to end (killing it
#                                          after SECS), its status in $RC
#   jget FILE PATH                         a JSON value by sqlite3 json_extract
#   show_json [RUN] / sfield KEY           show --json into $T/show.json / a field of it
#
# Every process a suite starts carries the suite's temp dir $T in its command line (the
# database path, a file to await); on exit those that are still alive are killed by pid
# and $T is removed.
set -u

BUILD=${BUILD:-build}
TOP=$(pwd)
case "$BUILD" in /*) ;; *) BUILD="$TOP/$BUILD" ;; esac
RSW="$BUILD/rsswatch"
HOG="$BUILD/tests/bin/memhog"
LIMIT=${LIMIT:-60}
T=$(mktemp -d "${TMPDIR:-/tmp}/rsw-t.XXXXXX") || exit 1
chmod 755 "$T"
RSSWATCH_DB="$T/db/rsswatch.db"
export RSSWATCH_DB
# its directory exists, as suites also name it with --db (which makes no directories)
mkdir -m 700 "$T/db"
unset XDG_STATE_HOME
OUT="$T/out"
ERR="$T/err"
RC=0
_n=0
_failed=0
_cleanups=""
_bg=""

if [ ! -x "$RSW" ] || [ ! -x "$HOG" ]; then
	echo "not ok 1 - $RSW and $HOG are built (make && make $BUILD/tests/bin/memhog)"
	exit 1
fi

diag() { printf '%s\n' "$*" | sed 's/^/# /'; }

ok() { _n=$((_n + 1)); echo "ok $_n - $*"; }

not_ok() {
	_n=$((_n + 1))
	_failed=$((_failed + 1))
	echo "not ok $_n - $*"
}

skip() { _n=$((_n + 1)); echo "ok $_n - # SKIP $*"; }

# Shows what the last run printed, for a failed test.
diag_run() {
	diag "exit status $RC"
	[ -s "$OUT" ] && { diag "stdout:"; head -20 "$OUT" | sed 's/^/#   /'; }
	[ -s "$ERR" ] && { diag "stderr:"; head -20 "$ERR" | sed 's/^/#   /'; }
	return 0
}

check() {
	_desc=$1
	shift
	if "$@"; then ok "$_desc"; else not_ok "$_desc"; diag "failed: $*"; fi
}

now_ms() { date +%s%3N; }

wait_until() {
	_end=$(( $(now_ms) + $1 * 1000 ))
	shift
	until "$@"; do
		[ "$(now_ms)" -ge "$_end" ] && return 1
		sleep 0.01
	done
	return 0
}

# True when PID has ended: gone, or a zombie waiting for us to reap it.
gone() {
	_st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null) || return 0
	case "$_st" in Z*|X*|'') return 0 ;; esac
	return 1
}

alive() { ! gone "$1"; }

# spawn NAME CMD...: output in $T/NAME.out and $T/NAME.err
spawn() {
	_sn=$1
	shift
	"$@" >"$T/$_sn.out" 2>"$T/$_sn.err" </dev/null &
	_bg="$_bg $!"
}

# Where a process that should have ended is stuck: its threads' stacks (gdb where
# present, else the kernel's wait channels), for the log of a failed run.
hang_report() {
	if command -v gdb >/dev/null 2>&1; then
		timeout 30 gdb -q -batch -p "$1" -ex 'thread apply all bt 12' 2>/dev/null |
			grep -E '^(Thread|#)' | head -120 | while IFS= read -r _l; do diag "  $_l"; done
	fi
	for _t in /proc/"$1"/task/*; do
		diag "  task ${_t##*/}: $(cat "$_t/wchan" 2>/dev/null) $(cut -d' ' -f3 "$_t/stat" 2>/dev/null)"
	done
	# Its descendants, twice a second apart: whether what it waits for still works.
	for _pass in 1 2; do
		ps -e -o pid=,ppid=,stat=,time=,rss=,wchan:24=,comm= | awk -v root="$1" '
			{ pp[$1] = $2; line[$1] = $0 }
			END { for (p in line) { q = p; while (q in pp && q != root) q = pp[q]
				if (q == root && p != root) print line[p] } }' |
			while IFS= read -r _l; do diag "  child: $_l"; done
		[ "$_pass" = 1 ] && sleep 1
	done
	return 0
}

finish() {
	_fp=$1
	if ! wait_until "${2:-$LIMIT}" gone "$_fp"; then
		diag "pid $_fp still running after ${2:-$LIMIT}s: killed"
		hang_report "$_fp"
		kill -KILL "$_fp" 2>/dev/null
	fi
	wait "$_fp"
	RC=$?
	_bg=$(echo " $_bg " | sed "s/ $_fp / /")
}

run() {
	"$@" >"$OUT" 2>"$ERR" </dev/null &
	_bg="$_bg $!"
	finish $!
}

expect_exit() {
	_code=$1
	_d=$2
	shift 2
	run "$@"
	if [ "$RC" -eq "$_code" ]; then
		ok "$_d"
	else
		not_ok "$_d"
		diag "expected exit $_code: $*"
		diag_run
	fi
}

# Lines in a file (0 for a missing file).
lines() { if [ -f "$1" ]; then wc -l <"$1" | tr -d ' '; else echo 0; fi; }

jget() { sqlite3 :memory: "select json_extract(readfile('$1'), '$2')"; }

jvalid() { [ -s "$1" ] && [ "$(sqlite3 :memory: "select json_valid(readfile('$1'))")" = 1 ]; }

show_json() { "$RSW" show ${1:-last} --json >"$T/show.json" 2>"$T/show.err"; }

sfield() { jget "$T/show.json" "\$.$1"; }

# sql DB QUERY: a query against a run database.
sql() { sqlite3 "$1" "$2"; }

at_exit() { _cleanups="$_cleanups
$*"; }

_cleanup() {
	trap - EXIT INT TERM
	for _p in $_bg; do kill -KILL "$_p" 2>/dev/null; done
	for _p in /proc/[0-9]*; do
		_p=${_p#/proc/}
		[ "$_p" = "$$" ] && continue
		if { tr "\0" " " <"/proc/$_p/cmdline"; } 2>/dev/null | grep -qF "$T"; then
			kill -KILL "$_p" 2>/dev/null
		fi
	done
	eval "$_cleanups"
	rm -rf "$T"
}
trap '_cleanup' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# require_stacks: ends the suite where record --stacks cannot run: skipped without root,
# not ok (with the recorder's reason) where it fails as root.
require_stacks() {
	if [ "$(id -u)" != 0 ]; then
		skip "record --stacks needs root"
		done_testing
	fi
	if ! "$RSW" record -q --stacks -- true 2>"$ERR"; then
		sed 's/^/# /' "$ERR"
		not_ok "record --stacks runs as root here (kernel $(uname -r))"
		done_testing
	fi
}

done_testing() {
	echo "1..$_n"
	[ "$_failed" -eq 0 ]
	exit $?
}
