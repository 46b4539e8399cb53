#!/bin/sh
# record --stacks=malloc end to end, as root: every block the C library's allocator
# hands out (malloc, calloc, realloc, posix_memalign, aligned_alloc), charged to the
# stack of its caller, exact to the byte; the blocks freed before the end stay in the
# peak's snapshot; a forked child's allocations once its probes are on (the recorder's
# -v line is the handshake); the text says "allocated". Prints TAP.
. tests/t/lib.sh

MiB=1048576
q() { sql "$RSSWATCH_DB" "$1"; }
last() { q "select max(id) from run"; }
# bytes and blocks charged at MOMENT (peak or end) of the last run to the stacks whose
# frames match the LIKE pattern
held() { q "select ifnull(sum(b.bytes), 0) from stack_bytes b join stack s on s.run_id = b.run_id
	and s.id = b.stack_id where b.run_id = (select max(id) from run) and b.at = '$1' and
	s.frames like '$2'"; }
blocks() { q "select ifnull(sum(b.blocks), 0) from stack_bytes b join stack s on
	s.run_id = b.run_id and s.id = b.stack_id where b.run_id = (select max(id) from run)
	and b.at = '$1' and s.frames like '$2'"; }
same() { diag "got $1, want $2"; [ "$1" = "$2" ]; }

if [ "$(id -u)" != 0 ]; then
	skip "record --stacks needs root"
	done_testing
fi
# A recorder under AddressSanitizer drains the records two to three times slower than
# the plain one, and a program's thousands of mallocs then outrun the ring: the blocks
# are counted lost (stacks_incomplete), as they should be, but no figure can be held to
# the byte. The plain build holds them; t85 and t88 run the stacks under the sanitizer.
if nm "$RSW" 2>/dev/null | grep -q __asan_init; then
	skip "--stacks=malloc to the byte: $RSW is built with AddressSanitizer (too slow to drain every malloc)"
	done_testing
fi
if ! "$RSW" record -q --stacks=malloc -- true 2>"$ERR"; then
	sed 's/^/# /' "$ERR"
	not_ok "record --stacks=malloc runs as root here (kernel $(uname -r))"
	done_testing
fi
check "it says what the mode costs when it starts" grep -q "100 to 1,000 times slower" "$ERR"

PROG="$T/prog"
check "the test program builds with -O2 -fomit-frame-pointer" \
	cc -O2 -g -fomit-frame-pointer -o "$PROG" tests/stacks/prog.c -ldl

expect_exit 0 "calloc, realloc, posix_memalign, aligned_alloc, pieces, buffers freed, -v" \
	"$RSW" record -v -q --stacks=malloc -i 1s -- "$PROG" zeroed 3 grown 5 aligned 2 \
	pieces 5000 1000 buffers 2 32 table 8 free-buffers sleep 100
check "-v names the mode" grep -qF "live bytes by call stack (malloc and its kin" "$ERR"
check "the run's mode is stored" test "$(q "select stacks from run where id = $(last)")" = malloc
diag "$(q "select b.at || ' ' || b.bytes || ' ' || b.blocks || ' ' || replace(s.frames, char(10), ';')
	from stack_bytes b join stack s on s.run_id = b.run_id and s.id = b.stack_id
	where b.run_id = $(last) and b.at = 'peak'" | cut -c1-150)"
check "calloc: alloc_zeroed holds its 3 MiB, to the byte" \
	same "$(held peak '%alloc_zeroed (prog.c:%')" $((3 * MiB))
check "realloc: alloc_grown holds the 5 MiB it grew to, in one block" \
	same "$(held peak '%alloc_grown (prog.c:%') $(blocks peak '%alloc_grown (prog.c:%')" \
	"$((5 * MiB)) 1"
check "posix_memalign and aligned_alloc: alloc_aligned holds 2 x 2 MiB" \
	same "$(held peak '%alloc_aligned (prog.c:%')" $((4 * MiB))
check "small blocks from the arena: alloc_pieces holds 5000 x 1000 bytes in 5000 blocks" \
	same "$(held peak '%alloc_pieces (prog.c:%') $(blocks peak '%alloc_pieces (prog.c:%')" \
	"5000000 5000"
check "the buffers freed before the end are in the peak's snapshot" \
	same "$(held peak '%alloc_buffers (prog.c:%')" $((64 * MiB))
check "alloc_table holds its 8 MiB" same "$(held peak '%alloc_table (prog.c:%')" $((8 * MiB))
check "at the end: the table, held when the program exited, and not the buffers freed" \
	same "$(held end '%alloc_table (prog.c:%') $(held end '%alloc_buffers (prog.c:%')" \
	"$((8 * MiB)) 0"
check "every stack walks to main" test "$(q "select count(*) from stack where run_id = $(last)
	and frames like '%alloc_%' and frames not like '%main (prog.c:%'")" = 0
check "no record was lost" test "$(q "select count(*) from event where run_id = $(last)
	and kind = 'stacks_incomplete'")" = 0
"$RSW" show "$(last)" >"$T/show.txt" 2>&1
sed -n '/^at the peak/,/^$/p' "$T/show.txt" | sed 's/^/# /'
check "show: the peak's table says allocated" \
	grep -Eq '^at the peak \(.*\): [0-9.]+ MiB allocated by [0-9]+ stacks?$' "$T/show.txt"
check "show: the caller is the leaf, not malloc" \
	grep -Eq '^ +[0-9.]+ MiB +[0-9.]+% +5000  alloc_pieces$' "$T/show.txt"

# --- a forked child: its allocations count once its own probes are on (the recorder
# says so with -v); the program's child waits for that before it allocates
GO="$T/go"
spawn child "$RSW" record -v -q --stacks=malloc -i 1s -- "$PROG" table 8 child-after "$GO" 12 50
check "the recorder probes the forked child" \
	wait_until 30 grep -q "the allocator's probes on pid" "$T/child.err"
touch "$GO"
check "the recording of the child ends" wait_until 60 gone "${_bg##* }"
sed 's/^/# /' "$T/child.err" | grep -v "^# [0-9][0-9]:" | head -5
check "child_work holds its 12 MiB at the peak" \
	same "$(held peak '%child_work (prog.c:%')" $((12 * MiB))
check "and at the end, the 12 MiB it held when it exited" \
	same "$(held end '%child_work (prog.c:%')" $((12 * MiB))

# --- hostile: a stack copy of garbage, then an exec into a new program
expect_exit 0 "a garbage stack and an exec, in malloc mode" "$RSW" record -q --stacks=malloc \
	-i 1s -- "$PROG" table 4 garbage 2 exec "$PROG" pieces 100 1000 sleep 50
check "the new program's pieces are its end, the old program's table is not" \
	same "$(held end '%alloc_pieces (prog.c:%') $(held end '%alloc_table (prog.c:%')" "100000 0"

# --- another allocator: jemalloc, preloaded into the program (not into the recorder)
JE=/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)/libjemalloc.so.2
if [ -e "$JE" ]; then
	expect_exit 0 "a program on jemalloc (LD_PRELOAD), small pieces and buffers freed" \
		"$RSW" record -q --stacks=malloc -i 1s -- env LD_PRELOAD="$JE" "$PROG" \
		pieces 3000 1000 buffers 2 8 free-buffers sleep 100
	check "jemalloc's malloc: alloc_pieces holds 3000 x 1000 bytes in 3000 blocks" \
		same "$(held peak '%alloc_pieces (prog.c:%') $(blocks peak '%alloc_pieces (prog.c:%')" \
		"3000000 3000"
	check "jemalloc's free: the buffers at the peak, gone at the end" \
		same "$(held peak '%alloc_buffers (prog.c:%') $(held end '%alloc_buffers (prog.c:%')" \
		"$((16 * MiB)) 0"
else
	skip "a program on jemalloc ($JE missing: scripts/deps.sh test installs libjemalloc2)"
	skip "jemalloc's malloc"
	skip "jemalloc's free"
fi

expect_exit 0 "a program that allocates nothing of note records" "$RSW" record -q \
	--stacks=malloc -- true
done_testing
