#!/bin/sh
# rsswatch record -n PATTERN: attach by name or command line, refuse zero or several
# matches unless told which, and --wait for a process to appear.
# Patterns are written hog_PID_[x]: they match the workload "hog_PID_x" but not their own
# text, so no process that merely carries the pattern in its arguments can match.
. tests/t/lib.sh

for s in a b c d e; do cp "$HOG" "$T/hog_$$_$s"; done
recording() { grep -q 'recording pid' "$T/$1.err" 2>/dev/null; }
waiting() { grep -q 'waiting for a process' "$T/$1.err" 2>/dev/null; }
# starttime (clock ticks since boot) of a process, field 22 of /proc/PID/stat
starttime() { sed 's/.*) //' "/proc/$1/stat" | cut -d' ' -f20; }
tick_after() { [ "$(sed 's/.*) //' /proc/self/stat | cut -d' ' -f20)" -gt "$1" ]; }

# --- exactly one match
spawn hog "$T/hog_$$_a" +4M await "$T/go_a" exit 0
hog=$!
wait_until 5 grep -q "hog_$$_a" "/proc/$hog/cmdline"
spawn rec "$RSW" record -i 10ms -n "hog_$$_[a]"
rec=$!
wait_until 10 recording rec
check "one match: rsswatch records pid $hog" grep -q "recording pid $hog " "$T/rec.err"
touch "$T/go_a"
finish "$hog" 10
finish "$rec"
check "one match: rsswatch exits 0 when the target exits (got $RC)" test "$RC" -eq 0
show_json
check "one match: run mode name, pid $hog, outcome exited 0" \
	test "$(sfield mode) $(sfield pid) $(sfield outcome) $(sfield exit_code)" = "name $hog exited 0"
check "one match: run target is the matched command line" \
	test "$(sfield target)" = "$T/hog_$$_a +4M await $T/go_a exit 0"

# --- the name (comm) alone matches: an anchored pattern that the full path cannot match
spawn hog "$T/hog_$$_d" await "$T/go_d" exit 0
hog=$!
wait_until 5 grep -q "hog_$$_d" "/proc/$hog/comm"
expect_exit 0 "a pattern anchored to the process name matches it" \
	"$RSW" record -q -i 10ms -d 50ms -n "^hog_$$_[d]\$"
show_json
check "anchored name pattern: recorded pid $hog" test "$(sfield pid)" = "$hog"
touch "$T/go_d"
finish "$hog" 10

# --- no match
expect_exit 1 "no process matches: exit 1" "$RSW" record -q -n "hog_$$_[z]"
check "no match: the message names the pattern" grep -q "no process matches 'hog_$$_\[z\]'" "$ERR"
expect_exit 1 "rsswatch does not match itself: exit 1" "$RSW" record -q -n "selfmatch_$$"

# --- two matches
spawn hog1 "$T/hog_$$_b" await "$T/go_b" exit 0
hog1=$!
wait_until 5 grep -q "hog_$$_b" "/proc/$hog1/cmdline"
st1=$(starttime "$hog1")
wait_until 5 tick_after "$st1"
spawn hog2 "$T/hog_$$_b" await "$T/go_b" exit 0
hog2=$!
wait_until 5 grep -q "hog_$$_b" "/proc/$hog2/cmdline"
"$RSW" ls --json >"$T/ls0.json"
expect_exit 2 "two processes match: exit 2" "$RSW" record -q -n "hog_$$_[b]"
check "two matches: both pids listed on stderr" \
	sh -c "grep -qw '$hog1' '$ERR' && grep -qw '$hog2' '$ERR'"
check "two matches: the message counts them" grep -q "2 processes match" "$ERR"
"$RSW" ls --json >"$T/ls1.json"
check "the refused ambiguous attach stored no run" cmp -s "$T/ls0.json" "$T/ls1.json"

expect_exit 0 "--newest picks one of two" "$RSW" record -q -i 10ms -d 50ms --newest -n "hog_$$_[b]"
show_json
check "--newest recorded the later process $hog2 (got $(sfield pid))" test "$(sfield pid)" = "$hog2"
expect_exit 0 "--oldest picks one of two" "$RSW" record -q -i 10ms -d 50ms --oldest -n "hog_$$_[b]"
show_json
check "--oldest recorded the earlier process $hog1 (got $(sfield pid))" test "$(sfield pid)" = "$hog1"
touch "$T/go_b"
finish "$hog1" 10
finish "$hog2" 10

# --- --wait: rsswatch first, the process later
spawn rec "$RSW" record -i 10ms --wait -n "hog_$$_[c]"
rec=$!
if wait_until 10 waiting rec; then ok "--wait: says it is waiting"; else not_ok "--wait: says it is waiting"; fi
check "--wait: still waiting while nothing matches" alive "$rec"
spawn hog "$T/hog_$$_c" +4M await "$T/go_c" exit 4
hog=$!
wait_until 10 recording rec
check "--wait: records the process once it appears" grep -q "recording pid $hog " "$T/rec.err"
touch "$T/go_c"
finish "$hog" 10
finish "$rec"
check "--wait: rsswatch exits 0 (got $RC)" test "$RC" -eq 0
show_json
check "--wait: run has pid $hog, outcome exited 4" \
	test "$(sfield pid) $(sfield outcome) $(sfield exit_code)" = "$hog exited 4"

# --wait interrupted before anything appears: ends, records nothing
"$RSW" ls --json >"$T/ls1.json"
spawn rec "$RSW" record -i 10ms --wait -n "hog_$$_[e]"
rec=$!
wait_until 10 waiting rec
kill -INT "$rec"
finish "$rec" 10
"$RSW" ls --json >"$T/ls2.json"
check "--wait ended by SIGINT: rsswatch ends with status 1 (got $RC)" test "$RC" -eq 1
check "--wait ended by SIGINT: no run stored" cmp -s "$T/ls1.json" "$T/ls2.json"

# --- bad patterns and options
expect_exit 2 "invalid regex '(': exit 2" "$RSW" record -q -n "("
check "invalid regex: the message names the pattern" grep -q "invalid pattern '('" "$ERR"
expect_exit 2 "invalid regex 'a[': exit 2" "$RSW" record -q -n "a["
expect_exit 2 "--newest without -n: exit 2" "$RSW" record -q --newest -p 1
expect_exit 2 "--wait without -n: exit 2" "$RSW" record -q --wait -- "$HOG" exit 0

done_testing
