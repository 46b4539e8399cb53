#!/bin/sh
# Real OOM kills under `record --memory-limit`, told apart from a plain SIGKILL; the
# cgroup rsswatch makes is gone afterwards, also after SIGTERM. Needs root and a memory
# cgroup controller (v1 or v2); skipped otherwise. Prints TAP.
. tests/t/lib.sh
# The directory of this shell's memory cgroup: where rsswatch makes its child.
. "$(dirname "$0")/memcg.sh"
cgdir=$(memcg_dir)
if [ "$(id -u)" -ne 0 ] || [ -z "$cgdir" ] || [ ! -d "$cgdir" ]; then
	echo "1..0 # SKIP needs root and a memory cgroup controller"
	exit 0
fi
# A recorder's cgroup is rsswatch-PID, PID its own: one whose recorder has ended is
# left over; one whose recorder still runs is another recording's (another suite's,
# on a machine that runs several at once).
leftovers() {	# the cgroups rsswatch made whose recorder has ended
	for _d in "$cgdir"/rsswatch-[0-9]*; do
		[ -d "$_d" ] || continue
		kill -0 "${_d##*rsswatch-}" 2>/dev/null || echo "$_d"
	done
}
no_leftovers() { test -z "$(leftovers)"; }
anon_kb() {	# the anon-rss of the oom_kill event, in kB
	sed -n 's/.*"kind":"oom_kill","pid":[0-9]*,"detail":"anon_rss=\([0-9]*\)kB.*/\1/p' "$T/json"
}
anon_near_limit() {	# within 8 MiB below the 64 MiB limit (and not above it)
	kb=$(anon_kb)
	[ -n "$kb" ] && [ "$kb" -ge $((56 * 1024)) ] && [ "$kb" -le $((64 * 1024)) ]
}

# An OOM kill, three times: it must be seen every time.
for i in 1 2 3; do
	"$RSW" record -q --memory-limit 64M -i 50ms -- "$HOG" +256M >"$T/out" 2>"$T/err"
	rc=$?
	"$RSW" show --json >"$T/json"
	check "oom $i: exit status 137" test "$rc" -eq 137
	check "oom $i: outcome oom_killed, signal 9" \
		grep -q '"outcome":"oom_killed","exit_code":null,"signal":9' "$T/json"
	check "oom $i: an oom_kill event with the kernel's anon-rss near 64 MiB" anon_near_limit
	check "oom $i: the summary says OOM killer" grep -q '^outcome   killed by the OOM killer (memory cgroup /.*/rsswatch-[0-9]*) at ' "$T/err"
	check "oom $i: the cgroup is gone" no_leftovers
done
check "the run records its cgroup and limit" \
	grep -q '"cgroup":"/.*rsswatch-[0-9]*","cgroup_limit_bytes":67108864' "$T/json"
"$RSW" ls -n 1 >"$T/ls"
check "ls says OOM killer" grep -q 'killed by the OOM killer$' "$T/ls"
"$RSW" show >"$T/show"
check "show says OOM killer with anon-rss and peak" \
	grep -Eq '^outcome   killed by the OOM killer .* anon-rss [0-9.]+ MiB; peak [0-9.]+ MiB at ' "$T/show"
"$RSW" export --format csv >"$T/csv"
check "export has cgroup_bytes and cgroup_peak_bytes" \
	grep -q '^time,.*,cgroup_bytes,cgroup_peak_bytes' "$T/csv"

# A crash loop: a shell restarts a process that the OOM killer kills at once, 40
# times, each between two samples (every 1 s), under a limit small enough for a kill
# to come every few milliseconds. The kernel writes the context line (the cgroup's
# name) of at most ten reports in five seconds, but every kill line: each kill is
# counted and
# each of those processes ended OOM-killed, against two references taken by the
# workload itself: its cgroup's own oom_kill count (read before rsswatch removes the
# cgroup) and the kernel log's "Killed process PID" lines for the pids it started.
cat >"$T/loop.sh" <<'LOOP'
hog=$1 out=$2
if [ -d /sys/fs/cgroup/memory ]; then
	f=/sys/fs/cgroup/memory$(sed -n 's/^[0-9]*:[^:]*memory[^:]*:\(.*\)$/\1/p' /proc/self/cgroup | head -1)/memory.oom_control
