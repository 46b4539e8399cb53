#!/bin/sh
# rsswatch record -n PATTERN never picks rsswatch or one of its ancestors: a timeout,
# sudo or sh -c that started it carries the pattern in its own command line. A list of
# several matches shows no control characters. -p, -n and -g are each given once.
# Unlike t12, the patterns here are plain text, so that the wrappers do match them.
. tests/t/lib.sh

DB="$T/db/rsswatch.db"
tgt="pick_tgt_$$"
cp "$HOG" "$T/$tgt"
recording() { grep -q "recording pid $2 " "$T/$1.err" 2>/dev/null; }
waiting() { grep -q 'waiting for a process' "$T/$1.err" 2>/dev/null; }
no_match() { grep -q "no process matches '$1'" "$ERR"; }
recorded() { show_json && test "$(sfield mode) $(sfield pid)" = "name $1"; }

# --- nothing else matches: the wrapper is not taken for the target (-d 2s: were it
# taken, the wrong recording would end soon, with status 0)
pat="zz_pick_none_$$"
expect_exit 1 "under timeout: no process matches (exit 1)" \
	timeout 20 "$RSW" record -q -d 2s --db "$DB" -n "$pat"
check "under timeout: says no process matches" no_match "$pat"

expect_exit 1 "under sh -c: no process matches (exit 1)" \
	sh -c "\"$RSW\" record -q -d 2s --db \"$DB\" -n $pat; exit \$?"
check "under sh -c: says no process matches" no_match "$pat"

expect_exit 1 "under sh -c under timeout under sh -c: no process matches (exit 1)" \
	sh -c "timeout 20 sh -c '\"$RSW\" record -q -d 2s --db \"$DB\" -n $pat; exit \$?'; exit \$?"
check "under three wrappers: says no process matches" no_match "$pat"

if sudo -n true 2>/dev/null; then
	expect_exit 1 "under sudo: no process matches (exit 1)" \
		sudo -n "$RSW" record -q -d 2s --db "$DB" -n "$pat"
	check "under sudo: says no process matches" no_match "$pat"
else
	skip "under sudo: sudo cannot run without a password here"
	skip "under sudo: says no process matches"
fi

# --- a real target beside the wrapper: the target is picked
spawn hog "$T/$tgt" +2M await "$T/go" exit 0
hog=$!
wait_until 5 grep -q "$tgt" "/proc/$hog/cmdline"

expect_exit 0 "under timeout, with a target: records" \
	timeout 20 "$RSW" record -q -i 10ms -d 50ms --db "$DB" -n "$tgt"
check "under timeout: recorded the target $hog, not timeout" recorded "$hog"

expect_exit 0 "under sh -c, with a target: records" \
	sh -c "\"$RSW\" record -q -i 10ms -d 50ms --db \"$DB\" -n $tgt; exit \$?"
check "under sh -c: recorded the target $hog, not sh" recorded "$hog"

if sudo -n true 2>/dev/null; then
	expect_exit 0 "under sudo, with a target: records" \
		sudo -n "$RSW" record -q -i 10ms -d 50ms --db "$DB" -n "$tgt"
	check "under sudo: recorded the target $hog, not sudo" recorded "$hog"
else
	skip "under sudo, with a target: sudo cannot run without a password here"
	skip "under sudo: recorded the target"
fi
touch "$T/go"
finish "$hog" 10

# --- --wait under timeout: waits for the target instead of taking timeout at once
wpat="pick_wait_$$"
cp "$HOG" "$T/$wpat"
spawn rec timeout 20 "$RSW" record -i 10ms --db "$DB" --wait -n "$wpat"
rec=$!
if wait_until 10 waiting rec; then ok "--wait under timeout: waits"; else not_ok "--wait under timeout: waits"; fi
spawn hog "$T/$wpat" await "$T/go_w" exit 0
hog=$!
if wait_until 10 recording rec "$hog"; then
	ok "--wait under timeout: records the target $hog once it appears"
else
	not_ok "--wait under timeout: records the target $hog once it appears"
	diag "$(cat "$T/rec.err")"
fi
touch "$T/go_w"
finish "$hog" 10
finish "$rec"
check "--wait under timeout: rsswatch exits 0 (got $RC)" test "$RC" -eq 0

# --- several matches: the list on stderr carries no control characters
esc=$(printf '\033')
ename=$(printf 'pk\033[1m_%s' $$)
cp "$HOG" "$T/$ename"
spawn e1 "$T/$ename" await "$T/go_e" exit 0
e1=$!
spawn e2 "$T/$ename" await "$T/go_e" exit 0
e2=$!
wait_until 5 grep -q "pk" "/proc/$e1/comm"
wait_until 5 grep -q "pk" "/proc/$e2/comm"
expect_exit 2 "two matches with an escape in their names: exit 2" \
	"$RSW" record -q --db "$DB" -n "pk.\\[1m_$$"
check "the list names both pids" sh -c "grep -qw '$e1' '$ERR' && grep -qw '$e2' '$ERR'"
check "the list shows the escape as '?'" grep -qF "pk?[1m_$$" "$ERR"
check "no escape character reaches stderr" sh -c "! grep -qF '$esc' '$ERR'"
touch "$T/go_e"
finish "$e1" 10
finish "$e2" 10

# --- one target option, once
expect_exit 2 "-p twice: exit 2" "$RSW" record -q --db "$DB" -p 12 -p 34
check "-p twice: one line saying so" \
	sh -c "test \$(wc -l <'$ERR') -eq 1 && grep -q 'give -p once (got 12 and 34)' '$ERR'"
expect_exit 2 "--pid and -p: exit 2" "$RSW" record -q --db "$DB" --pid=12 -p 12
check "--pid and -p: says give -p once" grep -q 'give -p once' "$ERR"
expect_exit 2 "-n twice: exit 2" "$RSW" record -q --db "$DB" -n aa -n bb
check "-n twice: one line saying so" \
	sh -c "test \$(wc -l <'$ERR') -eq 1 && grep -q \"give -n once (got 'aa' and 'bb')\" '$ERR'"
expect_exit 2 "-g twice: exit 2" "$RSW" record -q --db "$DB" -g /a -g /b
check "-g twice: one line saying so" \
	sh -c "test \$(wc -l <'$ERR') -eq 1 && grep -q \"give -g once (got '/a' and '/b')\" '$ERR'"


# --- the start line names the target without its control characters
evil="$T/x$(printf '\033]0;OWNED\007')"
ln -s "$HOG" "$evil"
expect_exit 0 "a target whose name holds an escape: recorded" "$RSW" record --db "$DB" -i 50ms -- "$evil" sleep 100ms
check "the start line shows the name with '?'" grep -q "^rsswatch: recording pid [0-9]* (x?]0;OWNED?) " "$ERR"
check "no escape or bell character reaches stderr" sh -c "! grep -q '$(printf '[\033\007]')' '$ERR'"

done_testing
