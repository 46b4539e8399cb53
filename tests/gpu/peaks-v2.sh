#!/bin/bash
# Runs on the GPU machine (root, cgroup v2): the true peak and the cause of death for
# every kind of target, held against wait4's maximum RSS (bench/rusage, what time -v
# prints) and the cgroup's own files; then the GPU spike with the tree default.
#   B=DIR holding rsswatch, rusage, memhog (default: build, build/bench, build/tests/bin)
#   SPIKE=tests/gpu/spike.py
set -u
B=${B:-}
R=${B:-build}/rsswatch
RU=${B:-build/bench}/rusage
H=${B:-build/tests/bin}/memhog
SPIKE=${SPIKE:-tests/gpu/spike.py}
# a directory of our own: a database beside files other users may plant is refused
DBDIR=$(mktemp -d /tmp/peaks-v2.XXXXXX)
export RSSWATCH_DB=$DBDIR/runs.db
fields() {	# the last run's figures that issue 9 is about
	"$R" show --json | python3 -c 'import json, sys
r = json.load(sys.stdin)
keys = ["id", "outcome", "exit_code", "peak_rss_bytes", "peak_source", "exit_records",
        "hwm_before_bytes", "oom_kills", "peak_process_comm", "peak_process_rss_bytes",
        "cgroup", "peak_cgroup_bytes", "peak_cgroup_exact", "peak_gpu_bytes"]
print(" ".join("%s=%s" % (k, r.get(k)) for k in keys))
for k in r.get("oom") or []:
    print("  oom kill: pid=%s comm=%s anon_rss_bytes=%s" % (k["pid"], k["comm"], k["anon_rss_bytes"]))'
}
ref() { "$RU" "$@" 2>&1 >/dev/null | sed -n 's/.*maxrss_kib=\([0-9]*\).*/wait4 reference: \1 KiB/p'; }

echo "### $(date -u +%FT%TZ) $(uname -r) $(nproc) cpus"
cat /proc/self/cgroup
echo "### 1. a short python3 allocation, launched (tree by default)"
ref python3 -c 'x = bytearray(300 << 20)'
"$R" record -v -q -i 1s -- python3 -c 'x = bytearray(300 << 20)'; fields
echo "### 2. a late spike behind sh -c"
ref sh -c 'sleep 1.3; python3 -c "x = bytearray(500 << 20)"'
"$R" record -q -i 1s -- sh -c 'sleep 1.3; python3 -c "x = bytearray(500 << 20)"'; fields
echo "### 3. a 5 ms child at 100 MiB between two samples"
"$R" record -q -i 1s -- sh -c "sleep 0.3; $H +100M sleep 5ms exit 0; sleep 0.9"; fields
echo "### 4. --memory-limit 200M: python3 OOM-killed inside bash, which exits 0"
"$R" record -q --memory-limit 200M -- bash -c 'python3 -c "x = bytearray(500 << 20)"; exit 0'
echo "exit $?"; fields
echo "### 5. the same with --no-tree"
"$R" record -q --no-tree --memory-limit 200M -- bash -c 'python3 -c "x = bytearray(500 << 20)"; exit 0'
echo "exit $?"; fields
echo "### 6. attach after an old peak (400 MiB freed, then idle)"
python3 -c 'import time; x = bytearray(400 << 20); del x; time.sleep(6)' &
p=$!
sleep 1.5
"$R" record -q -i 200ms -d 2s -p $p; fields
"$R" record -q -i 200ms -d 1s --reset-peak -p $p; fields
grep VmHWM /proc/$p/status
kill $p
# A cgroup of our own below the shell's: after step 4 memory is enabled below the
# shell's parent (rsswatch-leaf holds the shell), so children can be made there.
parent=/sys/fs/cgroup$(sed -n 's/^0::\(.*\)\/rsswatch-leaf$/\1/p' /proc/self/cgroup)
echo "### parent for -g tests: $parent ($(cat "$parent/cgroup.subtree_control" 2>&1))"
echo "### 7. -g on a cgroup whose processes peaked at 400 MiB before the recording"
mkdir -p "$parent/rsw-old"
sh -c "echo \$\$ > $parent/rsw-old/cgroup.procs; python3 -c 'x = bytearray(400 << 20)'; exec sleep 5" &
sleep 2
echo "memory.peak before: $(cat "$parent/rsw-old/memory.peak")"
"$R" record -q -i 200ms -d 2s -g "$parent/rsw-old"; fields
wait
rmdir "$parent/rsw-old"
echo "### 8. -g on a cgroup whose only process is OOM-killed"
mkdir -p "$parent/rsw-oom"
echo 100M >"$parent/rsw-oom/memory.max"
echo 0 >"$parent/rsw-oom/memory.swap.max" 2>/dev/null
sh -c "echo \$\$ > $parent/rsw-oom/cgroup.procs; sleep 1.5; exec python3 -c 'x = bytearray(300 << 20)'" &
sleep 0.5
"$R" record -q -i 200ms -g "$parent/rsw-oom"; fields
wait
rmdir "$parent/rsw-oom"
echo "### 9. the GPU spike (6 GiB for 150 ms) at -i 1s, launched (tree by default)"
"$R" record -q -i 1s -- python3 "$SPIKE" >/tmp/spike.out 2>&1
grep -o 'nvml_proc_bytes [0-9]*' /tmp/spike.out; fields
echo "### end"
