/* record/stacks.c: live bytes by stack from the stacks program's records, fed by hand:
 * blocks cut and split by unmaps, moved by mremap, copied at a fork, gone at an exec
 * or an end, and the snapshot at the peak taken before the first record after it. */
#include "testutil.h"

#include <errno.h>
#include <string.h>

#include "record/stacks.h"

#define KIB 1024LL

/* The walker stands for the unwinder: regs[0] names the stack (one frame, module 1,
 * offset regs[0]); 0 fails, as a stack that cannot be walked. */
static int fake_walk(void *ctx, pid_t pid, const uint64_t *regs, const void *stack, size_t len,
		     struct stack_frame *out, int max)
{
	(void)ctx;
	(void)pid;
	(void)stack;
	(void)len;
	if (!regs[0])
		return -EINVAL;
	assert_true(max >= 2);
	out[0] = (struct stack_frame){ 1, regs[0] };
	out[1] = (struct stack_frame){ 2, 0x40 };	/* a common caller */
	return 2;
}

static uint64_t regs_of[8][KSTACKS_NREGS];

static struct kstacks_record rec(uint32_t kind, pid_t pid, int64_t at, uint64_t addr, int64_t len,
				 int stack)
{
	struct kstacks_record r = { .kind = kind, .pid = pid, .tid = pid, .at = at, .addr = addr,
				    .len = len };
	if (stack >= 0) {
		regs_of[stack][0] = (uint64_t)stack;
		r.regs = regs_of[stack];
	}
	return r;
}

static void feed(struct stacks *s, struct kstacks_record r, int64_t peak_at)
{
	struct stacks_peaks pk = { peak_at, 0 };
	stacks_feed(s, &r, &pk);
}

static void feed_gpu(struct stacks *s, struct kstacks_record r, int64_t gpu_peak_at)
{
	struct stacks_peaks pk = { 0, gpu_peak_at };
	stacks_feed(s, &r, &pk);
}

/* The bytes stack `named` (its leaf's offset) holds in v[0..n). */
static int64_t held(const struct stacks *s, const struct stack_bytes *v, size_t n, uint64_t named)
{
	for (size_t i = 0; i < n; i++) {
		size_t nf;
		const struct stack_frame *f = stacks_frames(s, v[i].stack, &nf);
		if ((named == 0 && nf == 0) || (nf && f[0].off == named))
			return v[i].bytes;
	}
	return 0;
}

static int64_t live_of(struct stacks *s, uint64_t named)
{
	size_t n;
	const struct stack_bytes *v = stacks_live(s, &n);
	return held(s, v, n, named);
}

static struct stacks *fresh(void)
{
	struct stacks *s;
	assert_int_equal(stacks_new(&s, fake_walk, NULL, 64), 0);
	return s;
}

static void test_cut_and_split(void **state)
{
	(void)state;
	struct stacks *s = fresh();
	feed(s, rec(KSTACKS_MAP, 10, 1, 0x100000, 400 * KIB, 3), 0);
	feed(s, rec(KSTACKS_MAP, 10, 2, 0x900000, 200 * KIB, 4), 0);
	assert_int_equal(live_of(s, 3), 400 * KIB);
	assert_int_equal(live_of(s, 4), 200 * KIB);
	/* a hole in the middle of the first: two blocks of it left */
	feed(s, rec(KSTACKS_UNMAP, 10, 3, 0x100000 + 100 * KIB, 100 * KIB, -1), 0);
	assert_int_equal(live_of(s, 3), 300 * KIB);
	size_t n;
	const struct stack_bytes *v = stacks_live(s, &n);
	assert_int_equal(n, 2);
	assert_int_equal(v[0].bytes, 300 * KIB);	/* largest first */
	assert_int_equal(v[0].blocks, 2);
	/* one unmap across the end of one and all of the other */
	feed(s, rec(KSTACKS_UNMAP, 10, 4, 0x100000 + 300 * KIB, 0x900000 - 0x100000, -1), 0);
	assert_int_equal(live_of(s, 3), 200 * KIB);
	assert_int_equal(live_of(s, 4), 0);
	/* a range never mapped by a tracked call, and another process's: nothing moves */
	feed(s, rec(KSTACKS_UNMAP, 10, 5, 0x7000000, 64 * KIB, -1), 0);
	feed(s, rec(KSTACKS_UNMAP, 11, 6, 0x100000, 64 * KIB, -1), 0);
	assert_int_equal(live_of(s, 3), 200 * KIB);
	/* MAP_FIXED over part of a block replaces it there */
	feed(s, rec(KSTACKS_MAP, 10, 7, 0x100000, 50 * KIB, 5), 0);
	assert_int_equal(live_of(s, 3), 150 * KIB);
	assert_int_equal(live_of(s, 5), 50 * KIB);
	stacks_free(s);
}

