/* render/procs.c: the process table, the peak and the OOM kills in words. */
#include "testutil.h"

#include <string.h>
#include <time.h>

#include "base/util.h"
#include "render/procs.h"
#include "render/summary.h"
#include "runfix.h"

/* One wording of the peak for every output, also for runs older than peak_source: the
 * report once said "VmHWM" where show said "from the OOM report". */
static void test_run_peak_words(void **state)
{
	(void)state;
	struct run r;
	struct buf b = { 0 };
	set_run(&r);
	r.peak_rss = 773 * MIB + MIB / 5;
	r.peak_source = PEAK_FROM_HWM;
	run_peak_words(&b, &r, 160 * MIB);
	assert_string_equal(buf_str(&b), "highest sample 160.0 MiB; peak 773.2 MiB from VmHWM");
	buf_reset(&b);
	r.peak_source = PEAK_FROM_SAMPLE;
	run_peak_words(&b, &r, r.peak_rss);
	assert_string_equal(buf_str(&b), "peak 773.2 MiB from a sample");
	/* before schema 8: the OOM report when the peak is at the kill, else VmHWM */
	r.peak_source = "";
	r.oom_at = r.peak_rss_at;
	assert_string_equal(run_peak_from(&r, 160 * MIB), "from the OOM report");
	r.oom_at = 0;
	assert_string_equal(run_peak_from(&r, 160 * MIB), "from VmHWM");
	assert_null(run_peak_from(&r, r.peak_rss));
	/* the report's card uses the same words as show */
	struct buf s = { 0 };
	r.oom_at = r.peak_rss_at;
	summary_text(&s, &r, 160 * MIB, NULL, 0);
	assert_non_null(strstr(buf_str(&s), ", from the OOM report;"));
	buf_release(&s);
	buf_release(&b);
}

static void test_oom_kills_words(void **state)
{
	(void)state;
	struct run r;
	struct buf b = { 0 };
	set_run(&r);
	struct oom_kill k[3] = { one_kill, one_kill, one_kill };
	k[1].pid = 5124;
	k[1].t += 1000000000;
	k[1].anon_rss = 300 * MIB;
	strlcpy_rsw(k[1].comm, "ld\x1b[31m", sizeof(k[1].comm));
	k[2].pid = r.pid;
	k[2].t += 1500000000;
	k[2].anon_rss = 10 * MIB;
	r.oom_kills = 2;
	oom_kills_words(&b, &r, k, 2);
	assert_string_equal(buf_str(&b), "2 processes OOM-killed, the first at +1.2s; the largest: "
					 "ld?[31m (pid 5124) at +2.2s, anon-rss 300.0 MiB");
	/* the target itself was killed: its outcome says so, the others are named here */
	buf_reset(&b);
	strlcpy_rsw(r.outcome, OUTCOME_OOM_KILLED, sizeof(r.outcome));
	r.oom_kills = 3;
	oom_kills_words(&b, &r, k, 3);
	assert_string_equal(buf_str(&b), "2 other processes OOM-killed, the first at +1.2s; the largest: "
					 "ld?[31m (pid 5124) at +2.2s, anon-rss 300.0 MiB");
	buf_reset(&b);
	r.oom_kills = 1;
	oom_kills_words(&b, &r, &k[2], 1);
	assert_string_equal(buf_str(&b), "");
	/* counted, but the kernel log named none */
	buf_reset(&b);
	strlcpy_rsw(r.outcome, OUTCOME_EXITED, sizeof(r.outcome));
	r.oom_kills = 2;
	oom_kills_words(&b, &r, NULL, 0);
	assert_string_equal(buf_str(&b), "2 processes OOM-killed (the kernel log named none)");
	/* the cgroup counted more than the log named: both figures */
	buf_reset(&b);
	r.oom_kills = 56;
	oom_kills_words(&b, &r, k, 2);
	assert_string_equal(buf_str(&b), "56 processes OOM-killed (the kernel log named 2), the first "
					 "at +1.2s; the largest: ld?[31m (pid 5124) at +2.2s, "
					 "anon-rss 300.0 MiB");
	buf_reset(&b);
	r.oom_kills = 0;
	oom_kills_words(&b, &r, NULL, 0);
	assert_string_equal(buf_str(&b), "");
	buf_release(&b);
}

