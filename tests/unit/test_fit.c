/* Least squares and the t distribution (base/fit.c) against values computed apart:
 * the fits by exact rational arithmetic on the normal equations (Python fractions),
 * the t quantiles from printed tables. Also run parameters' parsing (store/model.c),
 * and where model RUN puts the peak (model/model.c). */
#include "testutil.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "base/fit.h"
#include "base/util.h"
#include "model/model.h"
#include "store/run.h"

#define near(a, b, tol) assert_true(fabs((a) - (b)) <= (tol))

static void test_simple(void **state)
{
	(void)state;
	const double x[] = { 1, 2, 3, 4, 5 }, y[] = { 2.1, 3.9, 6.2, 7.8, 10.1 };
	const double want_res[] = { 0.06, -0.13, 0.18, -0.21, 0.1 };
	double res[5];
	struct fit f;
	assert_int_equal(fit_ols(x, y, 5, 1, &f, res, NULL), 0);
	assert_int_equal(f.df, 3);
	near(f.beta[0], 0.05, 1e-12);
	near(f.beta[1], 1.99, 1e-12);
	near(f.se[0], 0.1980740602232744, 1e-12);
	near(f.se[1], 0.05972157622389639, 1e-12);
	near(f.r2, 0.9973053289009771, 1e-12);
	for (int i = 0; i < 5; i++)
		near(res[i], want_res[i], 1e-12);
	double x0 = 7, sm, so;
	near(fit_predict(&f, &x0, &sm, &so), 13.98, 1e-12);
	near(sm, 0.2533771891863985, 1e-12);
	near(so, 0.3160168771864355, 1e-12);
}

static void test_two_regressors(void **state)
{
	(void)state;
	const double x[] = { 1, 2, 2, 1, 3, 4, 4, 3, 5, 6, 6, 5, 7, 8 };
	const double y[] = { 5.1, 5.9, 10.2, 10.8, 15.1, 15.8, 20.3 };
	struct fit f;
	assert_int_equal(fit_ols(x, y, 7, 2, &f, NULL, NULL), 0);
	near(f.beta[0], 1.7113095238095237, 1e-10);
	near(f.beta[1], 1.5898809523809523, 1e-10);
	near(f.beta[2], 0.9208333333333333, 1e-10);
	near(f.se[0], 0.07449993912551349, 1e-10);
	near(f.se[1], 0.03748109878912182, 1e-10);
	near(f.se[2], 0.03359274061791062, 1e-10);
	near(f.r2, 0.9998302570691402, 1e-12);
}

/* Peaks in bytes (tens of GiB) against a small count: the QR keeps full precision
 * where the normal equations on raw bytes would lose about half the digits. */
static void test_bytes_scale(void **state)
{
	(void)state;
	const double gib = 1073741824.0;
	double x[4], y[4];
	for (int i = 0; i < 4; i++) {
		x[i] = 9 + i;
		y[i] = 86.2 * gib + 48.3 * gib * x[i];
	}
	struct fit f;
	assert_int_equal(fit_ols(x, y, 4, 1, &f, NULL, NULL), 0);
	near(f.beta[0] / gib, 86.2, 1e-6);
	near(f.beta[1] / gib, 48.3, 1e-6);
	near(f.r2, 1.0, 1e-12);
}

static void test_degenerate(void **state)
{
	(void)state;
	struct fit f;
	size_t bad = 99;
	/* every run at the same parameter value: no slope can be told */
	const double xc[] = { 12, 12, 12, 12 }, y[] = { 1, 2, 3, 4 };
	assert_int_equal(fit_ols(xc, y, 4, 1, &f, NULL, &bad), -EDOM);
	assert_int_equal(bad, 1);
	/* collinear counters: the second is twice the first */
	const double xx[] = { 1, 2, 2, 4, 3, 6, 5, 10, 8, 16 };
	const double y5[] = { 1, 2, 3, 5, 8 };
	bad = 99;
	assert_int_equal(fit_ols(xx, y5, 5, 2, &f, NULL, &bad), -EDOM);
	assert_int_equal(bad, 2);
	/* a regressor that is zero everywhere */
	const double xz[] = { 0, 0, 0 };
	assert_int_equal(fit_ols(xz, y, 3, 1, &f, NULL, &bad), -EDOM);
	/* a single run, and fewer runs than coefficients */
	assert_int_equal(fit_ols(xc, y, 1, 1, &f, NULL, NULL), -EINVAL);
	/* not finite */
	const double xn[] = { 1, NAN, 3 };
	assert_int_equal(fit_ols(xn, y, 3, 1, &f, NULL, NULL), -EINVAL);
}

static void test_exactly_determined(void **state)
{
	(void)state;
	const double x[] = { 1, 3 }, y[] = { 10, 20 };
	struct fit f;
	assert_int_equal(fit_ols(x, y, 2, 1, &f, NULL, NULL), 0);
	assert_int_equal(f.df, 0);
	near(f.beta[1], 5, 1e-12);
	near(f.beta[0], 5, 1e-12);
	assert_true(isnan(f.sigma));
	assert_true(isnan(f.se[1]));
}