/* The snapshot holds what was live at the peak, though all of it went after. */
static void test_snapshot_at_the_peak(void **state)
{
	(void)state;
	struct stacks *s = fresh();
	feed(s, rec(KSTACKS_MAP, 10, 100, 0x100000, 800 * KIB, 3), 0);
	feed(s, rec(KSTACKS_MAP, 10, 110, 0x900000, 300 * KIB, 4), 0);
	/* the peak was at 150 (its pages touched); the next record, at 200, frees the first */
	feed(s, rec(KSTACKS_UNMAP, 10, 200, 0x100000, 800 * KIB, -1), 150);
	feed(s, rec(KSTACKS_UNMAP, 10, 210, 0x900000, 300 * KIB, -1), 150);
	size_t n;
	int64_t at;
	const struct stack_bytes *v = stacks_at_peak(s, &n, &at);
	assert_int_equal(at, 150);
	assert_int_equal(held(s, v, n, 3), 800 * KIB);
	assert_int_equal(held(s, v, n, 4), 300 * KIB);
	assert_int_equal(live_of(s, 3), 0);
	/* a later, higher peak with no record after it: taken when settled */
	feed(s, rec(KSTACKS_MAP, 10, 300, 0x100000, 900 * KIB, 5), 150);
	stacks_settle(s, &(struct stacks_peaks){ 350, 0 });
	v = stacks_at_peak(s, &n, &at);
	assert_int_equal(at, 350);
	assert_int_equal(n, 1);
	assert_int_equal(held(s, v, n, 5), 900 * KIB);
	/* a record before the peak is in it: the snapshot waits for one after */
	feed(s, rec(KSTACKS_MAP, 10, 400, 0x200000, 100 * KIB, 6), 450);
	feed(s, rec(KSTACKS_UNMAP, 10, 500, 0x100000, 900 * KIB, -1), 450);
	v = stacks_at_peak(s, &n, &at);
	assert_int_equal(at, 450);
	assert_int_equal(held(s, v, n, 5), 900 * KIB);
	assert_int_equal(held(s, v, n, 6), 100 * KIB);
	stacks_free(s);
}

static void test_fork_exec_exit(void **state)
{
	(void)state;
	struct stacks *s = fresh();
	feed(s, rec(KSTACKS_MAP, 10, 1, 0x100000, 64 * KIB, 3), 0);
	feed(s, rec(KSTACKS_FORK, 11, 2, 10, 0, -1), 0);	/* 11 forked from 10 */
	assert_int_equal(live_of(s, 3), 128 * KIB);
	feed(s, rec(KSTACKS_UNMAP, 11, 3, 0x100000, 64 * KIB, -1), 0);
	assert_int_equal(live_of(s, 3), 64 * KIB);
	feed(s, rec(KSTACKS_MAP, 11, 4, 0x500000, 32 * KIB, 4), 0);
	feed(s, rec(KSTACKS_EXEC, 11, 5, 0, 0, -1), 0);
	assert_int_equal(live_of(s, 4), 0);
	feed(s, rec(KSTACKS_EXIT, 10, 6, 0, 0, -1), 0);
	size_t n;
	stacks_live(s, &n);
	assert_int_equal(n, 0);
	/* at the end: what 10 held when it exited (its 64 KiB); 11's exec'd program's
	 * 32 KiB went with the exec, not held to an end */
	const struct stack_bytes *v = stacks_at_end(s, &n);
	assert_int_equal(n, 1);
	assert_int_equal(held(s, v, n, 3), 64 * KIB);
	assert_int_equal(v[0].blocks, 1);
	/* 11, the new program, maps and exits holding it: added to the end's */
	feed(s, rec(KSTACKS_MAP, 11, 7, 0x700000, 16 * KIB, 3), 0);
	feed(s, rec(KSTACKS_EXIT, 11, 8, 0, 0, -1), 0);
	v = stacks_at_end(s, &n);
	assert_int_equal(held(s, v, n, 3), 80 * KIB);
	stacks_live(s, &n);
	assert_int_equal(n, 0);
	stacks_free(s);
}

