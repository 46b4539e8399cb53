#!/bin/sh
# Bad usage exits 2 with one line that names the problem, and touches no database;
# --help exits 0 with the usage on stdout.
. tests/t/lib.sh

# usage_err DESC ARGS...: exit 2, exactly one line on stderr, nothing on stdout
usage_err() {
	_ud=$1
	shift
	run "$RSW" "$@"
	if [ "$RC" -eq 2 ] && [ "$(lines "$ERR")" -eq 1 ] && [ ! -s "$OUT" ]; then
		ok "$_ud: exit 2 and one line"
	else
		not_ok "$_ud: exit 2 and one line"
		diag "rsswatch $*"
		diag_run
	fi
}

# --- intervals
for iv in 0 -1s 1x 99999h 0.5ms 0.999ms 3601s 61m "" 1e3 ms 1s1 " 1s" 1S; do
	usage_err "interval '$iv'" record -q -i "$iv" -- "$HOG" exit 0
	check "interval '$iv': the message names the value" grep -qF "interval '$iv'" "$ERR"
done
usage_err "--interval= with no value" record -q --interval= -- "$HOG" exit 0
usage_err "-i with no value" record -i

# --- durations
for d in 0 -5s abc 5x 1e2s; do
	usage_err "duration '$d'" record -q -d "$d" -- "$HOG" exit 0
	check "duration '$d': the message names the value" grep -qF "duration '$d'" "$ERR"
done

# --- targets and options
usage_err "record with no target" record
check "no target: the message asks for one" grep -q "give a target" "$ERR"
usage_err "record with -q only" record -q
usage_err "two targets: -p and a command" record -p 1 -- "$HOG" exit 0
usage_err "two targets: -p and -n" record -p 1 -n init
usage_err "two targets: -n and a command" record -n init "$HOG" exit 0
usage_err "unknown long option" record --bogus -p 1
check "unknown option: the message names it" grep -q -- "--bogus" "$ERR"
usage_err "unknown short option" record -Z -p 1
check "unknown short option: the message names it" grep -q -- "-Z" "$ERR"
usage_err "--every 0" record --every 0 -p 1
usage_err "--every -1" record --every -1 -p 1
usage_err "--every abc" record --every abc -p 1
usage_err "--oldest without -n" record --oldest -p 1

# --- other verbs
usage_err "ls -n 0" ls -n 0
usage_err "ls -n abc" ls -n abc
usage_err "ls with an argument" ls 3
usage_err "ls --bogus" ls --bogus
usage_err "show with two runs" show 1 2
usage_err "show --bogus" show --bogus
usage_err "export without --format" export
usage_err "export --format xml" export --format xml
check "export --format xml: the message names the format" grep -q "xml" "$ERR"
usage_err "export -o with no value" export --format csv -o
usage_err "rm without a run" rm
usage_err "unknown verb" frobnicate
check "unknown verb: the message names it" grep -q "frobnicate" "$ERR"

run "$RSW"
check "rsswatch with no arguments: exit 2 (got $RC)" test "$RC" -eq 2
check "rsswatch with no arguments: usage on stderr, nothing on stdout" \
	sh -c "grep -q '^usage: rsswatch' '$ERR' && [ ! -s '$OUT' ]"

check "no usage error created a database" test ! -e "$RSSWATCH_DB"

# --- help
for v in record ls show export rm; do
	expect_exit 0 "$v --help: exit 0" "$RSW" "$v" --help
	check "$v --help: usage on stdout, nothing on stderr" \
		sh -c "head -1 '$OUT' | grep -q '^usage: rsswatch $v' && [ ! -s '$ERR' ]"
done
expect_exit 0 "record -h: exit 0" "$RSW" record -h
check "record -h prints the usage" grep -q '^usage: rsswatch record' "$OUT"
expect_exit 0 "rsswatch --help: exit 0" "$RSW" --help
check "rsswatch --help lists every verb" \
	sh -c "for v in record ls show export rm; do grep -q \"^  \$v \" '$OUT' || exit 1; done"
check "--help created no database" test ! -e "$RSSWATCH_DB"

# --- the interval bounds are accepted
expect_exit 0 "interval 1ms accepted" "$RSW" record -q -i 1ms -- "$HOG" sleep 100ms exit 0
show_json
check "interval 1ms stored as 0.001 s (got $(sfield interval_s))" test "$(sfield interval_s)" = 0.001
check "interval 1ms over 100ms: at least 10 samples (got $(sfield samples))" test "$(sfield samples)" -ge 10
expect_exit 0 "interval 1h accepted, and the run ends with the command" \
	"$RSW" record -q -i 1h -- "$HOG" sleep 100ms exit 0
show_json
check "interval 1h stored as 3600 s" test "$(sfield interval_s)" = 3600
for iv in 3600s 60m 1.5s 250ms; do
	expect_exit 0 "interval $iv accepted" "$RSW" record -q -i "$iv" -- "$HOG" exit 0
done

done_testing
