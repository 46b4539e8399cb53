#!/bin/sh
# rsswatch agent: two targets (one from a config file, one from -n) watched by one
# process; each instance of each, started, killed and started again, becomes a run, the
# runs of a target one series; /metrics shows both targets' resident bytes (the figures
# the database stored), labelled target="NAME" and nothing derived from pids or process
# names, and promtool finds nothing wrong with it; SIGTERM ends the agent with exit 0
# and every run stored with an outcome; a -p target that ends ends the agent; config
# errors (unknown key, duplicate name, a bad line) are one line with the line number,
# exit 2. Prints TAP.
. "$(dirname "$0")/lib.sh"

tag=$$
A="agA-$tag"
B="agB-$tag"
DB="$T/db/rsswatch.db"
PORT=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

# --- config errors: one line each, with the line number, exit 2 --------------------
bad_conf() {	# DESC TEXT WORDS...
	_d=$1
	printf "$2" >"$T/bad.conf"
	shift 2
	expect_exit 2 "$_d: exit 2" "$RSW" agent --db "$DB" --config "$T/bad.conf"
	if [ "$(lines "$ERR")" -eq 1 ] && grep -qF "$T/bad.conf:$1: $2" "$ERR"; then
		ok "  one line: '$T/bad.conf:$1: $2'"
	else
		not_ok "  one line: '$T/bad.conf:$1: $2'"
		diag_run
	fi
}
bad_conf "an unknown key" 'name=a match=x\n# then\nname=b mtach=y\n' 3 "unknown key 'mtach'"
bad_conf "a duplicate name" 'name=a match=x\n\nname=a match=y\n' 3 "duplicate target name 'a' (first on line 1)"
bad_conf "a line that is not KEY=VALUE" 'name=a match=x\nhello world\n' 2 "expected KEY=VALUE, found 'hello'"
bad_conf "two targets on a line" 'name=a match=x pid=1\n' 1 "one target per line"
bad_conf "a bad name" 'name=a{b} match=x\n' 1 "invalid target name"
bad_conf "a bad pattern" 'name=a match=(x\n' 1 "invalid pattern"
expect_exit 2 "a config file that does not exist: exit 2" "$RSW" agent --db "$DB" --config "$T/none.conf"
expect_exit 2 "no target: exit 2" "$RSW" agent --db "$DB"
expect_exit 2 "-n and a config giving one name twice: exit 2" "$RSW" agent --db "$DB" -n x -n '^x$'
check "  it names the duplicate" grep -q "duplicate target name 'x'" "$ERR"
expect_exit 2 "a bad --listen: exit 2" "$RSW" agent --db "$DB" -n x --listen 127.0.0.1:99999
check "no database was made by refused starts" test ! -e "$DB"

# --- two targets -----------------------------------------------------------------
cat >"$T/agent.conf" <<EOF
# the first service; the second comes from -n
name=alpha   match="^$A( |\$)"   # a comment after a target
EOF
# start_as NAME STEPS...: memhog with argv[0] NAME (its command line starts with it)
start_as() { _sa=$1; shift; bash -c 'exec -a "$0" "$@"' "$_sa" "$HOG" "$@" >/dev/null 2>&1 & }
fetch() { curl -s -o "$T/m" "http://127.0.0.1:$PORT/metrics"; }
# metric NAME TARGET: the value of NAME{target="TARGET"} in the last fetch
metric() { sed -n "s/^$1{target=\"$2\"} //p" "$T/m"; }
up_is() { fetch && [ "$(metric rsswatch_agent_target_up "$1")" = "$2" ]; }
instances_are() { fetch && [ "$(metric rsswatch_agent_instances_total "$1")" = "$2" ]; }
has_rss() { fetch && [ -n "$(metric rsswatch_resident_bytes "$1")" ]; }
# rss_at_least TARGET BYTES: its last sample holds at least that much
rss_at_least() { fetch && [ "$(metric rsswatch_resident_bytes "$1" | cut -d. -f1)" -ge "$2" ] 2>/dev/null; }

spawn agent "$RSW" agent --db "$DB" --config "$T/agent.conf" -n "^$B" -i 100ms \
	--listen "127.0.0.1:$PORT"
agent=$!
both_wait() { [ "$(grep -c 'waiting for a process' "$T/agent.err")" -eq 2 ]; }
if wait_until 10 both_wait &&
	wait_until 10 fetch; then
	ok "with no match yet, both targets wait and /metrics answers"