static void test_remap_and_brk(void **state)
{
	(void)state;
	struct stacks *s = fresh();
	feed(s, rec(KSTACKS_MAP, 10, 1, 0x100000, 256 * KIB, 3), 0);
	struct kstacks_record r = rec(KSTACKS_REMAP, 10, 2, 0x800000, 1024 * KIB, -1);
	r.old = 0x100000;
	r.old_len = 256 * KIB;
	feed(s, r, 0);
	assert_int_equal(live_of(s, 3), 1024 * KIB);	/* the block moved and grew: its stack's */
	/* a remap of what no tracked call mapped (a file's) is not counted */
	r = rec(KSTACKS_REMAP, 10, 3, 0x3000000, 1024 * KIB, -1);
	r.old = 0x2000000;
	r.old_len = 4 * KIB;
	feed(s, r, 0);
	assert_int_equal(live_of(s, 3), 1024 * KIB);
	size_t n;
	stacks_live(s, &n);
	assert_int_equal(n, 1);
	/* the heap's end up twice, from two stacks, then down across both */
	feed(s, rec(KSTACKS_BRK, 10, 4, 0x5000000, 132 * KIB, 4), 0);
	feed(s, rec(KSTACKS_BRK, 10, 5, 0x5000000 + 132 * KIB, 200 * KIB, 5), 0);
	feed(s, rec(KSTACKS_BRK, 10, 6, 0x5000000 + 332 * KIB, -(250 * KIB), -1), 0);
	assert_int_equal(live_of(s, 4), 82 * KIB);
	assert_int_equal(live_of(s, 5), 0);
	stacks_free(s);
}

/* The driver's blocks count to the GPU's ledger alone, with their own snapshot at the
 * GPU's peak; a device pointer and a handle of the same value are two blocks; a fork's
 * child has none of them; the process's end takes them back, not into the end's. */
static void test_gpu_blocks(void **state)
{
	(void)state;
	struct stacks *s = fresh();
	feed(s, rec(KSTACKS_MAP, 10, 1, 0x100000, 64 * KIB, 3), 0);
	feed_gpu(s, rec(KSTACKS_GPU_ALLOC, 10, 2, 0x7f0000000000, 2048 * KIB, 4), 0);
	struct kstacks_record h = rec(KSTACKS_GPU_ALLOC, 10, 3, 0x7f0000000000, 512 * KIB, 5);
	h.old = 1;	/* a cuMemCreate handle */
	feed_gpu(s, h, 0);
	assert_int_equal(live_of(s, 3), 64 * KIB);
	assert_int_equal(live_of(s, 4), 0);	/* the host's ledger has none of it */
	feed(s, rec(KSTACKS_FORK, 11, 4, 10, 0, -1), 0);
	/* the GPU's peak at 5; the pointer freed at 6 */
	feed_gpu(s, rec(KSTACKS_GPU_FREE, 10, 6, 0x7f0000000000, 0, -1), 5);
	size_t n;
	int64_t at;
	const struct stack_bytes *v = stacks_at_gpu_peak(s, &n, &at);
	assert_int_equal(at, 5);
	assert_int_equal(n, 2);
	assert_int_equal(held(s, v, n, 4), 2048 * KIB);
	assert_int_equal(held(s, v, n, 5), 512 * KIB);
	stacks_at_peak(s, &n, &at);
	assert_int_equal(n, 0);
	/* the host's peak, later: its snapshot holds the parent's and the child's host
	 * blocks, none of the GPU's */
	feed(s, rec(KSTACKS_EXIT, 10, 8, 0, 0, -1), 7);
	v = stacks_at_peak(s, &n, &at);
	assert_int_equal(at, 7);
	assert_int_equal(held(s, v, n, 3), 128 * KIB);
	assert_int_equal(held(s, v, n, 5), 0);
	/* at the end: what the host processes held, the driver's blocks not */
	v = stacks_at_end(s, &n);
	assert_int_equal(held(s, v, n, 3), 128 * KIB);
	assert_int_equal(held(s, v, n, 5), 0);
	/* the GPU's snapshot stays the peak's */
	v = stacks_at_gpu_peak(s, &n, &at);
	assert_int_equal(held(s, v, n, 5), 512 * KIB);
	stacks_free(s);
}

