#!/bin/sh
# Runs on the GPU machine, as root: what charging each device block to its stack
# costs a program that calls the driver often. tests/gpu/allocloop.cu (20,000 pairs of
# cudaMalloc and cudaFree of 1 MiB, the median ns a pair of its 5 rounds) alone, as the
# target of `record -i 1s` (the GPU probes) and of `record -i 1s --stacks` (the probes
# with a stack copy at each allocation's return), in turns, ROUNDS (5) times.
# B=DIR holds rsswatch (default build). Writes $OUT/gpu-stacks-cost.log.
set -u
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT"
B=${B:-build}
rounds=${1:-5}
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
D=$(mktemp -d /tmp/gpu-stacks-cost.XXXXXX)	# rsswatch refuses a database in /tmp itself
{
	nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
	nvcc -O2 -o "$D/allocloop" tests/gpu/allocloop.cu || exit 1
	r=1
	while [ $r -le "$rounds" ]; do
		echo "round $r alone: $("$D/allocloop" 20000)"
		echo "round $r probes: $("$B/rsswatch" record --db "$D/a.db" -q -i 1s -- \
			"$D/allocloop" 20000 2>/dev/null)"
		echo "round $r stacks: $("$B/rsswatch" record --db "$D/a.db" -q -i 1s --stacks -- \
			"$D/allocloop" 20000 2>/dev/null)"
		r=$((r + 1))
	done
	"$B/rsswatch" show --db "$D/a.db" 2>/dev/null | sed -n '/^on the GPU/,/^$/p'
} 2>&1 | tee "$OUT/gpu-stacks-cost.log"
