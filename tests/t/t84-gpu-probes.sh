#!/bin/sh
# The GPU probes end to end, as root, against the stand-in CUDA driver
# (tests/fake/fake_cuda.c) and the stand-in NVML beside it, whose figure for the target
# is a context of 500 MiB plus the blocks the driver holds for it. Recorded at -i 1s with
# NVML read once a second, a 6 GiB block held 150ms and a 7 GiB one held for no time at
# all (a free right after the allocation) are each the next sample's figure, and the
# run's peak is the larger, at a time between the workload's own clock stamps around
# it. Every allocation entry point counts and a failed allocation does not; a process
# that exits with blocks held gives them back; a target attached with -p is probed in
# the driver file it maps (a copy elsewhere, deleted), on top of what it held before;
# --no-bpf polls NVML every 20ms as before. Prints TAP.
. tests/t/lib.sh
dir=$BUILD/fake/cuda
nvml=$dir/libnvidia-ml.so.1
cuda=$dir/libcuda.so.1
if [ ! -f "$nvml" ] || [ ! -f "$cuda" ]; then
	echo "1..0 # SKIP $dir not built"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	skip "the engine needs root"
	done_testing
fi
if ! "$RSW" record -v -q -- true 2>&1 | grep -qF "from the kernel's page counts (eBPF)"; then
	skip "the eBPF engine does not load here"
	done_testing
fi

MiB=1048576
GiB=$((1024 * MiB))
q() { sql "$RSSWATCH_DB" "$1"; }
last() { q "select $1 from run order by id desc limit 1"; }
gpu_samples() {	# the last run's gpu_bytes, sample by sample
	q "select group_concat(coalesce(gpu, '-'), ' ') from (select gpu from sample
		where run_id = (select max(id) from run) order by elapsed_ns)"
}
queries() {	# queries LOG: the stand-in NVML's process queries
	awk '$2 == "procs" { k++ } END { print k + 0 }' "$1"
}
has() { case " $1 " in *" $2 "*) return 0 ;; esac; return 1; }
inside() {	# inside AT FILE N: AT (ns) between lines N and N+1 of FILE, to 1 ms
	lo=$(sed -n "$3p" "$2")
	hi=$(sed -n "$(($3 + 1))p" "$2")
	diag "between $lo and $hi: $1"
	[ -n "$1" ] && [ "$1" -ge $((lo - 1000000)) ] && [ "$1" -le $((hi + 1000000)) ]
}
gpu_env() {	# gpu_env NAME: the stand-ins' environment for a recording called NAME
	echo "RSSWATCH_NVML_LIB=$nvml FAKE_NVML_SCRIPT=$T/$1.nvml FAKE_NVML_LOG=$T/$1.log" \
	     "FAKE_CUDA_LIVE=$T/$1.live"
}
script() {	# script NAME WHO: the stand-in NVML's script: WHO holds 500 MiB and its blocks
	printf 'device 0 name "Fake H200" total 141G used 10G\n' >"$T/$1.nvml"
	printf 'proc %s device 0 bytes 500M cuda %s\n' "$2" "$T/$1.live" >>"$T/$1.nvml"
}

# --- two spikes, each between two samples a second apart
script spikes child
expect_exit 0 "two spikes recorded at -i 1s, -v" env $(gpu_env spikes) \
	"$RSW" record -v -i 1s -- "$HOG" cuda "$cuda" sleep 300ms \
	stamp "$T/st" gpu alloc 6G sleep 150ms gpu- stamp "$T/st" sleep 1200ms \
	stamp "$T/st" gpu async 7G gpu- stamp "$T/st" sleep 2200ms
check "-v says the probes are on the driver beside NVML" \
	grep -qF "GPU allocations from the driver's own calls (eBPF uprobes on 9 entry points of $cuda)" "$ERR"