/* A process that left the set (moved out of its cgroup) takes its blocks with it: not
 * live, not at the end, not in a later peak's snapshot. */
static void test_left(void **state)
{
	(void)state;
	struct stacks *s = fresh();
	feed(s, rec(KSTACKS_MAP, 10, 1, 0x100000, 64 * KIB, 3), 0);
	feed(s, rec(KSTACKS_MAP, 11, 2, 0x100000, 32 * KIB, 4), 0);
	stacks_left(s, 11);
	feed(s, rec(KSTACKS_MAP, 10, 4, 0x900000, 16 * KIB, 5), 3);
	assert_int_equal(live_of(s, 4), 0);
	size_t n;
	int64_t at;
	const struct stack_bytes *v = stacks_at_peak(s, &n, &at);
	assert_int_equal(n, 1);		/* the snapshot at 3: the first block alone */
	assert_int_equal(held(s, v, n, 3), 64 * KIB);
	v = stacks_at_end(s, &n);
	assert_int_equal(held(s, v, n, 4), 0);
	assert_int_equal(held(s, v, n, 5), 16 * KIB);
	stacks_free(s);
}

/* Past the bound (64 blocks here) a block is not kept but counted; a fork whose copy
 * would pass it copies nothing and counts each block; a block freed makes room. */
static void test_bound(void **state)
{
	(void)state;
	struct stacks *s = fresh();
	for (uint64_t i = 0; i < 70; i++)
		feed(s, rec(KSTACKS_MAP, 10, (int64_t)i + 1, 0x100000 + i * 0x10000, 4 * KIB, 3), 0);
	struct stacks_counts c;
	stacks_counts(s, &c);
	assert_int_equal(c.blocks_dropped, 6);
	assert_int_equal(live_of(s, 3), 64 * 4 * KIB);
	feed(s, rec(KSTACKS_FORK, 11, 80, 10, 0, -1), 0);
	stacks_counts(s, &c);
	assert_int_equal(c.blocks_dropped, 6 + 64);
	assert_int_equal(live_of(s, 3), 64 * 4 * KIB);
	feed(s, rec(KSTACKS_UNMAP, 10, 81, 0x100000, 4 * KIB, -1), 0);
	feed(s, rec(KSTACKS_MAP, 10, 82, 0x9000000, 8 * KIB, 4), 0);
	assert_int_equal(live_of(s, 4), 8 * KIB);
	stacks_free(s);
}

/* A stack that cannot be walked is charged to the stack of no frames, and counted. */
static void test_unwalked(void **state)
{
	(void)state;
	struct stacks *s = fresh();
	feed(s, rec(KSTACKS_MAP, 10, 1, 0x100000, 64 * KIB, 0), 0);
	struct kstacks_record r = rec(KSTACKS_MAP, 10, 2, 0x200000, 32 * KIB, -1);	/* no regs */
	feed(s, r, 0);
	assert_int_equal(live_of(s, 0), 96 * KIB);
	struct stacks_counts c;
	stacks_counts(s, &c);
	assert_int_equal(c.walks_failed, 2);
	assert_int_equal(c.records, 2);
	stacks_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cut_and_split),
		cmocka_unit_test(test_snapshot_at_the_peak),
		cmocka_unit_test(test_fork_exec_exit),
		cmocka_unit_test(test_remap_and_brk),
		cmocka_unit_test(test_unwalked),
		cmocka_unit_test(test_gpu_blocks),
		cmocka_unit_test(test_left),
		cmocka_unit_test(test_bound),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
