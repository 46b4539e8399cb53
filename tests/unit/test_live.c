/* render/live.c: the live line, its CPU and fault rates, and the outcome in words. */
#include "testutil.h"

#include <string.h>
#include <time.h>

#include "base/util.h"
#include "render/live.h"

#define GIB (1024ULL * 1024 * 1024)
#define MIB (1024ULL * 1024)

static void test_live_context(void **state)
{
	(void)state;
	struct buf b = { 0 };
	struct sample p, s;
	memset(&p, 0, sizeof(p));
	memset(&s, 0, sizeof(s));
	p.elapsed_ns = 1000000000;
	s.elapsed_ns = 3000000000;
	p.have = s.have = SAMPLE_CPU;
	p.cpu_user_ns = 500000000;
	s.cpu_user_ns = 2000000000;
	s.cpu_sys_ns = 500000000;	/* 2 s of CPU in 2 s */
	p.majflt = 10;
	s.majflt = 110;
	live_context(&b, &p, &s);
	assert_string_equal(buf_str(&b), " cpu 100% majflt 50/s");
	buf_reset(&b);
	/* a short command's last line: 1 ms in which the counters moved by a tick (10 ms)
	 * would read 1000%; the faults' rate stands, the CPU is not said */
	p.elapsed_ns = s.elapsed_ns - 1000000;
	p.cpu_user_ns = s.cpu_user_ns + s.cpu_sys_ns - 10000000;
	p.majflt = s.majflt;
	live_context(&b, &p, &s);
	assert_string_equal(buf_str(&b), " majflt 0/s");
	buf_reset(&b);
	p.elapsed_ns = s.elapsed_ns - LIVE_CPU_MIN_NS;	/* from 100 ms on it is */
	live_context(&b, &p, &s);
	assert_string_equal(buf_str(&b), " cpu 10% majflt 0/s");
	buf_reset(&b);
	p.have = 0;	/* the first line: no rate yet */
	live_context(&b, &p, &s);
	assert_string_equal(buf_str(&b), "");
	buf_release(&b);
}

static void test_live_line(void **state)
{
	(void)state;
	struct sample s;
	memset(&s, 0, sizeof(s));
	s.mem.rss = (uint64_t)(666.4 * GIB);
	s.mem.anon = (uint64_t)(660.1 * GIB);
	s.mem.file = (uint64_t)(6.3 * GIB);
	s.mem.shmem = 0;
	s.mem.hwm = (uint64_t)(668.0 * GIB);
	s.mem_available = (uint64_t)(80.2 * GIB);
	struct buf b = { 0 };
	live_line(&b, 1795919059LL * 1000000000, &s);
	assert_string_equal(buf_str(&b), "02:24:19 rss 666.4 GiB (anon 660.1, file 6.3, shmem 0.0) "
					 "hwm 668.0 GiB avail 80.2 GiB");
	buf_reset(&b);
	s.mem.swap = 512 * MIB;
	s.have = SAMPLE_GPU;
	s.gpu = (uint64_t)(70.1 * GIB);
	live_line(&b, 1795919059LL * 1000000000, &s);
	assert_non_null(strstr(buf_str(&b), " swap 512.0 MiB gpu 70.1 GiB avail 80.2 GiB"));
	buf_release(&b);
}

static void test_outcome_words(void **state)
{
	(void)state;
	struct run r;
	struct buf b = { 0 };
	memset(&r, 0, sizeof(r));
	strlcpy_rsw(r.outcome, OUTCOME_EXITED, sizeof(r.outcome));
	r.exit_code = 3;
	outcome_words(&b, &r);
	assert_string_equal(buf_str(&b), "exited with 3");
	buf_reset(&b);
	strlcpy_rsw(r.outcome, OUTCOME_SIGNALED, sizeof(r.outcome));
	r.signal = 9;
	outcome_words(&b, &r);
	assert_string_equal(buf_str(&b), "killed by SIGKILL");
	buf_reset(&b);
	strlcpy_rsw(r.outcome, OUTCOME_STOPPED, sizeof(r.outcome));
	outcome_words(&b, &r);
	assert_string_equal(buf_str(&b), "still running (recording stopped)");
	/* a memory cgroup is named by whoever made it: printable only */
	buf_reset(&b);
	strlcpy_rsw(r.outcome, OUTCOME_OOM_KILLED, sizeof(r.outcome));
	r.oom_memcg = "/a\x1b[2Jb";
	outcome_words(&b, &r);
	assert_string_equal(buf_str(&b), "killed by the OOM killer (memory cgroup /a?[2Jb)");
	buf_release(&b);
}

int main(void)
{
	setenv("TZ", "UTC", 1);
	tzset();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_live_context),
		cmocka_unit_test(test_live_line),
		cmocka_unit_test(test_outcome_words),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
