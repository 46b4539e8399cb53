#!/bin/bash
# Runs on the GPU machine: a 150 ms spike to 6 GiB (tests/gpu/spike.py) recorded with
# `record -i 1s`, with the default GPU poll (20 ms) and with --gpu-interval 1s; then
# the CPU cost of the poll on an idle target; everything into $OUT/gpu-h200-spike.log.
#   B=DIR (rsswatch, rusage, bench_nvml; default build with build/bench) SPIKE=spike.py
set -u
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT"
R=${B:-build}/rsswatch
RU=${B:-build/bench}/rusage
BN=${B:-build/bench}/bench_nvml
SPIKE=${SPIKE:-tests/gpu/spike.py}
# rsswatch refuses a database in a directory every user can write (/tmp)
D=$(mktemp -d /tmp/spike.XXXXXX)
db=$D/x.db
peak() {	# peak: peak_gpu_bytes and samples of the last run in $db
	"$R" show --db "$db" --json | python3 -c 'import json, sys; r = json.load(sys.stdin)
print(r["peak_gpu_bytes"], r["samples"])'
}
{
	echo "### $(date -u +%FT%TZ) $(uname -r)"
	nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
	python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
	"$R" gpus
	echo "### NVML's view and nvidia-smi's, 6 GiB held 2 s (no recorder)"
	python3 "$SPIKE" --smi
	for run in fast1 slow1 fast2 slow2; do
		case $run in
		fast*) args=""; what="default GPU poll" ;;
		slow*) args="--gpu-interval 1s"; what="--gpu-interval 1s" ;;
		esac
		echo "### $run: rsswatch record -v -i 1s $args --db $db -- python3 spike.py ($what)"
		"$R" record -v -i 1s $args --db "$db" -l "$run" -- python3 "$SPIKE" >"$D/rec.out" 2>&1
		echo "exit $?"
		cat "$D/rec.out"
		"$R" export --db "$db" --format csv | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++)
			if ($i == "elapsed_s" || $i ~ /^gpu/) c[++n] = i }
			{ for (k = 1; k <= n; k++) printf "%s%s", $c[k], k < n ? "," : "\n" }'
		echo "peak_gpu_bytes samples: $(peak)"
		# rsswatch's peak against NVML's figure for the process during the spike
		echo "$(peak) $(grep -o 'nvml_proc_bytes [0-9]*' "$D/rec.out" | cut -d' ' -f2)" |
			awk -v run="$run" '{ r = $1 / $3; printf "CHECK %s: peak_gpu_bytes %.0f, NVML during the spike %.0f, ratio %.4f: %s\n",
				run, $1, $3, r, (r > 0.95 && r < 1.05) ? "within 5%" : "NOT within 5%" }'
		python3 -c 'import sqlite3, sys
for row in sqlite3.connect(sys.argv[1]).execute("select elapsed_ns / 1e9, device,"
        " target_bytes, used_bytes from gpu where run_id = (select max(id) from run)"
        " order by elapsed_ns"):
    print("gpu row: elapsed_s %.3f device %d target_bytes %s used_bytes %s" % row)' "$db"
	done
	"$R" ls --db "$db"
	echo "### NVML query cost (bench_nvml, idle device)"
	"$BN" -n 5000 $$
	echo "### CPU of rsswatch record -i 1s -p (idle sleep), from wait4: a 25 s run minus"
	echo "### a 5 s one, over 20 s, leaves NVML's start-up out"
	sleep 200 & sp=$!
	for args in "" "--gpu-interval 1s" "--no-gpu"; do
		for d in 5 25; do
			"$RU" "$R" record --db "$D/cpu.db" -q -p $sp -i 1s -d ${d}s $args 2>"$D/ru.$d" >/dev/null
			sed -n 's/.*cpu_s=\([0-9.]*\).*/\1/p' "$D/ru.$d" >"$D/cpu.$d"
		done
		awk -v a="$(cat "$D/cpu.5")" -v b="$(cat "$D/cpu.25")" -v args="${args:-(default)}" \
			'BEGIN { printf "# -i 1s %s: %.3f s in 5 s, %.3f s in 25 s: %.0f us of CPU per second\n", args, a, b, (b - a) / 20 * 1e6 }'
	done
	kill $sp
} 2>&1 | tee "$OUT/gpu-h200-spike.log"
