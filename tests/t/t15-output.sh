#!/bin/sh
# What ls, show and export print: the table, the JSON objects, CSV and JSON lines.
. tests/t/lib.sh

ISO='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z$'
is_iso() { printf '%s\n' "$1" | grep -Eq "$ISO"; }
# q FILE SQL: SQL over the JSON in FILE, which the query reads as j
q() { sqlite3 :memory: "with f(j) as (select readfile('$1')) select $2 from f"; }

# --- an empty or missing database
expect_exit 0 "ls on a missing database: exit 0" "$RSW" ls
check "ls on a missing database says there are no runs" test "$(cat "$OUT")" = "no runs recorded yet"
expect_exit 0 "ls --json on a missing database: exit 0" "$RSW" ls --json
check "ls --json on a missing database prints []" test "$(cat "$OUT")" = "[]"
check "ls on a missing database creates none" test ! -e "$RSSWATCH_DB"

# --- three runs
expect_exit 0 "run 1 recorded" "$RSW" record -q -i 10ms -l alpha -- "$HOG" +8M sleep 300ms exit 0
printf '<script>"quoted"\\n\n\tend & </script>' >"$T/label.txt"
expect_exit 0 "run 2 recorded with an awkward label" \
	"$RSW" record -q -i 10ms -l "$(cat "$T/label.txt")" -- "$HOG" sleep 100ms exit 0
expect_exit 3 "run 3 recorded" "$RSW" record -q -i 10ms -l gamma -- "$HOG" +4M sleep 200ms exit 3

# --- ls table
expect_exit 0 "ls: exit 0" "$RSW" ls
check "ls: header names the columns" \
	grep -Eq '^ +ID +STARTED +LABEL +TARGET +DURATION +PEAK +OUTCOME$' "$OUT"
check "ls: header plus one line per run" test "$(lines "$OUT")" -eq 4
check "ls: a row with its label and outcome words" grep -Eq '^ +1 .* alpha .* exited with 0$' "$OUT"
check "ls: run 3 says 'exited with 3'" grep -Eq '^ +3 .* gamma .* exited with 3$' "$OUT"
check "ls: newest first" test "$(sed -n '2p' "$OUT" | awk '{print $1}')" = 3
check "ls: peak in binary units" grep -Eq '^ +1 .* [0-9.]+ MiB +exited' "$OUT"
expect_exit 0 "ls -n 1: exit 0" "$RSW" ls -n 1
check "ls -n 1: header and the newest run only" \
	sh -c "[ \$(wc -l <'$OUT') -eq 2 ] && sed -n 2p '$OUT' | grep -q '^ *3 '"
expect_exit 0 "ls --last 2: exit 0" "$RSW" ls --last 2
check "ls --last 2: two runs" test "$(lines "$OUT")" -eq 3

"$RSW" record -q -i 10ms -l "$(printf 'two\nlines')" -- "$HOG" sleep 30ms 2>/dev/null
"$RSW" ls >"$T/ls4.txt"
check "ls: a label with a newline keeps its run on one line" test "$(lines "$T/ls4.txt")" -eq 5
"$RSW" rm last >/dev/null

# --- ls --json
expect_exit 0 "ls --json: exit 0" "$RSW" ls --json
cp "$OUT" "$T/ls.json"
check "ls --json: valid JSON" jvalid "$T/ls.json"
check "ls --json: an array of 3" test "$(q "$T/ls.json" "json_type(j) || ' ' || json_array_length(j)")" = "array 3"
for k in id label host target pid started_at ended_at interval_s samples outcome exit_code signal \
	peak_rss_bytes peak_rss_at peak_gpu_bytes; do
	check "ls --json: every run has '$k'" \
		test "$(q "$T/ls.json" "(select count(*) from json_each(j) where json_type(value, '\$.$k') is null)")" = 0
done
check "ls --json: id, pid, samples, peak_rss_bytes are integers" \
	test "$(q "$T/ls.json" "(select count(*) from json_each(j) where json_type(value, '\$.id') = 'integer' and json_type(value, '\$.pid') = 'integer' and json_type(value, '\$.samples') = 'integer' and json_type(value, '\$.peak_rss_bytes') = 'integer')")" = 3
check "ls --json: ids newest first" test "$(q "$T/ls.json" "(select group_concat(json_extract(value, '\$.id')) from json_each(j))")" = "3,2,1"
bad=0
for i in 0 1 2; do
	for k in started_at ended_at peak_rss_at; do
		v=$(jget "$T/ls.json" "\$[$i].$k")
		is_iso "$v" || { bad=1; diag "run [$i] $k = '$v'"; }
	done
done
check "ls --json: started_at, ended_at, peak_rss_at are ISO 8601 UTC ending in Z" test "$bad" = 0
check "ls --json: ended_at is not before started_at" \
	test "$(q "$T/ls.json" "(select count(*) from json_each(j) where json_extract(value, '\$.ended_at') < json_extract(value, '\$.started_at'))")" = 0
