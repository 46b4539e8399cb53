#!/bin/sh
# Runs on the GPU machine: checks rsswatch's GPU figures against nvidia-smi, measures the
# cost of NVML queries, and keeps everything under $OUT. Expects a build in build/.
set -u
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT"
export RSSWATCH_DB="$OUT/gpu.db"
B=build
{
	nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
	$B/rsswatch gpus
	$B/rsswatch record -v -i 200ms -l "gpu steps 1,3,2 GiB" -- \
		python3 tests/gpu/steps.py "$PWD/$B/librsswatch.so" "$OUT"
	echo "exit $?"
	$B/rsswatch show
	$B/rsswatch export --format csv -o "$OUT/gpu.csv"
	cat "$OUT"/smi-*.txt
	echo "--- NVML query cost (bench_nvml, idle device)"
	$B/bench/bench_nvml -n 5000 $$ 2>&1
	echo "--- recorder overhead with GPU sampling on (1 ms interval, GPU every 100 ms)"
	sleep 30 & sp=$!
	$B/bench/rusage $B/rsswatch record --db "$OUT/o1.db" -q -p $sp -i 1ms -d 10s
	$B/bench/rusage $B/rsswatch record --db "$OUT/o2.db" -q -p $sp -i 1ms -d 10s --no-gpu
	$B/bench/rusage $B/rsswatch record --db "$OUT/o3.db" -q -p $sp -i 10ms -d 10s --gpu-interval 10ms
	for d in o1 o2 o3; do $B/rsswatch show --db "$OUT/$d.db" --json | grep -o '"samples":[0-9]*'; done
	kill $sp
} 2>&1 | tee "$OUT/log.txt"