static void test_procs_table(void **state)
{
	(void)state;
	struct proc_summary p[6] = {
		proc(123, "cc1", 100, 2500, 342 * MIB + MIB / 2, PEAK_FROM_EXIT, PROC_EXITED, 0, -1),
		proc(100, "make", 0, -1, 20 * MIB, PEAK_FROM_HWM, PROC_RUNNING, -1, -1),
		proc(5123, "python3\n\x1b[2J", 200, 1200, 12 * MIB, PEAK_FROM_OOM, PROC_OOM_KILLED, -1, 9),
		proc(124, "a-very-long-process-name", 300, 400, 3 * MIB, PEAK_FROM_SAMPLE, PROC_SIGNALED, -1, 15),
		proc(125, "as", 500, 600, 2 * MIB, PEAK_FROM_SAMPLE, PROC_EXITED, 1, -1),
		proc(126, "as", 700, 800, 1 * MIB, PEAK_FROM_SAMPLE, PROC_GONE, -1, -1),
	};
	/* CPU: user and system together; a count past six digits in millions */
	p[0].cpu_user_ns = 12340000000LL;
	p[0].cpu_sys_ns = 1000000000LL;
	p[0].majflt = 1234567;
	p[1].cpu_user_ns = 500000000;
	p[1].cpu_sys_ns = 250000000;
	p[1].majflt = 0;
	p[2].cpu_user_ns = 1234560000000LL;	/* 1234.56 s */
	p[2].cpu_sys_ns = 0;
	p[2].majflt = 999999;
	struct buf b = { 0 };
	procs_table(&b, p, 6, 4);
	assert_string_equal(buf_str(&b),
		"\nprocesses (6, largest peak first)\n"
		"      PID  COMMAND           START      END              PEAK    CPU s  MAJFLT  ENDED\n"
		"      123  cc1               +100ms     +2.5s       342.5 MiB*   13.34    1.2M  exited 0\n"
		"      100  make              +0ms       -            20.0 MiB     0.75       0  running\n"
		"     5123  python3??[2J      +200ms     +1.2s        12.0 MiB*  1234.6  999999  OOM-killed\n"
		"      124  a-very-long-p...  +300ms     +400ms        3.0 MiB        -       -  killed by SIGTERM\n"
		"  ... and 2 more processes: the largest of them peaked at 2.0 MiB\n"
		"      (1 exited non-zero, 1 gone)\n"
		"  * exact peak (exit record, wait4 or OOM report); the others are sampled\n"
		"  CPU s: user and system time over the process's life; MAJFLT: page faults that waited "
		"for I/O\n");
	/* the widest row (a start and an end past an hour, the longest signal words) stays
	 * within 100 columns */
	buf_reset(&b);
	struct proc_summary w = p[3];
	w.first_ns = 3723LL * 1000000000LL;
	w.end_ns = 86399LL * 1000000000LL;
	w.peak_rss = 1023 * MIB;
	w.cpu_user_ns = 999999LL * 1000000000LL;
	w.cpu_sys_ns = 0;
	w.majflt = 999999999;
	procs_table(&b, &w, 1, 20);
	const char *row = strstr(buf_str(&b), "\n      124");
	assert_non_null(row);
	assert_true(strcspn(row + 1, "\n") <= 100);
	/* all shown, none exact, no context known: no summary line, no legends */
	buf_reset(&b);
	procs_table(&b, p + 3, 3, 20);
	assert_null(strstr(buf_str(&b), "more process"));
	assert_null(strstr(buf_str(&b), "exact"));
	assert_null(strstr(buf_str(&b), "CPU s:"));
	assert_non_null(strstr(buf_str(&b), "  exited 1\n"));
	buf_reset(&b);
	procs_table(&b, p, 0, 20);
	assert_int_equal(b.len, 0);
	buf_release(&b);
	assert_true(peak_is_exact(PEAK_FROM_WAIT));
	assert_false(peak_is_exact(PEAK_FROM_HWM));
	assert_false(peak_is_exact(""));
}

int main(void)
{
	setenv("TZ", "UTC", 1);
	tzset();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_peak_words),
		cmocka_unit_test(test_oom_kills_words),
		cmocka_unit_test(test_procs_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
