#!/bin/sh
# record --stacks over sets and series, as root, with t85's program of known blocks
# (built with -O2 -fomit-frame-pointer). -g CGROUP: two processes in a fresh child
# memory cgroup and a third moved in while recording have each block charged to its
# own function, to the byte, and a process outside the cgroup nothing; a process moved
# out of the cgroup while recording leaves the stacks as it leaves the set's peak.
# --follow (-n PATTERN, then -g CGROUP): two successive instances of different blocks,
# each run holding its own instance's stacks only, at the peak and at the end, whichever
# instance is the larger. Every step waits for what the recorder stored (a sample that
# lists the process, a line on its stderr) or for a file the program writes; nothing
# sleeps to synchronise. Prints TAP.
. tests/t/lib.sh
. tests/t/memcg.sh

MiB=1048576
q() { sql "$RSSWATCH_DB" "$1"; }
# held RUN MOMENT LIKE: bytes held at MOMENT (peak or end) of RUN by the stacks whose
# frames match LIKE, each holding 1 MiB or more (the first malloc's 132 KiB heap, made
# by brk from the same function, is not a block of the test)
held() { q "select ifnull(sum(b.bytes), 0) from stack_bytes b join stack s on s.run_id = b.run_id
	and s.id = b.stack_id where b.run_id = $1 and b.at = '$2' and s.frames like '$3'
	and b.bytes >= $MiB"; }
blocks() { q "select ifnull(sum(b.blocks), 0) from stack_bytes b join stack s on
	s.run_id = b.run_id and s.id = b.stack_id where b.run_id = $1 and b.at = '$2' and
	s.frames like '$3' and b.bytes >= $MiB"; }
# glibc maps a block of N MiB (a multiple of the page) with one page more: its header
block() { echo $(($1 * MiB + 4096)); }
same() { [ "$1" = "$2" ] || { diag "got '$1', want '$2'"; return 1; }; }
# the stacks of 1 MiB or more stored with RUN, for the log
# (at, bytes, blocks and the program's innermost frame)
dump() { diag "run $1: $(q "select b.at || ' ' || b.bytes || ' ' || b.blocks || ' ' ||
	replace(s.frames, char(10), ';') from stack_bytes b join stack s on s.run_id = b.run_id
	and s.id = b.stack_id where b.run_id = $1 and b.bytes >= $MiB" |
	sed -E 's/ [^ ]*mmap64 .*;(alloc_[a-z]+ \(prog\.c:[0-9]+\)).*/ \1/')"; }
# whether every name given exists under $T
all_there() { for _f; do [ -e "$T/$_f" ] || return 1; done; }
# the run (id above $1) whose stored samples list every process PID given ($2...)
# as a member: the recorder has found them, and the engine tracks them
set_run() {
	_above=$1
	shift
	_q="select p.run_id from proc_sample p join run r on r.id = p.run_id
		where p.run_id > $_above and r.samples > 0 and p.pid in ($(echo "$*" | tr ' ' ,))
		group by p.run_id having count(distinct p.pid) = $#"
	_r=$(q "$_q" 2>/dev/null)
	[ -n "$_r" ] && echo "$_r"
}
# the run (id above $1) of one process PID ($2) with a sample stored
pid_run() { _r=$(q "select id from run where id > $1 and pid = $2 and samples > 0" 2>/dev/null) &&
	[ -n "$_r" ] && echo "$_r"; }

require_stacks
parent=$(memcg_dir)
if [ -z "$parent" ] || [ ! -d "$parent" ]; then
	skip "-g needs a memory cgroup controller"
	done_testing
fi
# A child cgroup of this shell's own; removed at the end, once what the suite started
# in it is gone (killed by lib.sh's clean-up, which runs first).
newcg() {
	mkdir "$parent/$1" || return 1
	at_exit "wait_until 30 rmdir '$parent/$1' 2>/dev/null"
}
cg=$parent/rsw-t94-$$
check "a fresh child memory cgroup" newcg "rsw-t94-$$"

PROG="$T/prog"
check "the test program builds with -O2 -fomit-frame-pointer" \
	cc -O2 -g -fomit-frame-pointer -o "$PROG" tests/stacks/prog.c -ldl

# --- -g CGROUP: two processes in the cgroup when the recording starts, a third moved
# in while it runs (tracked from the move, in the kernel: it allocates at once), and one
# outside it allocating meanwhile. Those in the cgroup wait for "go" before they
# allocate: blocks mapped before the attach have no stack (docs/guide/stacks.md).
spawn ga sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" touch "$3/ga0" await "$3/go" \
	table 40 touch "$3/ga1" await "$3/end"' - "$cg" "$PROG" "$T"
pa=$!
spawn gb sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" touch "$3/gb0" await "$3/go" \
	buffers 2 16 touch "$3/gb1" await "$3/end" free-buffers' - "$cg" "$PROG" "$T"
pb=$!
spawn gx "$PROG" touch "$T/gx0" await "$T/go" zeroed 24 touch "$T/gx1" await "$T/end"
wait_until 60 all_there ga0 gb0 gx0
check "two processes in the cgroup, one outside it" sh -c \
	"grep -qx $pa '$cg/cgroup.procs' && grep -qx $pb '$cg/cgroup.procs' && test \$(wc -l <'$cg/cgroup.procs') = 2"
before=$(q "select ifnull(max(id), 0) from run")
spawn grec "$RSW" record -q --stacks -i 100ms -g "$cg"
rec=$!
if wait_until 60 set_run "$before" $pa $pb >/dev/null; then
	ok "-g: a sample of the recording lists both processes"
else
	not_ok "-g: a sample of the recording lists both processes"
	diag "$(cat "$T/grec.err")"
fi
R=$(set_run "$before" $pa $pb)
touch "$T/go"
wait_until 60 all_there ga1 gb1 gx1
spawn gc sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" grown 12 touch "$3/gc1" await "$3/end"' \
	- "$cg" "$PROG" "$T"
wait_until 60 all_there gc1
touch "$T/end"
finish $rec
check "-g: the recording ends when the cgroup empties, status 0" test "$RC" = 0
R=${R:-0}
dump "$R"
check "-g: the run is the cgroup's, with stacks" \
	same "$(q "select mode || ' ' || stacks from run where id = $R")" "cgroup mmap"
check "-g: the first process's alloc_table holds its 40 MiB at the peak, to the byte" \
	same "$(held "$R" peak '%alloc_table (prog.c:%')" "$(block 40)"
check "-g: the second's alloc_buffers its 2 blocks of 16 MiB" \
	same "$(held "$R" peak '%alloc_buffers (prog.c:%') $(blocks "$R" peak '%alloc_buffers (prog.c:%')" \
	"$((2 * $(block 16))) 2"
# realloc of its 1 MiB block to 12 MiB moves it with mremap: one block, its new size
check "-g: the process moved in while recording: alloc_grown its 12 MiB" \
	same "$(held "$R" peak '%alloc_grown (prog.c:%') $(blocks "$R" peak '%alloc_grown (prog.c:%')" \
	"$(block 12) 1"
check "-g: nothing of the process outside the cgroup (its alloc_zeroed)" \
	same "$(held "$R" peak '%alloc_zeroed%')" 0
check "-g: at the end, what each held when it exited: the table, no buffers (freed)" \
	same "$(held "$R" end '%alloc_table (prog.c:%') $(held "$R" end '%alloc_buffers%')" \
	"$(block 40) 0"
check "-g: the snapshot's time is inside the run" \
	same "$(q "select stacks_peak_at > started_at and stacks_peak_at <= ended_at from run
		where id = $R")" 1
wait_until 30 sh -c "! grep -q . '$cg/cgroup.procs'"

# --- -g: a process moved out of the cgroup while recording is no longer the run's. Both
# allocate; the second is moved out (the recorder stores that it left), frees its
# buffers and makes a block of its own; then the first makes a new peak of the set.
# The snapshot at that peak is the first process's blocks alone: the buffers were freed
# before it, and the block made after the move is not the run's (the set's peak counts
# neither: the share column of show would add up past 100%).
spawn oa sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" touch "$3/oa0" await "$3/ogo" \
	table 40 touch "$3/oa1" await "$3/ob2" zeroed 48 touch "$3/oa2" await "$3/oend"' \
	- "$cg" "$PROG" "$T"
pa=$!
spawn ob sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" touch "$3/ob0" await "$3/ogo" \
	buffers 2 16 touch "$3/ob1" await "$3/ogo2" free-buffers grown 12 touch "$3/ob2" \
	await "$3/oend"' - "$cg" "$PROG" "$T"
pb=$!
wait_until 60 all_there oa0 ob0
before=$(q "select ifnull(max(id), 0) from run")
spawn orec "$RSW" record -q --stacks -i 100ms -g "$cg"
rec=$!
wait_until 60 set_run "$before" $pa $pb >/dev/null
R=$(set_run "$before" $pa $pb)
R=${R:-0}
touch "$T/ogo"
wait_until 60 all_there oa1 ob1
echo $pb >"$parent/cgroup.procs"
left() { test "$(q "select count(*) from proc_sample where run_id = $R and pid = $pb and gone = 1")" = 1; }
if wait_until 60 left; then
	ok "-g: the process moved out of the cgroup is stored as gone from the set"
else
	not_ok "-g: the process moved out of the cgroup is stored as gone from the set"
fi
touch "$T/ogo2"
wait_until 60 all_there oa2
touch "$T/oend"
finish $pa
finish $pb
finish $rec
check "-g: the recording ends with its last member, status 0" test "$RC" = 0
dump "$R"
check "-g: the new peak's snapshot holds the member's table and calloc, to the byte" \
	same "$(held "$R" peak '%alloc_table (prog.c:%') $(held "$R" peak '%alloc_zeroed (prog.c:%')" \
	"$(block 40) $(block 48)"
check "-g: nothing of the block made after the move out (alloc_grown)" \
	same "$(held "$R" peak '%alloc_grown%')" 0
check "-g: nor of the buffers it freed after the move, before the peak (alloc_buffers)" \
	same "$(held "$R" peak '%alloc_buffers%')" 0
check "-g: the bytes by stack at the peak are no more than the run's peak" \
	same "$(q "select (select sum(bytes) from stack_bytes where run_id = $R and at = 'peak')
		<= peak_rss from run where id = $R")" 1
"$RSW" show "$R" >"$T/show.txt" 2>&1
sed -n '/^at the peak/,/^$/p' "$T/show.txt" | sed 's/^/# /'

# --- --follow: two instances, one after the other, each of its own blocks (the big one
# and the small one) and each allocating once its run has a sample; -n records the big
# one first, -g the small one: a run whose peak is below the last run's still has its
# own snapshot. figs RUN MOMENT: the bytes of the three functions involved.
# (each is steps of the program, split into its arguments where it is used unquoted)
BIG="table 50 zeroed 20"
SMALL="table 30 buffers 2 10"
figs() { echo "table $(held "$1" "$2" '%alloc_table (prog.c:%')" \
	"buffers $(held "$1" "$2" '%alloc_buffers (prog.c:%')" \
	"zeroed $(held "$1" "$2" '%alloc_zeroed (prog.c:%')"; }
big_peak="table $(block 50) buffers 0 zeroed $(block 20)"
big_end=$big_peak
small_peak="table $(block 30) buffers $((2 * $(block 10))) zeroed 0"
small_end="table $(block 30) buffers 0 zeroed 0"	# its buffers freed before it exits
series() { q "select group_concat(id || ' ' || outcome || ' ' || ifnull(stacks, '-'), ', ')
	from (select id, outcome, stacks from run where series = $1 order by id)"; }
inside() { q "select group_concat(stacks_peak_at > started_at and stacks_peak_at <= ended_at)
	from run where id in ($1, $2)"; }

# --follow -n PATTERN: instances of a copy of the program named for the pattern
NAME=rswf$$
cp "$PROG" "$T/$NAME"
waits() { test "$(grep -c "waiting for a process" "$1")" -ge "$2"; }
spawn nrec "$RSW" record --stacks -i 100ms --follow -n "^$NAME"
rec=$!
if wait_until 60 waits "$T/nrec.err" 1; then
	ok "--follow -n: waits for a first instance"
else
	not_ok "--follow -n: waits for a first instance"
	diag "$(cat "$T/nrec.err")"
fi
before=$(q "select ifnull(max(id), 0) from run")
# shellcheck disable=SC2086
spawn n1 "$T/$NAME" await "$T/n1go" $BIG touch "$T/n1done" await "$T/n1end"
i1=$!
wait_until 60 pid_run "$before" $i1 >/dev/null
N1=$(pid_run "$before" $i1)
touch "$T/n1go"
wait_until 60 all_there n1done
touch "$T/n1end"
finish $i1
# shellcheck disable=SC2086
spawn n2 "$T/$NAME" await "$T/n2go" $SMALL touch "$T/n2done" await "$T/n2end" free-buffers
i2=$!
if wait_until 60 pid_run "$before" $i2 >/dev/null; then
	ok "--follow -n: the second instance is recorded as a run of its own"
else
	not_ok "--follow -n: the second instance is recorded as a run of its own"
	diag "$(cat "$T/nrec.err")"
fi
N2=$(pid_run "$before" $i2)
touch "$T/n2go"
wait_until 60 all_there n2done
touch "$T/n2end"
finish $i2
wait_until 60 waits "$T/nrec.err" 3
kill -INT $rec
finish $rec
check "--follow -n: SIGINT while waiting ends it, status 0" test "$RC" = 0
N1=${N1:-0}
N2=${N2:-0}
dump "$N1"
dump "$N2"
check "--follow -n: two runs ($N1, $N2) of one series, both with stacks" \
	same "$(series "$N1")" "$N1 exited mmap, $N2 exited mmap"
check "--follow -n: run 1 at the peak: the big instance's table and calloc, to the byte" \
	same "$(figs "$N1" peak)" "$big_peak"
check "--follow -n: run 1 at the end: the same" same "$(figs "$N1" end)" "$big_end"
check "--follow -n: run 2 at the peak: the small one's table and buffers, none of run 1's" \
	same "$(figs "$N2" peak)" "$small_peak"
check "--follow -n: run 2 at the end: its table, its buffers freed, none of run 1's" \
	same "$(figs "$N2" end)" "$small_end"
check "--follow -n: each run's snapshot is taken inside the run" same "$(inside "$N1" "$N2")" "1,1"

# --follow -g CGROUP (named by its path in the hierarchy): each instance moved into the
# cgroup once the recorder has seen it empty and waits (t74)
rel=${cg#/sys/fs/cgroup/memory}
[ "$rel" = "$cg" ] && rel=${cg#/sys/fs/cgroup}
spawn frec "$RSW" record --stacks -i 100ms --follow -g "$rel"
rec=$!
gwaits() { test "$(grep -c "waiting for a process in memory cgroup" "$T/frec.err")" -ge "$1"; }
if wait_until 60 gwaits 1; then
	ok "--follow -g: waits for a process in the empty cgroup"
else
	not_ok "--follow -g: waits for a process in the empty cgroup"
	diag "$(cat "$T/frec.err")"
fi
before=$(q "select ifnull(max(id), 0) from run")
spawn f1 sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" await "$3/f1go" '"$SMALL"' \
	touch "$3/f1done" await "$3/f1end" free-buffers' - "$cg" "$PROG" "$T"
i1=$!
wait_until 60 set_run "$before" $i1 >/dev/null
G1=$(set_run "$before" $i1)
touch "$T/f1go"
wait_until 60 all_there f1done
touch "$T/f1end"
finish $i1
wait_until 60 gwaits 2
spawn f2 sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" await "$3/f2go" '"$BIG"' \
	touch "$3/f2done" await "$3/f2end"' - "$cg" "$PROG" "$T"
i2=$!
if wait_until 60 set_run "$before" $i2 >/dev/null; then
	ok "--follow -g: the second instance is recorded as a run of its own"
else
	not_ok "--follow -g: the second instance is recorded as a run of its own"
	diag "$(cat "$T/frec.err")"
fi
G2=$(set_run "$before" $i2)
touch "$T/f2go"
wait_until 60 all_there f2done
touch "$T/f2end"
finish $i2
wait_until 60 gwaits 3
kill -INT $rec
finish $rec
check "--follow -g: SIGINT while waiting ends it, status 0" test "$RC" = 0
G1=${G1:-0}
G2=${G2:-0}
dump "$G1"
dump "$G2"
check "--follow -g: two runs ($G1, $G2) of one series, both with stacks" \
	same "$(series "$G1")" "$G1 exited mmap, $G2 exited mmap"
check "--follow -g: run 1 at the peak: the small instance's table and buffers" \
	same "$(figs "$G1" peak)" "$small_peak"
check "--follow -g: run 1 at the end: its table, its buffers freed" \
	same "$(figs "$G1" end)" "$small_end"
check "--follow -g: run 2 at the peak: the big one's table and calloc, none of run 1's" \
	same "$(figs "$G2" peak)" "$big_peak"
check "--follow -g: run 2 at the end: the same" same "$(figs "$G2" end)" "$big_end"
check "--follow -g: each run's snapshot is taken inside the run" same "$(inside "$G1" "$G2")" "1,1"

done_testing
