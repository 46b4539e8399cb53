/* render/compare.c: comparisons of synthetic runs with known differences, including none. */
#include "testutil.h"

#include <math.h>
#include <string.h>
#include <time.h>

#include "base/util.h"
#include "render/compare.h"

#define MIB (1024ULL * 1024)
#define NS 1000000000LL
#define T0 (1795919059LL * NS)

/* --- compare --- */

static void ramp(struct sample *s, size_t n, double mib_per_s, double base_mib)
{
	for (size_t i = 0; i < n; i++) {
		s[i].elapsed_ns = (int64_t)i * NS;
		s[i].mem.rss = (uint64_t)((base_mib + mib_per_s * (double)i) * MIB);
	}
}

static void test_compare_figures(void **state)
{
	(void)state;
	struct sample s[100];
	memset(s, 0, sizeof(s));
	ramp(s, 100, 2.0, 10);
	assert_true(fabs(cmp_slope(s, 100) / MIB - 2.0) < 1e-6);
	assert_true(cmp_slope(s, 1) == 0);
	assert_int_equal(samples_rss_at(s, 100, 5 * NS + 1), 20 * MIB);
	assert_int_equal(samples_rss_at(s, 100, -1), 10 * MIB);
	assert_int_equal(samples_rss_at(s, 100, 1000 * NS), s[99].mem.rss);
	assert_int_equal(cmp_classify(12.0, 0.4), CMP_CLEAR);
	assert_int_equal(cmp_classify(-12.0, 0.4), CMP_CLEAR);
	assert_int_equal(cmp_classify(0.2, 0.5), CMP_NO_EVIDENCE);
	assert_int_equal(cmp_classify(1.2, 0.8), CMP_UNCLEAR);
	assert_int_equal(cmp_classify(5.0, -1), CMP_UNKNOWN_SPREAD);
	assert_int_equal(cmp_classify(0.05, 0), CMP_NO_EVIDENCE);
}

/* A run whose RSS is flat at mib with a mark "stage" at 5 s. */
struct flat {
	struct run run;
	struct sample s[20];
	struct mark mark;
};

static void flat_init(struct flat *f, int64_t id, double mib)
{
	memset(f, 0, sizeof(*f));
	f->run.id = id;
	f->run.label = "";
	f->run.started_at = T0;
	for (int i = 0; i < 20; i++) {
		f->s[i].elapsed_ns = (int64_t)i * NS;
		f->s[i].mem.rss = (uint64_t)(mib * MIB) * (uint64_t)(i >= 2 ? 1 : 0) + (uint64_t)(i + 1) * 4096;
	}
	f->run.peak_rss = (uint64_t)(mib * MIB);
	f->run.peak_rss_at = T0 + 19 * NS;
	f->run.samples = 20;
	f->mark.t = T0 + 5 * NS;
	f->mark.label = "stage";
}

static struct cmp_run cmp_of(struct flat *f)
{
	struct cmp_run c = { &f->run, f->s, 20, &f->mark, 1 };
	return c;
}

static void test_compare_runs(void **state)
{
	(void)state;
	struct flat a, z;
	flat_init(&a, 41, 100);
	flat_init(&z, 42, 200);
	struct cmp_run ca = cmp_of(&a), cz = cmp_of(&z);
	struct cmp_group g[2] = { { &ca, 1 }, { &cz, 1 } };
	struct buf b = { 0 };
	compare_text(&b, g, 2, 0);
	const char *t = buf_str(&b);
	assert_non_null(strstr(t, "run 41"));
	assert_non_null(strstr(t, "vs run 41"));
	assert_non_null(strstr(t, "at \"stage\""));
	assert_non_null(strstr(t, "+100.0 MiB (+100.0%)"));
	assert_non_null(strstr(t, "run 42's peak is 100.0% higher than run 41's"));
	assert_non_null(strstr(t, "spread of repeated runs is unknown"));
	buf_reset(&b);
	compare_json(&b, g, 2, 0);
	t = buf_str(&b);
	assert_non_null(strstr(t, "\"id\":41"));
	assert_non_null(strstr(t, "\"rss_bytes_at_marks\":{\"stage\":104882176}"));
	assert_non_null(strstr(t, "\"verdicts\":[\"run 42's peak is 100.0% higher"));
	assert_null(strstr(t, "\"groups\""));
	buf_release(&b);
}

