#!/bin/sh
# compare says when runs are not comparable: real runs of memhog sampled at different
# intervals, a process tree against a single process, different programs, another
# host, and a base with no samples; never a percentage against a zero base.
. tests/t/lib.sh

DB=$RSSWATCH_DB
rec() { run "$RSW" record -q "$@"; [ "$RC" -eq 0 ] || diag_run; }
rec -i 20ms --no-tree -- "$HOG" +30M sleep 200ms		# 1
rec -i 100ms --no-tree -- "$HOG" +30M sleep 200ms		# 2
rec -i 20ms -- "$HOG" +30M sleep 200ms			# 3: a tree
rec -i 20ms --no-tree -- sh -c 'sleep 0.2'		# 4: another program
rec -i 20ms --no-tree -- "$HOG" +30M sleep 200ms		# 5: like 1

run "$RSW" compare 1 5
if [ "$RC" -eq 0 ] && ! grep -q '^warning:' "$OUT"; then ok "alike runs get no warning"
else not_ok "alike runs get no warning"; diag_run; fi

run "$RSW" compare 1 2
if grep -q '^warning: run 2 was sampled every 100ms and run 1 every 20ms: the mean, last and growth depend on the sampling and are not comparable' "$OUT"; then
	ok "different intervals are named, and which figures they spoil"
else
	not_ok "different intervals are named, and which figures they spoil"; diag_run
fi

run "$RSW" compare 1 3
check "a tree against a single process is named" grep -q '^warning: run 3 is a set of processes .* and run 1 a single process' "$OUT"

run "$RSW" compare 1 4
check "different programs are named" grep -q '^warning: run 4 ran sh and run 1 memhog: different programs' "$OUT"

sql "$DB" "UPDATE run SET host = 'elsewhere', mem_total = mem_total * 4 WHERE id = 5"
run "$RSW" compare 1 5 --json
if grep -q '"warnings":\["run 5 ran on host elsewhere and run 1 on ' "$OUT" && grep -q 'of memory (MemTotal)' "$OUT"; then
	ok "another host and memory size are named (--json: warnings)"
else
	not_ok "another host and memory size are named (--json: warnings)"; diag_run
fi

# a base with no samples and no peak: no percentage against it, anywhere
sql "$DB" "DELETE FROM sample WHERE run_id = 4; UPDATE run SET samples = 0, peak_rss = 0, sum_rss = 0, last_rss = 0 WHERE id = 4"
run "$RSW" compare 4 1
if [ "$RC" -eq 0 ] && grep -q '^warning: run 4, the base, has no samples' "$OUT" && ! grep -q '%)' "$OUT" &&
	grep -q '(new)' "$OUT"; then
	ok "a zero base gives \"new\", never a percentage"
else
	not_ok "a zero base gives \"new\", never a percentage"; diag_run
fi
done_testing
