/* render/stack.c: memory by process, stacked, in the chart and the report. */
#include "testutil.h"

#include <string.h>
#include <time.h>

#include "base/util.h"
#include "render/html.h"
#include "render/stack.h"
#include "render/svg.h"
#include "synth.h"

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* A set's memory by process: 12 members ranked by peak, the 8 largest a layer each and
 * the rest summed as others; names escaped in the legend; the same chart in the report. */
static void test_by_process(void **state)
{
	(void)state;
	struct proc_stack st;
	memset(&st, 0, sizeof(st));
	for (int t = 0; t < 5; t++)
		for (int p = 1; p <= 12; p++) {
			struct proc_figures f;
			memset(&f, 0, sizeof(f));
			f.pid = 100 + p;
			/* member p holds p * 10 MiB, 101 only until it leaves at the last time */
			f.mem.rss = (uint64_t)p * 10 * MIB;
			f.gone = p == 1 && t == 4;
			snprintf(f.comm, sizeof(f.comm), p == 12 ? "<b>evil</b>&" : "w%d", p);
			assert_int_equal(proc_stack_add(&st, (int64_t)t * 30 * NS, &f), 0);
		}
	proc_stack_finish(&st, 8);
	assert_int_equal(st.nt, 5);
	assert_int_equal(st.nlayers, 9);
	assert_int_equal(st.others, 4);
	assert_int_equal(st.layers[0].pid, 112);
	assert_string_equal(st.layers[0].comm, "<b>evil</b>&");
	assert_int_equal(st.layers[0].peak, 120 * MIB);
	assert_int_equal(st.layers[7].pid, 105);
	assert_int_equal(st.layers[8].pid, 0);
	assert_int_equal(st.v[0 * 9 + 8], (1 + 2 + 3 + 4) * 10 * MIB);
	assert_int_equal(st.v[4 * 9 + 8], (2 + 3 + 4) * 10 * MIB);
	assert_int_equal(st.v[2 * 9 + 0], 120 * MIB);
	assert_int_equal(st.t[4], 120 * NS);

	struct synth *y = xmalloc(sizeof(*y));
	synth_init(y, 7, "", 1.0);
	y->run.tree = 1;
	struct chart_run c = chart_of(y);
	c.stack = &st;
	struct chart_opts o;
	memset(&o, 0, sizeof(o));
	struct buf b = { 0 };
	struct chart_geom g;
	svg_chart(&b, &c, 1, &o, &g);
	const char *svg = buf_str(&b);
	assert_non_null(strstr(svg, "<g class=\"by-process\">"));
	assert_golden("tests/fixtures/golden/svg-by-process.svg", svg);
	assert_int_equal(count(svg, "</title></path>"), 9);
	assert_non_null(strstr(svg, "<title>w5 (pid 105)</title></path>"));
	assert_non_null(strstr(svg, ">&lt;b&gt;evil&lt;/b&gt;&amp; (112)</text>"));
	assert_null(strstr(svg, "<b>evil"));
	assert_non_null(strstr(svg, ">4 other processes</text>"));
	assert_null(strstr(svg, ">anon</text>"));
	/* the stack's top stays inside the plot: the chart's top is above 780 MiB */
	assert_true(g.vmax >= 780.0 * MIB);
	buf_reset(&b);
	struct html_procs hp;
	memset(&hp, 0, sizeof(hp));
	hp.stack = &st;
	c.stack = NULL;	/* the report's own chart stays as plot draws it */
	html_report(&b, &c, &o, &hp, NULL);
	assert_non_null(strstr(buf_str(&b), "<h2>Memory by process</h2>"));
	assert_int_equal(count(buf_str(&b), "<g class=\"by-process\">"), 1);
	assert_null(strstr(buf_str(&b), "<b>evil"));
	buf_release(&b);
	proc_stack_release(&st);

	/* fewer members than layers: no others */
	memset(&st, 0, sizeof(st));
	struct proc_figures f;
	memset(&f, 0, sizeof(f));
	f.pid = 7;
	f.mem.rss = MIB;
	proc_stack_add(&st, 0, &f);
	proc_stack_finish(&st, 8);
	assert_int_equal(st.nlayers, 1);
	assert_int_equal(st.others, 0);
	proc_stack_release(&st);
	free(y);
}

int main(void)
{
	setenv("TZ", "UTC", 1);
	tzset();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_by_process),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