static void test_compare_groups(void **state)
{
	(void)state;
	/* A: 1000, 1002, 998 MiB; B: 1120, 1118, 1122 MiB: 12% apart, spread 0.2% */
	static const double av[] = { 1000, 1002, 998 }, bv[] = { 1120, 1118, 1122 };
	static const double cv[] = { 1001, 999, 1003 };	/* C: no change from A */
	struct flat f[9];
	struct cmp_run c[9];
	for (int i = 0; i < 3; i++) {
		flat_init(&f[i], 1 + i, av[i]);
		flat_init(&f[3 + i], 4 + i, bv[i]);
		flat_init(&f[6 + i], 7 + i, cv[i]);
	}
	for (int i = 0; i < 9; i++)
		c[i] = cmp_of(&f[i]);
	struct cmp_group g[3] = { { &c[0], 3 }, { &c[3], 3 }, { &c[6], 3 } };
	struct buf b = { 0 };
	compare_text(&b, g, 3, 1);
	const char *t = buf_str(&b);
	assert_non_null(strstr(t, "A (3 runs)"));
	assert_non_null(strstr(t, "A: runs 1, 2, 3; peak "));
	assert_non_null(strstr(t, "B's peak is 12.0% higher than A's, well outside the spread within each group (\xc2\xb1"));
	assert_non_null(strstr(t, "the difference in peak between C and A (0.1%) is within the spread of repeated runs"));
	assert_non_null(strstr(t, "no evidence of a change"));
	buf_reset(&b);
	compare_json(&b, g, 3, 1);
	t = buf_str(&b);
	assert_non_null(strstr(t, "\"groups\":[{\"name\":\"A\",\"runs\":[1,2,3]"));
	assert_non_null(strstr(t, "\"group\":\"B\""));
	assert_non_null(strstr(t, "\"stddev\":"));
	buf_release(&b);
	/* lower, and just outside a wider spread */
	static const double dv[] = { 990, 985, 995 };
	for (int i = 0; i < 3; i++)
		flat_init(&f[3 + i], 4 + i, dv[i]);
	compare_text(&b, g, 2, 1);
	assert_non_null(strstr(buf_str(&b), "B's peak is 1.0% lower than A's, outside the spread"));
	assert_non_null(strstr(buf_str(&b), "more runs would tell"));
	buf_release(&b);
}

/* Runs that are not comparable say so, and say which figures stay fair; no percentage
 * is ever given against a zero base. */
static void test_compare_warnings(void **state)
{
	(void)state;
	struct flat a, z;
	flat_init(&a, 41, 100);
	flat_init(&z, 42, 200);
	a.run.target = "/usr/bin/sort -S 1G";
	z.run.target = "sort -S 2G";
	a.run.mode = z.run.mode = "command";
	a.run.host = z.run.host = "vm";
	a.run.interval_ns = z.run.interval_ns = NS;
	a.run.peak_source = z.run.peak_source = PEAK_FROM_SAMPLE;
	struct cmp_run ca = cmp_of(&a), cz = cmp_of(&z);
	struct cmp_group g[2] = { { &ca, 1 }, { &cz, 1 } };
	struct buf b = { 0 };
	compare_text(&b, g, 2, 0);
	assert_null(strstr(buf_str(&b), "warning:"));	/* the same program and conditions */
	buf_reset(&b);

	z.run.interval_ns = NS / 10;
	z.run.tree = 1;
	z.run.target = "stress-ng --vm 1";
	z.run.host = "other";
	a.run.mem_total = 64ULL << 30;
	z.run.mem_total = 755ULL << 30;
	compare_text(&b, g, 2, 0);
	const char *t = buf_str(&b);
	assert_non_null(strstr(t, "warning: run 42 was sampled every 100ms and run 41 every 1.0s: the mean, "
				  "last and growth depend on the sampling and are not comparable; peaks are "
				  "comparable only where"));
	assert_non_null(strstr(t, "warning: run 42 is a set of processes"));
	assert_non_null(strstr(t, "warning: run 42 ran stress-ng and run 41 sort: different programs"));
	assert_non_null(strstr(t, "warning: run 42 ran on host other and run 41 on vm"));
	assert_non_null(strstr(t, "warning: run 42 had 755.0 GiB of memory (MemTotal) and run 41 64.0 GiB"));
	assert_golden("tests/fixtures/golden/compare-unlike.txt", t);
	buf_reset(&b);
	/* peaks from VmHWM on both sides: the peak row stays fair across intervals */
	a.run.peak_source = PEAK_FROM_HWM;
	z.run.peak_source = PEAK_FROM_EXIT;
	compare_json(&b, g, 2, 0);
	t = buf_str(&b);
	assert_non_null(strstr(t, "\"warnings\":[\"run 42 was sampled every 100ms"));
	assert_non_null(strstr(t, "; the peaks are (each from VmHWM, an exit record"));
	buf_reset(&b);

	/* a zero base: no percentage, "new" instead; a time to peak under one interval: n/a */
	flat_init(&a, 41, 0);
	a.run.peak_rss = 0;
	a.run.peak_rss_at = T0 + NS / 1000;
	for (int i = 0; i < 20; i++)
		a.s[i].mem.rss = 0;
	a.run.interval_ns = NS;
	flat_init(&z, 42, 200);
	z.run.interval_ns = NS;
	ca = cmp_of(&a);
	cz = cmp_of(&z);
	compare_text(&b, g, 2, 0);
	t = buf_str(&b);
	assert_non_null(strstr(t, "+200.0 MiB (new)"));
	assert_non_null(strstr(t, "(n/a)"));
	if (strstr(t, "%)"))
		fail_msg("a percentage against a zero base:\n%s", t);
	assert_non_null(strstr(t, "warning: run 41, the base, has no peak"));
	assert_non_null(strstr(t, "run 42's peak is 200.0 MiB; run 41 has no peak to compare it with."));
	assert_golden("tests/fixtures/golden/compare-zero-base.txt", t);
	buf_reset(&b);
	compare_json(&b, g, 2, 0);
	assert_null(strstr(buf_str(&b), "\"pct\":1"));
	assert_non_null(strstr(buf_str(&b), "\"pct\":null"));
	buf_release(&b);
}

int main(void)
{
	setenv("TZ", "UTC", 1);
	tzset();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compare_figures),
		cmocka_unit_test(test_compare_runs),
		cmocka_unit_test(test_compare_groups),
		cmocka_unit_test(test_compare_warnings),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
