#!/bin/sh
# rsswatch record with GPU figures from the fake NVML library (tests/fake/fake_nvml.c):
# the peak, per-device export columns at the scripted times, the live line, ls, --no-gpu,
# no driver, a device lost mid-run, failing process queries and --gpu-interval.
# Prints TAP.
. tests/t/lib.sh
fake=$BUILD/fake/libnvidia-ml.so.1
if [ ! -f "$fake" ]; then
	echo "1..0 # SKIP $fake not built"
	exit 0
fi
hog=
at_exit 'touch "$T/go"; [ -z "$hog" ] || wait "$hog" 2>/dev/null'
db=$RSSWATCH_DB
record() {	# record NAME SCRIPT [ARGS...]: record the memhog; NAME.err and rc
	name=$1 script=$2; shift 2
	RSSWATCH_NVML_LIB=$fake FAKE_NVML_SCRIPT=$script "$RSW" record --db "$db" \
		-p "$hog" "$@" >"$T/$name.out" 2>"$T/$name.err"
	rc=$?
}
json_of() {	# json_of NAME: the last run as NAME.json
	"$RSW" show --db "$db" --json >"$T/$1.json" 2>/dev/null
}
export_csv() {	# export_csv NAME: the last run as NAME.csv
	"$RSW" export --db "$db" --format csv >"$T/$1.csv" 2>/dev/null
}
jval() {	# jval FILE PATH: a JSON value (JSON null prints "null")
	sqlite3 :memory: "select case json_type(readfile('$1'),'$2') when 'null' then 'null'
		else json_extract(readfile('$1'),'$2') end"
}
jis() {		# jis FILE PATH VALUE
	test "$(jval "$1" "$2")" = "$3"
}
has_col() {	# has_col CSV NAME
	head -n 1 "$1" | tr ',' '\n' | grep -qx "$2"
}
col() {		# col CSV NAME: "elapsed value" per row
	awk -F, -v name="$2" 'NR == 1 { for (i = 1; i <= NF; i++) { if ($i == name) c = i;
		if ($i == "elapsed_s") e = i }; next } c { print $e, $c }' "$1"
}
# rows_are CSV LO HI G0 G1: every row with LO <= elapsed_s < HI (there is at least one)
# has gpu0_bytes G0, gpu1_bytes G1 and gpu_bytes G0 + G1.
rows_are() {
	awk -F, -v lo="$2" -v hi="$3" -v g0="$4" -v g1="$5" '
		NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$c["elapsed_s"] + 0 >= lo && $c["elapsed_s"] + 0 < hi {
			rows++
			if ($c["gpu0_bytes"] != g0 || $c["gpu1_bytes"] != g1 ||
			    $c["gpu_bytes"] != g0 + g1) bad++
		}
		END { exit !(rows > 0 && bad == 0) }' "$1"
}
mib() { echo $(($1 * 1048576)); }
jge() {		# jge FILE PATH N: a JSON number >= N
	v=$(jval "$1" "$2")
	[ -n "$v" ] && [ "$v" != null ] && [ "$v" -ge "$3" ]
}
header_has() {	# header_has CSV TEXT
	head -n 1 "$1" | grep -qF -- "$2"
}
not_grep() {	# not_grep ERE FILE: no line matches (case-insensitive)
	! grep -Eiq -- "$1" "$2"
}
only_values() {	# only_values CSV NAME ERE: every value of the column matches ERE
	col "$1" "$2" | cut -d' ' -f2 | grep -vxE -- "$3" | { ! grep -q .; }
}
last_of() {	# last_of CSV NAME: the column's value in the last row
	col "$1" "$2" | tail -n 1 | cut -d' ' -f2
}

# The target: a process that waits until the end of the suite.
"$HOG" +4M await "$T/go" &
hog=$!
pid=$hog

# Device 0 uses 100M, then 300M over [300ms, 700ms), then 200M; device 1 50M, 500M, 20M
# over the same windows: the highest total is 800M, held for 400ms.
cat >"$T/two" <<END
device 0 name "Fake H200" total 141G used 10G
device 1 name "Fake H200" total 141G used 10G
proc $pid device 0 bytes 100M to ms 300
proc $pid device 0 bytes 300M from ms 300 to ms 700
proc $pid device 0 bytes 200M from ms 700
proc $pid device 1 bytes 50M to ms 300
proc $pid device 1 bytes 500M from ms 300 to ms 700
proc $pid device 1 bytes 20M from ms 700
END
record main "$T/two" -i 50ms -d 1s
check "record with the fake driver exits 0" test "$rc" -eq 0
json_of main
export_csv main
check "show --json: peak_gpu_bytes is the scripted highest total (800 MiB)" \
	jis "$T/main.json" '$.peak_gpu_bytes' "$(mib 800)"
