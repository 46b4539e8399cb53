/* render/counters.c: application counters as series, their units and their text. */
#include "testutil.h"

#include <limits.h>
#include <math.h>
#include <string.h>
#include <time.h>

#include "base/util.h"
#include "render/counters.h"
#include "render/html.h"
#include "render/svg.h"
#include "synth.h"

/* Counters and gauges: units from their names, and a strip each under the chart. */
static void test_counters(void **state)
{
	(void)state;
	char v[48];
	assert_int_equal(counter_unit_of("bytes_held"), COUNTER_BYTES);
	assert_int_equal(counter_unit_of("heap_bytes"), COUNTER_BYTES);
	assert_int_equal(counter_unit_of("stage_seconds"), COUNTER_SECONDS);
	assert_int_equal(counter_unit_of("partitions_in_flight"), COUNTER_PLAIN);
	assert_string_equal(counter_value_text(v, sizeof(v), "bytes_held", 314572800), "300.0 MiB");
	assert_string_equal(counter_value_text(v, sizeof(v), "delta_bytes", -1048576), "-1.0 MiB");
	assert_string_equal(counter_value_text(v, sizeof(v), "stage_seconds", 95), "1m35s");
	assert_string_equal(counter_value_text(v, sizeof(v), "partitions", -3), "-3");
	counter_value_text(v, sizeof(v), "x_bytes", LLONG_MIN);	/* no overflow */

	struct synth *y = xmalloc(sizeof(*y));
	synth_init(y, 5, "", 1.0);
	struct counter_series *cs = NULL;
	size_t ncs = 0;
	for (int i = 0; i < 8; i++) {
		counter_series_add(&cs, &ncs, "bytes_held", (int64_t)i * 10 * NS, (long long)i * 100 * (long long)MIB);
		counter_series_add(&cs, &ncs, "in_flight", (int64_t)i * 10 * NS, i % 3);
	}
	assert_int_equal(ncs, 2);
	assert_int_equal(cs[0].n, 8);
	struct chart_run c = chart_of(y);
	c.counters = cs;
	c.ncounters = ncs;
	struct chart_opts o;
	memset(&o, 0, sizeof(o));
	struct buf b = { 0 }, plain = { 0 };
	struct chart_geom g, gp;
	svg_chart(&b, &c, 1, &o, &g);
	const char *svg = buf_str(&b);
	assert_non_null(strstr(svg, "<g class=\"counters\">"));
	assert_non_null(strstr(svg, ">bytes_held</tspan> max 700.0 MiB, last 700.0 MiB<"));
	assert_non_null(strstr(svg, ">in_flight</tspan> max 2, last 1<"));
	assert_golden("tests/fixtures/golden/svg-counters-bytes.svg", svg);
	/* the picture grows by the panel; the chart itself keeps its place */
	c.ncounters = 0;
	svg_chart(&plain, &c, 1, &o, &gp);
	assert_true(g.height > gp.height + 2 * 50);
	assert_true(fabs(g.y1 - gp.y1) < 0.01);
	/* the report lists them in their units */
	buf_reset(&b);
	c.ncounters = ncs;
	html_report(&b, &c, &o, NULL, NULL);
	assert_non_null(strstr(buf_str(&b), "<h2>Counters and gauges</h2>"));
	assert_non_null(strstr(buf_str(&b), "<td class=\"r\">700.0 MiB</td>"));
	buf_release(&b);
	buf_release(&plain);
	counter_series_free(cs, ncs);
	free(y);
}

int main(void)
{
	setenv("TZ", "UTC", 1);
	tzset();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counters),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