check "ls --json: peak_gpu_bytes null without a GPU" \
	test "$(q "$T/ls.json" "(select group_concat(json_type(value, '\$.peak_gpu_bytes')) from json_each(j))")" = "null,null,null"
check "ls --json: interval_s 0.01" test "$(jget "$T/ls.json" '$[0].interval_s')" = 0.01
check "ls --json: run 3 outcome exited, exit_code 3, signal null" \
	test "$(q "$T/ls.json" "json_extract(j, '\$[0].outcome') || json_extract(j, '\$[0].exit_code') || json_type(j, '\$[0].signal')")" = "exited3null"
check "ls --json: run 1 label alpha, target is its command line" \
	test "$(jget "$T/ls.json" '$[2].label')|$(jget "$T/ls.json" '$[2].target')" = "alpha|$HOG +8M sleep 300ms exit 0"
check "ls --json: host is this host" test "$(jget "$T/ls.json" '$[0].host')" = "$(uname -n)"
check "ls --json: run 1 peak at least 8 MiB" test "$(jget "$T/ls.json" '$[2].peak_rss_bytes')" -ge 8388608
"$RSW" ls --json -n 1 >"$T/ls1.json"
check "ls --json -n 1: one run, the newest" test "$(q "$T/ls1.json" "json_array_length(j) || ' ' || json_extract(j, '\$[0].id')")" = "1 3"

# --- the label survives JSON escaping
"$RSW" show 2 --json >"$T/show2.json"
check "show --json with an awkward label: valid JSON" jvalid "$T/show2.json"
check "label with <, quotes, backslash, newline and tab survives the round trip" \
	test "$(sqlite3 :memory: "select json_extract(readfile('$T/show2.json'), '\$.label') = cast(readfile('$T/label.txt') as text)")" = 1
check "ls --json keeps the same label" \
	test "$(sqlite3 :memory: "select json_extract(readfile('$T/ls.json'), '\$[1].label') = cast(readfile('$T/label.txt') as text)")" = 1

# --- show --json
expect_exit 0 "show --json: exit 0" "$RSW" show 1 --json
cp "$OUT" "$T/show.json"
check "show --json: valid JSON object" test "$(q "$T/show.json" "json_type(j)")" = object
check "show --json: marks and events are arrays" \
	test "$(q "$T/show.json" "json_type(j, '\$.marks') || ' ' || json_type(j, '\$.events')")" = "array array"
check "show --json: the same run fields as ls --json" \
	test "$(sqlite3 :memory: "select count(*) from json_each(json_extract(readfile('$T/ls.json'), '\$[2]')) l where not exists (select 1 from json_each(readfile('$T/show.json')) s where s.key = l.key and s.atom is l.atom)")" = 0
expect_exit 0 "show last --json is the newest run" "$RSW" show last --json
check "show last: id 3" test "$(jget "$OUT" '$.id')" = 3
expect_exit 0 "show (text): exit 0" "$RSW" show 1
check "show (text): summary with label, peak and outcome" \
	sh -c "grep -q '^run *1 *\"alpha\"' '$OUT' && grep -q '^peak ' '$OUT' && grep -q '^outcome *exited with 0' '$OUT'"

# --- export csv
samples=$(jget "$T/show.json" '$.samples')
expect_exit 0 "export csv: exit 0" "$RSW" export 1 --format csv
cp "$OUT" "$T/e.csv"
# The host's memory pressure (PSI) is a column set of its own where the kernel has it.
hdr="time,elapsed_s,rss_bytes,hwm_bytes,anon_bytes,file_bytes,shmem_bytes,swap_bytes,threads,mem_available_bytes"
nf=10
# A launched command has a cgroup of its own where one can be made (as root).
if [ -n "$(sqlite3 "$RSSWATCH_DB" "SELECT cgroup FROM run WHERE id = 1")" ]; then
	hdr="$hdr,cgroup_bytes,cgroup_peak_bytes"
	nf=$((nf + 2))
fi
if cat /proc/pressure/memory >/dev/null 2>&1; then
	hdr="$hdr,psi_some_avg10,psi_full_avg10,psi_some_total_us,psi_full_total_us"
	nf=$((nf + 4))
fi
# The context counters: stat and io of a process of our own are always readable.
hdr="$hdr,cpu_user_s,cpu_sys_s,minflt,majflt,read_bytes,write_bytes"
nf=$((nf + 6))
check "export csv: the header exactly" test "$(head -1 "$T/e.csv")" = "$hdr"
check "export csv: one row per sample ($samples)" test "$(( $(lines "$T/e.csv") - 1 ))" -eq "$samples"
check "export csv: every row has $nf fields" \
	test "$(awk -F, -v nf=$nf 'NR > 1 && NF != nf' "$T/e.csv" | wc -l)" -eq 0
