#!/bin/sh
# Each process of a set keeps its own CPU time, faults and storage bytes, checked
# against what other tools and the processes themselves say:
# - a CPU-bound awk run under /usr/bin/time inside the recorded tree: its CPU seconds
#   are time's %U + %S, within 2% + 10 ms (time prints hundredths; the exit record is
#   taken just before the process lets go of its memory, which time still counts);
# - an idle sleep: near 0;
# - ctxhog (tests/bin), which writes, syncs, maps and reads a file and touches memory,
#   then prints its own getrusage and /proc/self/io just before _exit: its faults and
#   bytes are what it printed (minor faults: up to 8 more, for what it does after its
#   count: formatting and writing the line, _exit; under AddressSanitizer that touches
#   shadow pages: 3 more seen there, none in the plain build);
# - a process still running when the recording stops: its last read, no more than
#   /proc/PID/stat says right after;
# - unknown figures (NULL, as a run from before they were kept): '-' and null.
# The exact figures come from exit records (taskstats: root); without them the
# comparisons that need them are skipped.
. tests/t/lib.sh

DB=$RSSWATCH_DB
CTX="$BUILD/tests/bin/ctxhog"
q() { sql "$DB" "$1"; }
# within A B TOL_ABS TOL_REL: |A - B| <= TOL_ABS + TOL_REL * B
within() { awk -v a="$1" -v b="$2" -v t="$3" -v r="$4" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t + r * b) }'; }

run "$RSW" record -q -i 50ms -- sh -c "
	'$CTX' '$T' 16 | cat >'$T/hog.out'
	/usr/bin/time -f '%U %S' -o '$T/busy.time' awk 'BEGIN { for (i = 0; i < 16000000; i++) s += i }'
	sleep 0.4"
[ "$RC" -eq 0 ] || diag_run
show_json
exact=$(sfield exit_records)
pcol() {	# pcol COMM COLUMN: the column of that process of the last run
	q "SELECT $2 FROM process WHERE run_id = (SELECT max(id) FROM run) AND comm = '$1'"
}

# --- CPU against /usr/bin/time ---
tcpu=$(awk '{ print $1 + $2 }' "$T/busy.time" 2>/dev/null)
acpu=$(pcol awk "(cpu_user_ns + cpu_sys_ns) / 1e9")
if [ "$exact" != 1 ]; then
	skip "awk's CPU against /usr/bin/time (no exit records: not root?)"
elif [ -n "$tcpu" ] && [ -n "$acpu" ] && within "$acpu" "$tcpu" 0.01 0.02; then
	ok "a CPU-bound child's CPU is /usr/bin/time's ($acpu s, time says $tcpu s)"
else
	not_ok "a CPU-bound child's CPU is /usr/bin/time's (${acpu:-none} s, time says ${tcpu:-none} s)"
	diag "$(q 'SELECT * FROM process')"
fi
check "... and it was CPU-bound (${tcpu:-none} s >= 0.2 s)" awk -v c="${tcpu:-0}" 'BEGIN { exit !(c >= 0.2) }'
scpu=$(pcol sleep "(cpu_user_ns + cpu_sys_ns) / 1e9")
check "an idle child's CPU is near 0 (${scpu:-none} s)" awk -v c="${scpu:-9}" 'BEGIN { exit !(c < 0.05) }'

# --- faults and bytes against the process's own count ---
set -- $(cat "$T/hog.out" 2>/dev/null) x x x x x x
own_min=$1 own_maj=$2 own_cpu_us=$(($3 + $4)) own_rd=$5 own_wr=$6
got=$(pcol ctxhog "minflt || ' ' || majflt || ' ' || read_bytes || ' ' || write_bytes || ' ' || ((cpu_user_ns + cpu_sys_ns) / 1000)")
set -- $got x x x x x
if [ "$exact" != 1 ]; then
	skip "ctxhog's faults and bytes against its own (no exit records)"
	skip "ctxhog's CPU against its own"
else
	if [ "$2" = "$own_maj" ] && [ "$3" = "$own_rd" ] && [ "$4" = "$own_wr" ] &&
		[ "$1" -ge "$own_min" ] 2>/dev/null && [ "$1" -le $((own_min + 8)) ]; then
		ok "faults and bytes are the process's own (minflt $1, majflt $2, read $3, written $4)"
	else
		not_ok "faults and bytes are the process's own"
		diag "recorded: minflt majflt read written: $got"
		diag "its own: $(cat "$T/hog.out" 2>/dev/null)"
	fi
	# after its count it frees 16 MiB of memory and a mapping: a few ms, counted here
	if [ "$5" -ge $((own_cpu_us - 1000)) ] 2>/dev/null && [ "$5" -le $((own_cpu_us + 20000)) ]; then
		ok "its CPU is its own getrusage's ($5 us, it said $own_cpu_us us)"
	else
		not_ok "its CPU is its own getrusage's (${5:-none} us, it said $own_cpu_us us)"
	fi
