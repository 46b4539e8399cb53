#!/bin/sh
# record --stacks=faults end to end, as root: each rise of a process's highest resident
# bytes charged to the stack of the fault that made it. A C program (-O2
# -fomit-frame-pointer) touches a table, two buffers and many pieces of 64 bytes from
# malloc's arena (which the mmap mode sees only as the heap's growth); each function
# is charged its own bytes within the step (1 MiB, or 1/256 of the highest), the
# arena's pieces too; the freed buffers stay at the peak's snapshot; the text names the
# mode's words; a forked child's faults are its own. Prints TAP.
. tests/t/lib.sh

MiB=1048576
q() { sql "$RSSWATCH_DB" "$1"; }
last() { q "select max(id) from run"; }
# bytes and records charged at MOMENT (peak or end) of the last run to the stacks whose
# innermost frame of the program matches the LIKE pattern
held() { q "select ifnull(sum(b.bytes), 0) from stack_bytes b join stack s on s.run_id = b.run_id
	and s.id = b.stack_id where b.run_id = (select max(id) from run) and b.at = '$1' and
	s.frames like '$2'"; }
near() {	# near GOT WANT SLACK: |GOT - WANT| <= SLACK
	diag "got $1, want $2 (within $3)"
	[ -n "$1" ] && [ $(($1 - $2)) -le "$3" ] && [ $(($2 - $1)) -le "$3" ]
}

if [ "$(id -u)" != 0 ]; then
	skip "record --stacks needs root"
	done_testing
fi
if ! "$RSW" record -q --stacks=faults -- true 2>"$ERR"; then
	sed 's/^/# /' "$ERR"
	not_ok "record --stacks=faults runs as root here (kernel $(uname -r))"
	done_testing
fi

PROG="$T/prog"
check "the test program builds with -O2 -fomit-frame-pointer" \
	cc -O2 -g -fomit-frame-pointer -o "$PROG" tests/stacks/prog.c -ldl

expect_exit 0 "a table, two buffers and 48 MiB of small pieces, -v" "$RSW" record -v -q \
	--stacks=faults -i 1s -- "$PROG" table 64 buffers 2 32 small 48 free-buffers sleep 100
check "-v names the mode" grep -qF "the stacks of the faults that raise the peak" "$ERR"
check "the run's mode is stored" test "$(q "select stacks from run where id = $(last)")" = faults
diag "$(q "select b.at || ' ' || b.bytes || ' ' || b.blocks || ' ' || replace(s.frames, char(10), ';')
	from stack_bytes b join stack s on s.run_id = b.run_id and s.id = b.stack_id
	where b.run_id = $(last) and b.at = 'peak'" | cut -c1-200)"
# a step is 1 MiB here (the process stays under 256 MiB): each rise is charged whole
# to the stack of the fault that crossed it, so a function gets its bytes within a step
# on either side
check "alloc_table is charged its 64 MiB, within a step" \
	near "$(held peak '%alloc_table (prog.c:%')" $((64 * MiB)) $((2 * MiB))
check "alloc_buffers its 2 x 32 MiB, freed before the end" \
	near "$(held peak '%alloc_buffers (prog.c:%')" $((64 * MiB)) $((2 * MiB))
check "alloc_small its 48 MiB of pieces from the arena" \
	near "$(held peak '%alloc_small (prog.c:%')" $((48 * MiB)) $((3 * MiB))
check "every stack walks to main" test "$(q "select count(*) from stack where run_id = $(last)
	and frames like '%alloc_%' and frames not like '%main (prog.c:%'")" = 0
peak=$(q "select peak_rss from run where id = $(last)")
sum=$(q "select sum(bytes) from stack_bytes where run_id = $(last) and at = 'peak'")
check "the rises at the peak add up to the peak, less what came before the first" \
	near "$sum" "$peak" $((4 * MiB))
"$RSW" show "$(last)" >"$T/show.txt" 2>&1
sed -n '/^at the peak/,/^$/p' "$T/show.txt" | sed 's/^/# /'
check "show: the peak's table says touched, with faults" \
	grep -Eq '^at the peak \(.*\): [0-9.]+ MiB touched by [0-9]+ stacks?$' "$T/show.txt"
check "show: alloc_small is a leaf of its own" \
	grep -Eq '^ +[0-9.]+ MiB +[0-9.]+% +[0-9]+  alloc_small$' "$T/show.txt"

# --- a forked child's faults are its own, and at the end what it held when it exited
expect_exit 0 "a child touching 40 MiB" "$RSW" record -q --stacks=faults -i 1s -- \
	"$PROG" table 8 child 40 50 sleep 50
check "child_work is charged its 40 MiB at the peak" \
	near "$(held peak '%child_work (prog.c:%')" $((40 * MiB)) $((2 * MiB))
check "and at the end, what the child held when it exited (its 40 MiB)" \
	near "$(held end '%child_work (prog.c:%')" $((40 * MiB)) $((2 * MiB))

expect_exit 2 "--stacks=nope is refused" "$RSW" record --stacks=nope -- true
done_testing
