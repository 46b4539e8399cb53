#!/bin/sh
# compare --stacks end to end, as root: two runs of t85's program recorded with
# --stacks, the second from a rebuild whose lines moved, matched by their functions;
# the change of each allocating function exact to the byte, a stack only in one run,
# the totals against the store, the JSON, and the refusals (a run without stacks, a
# missing run, more or fewer than two runs).
. tests/t/lib.sh

MiB=1048576
q() { sql "$RSSWATCH_DB" "$1"; }
last() { q "select max(id) from run"; }
# glibc maps a block of N MiB (a multiple of the page) with one page more: its header
block() { echo $(($1 * MiB + 4096)); }
# the stacks stored at the peak of run $1, and their bytes: what the recorder wrote
peak_rows() { q "select count(*) from stack_bytes where run_id = $1 and at = 'peak'"; }
peak_total() { q "select ifnull(sum(bytes), 0) from stack_bytes where run_id = $1 and at = 'peak'"; }
# field $2 of the row of JSON file $1 whose leaf is $3 (and, with $4, whose a_bytes or
# b_bytes is at least 1 MiB: the block of the test, not the first malloc's heap)
row() { sqlite3 :memory: "select json_extract(value, '\$.$2') from json_each(readfile('$1'))
	where json_extract(value, '\$.leaf') = '$3' and (max(ifnull(json_extract(value,
	'\$.a_bytes'), 0), ifnull(json_extract(value, '\$.b_bytes'), 0)) >= $MiB)"; }

require_stacks

SRC=tests/stacks
mkdir "$T/a" "$T/b"
check "the test program builds with -O2 -fomit-frame-pointer" \
	cc -O2 -g -fomit-frame-pointer -o "$T/a/prog" $SRC/prog.c -ldl
# the rebuild: the same code three lines further down
{ printf '\n\n\n'; cat $SRC/prog.c; } >"$T/b/prog.c"
check "and again with its lines moved" \
	cc -O2 -g -fomit-frame-pointer -o "$T/b/prog" "$T/b/prog.c" -ldl
check "and its library" cc -O2 -g -fomit-frame-pointer -shared -fPIC -o "$T/libsl.so" $SRC/lib.c

expect_exit 0 "run A: table 100, buffers 3 x 20" "$RSW" record -q --stacks -i 1s -- \
	"$T/a/prog" table 100 buffers 3 20
A=$(last)
expect_exit 0 "run B, rebuilt: table 60, buffers 5 x 20" "$RSW" record -q --stacks -i 1s -- \
	"$T/b/prog" table 60 buffers 5 20
B=$(last)
expect_exit 0 "run C: as A, and a library's 40 MiB" "$RSW" record -q --stacks -i 1s -- \
	"$T/a/prog" table 100 buffers 3 20 dlopen "$T/libsl.so" 40
C=$(last)
check "each run has its stacks at the peak stored" sh -c \
	"test '$(peak_rows "$A")' -gt 0 && test '$(peak_rows "$B")' -gt 0 && test '$(peak_rows "$C")' -gt 0"
check "the lines moved: B's alloc_table is at another line than A's" test \
	"$(q "select count(*) from stack s join stack t on s.run_id = $A and t.run_id = $B
		and s.frames like '%alloc_table (prog.c:%' and t.frames like '%alloc_table (prog.c:%'
		and s.frames = t.frames")" = 0

# --- the table
expect_exit 0 "compare A B --stacks" "$RSW" compare "$A" "$B" --stacks
cp "$OUT" "$T/ab.txt"
sed 's/^/# /' "$T/ab.txt"
check "a title naming both runs" \
	grep -Eq "^live bytes by stack at the peak: run $B against run $A, [0-9]+ stacks, 2 changed\$" "$T/ab.txt"
check "every other stack matched across the rebuild, unchanged" \
	grep -Eq '^ +[0-9.]+ [KM]iB +[0-9.]+ [KM]iB +0 B  [0-9]+ other stacks?, unchanged$' "$T/ab.txt"
check "the header: A, B, change, the allocating function" \
	grep -Eq "^ +run $A +run $B +change  allocated in\$" "$T/ab.txt"
check "alloc_table, matched across the rebuild: 100 MiB to 60 MiB, -40 MiB" \
	grep -Eq '^ +100\.0 MiB +60\.0 MiB +-40\.0 MiB  alloc_table$' "$T/ab.txt"
check "alloc_buffers: 60 MiB to 100 MiB, +40 MiB" \
	grep -Eq '^ +60\.0 MiB +100\.0 MiB +\+40\.0 MiB  alloc_buffers$' "$T/ab.txt"
check "neither is 'only in' one run" sh -c "! grep -Eq 'alloc_(table|buffers) \(only in' '$T/ab.txt'"
check "the two largest changes come first (the buffers' +40 MiB and 8 KiB of headers)" sh -c \
	"sed -n 3p '$T/ab.txt' | grep -q ' alloc_buffers\$' && sed -n 4p '$T/ab.txt' | grep -q ' alloc_table\$'"
check "a total line last" sh -c "tail -n 1 '$T/ab.txt' | grep -Eq '^ +[0-9.]+ [KMG]?i?B +[0-9.]+ [KMG]?i?B +[-+]?[0-9.]+ [KMG]?i?B  total\$'"

# --- the JSON: the exact bytes
expect_exit 0 "compare A B --stacks --json" "$RSW" compare "$A" "$B" --stacks --json
cp "$OUT" "$T/ab.json"
jsum() { sqlite3 :memory: "select ifnull(sum(json_extract(value, '\$.$2')), 0) from json_each(readfile('$1'))"; }
# the frames of the JSON row of leaf $2 (the block's), one a line
jframes() { sqlite3 :memory: "select group_concat(value, char(10)) from (select j.value from
	json_each(readfile('$1')) r, json_each(r.value, '\$.frames') j
	where json_extract(r.value, '\$.leaf') = '$2' and ifnull(json_extract(r.value, '\$.a_bytes'), 0) >= $MiB
	order by r.key, j.key)"; }
# the frames stored for run $1's block of leaf $2
sframes() { q "select s.frames from stack s join stack_bytes b on b.run_id = s.run_id and
	b.stack_id = s.id where s.run_id = $1 and b.at = 'peak' and b.bytes >= $MiB and
	s.frames like '%$2 (prog.c:%'"; }
check "--json is valid JSON" jvalid "$T/ab.json"
check "an array" test "$(sqlite3 :memory: "select json_type(readfile('$T/ab.json'))")" = array
check "alloc_table: a_bytes to the byte" test "$(row "$T/ab.json" a_bytes alloc_table)" = "$(block 100)"
check "alloc_table: b_bytes" test "$(row "$T/ab.json" b_bytes alloc_table)" = "$(block 60)"
check "alloc_table: change_bytes" test "$(row "$T/ab.json" change_bytes alloc_table)" = "$(($(block 60) - $(block 100)))"
check "alloc_buffers: a_bytes, 3 blocks" test "$(row "$T/ab.json" a_bytes alloc_buffers)" = "$((3 * $(block 20)))"
check "alloc_buffers: +2 blocks of 20 MiB, headers included" \
	test "$(row "$T/ab.json" change_bytes alloc_buffers)" = "$((2 * $(block 20)))"
bf=$(sframes "$B" alloc_table)
check "run B stored its block's stack" test -n "$bf"
check "the row's frames are B's as stored, innermost first, with B's lines" \
	test "$(jframes "$T/ab.json" alloc_table)" = "$bf"
check "the changes add up to the difference of the runs' stored totals" \
	test "$(jsum "$T/ab.json" change_bytes)" = "$(($(peak_total "$B") - $(peak_total "$A")))"
check "A's bytes add up to its total" test "$(jsum "$T/ab.json" a_bytes)" = "$(peak_total "$A")"
check "B's to its" test "$(jsum "$T/ab.json" b_bytes)" = "$(peak_total "$B")"
"$RSW" compare "$A" "$B" --stacks --format json >"$T/ab2.json" 2>&1
check "--format json is the same" cmp -s "$T/ab.json" "$T/ab2.json"

# --- a stack in one run only
expect_exit 0 "compare A C --stacks" "$RSW" compare "$A" "$C" --stacks
check "lib_alloc: only in run C, +40 MiB" \
	grep -Eq "^ +- +40\.0 MiB +\+40\.0 MiB  lib_alloc \(only in run $C\)\$" "$OUT"
check "alloc_table and alloc_buffers did not change: not in the table" sh -c \
	"! grep -Eq 'alloc_(table|buffers)\$' '$OUT'"
expect_exit 0 "compare C A --stacks --json" "$RSW" compare "$C" "$A" --stacks --json
cp "$OUT" "$T/ca.json"
check "the other way: lib_alloc's a_bytes is its block, b_bytes null, change -40 MiB" sh -c \
	"test '$(row "$T/ca.json" a_bytes lib_alloc)' = $(block 40) &&
	 test '$(row "$T/ca.json" b_bytes lib_alloc)' = '' &&
	 test '$(row "$T/ca.json" change_bytes lib_alloc)' = -$(block 40)"
check "and it comes first" test "$(jget "$T/ca.json" '$[0].leaf')" = lib_alloc

# --- --top
expect_exit 0 "--top 1" "$RSW" compare "$A" "$B" --stacks --top 1
check "--top 1: one stack, then one line for the others" sh -c \
	"test \$(grep -c 'alloc_' '$OUT') = 1 && grep -Eq '  [0-9]+ other stacks?' '$OUT'"

# --- refusals
"$RSW" record -q -- true >/dev/null 2>&1
D=$(last)
expect_exit 1 "a run without stacks fails" "$RSW" compare "$A" "$D" --stacks
check "and says which, in one line" sh -c \
	"test \$(wc -l <'$ERR') = 1 && grep -qx 'rsswatch: run $D has no stacks: record with --stacks to compare them' '$ERR'"
check "and prints nothing else" test ! -s "$OUT"
expect_exit 1 "the first run without stacks fails too" "$RSW" compare "$D" "$A" --stacks --json
check "and says so" grep -q "run $D has no stacks" "$ERR"
expect_exit 1 "a missing run fails" "$RSW" compare "$A" 9999 --stacks
check "and says so" grep -qx 'rsswatch: no run 9999' "$ERR"
expect_exit 2 "one run is a usage error" "$RSW" compare "$A" --stacks
expect_exit 2 "three runs are a usage error" "$RSW" compare "$A" "$B" "$C" --stacks
expect_exit 2 "groups are a usage error" "$RSW" compare "$A,$C" "$B" --stacks
expect_exit 2 "--top without --stacks is a usage error" "$RSW" compare "$A" "$B" --top 3
expect_exit 0 "compare without --stacks still compares the same runs" "$RSW" compare "$A" "$B"
check "with its peak row" grep -q '^peak ' "$OUT"

# --- across runs: which call site grows with a parameter (model 'stack[FUNC] ~ KEY')
export RSSWATCH_DB="$T/model.db"
for pw in 1 2 3 4; do
	"$RSW" record -q --stacks -i 1s --param pw=$pw -- "$T/a/prog" table 100 buffers $pw 20 \
		>"$OUT" 2>"$ERR" || not_ok "record pw=$pw"
done
"$RSW" record -q -i 1s --param pw=5 -- "$T/a/prog" table 100 buffers 5 20 >"$OUT" 2>"$ERR"
expect_exit 0 "model 'stack[alloc_buffers] ~ pw' over four runs with stacks" \
	"$RSW" model 'stack[alloc_buffers] ~ pw' --json
cp "$OUT" "$T/mb.json"
jv() { sqlite3 :memory: "select json_extract(readfile('$1'), '$2')"; }
check "  alloc_buffers grows by one 20 MiB block per pw, to the byte ($(jv "$T/mb.json" '$.coefficients[1].estimate'))" \
	awk -v b="$(jv "$T/mb.json" '$.coefficients[1].estimate')" -v w="$(block 20)" \
	'BEGIN { d = b - w; exit !(d < 1 && d > -1) }'
check "  the run without stacks is left out, saying why" \
	test "$(jv "$T/mb.json" '$.left_out[0].why')" = "no stacks at its peak (record --stacks gives them)"
expect_exit 0 "model 'stack[alloc_table] ~ pw'" "$RSW" model 'stack[alloc_table] ~ pw'
check "  alloc_table stays flat: it does not grow with pw" \
	grep -q "^no prediction: stack\[alloc_table\] does not grow with pw" "$OUT"
"$RSW" model 'stack[alloc_table] ~ pw' --json >"$T/mt.json" 2>"$ERR"
# (its first malloc also grew the heap: 100 MiB and a page, and malloc's first arena)
check "  the same bytes in every run, its 100 MiB block and more" sqlite3 :memory: \
	"select case when count(distinct json_extract(value, '\$.y_bytes')) = 1 and
		min(json_extract(value, '\$.y_bytes')) >= $(block 100) and count(*) = 4
		then 1 else abs(-9223372036854775808) end
	 from json_each(json_extract(readfile('$T/mt.json'), '\$.runs'))"
expect_exit 1 "a function no stack goes through fails" "$RSW" model 'stack[no_such_fn] ~ pw'
check "  and says so in one line" sh -c "test \$(wc -l <'$ERR') = 1 &&
	grep -q \"no stack at the peak of these runs goes through 'no_such_fn'\" '$ERR'"
expect_exit 2 "stack[] is a usage error" "$RSW" model 'stack[] ~ pw'

done_testing