fi
check "it wrote and read 16 MiB (write_bytes ${own_wr:-none})" [ "${own_wr:-0}" -ge 16777216 ]

# --- show, show --json, the report ---
COLUMNS=100 run "$RSW" show
if grep -Eq '^ +PID +COMMAND +START +END +PEAK +CPU s +MAJFLT +ENDED$' "$OUT" &&
	grep -E "^ +[0-9]+  awk " "$OUT" | grep -q " $(awk -v c="$acpu" 'BEGIN { printf "%.2f", c }') "; then
	ok "show's process table has CPU s and MAJFLT, awk's CPU in it"
else
	not_ok "show's process table has CPU s and MAJFLT, awk's CPU in it"; diag_run
fi
w=$(sed -n '/^processes (/,/^$/p' "$OUT" | awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }')
check "the table fits in 100 columns (widest line $w)" [ "$w" -le 100 ]
jc=$(jget "$T/show.json" '$.processes[0].cpu_user_s')
n=$(sqlite3 :memory: "SELECT count(*) FROM json_each(json_extract(readfile('$T/show.json'), '\$.processes'))
	WHERE json_type(value, '\$.cpu_user_s') = 'real' AND json_type(value, '\$.cpu_sys_s') = 'real'
	AND json_type(value, '\$.minflt') = 'integer' AND json_type(value, '\$.majflt') = 'integer'
	AND json_type(value, '\$.read_bytes') = 'integer' AND json_type(value, '\$.write_bytes') = 'integer'")
np=$(q "SELECT count(*) FROM process WHERE run_id = (SELECT max(id) FROM run)")
check "show --json gives every process ($n of $np) its six context figures" [ "$n" = "$np" ] && [ -n "$jc" ]
jmin=$(sqlite3 :memory: "SELECT json_extract(value, '\$.minflt') FROM json_each(json_extract(readfile('$T/show.json'), '\$.processes'))
	WHERE json_extract(value, '\$.comm') = 'ctxhog'")
check "... the same figures as the store (ctxhog minflt $jmin)" [ "$jmin" = "$(pcol ctxhog minflt)" ]
run "$RSW" report -o "$T/r.html"
check "the report's process table has the context columns" \
	grep -q '<th class="r">CPU s</th><th class="r">Major faults</th><th class="r">Minor faults</th><th class="r">Read</th><th class="r">Written</th>' "$T/r.html"

# --- a process still running at the end: its last read ---
run "$RSW" record -q -i 50ms -d 800ms -- sh -c "exec awk -v t='$T' 'BEGIN { while (1); }'"
pid=$(q "SELECT pid FROM process WHERE run_id = (SELECT max(id) FROM run) AND comm = 'awk'")
now=$(awk '{ sub(/.*\) /, ""); print ($12 + $13) }' "/proc/$pid/stat" 2>/dev/null)
tck=$(getconf CLK_TCK)
[ -n "$pid" ] && kill "$pid" 2>/dev/null
got=$(pcol awk "ended || ' ' || ((cpu_user_ns + cpu_sys_ns) / 1e9) || ' ' || ifnull(read_bytes, 'null')")
set -- $got x x x
if [ "$1" = running ] && [ -n "$now" ] &&
	awk -v g="$2" -v n="$now" -v h="$tck" 'BEGIN { exit !(g > 0 && g <= n / h + 0.011) }'; then
	ok "a process alive at the end keeps its last read ($2 s, /proc says $(awk -v n="$now" -v h="$tck" 'BEGIN { print n / h }') s after)"
else
	not_ok "a process alive at the end keeps its last read (${got:-none}; /proc: ${now:-none} ticks)"
fi

# --- unknown figures: a process row as an older rsswatch left it ---
q "UPDATE process SET cpu_user_ns = NULL, cpu_sys_ns = NULL, minflt = NULL, majflt = NULL,
	read_bytes = NULL, write_bytes = NULL WHERE run_id = 1 AND comm = 'sleep'"
show_json 1
run "$RSW" show 1
types=$(sqlite3 :memory: "SELECT group_concat(json_type(p.value, '\$.' || k.value), ' ')
	FROM json_each(json_extract(readfile('$T/show.json'), '\$.processes')) AS p,
	json_each('[\"cpu_user_s\",\"cpu_sys_s\",\"minflt\",\"majflt\",\"read_bytes\",\"write_bytes\"]') AS k
	WHERE json_extract(p.value, '\$.comm') = 'sleep'")
if [ "$types" = "null null null null null null" ] && grep -Eq '^ +[0-9]+  sleep .* - +- +exited 0$' "$OUT"; then
	ok "unknown figures are null in JSON and '-' in the table"
else
	not_ok "unknown figures are null in JSON and '-' in the table ($types)"; diag_run
fi
done_testing