check "-v says NVML is read once a second" grep -qF "GPU figures from 1 device(s), every 1000ms" "$ERR"
s=$(gpu_samples)
diag "gpu bytes by sample: $s"
check "a sample after the first spike has context + 6 GiB" has "$s" $((500 * MiB + 6 * GiB))
check "a sample after the second has context + 7 GiB" has "$s" $((500 * MiB + 7 * GiB))
check "a sample after both is back to the context" sh -c \
	"echo '$s' | grep -Eq ' $((500 * MiB + 7 * GiB)) (.* )?$((500 * MiB))( |\$)'"
check "the run's peak is the second spike" test "$(last peak_gpu)" = $((500 * MiB + 7 * GiB))
check "its source is the driver's allocations" test "$(last peak_gpu_source)" = allocations
check "its time is inside the spike, by the workload's own clock" \
	inside "$(last peak_gpu_at)" "$T/st" 3
n=$(queries "$T/spikes.log")
diag "NVML process queries: $n in about 4.2 s"
check "NVML was asked about once a second, not every 20ms (3 to 9 times)" \
	test "$n" -ge 3 -a "$n" -le 9
check "the summary gives the time to the millisecond and the source" grep -Eq \
	'^gpu peak +7\.5 GiB at [0-9:]{8}\.[0-9]{3} \(\+[0-9]+\.[0-9]{3}s\), from the driver.s allocations$' "$ERR"
show_json
check "show --json: peak_gpu_at to the microsecond, and its source" \
	sh -c "echo '$(sfield peak_gpu_at)' | grep -Eq '\.[0-9]{6}Z\$' && test '$(sfield peak_gpu_source)' = allocations"

# --- every entry point, and a failure
script kinds child
expect_exit 0 "one block through each entry point, and one too large" env $(gpu_env kinds) \
	FAKE_CUDA_TOTAL=20G "$RSW" record -q -i 1s -- "$HOG" cuda "$cuda" sleep 300ms \
	gpu alloc 1G gpu managed 1G gpu async 1G gpu pool 1G gpu pitch 1G gpu create 1G \
	gpu alloc 100G gpu- gpu- gpu- gpu- gpu- gpu- sleep 2200ms
check "  the stand-in refused the one too large" grep -q "cuMemAlloc_v2: error 2" "$ERR"
check "the peak is the context and six blocks of 1 GiB" \
	test "$(last peak_gpu)" = $((500 * MiB + 6 * GiB))
s=$(gpu_samples)
diag "gpu bytes by sample: $s"
check "and every block was freed: a later sample holds the context" sh -c \
	"echo '$s' | grep -Eq ' $((500 * MiB + 6 * GiB)) (.* )?$((500 * MiB))( |\$)'"

# --- a process that exits holding blocks gives them back (the driver frees them)
printf 'device 0 total 141G\n' >"$T/exits.nvml"
expect_exit 0 "a child exits holding 3 GiB, the next holds 1 GiB" env $(gpu_env exits) \
	"$RSW" record -q -i 1s -- sh -c '"$1" cuda "$2" gpu alloc 3G; "$1" cuda "$2" \
	gpu alloc 1G stamp "$3" sleep 2500ms' sh "$HOG" "$cuda" "$T/held"
s=$(gpu_samples)
diag "gpu bytes by sample: $s"
check "the peak is the first child's 3 GiB" test "$(last peak_gpu)" = $((3 * GiB))
check "a sample holds the second child's 1 GiB alone" has "$s" $((1 * GiB))
check "and none the 4 GiB of both" sh -c "! echo ' $s ' | grep -q ' $((4 * GiB)) '"

# --- -p: the driver file the target maps, found through map_files
mkdir -p "$T/other"
cp "$cuda" "$T/other/libcuda.so.1"
env FAKE_CUDA_LIVE="$T/att.live" "$HOG" cuda "$T/other/libcuda.so.1" gpu alloc 2G \
	touch "$T/loaded" await "$T/go" stamp "$T/ast" gpu pitch 6G gpu- stamp "$T/ast" \
	sleep 1200ms >"$T/hog.out" 2>&1 &