else
	not_ok "with no match yet, both targets wait and /metrics answers"
	diag "$(cat "$T/agent.err")"
fi
check "  both targets are down (0), no resident bytes yet" \
	test "$(metric rsswatch_agent_target_up alpha)$(metric rsswatch_agent_target_up "$B")" = 00
check "  no resident series yet" test "$(grep -c '^rsswatch_resident_bytes' "$T/m")" -eq 0
check "  rsswatch_agent_targets is 2" grep -qx 'rsswatch_agent_targets 2' "$T/m"

start_as "$A" +8M touch "$T/a1" sleep 60s
a1=$!
start_as "$B" +24M touch "$T/b1" sleep 60s
b1=$!
_bg="$_bg $a1 $b1"
if wait_until 15 test -e "$T/a1" && wait_until 15 test -e "$T/b1" &&
	wait_until 15 up_is alpha 1 && wait_until 15 up_is "$B" 1 &&
	wait_until 10 has_rss alpha && wait_until 10 has_rss "$B"; then
	ok "both instances are recorded: up 1, resident bytes for each"
else
	not_ok "both instances are recorded: up 1, resident bytes for each"
	diag "$(cat "$T/agent.err")"
fi
# a scrape after both have touched their memory (and a sample since)
wait_until 10 rss_at_least alpha $((8 << 20)) && wait_until 10 rss_at_least "$B" $((24 << 20))
fetch
cp "$T/m" "$T/m1"
ra=$(metric rsswatch_resident_bytes alpha)
rb=$(metric rsswatch_resident_bytes "$B")
runa=$(metric rsswatch_agent_target_run alpha)
runb=$(metric rsswatch_agent_target_run "$B")
check "  alpha holds its 8 MiB, $B its 24 MiB (and more than alpha)" \
	test "${ra:-0}" -ge 8388608 -a "${rb:-0}" -ge 25165824 -a "${rb:-0}" -gt "${ra:-0}"
check "  each target has its own run" test -n "$runa" -a -n "$runb" -a "$runa" != "$runb"
if command -v promtool >/dev/null 2>&1; then
	if promtool check metrics <"$T/m1" >"$T/promtool" 2>&1; then
		ok "promtool check metrics passes on the agent's /metrics"
	else
		not_ok "promtool check metrics passes on the agent's /metrics"
		diag "$(cat "$T/promtool")"
	fi
else
	skip "promtool is not installed (scripts/deps.sh installs it)"
fi
# Every series but the agent's own unlabelled ones carries exactly one label, target,
# with one of the two names (the outcome, mode, kind label of a few families aside).
grep -v '^#' "$T/m1" | grep -v '^rsswatch_agent_targets ' | grep -v '^rsswatch_agent_cpu_seconds_total{mode="[a-z]*"} ' \
	| sed 's/{target="\([^"]*\)"\(,[a-z]*="[a-z_]*"\)\{0,1\}} .*/ \1/' >"$T/labels"
check "  every per-target series is labelled target=alpha or target=$B only" \
	test "$(grep -cv " alpha\$\| $B\$" "$T/labels")" -eq 0
check "  no pid, comm or run label anywhere" test "$(grep -c 'pid=\|comm=\|run=' "$T/m1")" -eq 0
check "  one resident series per target" test "$(grep -c '^rsswatch_resident_bytes{' "$T/m1")" -eq 2
check "  the runs of the two instances are labelled with their targets' names" \
	test "$(sql "$DB" "select label from run where id=$runa")|$(sql "$DB" "select label from run where id=$runb")" = "alpha|$B"

# --- a restart -------------------------------------------------------------------
kill -TERM "$a1"
if wait_until 10 grep -q "alpha: run $runa ended: signaled" "$T/agent.err" &&
	wait_until 10 up_is alpha 0; then
	ok "alpha's instance killed: its run ends 'signaled', the target is down"
else
	not_ok "alpha's instance killed: its run ends 'signaled', the target is down"
	diag "$(cat "$T/agent.err")"
fi
check "  while down, alpha shows no resident bytes" test -z "$(metric rsswatch_resident_bytes alpha)"
check "  while down, alpha's last run outcome is served" grep -q 'rsswatch_run_outcome{target="alpha",outcome="signaled"} 1' "$T/m"
start_as "$A" +8M touch "$T/a2" sleep 60s
a2=$!
_bg="$_bg $a2"
if wait_until 15 instances_are alpha 2 && wait_until 10 up_is alpha 1; then
	ok "alpha restarted: a second instance is recorded (instances 2)"
