#!/bin/sh
# The context panel of plot and report: CPU in % of one CPU and major page faults per
# second under the memory chart, on real recordings. A CPU-bound child reads its own
# CPU share (near 100% on an idle machine) and an idle one near 0%; a thrashing run (major faults rising, RSS flat) shows
# its fault rate (the recorded majflt set to 1000 a second in the database, as no
# test can make a disk fault on demand); a run recorded before the context columns
# existed (NULL there) gets no panel.
. tests/t/lib.sh

DB=$RSSWATCH_DB
mean_cpu() { sed -n 's/.*(user + system): max [0-9.k]*%, mean \([0-9.]*\)%<.*/\1/p' "$1"; }

# --- a CPU-bound child (the shell's own loop: one process) ---
# Its CPU share depends on what else the machine runs: the reference is its own CPU
# time (utime + stime of /proc/self/stat, read by the loop as it ends) over the time
# it ran (the run's first to last sample).
run "$RSW" record -q -i 50ms --no-tree -- sh -c 'i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done
	read -r l </proc/$$/stat; set -- ${l##*) }; echo "${12} ${13}" >'"$T/cpu.ticks"
[ "$RC" -eq 0 ] || diag_run
run "$RSW" plot last -o "$T/busy.svg"
m=$(mean_cpu "$T/busy.svg")
span=$(sql "$DB" "SELECT (max(elapsed_ns) - min(elapsed_ns)) / 1e9 FROM sample WHERE run_id = (SELECT max(id) FROM run)")
want=$(awk -v t="$(cat "$T/cpu.ticks" 2>/dev/null)" -v hz="$(getconf CLK_TCK)" -v s="$span" \
	'BEGIN { split(t, a, " "); if (s > 0) printf "%.0f", (a[1] + a[2]) / hz / s * 100 }')
if grep -q '<g class="context">' "$T/busy.svg" && [ -n "$m" ] && [ -n "$want" ] &&
	awk -v m="$m" -v w="$want" 'BEGIN { exit !(w >= 20 && m >= w - 15 && m <= w + 15 && m <= 110) }'; then
	ok "plot of a CPU-bound child shows its CPU share (mean $m%; its own CPU time over its run: $want%)"
else
	not_ok "plot of a CPU-bound child shows its CPU share (mean ${m:-none}%; its own CPU time over its run: ${want:-none}%)"; diag_run
fi
cpu_s=$(sql "$DB" "SELECT (max(cpu_user_ns + cpu_sys_ns) - min(cpu_user_ns + cpu_sys_ns)) / 1e9 FROM sample
	WHERE run_id = (SELECT max(id) FROM run)")
check "... which matches the recorded CPU time ($cpu_s s)" awk -v c="$cpu_s" 'BEGIN { exit !(c >= 0.3) }'
run "$RSW" report last -o "$T/busy.html"
check "the report's chart has the context panel" grep -q '<g class="context">.*' "$T/busy.html"

# --- an idle child ---
run "$RSW" record -q -i 50ms -- "$HOG" +8M sleep 600ms
[ "$RC" -eq 0 ] || diag_run
run "$RSW" plot last -o "$T/idle.svg"
m=$(mean_cpu "$T/idle.svg")
if [ -n "$m" ] && awk -v m="$m" 'BEGIN { exit !(m < 15) }'; then
	ok "an idle child shows CPU near 0% (mean $m%)"
else
	not_ok "an idle child shows CPU near 0% (mean ${m:-none})"; diag_run
fi

# --- thrashing: RSS flat, major faults at 1000 a second ---
id=$(sql "$DB" 'SELECT max(id) FROM run')
sql "$DB" "UPDATE sample SET majflt = elapsed_ns / 1000000 WHERE run_id = $id"
run "$RSW" plot "$id" -o "$T/thrash.svg"
if grep -Eq '>major page faults</tspan> per second \(reads from disk or swap\): max 1[0-9]{3}/s, total [1-9][0-9]{2}<' "$T/thrash.svg"; then
	ok "plot shows major faults per second for a thrashing run"
else
	not_ok "plot shows major faults per second for a thrashing run"; diag "$(grep -o 'major page faults.\{0,120\}' "$T/thrash.svg")"
fi

# --- a run without the context columns ---
sql "$DB" "UPDATE sample SET cpu_user_ns = NULL, cpu_sys_ns = NULL, minflt = NULL, majflt = NULL,
	read_bytes = NULL, write_bytes = NULL WHERE run_id = $id"
run "$RSW" plot "$id" -o "$T/old.svg"
if [ "$RC" -eq 0 ] && grep -q '<g class="series">' "$T/old.svg" && ! grep -q 'class="context"' "$T/old.svg"; then
	ok "a run recorded without context gets no panel"
else
	not_ok "a run recorded without context gets no panel"; diag_run
fi
run "$RSW" plot 1 "$id" -o "$T/two.svg"
check "an overlay of runs has no panel" sh -c "! grep -q 'class=\"context\"' '$T/two.svg'"
done_testing
