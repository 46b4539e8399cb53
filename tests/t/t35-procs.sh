#!/bin/sh
# What a reader sees of a set's processes, on real recordings: show's process table
# and summary lines, show --events, the JSON fields and arrays, export --procs, and a
# process name with an escape sequence in it. The OOM parts need root and a memory
# cgroup controller; the exit-record parts need root.
. tests/t/lib.sh

MiB=1048576
ESC=$(printf '\033')
# sq QUERY: one value, with the files of this suite readable through readfile()
sq() { sqlite3 :memory: "$1"; }
dbq() { sqlite3 "$RSSWATCH_DB" "$1"; }
# procq EXPR [WHERE]: EXPR over show.json's processes
procq() { sq "SELECT $1 FROM json_each(readfile('$T/show.json'), '\$.processes') ${2:-}"; }

# --- a launched command: a shell and two memhogs, one after the other
expect_exit 0 "a set: sh, memhog +40M, memhog +8M" "$RSW" record -q -i 50ms -- sh -c \
	'"$1" +40M sleep 150ms; "$1" +8M sleep 150ms; sleep 0.1' - "$HOG"
id=$(dbq "SELECT max(id) FROM run")
show_json
check "show --json is valid JSON" jvalid "$T/show.json"
rows=$(dbq "SELECT count(*) FROM process WHERE run_id = $id")
n=$(sq "SELECT json_array_length(readfile('$T/show.json'), '\$.processes')")
check "show --json lists every process row ($n of $rows, at least 3)" test "$n" = "$rows" -a "$rows" -ge 3
big=$(procq "json_extract(value, '\$.pid')" "ORDER BY json_extract(value, '\$.peak_rss_bytes') DESC LIMIT 1")
bigpeak=$(procq "max(json_extract(value, '\$.peak_rss_bytes'))")
check "the largest process is a memhog of at least 40 MiB ($bigpeak)" test "$bigpeak" -ge $((40 * MiB))
check "peak_process_pid is the largest process ($(sfield peak_process_pid) = $big)" \
	test "$(sfield peak_process_pid)" = "$big"
check "peak_process_comm is memhog" test "$(sfield peak_process_comm)" = memhog
check "peak_process_rss_bytes is its peak" test "$(sfield peak_process_rss_bytes)" = "$bigpeak"
check "oom_kills is 0 and oom is empty" \
	test "$(sfield oom_kills)" = 0 -a "$(sq "SELECT json_array_length(readfile('$T/show.json'), '\$.oom')")" = 0
check "a launched command has no hwm_before_bytes" test -z "$(sfield hwm_before_bytes)"
check "every process has a start, a source and an ending" \
	test "$(procq "count(*)" "WHERE json_extract(value, '\$.started_s') IS NULL OR json_extract(value, '\$.peak_source') IS NULL OR json_extract(value, '\$.ended') IS NULL")" = 0
alive=$(procq "count(*)" "WHERE json_extract(value, '\$.ended_s') IS NULL")
check "no process is left running with no end ($alive)" test "$alive" = 0
"$RSW" show >"$T/show.txt" 2>"$T/show.err"
check "show: a table of the processes" grep -q "^processes ($n, largest peak first)$" "$T/show.txt"
first=$(sed -n '/^processes (/{n;n;p;q}' "$T/show.txt")
case "$first" in
*" $big  memhog "*"MiB"*) ok "show: the first row is the largest process" ;;
*) not_ok "show: the first row is the largest process"; diag "first row: $first" ;;
esac
# (a sanitizer build adds a leak checker per memhog: a process sharing its memory)
check "show: the memhogs ended with 0" test "$(grep -Ec '^ +[0-9]+  memhog .* exited 0$' "$T/show.txt")" -ge 2
[ "$(grep -Ec '^ +[0-9]+  memhog .* exited 0$' "$T/show.txt")" -ge 2 ] ||
	diag "$(sed -n '/^processes (/,/^$/p' "$T/show.txt")"
check "show: the largest process in the summary" grep -q "^largest   memhog (pid $big), peak " "$T/show.txt"
case "$(sfield peak_source)" in
sample) w="a sample" ;; VmHWM) w="VmHWM" ;; "exit record") w="the exit record" ;;
wait4) w="wait4" ;; "OOM report") w="the OOM report" ;; *) w="?" ;;
esac
check "show: the peak line names its source ($(sfield peak_source))" grep -q "^peak      .*, from $w" "$T/show.txt"

