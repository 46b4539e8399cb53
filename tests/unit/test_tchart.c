/* render/tchart.c: the terminal chart against golden files, its marks and its peak. */
#include "testutil.h"

#include <string.h>

#include "render/tchart.h"

#define GIB (1024ULL * 1024 * 1024)
#define MIB (1024ULL * 1024)

/* The reported peak rises in its column of the terminal chart and takes the '^'; after
 * the last sample (a run that ended later) nothing is drawn. */
static void test_tchart_peak(void **state)
{
	(void)state;
	struct tchart_point pts[1] = { { 0, 4 * MIB } };
	struct tchart_point peak = { 100, 64 * MIB };
	struct buf b = { 0 };
	tchart_render_peak(&b, pts, 1, 100, 32, 2, NULL, 0, &peak);
	const char *t = buf_str(&b);
	assert_non_null(strstr(t, "64.0 MiB"));
	/* the top row: empty from column 1 until the peak's column at the end */
	const char *row = strstr(t, "\xe2\x94\xa4");
	assert_non_null(row);
	row += 3;
	assert_true(strncmp(row, " ", 1) == 0);
	const char *nl = strchr(row, '\n');
	assert_true(nl - row > 20);
	assert_true(strncmp(nl - 3, "\xe2\x96\x88", 3) == 0);	/* a full block at the end */
	/* the axis: '^' in the last column */
	const char *ax = strstr(t, "\xe2\x94\x94");
	assert_non_null(ax);
	const char *axl = strchr(ax, '\n') + 1;
	const char *axe = strchr(axl, '\n');
	assert_int_equal(axe[-1], '^');
	buf_release(&b);

	/* a peak at the start keeps the axis's "0s" beside its '^' */
	struct tchart_point first[2] = { { 0, 64 * MIB }, { 100, 4 * MIB } };
	struct tchart_point at0 = { 0, 64 * MIB };
	tchart_render_peak(&b, first, 2, 100, 32, 2, NULL, 0, &at0);
	ax = strstr(buf_str(&b), "\xe2\x94\x94");
	assert_non_null(ax);
	axl = strchr(ax, '\n') + 1;
	assert_non_null(strstr(axl, "  ^0s "));
	buf_release(&b);
}

/* A ramp up to a peak at 60% of the time, then down: the golden chart shows the ramp,
 * the peak column marked '^' and the axes. */
static void test_tchart_golden(void **state)
{
	(void)state;
	struct tchart_point pts[50];
	for (int i = 0; i < 50; i++) {
		pts[i].t = (int64_t)i * 1000000000LL;
		pts[i].v = (uint64_t)(i <= 30 ? i : 60 - i) * 64 * MIB;
	}
	struct buf b = { 0 };
	tchart_render(&b, pts, 50, 49 * 1000000000LL, 52, 4);
	size_t len;
	char *golden = fixture("tests/fixtures/golden/tchart-ramp.txt", &len);
	assert_string_equal(buf_str(&b), golden);
	free(golden);
	buf_release(&b);
	/* nothing to draw: nothing drawn */
	tchart_render(&b, pts, 0, 0, 80, 4);
	assert_int_equal(b.len, 0);
	tchart_render(&b, pts, 50, 49, 5, 4);
	assert_int_equal(b.len, 0);
}

/* The same ramp with three marks, two of them close together: each letter lands in its
 * column or the nearest free one, in a row under the time axis. */
static void test_tchart_marks_golden(void **state)
{
	(void)state;
	struct tchart_point pts[50];
	for (int i = 0; i < 50; i++) {
		pts[i].t = (int64_t)i * 1000000000LL;
		pts[i].v = (uint64_t)(i <= 30 ? i : 60 - i) * 64 * MIB;
	}
	int64_t marks[] = { 0, 10 * 1000000000LL, 10 * 1000000000LL + 1, 49 * 1000000000LL };
	struct buf b = { 0 };
	tchart_render_marks(&b, pts, 50, 49 * 1000000000LL, 52, 4, marks, 4);
	assert_golden("tests/fixtures/golden/tchart-marks.txt", buf_str(&b));
	/* without marks: exactly the chart of tchart_render */
	struct buf plain = { 0 };
	buf_reset(&b);
	tchart_render_marks(&b, pts, 50, 49 * 1000000000LL, 52, 4, NULL, 0);
	tchart_render(&plain, pts, 50, 49 * 1000000000LL, 52, 4);
	assert_string_equal(buf_str(&b), buf_str(&plain));
	assert_int_equal(tchart_mark_letter(0), 'A');
	assert_int_equal(tchart_mark_letter(26), 'a');
	assert_int_equal(tchart_mark_letter(60), '*');
	buf_release(&b);
	buf_release(&plain);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tchart_peak),
		cmocka_unit_test(test_tchart_golden),
		cmocka_unit_test(test_tchart_marks_golden),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