else
	not_ok "alpha restarted: a second instance is recorded (instances 2)"
	diag "$(cat "$T/agent.err")"
fi
check "  alpha's restarts are 1, $B's 0" \
	test "$(metric rsswatch_agent_restarts_total alpha)/$(metric rsswatch_agent_restarts_total "$B")" = 1/0
runa2=$(metric rsswatch_agent_target_run alpha)
wait_until 10 has_rss alpha
check "  resident bytes of alpha are back" test -n "$(metric rsswatch_resident_bytes alpha)"

# --- SIGTERM ---------------------------------------------------------------------
kill -TERM "$agent"
finish "$agent"
check "SIGTERM ends the agent with exit 0" test "$RC" -eq 0
check "  three runs stored" test "$(sql "$DB" "select count(*) from run")" -eq 3
check "  none is left 'running'" test "$(sql "$DB" "select count(*) from run where outcome='running' or outcome is null")" -eq 0
check "  alpha's first run ended 'signaled', its second and $B's 'stopped'" \
	test "$(sql "$DB" "select outcome from run where id=$runa")/$(sql "$DB" "select outcome from run where id=${runa2:-0}")/$(sql "$DB" "select outcome from run where id=$runb")" = signaled/stopped/stopped
check "  alpha's two runs are one series, $B's run another" \
	test "$(sql "$DB" "select count(distinct series) from run where label='alpha'")/$(sql "$DB" "select count(distinct series) from run")" = 1/2
check "  the second run of alpha has its 'restart' event" \
	test "$(sql "$DB" "select count(*) from event where run_id=${runa2:-0} and kind='restart'")" -eq 1
check "  the resident bytes served for alpha and $B are samples the database stored" \
	test "$(sql "$DB" "select count(*) from sample where run_id=$runa and rss=$ra")" -ge 1 -a \
	     "$(sql "$DB" "select count(*) from sample where run_id=$runb and rss=$rb")" -ge 1
check "  each of alpha's two runs has samples" \
	test "$(sql "$DB" "select count(distinct run_id) from sample where run_id in ($runa, ${runa2:-0})")" -eq 2
check "  the instances are still alive (recording stopped, not them)" alive "$b1"

# --- six targets, one writer -----------------------------------------------------
# The targets' batches are written by one thread for all of them (store.h, store_hub),
# in shared transactions, not by a writer thread per target; and the host's fork and
# exec events are read by one listener for every target's wait (follow.h, follow_hub):
# the agent runs its main thread, one per target, the writer and the listener.
: >"$T/six.conf"
for i in 1 2 3 4 5 6; do
	start_as "ag6-$tag-$i" +2M touch "$T/six$i" await "$T/six.go"
	_bg="$_bg $!"
	echo "name=s$i match=\"^ag6-$tag-$i( |\$)\"" >>"$T/six.conf"
done
spawn agent6 "$RSW" agent --db "$T/six.db" --config "$T/six.conf" -i 100ms
agent6=$!
six_running() { [ "$(grep -c ': recording pid ' "$T/agent6.err")" -eq 6 ]; }
wait_until 30 six_running || diag "the six were not all recorded: $(cat "$T/agent6.err")"
threads=$(ls "/proc/$agent6/task" 2>/dev/null | wc -l)
check "six targets: the agent runs 9 threads (main, one per target, writer, listener), not 13 ($threads)" \
	test "$threads" -eq 9
six_stored() {	# every target's samples reach the database while the agent runs
	[ "$(sql "$T/six.db" "select count(distinct run_id) from sample" 2>/dev/null)" = 6 ]
}
check "  every target's samples are written while it runs (within 5 s and the writer's 1 s)" \
	wait_until 15 six_stored
check "  still running" alive "$agent6"
kill -TERM "$agent6"
finish "$agent6"
check "  SIGTERM: exit 0, six runs stored, none left 'running'" \
	test "$RC/$(sql "$T/six.db" "select count(*) from run where outcome = 'stopped'")" = 0/6
touch "$T/six.go"

# --- a -p target ends the agent when its process ends ----------------------------
start_as "agP-$tag" +4M touch "$T/p1" await "$T/p1.go" exit 5
p1=$!
_bg="$_bg $p1"
wait_until 10 test -e "$T/p1"
spawn agentp "$RSW" agent --db "$DB" -p "$p1" -i 100ms
agentp=$!
# (a sanitizer build on a busy machine starts slowly: the target must not end before)
wait_until 60 grep -q "pid-$p1: recording pid $p1" "$T/agentp.err" ||
	diag "the agent did not say it records pid $p1: $(cat "$T/agentp.err")"
