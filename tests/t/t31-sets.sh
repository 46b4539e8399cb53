#!/bin/sh
# Process sets: --tree (a target and its descendants, here 60 processes that come and
# go) and -g (every process of a memory cgroup). Totals must equal the sum of the
# members stored beside them. The -g and OOM parts need root and a v1 or v2 memory
# controller. Prints TAP.
. tests/t/lib.sh
cgtest=
at_exit '[ -z "$cgtest" ] || rmdir "$cgtest" 2>/dev/null'
last="(SELECT max(id) FROM run)"
# Samples whose totals differ from the sum of their members' figures then (the view
# proc_at_sample gives each member's last stored row at or before every sample).
mismatches() {
	sql "$RSSWATCH_DB" "SELECT count(*) FROM sample s WHERE s.run_id = $last AND s.rss != (SELECT coalesce(sum(p.rss), -1) FROM proc_at_sample p WHERE p.run_id = s.run_id AND p.elapsed_ns = s.elapsed_ns) OR s.run_id = $last AND s.anon != (SELECT coalesce(sum(p.anon), -1) FROM proc_at_sample p WHERE p.run_id = s.run_id AND p.elapsed_ns = s.elapsed_ns)"
}
events() { sql "$RSSWATCH_DB" "SELECT count(*) FROM event WHERE run_id = $last AND kind = '$1'"; }

# --tree: 60 children that come and go, 3 at a time; followed through the proc
# connector's fork events (the default), and by walking the children files only.
for mode in events walk; do
	nocn=0
	[ "$mode" = walk ] && nocn=1
	RSSWATCH_NO_PROCCN=$nocn "$RSW" record -q -t -i 20ms -- sh -c '
		i=0
		while [ $i -lt 60 ]; do
			"$1" +2M sleep 80ms &
			i=$((i + 1))
			[ $((i % 3)) -eq 0 ] && wait
		done
		wait' - "$HOG" >/dev/null 2>"$T/err"
	rc=$?
	check "tree ($mode): exit status 0" test "$rc" -eq 0
	s=$(events proc_start)
	check "tree ($mode): at least 50 processes started (got $s)" test "$s" -ge 50
	e=$(events proc_exit)
	check "tree ($mode): at least 50 processes exited (got $e)" test "$e" -ge 50
	check "tree ($mode): totals equal the sum of the members in every sample" test "$(mismatches)" -eq 0
	m=$(sql "$RSSWATCH_DB" "SELECT max(c) FROM (SELECT count(*) c FROM proc_at_sample WHERE run_id = $last GROUP BY elapsed_ns)")
	check "tree ($mode): samples hold the shell and its children (max $m members)" test "$m" -ge 3
	"$RSW" show >"$T/show"
	check "tree ($mode): show notes that summed RSS counts shared pages more than once" \
		grep -q '^note      RSS is summed over the processes' "$T/show"
	"$RSW" show --events >"$T/show"
	check "tree ($mode): show --events lists proc_start events" grep -q ' proc_start .*comm=memhog' "$T/show"
	"$RSW" show --json >"$T/json"
	check "tree ($mode): outcome exited with 0" grep -q '"outcome":"exited","exit_code":0' "$T/json"
done

# --tree with fork events: a grandchild orphaned at once by its parent (re-parented
# away from the tree, so no walk could find it) is a member until it ends. The shell
# waits until a sample is stored (the recorder follows events by then), starts it, and
# lets it end once its proc_start event is stored (polled, bounded).
if command -v sqlite3 >/dev/null 2>&1; then
	rm -f "$T/orphgo"
	q0="SELECT count(*) > 0 FROM sample WHERE run_id = $last"
	# (by its pid: on a loaded machine it may be first read before its exec, as "sh")
	q="SELECT count(*) FROM event WHERE run_id = $last AND kind = 'proc_start' AND pid = "
	"$RSW" record -q -t -i 20ms -- sh -c '
		waitq() {	# waitq QUERY: wait until QUERY gives 1
			i=0
			while [ $i -lt 1000 ] && [ "$(sqlite3 "$3" "$1" 2>/dev/null)" != 1 ]; do
				sleep 0.01
				i=$((i + 1))
			done
		}
		waitq "$4"
		( "$1" +3M await "$2/orphgo" & echo $! >"$2/orphpid" )
		waitq "$5$(cat "$2/orphpid")"
		touch "$2/orphgo"' - "$HOG" "$T" "$RSSWATCH_DB" "$q0" "$q" >/dev/null 2>"$T/err"
	o=$(sql "$RSSWATCH_DB" "$q$(cat "$T/orphpid")")
	comm=$(sql "$RSSWATCH_DB" "SELECT comm FROM process WHERE run_id = $last AND pid = $(cat "$T/orphpid")")
	check "tree (events): the orphaned grandchild was a member ($o, as $comm)" \
		test "$o" -eq 1 -a "$comm" = memhog
	check "tree (events): totals equal the sum of the members (orphan)" test "$(mismatches)" -eq 0
