#!/bin/sh
# The peak: a known allocation is measured to within 2%, a spike between samples is
# caught through VmHWM, the live line has its format, and sampling keeps to its clock.
. tests/t/lib.sh

MiB=1048576
LIVE='^[0-9]{2}:[0-9]{2}:[0-9]{2} rss [0-9.]+ [KMG]iB \(anon [0-9.]+, file [0-9.]+, shmem [0-9.]+\) hwm .* avail .*'

# --- baseline: memhog with nothing allocated
expect_exit 0 "baseline run" "$RSW" record -q -i 10ms -- "$HOG" sleep 300ms exit 0
show_json
base=$(sfield peak_rss_bytes)
check "baseline peak is small and not zero ($base bytes)" test "$base" -gt 0 -a "$base" -lt $((16 * MiB))
# wait4's peak holds the child's footprint before its exec, a copy of the recorder
# (16 MiB under SANITIZE=1): the run's peak is the command's, as time -v sees it with
# its own smaller copy
tv=$(/usr/bin/time -f %M "$HOG" sleep 300ms exit 0 2>&1 >/dev/null | tail -n 1)
check "baseline peak is memhog's, not the recorder's copy ($base bytes; time -v ${tv} KiB)" \
	test "$base" -le $((tv * 1024 + MiB))

# --- a known allocation
expect_exit 0 "+256M recorded at 100ms" "$RSW" record -q -i 100ms -- "$HOG" +256M sleep 1500ms exit 0
show_json
peak=$(sfield peak_rss_bytes)
diag "peak $peak bytes, baseline $base bytes"
check "peak of +256M is at least 256 MiB ($peak)" test "$peak" -ge $((256 * MiB))
check "peak of +256M is within 2% of 256 MiB plus the baseline ($peak <= $((256 * MiB * 102 / 100 + base)))" \
	test "$peak" -le $((256 * MiB * 102 / 100 + base))
check "peak_rss_at lies within the run" \
	test "$(sqlite3 :memory: "select '$(sfield peak_rss_at)' between '$(sfield started_at)' and '$(sfield ended_at)'")" = 1
check "last sample holds the allocation too" test "$(sfield last_rss_bytes)" -ge $((256 * MiB))
dur_ms=$(sqlite3 :memory: "select cast(json_extract(readfile('$T/show.json'), '$.duration_s') * 1000 as int)")
expect=$((dur_ms / 100 + 1))
check "a sample every 100ms: $(sfield samples) samples over ${dur_ms}ms, about $expect" \
	test "$(sfield samples)" -ge $((expect - 2)) -a "$(sfield samples)" -le $((expect + 1))

# --- memory given back: the peak stays, the last sample falls
expect_exit 0 "+64M then unmapped" "$RSW" record -q -i 10ms -- "$HOG" +64M sleep 300ms - sleep 300ms exit 0
show_json
check "after unmapping: peak still >= 64 MiB ($(sfield peak_rss_bytes))" test "$(sfield peak_rss_bytes)" -ge $((64 * MiB))
check "after unmapping: the last sample is below 16 MiB ($(sfield last_rss_bytes))" \
	test "$(sfield last_rss_bytes)" -lt $((16 * MiB))

# --- a spike no sample can see, caught through VmHWM
# An attached memhog spikes once the first sample (the one at 0 s, which prints a live
# line) is taken; the next sample is an hour away. Once the spike is over, the
# recording is stopped (SIGINT): its last sample, taken at the stop, reads the VmHWM
# the spike left. However slow the machine, only those two samples are taken. The
# eBPF engine is off (--no-bpf): with it, the kernel's page counts give the peak and
# its time (tests/t/t83-kernel-peaks.sh).
first_sample() { grep -Eq "$LIVE" "$T/spike.err"; }
spawn spikehog "$HOG" +32M await "$T/spike_go" spike 400M touch "$T/spike_done" await "$T/spike_stop" exit 0
hog=$!
spawn spike "$RSW" record --no-bpf -i 1h -p "$hog"
rec=$!
wait_until 30 first_sample
touch "$T/spike_go"
wait_until 60 test -e "$T/spike_done"
kill -INT "$rec"
finish "$rec"
touch "$T/spike_stop"
check "a 400M spike between two samples, the recording stopped: exit 0 (got $RC)" test "$RC" -eq 0
finish "$hog"
show_json
peak=$(sfield peak_rss_bytes)
maxs=$(sqlite3 "$RSSWATCH_DB" "select max(rss) from sample where run_id = $(sfield id)")
diag "spike: peak $peak, highest sampled RSS $maxs"
check "spike: peak >= 98% of 432 MiB ($peak)" test "$peak" -ge $((432 * MiB * 98 / 100))
check "spike: no sample saw it (highest sampled RSS $maxs < 100 MiB)" test "$maxs" -lt $((100 * MiB))
check "spike: the summary says the peak is from VmHWM" grep -q '^peak .* from VmHWM' "$T/spike.err"
"$RSW" show >"$T/spike.txt"
check "spike: show says it too" grep -q 'from VmHWM' "$T/spike.txt"
check "spike: export hwm_bytes carries the peak" \
	test "$("$RSW" export --format csv | awk -F, 'NR > 1 && $4 > m { m = $4 } END { print m }')" = "$peak"

