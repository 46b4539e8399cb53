#!/bin/sh
# Retention: gc thins old runs and brings a database of a million samples under
# --max-db, and every run's peak (ls, show, plot) stays what it was; --keep touches only
# older runs, --dry-run nothing, a run being recorded never; bad AGE and SIZE are usage
# errors; record --keep applies it when the recording ends.
. tests/t/lib.sh

DB="$T/db/big.db"

. tests/t/gen-runs.sh

# id:peak of every run, from ls --json
peaks() {
	"$RSW" ls --json --db "$1" >"$T/ls.json" &&
	sqlite3 :memory: "select group_concat(json_extract(value, '\$.id') || ':' ||
		json_extract(value, '\$.peak_rss_bytes'), ' ') from json_each(readfile('$T/ls.json'))"
}
# id:max(rss) of every run's stored samples
sampled_max() { sql "$1" "select group_concat(run_id || ':' || m, ' ') from
	(select run_id, max(rss) m from sample group by run_id order by run_id)"; }
size_of() { s=0; for f in "$1" "$1-wal"; do [ -f "$f" ] && s=$((s + $(stat -c %s "$f"))); done; echo $s; }
one_line() { [ "$(wc -l <"$ERR")" -eq 1 ]; }

# --- bad AGE and SIZE: one line, exit 2, before anything is opened
for bad in 12 3x -1d 1.2.3d 5ms d ''; do
	expect_exit 2 "gc --keep '$bad': exit 2" "$RSW" gc --db "$DB" --keep "$bad"
	check "gc --keep '$bad': one line naming the value" sh -c "[ \$(wc -l <'$ERR') -eq 1 ] && grep -q -- \"--keep '$bad'\" '$ERR'"
done
for bad in 0 2Q -1G 1.5.2M G 10%; do
	expect_exit 2 "gc --max-db '$bad': exit 2" "$RSW" gc --db "$DB" --max-db "$bad"
	check "gc --max-db '$bad': one line naming the value" sh -c "[ \$(wc -l <'$ERR') -eq 1 ] && grep -q -- \"--max-db '$bad'\" '$ERR'"
done
expect_exit 2 "record --keep 3x: exit 2" "$RSW" record -q --db "$DB" --keep 3x -- "$HOG" exit 0
check "record --keep 3x: one line" one_line
expect_exit 2 "record --max-db 0: exit 2" "$RSW" record -q --db "$DB" --max-db 0 -- "$HOG" exit 0
expect_exit 2 "gc with an argument: exit 2" "$RSW" gc --db "$DB" 12
check "bad usage created no database" test ! -e "$DB"

# --- a real run, then ten copies of it with 100,000 samples each: a million samples
run "$RSW" record -q -i 10ms --no-tree --no-cgroup --db "$DB" -- "$HOG" +4M sleep 200ms spike 32M sleep 200ms exit 0
check "the base run was recorded" test "$RC" -eq 0
gen "$DB" 10 100000
check "a million samples" test "$(sql "$DB" "select count(*) from sample where run_id > 1")" -eq 1000000
P0=$(peaks "$DB")
M0=$(sampled_max "$DB")
check "every copy's stored peak is its highest sample" test "$(sql "$DB" "select count(*) from run
	where id > 1 and peak_rss = (select max(rss) from sample where run_id = run.id)")" -eq 10
"$RSW" plot 3 --db "$DB" -o "$T/before.svg" 2>/dev/null
grep -o '<g class="peak">.*</g>' "$T/before.svg" | head -1 >"$T/peak-before"
check "plot draws run 3's peak before gc" grep -q 'peak 102.0 MiB' "$T/peak-before"

# --- --dry-run: says what it would do, changes nothing
sum0=$(md5sum <"$DB")
rows0=$(sql "$DB" "select count(*) from sample")
LIMIT=300 run "$RSW" gc --db "$DB" --keep 5d --dry-run
check "dry run: exit 0" test "$RC" -eq 0
check "dry run: says so" grep -q 'dry run, nothing changed' "$OUT"
check "dry run: names runs it would thin" grep -q 'would thin' "$OUT"
grep -o '^run [0-9]*: would thin' "$OUT" | sed 's/^run //; s/:.*//' | sort -n | tr '\n' ' ' >"$T/would"
check "dry run: the database file is unchanged" test "$(md5sum <"$DB")" = "$sum0"
check "dry run: no sample removed" test "$(sql "$DB" "select count(*) from sample")" -eq "$rows0"
check "dry run: no run marked thinned" test "$(sql "$DB" "select count(*) from run_gc")" -eq 0

# --- --keep 5d: only runs that ended more than 5 days ago, and the same ones it named
old=$(sql "$DB" "select group_concat(id, ' ') from (select id from run
	where ended_at < (unixepoch() - 5 * 86400) * 1000000000 order by id)")
check "some runs are older than 5 days, some younger" sh -c "[ -n '$old' ] && [ \$(echo $old | wc -w) -lt 11 ]"
LIMIT=300 run "$RSW" gc --db "$DB" --keep 5d
check "gc --keep 5d: exit 0" test "$RC" -eq 0
thinned=$(sql "$DB" "select group_concat(run_id, ' ') from (select run_id from run_gc order by run_id)")
check "gc --keep 5d thinned exactly the runs older than 5 days" test "$thinned" = "$old"
check "the dry run had named the same runs" test "$(cat "$T/would")" = "$old "
check "thinned runs hold at most 1000 samples" test "$(sql "$DB" "select count(*) from
	(select run_id from sample where run_id in (select run_id from run_gc) group by run_id having count(*) > 1000)")" -eq 0
check "younger runs keep every sample" test "$(sql "$DB" "select count(*) from run where id not in
	(select run_id from run_gc) and samples != (select count(*) from sample where run_id = run.id)")" -eq 0
check "gc --keep: peaks in ls unchanged" test "$(peaks "$DB")" = "$P0"
check "gc --keep: every run's highest sample unchanged" test "$(sampled_max "$DB")" = "$M0"
"$RSW" plot 3 --db "$DB" -o "$T/after.svg" 2>/dev/null
grep -o '<g class="peak">.*</g>' "$T/after.svg" | head -1 >"$T/peak-after"
check "plot of thinned run 3 draws the same peak, at the same place" cmp -s "$T/peak-before" "$T/peak-after"
"$RSW" show 3 --json --db "$DB" >"$T/show.json" 2>/dev/null
check "show of a thinned run: its peak" test "$(sfield peak_rss_bytes)" -eq $((104857600 + 2 * 1048576))
check "show of a thinned run: its samples as recorded" test "$(sfield samples)" -eq 100000
check "show of a thinned run: its mark and event" \
	sh -c "[ \$(sqlite3 :memory: \"select json_array_length(readfile('$T/show.json'), '\$.marks')\") -eq 1 ] &&
	       [ \$(sqlite3 :memory: \"select json_array_length(readfile('$T/show.json'), '\$.events')\") -eq 1 ]"
check "show --json says the run was thinned: 1000 of its 100000 samples kept" \
	test "$(sfield thinned.points) $(sfield thinned.samples_recorded)" = "1000 100000"
"$RSW" show 3 --db "$DB" >"$T/show.txt" 2>/dev/null
check "show says so in a line of its own" grep -Eq \
	'^thinned   .* by retention: at most 1000 of the 100000 samples kept, each [0-9.]+m?s at its maximum' "$T/show.txt"
young=$(sql "$DB" "select min(id) from run where id not in (select run_id from run_gc)")
"$RSW" show "$young" --json --db "$DB" >"$T/show.json" 2>/dev/null
check "a run as recorded: thinned is null" \
	test "$(sqlite3 :memory: "select json_type(readfile('$T/show.json'), '\$.thinned')")" = null

# --- --max-db: the million-sample database brought under the bound
before=$(size_of "$DB")
LIMIT=300 run "$RSW" gc --db "$DB" --keep none --max-db 4M --json
check "gc --max-db 4M: exit 0" test "$RC" -eq 0
check "gc --max-db 4M: valid JSON" jvalid "$OUT"
after=$(size_of "$DB")
check "gc --max-db 4M: the file is under 4 MiB ($before -> $after bytes)" test "$after" -le $((4 << 20))
check "gc --max-db 4M: JSON says bytes before and after" \
	sh -c "[ \$(sqlite3 :memory: \"select json_extract(readfile('$OUT'), '\$.bytes_before')\") -eq $before ] &&
	       [ \$(sqlite3 :memory: \"select json_extract(readfile('$OUT'), '\$.bytes_after')\") -eq $after ]"
check "gc --max-db 4M: rows removed reported" test "$(jget "$OUT" '$.rows_removed')" -gt 0
check "gc --max-db 4M: no series had to be removed" test "$(jget "$OUT" '$.runs_emptied')" -eq 0
check "gc --max-db: peaks in ls unchanged" test "$(peaks "$DB")" = "$P0"
check "gc --max-db: every run's highest sample unchanged" test "$(sampled_max "$DB")" = "$M0"
expect_exit 0 "gc again: exit 0" "$RSW" gc --db "$DB" --keep none --max-db 4M
check "gc again: nothing more to do" grep -q ' 0 thinned, 0 emptied, 0 rows removed' "$OUT"

# --- record --keep: applied when the recording ends, the command's status kept
SMALL="$T/db/small.db"
"$RSW" record -q -i 10ms --no-tree --no-cgroup --db "$SMALL" -- "$HOG" exit 0 2>/dev/null
gen "$SMALL" 2 5000
run "$RSW" record -q -i 10ms --db "$SMALL" --keep 1d -- "$HOG" +1M sleep 50ms exit 3
check "record --keep: the command's status" test "$RC" -eq 3
check "record --keep: the two old runs thinned" test "$(sql "$SMALL" "select group_concat(run_id) from run_gc")" = "2,3"
check "record --keep: the new run keeps its samples" test "$(sql "$SMALL" "select count(*) from sample where run_id = 4")" -gt 0
check "record --keep: the new run is not marked thinned" test "$(sql "$SMALL" "select count(*) from run_gc where run_id = 4")" -eq 0

# --- a database locked by another process: one line, exit 1
gc0=$(sql "$SMALL" "select count(*) from sample"; sql "$SMALL" "select group_concat(run_id || ':' || points || ':' || t) from run_gc")
(echo "BEGIN IMMEDIATE; DELETE FROM mark WHERE 0;"
 wait_until 60 test -e "$T/unlock"; echo "ROLLBACK;") | sqlite3 "$SMALL" &
holder=$!
_bg="$_bg $holder"
locked() { ! sqlite3 "$SMALL" "BEGIN IMMEDIATE; ROLLBACK;" 2>/dev/null; }
if wait_until 10 locked; then
	LIMIT=60 run "$RSW" gc --db "$SMALL" --keep none --max-db 1K
	check "locked database: exit 1" test "$RC" -eq 1
	check "locked database: one line saying so" sh -c "[ \$(wc -l <'$ERR') -eq 1 ] && grep -q 'locked by another process' '$ERR'"
	check "locked database: nothing changed" \
		test "$(sql "$SMALL" "select count(*) from sample"; sql "$SMALL" "select group_concat(run_id || ':' || points || ':' || t) from run_gc")" = "$gc0"
else
	skip "could not hold the lock"
	skip "locked database (message)"
	skip "locked database (nothing removed)"
fi
touch "$T/unlock"
finish "$holder"

run "$RSW" record -q -i 10ms --db "$SMALL" --max-db 1K -- "$HOG" +1M sleep 50ms exit 4
check "record --max-db that cannot be met: the command's status" test "$RC" -eq 4
check "record --max-db that cannot be met: one line on stderr saying so, after the summary" \
	sh -c "[ \$(grep -c 'max-db' '$ERR') -eq 1 ] && tail -1 '$ERR' | grep -q '^rsswatch: gc: .*above --max-db'"
check "record --max-db: every finished series removed, the runs kept" \
	test "$(sql "$SMALL" "select count(*) from sample") $(sql "$SMALL" "select count(*) from run")" = "0 5"

# --- a run being recorded is never touched, even by a bound that cannot be met
spawn rec "$RSW" record -q -i 10ms --db "$DB" -- "$HOG" +2M await "$T/go"
rec=$!
wait_until 10 sh -c "[ \$(sqlite3 '$DB' \"select count(*) from sample where run_id = 12\") -gt 20 ]"
n0=$(sql "$DB" "select count(*) from sample where run_id = 12")
run "$RSW" gc --db "$DB" --keep 0s --max-db 1K
check "a bound that cannot be met: exit 1" test "$RC" -eq 1
check "a bound that cannot be met: says what is left" grep -q 'above --max-db' "$ERR"
check "the live run is left alone" grep -q '1 still being recorded, left alone' "$OUT"
check "the live run kept every sample" test "$(sql "$DB" "select count(*) from sample where run_id = 12")" -ge "$n0"
check "the live run is not marked" test "$(sql "$DB" "select count(*) from run_gc where run_id = 12")" -eq 0
check "finished runs' series removed" test "$(sql "$DB" "select count(*) from sample where run_id < 12")" -eq 0
P1=$(peaks "$DB" | sed 's/^12:[0-9]* //')
check "their summaries kept: peaks in ls unchanged" test "$P1" = "$P0"
check "their marks and events kept" test "$(sql "$DB" "select count(*) from mark where run_id between 2 and 11") $(sql "$DB" "select count(*) from event where run_id between 2 and 11")" = "10 10"
"$RSW" plot 5 --db "$DB" -o "$T/empty.svg" 2>/dev/null
check "plot of an emptied run still marks its peak" grep -q 'peak 104.0 MiB' "$T/empty.svg"
touch "$T/go"
finish "$rec"
check "the recording ended normally" test "$RC" -eq 0

done_testing