else
	f=/sys/fs/cgroup$(sed -n 's/^0::\(.*\)$/\1/p' /proc/self/cgroup)/memory.events
fi
i=0
while [ $i -lt 40 ]; do
	"$hog" +64M &
	echo $! >>"$out/pids"
	wait $!
	i=$((i + 1))
done
sed -n 's/^oom_kill \([0-9]*\)$/\1/p' "$f" >"$out/cg_kills"
LOOP
# The kernel log is read as it comes, from before a mark to after another: a loop's
# reports can overwrite more than the ring holds, and dmesg starts at the last clear.
tag="rsswatch-t30-$$-$(date +%s%N)"
spawn kmsg cat /dev/kmsg
kmsg=$!
echo "$tag start" >/dev/kmsg
"$RSW" record -q --memory-limit 16M -- sh "$T/loop.sh" "$HOG" "$T" >"$T/out" 2>"$T/err"
rc=$?
echo "$tag end" >/dev/kmsg
wait_until 10 grep -q "$tag end" "$T/kmsg.out"
kill "$kmsg"
finish "$kmsg"
"$RSW" show --json >"$T/json"
"$RSW" show >"$T/show"
# the kernel's kill lines between the two marks, for the loop's pids
sed -n "/$tag start/,/$tag end/p" "$T/kmsg.out" |
	sed -n 's/.*Killed process \([0-9]*\) .*/\1/p' | sort >"$T/killed_all"
sort "$T/pids" | join - "$T/killed_all" >"$T/killed"
cg_kills=$(cat "$T/cg_kills" 2>/dev/null)
kern=$(lines "$T/killed")
# the run's processes ended OOM-killed, and those shown killed by a plain SIGKILL
sqlite3 :memory: "SELECT value->>'pid' FROM json_each(readfile('$T/json'), '\$.processes')
	WHERE value->>'ended' = 'oom_killed'" | sort >"$T/procs_oom"
