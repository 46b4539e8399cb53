#!/bin/sh
# Memory pressure (PSI): the host's /proc/pressure/memory is stored with every sample
# (read at most once a second), shown as a "pressure" line and exported; a host
# without PSI gets none of it and no error. Prints TAP.
. tests/t/lib.sh

if ! cat /proc/pressure/memory >/dev/null 2>&1; then
	expect_exit 0 "no PSI on this kernel: record still works" "$RSW" record -q -i 50ms -- "$HOG" +4M sleep 300ms
	check "no PSI: no pressure line" sh -c "! '$RSW' show | grep -q '^pressure'"
	done_testing
fi

expect_exit 0 "record a process for 2.5s: exit 0" \
	"$RSW" record -q -i 100ms -- "$HOG" +16M sleep 2500ms
db=$RSSWATCH_DB
last="(SELECT max(id) FROM run)"
n=$(sql "$db" "SELECT count(*) FROM sample WHERE run_id = $last")
k=$(sql "$db" "SELECT count(*) FROM sample WHERE run_id = $last AND psi_some_avg10 IS NOT NULL AND psi_some_total_us IS NOT NULL")
check "every sample has the host's pressure ($k of $n)" test "$k" -eq "$n" -a "$n" -ge 20
k=$(sql "$db" "SELECT count(*) FROM sample WHERE run_id = $last AND (psi_some_avg10 < 0 OR psi_some_avg10 > 100 OR psi_full_avg10 < 0 OR psi_full_avg10 > 100)")
check "avg10 is a percentage (0..100)" test "$k" -eq 0
k=$(sql "$db" "SELECT count(DISTINCT psi_some_total_us) FROM sample WHERE run_id = $last")
check "read at most once a second: at most 4 distinct totals in 2.5s (got $k)" test "$k" -le 4
k=$(sql "$db" "SELECT count(*) FROM sample a JOIN sample b ON a.run_id = b.run_id AND b.elapsed_ns > a.elapsed_ns WHERE a.run_id = $last AND b.psi_some_total_us < a.psi_some_total_us")
check "the stall totals never go down" test "$k" -eq 0
k=$(sql "$db" "SELECT count(*) FROM sample WHERE run_id = $last AND cg_psi_some_avg10 IS NOT NULL")
v2=0
grep -q '^0::/..*' /proc/self/cgroup && [ -f "/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)/memory.pressure" ] && v2=1
if [ "$v2" -eq 1 ]; then
	check "a v2 cgroup: its pressure is stored too" test "$k" -eq "$n"
else
	check "no v2 cgroup here: no cgroup pressure stored" test "$k" -eq 0
fi

expect_exit 0 "show: exit 0" "$RSW" show
check "show: a pressure line with the max avg10" \
	grep -Eq '^pressure  max avg10 host some [0-9]+\.[0-9][0-9]% full [0-9]+\.[0-9][0-9]% \(stalled ' "$OUT"

expect_exit 0 "export csv: exit 0" "$RSW" export --format csv
# A launched command has a cgroup of its own where one can be made: its columns then
# come before the pressure columns.
check "export csv: psi columns in the header" \
	grep -Eq '^time,.*,mem_available_bytes,(cgroup_bytes,cgroup_peak_bytes,)?psi_some_avg10,psi_full_avg10,psi_some_total_us,psi_full_total_us' "$OUT"
col=$(head -1 "$OUT" | tr , '\n' | grep -n '^psi_some_avg10$' | cut -d: -f1)
check "export csv: avg10 with two decimals in every row" \
	test "$(awk -F, -v c="$col" 'NR > 1 && $c !~ /^[0-9]+\.[0-9][0-9]$/' "$OUT" | wc -l)" -eq 0
expect_exit 0 "export jsonl: exit 0" "$RSW" export --format jsonl
printf '%s' "$(head -1 "$OUT")" >"$T/l.json"
check "export jsonl: psi_some_avg10 is a number" \
	test "$(sqlite3 :memory: "select json_type(readfile('$T/l.json'), '\$.psi_some_avg10') in ('real','integer')")" = 1
check "export jsonl: psi_full_total_us is an integer" \
	test "$(sqlite3 :memory: "select json_type(readfile('$T/l.json'), '\$.psi_full_total_us')")" = integer
done_testing