# The start and exit events of the processes: counted, listed only with --events.
pev=$(dbq "SELECT count(*) FROM event WHERE run_id = $id AND kind IN ('proc_start', 'proc_exit')")
diag "$pev process events"
check "the run has process events ($pev)" test "$pev" -ge 2
check "show: no process event listed" sh -c '! grep -Eq "^  \+[^ ]+ +proc_(start|exit) " "$1"' - "$T/show.txt"
check "show: the process events counted in one line" \
	grep -q "^  $pev process start/exit events: rsswatch show $id --events$" "$T/show.txt"
"$RSW" show --events >"$T/events.txt"
check "show --events lists them all" test "$(grep -Ec '^  \+[^ ]+ +proc_(start|exit) ' "$T/events.txt")" -eq "$pev"
check "show --events has no count line" sh -c '! grep -q "process start/exit events:" "$1"' - "$T/events.txt"

# ls --json: the fields on every run
"$RSW" ls --json >"$T/ls.json"
check "ls --json carries the new fields" test "$(sq "SELECT count(*) FROM json_each(readfile('$T/ls.json')) WHERE json_type(value, '\$.oom_kills') = 'integer' AND json_type(value, '\$.peak_source') = 'text' AND json_type(value, '\$.peak_process_pid') = 'integer' AND json_type(value, '\$.hwm_before_bytes') = 'null' AND json_type(value, '\$.peak_cgroup_exact') IN ('true', 'false')")" = 1

# export --procs
"$RSW" export --procs --format csv >"$T/procs.csv"
check "export --procs: its header" test "$(head -1 "$T/procs.csv")" = \
	"time,elapsed_s,pid,ppid,comm,rss_bytes,anon_bytes,file_bytes,shmem_bytes,swap_bytes"
want=$(dbq "SELECT count(*) FROM proc_at_sample WHERE run_id = $id")
got=$(($(lines "$T/procs.csv") - 1))
check "export --procs: one row per process per sample ($got, the view has $want)" test "$got" = "$want" -a "$want" -gt 0
check "export --procs: ten fields in every row" \
	test "$(awk -F, 'NF != 10' "$T/procs.csv" | wc -l)" -eq 0
