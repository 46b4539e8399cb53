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

# --- mark -p from inside a launched command: its pid, before the recorder stored it
expect_exit 0 "a launched script marks its own run with mark -p \$\$" "$RSW" record -q -- \
	sh -c '"$1" mark -p $$ first && "$1" mark -p $$ second && sh -c "\"\$1\" mark -p \$\$ deep" sh "$1"' sh "$RSW"
check "... the run holds first, second and its child's deep, in order" \
	[ "$(sql "$DB" "SELECT group_concat(label, ',') FROM (SELECT label FROM mark WHERE run_id = (SELECT max(id) FROM run) ORDER BY t)")" = "first,second,deep" ]
# record --db: the command's own rsswatch finds that database (RSSWATCH_DB)
run env -u RSSWATCH_DB HOME="$T/home" "$RSW" record -q --db "$T/other.db" -- \
	sh -c '"$1" mark -p $$ "in other"' sh "$RSW"
check "record --db: a mark -p from the command lands in that database (exit $RC)" \
	[ "$RC" -eq 0 -a "$(sql "$T/other.db" "SELECT label FROM mark")" = "in other" ]
expect_exit 1 "mark -p of a process no run records fails" "$RSW" mark -p $$ stray
check "... saying so" grep -q "no running recording of pid $$" "$ERR"

# --- a launched command's pid is in its run's row at once, not at the first batch
# (-i 1h: the second sample, and so the first batch of old, would be an hour away)
spawn pidrow "$RSW" record -q -i 1h -- sh -c 'echo $$ >"$1.tmp" && mv "$1.tmp" "$1"; while [ ! -e "$2" ]; do sleep 0.01; done' sh "$T/cmdpid" "$T/pidrow_go"
pidrow=$!
row_has_pid() {
	[ -s "$T/cmdpid" ] && [ "$(sql "$DB" "SELECT pid FROM run WHERE outcome = 'running'" 2>/dev/null)" = "$(cat "$T/cmdpid")" ]
}
if wait_until 30 row_has_pid; then ok "the running run's row holds the launched command's pid"
else not_ok "the running run's row holds the launched command's pid"
	diag "command $(cat "$T/cmdpid" 2>/dev/null), rows: $(sql "$DB" "SELECT id, pid, outcome FROM run" | tr '\n' ' ')"; fi
check "... with its first sample stored" [ "$(sql "$DB" "SELECT count(*) FROM sample WHERE run_id = (SELECT id FROM run WHERE outcome = 'running')")" -ge 1 ]
touch "$T/pidrow_go"
finish "$pidrow"

# --- a recorder killed outright loses at most its last 5 s batch (man page, FILES)
spawn killed "$RSW" record -q -i 100ms -- sh -c 'while [ ! -e "$1" ]; do sleep 0.05; done' sh "$T/killed_go"
killed=$!
kid=
run_age_ms() {	# elapsed ms of the running run, by the database's clock of its start
	sql "$DB" "SELECT (CAST(strftime('%s','now') AS INTEGER) * 1000 + CAST(substr(strftime('%f','now'), 4) AS INTEGER)) - started_at / 1000000 FROM run WHERE outcome = 'running'"
}
old_enough() { a=$(run_age_ms); [ -n "$a" ] && [ "$a" -ge 7500 ]; }
if wait_until 40 old_enough; then
	kid=$(sql "$DB" "SELECT id FROM run WHERE outcome = 'running'")
	age=$(run_age_ms)
	kill -KILL "$killed"
	finish "$killed"
	last=$(sql "$DB" "SELECT max(elapsed_ns) / 1000000 FROM sample WHERE run_id = $kid")
	diag "killed at +${age}ms, last stored sample at +${last}ms"
	check "a recorder killed at +${age}ms kept its samples up to 5 s before (+${last}ms)" \
		[ "${last:-0}" -ge $((age - 5000 - 600)) ]
	show_json "$kid"
	check "... and its run shows as interrupted" [ "$(sfield outcome)" = interrupted ]
else
	not_ok "a recorder killed at +7.5 s kept its samples up to 5 s before"
	diag "the run never reached +7.5 s"; skip "its run shows as interrupted"
fi
touch "$T/killed_go"

# --- small snags: --db before the verb, a mistyped --db, empty values
"$RSW" record -q -- true >/dev/null 2>&1
expect_exit 0 "rsswatch --db PATH ls: --db before the verb" env -u RSSWATCH_DB "$RSW" --db "$DB" ls
check "... lists that database's runs" grep -q 'exited with 0' "$OUT"
expect_exit 0 "rsswatch --db=PATH ls --json" env -u RSSWATCH_DB "$RSW" --db="$DB" ls --json
check "... the same runs" [ "$(sqlite3 :memory: "select json_array_length(readfile('$OUT'))")" = "$(sql "$DB" "SELECT count(*) FROM run")" ]
expect_exit 2 "rsswatch --db with no value is a usage error" "$RSW" --db
expect_exit 1 "ls --db naming no database fails" "$RSW" ls --db "$T/TYPO.db"
check "... saying there is no database there" grep -q "no database at $T/TYPO.db" "$ERR"
check "... and makes none" [ ! -e "$T/TYPO.db" ]
expect_exit 2 "record --db '' is refused" "$RSW" record -q --db '' -- true
check "... in one line" [ "$(lines "$ERR")" = 1 ]
expect_exit 2 "ls --db '' is refused" "$RSW" ls --db ''
expect_exit 2 "record -n '' is refused (it would match every process)" "$RSW" record -q -n ''
check "... saying the pattern is empty" grep -q 'non-empty pattern' "$ERR"

