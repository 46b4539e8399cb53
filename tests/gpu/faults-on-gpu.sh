#!/bin/sh
# Runs on the GPU machine (another kernel, cgroup v2), as root: the faults mode, whose
# test rides on the engine's rss_stat program (a tail call into the stacks' on_rise),
# on tests/stacks/prog.c as t88 runs it here; then 20 runs of /bin/true, whose CPU must
# count from the exec (t19). B=DIR holds rsswatch (default build). Writes
# $OUT/faults-on-gpu.log.
set -u
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT"
B=${B:-build}
D=$(mktemp -d /tmp/gpu-faults.XXXXXX)	# rsswatch refuses a database in /tmp itself
export RSSWATCH_DB=$D/x.db
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
q() { python3 -c 'import sqlite3, sys; print("\n".join("|".join(str(c) for c in r) for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2])))' "$RSSWATCH_DB" "$1"; }
held() { q "select ifnull(sum(b.bytes), 0) from stack_bytes b join stack s on s.run_id = b.run_id
	and s.id = b.stack_id where b.run_id = (select max(id) from run) and b.at = 'peak' and
	s.frames like '%$1 (prog.c:%'"; }
{
	uname -r
	cc -O2 -g -fomit-frame-pointer -o "$D/prog" tests/stacks/prog.c -ldl || exit 1
	"$B/rsswatch" record -v -q --stacks=faults -i 1s -- "$D/prog" table 64 buffers 2 32 \
		small 48 free-buffers sleep 100
	echo "record exit $?"
	"$B/rsswatch" show | sed -n '/^at the peak/,/^$/p'
	MiB=1048576
	for f in "alloc_table 64 2" "alloc_buffers 64 2" "alloc_small 48 3"; do
		set -- $f
		got=$(held "$1")
		d=$((got - $2 * MiB))
		[ "$d" -lt 0 ] && d=$((-d))
		if [ "$d" -le $(($3 * MiB)) ]; then echo "ok: $1 holds $got, $2 MiB within $3"
		else echo "FAIL: $1 holds $got, not $2 MiB within $3"; fi
	done
	echo "--- 20 runs of /bin/true: duration, CPU user + sys, % of a CPU"
	i=0
	while [ $i -lt 20 ]; do
		"$B/rsswatch" record -q -- /bin/true >/dev/null 2>&1
		i=$((i + 1))
	done
	q "select id from run where mode = 'command' and target like '%true%' order by id" |
		while read -r id; do
			"$B/rsswatch" show "$id" --json | python3 -c 'import json, sys
d = json.load(sys.stdin); c = d["context"]
print("%.4f %.4f %.1f" % (d["duration_s"], c["cpu_user_s"] + c["cpu_sys_s"], c["cpu_avg_pct"]))'
		done >"$D/true.txt"
	cat "$D/true.txt" | tr '\n' ';'
	echo
	awk '$2 > $1 + 0.010 { bad++ } END { print (NR == 20 && !bad ? "ok" : "FAIL") ": " NR " runs, " bad + 0 " above their time and a tick" }' "$D/true.txt"
	sort -n -k3 "$D/true.txt" | awk '{ a[NR] = $3 } END { m = a[int((NR + 1) / 2)]; print (m <= 100 ? "ok" : "FAIL") ": median " m "% of a CPU" }'
} 2>&1 | tee "$OUT/faults-on-gpu.log"
