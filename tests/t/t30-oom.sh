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
leftovers() {	# the cgroups rsswatch made that are still there
	ls -d "$cgdir"/rsswatch-[0-9]* 2>/dev/null
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
check "while recording, the cgroup exists" test -n "$(leftovers)"
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
check "no cgroup is left at the end" no_leftovers
done_testing
