#!/bin/sh
# Process sets: --tree (a target and its descendants, here 60 processes that come and
# go) and -g (every process of a memory cgroup). Totals must equal the sum of the
# members stored beside them. The -g and OOM parts need root and a v1 or v2 memory
# controller. Prints TAP.
BUILD=${BUILD:-build}
bin=$BUILD/rsswatch
hog=$BUILD/tests/bin/memhog
if [ ! -x "$bin" ] || [ ! -x "$hog" ]; then
	echo "1..0 # SKIP $bin or $hog not built"
	exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/t31.XXXXXX") || exit 1
cgtest=
trap 'rm -rf "$tmp"; [ -n "$cgtest" ] && rmdir "$cgtest" 2>/dev/null' EXIT
export RSSWATCH_DB="$tmp/runs.db"
n=0
check() {	# check DESCRIPTION COMMAND...
	desc=$1; shift
	n=$((n + 1))
	if "$@"; then echo "ok $n - $desc"; else echo "not ok $n - $desc"; fi
}
sql() {	# sql QUERY: one value from the database
	if command -v sqlite3 >/dev/null 2>&1; then
		sqlite3 "$RSSWATCH_DB" "$1"
	else
		python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])' "$RSSWATCH_DB" "$1"
	fi
}
last="(SELECT max(id) FROM run)"
# Samples whose totals differ from the sum of their members' figures then (the view
# proc_at_sample gives each member's last stored row at or before every sample).
mismatches() {
	sql "SELECT count(*) FROM sample s WHERE s.run_id = $last AND s.rss != (SELECT coalesce(sum(p.rss), -1) FROM proc_at_sample p WHERE p.run_id = s.run_id AND p.elapsed_ns = s.elapsed_ns) OR s.run_id = $last AND s.anon != (SELECT coalesce(sum(p.anon), -1) FROM proc_at_sample p WHERE p.run_id = s.run_id AND p.elapsed_ns = s.elapsed_ns)"
}
events() { sql "SELECT count(*) FROM event WHERE run_id = $last AND kind = '$1'"; }

# --tree: 60 children that come and go, 3 at a time; followed through the proc
# connector's fork events (the default), and by walking the children files only.
for mode in events walk; do
	nocn=0
	[ "$mode" = walk ] && nocn=1
	RSSWATCH_NO_PROCCN=$nocn "$bin" record -q -t -i 20ms -- sh -c '
		i=0
		while [ $i -lt 60 ]; do
			"$1" +2M sleep 80ms &
			i=$((i + 1))
			[ $((i % 3)) -eq 0 ] && wait
		done
		wait' - "$hog" >/dev/null 2>"$tmp/err"
	rc=$?
	check "tree ($mode): exit status 0" test "$rc" -eq 0
	s=$(events proc_start)
	check "tree ($mode): at least 50 processes started (got $s)" test "$s" -ge 50
	e=$(events proc_exit)
	check "tree ($mode): at least 50 processes exited (got $e)" test "$e" -ge 50
	check "tree ($mode): totals equal the sum of the members in every sample" test "$(mismatches)" -eq 0
	m=$(sql "SELECT max(c) FROM (SELECT count(*) c FROM proc_at_sample WHERE run_id = $last GROUP BY elapsed_ns)")
	check "tree ($mode): samples hold the shell and its children (max $m members)" test "$m" -ge 3
	"$bin" show >"$tmp/show"
	check "tree ($mode): show notes that summed RSS counts shared pages more than once" \
		grep -q '^note      RSS is summed over the processes' "$tmp/show"
	"$bin" show --events >"$tmp/show"
	check "tree ($mode): show --events lists proc_start events" grep -q ' proc_start .*comm=memhog' "$tmp/show"
	"$bin" show --json >"$tmp/json"
	check "tree ($mode): outcome exited with 0" grep -q '"outcome":"exited","exit_code":0' "$tmp/json"
done

# --tree with fork events: a grandchild orphaned at once by its parent (re-parented
# away from the tree, so no walk could find it) is a member until it ends. The shell
# waits until a sample is stored (the recorder follows events by then), starts it, and
# lets it end once its proc_start event is stored (polled, bounded).
if command -v sqlite3 >/dev/null 2>&1; then
	rm -f "$tmp/orphgo"
	q0="SELECT count(*) > 0 FROM sample WHERE run_id = $last"
	q="SELECT count(*) FROM event WHERE run_id = $last AND kind = 'proc_start' AND detail LIKE '%memhog%'"
	"$bin" record -q -t -i 20ms -- sh -c '
		waitq() {	# waitq QUERY: wait until QUERY gives 1
			i=0
			while [ $i -lt 1000 ] && [ "$(sqlite3 "$3" "$1" 2>/dev/null)" != 1 ]; do
				sleep 0.01
				i=$((i + 1))
			done
		}
		waitq "$4"
		( "$1" +3M await "$2/orphgo" & )
		waitq "$5"
		touch "$2/orphgo"' - "$hog" "$tmp" "$RSSWATCH_DB" "$q0" "$q" >/dev/null 2>"$tmp/err"
	o=$(sql "$q")
	check "tree (events): the orphaned grandchild was a member ($o)" test "$o" -eq 1
	check "tree (events): totals equal the sum of the members (orphan)" test "$(mismatches)" -eq 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "1..$n"
	exit 0
