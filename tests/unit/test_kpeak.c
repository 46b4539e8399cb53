/* The peak engine for real (source/kpeak.h): processes of known footprint, each taking
 * its own CLOCK_MONOTONIC around its spike, so that the engine's peak and its time can
 * be held against the truth. Needs root; skipped otherwise, and where the build has no
 * engine. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "record/stagepeak.h"
#include "source/kpeak.h"

#define MIB (1ULL << 20)
/* The counters' slack, and what a process may map meanwhile beyond what it had just
 * before its spike (each child says that, its base: under AddressSanitizer it is about
 * 25 MiB, and so no fixed figure). */
#define BESIDE (8 * MIB)

static int64_t mono(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static struct kpeak *open_or_skip(void)
{
	char why[256];
	struct kpeak *k;
	if (!kpeak_built() || geteuid() != 0)
		skip();
	int e = kpeak_open(&k, why, sizeof(why));
	if (e < 0)
		fail_msg("the engine did not load as root: %s (%s)", why, strerror(-e));
	return k;
}

/* What one spike took: its times (from before the first page is touched to just before
 * the unmap), and the process's resident bytes before it and at its top, as /proc says
 * (under AddressSanitizer the top is about 1/8 above base + spike: the shadow of the
 * pages it checks is resident too). */
struct took {
	int64_t at[2];
	uint64_t base, top;
};

static uint64_t resident_now(void)
{
	unsigned long long size = 0, res = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (!f || fscanf(f, "%llu %llu", &size, &res) != 2)
		_exit(6);
	fclose(f);
	return res * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* Touches bytes of a fresh mapping, keeps it, and frees it. The mapping is made and
 * unmapped by system calls: a sanitizer's munmap would write the range's shadow, a
 * rise after the spike. */
static void spike(size_t bytes, struct took *t)
{
	t->base = resident_now();
	long r = syscall(SYS_mmap, NULL, bytes, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r == -1)
		_exit(2);
	char *p = (char *)r;
	t->at[0] = mono();
	for (size_t i = 0; i < bytes; i += 4096)
		p[i] = 1;
	t->top = resident_now();
	t->at[1] = mono();	/* after the read: its stdio's pages may be the top */
	if (t->top < t->base + bytes)
		_exit(7);
	syscall(SYS_munmap, p, bytes);
}

/* A child that waits for a byte on go, spikes, writes its two times on back and exits. */
static pid_t spiker(size_t bytes, int go[2], int back[2])
{
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(back), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char c;
		struct took t;
		if (read(go[0], &c, 1) != 1)
			_exit(3);
		spike(bytes, &t);
		if (write(back[1], &t, sizeof(t)) != (ssize_t)sizeof(t))
			_exit(4);
		_exit(0);
	}
	return pid;
}

static void run_spike(int go[2], int back[2], struct took *t)
{
	assert_int_equal(write(go[1], "g", 1), 1);
	assert_int_equal(read(back[0], t, sizeof(*t)), (ssize_t)sizeof(*t));
}

static void reap(pid_t pid, int go[2], int back[2])
{
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(go[0]);
	close(go[1]);
	close(back[0]);
	close(back[1]);
}

/* One process: its peak is the spike on its base, reached between the two times it
 * took. */
static void test_spike_peak_and_time(void **state)
{
	(void)state;
	struct kpeak *k = open_or_skip();
	int go[2], back[2];
	struct took t;
	pid_t pid = spiker(96 * MIB, go, back);
	assert_int_equal(kpeak_track(k, pid), 0);
	run_spike(go, back, &t);
	reap(pid, go, back);
	struct kpeak_figures f;
	kpeak_read(k, &f);
	print_message("# peak %llu at %lld; base %llu, top %llu; spike from %lld to %lld\n",
		      (unsigned long long)f.peak, (long long)f.peak_at, (unsigned long long)t.base,
		      (unsigned long long)t.top, (long long)t.at[0], (long long)t.at[1]);
	assert_true(f.events > 0);
	assert_true(f.peak >= t.top - BESIDE && f.peak <= t.top + BESIDE);
	/* the last page's fault counts the spike in full: inside it */
	assert_true(f.peak_at >= t.at[0] && f.peak_at <= t.at[1]);
	kpeak_close(k);
}

struct stages_got {
	struct kpeak *k;
	int known[4];
	uint64_t peak[4];
	int64_t at[4];
	int n;
};

static int engine_span(void *ctx, int64_t n, struct kpeak_span *s)
{
	return kpeak_span(((struct stages_got *)ctx)->k, n, s);
}

static void got_stage(void *ctx, int64_t id, int known, uint64_t peak, int64_t at)
{
	struct stages_got *g = ctx;
	assert_true(id >= 0 && id < 4 && g->n < 4);
	g->known[id] = known;
	g->peak[id] = peak;
	g->at[id] = at;
	g->n++;
}

/* The history: two spikes of one process, a mark between them and one after; each
 * stage has its own spike as its peak, inside it, and the last the base it fell to. */
static void test_stage_peaks_from_the_history(void **state)
{
	(void)state;
	struct kpeak *k = open_or_skip();
	int go[2], back[2], go2[2], back2[2];
	struct took a, b;
	int64_t start = mono();
	pid_t first = spiker(112 * MIB, go, back);
	pid_t second = spiker(40 * MIB, go2, back2);
	assert_int_equal(kpeak_track(k, first), 0);
	assert_int_equal(kpeak_track(k, second), 0);
	run_spike(go, back, &a);
	reap(first, go, back);
	int64_t mark1 = mono();
	run_spike(go2, back2, &b);
	reap(second, go2, back2);
	int64_t mark2 = mono();
	struct stages_got g;
	memset(&g, 0, sizeof(g));
	g.k = k;
	struct stagepeak sp;
	stagepeak_init(&sp, start, 0, engine_span, got_stage, &g);
	assert_int_equal(stagepeak_mark(&sp, 1, mark1), 0);
	assert_int_equal(stagepeak_mark(&sp, 2, mark2), 0);
	stagepeak_end(&sp, mono());
	stagepeak_release(&sp);
	print_message("# stages: %llu at %lld, %llu at %lld, %llu; spikes %lld..%lld, %lld..%lld\n",
		      (unsigned long long)g.peak[0], (long long)g.at[0],
		      (unsigned long long)g.peak[1], (long long)g.at[1],
		      (unsigned long long)g.peak[2], (long long)a.at[0], (long long)a.at[1],
		      (long long)b.at[0], (long long)b.at[1]);
	assert_int_equal(g.n, 3);
	assert_true(g.known[0] && g.known[1] && g.known[2]);
	assert_true(g.peak[0] >= a.top - BESIDE);
	assert_true(g.peak[0] <= a.top + b.base + BESIDE);
	assert_true(g.at[0] >= a.at[0] && g.at[0] <= a.at[1]);
	/* the first ended before the second spiked: its pages are out of the total */
	assert_true(g.peak[1] >= b.top - BESIDE && g.peak[1] <= b.top + BESIDE);
	assert_true(g.at[1] >= b.at[0] && g.at[1] <= b.at[1]);
	assert_true(g.peak[2] < 16 * MIB);	/* both ended: nothing left but rounding */
	kpeak_close(k);
}

/* A reset engine has no figures and tracks nothing (the first process may still be in
 * its exit), and serves the next process as a fresh one does: its peak is its own
 * spike only. */
static void test_reset(void **state)
{
	(void)state;
	struct kpeak *k = open_or_skip();
	int go[2], back[2], go2[2], back2[2];
	struct took t;
	pid_t first = spiker(128 * MIB, go, back);
	assert_int_equal(kpeak_track(k, first), 0);
	run_spike(go, back, &t);
	struct kpeak_figures f;
	kpeak_read(k, &f);
	assert_true(f.peak >= 128 * MIB);
	kpeak_reset(k);
	kpeak_read(k, &f);
	uint64_t peak;
	int64_t at;
	assert_true(f.peak == 0 && f.peak_at == 0 && f.total == 0 && f.events == 0);
	assert_int_equal(kpeak_proc(k, first, &peak, &at), -ENOENT);
	pid_t second = spiker(48 * MIB, go2, back2);
	assert_int_equal(kpeak_track(k, second), 0);
	run_spike(go2, back2, &t);
	reap(second, go2, back2);
	kpeak_read(k, &f);
	print_message("# after the reset: peak %llu (top %llu)\n", (unsigned long long)f.peak,
		      (unsigned long long)t.top);
	assert_true(f.peak >= t.top - BESIDE && f.peak <= t.top + BESIDE);
	assert_true(f.peak_at >= t.at[0] && f.peak_at <= t.at[1]);
	reap(first, go, back);
	kpeak_close(k);
}

struct exits {
	int n;
	struct kpeak_exit x[8];
};

static void on_exit_cb(void *ctx, const struct kpeak_exit *e)
{
	struct exits *xs = ctx;
	if (xs->n < 8)
		xs->x[xs->n++] = *e;
}

static int drain_exits(struct kpeak *k, struct exits *xs)
{
	struct kpeak_handlers h = { on_exit_cb, NULL, NULL, xs };
	return kpeak_drain(k, &h);
}

/* An ended process leaves its peak and leaves the total. */
static void test_exit_record(void **state)
{
	(void)state;
	struct kpeak *k = open_or_skip();
	int go[2], back[2];
	struct took t;
	pid_t pid = spiker(64 * MIB, go, back);
	assert_int_equal(kpeak_track(k, pid), 0);
	run_spike(go, back, &t);
	reap(pid, go, back);
	struct exits xs = { 0 };
	assert_int_equal(drain_exits(k, &xs), 1);
	assert_int_equal(xs.n, 1);
	assert_int_equal(xs.x[0].pid, pid);
	print_message("# exit peak %llu; top %llu\n", (unsigned long long)xs.x[0].peak,
		      (unsigned long long)t.top);
	assert_true(xs.x[0].peak >= t.top - BESIDE && xs.x[0].peak <= t.top + BESIDE);
	uint64_t p;
	int64_t when;
	assert_int_equal(kpeak_proc(k, pid, &p, &when), -ENOENT);
	struct kpeak_figures f;
	kpeak_read(k, &f);
	assert_true(f.total < (int64_t)MIB && f.total > -(int64_t)MIB);
	kpeak_close(k);
}

/* Two processes that spike one after the other, the first gone before the second's:
 * the set's simultaneous peak is the higher of the two moments (a's spike on a's base
 * with b's base beside it, both counted from when they are tracked; b's spike on its
 * base alone), not the sum of their own peaks. b's spike is twice the size of any
 * base, so that its moment is the higher by far with or without AddressSanitizer,
 * whose bases are about 100 MiB each: with a spike of 128 MiB the two moments came
 * within a few MiB of each other there, and the time fell in either spike. */
static void test_set_peak_is_simultaneous(void **state)
{
	(void)state;
	struct kpeak *k = open_or_skip();
	int ga[2], ba[2], gb[2], bb[2];
	struct took ta, tb;
	pid_t a = spiker(32 * MIB, ga, ba);
	pid_t b = spiker(256 * MIB, gb, bb);
	assert_int_equal(kpeak_track(k, a), 0);
	assert_int_equal(kpeak_track(k, b), 0);
	run_spike(ga, ba, &ta);
	reap(a, ga, ba);
	run_spike(gb, bb, &tb);
	reap(b, gb, bb);
	struct exits xs = { 0 };
	assert_int_equal(drain_exits(k, &xs), 2);
	uint64_t own = xs.x[0].peak + xs.x[1].peak;
	assert_true(xs.x[0].peak >= 32 * MIB && xs.x[1].peak >= 32 * MIB);
	struct kpeak_figures f;
	kpeak_read(k, &f);
	print_message("# set peak %llu; bases %llu and %llu; own peaks %llu\n",
		      (unsigned long long)f.peak, (unsigned long long)ta.base,
		      (unsigned long long)tb.base, (unsigned long long)own);
	uint64_t at_a = ta.top + tb.base, at_b = tb.top;
	uint64_t want = at_a > at_b ? at_a : at_b;
	assert_true(f.peak >= want - BESIDE && f.peak <= want + BESIDE);
	assert_true(f.peak < own - 24 * MIB);
	/* the time is inside the spike of the higher moment */
	const struct took *in = at_a > at_b ? &ta : &tb;
	assert_true(f.peak_at >= in->at[0] && f.peak_at <= in->at[1]);
	kpeak_close(k);
}

/* With forks followed, a tracked process's child counts, and its peak comes back. */
static void test_follow_forks(void **state)
{
	(void)state;
	struct kpeak *k = open_or_skip();
	kpeak_follow_forks(k, 1);
	int go[2];
	assert_int_equal(pipe(go), 0);
	pid_t parent = fork();
	assert_true(parent >= 0);
	if (parent == 0) {
		char c;
		if (read(go[0], &c, 1) != 1)
			_exit(3);
		pid_t child = fork();
		if (child == 0) {
			struct took t;
			spike(72 * MIB, &t);
			_exit(0);
		}
		int st;
		_exit(child > 0 && waitpid(child, &st, 0) == child && WIFEXITED(st) ? 0 : 5);
	}
	assert_int_equal(kpeak_track(k, parent), 0);
	assert_int_equal(write(go[1], "g", 1), 1);
	int st;
	assert_int_equal(waitpid(parent, &st, 0), parent);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(go[0]);
	close(go[1]);
	struct exits xs = { 0 };
	assert_int_equal(drain_exits(k, &xs), 2);
	int child_seen = 0;
	for (int i = 0; i < xs.n; i++)
		if (xs.x[i].pid != parent && xs.x[i].peak >= 72 * MIB)
			child_seen = 1;
	assert_true(child_seen);
	struct kpeak_figures f;
	kpeak_read(k, &f);
	assert_true(f.peak >= 72 * MIB);
	kpeak_close(k);
}

/* A launched command counts from its exec: the copy of its large parent before it is
 * not its peak. */
static void test_adopted_child_counts_from_exec(void **state)
{
	(void)state;
	struct kpeak *k = open_or_skip();
	size_t big = 128 * MIB;
	char *p = mmap(NULL, big, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	memset(p, 1, big);
	kpeak_adopt_next_child(k);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	struct exits xs = { 0 };
	assert_int_equal(drain_exits(k, &xs), 1);
	assert_int_equal(xs.x[0].pid, pid);
	print_message("# exit peak %llu\n", (unsigned long long)xs.x[0].peak);
	assert_true(xs.x[0].peak > 0);
	assert_true(xs.x[0].peak < 16 * MIB);
	munmap(p, big);
	kpeak_close(k);
}

/* A kernel without the tracepoint: the open fails and says which. */
static void test_no_tracepoint(void **state)
{
	(void)state;
	if (!kpeak_built() || geteuid() != 0)
		skip();
	char why[256];
	struct kpeak *k;
	setenv("RSSWATCH_TEST_KPEAK_TRACEPOINT", "rss_stat_nosuch", 1);
	int e = kpeak_open(&k, why, sizeof(why));
	unsetenv("RSSWATCH_TEST_KPEAK_TRACEPOINT");
	assert_true(e < 0);
	assert_null(k);
	assert_non_null(strstr(why, "rss_stat_nosuch"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spike_peak_and_time),
		cmocka_unit_test(test_exit_record),
		cmocka_unit_test(test_set_peak_is_simultaneous),
		cmocka_unit_test(test_follow_forks),
		cmocka_unit_test(test_adopted_child_counts_from_exec),
		cmocka_unit_test(test_reset),
		cmocka_unit_test(test_stage_peaks_from_the_history),
		cmocka_unit_test(test_no_tracepoint),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