touch "$T/p1.go"
finish "$agentp"
check "with only a -p target, the agent ends by itself with exit 0 once it has ended" test "$RC" -eq 0
check "  its run ended 'exited' with status 5, labelled pid-$p1" \
	test "$(sql "$DB" "select outcome || ' ' || exit_code || ' ' || label from run where pid=$p1")" = "exited 5 pid-$p1"

# --- GPU memory, per target, through NVML (a scripted fake of the library) ----------
fake=$BUILD/fake/libnvidia-ml.so.1
if [ -e "$fake" ]; then
	start_as "agG-$tag" +4M touch "$T/g1" await "$T/g1.go" exit 0
	g1=$!
	_bg="$_bg $g1"
	wait_until 10 test -e "$T/g1"
	printf 'device 0 total 141G used 10G\nproc %d device 0 bytes 300M\n' "$g1" >"$T/gpu.script"
	GPORT=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	spawn agentg env RSSWATCH_NVML_LIB="$fake" FAKE_NVML_SCRIPT="$T/gpu.script" \
		"$RSW" agent --db "$DB" -p "$g1" -i 100ms --listen "127.0.0.1:$GPORT"
	agentg=$!
	gpu_served() { curl -s "http://127.0.0.1:$GPORT/metrics" >"$T/mg" &&
		grep -qx "rsswatch_gpu_bytes{target=\"pid-$g1\"} 314572800" "$T/mg"; }
	check "the agent serves a target's GPU memory (300 MiB, as NVML reports it)" wait_until 10 gpu_served
	touch "$T/g1.go"
	finish "$agentg"
	check "  and stores it as the run's GPU peak" \
		test "$(sql "$DB" "select peak_gpu from run where pid=$g1")" = 314572800
	start_as "agN-$tag" +4M touch "$T/n1" await "$T/n1.go" exit 0
	n1=$!
	_bg="$_bg $n1"
	wait_until 10 test -e "$T/n1"
	printf 'device 0 total 141G used 10G\nproc %d device 0 bytes 300M\n' "$n1" >"$T/gpu.script"
	spawn agentn env RSSWATCH_NVML_LIB="$fake" FAKE_NVML_SCRIPT="$T/gpu.script" \
		"$RSW" agent --db "$DB" -p "$n1" -i 100ms --no-gpu
	agentn=$!
	wait_until 10 grep -q "pid-$n1: recording pid $n1" "$T/agentn.err"
	sleep 0.3
	touch "$T/n1.go"
	finish "$agentn"
	check "--no-gpu: no GPU figure stored" \
		test "$(sql "$DB" "select ifnull(peak_gpu, 'null') from run where pid=$n1")" = null
else
	skip "the fake NVML library is not built"
fi

# --- a -g target whose cgroup does not exist yet (a service's, made when it starts) --
. "$(dirname "$0")/memcg.sh"
base=$(memcg_dir)
if [ "$(id -u)" -eq 0 ] && [ -n "$base" ]; then
	cgd="$base/rsw-agent-late-$tag"
	at_exit "rmdir '$cgd' 2>/dev/null"
	spawn agentc "$RSW" agent --db "$DB" -g "$cgd" -i 100ms
	agentc=$!
	check "-g on a cgroup not made yet: the agent starts and waits for it" \
		wait_until 10 grep -q "does not exist yet: waiting for it" "$T/agentc.err"
	check "  still running" alive "$agentc"
	mkdir "$cgd"
	bash -c "echo \$\$ >'$cgd/cgroup.procs' && exec '$HOG' +4M touch '$T/c1' await '$T/c1.go'" &
	c1=$!
	_bg="$_bg $c1"
	wait_until 10 test -e "$T/c1"
	check "  once made and holding a process, it is recorded" \
		wait_until 10 grep -q "recording memory cgroup .*rsw-agent-late-$tag" "$T/agentc.err"
	sleep 0.3
	touch "$T/c1.go"
	wait "$c1"
	kill -TERM "$agentc"
	finish "$agentc"
	check "  SIGTERM: exit 0" test "$RC" -eq 0
	check "  its run is a cgroup run with samples" \
		test "$(sql "$DB" "select mode || ' ' || (samples > 0) from run where cgroup like '%rsw-agent-late-$tag' order by id desc limit 1")" = "cgroup 1"
else
	skip "a cgroup made after the agent started needs root and a memory cgroup controller"
fi

done_testing
