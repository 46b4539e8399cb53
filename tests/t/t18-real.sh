#!/bin/sh
# Real programs nobody here wrote (python3, gcc, sort, stress-ng), each run once under
# /usr/bin/time (whose %M is wait4's ru_maxrss: the kernel's own peak, in KiB, of the
# largest single process) and once under `rsswatch record -i 1s`: the peaks must agree.
# Then an attach after an old peak (hwm_before, --reset-peak) and real OOM kills of a
# tree member, of a --no-tree command's child and of the last process of a -g cgroup.
# A missing program, no root or no memory cgroup controller skips what needs it.
. tests/t/lib.sh
. tests/t/memcg.sh

MiB=1048576
last="(SELECT max(id) FROM run)"
runcol() { sql "$RSSWATCH_DB" "SELECT $1 FROM run WHERE id = $last"; }
have() { command -v "$1" >/dev/null 2>&1; }
root=0
[ "$(id -u)" -eq 0 ] && root=1

# pct A B: how far A is from B, in tenths of a percent (A and B in the same unit).
pct() { [ "${2:-0}" -gt 0 ] 2>/dev/null && echo $(( (${1:-0} - $2) * 1000 / $2 )); }

# within LO HI A B: A lies within LO%..HI% of B (whole percents).
within() {
	_d=$(pct "$3" "$4") || return 1
	[ "$_d" -ge $(($1 * 10)) ] && [ "$_d" -le $(($2 * 10)) ]
}

# by_time CMD...: CMD under /usr/bin/time; its peak in KiB in $REF (empty on failure).
by_time() {
	rm -f "$T/time.txt"
	run /usr/bin/time -o "$T/time.txt" -f %M "$@"
	REF=$(tail -n 1 "$T/time.txt" 2>/dev/null)
	case "$REF" in '' | *[!0-9]*) REF= ;; esac
	[ "$RC" -eq 0 ] && [ -n "$REF" ] || { diag "/usr/bin/time $*: status $RC, peak '$REF'"; diag_run; REF=; }
}

# compare NAME LO HI CMD...: CMD under time, then under rsswatch; the run's peak must be
# within LO%..HI% of time's. The largest single process (peak_process_rss) is what time
# measures: it must be within 2%.
compare() {
	_name=$1 _lo=$2 _hi=$3
	shift 3
	by_time "$@"
	if [ -z "$REF" ]; then
		not_ok "$_name: runs under /usr/bin/time"
		return
	fi
	expect_exit 0 "$_name: recorded" "$RSW" record -q -i 1s -- "$@"
	_peak=$(runcol peak_rss)
	_proc=$(runcol peak_process_rss)
	_ref=$((REF * 1024))
	diag "$_name: time $REF KiB; rsswatch peak $((_peak / 1024)) KiB ($(runcol peak_source))," \
		"$(pct "$_peak" "$_ref")/1000; largest process $(runcol peak_process_comm)" \
		"$((${_proc:-0} / 1024)) KiB; cgroup $(( $(runcol 'coalesce(peak_cgroup, 0)') / 1024 )) KiB;" \
		"$(runcol samples) samples"
	check "$_name: peak $_peak B within $_lo%..+$_hi% of time's $_ref B" within "$_lo" "$_hi" "$_peak" "$_ref"
	check "$_name: largest process ${_proc:-none} B within 2% of time's $_ref B" \
		within -2 2 "${_proc:-0}" "$_ref"
}

if ! have /usr/bin/time; then
	skip "peaks beside /usr/bin/time: no /usr/bin/time (Debian package time)"
