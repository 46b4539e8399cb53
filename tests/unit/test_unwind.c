/* The stacks' walker and namer (source/unwind.c): the maps line parser on real and
 * malformed lines; a walk of this very process's stack, copied as the kernel side
 * copies a target's, through functions built without frame pointers, named in order;
 * garbage registers and a garbage stack give frames, never a crash. */
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "source/unwind.h"

static void parse(const char *line, int want, struct uw_map *m)
{
	assert_int_equal(uw_maps_line_parse(line, strlen(line), m), want);
}

static void test_maps_lines(void **state)
{
	(void)state;
	struct uw_map m;
	parse("7f2a1c000000-7f2a1c028000 r-xp 00028000 fe:01 1312 /usr/lib/x86_64-linux-gnu/libc.so.6",
	      0, &m);
	assert_true(m.start == 0x7f2a1c000000ULL && m.end == 0x7f2a1c028000ULL);
	assert_true(m.offset == 0x28000 && m.inode == 1312 && m.exec);
	assert_int_equal(m.path_len, strlen("/usr/lib/x86_64-linux-gnu/libc.so.6"));
	assert_memory_equal(m.path, "/usr/lib/x86_64-linux-gnu/libc.so.6", m.path_len);
	parse("55d0c0000000-55d0c0021000 rw-p 00000000 00:00 0          [heap]", 0, &m);
	assert_null(m.path);
	assert_false(m.exec);
	parse("7ffd1000-7ffd2000 r-xp 00000000 00:00 0 [vdso]", 0, &m);
	assert_null(m.path);
	parse("7f00-7f10 r-xp 00000000 08:02 77 /tmp/lib with space.so (deleted)", 0, &m);
	assert_null(m.path);	/* cannot be read again */
	parse("7f00-7f10 r-xp 00000000 08:02 77 /tmp/lib with space.so", 0, &m);
	assert_int_equal(m.path_len, strlen("/tmp/lib with space.so"));
	parse("7f00-7f10 r-xp 00000000 08:02 77 relative/path", 0, &m);
	assert_null(m.path);
	/* malformed */
	parse("", -EINVAL, &m);
	parse("7f10-7f00 r-xp 00000000 08:02 77 /x", -EINVAL, &m);	/* end before start */
	parse("7f00-7f10 r-xp", -EINVAL, &m);
	parse("7f00-7f10 r-xp 0 08:02 x /x", -EINVAL, &m);
	parse("g000-7f10 r-xp 00000000 08:02 1 /x", -EINVAL, &m);
	parse("10000000000000000-20000000000000000 r-xp 0 0:0 1 /x", -EINVAL, &m);
	parse("7f00-7f10 r-xp 00000000 08:02 99999999999999999999999 /x", -EINVAL, &m);
}

/* What the kernel side gives: the registers in DWARF order and the stack from rsp
 * upward, taken here of the function that calls capture(). */
struct copy {
	uint64_t regs[UW_NREGS];
	unsigned char stack[32768];
	size_t len;
};

/* The bytes of the stack from sp to the end of its mapping, at most cap. */
static size_t stack_room(uint64_t sp, size_t cap)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	size_t room = 0;
	while (f && fgets(line, sizeof(line), f)) {
		struct uw_map m;
		size_t len = strcspn(line, "\n");
		if (uw_maps_line_parse(line, len, &m) == 0 && m.start <= sp && sp < m.end)
			room = m.end - sp;
	}
	if (f)
		fclose(f);
	return room < cap ? room : cap;
}

/* A copy of other frames' bytes, their sanitizer's red zones included, as the kernel
 * copies them: not through the checked memcpy. */
__attribute__((no_sanitize_address, noinline)) static void copy_raw(unsigned char *to,
								  const unsigned char *from,
								  size_t n)
{
	for (size_t i = 0; i < n; i++)
		to[i] = ((const volatile unsigned char *)from)[i];
}

__attribute__((noinline, noclone)) void capture_here(struct copy *c);
__attribute__((noinline, noclone)) void capture_here(struct copy *c)
{
	__asm__ volatile("lea 0(%%rip), %%rax\n\t"
			 "mov %%rax, 128(%0)\n\t"
			 "mov %%rsp, 56(%0)\n\t"
			 "mov %%rbp, 48(%0)\n\t"
			 "mov %%rbx, 24(%0)\n\t"
			 "mov %%r12, 96(%0)\n\t"
			 "mov %%r13, 104(%0)\n\t"
			 "mov %%r14, 112(%0)\n\t"
			 "mov %%r15, 120(%0)\n\t"
			 : : "r"(c->regs) : "rax", "memory");
	c->len = stack_room(c->regs[UW_REG_SP], sizeof(c->stack));
	copy_raw(c->stack, (const unsigned char *)(uintptr_t)c->regs[UW_REG_SP], c->len);
}

__attribute__((noinline, noclone)) int level_two(struct copy *c);
__attribute__((noinline, noclone)) int level_two(struct copy *c)
{
	capture_here(c);
	__asm__ volatile("" ::: "memory");	/* not a tail call */
	return (int)c->len;
}

__attribute__((noinline, noclone)) int level_one(struct copy *c);
__attribute__((noinline, noclone)) int level_one(struct copy *c)
{
	int n = level_two(c);
	__asm__ volatile("" ::: "memory");
	return n + 1;
}

static struct unwinder *new_or_skip(void)
{
	struct unwinder *u;
	int e = unwinder_new(&u);
	if (e == -ENOSYS)
		skip();	/* built without libdw */
	assert_int_equal(e, 0);
	return u;
}