fi

if [ "$(id -u)" -ne 0 ]; then
	done_testing
fi
# The v1 (or v2) memory cgroup of this shell, where test cgroups are made.
. "$(dirname "$0")/memcg.sh"
cgdir=$(memcg_dir)
if [ -z "$cgdir" ] || [ ! -d "$cgdir" ]; then
	done_testing
fi

# An OOM kill of a child in --tree mode is an event, not the end of the run.
"$RSW" record -q -t --memory-limit 64M -i 50ms -- sh -c '"$1" +256M; "$1" +1M sleep 100ms; exit 3' \
	- "$HOG" >/dev/null 2>"$T/err"
rc=$?
"$RSW" show --json >"$T/json"
check "tree oom: the shell's own status (3)" test "$rc" -eq 3
check "tree oom: outcome exited" grep -q '"outcome":"exited","exit_code":3' "$T/json"
check "tree oom: an oom_kill event for the child" \
	grep -q '"kind":"oom_kill","pid":[0-9]*,"detail":"anon_rss=[0-9]*kB' "$T/json"
# (the run's own cgroup, by the name stored with the run: other recorders may be busy)
runcg=$(sql "$RSSWATCH_DB" "SELECT cgroup FROM run WHERE id = $last")
check "tree oom: the cgroup ${runcg##*/} is gone" \
	sh -c '[ -n "$2" ] && [ ! -d "$1/$2" ]' - "$cgdir" "${runcg##*/}"

# -g: a cgroup made here holding two memhogs.
cgtest=$cgdir/t31-$$
mkdir "$cgtest" || exit 1
rel=${cgtest#/sys/fs/cgroup/memory}
[ "$rel" = "$cgtest" ] && rel=${cgtest#/sys/fs/cgroup}
rm -f "$T/go"
sh -c 'echo $$ >"$1/cgroup.procs"; exec "$2" +20M touch "$3/a" await "$3/go"' - "$cgtest" "$HOG" "$T" &
pa=$!
sh -c 'echo $$ >"$1/cgroup.procs"; exec "$2" +30M touch "$3/b" await "$3/go" sleep 200ms' - "$cgtest" "$HOG" "$T" &
pb=$!
for _ in $(seq 1 500); do [ -e "$T/a" ] && [ -e "$T/b" ] && break; sleep 0.01; done
"$RSW" record -q -g "$rel" -i 20ms >/dev/null 2>"$T/err" &
rpid=$!
for _ in $(seq 1 500); do
	[ "$(sql "$RSSWATCH_DB" "SELECT samples FROM run WHERE id = $last AND mode = 'cgroup'" 2>/dev/null)" -ge 3 ] 2>/dev/null && break
	sleep 0.01
done
touch "$T/go"
wait "$rpid"
rc=$?
wait
"$RSW" show --json >"$T/json"
check "-g: exit status 0 when the cgroup empties" test "$rc" -eq 0
check "-g: mode cgroup, target the cgroup path" grep -q "\"target\":\"$rel\",\"mode\":\"cgroup\"" "$T/json"
check "-g: outcome exited, the cgroup became empty" \
	grep -q '"outcome":"exited".*"outcome_note":"the cgroup became empty"' "$T/json"
check "-g: totals equal the sum of the members" test "$(mismatches)" -eq 0
# (with SANITIZE=1 a leak checker's tracer may join them for a moment, at an exit)
m=$(sql "$RSSWATCH_DB" "SELECT count(DISTINCT elapsed_ns) FROM proc_at_sample p WHERE run_id = $last AND pid = $pa AND EXISTS (SELECT 1 FROM proc_at_sample q WHERE q.run_id = p.run_id AND q.elapsed_ns = p.elapsed_ns AND q.pid = $pb)")
check "-g: both processes were members, at the same samples ($m)" test "$m" -ge 3
big=$(sql "$RSSWATCH_DB" "SELECT max(rss) FROM sample WHERE run_id = $last")
check "-g: the total holds both (>= 50 MiB)" test "$big" -ge $((50 * 1048576))
cg=$(sql "$RSSWATCH_DB" "SELECT max(cgroup) FROM sample WHERE run_id = $last")
check "-g: the cgroup's own usage is sampled" test "$cg" -ge $((50 * 1048576))
"$RSW" show >"$T/show"
check "-g: show names the cgroup" grep -q "^target    memory cgroup $rel (every process in it" "$T/show"
rmdir "$cgtest" && cgtest=

"$RSW" record -q -g /no/such/cgroup-$$ >/dev/null 2>"$T/err"
check "-g with no such cgroup: exit 1" test $? -eq 1
check "-g with no such cgroup: says so" grep -q "^rsswatch: no memory cgroup '/no/such/cgroup-" "$T/err"
done_testing