sigkilled=$(sqlite3 :memory: "SELECT count(*) FROM json_each(readfile('$T/json'), '\$.processes')
	WHERE value->>'ended' = 'signaled' AND value->>'signal' = 9")
diag "crash loop: cgroup oom_kill $cg_kills, kernel lines $kern of $(lines "$T/pids") pids," \
	"oom_kills $(jget "$T/json" '$.oom_kills'), named $(jget "$T/json" '$.oom_kills_named')," \
	"processes OOM-killed $(lines "$T/procs_oom"), killed by SIGKILL $sigkilled"
check "crash loop: the loop ends 0" test "$rc" -eq 0
check "crash loop: the cgroup counted 40 OOM kills" test "$cg_kills" = 40
check "crash loop: the kernel log named each of the 40 pids" test "$kern" -eq 40
check "crash loop: oom_kills is the cgroup's count" test "$(jget "$T/json" '$.oom_kills')" = "$cg_kills"
check "crash loop: each kill is kept with the kernel's figures" \
	test "$(jget "$T/json" '$.oom_kills_named')" = "$kern"
check "crash loop: each pid the kernel killed ended OOM-killed" \
	sh -c 'join -v1 "$1" "$2" | grep -q . && exit 1; exit 0' - "$T/killed" "$T/procs_oom"
check "crash loop: none of them is shown as killed by SIGKILL" test "$sigkilled" -eq 0
[ "$sigkilled" -eq 0 ] ||
	diag "$(sqlite3 :memory: "SELECT value FROM json_each(readfile('$T/json'), '\$.processes')
		WHERE value->>'ended' = 'signaled'")"
check "crash loop: show counts the 40, all named" \
	grep -q '^outcome   exited with 0; 40 processes OOM-killed, the first' "$T/show"

# The same loop with the kernel log unread (RSSWATCH_NO_KMSG=1, as where it is not
# readable): as root, the engine's oom:mark_victim names every kill; without it
# (--no-bpf) only the cgroup's count is left. The kernel has the victims' names only
# where the engine ran; 40 of 40 in both is the cgroup's own count.
loop_unlogged() {
	rm -f "$T/pids" "$T/cg_kills"
	RSSWATCH_NO_KMSG=1 "$RSW" record -q --memory-limit 16M "$@" -- sh "$T/loop.sh" "$HOG" "$T" \
		>"$T/out" 2>"$T/err"
	rc=$?
	"$RSW" show --json >"$T/json"
	sort "$T/pids" >"$T/pids.s"
	sqlite3 :memory: "SELECT value->>'pid' FROM json_each(readfile('$T/json'), '\$.processes')
		WHERE value->>'ended' = 'oom_killed'" | sort >"$T/procs_oom"
	sigkilled=$(sqlite3 :memory: "SELECT count(*) FROM json_each(readfile('$T/json'), '\$.processes')
		WHERE value->>'ended' = 'signaled' AND value->>'signal' = 9")
	diag "unlogged loop $*: cgroup oom_kill $(cat "$T/cg_kills" 2>/dev/null)," \
		"oom_kills $(jget "$T/json" '$.oom_kills'), named $(jget "$T/json" '$.oom_kills_named')," \
		"OOM-killed $(lines "$T/procs_oom"), SIGKILL $sigkilled"
}
if [ "$(id -u)" = 0 ] && "$RSW" record -v -q -- true 2>&1 | grep -q "exact peaks from the kernel"; then
	loop_unlogged
	check "unlogged crash loop, engine: the cgroup counted 40" test "$(cat "$T/cg_kills")" = 40
	check "unlogged crash loop, engine: oom_kills 40, all 40 named" \
		test "$(jget "$T/json" '$.oom_kills')" = 40 -a "$(jget "$T/json" '$.oom_kills_named')" = 40
	check "unlogged crash loop, engine: each of the 40 pids ended OOM-killed" \
		sh -c 'join -v1 "$1" "$2" | grep -q . && exit 1; exit 0' - "$T/pids.s" "$T/procs_oom"
	check "unlogged crash loop, engine: none is shown as killed by SIGKILL" test "$sigkilled" -eq 0
	check "unlogged crash loop, engine: each kill has the kernel's figures and name" \
		test "$(sqlite3 :memory: "SELECT count(*) FROM json_each(readfile('$T/json'), '\$.events')
			WHERE value->>'kind' = 'oom_kill' AND value->>'detail' LIKE 'anon_rss=%comm=memhog'")" -ge 39
	loop_unlogged --no-bpf
	check "unlogged crash loop, --no-bpf: oom_kills is the cgroup's 40, none named" \
		test "$(jget "$T/json" '$.oom_kills')" = 40 -a "$(jget "$T/json" '$.oom_kills_named')" = 0
else
	skip "the unlogged crash loop needs the engine (root)"
fi

# A plain SIGKILL under the same limit is not an OOM kill.
"$RSW" record -q --memory-limit 64M -i 50ms -- "$HOG" +16M raise 9 >"$T/out" 2>"$T/err"
rc=$?
"$RSW" show --json >"$T/json"
check "kill -9: exit status 137" test "$rc" -eq 137
check "kill -9: outcome signaled" grep -q '"outcome":"signaled","exit_code":null,"signal":9' "$T/json"
check "kill -9: no oom_kill event" sh -c '! grep -q "\"kind\":\"oom_kill\"" "$1"' - "$T/json"
check "kill -9: no OOM kill counted" grep -q '"oom_kills":0,' "$T/json"
check "kill -9: the summary says SIGKILL" grep -q '^outcome   killed by SIGKILL$' "$T/err"
check "kill -9: the cgroup is gone" no_leftovers
# ... nor without a limit.
"$RSW" record -q -i 50ms -- "$HOG" +16M raise 9 >/dev/null 2>&1
"$RSW" show --json >"$T/json"
check "kill -9 without a limit: outcome signaled" grep -q '"outcome":"signaled"' "$T/json"

# The cgroup is sampled: usage and limit in the live line, peak per sample.
"$RSW" record --memory-limit 64M -i 20ms -- "$HOG" +24M sleep 200ms >"$T/out" 2>"$T/err"
check "a limited command that fits exits 0" test $? -eq 0
check "the live line shows the cgroup" grep -Eq ' cg [0-9.]+/64\.0 MiB ' "$T/err"
check "the summary shows the cgroup peak" grep -q '^cgroup    peak .* of a 64.0 MiB limit' "$T/err"
"$RSW" export --format jsonl >"$T/jsonl"
check "samples carry cgroup_bytes and cgroup_peak_bytes" \
	grep -Eq '"cgroup_bytes":[1-9][0-9]*,"cgroup_peak_bytes":[1-9]' "$T/jsonl"
check "the cgroup is gone after a normal exit" no_leftovers

# SIGTERM to rsswatch: passed on to the command, the cgroup removed.
rm -f "$T/ready"
"$RSW" record -q --memory-limit 64M -i 50ms -- "$HOG" +8M touch "$T/ready" sleep 30 \
	>/dev/null 2>"$T/err" &
rpid=$!
for _ in $(seq 1 500); do [ -e "$T/ready" ] && break; sleep 0.01; done
check "while recording, the cgroup exists" test -d "$cgdir/rsswatch-$rpid"
kill -TERM "$rpid"
wait "$rpid"
rc=$?
check "SIGTERM: rsswatch exits 143 (the command's status)" test "$rc" -eq 143
check "SIGTERM: the cgroup is gone" no_leftovers

# Usage errors and failures.
"$RSW" record --memory-limit 64M -p $$ >/dev/null 2>"$T/err"
check "--memory-limit without a command: usage error 2" test $? -eq 2
"$RSW" record --memory-limit lots -- true >/dev/null 2>"$T/err"
check "an invalid size: usage error 2" test $? -eq 2
if command -v setpriv >/dev/null 2>&1; then
	chmod 755 "$T"	# a database of its own, in a directory of its own
	mkdir "$T/nobody" && chown 65534:65534 "$T/nobody"
	RSSWATCH_DB="$T/nobody/runs.db" setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$RSW" record -q --memory-limit 64M -- "$HOG" +1M >/dev/null 2>"$T/err"
	rc=$?
	check "not root: exit 125" test "$rc" -eq 125
	check "not root: one line that says why" sh -c \
		'test "$(wc -l <"$1")" -eq 1 && grep -q "^rsswatch: --memory-limit 64.0 MiB: cannot create a memory cgroup in .*: permission denied" "$1"' - "$T/err"
fi
# A limit below what an exec needs: the command is killed while its exec loads, a few
# milliseconds after the launch, before the recording's first sample. The kill is
# still the OOM killer's, held against the kernel's own line for the pid.
for i in 1 2 3; do
	"$RSW" record -q --memory-limit 64K -i 100ms -- python3 -c 'print(1)' >"$T/out" 2>"$T/err"
	rc=$?
	"$RSW" show --json >"$T/json"
	vpid=$(jget "$T/json" '$.pid')
	check "killed in its exec $i: the kernel's log names pid $vpid" \
		sh -c 'dmesg | grep -q "Killed process $1 "' - "$vpid"
	check "killed in its exec $i: exit status 137 ($rc)" test "$rc" -eq 137
	check "killed in its exec $i: outcome oom_killed, one kill" test \
		"$(jget "$T/json" '$.outcome') $(jget "$T/json" '$.oom_kills')" = "oom_killed 1"
	# Killed before any figure of it reached the recorder (the usual case), or, on a
	# loaded machine where the exec is slower, after one did: the summary says "not
	# known" exactly when the run has no peak, and never a peak it did not measure.
	if [ -z "$(jget "$T/json" '$.peak_rss_at')" ]; then
		check "killed in its exec $i: no peak known, and the summary says so" \
			grep -q '^peak      not known' "$T/err"
	else
		check "killed in its exec $i: a figure reached the recorder, and the summary names it" \
			sh -c 'grep -q "^peak      [1-9]" "$1" && ! grep -q "not known" "$1"' - "$T/err"
	fi
done
check "no cgroup is left at the end" no_leftovers
done_testing