check "export csv: time is ISO 8601 UTC" \
	test "$(tail -n +2 "$T/e.csv" | cut -d, -f1 | grep -Evc "$ISO")" -eq 0
# (from the first sample, taken at once: within a few ms of the start under a sanitizer;
# it never decreases: the last sample, taken at the exit, may fall in the same
# millisecond as a late tick's)
check "export csv: elapsed_s never decreases, from the start" \
	test "$(awk -F, 'NR == 2 && $2 > 0.05 { bad++ } NR > 2 && $2 < prev { bad++ } NR > 1 { prev = $2 } END { print bad + 0 }' "$T/e.csv")" -eq 0
awk -F, 'NR == 2 && $2 > 0.05 || NR > 2 && $2 < prev { print "row " NR - 1 ": " $0 } NR > 1 { prev = $2 }' \
	"$T/e.csv" | head -n 3 | while read -r l; do diag "out of order: $l"; done
check "export csv: rss_bytes reaches 8 MiB" \
	test "$(awk -F, 'NR > 1 && $3 >= 8388608' "$T/e.csv" | wc -l)" -gt 0
# The peak is the highest sampled figure where it came from a sample or VmHWM; an exit
# record or wait4 (exact at the end of the process) may be higher than any sample.
mx=$(awk -F, 'NR > 1 { if ($3 > m) m = $3; if ($4 > m) m = $4 } END { print m }' "$T/e.csv")
pk=$(jget "$T/show.json" '$.peak_rss_bytes')
case "$(jget "$T/show.json" '$.peak_source')" in
sample|VmHWM) check "export csv: the max rss_bytes or hwm_bytes is the run's peak" test "$mx" = "$pk" ;;
*) check "export csv: the run's exact peak is at least the max rss_bytes or hwm_bytes" test "$pk" -ge "$mx" ;;
esac

# --- export jsonl
expect_exit 0 "export jsonl: exit 0" "$RSW" export 1 --format jsonl
cp "$OUT" "$T/e.jsonl"
check "export jsonl: one line per sample" test "$(lines "$T/e.jsonl")" -eq "$samples"
bad=0
while IFS= read -r line; do
	printf '%s' "$line" >"$T/line.json"
	[ "$(q "$T/line.json" "json_valid(j) and json_type(j, '\$.rss_bytes') = 'integer' and json_type(j, '\$.time') = 'text'")" = 1 ] || bad=$((bad + 1))
done <"$T/e.jsonl"
check "export jsonl: every line is JSON with an integer rss_bytes ($bad bad)" test "$bad" -eq 0
check "export jsonl and csv agree on rss_bytes" \
	test "$(sed 's/.*"rss_bytes":\([0-9]*\).*/\1/' "$T/e.jsonl" | tr '\n' ' ')" = "$(tail -n +2 "$T/e.csv" | cut -d, -f3 | tr '\n' ' ')"

# --- export -o
expect_exit 0 "export -o FILE: exit 0" "$RSW" export 1 --format csv -o "$T/o.csv"
check "export -o FILE: nothing on stdout" test ! -s "$OUT"
check "export -o FILE: the same rows as stdout" cmp -s "$T/o.csv" "$T/e.csv"
expect_exit 0 "export --output=FILE jsonl" "$RSW" export 1 --format=jsonl --output="$T/o.jsonl"
check "export --output=FILE: the same lines" cmp -s "$T/o.jsonl" "$T/e.jsonl"
expect_exit 0 "export last (default) csv" "$RSW" export --format csv
check "export defaults to the last run" \
	test "$(( $(lines "$OUT") - 1 ))" -eq "$(jget "$T/ls.json" '$[0].samples')"

# --- export errors
expect_exit 2 "export --format xml: exit 2" "$RSW" export 1 --format xml
expect_exit 1 "export to a path in a missing directory: exit 1" "$RSW" export 1 --format csv -o "$T/nodir/x.csv"
check "export to a missing directory: message names the path" grep -q "$T/nodir/x.csv" "$ERR"
expect_exit 1 "export to a full device (/dev/full): exit 1" "$RSW" export 1 --format csv -o /dev/full
expect_exit 1 "export to a directory: exit 1" "$RSW" export 1 --format csv -o "$T"

# --- after every run is removed: the list is empty again
"$RSW" rm 1 2 3 >/dev/null
expect_exit 0 "ls on an emptied database: exit 0" "$RSW" ls
check "ls on an emptied database says there are no runs" test "$(cat "$OUT")" = "no runs recorded yet"
"$RSW" ls --json >"$T/empty.json"
check "ls --json on an emptied database prints []" test "$(tr -d ' \n' <"$T/empty.json")" = "[]"

done_testing
