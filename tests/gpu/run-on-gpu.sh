#!/bin/sh
# Runs on the GPU machine: checks rsswatch's GPU figures against nvidia-smi, measures the
# cost of NVML queries, and keeps everything under $OUT. Expects a build in build/, or
# binaries carried in B=DIR (rsswatch, librsswatch.so, and rusage and bench_nvml, which
# are then looked for in DIR too).
set -u
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT"
export RSSWATCH_DB="$OUT/gpu.db"
B=${B:-build}
BB=$B/bench
[ -x "$BB/rusage" ] || BB=$B
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
	$BB/bench_nvml -n 5000 $$ 2>&1
	echo "--- recorder overhead with GPU sampling on: o1 1 ms interval, GPU every 20 ms (the"
	echo "    default); o2 the same, --no-gpu; o3 10 ms, GPU every 10 ms; o4 1 s, GPU every"
	echo "    20 ms; o5 1 s, --no-gpu"
	sleep 60 & sp=$!
	$BB/rusage $B/rsswatch record --db "$OUT/o1.db" -q -p $sp -i 1ms -d 10s
	$BB/rusage $B/rsswatch record --db "$OUT/o2.db" -q -p $sp -i 1ms -d 10s --no-gpu
	$BB/rusage $B/rsswatch record --db "$OUT/o3.db" -q -p $sp -i 10ms -d 10s --gpu-interval 10ms
	$BB/rusage $B/rsswatch record --db "$OUT/o4.db" -q -p $sp -i 1s -d 10s
	$BB/rusage $B/rsswatch record --db "$OUT/o5.db" -q -p $sp -i 1s -d 10s --no-gpu
	for d in o1 o2 o3 o4 o5; do
		echo "$d $($B/rsswatch show --db "$OUT/$d.db" --json | grep -o '"samples":[0-9]*')"
	done
	kill $sp
} 2>&1 | tee "$OUT/log.txt"