hog=$!
at_exit "touch '$T/go'; wait $hog 2>/dev/null"
wait_until 10 test -f "$T/loaded"
rm "$T/other/libcuda.so.1"	# the path names nothing now: the mapping is what counts
script att "$hog"
spawn att env $(gpu_env att) "$RSW" record -v -i 1s -p "$hog"
rec=${_bg##* }
check "-p: the recorder has sampled once" wait_until 10 grep -q ' rss ' "$T/att.err"
touch "$T/go"
finish "$rec"
cat "$T/att.err" | sed 's/^/# /' | head -8
check "-p: exit 0" test "$RC" -eq 0
check "-p: -v says the probes are on the file the target maps" \
	grep -qF "9 entry points of the libcuda.so pid $hog maps" "$T/att.err"
check "-p: the peak is the context, the 2 GiB held before and the 6 GiB spike" \
	test "$(last peak_gpu)" = $((500 * MiB + 8 * GiB))
check "-p: from the driver's allocations" test "$(last peak_gpu_source)" = allocations
check "-p: its time is inside the spike" inside "$(last peak_gpu_at)" "$T/ast" 1

# --- a driver never quiet: a thread of the target allocates and frees every
# millisecond and each process query of NVML takes 100ms (a thread left without a CPU
# that long is rare even on a loaded machine), so calls overlap the reads and they do
# not anchor the probes (as at a launched command's start, a burst). The spike is
# still the peak, at its time, on the context the reads bound from below.
env FAKE_CUDA_LIVE="$T/churn.live" "$HOG" cuda "$cuda" gpuchurn 4K touch "$T/churning" \
	await "$T/churn.go" sleep 300ms stamp "$T/cst" gpu alloc 6G gpu- stamp "$T/cst" \
	sleep 500ms >"$T/churnhog.out" 2>&1 &
churn=$!
at_exit "touch '$T/churn.go'; wait $churn 2>/dev/null"
wait_until 10 test -f "$T/churning"
script churn "$churn"
echo 'slow 100' >>"$T/churn.nvml"
spawn churn env $(gpu_env churn) "$RSW" record -v -i 100ms -p "$churn"
rec=${_bg##* }
check "a driver never quiet: the recorder has sampled once" \
	wait_until 10 grep -q ' rss ' "$T/churn.err"
touch "$T/churn.go"
finish "$rec"
check "  exit 0" test "$RC" -eq 0
p=$(last peak_gpu)
check "  the peak is the 6 GiB spike on the 500 MiB context, to a churned block (got $p)" \
	test "$p" -ge $((500 * MiB + 6 * GiB - 4096)) -a "$p" -le $((500 * MiB + 6 * GiB + 4096))
check "  from the driver's allocations" test "$(last peak_gpu_source)" = allocations
check "  at its time" inside "$(last peak_gpu_at)" "$T/cst" 1
check "  NVML was asked again soon after a read the calls overlapped (got $(queries "$T/churn.log"))" \
	test "$(queries "$T/churn.log")" -ge 3

# --- a launched command that loads a driver of its own, not the one beside NVML: the
# probes go on it at its first GPU use
mkdir -p "$T/own"
cp "$cuda" "$T/own/libcuda.so.1"
script own child
spawn own env $(gpu_env own) "$RSW" record -i 1s -- "$HOG" cuda "$T/own/libcuda.so.1" \
	await "$T/own.go" stamp "$T/ost" gpu alloc 6G gpu- stamp "$T/ost" sleep 1200ms
rec=${_bg##* }
at_exit "touch '$T/own.go'"
check "a command with its own libcuda: the recorder says it probes the file it maps" \
	wait_until 20 grep -qF "9 entry points of the libcuda.so pid" "$T/own.err"
touch "$T/own.go"	# then the spike, probed
finish "$rec"
sed 's/^/# /' "$T/own.err" | head -5
check "  exit 0" test "$RC" -eq 0
check "  the spike is the peak, from the driver's allocations" \
	test "$(last peak_gpu)" = $((500 * MiB + 6 * GiB)) -a "$(last peak_gpu_source)" = allocations
check "  at its time" inside "$(last peak_gpu_at)" "$T/ost" 1

# --- more blocks than the probes' table holds: counted, said and stored
printf 'device 0 total 141G\n' >"$T/many.nvml"
expect_exit 0 "66,000 blocks of 4 KiB, past the table of 65,536" env $(gpu_env many) \
	"$RSW" record -i 1s -- "$HOG" cuda "$cuda" gpumany 66000 4K
check "  the recorder says blocks were past the table" \
	grep -q "GPU blocks were past the probes' table" "$ERR"
d=$(last id)
ev=$(q "select detail from event where run_id = $d and kind = 'gpu_probes_incomplete'")
diag "event: $ev"
check "  a gpu_probes_incomplete event holds how many" test "${ev#dropped=}" -ge 464

# --- a driver file that lies: its cuMemAlloc_v2 points at its ELF header, not code
mkdir -p "$T/evil"
python3 - "$cuda" "$T/evil/libcuda.so.1" <<'PY'
import struct, sys
img = bytearray(open(sys.argv[1], "rb").read())
shoff, = struct.unpack_from("<Q", img, 0x28)
shentsize, shnum = struct.unpack_from("<HH", img, 0x3a)
sh = [struct.unpack_from("<IIQQQQIIQQ", img, shoff + i * shentsize) for i in range(shnum)]
for name, kind, flags, addr, off, size, link, info, align, entsize in sh:
    if kind != 11:		# SHT_DYNSYM
        continue
    strs = sh[link][4]
    for k in range(size // entsize):
        at = off + k * entsize
        st_name, = struct.unpack_from("<I", img, at)
        end = img.index(0, strs + st_name)
        if img[strs + st_name:end] == b"cuMemAlloc_v2":
            struct.pack_into("<Q", img, at + 8, 0)	# st_value
open(sys.argv[2], "wb").write(img)
PY
"$HOG" cuda "$T/evil/libcuda.so.1" touch "$T/evil.loaded" await "$T/evil.go" >"$T/evil.out" 2>&1 &
evil=$!
at_exit "touch '$T/evil.go'; wait $evil 2>/dev/null"
wait_until 10 test -f "$T/evil.loaded"
script evil "$evil"
expect_exit 0 "-p a target whose libcuda lies about a function" env $(gpu_env evil) \
	"$RSW" record -v -i 100ms -d 300ms -p "$evil"
check "  -v says no probe went on that file, and why" grep -qF \
	"the libcuda.so pid $evil maps: cuMemAlloc_v2 is not a function in its code" "$ERR"
touch "$T/evil.go"
wait "$evil"
check "  and the target was not harmed: it ran on and exited 0" test $? -eq 0

# --- --stacks: each block of device memory charged to the function that asked the
# driver for it, in the snapshot at the GPU's peak (the batches freed after it are in
# it); the host's snapshot has none of them. A program of known calls, built without
# frame pointers (tests/stacks/prog.c).
# The program stays until the recorder's loop has run (its second sample stored): a
# stack is walked with the process's maps, which its end takes away (docs/STACKS.md).
cc -O2 -g -fomit-frame-pointer -o "$T/prog" tests/stacks/prog.c -ldl
script stacks child
before=$(last id)
spawn gstk env $(gpu_env stacks) "$RSW" record -v --stacks -i 100ms -- "$T/prog" cuda "$cuda" \
	gpu-model 3000 gpu-batches 4 500 gpu-pool 1000 gpu-free-batches gpu-model 100 \
	touch "$T/gstk.done" await "$T/gstk.go"
gstk=$!
at_exit "touch '$T/gstk.go'"
wait_until 30 test -e "$T/gstk.done"
two_samples() {
	[ "$(q "select ifnull(max(samples), 0) from run where id > $before" 2>/dev/null)" -ge 2 ] \
		2>/dev/null
}
wait_until 30 two_samples
touch "$T/gstk.go"
finish "$gstk"
check "--stacks with the GPU probes: the recording exits 0 (got $RC)" test "$RC" -eq 0
gpu_held() {	# gpu_held FUNCTION: bytes and blocks of the GPU's snapshot charged to it
	q "select ifnull(sum(b.bytes), 0) || ' ' || ifnull(sum(b.blocks), 0) from stack_bytes b
		join stack s on s.run_id = b.run_id and s.id = b.stack_id
		where b.run_id = (select max(id) from run) and b.at = '$2' and s.frames like '$1%'"
}
check "--stacks: gpu_model holds 3000 MiB in one block at the GPU's peak (got $(gpu_held gpu_model gpu))" \
	test "$(gpu_held gpu_model gpu)" = "$((3000 * MiB)) 1"
check "  gpu_batch 4 blocks of 500 MiB, freed after the peak (got $(gpu_held gpu_batch gpu))" \
	test "$(gpu_held gpu_batch gpu)" = "$((2000 * MiB)) 4"
check "  gpu_pool 1000 MiB, a handle of cuMemCreate (got $(gpu_held gpu_pool gpu))" \
	test "$(gpu_held gpu_pool gpu)" = "$((1000 * MiB)) 1"
check "  nothing else on the GPU (got $(q "select count(*) from stack_bytes where at = 'gpu'
	and run_id = (select max(id) from run)") stacks)" \
	test "$(q "select count(*) from stack_bytes where at = 'gpu'
		and run_id = (select max(id) from run)")" = 3
check "  the host's snapshot holds none of the driver's blocks" \
	test "$(gpu_held gpu_ peak)" = "0 0"
check "  the run's GPU peak is the context and the 6000 MiB of blocks (got $(last peak_gpu))" \
	test "$(last peak_gpu)" = $((500 * MiB + 6000 * MiB))
check "  the snapshot's time is the run's GPU peak's, from the driver's allocations (got $(last "stacks_gpu_peak_at - peak_gpu_at") ns apart)" \
	test "$(last "peak_gpu_source = 'allocations' and stacks_gpu_peak_at = peak_gpu_at")" = 1
"$RSW" show >"$T/stacks.show"
check "  show has the GPU's table, gpu_model first" \
	sh -c "grep -A2 '^on the GPU at its peak' '$T/stacks.show' | grep -q ' gpu_model$'"
"$RSW" show --json >"$T/stacks.json"
check "  show --json: at_gpu_peak names the leaf gpu_model first" \
	test "$(jget "$T/stacks.json" '$.stacks.at_gpu_peak[0].leaf')" = gpu_model
"$RSW" export --stacks=gpu >"$T/stacks.folded"
check "  export --stacks=gpu: a folded line ending in gpu_batch with its bytes" \
	grep -q ";gpu_batch $((2000 * MiB))\$" "$T/stacks.folded"
"$RSW" report -o "$T/stacks.html"
check "  report: the GPU's flame graph, a box for gpu_model, and the host's graph too" sh -c \
	"grep -q 'id=\"flame-gpu-svg\"' '$T/stacks.html' &&
	 grep -q '<g data-n=\"gpu_model\"' '$T/stacks.html' && grep -q 'id=\"flame-svg\"' '$T/stacks.html'"

# --- --no-bpf: no probes, NVML polled every 20ms as before
script nobpf child
expect_exit 0 "--no-bpf: a 150ms spike at -i 1s" env $(gpu_env nobpf) \
	"$RSW" record -v --no-bpf -i 1s -- "$HOG" cuda "$cuda" sleep 300ms \
	gpu alloc 6G sleep 150ms gpu- sleep 1200ms
check "--no-bpf: -v says there are no probes" grep -q "no GPU probes" "$ERR"
check "--no-bpf: NVML is read every 20ms" grep -qF "every 20ms" "$ERR"
n=$(queries "$T/nobpf.log")
diag "NVML process queries: $n in about 1.7 s"
check "--no-bpf: the driver was asked at least 40 times" test "$n" -ge 40
check "--no-bpf: the spike is caught by polling" test "$(last peak_gpu)" = $((500 * MiB + 6 * GiB))
check "--no-bpf: its source is NVML" test "$(last peak_gpu_source)" = NVML

done_testing
