/* The sampler against a small fixture tree made in a temporary directory (the sysroot):
 * memory pressure is sampled where /proc/pressure/memory exists, at most once a
 * second, and is simply absent where it does not. GPU figures come from the fake NVML
 * library (BUILD/fake, next to this binary's folder): each sample keeps the highest
 * figures read since the one before. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/parse.h"
#include "base/sysroot.h"
#include "record/sampler.h"

#define FIX "tests/fixtures"
#define PID 4242
#define MiB (1024ULL * 1024)
#define GiB (1024 * MiB)
#define MS 1000000LL

static char root[64];
static char fake_lib[PATH_MAX + 32];

static void put(const char *rel, const char *text)
{
	char path[256];
	snprintf(path, sizeof(path), "%s%s", root, rel);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void copy(const char *rel, const char *from)
{
	char *buf = NULL;
	size_t cap = 0;
	FILE *in = fopen(from, "r");
	assert_non_null(in);
	ssize_t n = getdelim(&buf, &cap, '\0', in);
	fclose(in);
	assert_true(n > 0);
	put(rel, buf);
	free(buf);
}

static int setup(void **state)
{
	(void)state;
	char d[256];
	snprintf(root, sizeof(root), "/tmp/rsw-sampler.XXXXXX");
	assert_non_null(mkdtemp(root));
	snprintf(d, sizeof(d), "%s/proc", root);
	mkdir(d, 0755);
	snprintf(d, sizeof(d), "%s/proc/%d", root, PID);
	mkdir(d, 0755);
	snprintf(d, sizeof(d), "%s/proc/pressure", root);
	mkdir(d, 0755);
	copy("/proc/meminfo", FIX "/proc/meminfo.txt");
	copy("/proc/4242/status", FIX "/proc/status-weird-name.txt");
	sysroot_set(root);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	sysroot_set(NULL);
	return remove_tree(root);
}

static void test_no_psi(void **state)
{
	(void)state;
	struct sampler s;
	struct sample out;
	char path[256];
	snprintf(path, sizeof(path), "%s/proc/pressure/memory", root);
	unlink(path);
	assert_int_equal(sampler_open(&s, PID), 0);
	assert_int_equal(sampler_read(&s, 1, &out), 0);
	assert_true(out.mem.rss == 21792 * 1024ULL);
	assert_false(out.have & (SAMPLE_PSI | SAMPLE_PSI_FULL | SAMPLE_CG_PSI | SAMPLE_CG_PSI_FULL));
	/* a cgroup without memory.pressure (v1): nothing, and no error later */
	assert_int_equal(sampler_use_cgroup_psi(&s, FIX "/cgroup-v1"), -ENOENT);
	assert_int_equal(sampler_read(&s, 2 * NS_PER_S, &out), 0);
	assert_false(out.have & (SAMPLE_PSI | SAMPLE_CG_PSI));
	sampler_close(&s);
}

static void test_psi(void **state)
{
	(void)state;
	struct sampler s;
	struct sample out;
	put("/proc/pressure/memory", "some avg10=1.50 avg60=0.20 avg300=0.00 total=1000\n"
				     "full avg10=0.25 avg60=0.00 avg300=0.00 total=400\n");
	assert_int_equal(sampler_open(&s, PID), 0);
	assert_int_equal(sampler_use_cgroup_psi(&s, FIX "/cgroup-v2-oom/sys/fs/cgroup/system.slice/prover.service/rsw-oom"), 0);
	assert_int_equal(sampler_read(&s, 1, &out), 0);
	assert_true(out.have & SAMPLE_PSI);
	assert_true(out.have & SAMPLE_PSI_FULL);
	assert_true(out.psi_some_avg10 > 1.49 && out.psi_some_avg10 < 1.51);
	assert_true(out.psi_full_avg10 > 0.24 && out.psi_full_avg10 < 0.26);
	assert_true(out.psi_some_total_us == 1000 && out.psi_full_total_us == 400);
	assert_true(out.have & SAMPLE_CG_PSI);

	/* Within a second the file is not read again: the last figures are carried. */
	put("/proc/pressure/memory", "some avg10=9.00 avg60=0.20 avg300=0.00 total=5000\n"
				     "full avg10=3.00 avg60=0.00 avg300=0.00 total=2000\n");
	assert_int_equal(sampler_read(&s, NS_PER_S / 2, &out), 0);
	assert_true(out.psi_some_total_us == 1000);
	assert_int_equal(sampler_read(&s, NS_PER_S + 2, &out), 0);
	assert_true(out.psi_some_total_us == 5000 && out.psi_full_total_us == 2000);
	assert_true(out.psi_some_avg10 > 8.99 && out.psi_some_avg10 < 9.01);
	sampler_close(&s);
}