/* The first line of frame f's name. */
static void name_of(struct unwinder *u, const struct uw_frame *f, char *buf, size_t n)
{
	assert_true(unwinder_symbolize(u, f, buf, n) > 0);
	buf[strcspn(buf, "\n")] = 0;
}

static void test_walk_this_process(void **state)
{
	(void)state;
	struct unwinder *u = new_or_skip();
	static struct copy c;
	assert_true(level_one(&c) > 1);
	struct uw_frame f[32];
	int n = unwinder_walk(u, getpid(), c.regs, c.stack, c.len, f, 32);
	assert_true(n >= 4);
	const char *want[] = { "capture_here", "level_two", "level_one" };
	char name[1024];
	for (int i = 0; i < 3; i++) {
		name_of(u, &f[i], name, sizeof(name));
		assert_true(f[i].module != UW_NO_MODULE);
		if (strncmp(name, want[i], strlen(want[i])) != 0)
			fail_msg("frame %d is '%s', not %s", i, name, want[i]);
	}
	/* named with the file and line of the call */
	name_of(u, &f[1], name, sizeof(name));
	assert_non_null(strstr(name, "(test_unwind.c:"));
	assert_non_null(unwinder_module_path(u, f[0].module));
	/* after forget, the map is read again: the same frames */
	unwinder_forget(u, getpid());
	struct uw_frame g[32];
	assert_int_equal(unwinder_walk(u, getpid(), c.regs, c.stack, c.len, g, 32), n);
	for (int i = 0; i < n; i++)
		assert_true(f[i].module == g[i].module && f[i].off == g[i].off);
	/* at most max */
	assert_int_equal(unwinder_walk(u, getpid(), c.regs, c.stack, c.len, g, 2), 2);
	assert_int_equal(unwinder_walk(u, getpid(), c.regs, c.stack, c.len, g, 0), -EINVAL);
	/* too small a buffer leaves it as it was */
	char small[4] = "abc";
	assert_int_equal(unwinder_symbolize(u, &f[0], small, sizeof(small)), -ENOBUFS);
	assert_string_equal(small, "abc");
	unwinder_free(u);
}

static void test_garbage(void **state)
{
	(void)state;
	struct unwinder *u = new_or_skip();
	static struct copy c;
	srand(7);
	for (size_t i = 0; i < sizeof(c.stack); i++)
		c.stack[i] = (unsigned char)rand();
	struct uw_frame f[64];
	char name[1024];
	for (int round = 0; round < 50; round++) {
		for (int r = 0; r < UW_NREGS; r++)
			c.regs[r] = ((uint64_t)rand() << 32) ^ (uint64_t)rand();
		if (round & 1)	/* a pc in this program's code, a stack of garbage */
			c.regs[UW_REG_IP] = (uint64_t)(uintptr_t)&level_two + 4;
		int n = unwinder_walk(u, getpid(), c.regs, c.stack, sizeof(c.stack), f, 64);
		assert_true(n >= 1 && n <= 64);
		for (int i = 0; i < n; i++)
			assert_true(unwinder_symbolize(u, &f[i], name, sizeof(name)) > 0);
	}
	struct uw_frame raw = { UW_NO_MODULE, 0x1234 };
	assert_true(unwinder_symbolize(u, &raw, name, sizeof(name)) > 0);
	assert_string_equal(name, "0x1234");
	struct uw_frame bad = { 4000000, 0 };
	assert_int_equal(unwinder_symbolize(u, &bad, name, sizeof(name)), -EINVAL);
	unwinder_free(u);
}

/* A child's stack, walked while it lives; after it exited and was reaped, a walk that
 * asks for its map again (new code mapped, a pc in no module) still gives the frames
 * of the map it had. */
static void test_a_process_that_exited(void **state)
{
	(void)state;
	struct unwinder *u = new_or_skip();
	struct copy *c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(c != MAP_FAILED);
	int ready[2], go[2];
	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(go), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char b = 1;
		close(go[1]);	/* the parent's close is then the end of the pipe */
		level_one(c);
		if (write(ready[1], &b, 1) != 1 || read(go[0], &b, 1) < 0)
			_exit(1);
		_exit(0);
	}
	char b;
	assert_int_equal(read(ready[0], &b, 1), 1);
	struct uw_frame f[32], g[32];
	int n = unwinder_walk(u, pid, c->regs, c->stack, c->len, f, 32);
	assert_true(n >= 4);
	close(go[1]);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	unwinder_stale(u, pid);
	assert_int_equal(unwinder_walk(u, pid, c->regs, c->stack, c->len, g, 32), n);
	for (int i = 0; i < n; i++)
		assert_true(f[i].module == g[i].module && f[i].off == g[i].off);
	char name[1024];
	name_of(u, &g[2], name, sizeof(name));
	assert_true(strncmp(name, "level_one", 9) == 0);
	/* forgotten, it cannot be walked */
	unwinder_forget(u, pid);
	assert_int_equal(unwinder_walk(u, pid, c->regs, c->stack, c->len, g, 32), -ESRCH);
	close(ready[0]);
	close(ready[1]);
	close(go[0]);
	munmap(c, sizeof(*c));
	unwinder_free(u);
}

static void test_a_process_that_is_not_there(void **state)
{
	(void)state;
	struct unwinder *u = new_or_skip();
	static struct copy c;
	struct uw_frame f[4];
	assert_int_equal(unwinder_walk(u, 0x3ffffff0, c.regs, c.stack, 0, f, 4), -ESRCH);
	unwinder_forget(u, 0x3ffffff0);
	unwinder_free(u);
	unwinder_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_maps_lines),
		cmocka_unit_test(test_walk_this_process),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_a_process_that_exited),
		cmocka_unit_test(test_a_process_that_is_not_there),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
