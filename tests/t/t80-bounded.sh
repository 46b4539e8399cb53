#!/bin/sh
# What a recorder keeps per process ever seen is bounded: a tree that forks thousands
# of short children keeps at most 4,096 of them one by one; the others, ended and
# settled, smallest peaks first, are folded into totals, said once on the recorder's
# stream and counted in procs_folded events. Every process is accounted for: the rows
# kept and the count folded add up to every process the run saw. Prints TAP.
# A fork loop is slow on a loaded machine (30 ms a fork was seen beside other
# tests): this suite's commands get 3 minutes.
LIMIT=${LIMIT:-180}
. tests/t/lib.sh

DB="$T/fold.db"
NOTE="kept only as totals"
FERR="$T/fold.err"
: >"$FERR"
# The tree forks 4,300 children, then waits (bounded) for the recorder to say that it
# folded some: the ended ones fold only once settled, 10 s after their end.
expect_exit 0 "a tree of 4,300 short children: exit 0" sh -c '
	"$1" record -q -i 100ms --db "$2" -- sh -c "
		perl -e '\''for (1..4300) { if (!fork) { exit 0 } wait }'\''
		i=0
		while ! grep -q \"$3\" \"$4\" && [ \$i -lt 1200 ]; do sleep 0.1; i=\$((i + 1)); done
	" 2>>"$4"' - "$RSW" "$DB" "$NOTE" "$FERR"
run_id="(SELECT max(id) FROM run)"
rows=$(sql "$DB" "SELECT count(*) FROM process WHERE run_id = $run_id")
starts=$(sql "$DB" "SELECT count(*) FROM event WHERE kind = 'proc_start' AND run_id = $run_id")
folded=$(sql "$DB" "SELECT max(CAST(substr(detail, 7, instr(detail, ' ') - 7) AS INTEGER))
	FROM event WHERE kind = 'procs_folded' AND run_id = $run_id")
# the processes there at the first sample have no proc_start event (the tree's shell,
# and its perl when a loaded machine started it before that sample)
firsts=$(sql "$DB" "SELECT count(DISTINCT pid) FROM proc_sample WHERE run_id = $run_id
	AND elapsed_ns = (SELECT min(elapsed_ns) FROM proc_sample WHERE run_id = $run_id)")
diag "fold: $rows process rows, ${folded:-no} folded, $starts proc_start events, $firsts at the first sample"
check "fold: the recorder said it once" test "$(grep -c "^rsswatch: more than 4096 processes: .*$NOTE" "$FERR")" -eq 1
check "fold: at most 4,096 processes kept one by one, and a few that ended late ($rows)" \
	test "$rows" -le 4200
check "fold: more than 4,300 processes seen ($starts)" test "$starts" -gt 4300
check "fold: the rows kept and the folded add up to every process, those of the first sample included" \
	test "$firsts" -ge 1 -a $((rows + ${folded:-0})) -eq $((starts + firsts))
check "fold: the largest process is kept (the tree's root shell or perl)" \
	test "$(sql "$DB" "SELECT count(*) FROM process WHERE run_id = $run_id AND peak_rss =
		(SELECT max(peak_rss) FROM process WHERE run_id = $run_id) AND comm IN ('sh', 'perl')")" -ge 1
expect_exit 0 "fold: show --events" "$RSW" show --events --db "$DB"
check "fold: show lists the procs_folded events" grep -q "procs_folded *count=$folded " "$OUT"

done_testing
