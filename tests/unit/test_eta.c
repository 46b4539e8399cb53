/* Time to exhaustion (record/eta.c): the Theil-Sen slope and Mann-Kendall statistic
 * against values worked out by hand and against a sort-based reference, robustness to
 * one bad sample, and projections over synthetic recordings whose answer is known. */
#include "testutil.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "record/eta.h"

#define near(a, b, tol) assert_true(fabs((a) - (b)) <= (tol))
#define MIB (1024.0 * 1024.0)

/* Pairs at least 4 apart: slopes 1 (six times), 100/7, 99/6, 98/5, 97/4: median
 * (1 + 1) / 2 = 1, whatever the outlier; every pair rises: S = 28, sd = sqrt(8*7*21/18),
 * z = 27 / sd = 3.34: rising, at exactly ETA_MIN_POINTS points. */
static void test_hand_outlier(void **state)
{
	(void)state;
	const double t[] = { 0, 1, 2, 3, 4, 5, 6, 7 }, y[] = { 0, 1, 2, 3, 4, 5, 6, 100 };
	struct eta_trend tr;
	assert_int_equal(eta_trend_fit(t, y, 8, &tr), 0);
	near(tr.slope, 1, 1e-12);
	near(tr.z, 27 / sqrt(8.0 * 7 * 21 / 18), 1e-12);
	assert_int_equal(tr.n, 8);
	assert_true(tr.rising);
	/* one point fewer: too few to say */
	assert_int_equal(eta_trend_fit(t, y, 7, &tr), 0);
	assert_false(tr.rising);
}

/* Pairs at least 2 apart: slopes 0.5, 5/3, 1.5: median 1.5 (an even count below);
 * S = 5 - 1 = 4. */