else
	# 1. 300 MiB in about 130 ms, all between two samples
	if have python3; then
		compare "python3 300 MiB" -2 2 python3 -c 'x = bytearray(300 << 20)'
	else
		skip "python3 300 MiB: no python3"
	fi

	# 2. a late spike in a child of a shell, between the samples at 1 s and 2 s
	if have python3; then
		compare "sh, then python3 500 MiB at 1.3 s" -2 2 \
			sh -c 'sleep 1.3; python3 -c "x = bytearray(500 << 20)"'
	else
		skip "late spike: no python3"
	fi

	# 3. gcc -O2 on a generated file: cc1 peaks near 150 MiB; the driver's own pages
	# add up with it in the run's total
	if have gcc; then
		awk 'BEGIN {
			printf "const int tab[] = {"
			for (i = 0; i < 600000; i++) printf "%d,", (i * 7919) % 100003
			print "};"
			for (i = 0; i < 300; i++)
				printf "int f%d(int a, int b) { int s = a; for (int k = 0; k < b; k++) " \
				       "{ s = s * %d + tab[(k + %d) & 1023]; if (s & 1) s ^= b << 3; " \
				       "else s += a >> 2; } return s + %d; }\n", i, i % 97 + 3, i % 61, i
		}' >"$T/big.c"
		LIMIT=90
		compare "gcc -O2 -c (cc1 beside the driver)" -2 4 \
			gcc -O2 -c "$T/big.c" -o "$T/big.o"
		LIMIT=20
	else
		skip "gcc: no gcc"
	fi

	# 4. sort of 170 MB of random lines
	head -c 120M /dev/urandom | base64 -w 60 >"$T/lines.txt"
	LIMIT=60
	compare "sort 170 MB" -2 2 sort -o /dev/null "$T/lines.txt"
	LIMIT=20
	rm -f "$T/lines.txt"

	# 5. stress-ng: a parent, a worker and the worker's child that holds 512 MiB; the
	# parent's 10 MiB add up with the child's in the run's total. Ended by its count of
	# operations, not by a time: under load a 3 s timeout could end it before the
	# child had mapped its memory in one of the two runs (time's run saw 9.9 MiB)
	if have stress-ng; then
		LIMIT=90	# 512 MiB faulted in: over 20 s beside a loaded machine's
		compare "stress-ng --vm 512M (three processes)" -2 4 \
			stress-ng -q --vm 1 --vm-bytes 512M --vm-keep --vm-ops 1 --timeout 60s
		LIMIT=20
	else
		skip "stress-ng: no stress-ng"
	fi
fi

# 6. Attach to a process that peaked at 400 MiB before: its old VmHWM is kept apart
status_kib() { sed -n "s/^$2:[[:space:]]*\([0-9]*\) kB/\1/p" "/proc/$1/status"; }
if have python3; then
	spawn old python3 -c '
import sys, time
x = bytearray(400 << 20)
del x
open(sys.argv[1], "w").close()
time.sleep(60)' "$T/old_ready"
	old=$!
	if wait_until 20 test -e "$T/old_ready"; then
		hwm=$(status_kib "$old" VmHWM)
		rss=$(status_kib "$old" VmRSS)
		diag "before the attach: VmHWM $hwm kB, VmRSS $rss kB"
		expect_exit 0 "attach after an old peak: recorded" "$RSW" record -q -p "$old" -d 2s
		peak=$(runcol peak_rss)
		before=$(runcol hwm_before)
		diag "attach: peak_rss $peak B, hwm_before ${before:-null} B"
		check "attach: outcome stopped ($(runcol outcome))" test "$(runcol outcome)" = stopped
		check "attach: peak_rss $peak B is the run's own, within 2% of VmRSS $rss kB" \
			within -2 2 "$peak" $((rss * 1024))
		check "attach: hwm_before ${before:-null} B is VmHWM $hwm kB" test "${before:-0}" -eq $((hwm * 1024))
		check "attach: hwm_before holds the 400 MiB ($hwm kB)" test "$hwm" -ge $((400 * 1024))

		expect_exit 0 "--reset-peak: recorded" "$RSW" record -q -p "$old" -d 2s --reset-peak
		peak=$(runcol peak_rss)
		before=$(runcol hwm_before)
		after=$(status_kib "$old" VmHWM)
		diag "--reset-peak: peak_rss $peak B, hwm_before ${before:-null} B, VmHWM now $after kB"
		check "--reset-peak: peak_rss $peak B within 2% of VmRSS $rss kB" within -2 2 "$peak" $((rss * 1024))
		check "--reset-peak: hwm_before ${before:-null} B is the VmHWM it reset ($hwm kB)" \
			test "${before:-0}" -eq $((hwm * 1024))
		check "--reset-peak: the process's VmHWM is reset ($after kB, VmRSS $rss kB)" \
			within -2 2 "$after" "$rss"

		expect_exit 0 "attach after the reset: recorded" "$RSW" record -q -p "$old" -d 1s
		before=$(runcol hwm_before)
		check "attach after the reset: hwm_before ${before:-null} B is the small one" \
			within -2 2 "${before:-0}" $((rss * 1024))
	else
		not_ok "attach after an old peak: python3 got ready"
	fi
	kill "$old" 2>/dev/null
	finish "$old" 5