# --- model over a parameter no run has
"$RSW" record -q --param pw=1 -- true >/dev/null 2>&1
expect_exit 1 "model 'peak ~ nosuch' fails" "$RSW" model 'peak ~ nosuch'
check "... naming the parameter no run has" grep -q "no run has a parameter 'nosuch'" "$ERR"
expect_exit 1 "model with too few runs to fit fails after saying so" "$RSW" model 'peak ~ pw'
check "... on stdout" grep -q '^too few runs' "$OUT"

# --- -o names what it holds
expect_exit 2 "plot -o x.txt is refused" "$RSW" plot -o "$T/x.txt"
check "... saying which endings it takes, writing nothing" sh -c "grep -q 'end it in .svg or .png' '$ERR' && [ ! -e '$T/x.txt' ]"
expect_exit 2 "report -o x.txt is refused" "$RSW" report -o "$T/x.txt"
expect_exit 2 "model -o x.png is refused (it draws SVG)" "$RSW" model 'peak ~ pw' -o "$T/x.png"
if "$RSW" plot --help | grep -q png && "$RSW" plot -o "$T/t1.png" 2>/dev/null; then
	id=$(sql "$DB" "SELECT max(id) FROM run")
	"$RSW" plot --title "run $id" -o "$T/t2.png"
	check "a PNG plot without --title is titled with its run (as --title 'run $id')" cmp -s "$T/t1.png" "$T/t2.png"
	"$RSW" plot --title "something else" -o "$T/t3.png"
	check "... a title that the picture shows (another title, another picture)" sh -c "! cmp -s '$T/t1.png' '$T/t3.png'"
else
	skip "PNG titles: no PNG support in this build"; skip "PNG titles: another title"
fi

# --- compare: the last sample of targets that ended is no figure to compare
"$RSW" record -q -i 10ms -- "$HOG" +8M sleep 100ms exit 0 >/dev/null 2>&1
"$RSW" record -q -i 10ms -- "$HOG" +8M sleep 100ms exit 0 >/dev/null 2>&1
b=$(sql "$DB" "SELECT max(id) FROM run")
expect_exit 0 "compare two identical runs" "$RSW" compare $((b - 1)) "$b"
check "... their last samples get no percentage" sh -c "grep '^last ' '$OUT' | grep -qv '%'"
check "... their peaks do" sh -c "grep '^peak ' '$OUT' | grep -q '%'"
"$RSW" compare --json $((b - 1)) "$b" >"$T/cmp.json"
check "... in JSON too: last's pct is null" [ "$(jget "$T/cmp.json" '$.differences[0].last_rss_bytes.pct')" = "" ]

# --- GPUs watched, none of their memory used: no "gpu peak 0 B at +0ms"
sql "$DB" "UPDATE run SET peak_gpu = 0, peak_gpu_at = started_at WHERE id = $b"
"$RSW" show "$b" >"$T/nogpu.txt"
check "a run that used no GPU memory says so" grep -q '^gpu       no GPU memory used$' "$T/nogpu.txt"
check "... with no 'gpu peak 0 B'" sh -c "! grep -q '^gpu peak' '$T/nogpu.txt'"

# --- a build without its packages names them, before any compiler error
mkdir "$T/fakepc"
printf '#!/bin/sh\nfor a; do [ "$a" = libmicrohttpd ] && exit 1; done\nexec pkg-config "$@"\n' >"$T/fakepc/pkg-config.sh"
printf '#!/bin/sh\nPATH=%s exec sh %s "$@"\n' "$PATH" "$T/fakepc/pkg-config.sh" >"$T/fakepc/pkg-config"
chmod +x "$T/fakepc/pkg-config"
run env PATH="$T/fakepc:$PATH" make -s --no-print-directory BUILD="$T/fakebuild" "$T/fakebuild/src/cli/main.o"
check "make without libmicrohttpd-dev fails naming the package (exit $RC)" \
	sh -c "[ $RC -ne 0 ] && grep -q 'missing Debian packages: libmicrohttpd-dev' '$ERR' && ! grep -q 'error:' '$ERR'"

# make demo's output, written to a file, has no escape codes
run env DEMO_DB="$T/demo.db" BUILD="$BUILD" sh examples/demo.sh
esc=$(printf '\033')
if [ "$RC" -eq 0 ] && grep -q '^== rsswatch ls$' "$OUT" && ! grep -q "$esc" "$OUT"; then
	ok "the demo's log has plain headings, no escape codes"
else
	not_ok "the demo's log has plain headings, no escape codes"; diag_run
fi
# as root, the stacks of examples/scale (which calls nothing of rsswatch) name its table
# and its item buffers, and model says which grows with n
if [ "$(id -u)" = 0 ]; then
	check "the demo's stacks name the 64 MiB table and the item buffers" sh -c \
		"grep -Eq '^ +64\.0 MiB .* alloc_constraint_table\$' '$OUT' &&
		 grep -Eq '^ +64\.0 MiB .* 4  alloc_item_buffer\$' '$OUT'"
	check "  and model: the buffers grow by 16 MiB an item, the table stays flat" sh -c \
		"grep -Eq '^stack\[alloc_item_buffer\] = -?0 B \+ 16\.0 MiB × n' '$OUT' &&
		 grep -q '^no prediction: stack\[alloc_constraint_table\] does not grow with n' '$OUT'"
else
	skip "the demo's stacks (record --stacks needs root)"
	skip "  and model"
fi
done_testing
