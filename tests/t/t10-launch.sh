#!/bin/sh
# rsswatch record -- COMMAND: the command's status is passed through (128+N for a
# signal), signals to rsswatch reach the command, and launch failures get 126/127.
. tests/t/lib.sh

# --- exit status passed through
expect_exit 0 "command exiting 0: rsswatch exits 0" "$RSW" record -q -i 10ms -- "$HOG" exit 0
show_json
check "outcome exited, exit_code 0" test "$(sfield outcome) $(sfield exit_code)" = "exited 0"

expect_exit 3 "command exiting 3: rsswatch exits 3" "$RSW" record -q -i 10ms -- "$HOG" +4M exit 3
show_json
check "outcome exited, exit_code 3, signal null" \
	test "$(sfield outcome) $(sfield exit_code) $(sfield signal)" = "exited 3 "
check "summary on stderr says 'exited with 3'" grep -q '^outcome *exited with 3$' "$ERR"

expect_exit 255 "command exiting 255: rsswatch exits 255" "$RSW" record -q -- "$HOG" exit 255

# --- killed by a signal
expect_exit 137 "command killed by SIGKILL: rsswatch exits 137" \
	"$RSW" record -i 10ms -- "$HOG" +4M raise 9
check "summary says 'killed by SIGKILL'" grep -q '^outcome *killed by SIGKILL$' "$ERR"
show_json
check "outcome signaled, signal 9, exit_code null" \
	test "$(sfield outcome) $(sfield signal) $(sfield exit_code)" = "signaled 9 "
"$RSW" show >"$T/show.txt" 2>&1
check "show says 'killed by SIGKILL'" grep -q 'killed by SIGKILL' "$T/show.txt"

# --- signals to rsswatch reach the command
rm -f "$T/ready"
spawn rec "$RSW" record -q -i 10ms -- "$HOG" touch "$T/ready" await "$T/never"
rec=$!
if wait_until 10 test -e "$T/ready"; then
	kill -TERM "$rec"
	finish "$rec"
	if [ "$RC" -eq 143 ]; then ok "SIGTERM to rsswatch ends the command by SIGTERM: exit 143"
	else not_ok "SIGTERM to rsswatch ends the command by SIGTERM: exit 143"; diag "exit $RC"; cat "$T/rec.err" | sed 's/^/# /'; fi
else
	finish "$rec" 1
	not_ok "SIGTERM to rsswatch ends the command by SIGTERM: exit 143 (command never started)"
fi
show_json
check "after SIGTERM: outcome signaled, signal 15" test "$(sfield outcome) $(sfield signal)" = "signaled 15"

rm -f "$T/ready"
spawn rec "$RSW" record -q -i 10ms -- "$HOG" touch "$T/ready" await "$T/never"
rec=$!
wait_until 10 test -e "$T/ready"
kill -INT "$rec"
finish "$rec"
check "SIGINT to rsswatch ends the command by SIGINT: exit 130 (got $RC)" test "$RC" -eq 130

# A command that handles nothing special: its stdout is its own.
expect_exit 0 "a launched command's stdout passes through" "$RSW" record -q -- sh -c 'echo hello-from-child'
check "the command's output is on rsswatch's stdout" grep -qx 'hello-from-child' "$OUT"

# --- cannot launch
expect_exit 127 "command not found: exit 127" "$RSW" record -q -- "$T/no-such-command"
check "command not found: exactly one line on stderr" test "$(lines "$ERR")" -eq 1
check "command not found: the message names the command" grep -q "no-such-command.*not found" "$ERR"

expect_exit 127 "command not found in PATH: exit 127" "$RSW" record -q -- rsswatch-no-such-command-$$

printf '#!/bin/sh\nexit 0\n' >"$T/noexec"
chmod 644 "$T/noexec"
expect_exit 126 "a file without the x bit: exit 126" "$RSW" record -q -- "$T/noexec"
check "not executable: one line on stderr naming it" \
	sh -c "[ \$(wc -l <'$ERR') -eq 1 ] && grep -q noexec '$ERR'"

mkdir "$T/adir"
expect_exit 126 "a directory: exit 126" "$RSW" record -q -- "$T/adir"
check "a directory: one line on stderr" test "$(lines "$ERR")" -eq 1

"$RSW" ls --json >"$T/ls.json"
check "failed launches leave no run marked running or interrupted" \
	test "$(sqlite3 :memory: "select count(*) from json_each(readfile('$T/ls.json')) where json_extract(value, '$.outcome') in ('running', 'interrupted')")" = 0

# --- option parsing stops at the command
expect_exit 6 "record -- COMMAND ARGS: arguments after -- go to the command" \
	"$RSW" record -q -i 10ms -- "$HOG" +1M - exit 6
expect_exit 6 "record COMMAND ARGS without --: a '-' argument goes to the command" \
	"$RSW" record -q -i 10ms "$HOG" +1M - exit 6
expect_exit 7 "options after the command name are the command's own" \
	"$RSW" record -q -- sh -c 'exit 7' -q

# --- the stored run
expect_exit 0 "a command with a spaced argument runs" \
	"$RSW" record -q -i 10ms -l launch-test -- "$HOG" touch "$T/a b" sleep 300ms exit 0
check "the command ran with its argument intact" test -e "$T/a b"
show_json
check "run stored with mode 'command'" test "$(sfield mode)" = command
check "run target is the command line, quoted where needed" \
	test "$(sfield target)" = "$HOG touch '$T/a b' sleep 300ms exit 0"
check "run label stored" test "$(sfield label)" = launch-test
check "run pid is a process id" test "$(sfield pid)" -gt 1
check "run has at least one sample" test "$(sfield samples)" -ge 1

done_testing
