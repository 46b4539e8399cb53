#!/bin/sh
# record --on-oom / --on-warn: the command runs once per event, with the event's facts in
# RSSWATCH_* variables only; its exit status is a "hook" event; one that outlives
# --on-timeout is ended; a hostile process name reaches it only as RSSWATCH_COMM.
# The OOM part needs root and a memory cgroup controller. Prints TAP.
. tests/t/lib.sh
. tests/t/memcg.sh

hook_events() { grep -o '"kind":"hook","pid":[0-9]*,"detail":"[^"]*"' "$T/show.json"; }

cgdir=$(memcg_dir)
if [ "$(id -u)" -eq 0 ] && [ -n "$cgdir" ] && [ -d "$cgdir" ]; then
	run "$RSW" record -q -i 50ms --memory-limit 64M \
		--on-oom "env >>'$T/oom.env'; exit 7" -- "$HOG" +256M
	check "the command is OOM-killed (exit 137)" test "$RC" -eq 137
	show_json
	check "the outcome is oom_killed" test "$(sfield outcome)" = oom_killed
	check "the hook ran once" test "$(grep -c '^RSSWATCH_EVENT=' "$T/oom.env")" -eq 1
	check "RSSWATCH_EVENT=oom_kill" grep -qx 'RSSWATCH_EVENT=oom_kill' "$T/oom.env"
	check "RSSWATCH_PID is the killed process" grep -qx "RSSWATCH_PID=$(sfield pid)" "$T/oom.env"
	check "RSSWATCH_RUN is the run" grep -qx "RSSWATCH_RUN=$(sfield id)" "$T/oom.env"
	check "RSSWATCH_LIMIT_BYTES is the cgroup limit" grep -qx 'RSSWATCH_LIMIT_BYTES=67108864' "$T/oom.env"
	check "RSSWATCH_RSS_BYTES is the kernel's figure" grep -qE '^RSSWATCH_RSS_BYTES=[1-9][0-9]{6,}$' "$T/oom.env"
	check "RSSWATCH_COMM=memhog" grep -qx 'RSSWATCH_COMM=memhog' "$T/oom.env"
	check "RSSWATCH_DB is the database" grep -qx "RSSWATCH_DB=$RSSWATCH_DB" "$T/oom.env"
	check "one hook event, with the exit status" \
		test "$(hook_events | grep -c 'on=oom event=oom_kill status=7 ms=[0-9]*"$')" -eq 1

	# Both at once, on a target that grows into its limit: warn_eta first, then the kill.
	run "$RSW" record -q -i 100ms --memory-limit 64M --warn-eta 5s \
		--on-warn "env >>'$T/eta.env'" --on-oom "env >>'$T/oom2.env'" -- "$HOG" grow 256M 8M
	show_json
	check "growing: OOM-killed" test "$(sfield outcome)" = oom_killed
	check "--on-warn ran once, for warn_eta" \
		test "$(grep -c '^RSSWATCH_EVENT=' "$T/eta.env")" -eq 1 -a \
		"$(grep -c '^RSSWATCH_EVENT=warn_eta$' "$T/eta.env")" -eq 1
	check "--on-oom ran once" test "$(grep -c '^RSSWATCH_EVENT=oom_kill$' "$T/oom2.env")" -eq 1
	check "two hook events" test "$(hook_events | wc -l)" -eq 2
else
	skip "--on-oom: needs root and a memory cgroup controller"
fi

# A command that outlives --on-timeout gets SIGTERM; one that ignores it, SIGKILL.
run "$RSW" record -q -i 20ms --warn 10M --on-warn "sleep 30 # $T" --on-timeout 200ms \
	-- "$HOG" +20M sleep 100ms
check "record exits 0" test "$RC" -eq 0
show_json
check "the hook timed out: SIGTERM" \
	sh -c "grep -o '\"kind\":\"hook\"[^}]*' '$T/show.json' | grep -q 'on=warn event=warn status=timeout signal=15 ms='"
check "one warn event, one hook" test "$(hook_events | wc -l)" -eq 1

# Sampling goes on while a command runs: a 1 s command from the first samples on, and a
# target that lives 600 ms sampled every 20 ms.
run "$RSW" record -q -i 20ms --warn 1M --on-warn "sleep 1 # $T" -- "$HOG" +20M sleep 600ms
show_json
check "samples were taken while the command ran (>= 20)" test "$(sfield samples)" -ge 20
check "the command ended normally, after the target" \
	sh -c "grep -o '\"kind\":\"hook\"[^}]*' '$T/show.json' | grep -q 'on=warn event=warn status=0 ms=1[0-9][0-9][0-9]\"'"

run "$RSW" record -q -i 20ms --warn 10M --on-warn "trap '' TERM; sleep 30 # $T" \
	--on-timeout 200ms -- "$HOG" +20M sleep 100ms
show_json
check "a hook that ignores SIGTERM gets SIGKILL" \
	sh -c "grep -o '\"kind\":\"hook\"[^}]*' '$T/show.json' | grep -q 'status=timeout signal=9 ms='"

# A name made to be run by a shell, if anyone put it in one: it must not run.
mkdir "$T/bin" "$T/cwd"
nl='
'
evil="q\$(touch p)$nl;'\""
cp "$HOG" "$T/bin/$evil"
(cd "$T/cwd" && "$RSW" record -q -i 20ms --warn 10M \
	--on-warn "printf '%s' \"\$RSSWATCH_COMM\" >'$T/comm'; echo \$RSSWATCH_EVENT >'$T/event'" \
	-- "$T/bin/$evil" +20M sleep 100ms) >"$OUT" 2>"$ERR"
RC=$?
check "record exits 0 (hostile name)" test "$RC" -eq 0
check "the hook ran for the warn event" grep -qx warn "$T/event"
check "RSSWATCH_COMM holds the name's shell syntax, as text" grep -qF 'q$(touch p)' "$T/comm"
check "nothing in the name was run" test ! -e "$T/cwd/p"
check "nothing in the name was run (hook's directory)" test ! -e p

expect_exit 2 "--on-warn without --warn: usage error" "$RSW" record --on-warn true -- true
expect_exit 2 "--on-timeout 0: usage error" "$RSW" record --on-oom true --on-timeout 0 -- true
done_testing