check "show --json: the recording ran to its duration" jis "$T/main.json" '$.outcome' stopped
check "export csv has gpu_bytes, gpu0_bytes and gpu1_bytes columns" \
	header_has "$T/main.csv" ",gpu_bytes,gpu0_bytes,gpu1_bytes"
check "export: 100 MiB + 50 MiB before 300ms" \
	rows_are "$T/main.csv" 0 0.25 "$(mib 100)" "$(mib 50)"
check "export: 300 MiB + 500 MiB between 300ms and 700ms" \
	rows_are "$T/main.csv" 0.5 0.7 "$(mib 300)" "$(mib 500)"
check "export: 200 MiB + 20 MiB after 700ms" \
	rows_are "$T/main.csv" 0.9 2 "$(mib 200)" "$(mib 20)"
check "export: no row has a total the script never gave" \
	only_values "$T/main.csv" gpu_bytes "$(mib 150)|$(mib 800)|$(mib 220)"
check "the live line shows GPU memory" grep -q ' gpu [0-9.]* [KMGT]\{0,1\}i\{0,1\}B' "$T/main.err"
"$RSW" ls --db "$db" >"$T/ls.out" 2>&1
check "ls shows a GPU PEAK column" grep -q '^ *ID .* GPU PEAK ' "$T/ls.out"
check "ls shows the run's GPU peak" grep -Eq '^ +1 .* 800\.0 MiB ' "$T/ls.out"

record nogpu "$T/two" -i 50ms -d 300ms --no-gpu
check "--no-gpu: exit 0" test "$rc" -eq 0
json_of nogpu
export_csv nogpu
check "--no-gpu: peak_gpu_bytes is null" jis "$T/nogpu.json" '$.peak_gpu_bytes' null
check "--no-gpu: the run has samples" jge "$T/nogpu.json" '$.samples' 3
check "--no-gpu: no gpu columns in the export" not_grep gpu "$T/nogpu.csv"
check "--no-gpu: no gpu on the live line" not_grep " gpu " "$T/nogpu.err"
"$RSW" ls --db "$db" >"$T/ls.out" 2>&1
check "ls: a run without GPU figures shows - in the GPU PEAK column" \
	grep -Eq '^ +2 .* +- +still running' "$T/ls.out"

# No driver at all.
nodrv() {	# nodrv NAME [ARGS...]
	name=$1; shift
	RSSWATCH_NVML_LIB=/nonexistent/libnvidia-ml.so.1 "$RSW" record --db "$db" -p "$hog" \
		-i 50ms -d 300ms "$@" >"$T/$name.out" 2>"$T/$name.err"
	rc=$?
}
nodrv nodrv
check "no driver: recording exits 0" test "$rc" -eq 0
json_of nodrv
check "no driver: peak_gpu_bytes is null" jis "$T/nodrv.json" '$.peak_gpu_bytes' null
check "no driver: samples were recorded" jge "$T/nodrv.json" '$.samples' 3
check "no driver: nothing about GPUs without -v" not_grep "gpu|nvml|nvidia" "$T/nodrv.err"
nodrv nodrv_v -v
check "no driver, -v: exit 0" test "$rc" -eq 0
check "no driver, -v: exactly one line about the GPU" \
	test "$(grep -Eic 'gpu|nvml|nvidia' "$T/nodrv_v.err")" -eq 1
check "no driver, -v: the line says why" grep -q 'nonexistent/libnvidia-ml.so.1' "$T/nodrv_v.err"

# Device 1 is lost from its third memory query on; device 0 goes from 100M to 300M at
# 600ms, which must still be recorded.
cat >"$T/lost" <<END
device 0 total 141G used 10G
device 1 total 141G used 10G
proc $pid device 0 bytes 100M to ms 600
proc $pid device 0 bytes 300M from ms 600
proc $pid device 1 bytes 50M
fail memory device 1 error lost from call 3
END
record lost "$T/lost" -i 50ms -d 1s
check "lost device: exit 0" test "$rc" -eq 0
json_of lost
export_csv lost
check "lost device: the recording ran to its duration" jis "$T/lost.json" '$.outcome' stopped
check "lost device: samples to the end" jge "$T/lost.json" '$.samples' 15
# (its first figure: at the first sample, or the next where the GPU poll had not run
# yet when the first sample was taken)
check "lost device: device 1 was recorded before it was lost" \
	test "$(col "$T/lost.csv" gpu1_bytes | awk '$2 != "" { print $2; exit }')" = "$(mib 50)"
check "lost device: device 0 is still read after the loss (300 MiB at the end)" \
	test "$(last_of "$T/lost.csv" gpu0_bytes)" = "$(mib 300)"
check "lost device: the total at the end is device 0's alone" \
	test "$(last_of "$T/lost.csv" gpu_bytes)" = "$(mib 300)"
check "lost device: peak_gpu_bytes is device 0's 300 MiB" \
	jis "$T/lost.json" '$.peak_gpu_bytes' "$(mib 300)"