static void test_hand_small(void **state)
{
	(void)state;
	const double t[] = { 0, 1, 2, 3 }, y[] = { 0, 2, 1, 5 };
	struct eta_trend tr;
	assert_int_equal(eta_trend_fit(t, y, 4, &tr), 0);
	near(tr.slope, 1.5, 1e-12);
	near(tr.z, 3 / sqrt(4.0 * 3 * 13 / 18), 1e-12);
	/* 6 points, pairs 3 apart: (0,3) 3, (0,4) 2.5, (0,5) 1.6, (1,4) 8/3, (1,5) 1.5,
	 * (2,5) 7/3: median (7/3 + 2.5) / 2 */
	const double t6[] = { 0, 1, 2, 3, 4, 5 }, y6[] = { 0, 2, 1, 9, 10, 8 };
	assert_int_equal(eta_trend_fit(t6, y6, 6, &tr), 0);
	near(tr.slope, (7.0 / 3 + 2.5) / 2, 1e-12);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The selection against a full sort, on random points with many ties. */
static void test_against_sort(void **state)
{
	(void)state;
	static double slopes[ETA_POINTS * ETA_POINTS];
	double t[ETA_POINTS], y[ETA_POINTS];
	unsigned seed = 12345;
	for (int round = 0; round < 400; round++) {
		size_t n = 2 + (size_t)(round % (ETA_POINTS - 1));
		for (size_t i = 0; i < n; i++) {
			seed = seed * 1103515245 + 12345;
			t[i] = (double)i + (double)((seed >> 16) % 3) * 0.25;
			seed = seed * 1103515245 + 12345;
			y[i] = (double)((seed >> 16) % (round % 2 ? 5 : 1000));
		}
		size_t m = 0;
		long s = 0;
		for (size_t i = 0; i < n; i++)
			for (size_t j = i + 1; j < n; j++) {
				s += (y[j] > y[i]) - (y[j] < y[i]);
				if (j - i >= n / 2)
					slopes[m++] = (y[j] - y[i]) / (t[j] - t[i]);
			}
		qsort(slopes, m, sizeof(double), cmp_double);
		double want = m % 2 ? slopes[m / 2] : (slopes[m / 2 - 1] + slopes[m / 2]) / 2;
		struct eta_trend tr;
		assert_int_equal(eta_trend_fit(t, y, n, &tr), 0);
		near(tr.slope, want, 1e-9);
		double sd = sqrt((double)n * (double)(n - 1) * (2.0 * (double)n + 5) / 18);
		double z = s > 0 ? ((double)s - 1) / sd : s < 0 ? ((double)s + 1) / sd : 0;
		near(tr.z, z, 1e-12);
	}
}

/* The window's S, kept up to date as points come and go, and its trend are those of a
 * fit of the points from scratch. */
static void test_incremental(void **state)
{
	(void)state;
	struct eta_state e;
	struct eta_projection p;
	unsigned seed = 99;
	int rose = 0, flat = 0;
	eta_init(&e, 1000000000LL);
	for (int k = 0; k < 300; k++) {
		seed = seed * 1103515245 + 12345;
		struct sample s;
		memset(&s, 0, sizeof(s));
		s.elapsed_ns = (int64_t)k * 1000000000LL;
		/* noise, rising for a while, then flat, then rising again */
		uint64_t trend = k < 100 ? (uint64_t)k * 1000 : k < 200 ? 100000
								: 100000 + (uint64_t)(k - 200) * 3000;
		s.mem.rss = (uint64_t)((seed >> 16) % 50) * 4096 + trend;
		s.mem_available = 1ULL << 30;
		eta_add(&e, &s, &p);
		if (e.host.n < 2)
			continue;
		struct eta_trend tr;
		assert_int_equal(eta_trend_fit(e.host.t, e.host.y, e.host.n, &tr), 0);
		near(e.host.trend.z, tr.z, 1e-12);
		assert_int_equal(e.host.trend.rising, tr.rising);
		if (tr.rising) {
			near(e.host.trend.slope, tr.slope, 0);
			rose++;
		} else {
			near(e.host.trend.slope, 0, 0);	/* not fitted */
			flat++;
		}
	}
	assert_int_equal(e.host.n, ETA_POINTS);
	assert_true(rose > 10 && flat > 10);	/* both cases were seen */
}

static void test_bad_input(void **state)
{
	(void)state;
	const double t[] = { 0, 1, 2 }, y[] = { 0, NAN, 2 }, same[] = { 1, 1, 1 };
	double big[ETA_POINTS + 1] = { 0 };
	struct eta_trend tr = { 42, 0, 0, 0 };
	assert_int_equal(eta_trend_fit(t, y, 1, &tr), -EINVAL);
	assert_int_equal(eta_trend_fit(t, y, 3, &tr), -EINVAL);
	assert_int_equal(eta_trend_fit(same, t, 3, &tr), -EINVAL);	/* no time between them */
	assert_int_equal(eta_trend_fit(big, big, ETA_POINTS + 1, &tr), -EINVAL);
	near(tr.slope, 42, 0);	/* untouched */
}

static void test_median3(void **state)
{
	(void)state;
	const double p[6][3] = { { 1, 2, 3 }, { 1, 3, 2 }, { 2, 1, 3 },
				 { 2, 3, 1 }, { 3, 1, 2 }, { 3, 2, 1 } };
	for (int i = 0; i < 6; i++)
		near(eta_median3(p[i][0], p[i][1], p[i][2]), 2, 0);
	near(eta_median3(5, 5, 1), 5, 0);
}

/* A sample of a process in a cgroup limited to limit_mib, using use_mib, on a host
 * with avail_mib available. */
static struct sample at(double sec, double use_mib, double limit_mib, double avail_mib)
{
	struct sample s;
	memset(&s, 0, sizeof(s));
	s.elapsed_ns = (int64_t)(sec * 1e9 + 0.5);
	s.mem.rss = (uint64_t)(use_mib * MIB);
	s.cgroup = s.mem.rss;
	s.have = limit_mib > 0 ? SAMPLE_CGROUP : 0;
	s.cgroup_limit = limit_mib > 0 ? (uint64_t)(limit_mib * MIB) : 0;
	s.mem_available = (uint64_t)(avail_mib * MIB);
	return s;
}

/* Steady growth of 4 MiB/s from 2 MiB toward 64 MiB, sampled every 100 ms: the limit
 * is reached at 15.5 s; every projection, once made, is right within a sample or so
 * (the headroom is the median of the last three samples: one interval behind). */
static void test_steady_growth(void **state)
{
	(void)state;
	struct eta_state e;
	struct eta_projection p;
	eta_init(&e, 100 * 1000000LL);
	int first = -1;
	for (int k = 0; k < 150; k++) {
		double sec = k * 0.1;
		struct sample s = at(sec, 2 + 4 * sec, 64, 20000);
		eta_add(&e, &s, &p);
		if (!p.have)
			continue;
		if (first < 0)
			first = k;
		assert_int_equal(p.limit, ETA_CGROUP);
		near(p.rate, 4 * MIB, 0.001 * MIB);
		near(p.eta_s, 15.5 - sec, 0.11);
		assert_int_equal(p.limit_bytes, (uint64_t)(64 * MIB));
	}
	/* ETA_MIN_POINTS points of 470 ms: a projection from about 4 s on, not before */
	assert_true(first >= 35 && first <= 45);
}

/* One sample far off, either way, does not take a projection away nor move it much. */
static void test_one_bad_sample(void **state)
{
	(void)state;
	for (int way = 0; way < 2; way++) {
		struct eta_state e;
		struct eta_projection p;
		eta_init(&e, 100 * 1000000LL);
		for (int k = 0; k < 120; k++) {
			double sec = k * 0.1, use = 2 + 4 * sec;
			if (k == 100)
				use = way ? 63.9 : 0;	/* a glitch to the limit, or to nothing */
			struct sample s = at(sec, use, 64, 20000);
			eta_add(&e, &s, &p);
			if (k >= 100) {
				assert_true(p.have);
				near(p.eta_s, 15.5 - sec, 0.6);
			}
		}
	}
}

/* Flat memory with noise, and memory falling: no projection. */
static void test_not_rising(void **state)
{
	(void)state;
	struct eta_state e;
	struct eta_projection p;
	unsigned seed = 7;
	eta_init(&e, 100 * 1000000LL);
	for (int k = 0; k < 3000; k++) {
		seed = seed * 1103515245 + 12345;
		double noise = (double)((seed >> 16) % 1000) / 1000.0;	/* 0..1 MiB */
		struct sample s = at(k * 0.1, 30 + noise, 64, 20000);
		eta_add(&e, &s, &p);
		assert_false(p.have);
	}
	eta_init(&e, 100 * 1000000LL);
	for (int k = 0; k < 300; k++) {
		struct sample s = at(k * 0.1, 60 - 0.1 * k, 64, 20000);
		eta_add(&e, &s, &p);
		assert_false(p.have);
	}
	assert_true(e.cg.trend.z < -ETA_MIN_Z);
}

/* The nearest limit wins; without a cgroup limit, MemAvailable against the RSS slope. */
static void test_nearest_limit(void **state)
{
	(void)state;
	struct eta_state e;
	struct eta_projection p;
	/* 1 MiB/s; the cgroup has 50 MiB left, the host 10 MiB: the host is nearer */
	eta_init(&e, 1000000000LL);
	for (int k = 0; k < 20; k++) {
		struct sample s = at(k, 10 + k, 60 + k, 10);
		eta_add(&e, &s, &p);
	}
	assert_true(p.have);
	assert_int_equal(p.limit, ETA_HOST);
	near(p.eta_s, 10, 1e-6);
	assert_int_equal(p.headroom, (uint64_t)(10 * MIB));
	/* no cgroup limit (unlimited): the host alone (50 s ahead: within the horizon
	 * of a rise seen for 19 s) */
	eta_init(&e, 1000000000LL);
	for (int k = 0; k < 20; k++) {
		struct sample s = at(k, 10 + 2 * k, 0, 100);
		s.have = SAMPLE_CGROUP;
		s.cgroup_limit = UINT64_MAX;
		eta_add(&e, &s, &p);
	}
	assert_true(p.have);
	assert_int_equal(p.limit, ETA_HOST);
	near(p.eta_s, 50, 1e-6);
	assert_string_equal(eta_limit_key(p.limit), "host");
	assert_string_equal(eta_limit_name(ETA_CGROUP), "cgroup limit");
}

/* Sampling every second (slower than a point's 470 ms): one sample a point, and the
 * window is the last ETA_POINTS samples. */
static void test_slow_sampling(void **state)
{
	(void)state;
	struct eta_state e;
	struct eta_projection p;
	eta_init(&e, 1000000000LL);
	for (int k = 0; k < 200; k++) {
		/* flat for 100 s, then 1 MiB/s: the old flat part leaves the window */
		double use = k < 100 ? 10 : 10 + (k - 100);
		struct sample s = at(k, use, 200, 20000);
		eta_add(&e, &s, &p);
	}
	assert_int_equal(e.cg.n, ETA_POINTS);
	assert_true(p.have);
	near(p.rate, MIB, 1e-6 * MIB);
	near(p.eta_s, 200 - 109, 1.01);
}

/* xz -6 on a big host: grows to 95 MiB in its first 3 s, then stays there, with
 * 23 GiB available; sampled every second and every 100 ms. The window rises as a whole
 * for a while after the plateau begins, but the rise stopped: no projection, ever. */
static void test_plateau(void **state)
{
	(void)state;
	const int64_t every[] = { 1000000000LL, 100000000LL };
	for (int w = 0; w < 2; w++) {
		struct eta_state e;
		struct eta_projection p;
		double dt = (double)every[w] / 1e9;
		eta_init(&e, every[w]);
		for (int k = 0; k * dt < 300; k++) {
			double sec = k * dt, use = sec < 3 ? 2 + 31 * sec : 95;
			struct sample s = at(sec, use, 0, 23 * 1024.0 - use);
			eta_add(&e, &s, &p);
			assert_false(p.have);
		}
	}
}

/* A program that grew once (30 MiB to 130 MiB between two samples, 40 s in) and
 * stopped, with 20 GiB available, sampled every second; and the same under a cgroup
 * limit of 8 GiB: nothing to warn about. */
static void test_one_step(void **state)
{
	(void)state;
	for (int lim = 0; lim < 2; lim++) {
		struct eta_state e;
		struct eta_projection p;
		eta_init(&e, 1000000000LL);
		for (int k = 0; k < 400; k++) {
			double use = k < 40 ? 30 : 130;
			struct sample s = at(k, use, lim ? 8192 : 0, 20480 - use);
			eta_add(&e, &s, &p);
			assert_false(p.have);
		}
	}
}

/* A real leak: 1 MiB/s, steady, toward the host's 2 GiB available, sampled every
 * second. The horizon grows with the rise: once it has held long enough the leak is
 * projected, and every projection made is right (the headroom is the median of the
 * last three samples: a second behind). */
static void test_steady_leak(void **state)
{
	(void)state;
	struct eta_state e;
	struct eta_projection p;
	eta_init(&e, 1000000000LL);
	int first = -1;
	for (int k = 0; k < 2000; k++) {
		double use = 100 + k;
		struct sample s = at(k, use, 0, 2048 - k);
		eta_add(&e, &s, &p);
		if (!p.have)
			continue;
		if (first < 0)
			first = k;
		assert_int_equal(p.limit, ETA_HOST);
		near(p.rate, MIB, 1e-6 * MIB);
		near(p.eta_s, 2048 - k, 1.01);
	}
	/* full at 2048 s; projected once it had held a quarter of what is left:
	 * k >= (2048 - k) / 4 */
	assert_true(first >= 400 && first <= 420);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hand_outlier),
		cmocka_unit_test(test_hand_small),
		cmocka_unit_test(test_incremental),
		cmocka_unit_test(test_against_sort),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_median3),
		cmocka_unit_test(test_steady_growth),
		cmocka_unit_test(test_one_bad_sample),
		cmocka_unit_test(test_not_rising),
		cmocka_unit_test(test_nearest_limit),
		cmocka_unit_test(test_slow_sampling),
		cmocka_unit_test(test_plateau),
		cmocka_unit_test(test_one_step),
		cmocka_unit_test(test_steady_leak),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
