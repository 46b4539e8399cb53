/* render/summary.c: show's summary, where its peak came from, and the projection. */
#include "testutil.h"

#include <string.h>
#include <time.h>

#include "base/util.h"
#include "render/summary.h"
#include "runfix.h"

static void test_summary_peak_source(void **state)
{
	(void)state;
	struct run r;
	struct buf b = { 0 };
	set_run(&r);
	summary_text(&b, &r, 400 * MIB, &one_kill, 1);
	const char *t = buf_str(&b);
	assert_non_null(strstr(t, "\npeak      508.2 MiB at 02:24:21 (+2.4s), from the exit record; "
				 "the highest sampled total was 400.0 MiB\n"));
	assert_non_null(strstr(t, "\nlargest   cc1 (pid 123), peak 342.5 MiB\n"));
	assert_non_null(strstr(t, "\noutcome   exited with 0; 1 process OOM-killed: python3 (pid 5123) "
				 "at +1.2s, anon-rss 199.6 MiB\n"));
	assert_null(strstr(t, "earlier"));
	assert_null(strstr(t, "sampled only"));
	assert_null(strstr(t, "cgroup    "));

	/* attached, no exit records, a sampled cgroup peak, a sampled peak */
	buf_reset(&b);
	r.hwm_before = (int64_t)(407 * MIB + 9 * MIB / 10 + 1);
	uint64_t peak = r.peak_rss;
	r.peak_rss = 8 * MIB;	/* the old peak is above the run's: said apart */
	r.peak_source = PEAK_FROM_SAMPLE;
	r.exit_records = 0;
	r.oom_kills = 0;
	r.peak_cgroup = 600 * MIB;
	r.peak_cgroup_at = r.started_at;
	r.cgroup = "/x";
	summary_text(&b, &r, r.peak_rss, NULL, 0);
	t = buf_str(&b);
	assert_non_null(strstr(t, "(+2.4s), from a sample\n"));
	assert_non_null(strstr(t, "\nearlier   peak 407.9 MiB before recording (VmHWM when attached; "
				 "not part of this run)\n"));
	assert_non_null(strstr(t, "\nnote      peaks of processes that ended between samples are "
				 "sampled only (not exact)\n"));
	assert_non_null(strstr(t, "\ncgroup    peak 600.0 MiB at 02:24:19 (/x), the highest usage sampled\n"));
	assert_null(strstr(t, "earlier   cgroup"));
	assert_non_null(strstr(t, "\noutcome   exited with 0\n"));
	r.cgroup_peak_before = 2900 * MIB;	/* -g on a cgroup with history */
	buf_reset(&b);
	summary_text(&b, &r, r.peak_rss, NULL, 0);
	assert_non_null(strstr(buf_str(&b), "\nearlier   cgroup peak 2.8 GiB before recording (the "
				 "kernel's all-time figure, covering more than this run)\n"));
	r.cgroup_peak_before = 0;

	/* one process alone: no largest process, no note on sets */
	buf_reset(&b);
	r.tree = 0;
	r.peak_cgroup_exact = 1;
	summary_text(&b, &r, r.peak_rss, NULL, 0);
	t = buf_str(&b);
	assert_null(strstr(t, "largest"));
	assert_null(strstr(t, "sampled only"));
	assert_non_null(strstr(t, "(/x), the cgroup's own peak\n"));

	/* every source in its words, and runs from before schema 8 as before */
	r.peak_rss = peak;
	const char *const src[] = { PEAK_FROM_HWM, PEAK_FROM_WAIT, PEAK_FROM_OOM, "" };
	const char *const words[] = { ", from VmHWM; the highest sampled RSS was 100.0 MiB\n",
				      ", from wait4; the highest sampled RSS was 100.0 MiB\n",
				      ", from the OOM report; the highest sampled RSS was 100.0 MiB\n",
				      ", from VmHWM; the highest sampled RSS was 100.0 MiB\n" };
	for (size_t i = 0; i < ARRAY_SIZE(src); i++) {
		buf_reset(&b);
		r.peak_source = (char *)src[i];
		summary_text(&b, &r, 100 * MIB, NULL, 0);
		assert_non_null(strstr(buf_str(&b), words[i]));
	}
	buf_release(&b);
}

/* The smallest time to exhaustion projected during the run, and none without a limit. */
static void test_summary_eta(void **state)
{
	(void)state;
	struct run r;
	struct buf b = { 0 };
	set_run(&r);
	r.min_eta_ns = 250LL * 1000000000LL;
	r.min_eta_at = r.started_at + 3LL * 1000000000LL;
	snprintf(r.min_eta_limit, sizeof(r.min_eta_limit), "cgroup");
	summary_text(&b, &r, 0, NULL, 0);
	assert_non_null(strstr(buf_str(&b), "\neta       smallest projection: full in ~4m10s "
					   "(cgroup limit) at "));
	assert_non_null(strstr(buf_str(&b), " (+3.0s)\n"));
	r.min_eta_limit[0] = '\0';
	buf_reset(&b);
	summary_text(&b, &r, 0, NULL, 0);
	assert_null(strstr(buf_str(&b), "smallest projection"));
	buf_release(&b);
}

int main(void)
{
	setenv("TZ", "UTC", 1);
	tzset();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_summary_peak_source),
		cmocka_unit_test(test_summary_eta),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
