#!/bin/bash
# Runs on the GPU machine, as root: the GPU probes (eBPF uprobes on libcuda.so) against
# the real driver. Spikes of a CUDA C program (tests/gpu/spikes.cu: cudaMalloc held
# 150, 5 and 1 ms, cudaMallocAsync, cudaMallocManaged, cuMemCreate) and of PyTorch
# (tests/gpu/spike.py: 6 GiB for 150 ms and 5 ms, by default and with expandable
# segments), each recorded at -i 1s with the probes and with --no-bpf (NVML every
# 20 ms), beside nvidia-smi every 50 ms; then the recorder's CPU a second on an idle
# target for each way of recording GPUs. Everything into $OUT/gpu-h200-probes.log.
#   B=DIR holds rsswatch and rusage (default build/bench and build)
set -u
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT"
R=${B:-build}/rsswatch
RU=${B:-build/bench}/rusage
PART=${PART:-all}
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
D=$(mktemp -d /tmp/probes.XXXXXX)	# rsswatch refuses a database in /tmp itself
db=$D/x.db
last() {	# last: the last run's GPU peak, its time and source, and gpu by sample
	python3 - "$db" "$1" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
rid, peak, at, src, t0 = c.execute("select id, peak_gpu, peak_gpu_at, peak_gpu_source,"
                                   " started_at from run order by id desc limit 1").fetchone()
print(f"run {rid}: peak_gpu {peak} at +{(at - t0) / 1e9:.6f}s ({at} ns) from {src}")
print("gpu by sample:", " ".join(f"{e / 1e9:.1f}s={g}" for e, g in c.execute(
    "select elapsed_ns, gpu from sample where run_id = ? order by elapsed_ns", (rid,))))
stamps = []
try:
    for line in open(sys.argv[2]):
        w = line.split()
        if w and w[0] == "spike:":
            k = w.index("realtime_ns")
            stamps.append(("torch", w[w.index("hold_s") + 1], int(w[k + 1]), int(w[k + 2])))
        elif len(w) == 5:
            stamps.append((w[0], w[2], int(w[3]), int(w[4])))
except OSError:
    pass
for kind, hold, a, b in stamps:
    inside = a <= at <= b
    print(f"spike {kind} hold {hold}: {a}..{b}: peak time {'INSIDE' if inside else 'outside'}"
          + ("" if inside else f" (off by {min(abs(at - a), abs(at - b)) / 1e6:.3f} ms)"))
PY
}
smi_max() {	# smi_max FILE: the highest used_memory nvidia-smi listed, MiB
	awk -F', ' '$3 + 0 > m { m = $3 + 0 } END { print m + 0 " MiB (" NR " lines)" }' "$1"
}
record() {	# record NAME ARGS... -- COMMAND: with nvidia-smi beside it
	name=$1; shift
	nvidia-smi --query-compute-apps=timestamp,pid,used_memory --format=csv,noheader,nounits \
		-lms 50 >"$D/smi.$name" 2>/dev/null &
	smi=$!
	sleep 0.5
	echo "### $name: rsswatch record -v -i 1s $*"
	"$R" record -v -i 1s --db "$db" -l "$name" "$@" >"$D/rec.$name" 2>&1
	echo "exit $?"
	kill $smi; wait $smi 2>/dev/null
	cat "$D/rec.$name"
	echo "nvidia-smi every 50 ms, highest: $(smi_max "$D/smi.$name")"
}
{
	echo "### $(date -u +%FT%TZ) $(uname -r)"
	nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
	python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
	echo "### the driver's files"
	ls -liL /usr/local/nvidia/lib64/libcuda.so.1 /usr/local/nvidia/lib64/libnvidia-ml.so.1 \
		/usr/lib/x86_64-linux-gnu/libcuda.so.1 2>&1
	ldconfig -p | grep -E 'libcuda\.so|libnvidia-ml' | head
	echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
	if [ "$PART" != cpu ]; then
	nvcc -O2 -o "$D/spikes" tests/gpu/spikes.cu -L/usr/local/nvidia/lib64 -lcuda || exit 1
	C="malloc:6:150 malloc:6:5 malloc:6:1 async:6:5 managed:4:5 vmm:6:5"
	for mode in probes nobpf; do
		args=; [ $mode = nobpf ] && args=--no-bpf
		: >"$D/st.$mode"
		record "c-$mode" $args -- "$D/spikes" "$D/st.$mode" $C
		last "$D/st.$mode"
	done
	for mode in probes nobpf expandable; do
		args=; [ $mode = nobpf ] && args=--no-bpf
		conf=; [ $mode = expandable ] && conf=expandable_segments:True
		PYTORCH_CUDA_ALLOC_CONF=$conf record "torch-$mode" $args -- \
			python3 tests/gpu/spike.py 6 0.15,0.005
		last "$D/rec.torch-$mode"
	done
	fi
	if [ "$PART" != spikes ]; then
	echo "### CPU of rsswatch record -i 1s -p (an idle CUDA process), from wait4: a 25 s"
	echo "### run minus a 5 s one, over 20 s, leaves start-up (NVML, the probes) out"
	python3 -c 'import torch, time; torch.zeros(1, device="cuda"); time.sleep(600)' &
	sp=$!
	sleep 8
	for args in "" "--gpu-interval 20ms" "--no-bpf" "--no-gpu"; do
		for d in 5 25; do
			"$RU" "$R" record --db "$D/cpu.db" -q -p $sp -i 1s -d ${d}s $args 2>"$D/ru.$d" >/dev/null
			sed -n 's/.*cpu_s=\([0-9.]*\).*/\1/p' "$D/ru.$d" >"$D/cpu.$d"
		done
		awk -v a="$(cat "$D/cpu.5")" -v b="$(cat "$D/cpu.25")" -v args="${args:-(default: probes, NVML at 1s)}" \
			'BEGIN { printf "# -i 1s %s: %.3f s in 5 s, %.3f s in 25 s: %.0f us of CPU per second\n", args, a, b, (b - a) / 20 * 1e6 }'
	done
	echo "### what the probes cost a process that calls the driver: cudaMalloc + cudaFree"
	echo "### of 1 MiB, alone, then while a recorder of another process has them attached"
	nvcc -O2 -o "$D/allocloop" tests/gpu/allocloop.cu || exit 1
	for round in 1 2 3; do
		echo "round $round, alone: $("$D/allocloop" 20000)"
		"$R" record --db "$D/cpu.db" -q -p $sp -i 1s -d 60s >/dev/null 2>&1 &
		rec=$!
		sleep 4	# the probes are on within a second or two
		echo "round $round, beside a recorder (its target: pid $sp): $("$D/allocloop" 20000)"
		kill -INT $rec; wait $rec
		echo "round $round, a target of the recorder: $("$R" record --db "$D/cpu.db" -q -i 1s \
			-- "$D/allocloop" 20000 2>/dev/null)"
	done
	kill $sp
	fi
} 2>&1 | tee -a "$OUT/gpu-h200-probes.log"