# --- the live line
expect_exit 0 "live lines with --every 1" "$RSW" record -i 10ms --every 1 -- "$HOG" +8M sleep 200ms exit 0
grep -E '^[0-9]{2}:[0-9]{2}:[0-9]{2} ' "$ERR" >"$T/live.txt"
show_json
n=$(lines "$T/live.txt")
check "live lines: one per sample with --every 1 ($n lines, $(sfield samples) samples)" test "$n" -eq "$(sfield samples)"
check "live lines: every line has the format" test "$(grep -Evc "$LIVE" "$T/live.txt")" -eq 0
check "live line: shows at least 8 MiB once allocated" test "$(awk '$2 == "rss" && $4 == "MiB" && $3 >= 8' "$T/live.txt" | wc -l)" -gt 0
check "live lines: a start line names the pid and run" \
	grep -q "^rsswatch: recording pid $(sfield pid) (memhog) and its descendants every 10ms as run $(sfield id) in $RSSWATCH_DB" "$ERR"

expect_exit 0 "live lines with --every 5" "$RSW" record -i 10ms --every 5 -- "$HOG" sleep 200ms exit 0
show_json
n=$(grep -Ec "$LIVE" "$ERR")
check "--every 5: a line for the first sample and every 5th ($n lines, $(sfield samples) samples)" \
	test "$n" -eq $(( ($(sfield samples) - 1) / 5 + 1 ))

expect_exit 0 "default: about a line a second" "$RSW" record -i 100ms -- "$HOG" sleep 1500ms exit 0
n=$(grep -Ec "$LIVE" "$ERR")
show_json
check "default at 100ms: a line every 10th sample, about one a second ($n lines, $(sfield samples) samples)" \
	test "$n" -eq $(( ($(sfield samples) - 1) / 10 + 1 )) -a "$n" -ge 2

expect_exit 0 "-q: recorded" "$RSW" record -q -i 10ms -- "$HOG" +8M sleep 200ms exit 0
check "-q: no live lines" test "$(grep -Ec '^[0-9]{2}:[0-9]{2}:[0-9]{2} rss' "$ERR")" -eq 0
check "-q: no start line" test "$(grep -c 'recording pid' "$ERR")" -eq 0

# --- sampling keeps to absolute deadlines
spawn hog "$HOG" +4M await "$T/go"
hog=$!
expect_exit 0 "-i 10ms -d 2s" "$RSW" record -q -i 10ms -d 2s -p "$hog"
touch "$T/go"
finish "$hog" 10
show_json
id=$(sfield id)
n=$(sfield samples)
# Never more than the grid holds (201: a late wake-up takes one sample, it does not
# shift the deadlines after it); most of its ticks, where a loaded machine skips some
# (182 under stress-ng --cpu 2, 190 or more idle).
check "-i 10ms -d 2s: 100..201 samples (got $n)" test "$n" -ge 100 -a "$n" -le 201
last=$(sqlite3 "$RSSWATCH_DB" "select max(elapsed_ns) / 1000000 from sample where run_id = $id")
check "-i 10ms -d 2s: the last sample at 1980..2010 ms (got $last)" test "$last" -ge 1980 -a "$last" -le 2010
# On the grid: a late wake-up (a loaded machine: a tenth of them 3 ms late or more)
# does not shift the later ones, so the median lateness stays small and the count
# above stays whole; relative timers would add up every delay.
med=$(sqlite3 "$RSSWATCH_DB" "select (elapsed_ns % 10000000) / 1000 from sample where run_id = $id order by 1 limit 1 offset (select count(*) / 2 from sample where run_id = $id)")
check "-i 10ms: samples stay on the 10 ms grid, no drift (median ${med} us late)" test "$med" -lt 3000

done_testing