fi
# The v1 (or v2) memory cgroup of this shell, where test cgroups are made.
. "$(dirname "$0")/memcg.sh"
cgdir=$(memcg_dir)
if [ -z "$cgdir" ] || [ ! -d "$cgdir" ]; then
	echo "1..$n"
	exit 0
fi

# An OOM kill of a child in --tree mode is an event, not the end of the run.
"$bin" record -q -t --memory-limit 64M -i 50ms -- sh -c '"$1" +256M; "$1" +1M sleep 100ms; exit 3' \
	- "$hog" >/dev/null 2>"$tmp/err"
rc=$?
"$bin" show --json >"$tmp/json"
check "tree oom: the shell's own status (3)" test "$rc" -eq 3
check "tree oom: outcome exited" grep -q '"outcome":"exited","exit_code":3' "$tmp/json"
check "tree oom: an oom_kill event for the child" \
	grep -q '"kind":"oom_kill","pid":[0-9]*,"detail":"anon_rss=[0-9]*kB' "$tmp/json"
# (the run's own cgroup, by the name stored with the run: other recorders may be busy)
runcg=$(sql "SELECT cgroup FROM run WHERE id = $last")
check "tree oom: the cgroup ${runcg##*/} is gone" \
	sh -c '[ -n "$2" ] && [ ! -d "$1/$2" ]' - "$cgdir" "${runcg##*/}"

# -g: a cgroup made here holding two memhogs.
cgtest=$cgdir/t31-$$
mkdir "$cgtest" || exit 1
rel=${cgtest#/sys/fs/cgroup/memory}
[ "$rel" = "$cgtest" ] && rel=${cgtest#/sys/fs/cgroup}
rm -f "$tmp/go"
sh -c 'echo $$ >"$1/cgroup.procs"; exec "$2" +20M touch "$3/a" await "$3/go"' - "$cgtest" "$hog" "$tmp" &
pa=$!
sh -c 'echo $$ >"$1/cgroup.procs"; exec "$2" +30M touch "$3/b" await "$3/go" sleep 200ms' - "$cgtest" "$hog" "$tmp" &
pb=$!
for _ in $(seq 1 500); do [ -e "$tmp/a" ] && [ -e "$tmp/b" ] && break; sleep 0.01; done
"$bin" record -q -g "$rel" -i 20ms >/dev/null 2>"$tmp/err" &
rpid=$!
for _ in $(seq 1 500); do
	[ "$(sql "SELECT samples FROM run WHERE id = $last AND mode = 'cgroup'" 2>/dev/null)" -ge 3 ] 2>/dev/null && break
	sleep 0.01
done
touch "$tmp/go"
wait "$rpid"
rc=$?
wait
"$bin" show --json >"$tmp/json"
check "-g: exit status 0 when the cgroup empties" test "$rc" -eq 0
check "-g: mode cgroup, target the cgroup path" grep -q "\"target\":\"$rel\",\"mode\":\"cgroup\"" "$tmp/json"
check "-g: outcome exited, the cgroup became empty" \
	grep -q '"outcome":"exited".*"outcome_note":"the cgroup became empty"' "$tmp/json"
check "-g: totals equal the sum of the members" test "$(mismatches)" -eq 0
# (with SANITIZE=1 a leak checker's tracer may join them for a moment, at an exit)
m=$(sql "SELECT count(DISTINCT elapsed_ns) FROM proc_at_sample p WHERE run_id = $last AND pid = $pa AND EXISTS (SELECT 1 FROM proc_at_sample q WHERE q.run_id = p.run_id AND q.elapsed_ns = p.elapsed_ns AND q.pid = $pb)")
check "-g: both processes were members, at the same samples ($m)" test "$m" -ge 3
big=$(sql "SELECT max(rss) FROM sample WHERE run_id = $last")
check "-g: the total holds both (>= 50 MiB)" test "$big" -ge $((50 * 1048576))
cg=$(sql "SELECT max(cgroup) FROM sample WHERE run_id = $last")
check "-g: the cgroup's own usage is sampled" test "$cg" -ge $((50 * 1048576))
"$bin" show >"$tmp/show"
check "-g: show names the cgroup" grep -q "^target    memory cgroup $rel (every process in it" "$tmp/show"
rmdir "$cgtest" && cgtest=

"$bin" record -q -g /no/such/cgroup-$$ >/dev/null 2>"$tmp/err"
check "-g with no such cgroup: exit 1" test $? -eq 1
check "-g with no such cgroup: says so" grep -q "^rsswatch: no memory cgroup '/no/such/cgroup-" "$tmp/err"
echo "1..$n"
