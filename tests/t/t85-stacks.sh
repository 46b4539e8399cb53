#!/bin/sh
# record --stacks end to end, as root: live bytes by call stack at the peak, walked
# without frame pointers and named. A C program of known allocations (built with -O2
# -fomit-frame-pointer) has each block charged to the function that made it, exact to
# the byte; the snapshot is the peak's, not the end's; a forked child's blocks, a
# process that exits between samples and a dlopen'ed library are there; a stripped
# program shows addresses; an exec, a garbage stack and a libc mapped at an odd address
# break nothing. A C++ and a Rust program show their own allocating function. show,
# show --stacks, show --json and export --stacks give what was stored.
. tests/t/lib.sh

MiB=1048576
q() { sql "$RSSWATCH_DB" "$1"; }
last() { q "select max(id) from run"; }
# bytes held at MOMENT (peak or end) of the last run by the stacks whose frames match
# the LIKE pattern, each holding 1 MiB or more (the first malloc's 132 KiB heap, made
# by brk from the same function, is not the block of the test)
held() { q "select ifnull(sum(b.bytes), 0) from stack_bytes b join stack s on s.run_id = b.run_id
	and s.id = b.stack_id where b.run_id = (select max(id) from run) and b.at = '$1' and
	s.frames like '$2' and b.bytes >= $MiB"; }
blocks() { q "select ifnull(sum(b.blocks), 0) from stack_bytes b join stack s on s.run_id = b.run_id
	and s.id = b.stack_id where b.run_id = (select max(id) from run) and b.at = '$1' and
	s.frames like '$2' and b.bytes >= $MiB"; }
# glibc maps a block of N bytes (a multiple of the page) with one page more: its header
block() { echo $(($1 * MiB + 4096)); }

require_stacks

SRC=tests/stacks
PROG="$T/prog"
check "the test program builds with -O2 -fomit-frame-pointer" \
	cc -O2 -g -fomit-frame-pointer -o "$PROG" $SRC/prog.c -ldl
check "and its library" cc -O2 -g -fomit-frame-pointer -shared -fPIC -o "$T/libsl.so" $SRC/lib.c

# --- known blocks, the snapshot at the peak: most is freed before the end
expect_exit 0 "a launched program of known blocks, -i 1s" "$RSW" record -q --stacks -i 1s -- \
	"$PROG" table 100 buffers 3 20 sleep 100 free-buffers sleep 100
diag "$(q "select b.at || ' ' || b.bytes || ' ' || b.blocks || ' ' || replace(s.frames, char(10), ';')
	from stack_bytes b join stack s on s.run_id = b.run_id and s.id = b.stack_id
	where b.run_id = $(last) and b.bytes > 1048576")"
check "alloc_table holds its 100 MiB block at the peak, to the byte" \
	test "$(held peak '%alloc_table (prog.c:%')" = "$(block 100)"
check "alloc_buffers its 3 blocks of 20 MiB" sh -c \
	"test '$(held peak '%alloc_buffers (prog.c:%')' = $((3 * $(block 20)))" \
	-a "$(blocks peak '%alloc_buffers (prog.c:%')" = 3
check "each stack is walked through glibc to main: alloc_table, then main" \
	test "$(q "select count(*) from stack where run_id = $(last) and frames like
		'%malloc%' || char(10) || 'alloc_table (prog.c:%)' || char(10) || 'main (prog.c:%'")" -ge 1
check "the snapshot is the peak's: its time is inside the run" \
	test "$(q "select stacks_peak_at > started_at and stacks_peak_at <= ended_at from run
		where id = $(last)")" = 1
check "and, where the run's peak is from the kernel's page counts, it is its time to the nanosecond (got $(q "select
	peak_source || ', ' || (stacks_peak_at - peak_rss_at) || ' ns' from run where id = $(last)"))" \
	test "$(q "select peak_source != 'page counts' or stacks_peak_at = peak_rss_at from run
		where id = $(last)")" = 1
check "at the end the buffers are gone (freed, then the process exited)" \
	test "$(held end '%alloc_buffers%')" = 0
check "at the end the table is what the process still held when it exited, to the byte" \
	test "$(held end '%alloc_table (prog.c:%')" = "$(block 100)"
check "the run says its stacks' mode" test "$(q "select stacks from run where id = $(last)")" = mmap

"$RSW" show >"$T/show.txt" 2>&1
sed -n '/^at the peak/,/^$/p' "$T/show.txt" | sed 's/^/# /'
check "show: an 'at the peak' table with the leaf functions and their share" sh -c \
	"grep -Eq '^at the peak \(.*\): [0-9.]+ MiB mapped by [0-9]+ stacks?\$' '$T/show.txt' &&
	 grep -Eq '^ +100\.0 MiB +[0-9.]+% +1  alloc_table\$' '$T/show.txt' &&
	 grep -Eq '^ +60\.0 MiB +[0-9.]+% +3  alloc_buffers\$' '$T/show.txt'"
"$RSW" show --stacks >"$T/stacks.txt" 2>&1
check "show --stacks: every frame, one a line, with file and line" sh -c \
	"grep -Eq '^ +alloc_buffers \(prog\.c:[0-9]+\)\$' '$T/stacks.txt' &&
	 grep -Eq '^ +main \(prog\.c:[0-9]+\)\$' '$T/stacks.txt'"
show_json
check "show --json: stacks.at_peak with bytes, leaf and frames" sh -c \
	"test '$(sfield 'stacks.mode')' = mmap &&
	 test '$(jget "$T/show.json" '$.stacks.at_peak[0].bytes')' = '$(block 100)' &&
	 test '$(jget "$T/show.json" '$.stacks.at_peak[0].leaf')' = alloc_table &&
	 test '$(jget "$T/show.json" '$.stacks.at_peak[0].frames[6]')' != ''"
expect_exit 0 "export --stacks" "$RSW" export --stacks
cp "$OUT" "$T/folded"
check "export --stacks: folded lines, root first, leaf last, bytes" sh -c \
	"grep -Eq '^_start;.*;main;alloc_table;.*mmap64 $(block 100)\$' '$T/folded' &&
	 ! grep -Evq '^[^ ]+ [0-9]+\$' '$T/folded'"
expect_exit 0 "export --stacks=end" "$RSW" export --stacks=end
check "export --stacks=end: nothing of the buffers" sh -c "! grep -q alloc_buffers '$OUT'"
expect_exit 0 "export --stacks=gpu of a run without GPU memory" "$RSW" export --stacks=gpu
check "export --stacks=gpu: nothing out, one line saying why" sh -c \
	"test ! -s '$OUT' && test \$(wc -l <'$ERR') = 1 &&
	 grep -q 'no stack held GPU memory (the GPU probes saw no allocation from the CUDA driver)' '$ERR'"

# --- a forked child that exits between samples, a dlopen'ed library
expect_exit 0 "a forked child of 30 MiB for 200 ms, at -i 1s" "$RSW" record -q --stacks -i 1s -- \
	"$PROG" child 30 200
check "the child's child_work holds its block at the peak" \
	test "$(held peak '%child_work (prog.c:%')" = "$(block 30)"
expect_exit 0 "a dlopen'ed library's 40 MiB" "$RSW" record -q --stacks -i 1s -- \
	"$PROG" dlopen "$T/libsl.so" 40 sleep 50
check "lib_alloc, in the library, holds it" \
	test "$(held peak '%lib_alloc (lib.c:%')" = "$(block 40)"

# --- without symbols: addresses, and the bytes still right
cp "$PROG" "$T/stripped"
strip -s "$T/stripped"
expect_exit 0 "a stripped program" "$RSW" record -q --stacks -i 1s -- "$T/stripped" table 50
check "its frames are the file and an offset, the block still whole" sh -c \
	"test '$(held peak '%stripped+0x%')' = '$(block 50)' &&
	 test '$(held peak '%alloc_table%')' = 0"

# --- its debug information in a file of its own (.gnu_debuglink), as distributions ship
mkdir "$T/dbg"
cp "$PROG" "$T/dbg/prog"
check "the program's DWARF moved to prog.debug, the program left without it" sh -c \
	"cd '$T/dbg' && objcopy --only-keep-debug prog prog.debug && strip -g prog &&
	 objcopy --add-gnu-debuglink=prog.debug prog && ! readelf -S prog | grep -q debug_info"
expect_exit 0 "the program without its DWARF" "$RSW" record -q --stacks -i 1s -- \
	"$T/dbg/prog" table 35 sleep 50
check "its frames still have their files and lines, from prog.debug" \
	test "$(held peak '%alloc_table (prog.c:%)%main (prog.c:%')" = "$(block 35)"

# --- hostile targets
expect_exit 0 "a target that execs" "$RSW" record -q --stacks -i 1s -- \
	"$PROG" table 30 exec "$PROG" buffers 1 60 sleep 50
check "after the exec, the old image's block is gone; the new one's is there" sh -c \
	"test '$(held peak '%alloc_table%')' = 0 && test '$(held peak '%alloc_buffers%')' = '$(block 60)'"
expect_exit 0 "a 40 MiB mmap made on a stack of garbage" "$RSW" record -q --stacks -i 1s -- \
	"$PROG" garbage 40 sleep 50
check "its 40 MiB are charged to some stack; nothing crashed" \
	test "$(held peak '%')" -ge $((40 * MiB))
LIBC=$(ldd "$PROG" | sed -n 's/.*libc\.so\.6 => \([^ ]*\).*/\1/p')
expect_exit 0 "a target that maps its libc again at an odd address" "$RSW" record -q --stacks \
	-i 1s -- "$PROG" odd-libc "$LIBC" table 20 sleep 50
check "its blocks still named" test "$(held peak '%alloc_table (prog.c:%')" = "$(block 20)"

# --- attached by pid: the blocks made after the attach
rm -f "$T/a0" "$T/a1" "$T/a2" "$T/a3"
spawn target "$PROG" touch "$T/a0" await "$T/a1" table 40 touch "$T/a2" await "$T/a3"
tp=$!
wait_until 30 test -e "$T/a0"
spawn att "$RSW" record -q --stacks -i 1s -p $tp
rec=$!
wait_until 30 sh -c "'$RSW' mark -p $tp attached 2>/dev/null"
touch "$T/a1"
wait_until 30 test -e "$T/a2"
touch "$T/a3"
finish $rec
check "-p: the recording ended with its target" test "$RC" = 0
check "-p: the block made after the attach, named" \
	test "$(held peak '%alloc_table (prog.c:%')" = "$(block 40)"

# --- attached by name (-n), and a launched tree (--tree): the same blocks, named
cp "$PROG" "$T/rswstk$$"
rm -f "$T/n0" "$T/n1" "$T/n2" "$T/n3"
spawn ntarget "$T/rswstk$$" touch "$T/n0" await "$T/n1" table 30 touch "$T/n2" await "$T/n3"
wait_until 30 test -e "$T/n0"
spawn natt "$RSW" record -q --stacks -i 1s -n "rswstk$$"
rec=$!
wait_until 30 sh -c "'$RSW' ls --json 2>/dev/null | grep -q '\"outcome\":\"running\"'"
wait_until 30 sh -c "'$RSW' mark --run last attached 2>/dev/null"
touch "$T/n1"
wait_until 30 test -e "$T/n2"
touch "$T/n3"
finish $rec
check "-n: the recording ended with its target" test "$RC" = 0
check "-n: the block made after the attach, named" \
	test "$(held peak '%alloc_table (prog.c:%')" = "$(block 30)"
expect_exit 0 "--tree: a shell that runs the program twice" "$RSW" record -q --stacks --tree \
	-i 1s -- sh -c '"$1" buffers 2 10 sleep 50; "$1" table 25 sleep 50' sh "$PROG"
check "--tree: the second child's table at the peak, named" \
	test "$(held peak '%alloc_table (prog.c:%')" = "$(block 25)"
check "  and the first child's buffers at the end, as it held them when it exited" \
	test "$(held end '%alloc_buffers (prog.c:%')" = $((2 * $(block 10)))

# --- C++ and Rust: their own allocating function, demangled
if command -v g++ >/dev/null 2>&1 && g++ -O2 -o "$T/table" $SRC/table.cc; then
	expect_exit 0 "a C++ program (g++ -O2, no debug information)" "$RSW" record -q --stacks \
		-i 1s -- "$T/table" 64
	"$RSW" show >"$T/cxx.txt" 2>&1
	sed -n '/^at the peak/,/^$/p' "$T/cxx.txt" | sed 's/^/# /'
	check "C++: the leaf is pipeline::build_table(unsigned long), demangled" \
		grep -Eq '^ +64\.0 MiB .* 1  pipeline::build_table\(unsigned long\)$' "$T/cxx.txt"
else
	not_ok "g++ builds the C++ program (make deps installs it)"
fi
if [ -x /usr/bin/rustc ] && /usr/bin/rustc -C opt-level=3 -o "$T/buffers" $SRC/buffers.rs 2>"$ERR"; then
	expect_exit 0 "a Rust program (rustc -C opt-level=3)" "$RSW" record -q --stacks -i 1s -- \
		"$T/buffers" 48
	"$RSW" show >"$T/rust.txt" 2>&1
	sed -n '/^at the peak/,/^$/p' "$T/rust.txt" | sed 's/^/# /'
	check "Rust: the leaf is buffers::alloc_buffers, its hash dropped" \
		grep -Eq '^ +48\.0 MiB .* 1  buffers::alloc_buffers$' "$T/rust.txt"
else
	not_ok "Debian's rustc builds the Rust program (make deps installs it)"
fi

# --- an OOM kill: the snapshot at the peak, and what the killed process held at its death
. "$(dirname "$0")/memcg.sh"
cgdir=$(memcg_dir)
if [ -z "$cgdir" ] || [ ! -d "$cgdir" ]; then
	skip "an OOM kill under --stacks: needs a memory cgroup controller"
else
	expect_exit 137 "a program OOM-killed under --memory-limit 100M, --stacks" "$RSW" record -q \
		--stacks -i 1s --memory-limit 100M -- "$PROG" table 40 buffers 10 10 sleep 100
	diag "$(q "select b.at || ' ' || b.bytes || ' ' || b.blocks || ' ' || substr(replace(s.frames,
		char(10), ';'), 1, 80) from stack_bytes b join stack s on s.run_id = b.run_id and
		s.id = b.stack_id where b.run_id = $(last) and b.bytes > 1048576")"
	check "the run's outcome is the OOM kill" test "$(q "select outcome from run where id = $(last)")" = oom_killed
	check "at the peak alloc_table holds its 40 MiB, to the byte" \
		test "$(held peak '%alloc_table (prog.c:%')" = "$(block 40)"
	check "at its death it still held them: the end is the kill's" \
		test "$(held end '%alloc_table (prog.c:%')" = "$(block 40)"
	bp=$(held peak '%alloc_buffers (prog.c:%')
	check "alloc_buffers' blocks made before the kill are in both, the same ($bp bytes)" \
		test "$bp" -ge "$((4 * $(block 10)))" -a "$(held end '%alloc_buffers (prog.c:%')" = "$bp"
	check "and fewer than the 10 asked for: the kill came first" \
		test "$(blocks end '%alloc_buffers (prog.c:%')" -lt 10
fi

# --- refusals
expect_exit 2 "--stacks with --no-bpf is refused" "$RSW" record --stacks --no-bpf -- true
check "and says why" grep -q "needs the eBPF engine" "$ERR"
expect_exit 2 "--stacks=MODE other than mmap is refused" "$RSW" record --stacks=bogus -- true
"$RSW" record -q -- true
expect_exit 1 "export --stacks of a run without stacks" "$RSW" export --stacks
check "says how to get them" grep -q "record with --stacks" "$ERR"

done_testing
