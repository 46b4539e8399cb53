#!/bin/bash
# Runs on a cgroup v2 machine as root: a recorder killed with SIGKILL under
# --memory-limit leaves its command's cgroup (and, where it had to make one, the
# rsswatch-leaf for the processes of its own cgroup). The next record moves the
# survivor out, removes the cgroup, and removes the leaf once it is empty.
#   B=DIR holding rsswatch (default: build)
set -u
R=${B:-build}/rsswatch
D=/tmp/cleanup-v2
rm -rf "$D"
mkdir -m 700 "$D"
export RSSWATCH_DB=$D/runs.db
cg=$(sed -n 's/^0:://p' /proc/self/cgroup)
base=/sys/fs/cgroup${cg%/rsswatch-leaf}
echo "### $(uname -r); this shell in $cg; parent $base; subtree_control: $(cat "$base/cgroup.subtree_control")"
tree() { find "$base" -maxdepth 2 -name 'rsswatch-*' -type d | sort | while read -r d; do echo "  $d: procs $(tr '\n' ' ' <"$d/cgroup.procs")"; done; }
"$R" record -q --memory-limit 100M -- sleep 60 &
rec=$!
sleep 1
echo "### while recording (recorder $rec)"
tree
sl=$(pgrep -P "$rec" sleep)
kill -KILL "$rec"
wait "$rec" 2>/dev/null
sleep 0.5
echo "### after SIGKILL of the recorder (sleep $sl in $(sed -n 's/^0:://p' /proc/$sl/cgroup))"
tree
echo "### the next record"
"$R" record -q --memory-limit 100M -- true; echo "exit $?"
echo "### after it: sleep $sl alive=$(kill -0 "$sl" 2>/dev/null && echo yes || echo no), in $(sed -n 's/^0:://p' /proc/$sl/cgroup 2>/dev/null)"
tree
kill "$sl" 2>/dev/null
sleep 0.3
echo "### once sleep ended, another record"
"$R" record -q --memory-limit 100M -- true; echo "exit $?"
tree
echo "### the shell's own cgroup now: $(sed -n 's/^0:://p' /proc/self/cgroup); subtree_control: $(cat "$base/cgroup.subtree_control")"
echo "### a command that leaves a process behind: it is moved out at the end"
"$R" record -q --memory-limit 100M -- sh -c 'sleep 30 & exit 0'; echo "exit $?"
tree
pkill -f '^sleep 30$'
sleep 0.3
echo "### two recorders at once: the first to end leaves the leaf to the other"
"$R" record -q --memory-limit 100M -- sleep 2 &
"$R" record -q --memory-limit 100M -- sleep 1; echo "exit $?"
tree
wait
echo "### both ended"
tree
echo "### subtree_control: $(cat "$base/cgroup.subtree_control"); shell in $(sed -n 's/^0:://p' /proc/self/cgroup)"
"$R" ls
