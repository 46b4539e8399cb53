#!/bin/sh
# GPU memory has no high-water mark: rsswatch reads it every 20ms by default and each
# sample keeps the highest figures since the one before. With the fake NVML library
# (tests/fake/fake_nvml.c), a 150ms spike between two samples one second apart must be
# the next sample's figure and the run's peak; read once a second it is missed; a spike
# after the last sample still counts for the peak; and a recording without a faster GPU
# poll (no driver, or --gpu-interval no faster than the sampling) wakes up only to
# sample. The fake's query log says when the driver was asked. Prints TAP.
. tests/t/lib.sh
fake=$BUILD/fake/libnvidia-ml.so.1
if [ ! -f "$fake" ]; then
	echo "1..0 # SKIP $fake not built"
	exit 0
fi
hog=
rec=
at_exit '[ -z "$rec" ] || { kill "$rec" 2>/dev/null && wait "$rec" 2>/dev/null; }; touch "$T/go"; [ -z "$hog" ] || wait "$hog" 2>/dev/null'
db=$RSSWATCH_DB
record() {	# record NAME SCRIPT [ARGS...]: record the memhog; NAME.err, NAME.log and rc
	name=$1 script=$2; shift 2
	RSSWATCH_NVML_LIB=$fake FAKE_NVML_SCRIPT=$script FAKE_NVML_LOG=$T/$name.log \
		"$RSW" record --db "$db" -p "$hog" "$@" >"$T/$name.out" 2>"$T/$name.err"
	rc=$?
}
json_of() {	# json_of NAME: the last run as NAME.json
	"$RSW" show --db "$db" --json >"$T/$1.json" 2>/dev/null
}
jis() {		# jis FILE PATH VALUE: a JSON value
	test "$(sqlite3 :memory: "select json_extract(readfile('$1'),'$2')")" = "$3"
}
column() {	# column NAME COL: the export's column, one line of values per run
	"$RSW" export --db "$db" --format csv 2>/dev/null | awk -F, -v name="$2" '
		NR == 1 { for (i = 1; i <= NF; i++) if ($i == name) c = i; next }
		{ printf "%s%s", sep, $c; sep = " " } END { print "" }'
}
used_of() {	# used_of: device 0's used bytes at each sample of the last run
	sqlite3 "$db" "select group_concat(used_bytes, ' ') from (select used_bytes from gpu
		where device = 0 and run_id = (select max(id) from run) order by elapsed_ns)"
}
queries() {	# queries LOG [FROM TO]: process queries in the fake's log (at FROM <= ms < TO)
	awk -v lo="${2:--1}" -v hi="${3:-999999999}" \
		'$2 == "procs" && $1 >= lo && $1 < hi { k++ } END { print k + 0 }' "$1"
}
mib() { echo $(($1 * 1048576)); }

"$HOG" +4M await "$T/go" &
hog=$!

# 500 MiB, 6 GiB from 1300ms to 1450ms after nvmlInit (between the samples at about 1s
# and 2s), then 500 MiB again; the device's used memory goes from 10 to 16 GiB with it.
cat >"$T/spike" <<END
device 0 name "Fake H200" total 141G used 10G
used device 0 bytes 16G from ms 1300 to ms 1450
proc $hog device 0 bytes 500M to ms 1300
proc $hog device 0 bytes 6G from ms 1300 to ms 1450
proc $hog device 0 bytes 500M from ms 1450
END
record spike "$T/spike" -i 1s -d 2500ms
check "spike: exit 0" test "$rc" -eq 0
json_of spike
check "spike: four samples, one a second and one at the stop (2.5 s)" jis "$T/spike.json" '$.samples' 4
check "spike: the driver was asked during the spike" \
	test "$(queries "$T/spike.log" 1300 1450)" -ge 1
check "spike: the driver was asked about every 20ms (at least 60 times in 2.5s)" \
	test "$(queries "$T/spike.log")" -ge 60
check "spike: peak_gpu_bytes is the 6 GiB spike" \
	jis "$T/spike.json" '$.peak_gpu_bytes' "$(mib 6144)"
check "spike: the sample after the spike stores it (gpu_bytes)" \
	test "$(column spike gpu_bytes)" = "$(mib 500) $(mib 500) $(mib 6144) $(mib 500)"
check "spike: and as device 0's figure (gpu0_bytes)" \
	test "$(column spike gpu0_bytes)" = "$(mib 500) $(mib 500) $(mib 6144) $(mib 500)"
check "spike: the device's used memory keeps its high too" \
	test "$(used_of)" = "$(mib 10240) $(mib 10240) $(mib 16384) $(mib 10240)"
check "spike: the live line shows it" grep -q ' gpu 6\.0 GiB' "$T/spike.err"

# The old pace: one read per sample misses it.
record slow "$T/spike" -i 1s -d 2500ms --gpu-interval 1s
check "--gpu-interval 1s: exit 0" test "$rc" -eq 0
json_of slow
check "--gpu-interval 1s: one read per sample" test "$(queries "$T/slow.log")" -le 3
check "--gpu-interval 1s: the spike is missed (peak 500 MiB)" \
	jis "$T/slow.json" '$.peak_gpu_bytes' "$(mib 500)"

# A spike after the last sample, before the recording ends: the run's peak has it.
cat >"$T/late" <<END
device 0 total 141G used 10G
proc $hog device 0 bytes 500M to ms 300
proc $hog device 0 bytes 6G from ms 300 to ms 450
proc $hog device 0 bytes 500M from ms 450
END
record late "$T/late" -i 1s -d 700ms
check "late spike: exit 0" test "$rc" -eq 0
json_of late
check "late spike: two samples (at the start and at the stop)" jis "$T/late.json" '$.samples' 2
check "late spike: peak_gpu_bytes has the spike no sample took" \
	jis "$T/late.json" '$.peak_gpu_bytes' "$(mib 6144)"

# Wake-ups: a recording sampling once a second, seen after its second sample. With the
# GPU poll every 20ms it has woken up about 50 times by then; without a GPU (or with GPU
# reads no faster than the samples) only to sample and to write.
wakeups() {	# wakeups NAME LIB [ARGS...]: voluntary context switches after the 2nd sample
	name=$1 lib=$2; shift 2
	RSSWATCH_NVML_LIB=$lib FAKE_NVML_SCRIPT=$T/spike "$RSW" record --db "$db" -p "$hog" \
		-i 1s -d 10s "$@" >/dev/null 2>"$T/$name.err" &
	rec=$!
	deadline=$(($(date +%s) + 10))
	while [ "$(grep -c '^[0-9][0-9]:' "$T/$name.err")" -lt 2 ] &&
	      [ "$(date +%s)" -le "$deadline" ]; do
		sleep 0.05
	done
	awk '/^voluntary_ctxt_switches/ { print $2 }' "/proc/$rec/status"
	kill "$rec"
	wait "$rec"
	rec=
}
sw_gpu=$(wakeups wgpu "$fake")
sw_none=$(wakeups wnone /nonexistent/libnvidia-ml.so.1)
sw_slow=$(wakeups wslow "$fake" --gpu-interval 1s)
check "wake-ups: the GPU poll wakes the recorder (at least 40 in 1s; saw $sw_gpu)" \
	test "${sw_gpu:-0}" -ge 40
check "wake-ups: no driver, no poll (at most 20; saw $sw_none)" test "${sw_none:-99}" -le 20
check "wake-ups: GPU read with each sample, no poll between (at most 20; saw $sw_slow)" \
	test "${sw_slow:-99}" -le 20
done_testing
