#!/bin/sh
# Runs on the GPU machine, as root: the Python package's PyTorch helper against real
# CUDA memory (tests/gpu/torch_gauges.py), recorded at -i 1s with the GPU probes, beside
# nvidia-smi every 100 ms. The workload checks the stored gauges against torch's own
# figures at each step; this script then sets the driver's view (the run's GPU peak,
# from the probes or NVML) beside the highest reserved gauge and nvidia-smi's highest.
# B=DIR holds rsswatch and librsswatch.so (default build). Writes $OUT/torch-gauges.log.
set -u
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT"
B=${B:-build}
D=$(mktemp -d /tmp/torch-gauges.XXXXXX)	# rsswatch refuses a database in /tmp itself
RSSWATCH_DB=$D/x.db
RSSWATCH_LIB=$PWD/$B/librsswatch.so
PYTHONPATH=$PWD/bindings/python
export RSSWATCH_DB RSSWATCH_LIB PYTHONPATH
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
{
	nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
	python3 -c 'import torch; print("torch", torch.__version__)'
	nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 100 \
		>"$D/smi.txt" 2>/dev/null &
	smi=$!
	base=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits)
	"$B/rsswatch" record -v -i 1s -- python3 tests/gpu/torch_gauges.py
	echo "record exit $?"
	kill "$smi"
	"$B/rsswatch" show
	python3 - "$RSSWATCH_DB" "$D/smi.txt" "$base" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
rid, peak, src = c.execute("select id, peak_gpu, peak_gpu_source from run order by id desc"
                           " limit 1").fetchone()
res = dict(c.execute("select name, max(value) from counter where run_id = ? group by name",
                     (rid,)).fetchall())
smi = [int(l) for l in open(sys.argv[2]) if l.strip().isdigit()]
MIB = 1 << 20
print("run %d: the driver's peak (peak_gpu) %.1f MiB from %s" % (rid, peak / MIB, src))
for k in sorted(res):
    print("  highest %s: %.1f MiB" % (k, res[k] / MIB))
r = res.get("torch_reserved_bytes", 0)
print("  peak_gpu - highest reserved: %.1f MiB (the CUDA context and what torch does"
      " not manage)" % ((peak - r) / MIB))
if smi:
    print("  nvidia-smi: highest used %d MiB, %d MiB before the run: %d MiB of the"
          " run's (%d readings)" % (max(smi), int(sys.argv[3]), max(smi) - int(sys.argv[3]),
                                    len(smi)))
PY
} 2>&1 | tee "$OUT/torch-gauges.log"