# Each row's per-device columns add up to its total (a lost device has no figure).
sums_agree() {
	awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		{ if ($c["gpu0_bytes"] + $c["gpu1_bytes"] != $c["gpu_bytes"]) bad++ }
		END { exit bad > 0 }' "$1"
}
check "lost device: gpu0_bytes + gpu1_bytes = gpu_bytes on every row" sums_agree "$T/lost.csv"

# The process query of device 0 fails for a while, then works again.
cat >"$T/procfail" <<END
device 0 total 141G used 10G
device 1 total 141G used 10G
proc $pid device 0 bytes 100M
proc $pid device 1 bytes 50M
fail procs device 0 error unknown from call 2 to call 4
END
record procfail "$T/procfail" -i 50ms -d 1s
check "failing process query: exit 0" test "$rc" -eq 0
json_of procfail
export_csv procfail
check "failing process query: the recording ran to its duration" \
	jis "$T/procfail.json" '$.outcome' stopped
check "failing process query: peak_gpu_bytes from the good reads" \
	jis "$T/procfail.json" '$.peak_gpu_bytes' "$(mib 150)"
check "failing process query: the total is back at the end" \
	test "$(last_of "$T/procfail.csv" gpu_bytes)" = "$(mib 150)"
cat >"$T/procdead" <<END
device 0 total 141G used 10G
proc $pid device 0 bytes 100M
fail procs error no_permission
END
record procdead "$T/procdead" -i 50ms -d 300ms
check "process query always failing: exit 0" test "$rc" -eq 0
json_of procdead
check "process query always failing: peak_gpu_bytes is null (usage unknown)" \
	jis "$T/procdead.json" '$.peak_gpu_bytes' null

# --gpu-interval
"$RSW" record --db "$db" -p "$hog" -d 100ms --gpu-interval 0 >/dev/null 2>"$T/gi.err"
check "--gpu-interval 0: exit 2" test $? -eq 2
"$RSW" record --db "$db" -p "$hog" -d 100ms --gpu-interval 1x >/dev/null 2>"$T/gi.err"
check "--gpu-interval 1x: exit 2" test $? -eq 2
check "--gpu-interval 1x: the message names the value" grep -q "'1x'" "$T/gi.err"
# Device 0's figure changes every 20ms; read every 200ms it may change only that often.
i=0
: >"$T/fast"
echo "device 0 total 141G used 10G" >>"$T/fast"
while [ $i -lt 100 ]; do
	echo "proc $pid device 0 bytes $((i + 1))M from ms $((i * 20)) to ms $((i * 20 + 20))" >>"$T/fast"
	i=$((i + 1))
done
record fast "$T/fast" -i 20ms -d 1s --gpu-interval 200ms
check "--gpu-interval 200ms: exit 0" test "$rc" -eq 0
export_csv fast
col "$T/fast.csv" gpu0_bytes | awk '$2 != prev { print $1; prev = $2 }' >"$T/fast.changes"
check "--gpu-interval 200ms: the figure changed over the run" \
	test "$(wc -l <"$T/fast.changes")" -ge 3
check "--gpu-interval 200ms: at most 6 values in 1s" \
	test "$(wc -l <"$T/fast.changes")" -le 6
# (a read is seen at the next sample, which a loaded machine may delay: one change late
# and the next on time come closer than 200ms, never closer than 200ms less a delay)
check "--gpu-interval 200ms: changes are about 200ms apart (none under 150ms)" \
	awk 'NR > 1 && $1 - prev < 0.150 { bad = 1 } { prev = $1 } END { exit bad }' "$T/fast.changes"
check "--gpu-interval 200ms: samples are still every 20ms" \
	test "$(awk 'END { print NR - 1 }' "$T/fast.csv")" -ge 25

# --tree: the GPU memory of every member counts. A shell with two memhog children, each
# given GPU memory in the fake: 1G and 2G on device 0.
sh -c "\"$HOG\" +2M await \"$T/go\" & \"$HOG\" +2M await \"$T/go\" & wait" &
tree=$!
kids=
deadline=$(($(date +%s) + 10))
while [ "$(echo $kids | wc -w)" -lt 2 ] && [ "$(date +%s)" -le "$deadline" ]; do
	kids=$(cat /proc/$tree/task/$tree/children 2>/dev/null)
done
set -- $kids
printf 'device 0 total 141G used 10G\nproc %s device 0 bytes 1G\nproc %s device 0 bytes 2G\n' \
	"$1" "$2" >"$T/tree"
RSSWATCH_NVML_LIB=$fake FAKE_NVML_SCRIPT=$T/tree "$RSW" record --db "$db" -q -t -p "$tree" \
	-i 100ms -d 400ms >/dev/null 2>&1
json_of tree
check "--tree: peak_gpu_bytes sums the children's 1G and 2G" \
	jis "$T/tree.json" '$.peak_gpu_bytes' "$(mib 3072)"
done_testing