/* More children than one page of /proc/PID/task/PID/children holds (a seq_file returns
 * about 4 KiB per read: 682 pids here): every one must be a member. */
static void test_tree_of_800(void **state)
{
	(void)state;
	enum { N = 800 };
	static pid_t kids[N];
	struct procset ps;
	struct procset_totals t;
	sysroot_set(NULL);
	for (int i = 0; i < N; i++) {
		kids[i] = fork();
		assert_true(kids[i] >= 0);
		if (kids[i] == 0) {
			pause();
			_exit(0);
		}
	}
	assert_int_equal(procset_open_tree(&ps, getpid(), 0, NULL, NULL), 0);
	int e = procset_read(&ps, &t);
	for (int i = 0; i < N; i++)
		kill(kids[i], SIGKILL);
	for (int i = 0; i < N; i++)
		waitpid(kids[i], NULL, 0);
	procset_close(&ps, 0);
	sysroot_set(root);
	assert_int_equal(e, 0);
	assert_int_equal(t.nprocs, N + 1);
}

static int64_t deadline_left_ms(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return 5000 - ((t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000);
}

static void *thread_wait(void *arg)
{
	char c;
	(void)!read(*(int *)arg, &c, 1);
	return NULL;
}

/* With the proc connector: the first read walks; later ones follow fork events only
 * (no walk), see a child at the first read after it was forked, drop it once it died,
 * and see a thread come and go (its events invalidate the cached status, whose key no
 * longer holds the thread count). */
static void test_tree_connector(void **state)
{
	(void)state;
	struct procset ps;
	struct procset_totals t;
	struct timespec t0;
	int fds[2];
	pthread_t th;
	sysroot_set(NULL);
	assert_int_equal(procset_open_tree(&ps, getpid(), 1, NULL, NULL), 0);
	if (ps.cn.fd < 0) {
		procset_close(&ps, 0);
		sysroot_set(root);
		skip();
	}
	assert_int_equal(procset_read(&ps, &t), 0);
	assert_int_equal(t.nprocs, 1);
	uint32_t threads0 = t.threads;
	assert_int_equal(ps.walks, 1);
	pid_t kid = fork();
	assert_true(kid >= 0);
	if (kid == 0) {
		pause();
		_exit(0);
	}
	assert_int_equal(procset_read(&ps, &t), 0);	/* fork() returned: its event is queued */
	assert_int_equal(t.nprocs, 2);
	assert_true(procset_has(&ps, kid));
	kill(kid, SIGKILL);
	waitpid(kid, NULL, 0);
	assert_int_equal(procset_read(&ps, &t), 0);
	assert_int_equal(t.nprocs, 1);
	assert_true(ps.walks <= 1 + ps.cn_lost);	/* no walk but after lost events */
	/* a thread: started, then ended (its exit is reported after join returns) */
	assert_int_equal(pipe(fds), 0);
	assert_int_equal(pthread_create(&th, NULL, thread_wait, &fds[0]), 0);
	assert_int_equal(procset_read(&ps, &t), 0);
	assert_int_equal(t.threads, threads0 + 1);
	assert_int_equal(write(fds[1], "x", 1), 1);
	pthread_join(th, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		assert_int_equal(procset_read(&ps, &t), 0);
	while (t.threads != threads0 && deadline_left_ms(&t0) > 0);
	assert_int_equal(t.threads, threads0);
	procset_close(&ps, 0);
	close(fds[0]);
	close(fds[1]);
	sysroot_set(root);
}

/* Which exit records a tree may hold: after a read with its connector, another
 * process (init) is denied, and a child forked and reaped between two reads is held
 * through the next read (its record may come late) and denied after the one after.
 * Where the connector lost events the set cannot tell, and holds everything. */
static void test_tree_may_hold(void **state)
{
	(void)state;
	struct procset ps;
	struct procset_totals t;
	sysroot_set(NULL);
	assert_int_equal(procset_open_tree(&ps, getpid(), 1, NULL, NULL), 0);
	if (ps.cn.fd < 0) {
		procset_close(&ps, 0);
		sysroot_set(root);
		skip();
	}
	assert_int_equal(procset_may_hold(&ps, 1), 1);	/* nothing read: cannot tell */
	assert_int_equal(procset_read(&ps, &t), 0);
	assert_int_equal(procset_may_hold(&ps, getpid()), 1);
	pid_t kid = fork();
	assert_true(kid >= 0);
	if (kid == 0)
		_exit(0);
	assert_int_equal(waitpid(kid, NULL, 0), kid);
	procset_take_events(&ps);
	assert_int_equal(procset_may_hold(&ps, kid), 1);
	assert_int_equal(procset_read(&ps, &t), 0);
	assert_int_equal(procset_may_hold(&ps, kid), 1);
	int denied_init = procset_may_hold(&ps, 1) == 0;
	assert_int_equal(procset_read(&ps, &t), 0);
	int denied_kid = procset_may_hold(&ps, kid) == 0;
	unsigned long lost = ps.cn_lost;
	procset_close(&ps, 0);
	sysroot_set(root);
	if (!lost) {
		assert_true(denied_init);
		assert_true(denied_kid);
	}
}

/* The highest GPU figures since the last sample, each on its own: reads on the grid
 * k * 20ms between samples (a late read does not shift the next), a sample that finds
 * a read due makes it, a sample with no read since the last carries the latest read,
 * and a read whose process query fails does not lower what is known. Windows in the
 * fake's script count calls, so no clock is involved. */
static void test_gpu_max(void **state)
{
	(void)state;
	char script[128];
	struct nvml *n = NULL;
	struct sampler s;
	struct sample out;
	char why[256] = "";
	uint64_t hi;
	int64_t at;
	int probed;
	if (access(fake_lib, R_OK) != 0)
		skip();
	snprintf(script, sizeof(script), "%s/nvml.script", root);
	put("/nvml.script",
	    "device 0 total 141G used 10G\n"
	    "device 1 total 80G used 1G\n"
	    "used device 0 bytes 30G from call 3 to call 3\n"
	    "proc 4242 device 0 bytes 1G to call 2\n"
	    "proc 4242 device 0 bytes 5G from call 3 to call 3\n"
	    "proc 4242 device 0 bytes 2G from call 4\n"
	    "proc 4242 device 1 bytes 100M to call 3\n"
	    "proc 4242 device 1 bytes 700M from call 4 to call 4\n"
	    "proc 4242 device 1 bytes 100M from call 5\n"
	    "fail procs device 0 error unknown from call 7 to call 7\n");
	setenv("RSSWATCH_NVML_LIB", fake_lib, 1);
	setenv("FAKE_NVML_SCRIPT", script, 1);
	if (nvml_open(&n, why, sizeof(why)) != 0)
		fail_msg("nvml_open: %s", why);
	assert_int_equal(sampler_open(&s, PID), 0);
	sampler_use_gpu(&s, n, 20 * MS, 0);

	/* read 1, by the first sample */
	assert_int_equal(sampler_read(&s, 0, &out), 0);
	assert_true(out.have & SAMPLE_GPU);
	assert_true(out.gpu == GiB + 100 * MiB);
	assert_true(s.gpu_fresh);
	assert_int_equal(s.ngpus, 2);
	assert_true(s.gpus[0].target_bytes == GiB && s.gpus[0].used_bytes == 10 * GiB);
	assert_true(s.gpus[1].target_bytes == 100 * MiB && s.gpus[1].total_bytes == 80 * GiB);
	assert_int_equal(sampler_gpu_pending(&s, &hi, &at, &probed), 0);

	assert_int_equal(sampler_poll_gpu(&s, 10 * MS), 0);	/* not due */
	assert_int_equal(sampler_poll_gpu(&s, 20 * MS), 1);	/* read 2 */
	assert_int_equal(sampler_poll_gpu(&s, 45 * MS), 1);	/* read 3, late: the spike */
	assert_int_equal(sampler_poll_gpu(&s, 59 * MS), 0);	/* next deadline 60ms */
	assert_int_equal(sampler_poll_gpu(&s, 60 * MS), 1);	/* read 4: device 1 peaks */
	assert_int_equal(sampler_poll_gpu(&s, 79 * MS), 0);
	assert_int_equal(sampler_gpu_pending(&s, &hi, &at, &probed), 1);
	assert_true(hi == 5 * GiB + 100 * MiB && at == 45 * MS);

	/* The sample between: the spike of read 3 and device 1's peak of read 4. */
	assert_int_equal(sampler_read(&s, 79 * MS, &out), 0);
	assert_true(out.gpu == 5 * GiB + 100 * MiB);
	assert_true(s.gpu_fresh);
	assert_true(s.gpus[0].target_known && s.gpus[0].target_bytes == 5 * GiB);
	assert_true(s.gpus[0].used_bytes == 30 * GiB && s.gpus[0].total_bytes == 141 * GiB);
	assert_true(s.gpus[1].target_known && s.gpus[1].target_bytes == 700 * MiB);
	assert_int_equal(sampler_gpu_pending(&s, &hi, &at, &probed), 0);

	/* No read since: the latest read (4) is carried, not the spike. */
	assert_int_equal(sampler_read(&s, 79 * MS + 1, &out), 0);
	assert_false(s.gpu_fresh);
	assert_true(out.gpu == 2 * GiB + 700 * MiB);
	assert_true(s.gpus[0].target_bytes == 2 * GiB && s.gpus[0].used_bytes == 10 * GiB);

	/* A sample on a deadline reads (5); its window started from read 4. */
	assert_int_equal(sampler_read(&s, 80 * MS, &out), 0);
	assert_true(s.gpu_fresh);
	assert_true(out.gpu == 2 * GiB + 700 * MiB);
	assert_int_equal(sampler_poll_gpu(&s, 80 * MS), 0);	/* that deadline is read */

	/* Read 6 is good, read 7's process query on device 0 fails: the sample keeps 6.
	 * (The window started from read 5, as high as 6: its time stays.) */
	assert_int_equal(sampler_poll_gpu(&s, 100 * MS), 1);
	assert_int_equal(sampler_poll_gpu(&s, 120 * MS), 1);
	assert_int_equal(sampler_gpu_pending(&s, &hi, &at, &probed), 1);
	assert_true(hi == 2 * GiB + 100 * MiB && at == 80 * MS);
	assert_int_equal(sampler_read(&s, 121 * MS, &out), 0);
	assert_true(out.have & SAMPLE_GPU);
	assert_true(out.gpu == 2 * GiB + 100 * MiB);
	assert_true(s.gpus[0].target_known && s.gpus[0].target_bytes == 2 * GiB);
	/* Then only read 7 is left: the total is not known. */
	assert_int_equal(sampler_read(&s, 122 * MS, &out), 0);
	assert_false(out.have & SAMPLE_GPU);
	assert_false(s.gpus[0].target_known);
	assert_true(s.gpus[1].target_known && s.gpus[1].target_bytes == 100 * MiB);

	sampler_close(&s);
	nvml_close(n);
	unsetenv("FAKE_NVML_SCRIPT");
	unsetenv("RSSWATCH_NVML_LIB");
}

/* Without NVML the sampler never reads GPU figures and a sample has none. */
static void test_gpu_none(void **state)
{
	(void)state;
	struct sampler s;
	struct sample out;
	assert_int_equal(sampler_open(&s, PID), 0);
	assert_int_equal(sampler_poll_gpu(&s, 0), 0);
	assert_int_equal(sampler_read(&s, 1, &out), 0);
	assert_false(out.have & SAMPLE_GPU);
	assert_int_equal(s.ngpus, 0);
	sampler_close(&s);
}

int main(void)
{
	char exe[PATH_MAX];
	ssize_t k = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (k < 0)
		return 1;
	exe[k] = '\0';
	/* BUILD/tests/test_sampler -> BUILD/fake/libnvidia-ml.so.1 */
	for (int i = 0; i < 2; i++) {
		char *p = strrchr(exe, '/');
		if (!p)
			return 1;
		*p = '\0';
	}
	snprintf(fake_lib, sizeof(fake_lib), "%s/fake/libnvidia-ml.so.1", exe);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_psi),
		cmocka_unit_test(test_psi),
		cmocka_unit_test(test_tree_of_800),
		cmocka_unit_test(test_tree_connector),
		cmocka_unit_test(test_tree_may_hold),
		cmocka_unit_test(test_gpu_max),
		cmocka_unit_test(test_gpu_none),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
