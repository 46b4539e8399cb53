#!/bin/bash
# On the GPU machine: GPU figures against nvidia-smi, own RSS with and without NVML,
# and the peaks on cgroup v2 (peaks-v2.sh), with binaries carried from the build
# machine in $G (rsswatch, librsswatch.so, memhog, rusage). Writes under $OUT.
set -u
G=${G:-gpucarry}
P=$(mktemp -d /tmp/gpu-check.XXXXXX)
export RSSWATCH_DB=$P/runs.db
mkdir -p "$OUT/smi"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
$G/rsswatch gpus
echo "--- record: torch steps 1,3,2 GiB, 200 ms"
$G/rsswatch record -v -i 200ms -l "gpu steps" -- python3 tests/gpu/steps.py "$PWD/$G/librsswatch.so" "$OUT/smi"
echo "exit $?"
$G/rsswatch show
cat "$OUT"/smi/smi-*.txt 2>/dev/null | head -20
echo "--- own RSS beside the H200 (NVML loaded), 1 s for 5 s"
sleep 20 & sp=$!
$G/rusage $G/rsswatch record --db $P/o1.db -q -p $sp -i 1s -d 5s
$G/rusage $G/rsswatch record --db $P/o2.db -q -p $sp -i 1s -d 5s --no-gpu
kill $sp
echo "--- peaks on cgroup v2"
B=$G bash tests/gpu/peaks-v2.sh 2>&1