static void test_t(void **state)
{
	(void)state;
	/* two-sided 95% factors, from printed t tables */
	near(t_quantile(0.975, 1), 12.706204736, 1e-6);
	near(t_quantile(0.975, 2), 4.302652730, 1e-8);
	near(t_quantile(0.975, 5), 2.570581836, 1e-8);
	near(t_quantile(0.975, 10), 2.228138852, 1e-8);
	near(t_quantile(0.975, 30), 2.042272456, 1e-8);
	near(t_quantile(0.995, 4), 4.604094871, 1e-8);
	near(t_quantile(0.025, 5), -2.570581836, 1e-8);
	near(t_quantile(0.5, 3), 0, 1e-15);
	/* one degree of freedom is the Cauchy distribution: F(1) = 3/4 */
	near(t_cdf(1, 1), 0.75, 1e-12);
	near(t_cdf(0, 7), 0.5, 1e-15);
	near(t_cdf(-2.228138852, 10), 0.025, 1e-9);
	assert_true(isnan(t_quantile(1, 3)));
	assert_true(isnan(t_quantile(0.9, 0)));
}

static void test_params(void **state)
{
	(void)state;
	struct run_param p;
	char err[128];
	assert_int_equal(run_param_parse("pw=12", &p, err, sizeof(err)), 0);
	assert_string_equal(p.key, "pw");
	assert_string_equal(p.value, "12");
	assert_true(p.is_num);
	near(p.num, 12, 0);
	free(p.value);
	assert_int_equal(run_param_parse("build.mode=fast-1", &p, err, sizeof(err)), 0);
	assert_false(p.is_num);
	free(p.value);
	assert_int_equal(run_param_parse("x=-1.5e3", &p, err, sizeof(err)), 0);
	assert_true(p.is_num);
	near(p.num, -1500, 0);
	free(p.value);
	assert_int_equal(run_param_parse("x=a=b", &p, err, sizeof(err)), 0);
	assert_string_equal(p.value, "a=b");
	free(p.value);
	const char *bad[] = { "pw", "=12", "p w=1", "pw=", "pw=a\tb", "pw=a\nb",
			      "pw=\xc2\x85", "pw=\xff", "k\xc3\xa9=1" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(run_param_parse(bad[i], &p, err, sizeof(err)), -EINVAL);
	char key[80], val[300];
	memset(key, 'k', 64);
	memcpy(key + 64, "=1", 3);
	assert_int_equal(run_param_parse(key, &p, err, sizeof(err)), -EINVAL);
	memset(key, 'k', 63);
	memcpy(key + 63, "=1", 3);
	assert_int_equal(run_param_parse(key, &p, err, sizeof(err)), 0);
	free(p.value);
	memcpy(val, "v=", 2);
	memset(val + 2, 'a', 256);
	val[258] = '\0';
	assert_int_equal(run_param_parse(val, &p, err, sizeof(err)), -EINVAL);
	double d;
	const char *notnum[] = { "0x10", "inf", "nan", "1e", ".", "1.2.3", " 1", "1 ", "+", "1e999" };
	for (size_t i = 0; i < sizeof(notnum) / sizeof(notnum[0]); i++)
		assert_false(run_param_number(notnum[i], &d));
	assert_true(run_param_number(".5", &d));
	near(d, 0.5, 0);
	/* matching: text, or numbers by value */
	struct run_param a = { "pw", (char *)"12", 1, 12 }, b = { "pw", (char *)"12.0", 1, 12 };
	struct run_param c = { "pw", (char *)"x", 0, 0 };
	assert_true(run_param_matches(&a, &b));
	assert_false(run_param_matches(&a, &c));
}

/* model RUN's peak: the run's own, between two samples, lands between the marks around
 * its own time, not at the sample after it; a run peak below the highest sample (or
 * none) leaves the highest sample. */
/* stack[FUNC] across runs: its parse, and the bytes of the stacks through FUNC */
static void test_stack_figure(void **state)
{
	(void)state;
	struct model_formula f;
	char err[256];
	assert_int_equal(model_formula_parse(" stack[alloc_buffers] ~ pw", 0, &f, err, sizeof(err)), 0);
	assert_string_equal(f.lhs, "stack[alloc_buffers]");
	assert_string_equal(f.stack, "alloc_buffers");
	assert_int_equal(model_formula_parse("stack[ns::Pool<T>::grow] ~ pw", 0, &f, err, sizeof(err)), 0);
	assert_string_equal(f.stack, "ns::Pool<T>::grow");
	assert_int_equal(model_formula_parse("peak ~ pw", 0, &f, err, sizeof(err)), 0);
	assert_string_equal(f.stack, "");
	assert_int_equal(model_formula_parse("stack[] ~ pw", 0, &f, err, sizeof(err)), -EINVAL);
	assert_int_equal(model_formula_parse("stack[a b] ~ pw", 0, &f, err, sizeof(err)), -EINVAL);
	assert_int_equal(model_formula_parse("stack[a]b] ~ pw", 0, &f, err, sizeof(err)), -EINVAL);
	assert_int_equal(model_formula_parse("stack[a ~ pw", 0, &f, err, sizeof(err)), -EINVAL);
	/* inside a run the figure is rss or anon only */
	assert_int_equal(model_formula_parse("stack[a] ~ counter.x", 1, &f, err, sizeof(err)), -EINVAL);

	char a[] = "__mmap64 (mmap64.c:58)\nalloc_buffers (prog.c:40)\nmain (prog.c:90)";
	char b[] = "__mmap64 (mmap64.c:58)\nalloc_table (prog.c:30)\nmain (prog.c:88)";
	char c[] = "alloc_buffers_x (prog.c:12)\nmain";
	char d[] = "lib.so+0x1234\nalloc_buffers+0x20\nalloc_buffers (prog.c:41)";
	struct stored_stack s[] = { { 1, 300, 3, a }, { 2, 100, 1, b }, { 3, 7, 1, c },
				    { 4, 50, 2, d }, { 5, 9, 1, NULL } };
	/* each stack once, however many of its frames are the function's */
	assert_int_equal(model_stack_bytes(s, 5, "alloc_buffers"), 350);
	assert_int_equal(model_stack_bytes(s, 5, "alloc_table"), 100);
	assert_int_equal(model_stack_bytes(s, 5, "main"), 407);	/* a, b, and c's bare line */
	assert_int_equal(model_stack_bytes(s, 5, "alloc"), 0);	/* names, not prefixes */
	assert_int_equal(model_stack_bytes(s, 5, "prog.c:40"), 0);

	/* a run without stacks is left out, saying why */
	struct run r;
	memset(&r, 0, sizeof(r));
	strlcpy_rsw(r.outcome, OUTCOME_EXITED, sizeof(r.outcome));
	r.samples = 3;
	char two[] = "2";
	struct run_param p = { .key = "pw", .value = two, .is_num = 1, .num = 2 };
	r.params = &p;
	r.nparams = 1;
	assert_int_equal(model_formula_parse("stack[alloc_buffers] ~ pw", 0, &f, err, sizeof(err)), 0);
	double y = 0, x[MODEL_MAX_TERMS], sy = 4096;
	char why[112];
	assert_int_equal(model_run_usable(&r, &f, NULL, &y, x, why, sizeof(why)), 0);
	assert_non_null(strstr(why, "no stacks"));
	assert_int_equal(model_run_usable(&r, &f, &sy, &y, x, why, sizeof(why)), 1);
	assert_true(y == 4096 && x[0] == 2);
}

static void test_counters_peak_between_samples(void **state)
{
	(void)state;
	struct sample s[6];
	double values[6];
	struct mark marks[2] = { { 0 }, { 0 } };
	const int64_t S = 1000000000, start = 100 * S;
	memset(s, 0, sizeof(s));
	for (int i = 0; i < 6; i++) {
		s[i].elapsed_ns = i * S;
		s[i].mem.rss = (uint64_t)(10 + i % 2) << 20;
		values[i] = i % 2;
	}
	s[3].mem.rss = 50 << 20;	/* the highest sample, at 3 s */
	marks[0].t = start + 2 * S + S / 10;	/* "load" at 2.1 s */
	marks[0].label = "load";
	marks[1].t = start + 2 * S + S / 2;	/* "compute" at 2.5 s */
	marks[1].label = "compute";
	struct counter_model m;
	char err[160];
	memset(&m, 0, sizeof(m));
	assert_int_equal(model_formula_parse("rss ~ counter.x", 1, &m.f, err, sizeof(err)), 0);
	/* the exact peak of 200 MiB at 2.3 s, between "load" and "compute" */
	model_counters_fit(&m, s, 6, values, S, marks, 2, start, 200 << 20, 2 * S + 3 * S / 10);
	assert_true(m.peak == 200 << 20 && m.peak_ns == 2 * S + 3 * S / 10);
	assert_string_equal(m.mark_before, "load");
	assert_string_equal(m.mark_after, "compute");
	/* no run peak known, or one below a sample: the sample at 3 s, after both */
	model_counters_fit(&m, s, 6, values, S, marks, 2, start, 0, 0);
	assert_true(m.peak == 50 << 20 && m.peak_ns == 3 * S);
	assert_string_equal(m.mark_before, "compute");
	assert_null(m.mark_after);
	model_counters_fit(&m, s, 6, values, S, marks, 2, start, 40 << 20, 2 * S);
	assert_true(m.peak == 50 << 20 && m.peak_ns == 3 * S);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_simple),
		cmocka_unit_test(test_two_regressors),
		cmocka_unit_test(test_bytes_scale),
		cmocka_unit_test(test_degenerate),
		cmocka_unit_test(test_exactly_determined),
		cmocka_unit_test(test_t),
		cmocka_unit_test(test_params),
		cmocka_unit_test(test_counters_peak_between_samples),
		cmocka_unit_test(test_stack_figure),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
