#!/bin/sh
# Runs on the GPU machine (cgroup v2): captures a sysroot-style fixture tree of the files
# rsswatch reads, for parser tests on a v2 layout: /proc/self/{mountinfo,cgroup}, the
# root's cgroup.controllers, PSI, and every memory.* and cgroup.* file of the shell's own
# cgroup. Writes $OUT/cgroup-v2-real.tar.gz.
set -eu
OUT=${OUT:-/tmp/out}
t=$(mktemp -d)
pid=$$
mkdir -p "$t/proc/self" "$t/proc/$pid" "$t/proc/pressure"
cp /proc/self/mountinfo "$t/proc/self/mountinfo"
cp /proc/self/cgroup "$t/proc/self/cgroup"
cp /proc/$pid/cgroup "$t/proc/$pid/cgroup"
cp /proc/pressure/memory "$t/proc/pressure/memory" 2>/dev/null || true
cg=$(sed -n 's/^0:://p' /proc/self/cgroup)
mkdir -p "$t/sys/fs/cgroup$cg"
cp /sys/fs/cgroup/cgroup.controllers "$t/sys/fs/cgroup/cgroup.controllers"
for f in /sys/fs/cgroup$cg/memory.* /sys/fs/cgroup$cg/cgroup.*; do
	[ -f "$f" ] && [ -r "$f" ] && cat "$f" >"$t/sys/fs/cgroup$cg/${f##*/}" 2>/dev/null || true
done
echo "$pid" >"$t/PID"
echo "$cg" >"$t/CGROUP"
tar -C "$t" -czf "$OUT/cgroup-v2-real.tar.gz" .
ls -R "$t" | head -40