else
	skip "attach after an old peak: no python3"
fi

# 7. Real OOM kills
cgdir=$(memcg_dir)
if [ "$root" -eq 0 ] || [ -z "$cgdir" ] || [ ! -d "$cgdir" ]; then
	skip "OOM kills: needs root and a memory cgroup controller"
elif ! have python3; then
	skip "OOM kills: no python3"
else
	oom_row() { sql "$RSSWATCH_DB" "SELECT comm FROM oom_kill WHERE run_id = $last"; }

	# a member of the tree: the shell goes on and exits 0
	expect_exit 0 "OOM kill of a tree member: exit status 0" "$RSW" record -q --memory-limit 200M \
		-- bash -c 'python3 -c "x = bytearray(500 << 20)"; exit 0'
	peak=$(runcol peak_rss)
	diag "member: outcome $(runcol outcome) $(runcol exit_code), oom_kills $(runcol oom_kills)," \
		"killed $(oom_row), peak $peak B ($(runcol peak_source)), largest process" \
		"$(runcol peak_process_comm) $(runcol peak_process_rss) B"
	check "OOM kill of a tree member: outcome exited 0" test "$(runcol "outcome || ' ' || exit_code")" = "exited 0"
	check "OOM kill of a tree member: oom_kills 1" test "$(runcol oom_kills)" -eq 1
	check "OOM kill of a tree member: the kill names python3 ($(oom_row))" test "$(oom_row)" = python3
	check "OOM kill of a tree member: the peak is near the 200 MiB limit ($peak B)" \
		test "$peak" -ge $((190 * MiB)) -a "$peak" -le $((230 * MiB))
	check "OOM kill of a tree member: the largest process is python3 ($(runcol peak_process_comm))" \
		test "$(runcol peak_process_comm)" = python3

	# a child of a command recorded alone: counted, though it is not in the run
	expect_exit 0 "OOM kill under --no-tree: exit status 0" "$RSW" record -q --no-tree --memory-limit 200M \
		-- bash -c 'python3 -c "x = bytearray(500 << 20)"; exit 0'
	peak=$(runcol peak_rss)
	diag "--no-tree: outcome $(runcol outcome) $(runcol exit_code), oom_kills $(runcol oom_kills)," \
		"peak $peak B ($(runcol peak_source)), largest process $(runcol peak_process_comm)"
	check "OOM kill under --no-tree: outcome exited 0" test "$(runcol "outcome || ' ' || exit_code")" = "exited 0"
	check "OOM kill under --no-tree: oom_kills 1" test "$(runcol oom_kills)" -eq 1
	check "OOM kill under --no-tree: the peak is bash's own, not the killed child's ($peak B)" \
		test "$peak" -lt $((32 * MiB))

	# the last process of a cgroup given with -g
	cg="$cgdir/rsw-t18-$$"
	if mkdir "$cg" 2>/dev/null; then
		at_exit "rmdir '$cg' 2>/dev/null"
		if [ -f "$cg/memory.limit_in_bytes" ]; then
			echo 100M >"$cg/memory.limit_in_bytes"
		else
			echo 100M >"$cg/memory.max"
		fi
		spawn cgsh sh -c 'echo $$ >"$1/cgroup.procs" || exit 1
			sleep 1.5
			exec python3 -c "x = bytearray(300 << 20)" "$2"' - "$cg" "$T"
		sh=$!
		if wait_until 10 grep -qx "$sh" "$cg/cgroup.procs"; then
			expect_exit 0 "-g, last process OOM-killed: recorded" "$RSW" record -q -g "$cg"
			peak=$(runcol peak_rss)
			diag "-g: outcome $(runcol outcome), signal $(runcol signal), oom_kills $(runcol oom_kills)," \
				"peak $peak B ($(runcol peak_source)), cgroup peak $(runcol peak_cgroup) B" \
				"(exact $(runcol peak_cgroup_exact)), largest process $(runcol peak_process_comm)"
			check "-g: outcome oom_killed ($(runcol outcome))" test "$(runcol outcome)" = oom_killed
			check "-g: oom_kills 1" test "$(runcol oom_kills)" -eq 1
			check "-g: the peak is near the 100 MiB limit ($peak B)" \
				test "$peak" -ge $((95 * MiB)) -a "$peak" -le $((130 * MiB))
			check "-g: the largest process is python3 ($(runcol peak_process_comm))" \
				test "$(runcol peak_process_comm)" = python3
			check "-g: the cgroup's peak rose during the run: exact, near the limit ($(runcol peak_cgroup) B)" \
				test "$(runcol peak_cgroup_exact)" = 1 -a "$(runcol peak_cgroup)" -ge $((95 * MiB))
			check "-g: the summary names the kill, not as another process's" \
				grep -Eq '^outcome   killed by the OOM killer .*; 1 process OOM-killed: python3 \(pid [0-9]+\)' "$ERR"
		else
			not_ok "-g: the shell joined the cgroup"
		fi
		finish "$sh" 10
		check "-g: python3 was killed by SIGKILL (status $RC)" test "$RC" -eq 137
	else
		skip "-g: cannot make a cgroup in $cgdir"
	fi

	# -g on a cgroup that peaked at 200 MiB before the recording and idles now: that
	# peak is history. Where the kernel's peak file cannot be reset privately (v1; v2
	# before 6.12) it is kept apart and said to cover more than the run.
	cg="$cgdir/rsw-t18-old-$$"
	if mkdir "$cg" 2>/dev/null; then
		at_exit "rmdir '$cg' 2>/dev/null"
		spawn oldcg sh -c 'echo $$ >"$1/cgroup.procs" || exit 1
			python3 -c "x = bytearray(200 << 20); x[::4096] = b\"x\" * len(x[::4096])"
			exec sleep 20' - "$cg"
		sh=$!
		if wait_until 20 grep -qx sleep "/proc/$sh/comm"; then
			expect_exit 0 "-g, old peak: recorded" "$RSW" record -q -g "$cg" -d 2s
			before=$(runcol cgroup_peak_before)
			diag "-g old peak: cgroup_peak_before ${before:-NULL} B, peak_cgroup" \
				"$(runcol peak_cgroup) B (exact $(runcol peak_cgroup_exact)), peak_rss $(runcol peak_rss) B"
			check "-g old peak: the run's peak is its own ($(runcol peak_rss) B)" \
				test "$(runcol peak_rss)" -lt $((50 * MiB))
			if [ "$(runcol peak_cgroup_exact)" = 1 ]; then
				check "-g old peak: reset privately, so no history kept (${before:-NULL})" \
					test -z "$before"
				check "-g old peak: the reset peak is the run's ($(runcol peak_cgroup) B)" \
					test "$(runcol peak_cgroup)" -lt $((50 * MiB))
			else
				check "-g old peak: the cgroup's old peak kept apart (${before:-NULL} B)" \
					test "${before:-0}" -ge $((200 * MiB))
				check "-g old peak: the summary says it covers more than the run" \
					grep -q '^earlier   cgroup peak .* before recording .*covering more than this run' "$ERR"
				"$RSW" show --json >"$T/oldcg.json"
				check "-g old peak: show --json has cgroup_peak_before_bytes" \
					grep -q "\"cgroup_peak_before_bytes\":$before" "$T/oldcg.json"
			fi
		else
			not_ok "-g old peak: the cgroup's process allocated and went idle"
		fi
		kill "$sh" 2>/dev/null
		finish "$sh" 10
	else
		skip "-g old peak: cannot make a cgroup in $cgdir"
	fi
fi

done_testing
