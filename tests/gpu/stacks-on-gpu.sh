#!/bin/sh
# Runs on the GPU machine, as root: record --stacks with the GPU probes on the real
# driver. A CUDA C program of known blocks from named functions (tests/gpu/stacks.cu)
# must have each function's bytes exact in the snapshot at the GPU's peak, beside
# nvidia-smi; then PyTorch (tests/gpu/stacks_torch.py), to see which native frames the
# caching allocator's segments are charged to. B=DIR holds rsswatch (default build).
# Writes $OUT/gpu-stacks.log, and PyTorch's run as $OUT/torch-stacks.html.
set -u
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT"
B=${B:-build}
D=$(mktemp -d /tmp/gpu-stacks.XXXXXX)	# rsswatch refuses a database in /tmp itself
export RSSWATCH_DB=$D/x.db
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
held() {	# held FUNCTION: bytes and blocks the last run's GPU snapshot charges to it
	python3 - "$RSSWATCH_DB" "$1" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
b, n = c.execute("select ifnull(sum(b.bytes), 0), ifnull(sum(b.blocks), 0) from stack_bytes b"
                 " join stack s on s.run_id = b.run_id and s.id = b.stack_id"
                 " where b.run_id = (select max(id) from run) and b.at = 'gpu'"
                 " and s.frames like ?", ("%" + sys.argv[2] + "%",)).fetchone()
print(b, n)
PY
}
{
	nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
	nvcc -O2 -cudart shared -o "$D/stacks" tests/gpu/stacks.cu || exit 1
	nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 50 \
		>"$D/smi.txt" 2>/dev/null &
	smi=$!
	base=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits)
	"$B/rsswatch" record -v --stacks -i 1s -- "$D/stacks" 300
	echo "record exit $?"
	kill "$smi"
	"$B/rsswatch" show | sed -n '/^on the GPU/,/^$/p'
	"$B/rsswatch" show --stacks | sed -n '/^on the GPU/,/^$/p' | head -40
	MiB=1048576
	for f in "alloc_weights $((2048 * MiB)) 1" "alloc_batch $((1024 * MiB)) 4" \
		 "alloc_workspace $((512 * MiB)) 1"; do
		set -- $f
		got=$(held "$1")
		if [ "$got" = "$2 $3" ]; then echo "ok: $1 holds $got"; else echo "FAIL: $1 holds $got, not $2 $3"; fi
	done
	echo "nvidia-smi: highest $(sort -n "$D/smi.txt" | tail -1) MiB, $base MiB before the run"
	echo "--- PyTorch"
	"$B/rsswatch" record -v --stacks -i 1s -- python3 tests/gpu/stacks_torch.py >"$D/torch.txt"
	echo "record exit $?"
	cat "$D/torch.txt"
	reserved=$(sed -n 's/^torch: reserved \([0-9]*\) MiB.*/\1/p' "$D/torch.txt")
	got=$(held "")
	if [ "${got% *}" = "$((reserved * MiB))" ]; then echo "ok: the GPU snapshot holds torch's reserved $reserved MiB ($got)"
	else echo "FAIL: the GPU snapshot holds $got, torch reserved $reserved MiB"; fi
	"$B/rsswatch" show | sed -n '/^gpu peak/p;/^on the GPU/,/^$/p'
	"$B/rsswatch" show --stacks | sed -n '/^on the GPU/,/^$/p' | head -60
	"$B/rsswatch" export --stacks=gpu | cut -c1-400
	"$B/rsswatch" report -o "$OUT/torch-stacks.html" && echo "report: $OUT/torch-stacks.html"
} 2>&1 | tee "$OUT/gpu-stacks.log"
