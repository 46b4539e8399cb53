#!/bin/sh
# The smaller things a new user meets: ls on an empty database, mark without -p, a
# process id given as the command, --db in a directory that does not exist (the
# default state directory is still made), and make demo's log without escape codes.
. tests/t/lib.sh

DB=$RSSWATCH_DB
run "$RSW" ls
if [ "$RC" -eq 0 ] && [ "$(cat "$OUT")" = "no runs recorded yet" ]; then ok "ls without a database says there are no runs"
else not_ok "ls without a database says there are no runs"; diag_run; fi
run "$RSW" ls --json
check "ls --json without a database prints []" [ "$(cat "$OUT")" = "[]" ]
run "$RSW" record -q -- true
sql "$DB" "DELETE FROM run"
run "$RSW" ls
if [ "$RC" -eq 0 ] && [ "$(cat "$OUT")" = "no runs recorded yet" ]; then ok "ls on an empty database says there are no runs"
else not_ok "ls on an empty database says there are no runs"; diag_run; fi

# mark without -p: the one running recording
expect_exit 1 "mark without -p and nothing running fails" "$RSW" mark "stage 1"
check "... saying nothing is running" grep -q 'no recording is running to mark' "$ERR"
spawn rec1 "$RSW" record -q -i 20ms -- "$HOG" +1M sleep 30s "$T/one"
rec1=$!
wait_until 10 sh -c "[ \"\$(sqlite3 '$DB' \"SELECT count(*) FROM run WHERE outcome = 'running'\")\" = 1 ]"
run "$RSW" mark "stage 1"
id1=$(sql "$DB" "SELECT id FROM run WHERE outcome = 'running'")
if [ "$RC" -eq 0 ] && [ "$(sql "$DB" "SELECT label FROM mark WHERE run_id = $id1")" = "stage 1" ]; then
	ok "mark without -p marks the one running recording"
else
	not_ok "mark without -p marks the one running recording"; diag_run
fi
spawn rec2 "$RSW" record -q -i 20ms -- "$HOG" +1M sleep 30s "$T/two"
rec2=$!
wait_until 10 sh -c "[ \"\$(sqlite3 '$DB' \"SELECT count(*) FROM run WHERE outcome = 'running'\")\" = 2 ]"
expect_exit 1 "mark without -p with two recordings running fails" "$RSW" mark "stage 2"
check "... naming them and asking for -p or --run" grep -q '^rsswatch: 2 recordings are running (runs .*): give -p PID or --run RUN$' "$ERR"
check "... and adds no mark" [ "$(sql "$DB" "SELECT count(*) FROM mark WHERE label = 'stage 2'")" = 0 ]
kill -INT "$rec1" "$rec2" 2>/dev/null
finish "$rec1"
finish "$rec2"

# a lone number as the command
expect_exit 127 "record 1234 fails as a command that is not found" "$RSW" record -q 1234
check "... with a hint to use -p" grep -q "to record process 1234, use 'rsswatch record -p 1234'" "$ERR"

# --db in a directory that does not exist: an error, and no directory made
expect_exit 125 "record --db in a missing directory fails" "$RSW" record -q --db "$T/no/such/x.db" -- true
check "... saying the directory does not exist" grep -q "the directory $T/no/such does not exist" "$ERR"
check "... and creates nothing" [ ! -e "$T/no" ]
# the default place is still made: ~/.local/state/rsswatch
mkdir -m 700 "$T/home"
run env -u RSSWATCH_DB -u XDG_STATE_HOME HOME="$T/home" "$RSW" record -q -- true
if [ "$RC" -eq 0 ] && [ -f "$T/home/.local/state/rsswatch/rsswatch.db" ]; then ok "the default state directory is still created"
else not_ok "the default state directory is still created"; diag_run; fi

# make demo's output, written to a file, has no escape codes
run env DEMO_DB="$T/demo.db" BUILD="$BUILD" sh examples/demo.sh
esc=$(printf '\033')
if [ "$RC" -eq 0 ] && grep -q '^== rsswatch ls$' "$OUT" && ! grep -q "$esc" "$OUT"; then
	ok "the demo's log has plain headings, no escape codes"
else
	not_ok "the demo's log has plain headings, no escape codes"; diag_run
fi
done_testing