maxhog=$(awk -F, '$5 == "memhog" && $6 > m { m = $6 } END { print m + 0 }' "$T/procs.csv")
check "export --procs: a memhog row holds its 40 MiB ($maxhog)" test "$maxhog" -ge $((40 * MiB))
"$RSW" export --procs --format jsonl >"$T/procs.jsonl"
check "export --procs jsonl: as many rows" test "$(lines "$T/procs.jsonl")" = "$want"
bad=0
while IFS= read -r l; do
	[ "$(sq "SELECT json_valid('$(printf '%s' "$l" | sed "s/'/''/g")')")" = 1 ] || bad=$((bad + 1))
done <"$T/procs.jsonl"
check "export --procs jsonl: every line is JSON ($bad bad)" test "$bad" -eq 0

expect_exit 0 "one process alone (--no-tree)" "$RSW" record -q --no-tree -i 50ms -- "$HOG" +1M sleep 100ms
one=$(dbq "SELECT max(id) FROM run")
expect_exit 1 "export --procs refuses a run of one process" "$RSW" export --procs --format csv -o "$T/none.csv"
check "... saying why" grep -q "^rsswatch: run $one recorded one process; --procs needs a set" "$ERR"
check "... and writes no file" test ! -e "$T/none.csv"
"$RSW" show >"$T/one.txt"
check "show: no process table for one process" sh -c '! grep -q "^processes (" "$1"' - "$T/one.txt"
show_json
check "show --json: no processes array for one process" test "$(sq "SELECT json_type(readfile('$T/show.json'), '\$.processes')")" = ""

# A process that names itself with an escape sequence: never raw on the terminal.
expect_exit 0 "a process named with an escape sequence" "$RSW" record -q -i 20ms -- sh -c \
	'printf "ev\033[2Jil" >/proc/$$/comm; "$1" +2M sleep 200ms' - "$HOG"
show_json
named=$(procq "count(*)" "WHERE json_extract(value, '\$.comm') = 'ev' || char(27) || '[2Jil'")
check "show --json keeps the name, escaped ($named)" test "$named" -ge 1
check "show --json escapes it as \\u001b" grep -q 'ev\\u001b\[2Jil' "$T/show.json"
"$RSW" show --events >"$T/esc.txt"
check "show: the name with '?' for the escape" grep -q ' ev?\[2Jil ' "$T/esc.txt"
check "show: no escape byte in the output" sh -c '! grep -q "$1" "$2"' - "$ESC" "$T/esc.txt"
"$RSW" export --procs --format csv >"$T/esc.csv"
check "export --procs csv: no escape byte" sh -c '! grep -q "$1" "$2"' - "$ESC" "$T/esc.csv"
"$RSW" report -o "$T/esc.html"
check "report: no escape byte" sh -c '! grep -q "$1" "$2"' - "$ESC" "$T/esc.html"
check "report: a table of the processes" grep -q '<h2>Processes <span class="none">(' "$T/esc.html"

# A process that lives between two samples: only its exit record knows its peak.
expect_exit 0 "a memhog between two samples 1s apart" "$RSW" record -q -i 1s -- sh -c \
	'sleep 0.1; "$1" +24M; sleep 0.1' - "$HOG"
show_json
if [ "$(sfield exit_records)" = 1 ]; then
	hogs=$(procq "count(*)" "WHERE json_extract(value, '\$.comm') = 'memhog'")
	exact=$(procq "count(*)" "WHERE json_extract(value, '\$.comm') = 'memhog' AND json_extract(value, '\$.peak_source') = 'exit record' AND json_extract(value, '\$.peak_exact') AND json_extract(value, '\$.peak_rss_bytes') >= $((24 * MiB))")
	check "its row has the exact peak of its exit record ($exact of $hogs)" test "$hogs" -ge 1 -a "$exact" -ge 1
	"$RSW" show >"$T/between.txt"
	check "show: its peak marked exact" grep -Eq '^ +[0-9]+  memhog .* [0-9]+\.[0-9] MiB\* +([0-9.]+|-) +([0-9.]+[MG]?|-)  exited 0$' "$T/between.txt"
	check "show: the legend for the mark" grep -q '^  \* exact peak (exit record, wait4 or OOM report)' "$T/between.txt"
	check "show: no note on sampled peaks" sh -c '! grep -q "sampled only" "$1"' - "$T/between.txt"
else
	for d in "its row has the exact peak" "marked exact" "the legend" "no note on sampled peaks"; do
		skip "$d: exit records need root"
	done
fi

# Without exit records, a set's summary says its peaks are sampled only.
expect_exit 0 "a set without exit records" env RSSWATCH_NO_TASKSTATS=1 "$RSW" record -q -i 50ms -- \
	sh -c '"$1" +4M sleep 100ms' - "$HOG"
"$RSW" show >"$T/nots.txt"
show_json
check "exit_records is false" test "$(sfield exit_records)" = 0
check "the summary says the peaks are sampled only" \
	grep -q '^note      peaks of processes that ended between samples are sampled only (not exact)$' "$T/nots.txt"

# Attached to a process that peaked before: that peak is apart from the run's.
rm -f "$T/ready"
spawn hog "$HOG" +96M - touch "$T/ready" await "$T/go"
hog=$!
if wait_until 10 test -e "$T/ready"; then
	expect_exit 0 "attach to a process that freed 96 MiB" "$RSW" record -q -p "$hog" -i 50ms -d 300ms
	show_json
	hb=$(sfield hwm_before_bytes)
	pk=$(sfield peak_rss_bytes)
	check "hwm_before_bytes holds the old peak ($hb)" test "${hb:-0}" -ge $((96 * MiB))
	check "peak_rss_bytes is the run's own ($pk)" test "$pk" -lt $((32 * MiB))
	"$RSW" show >"$T/att.txt"
	check "show: the old peak apart" \
		grep -Eq '^earlier   peak [0-9]+\.[0-9] MiB before recording \(VmHWM when attached; not part of this run\)$' "$T/att.txt"
else
	not_ok "memhog got ready"
fi
touch "$T/go"
finish "$hog"

# --- OOM kills of members: root and a memory cgroup controller
. "$(dirname "$0")/memcg.sh"
if [ "$(id -u)" -ne 0 ] || [ -z "$(memcg_dir)" ]; then
	skip "OOM kills need root and a memory cgroup controller"
	done_testing
fi
expect_exit 0 "a member OOM-killed under --memory-limit 64M, the shell exits 0" \
	"$RSW" record -q -i 50ms --memory-limit 64M -- sh -c '"$1" +256M; "$1" +1M sleep 100ms; exit 0' - "$HOG"
show_json
check "oom_kills is 1" test "$(sfield oom_kills)" = 1
check "oom: one kill, of memhog" test "$(sfield 'oom[0].comm')" = memhog -a \
	"$(sq "SELECT json_array_length(readfile('$T/show.json'), '\$.oom')")" = 1
kpid=$(sfield 'oom[0].pid')
check "oom: the kernel's anon-rss near the limit ($(sfield 'oom[0].anon_rss_bytes'))" \
	test "$(sfield 'oom[0].anon_rss_bytes')" -ge $((48 * MiB))
check "oom: its time and memory cgroup" sh -c 'test -n "$1" && test -n "$2"' - \
	"$(sfield 'oom[0].time')" "$(sfield 'oom[0].memcg')"
check "the killed process is OOM-killed in processes" \
	test "$(procq "json_extract(value, '\$.ended')" "WHERE json_extract(value, '\$.pid') = $kpid")" = oom_killed
"$RSW" show >"$T/oom.txt"
check "show: the outcome names the kill" grep -Eq \
	"^outcome   exited with 0; 1 process OOM-killed: memhog \(pid $kpid\) at \+[0-9.]+m?s, anon-rss [0-9.]+ MiB$" "$T/oom.txt"
check "show: OOM-killed in the table" grep -Eq "^ +$kpid  memhog .* OOM-killed$" "$T/oom.txt"
"$RSW" report -o "$T/oom.html"
check "report: the OOM kills table" grep -q "<h2>OOM kills</h2>" "$T/oom.html"
check "report: the kill's row" grep -q "<td class=\"r\">$kpid</td><td class=\"l\">memhog</td>" "$T/oom.html"

# The target itself killed: the outcome says so, as before, and names no other.
expect_exit 137 "the target OOM-killed" "$RSW" record -q -i 50ms --memory-limit 64M -- "$HOG" +256M
show_json
"$RSW" show >"$T/root.txt"
check "show: killed by the OOM killer, no other kill" \
	grep -Eq '^outcome   killed by the OOM killer .*; peak [0-9.]+ MiB at [0-9:]+$' "$T/root.txt"
check "oom: the target's own kill" test "$(sfield 'oom[0].pid')" = "$(sfield pid)"
# --- no process starts before its parent: a member's start is its own (from its stat),
# and one known only from its exit record (its end, read late, less its life) is no
# later than its children's. Shells that each start two short memhogs, 30 times.
expect_exit 0 "a loop of short chains: exit 0" "$RSW" record -q -i 1s -- sh -c \
	"i=0; while [ \$i -lt 30 ]; do sh -c \"'$HOG' +2M sleep 20ms exit 0; '$HOG' +1M exit 0\"; i=\$((i + 1)); done"
inv=$(sqlite3 "$RSSWATCH_DB" "SELECT count(*) FROM process c JOIN process p ON p.run_id = c.run_id
	AND p.pid = c.ppid WHERE c.run_id = (SELECT max(id) FROM run) AND c.first_ns < p.first_ns")
n=$(sqlite3 "$RSSWATCH_DB" "SELECT count(*) FROM process WHERE run_id = (SELECT max(id) FROM run)")
check "none of its $n processes starts before its parent ($inv do)" test "$inv" -eq 0 -a "$n" -ge 61

# --- a member's name with a newline and a backslash: /proc/PID/status escapes them,
# stat and exit records do not; the per-process samples and the process table store
# the same name. The member waits until the store holds a sample of it.
WEIRD="$T/a\\b
c"
printf '#!/bin/sh\ni=0\nwhile [ $i -lt 300 ] && [ "$(sqlite3 "%s" "SELECT count(*) FROM proc_sample WHERE pid = $$")" = 0 ]; do sleep 0.1; i=$((i + 1)); done\n' \
	"$RSSWATCH_DB" >"$WEIRD"
chmod +x "$WEIRD"
expect_exit 0 "a member named with a newline and a backslash: exit 0" "$RSW" record -q -i 20ms -- \
	sh -c '"$1"; true' - "$WEIRD"
names=$(sqlite3 "$RSSWATCH_DB" "SELECT count(DISTINCT hex(comm)) || ' ' || min(hex(comm)) FROM (
	SELECT comm FROM proc_sample WHERE run_id = (SELECT max(id) FROM run) AND comm LIKE 'a%'
	UNION ALL SELECT comm FROM process WHERE run_id = (SELECT max(id) FROM run) AND comm LIKE 'a%')")
check "one spelling of the name in samples and processes, the name itself ($names)" \
	test "$names" = "1 615C620A63"

done_testing
