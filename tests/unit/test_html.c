/* render/html.c: the report, its process table and a day-long run. */
#include "testutil.h"

#include <math.h>
#include <string.h>
#include <time.h>

#include "base/util.h"
#include "render/html.h"
#include "synth.h"

static void test_html_report(void **state)
{
	(void)state;
	struct synth *y = xmalloc(sizeof(*y));
	synth_init(y, 42, "<script>alert(1)</script>", 1.0);
	struct chart_run c = chart_of(y);
	struct chart_opts o;
	memset(&o, 0, sizeof(o));
	struct buf b = { 0 };
	html_report(&b, &c, &o, NULL, "rsswatch test");
	const char *h = buf_str(&b);
	assert_golden("tests/fixtures/golden/report-run.html", h);
	assert_true(strncmp(h, "<!DOCTYPE html>", 15) == 0);
	assert_non_null(strstr(h, "<svg"));
	assert_non_null(strstr(h, "&lt;script&gt;alert(1)&lt;/script&gt;"));
	assert_non_null(strstr(h, "host&lt;1&gt;"));
	assert_non_null(strstr(h, "&quot;&lt;b&gt;&quot;"));
	assert_non_null(strstr(h, "rss over 250M &amp; rising"));
	/* the only <script> elements are the page's own */
	size_t scripts = 0;
	for (const char *p = h; (p = strstr(p, "<script")); p++)
		scripts++;
	assert_int_equal(scripts, 2);
	/* marks: RSS at each and the change since the previous one */
	assert_non_null(strstr(h, "<td class=\"r\">200.0 MiB</td>"));	/* at 20 s: 5 MiB per 0.5 s */
	assert_non_null(strstr(h, ">+10.0 MiB<"));	/* 20 s -> 21 s */
	assert_non_null(strstr(h, "killed by SIGKILL") || strstr(h, "OOM"));
	/* nothing to fetch */
	assert_null(strstr(h, "src="));
	assert_null(strstr(h, "href="));
	assert_null(strstr(h, "url("));
	assert_null(strstr(h, "https://"));
	buf_release(&b);
	free(y);
}

/* A set's processes and OOM kills: a table of the largest, the rest folded, the kills in
 * their own table; process names are escaped like every other string. */
static void test_html_procs(void **state)
{
	(void)state;
	struct sample s[3];
	memset(s, 0, sizeof(s));
	for (int i = 0; i < 3; i++) {
		s[i].elapsed_ns = (int64_t)i * NS;
		s[i].mem.rss = (uint64_t)(i + 1) * 10 * MIB;
	}
	struct run r;
	memset(&r, 0, sizeof(r));
	r.id = 3;
	r.label = r.host = r.kernel = "x";
	r.target = "make";
	r.mode = "command";
	r.tree = 1;
	r.pid = 100;
	r.started_at = T0;
	r.ended_at = T0 + 3 * NS;
	r.interval_ns = NS;
	r.samples = 3;
	strlcpy_rsw(r.outcome, OUTCOME_EXITED, sizeof(r.outcome));
	r.exit_code = 0;
	r.peak_gpu = -1;
	r.hwm_before = -1;
	r.peak_rss = 30 * MIB;
	r.peak_rss_at = T0 + 2 * NS;
	r.peak_source = PEAK_FROM_SAMPLE;
	r.peak_process_rss = 25 * MIB;
	r.peak_process_pid = 101;
	r.peak_process_comm = "<b>cc1</b>";
	r.oom_kills = 1;
	struct proc_summary p[HTML_TOP_PROCS + 2];
	memset(p, 0, sizeof(p));
	for (size_t i = 0; i < ARRAY_SIZE(p); i++) {
		p[i].pid = 101 + (pid_t)i;
		p[i].ppid = 100;
		snprintf(p[i].comm, sizeof(p[i].comm), i ? "cc%zu" : "<b>cc1</b>", i);
		p[i].first_ns = (int64_t)i * 1000000;
		p[i].end_ns = -1;
		p[i].peak_rss = (ARRAY_SIZE(p) - i) * MIB;
		strlcpy_rsw(p[i].peak_source, i ? PEAK_FROM_SAMPLE : PEAK_FROM_EXIT, sizeof(p[i].peak_source));
		p[i].hwm_before = -1;
		strlcpy_rsw(p[i].ended, PROC_EXITED, sizeof(p[i].ended));
		p[i].signal = -1;
		p[i].cpu_user_ns = p[i].cpu_sys_ns = p[i].minflt = p[i].majflt = -1;
		p[i].read_bytes = p[i].write_bytes = -1;
	}
	p[0].cpu_user_ns = 2500000000LL;
	p[0].cpu_sys_ns = 500000000LL;
	p[0].majflt = 12;
	p[0].minflt = 3456;
	p[0].read_bytes = 1 * MIB;
	struct oom_kill k;
	memset(&k, 0, sizeof(k));
	k.t = T0 + NS;
	k.pid = 4242;
	strlcpy_rsw(k.comm, "a&b", sizeof(k.comm));
	k.anon_rss = 5 * MIB;
	struct chart_run c;
	memset(&c, 0, sizeof(c));
	c.run = &r;
	c.s = s;
	c.n = 3;
	struct chart_opts o;
	memset(&o, 0, sizeof(o));
	struct html_procs hp = { p, ARRAY_SIZE(p), &k, 1, NULL, NULL, NULL, 0, NULL, 0 };
	struct buf b = { 0 };
	html_report(&b, &c, &o, &hp, NULL);
	const char *h = buf_str(&b);
	assert_null(strstr(h, "<b>cc1"));
	assert_non_null(strstr(h, "<div class=\"k\">Largest process</div><div class=\"v\">25.0 MiB</div>"
				  "<div class=\"n\">&lt;b&gt;cc1&lt;/b&gt; (pid 101)</div>"));
	assert_non_null(strstr(h, "<h2>Processes <span class=\"none\">(22, largest peak first)</span></h2>"));
	assert_non_null(strstr(h, "<tr><td class=\"r\">101</td><td class=\"l\">&lt;b&gt;cc1&lt;/b&gt;</td>"
				  "<td class=\"r\">+0ms</td><td class=\"r\">-</td><td class=\"r\">22.0 MiB"
				  "<span class=\"ex\">*</span></td><td class=\"r\">3.00</td><td class=\"r\">12</td>"
				  "<td class=\"r\">3456</td><td class=\"r\">1.0 MiB</td><td class=\"r\">-</td>"
				  "<td>exited 0</td></tr>"));
	/* a process whose context is not known: dashes, not zeros */
	assert_non_null(strstr(h, "<td class=\"l\">cc1</td><td class=\"r\">+1ms</td><td class=\"r\">-</td>"
				  "<td class=\"r\">21.0 MiB<span class=\"ex\">&#160;</span></td><td class=\"r\">-</td>"
				  "<td class=\"r\">-</td><td class=\"r\">-</td><td class=\"r\">-</td><td class=\"r\">-</td>"
				  "<td>exited 0</td></tr>"));
	assert_non_null(strstr(h, "<p class=\"legend\">CPU s: user and system time"));
	/* their peaks are not added up: they need not have coexisted */
	assert_non_null(strstr(h, "<details><summary>2 more processes: the largest of them peaked at "
				  "2.0 MiB (2 exited 0)</summary>"));
	assert_null(strstr(h, "all together"));
	assert_non_null(strstr(h, "<td class=\"l\">cc21</td>"));
	assert_non_null(strstr(h, "exact peak (exit record, wait4 or OOM report)"));
	assert_non_null(strstr(h, "<h2>OOM kills</h2>"));
	assert_non_null(strstr(h, "<td>+1.0s</td><td class=\"r\">4242</td><td class=\"l\">a&amp;b</td>"
				  "<td class=\"r\">5.0 MiB</td>"));
	assert_non_null(strstr(h, "<div class=\"k\">OOM kills</div><div class=\"v\">1</div>"
				  "<div class=\"n\">1 process OOM-killed: a&amp;b (pid 4242) at +1.0s, "
				  "anon-rss 5.0 MiB</div>"));
	assert_non_null(strstr(h, "sampled only (not exact)"));
	assert_non_null(strstr(h, "at +2.0s, from a sample"));
	buf_release(&b);
}

/* A day at 1 s: the report stays small because the chart is downsampled. */
static void test_html_day(void **state)
{
	(void)state;
	size_t n = 86400;
	struct sample *s = xcalloc(n, sizeof(*s));
	struct run r;
	memset(&r, 0, sizeof(r));
	r.id = 1;
	r.label = r.host = r.kernel = r.target = r.mode = "x";
	r.started_at = T0;
	r.ended_at = T0 + (int64_t)n * NS;
	r.interval_ns = NS;
	r.samples = (int64_t)n;
	strlcpy_rsw(r.outcome, OUTCOME_EXITED, sizeof(r.outcome));
	r.peak_gpu = -1;
	for (size_t i = 0; i < n; i++) {
		s[i].elapsed_ns = (int64_t)i * NS;
		s[i].mem.rss = (uint64_t)((2.0 + sin((double)i / 3000) + (double)(i % 13) / 50) * 1024 * MIB);
		s[i].mem.anon = s[i].mem.rss / 4 * 3;
		s[i].mem.file = s[i].mem.rss / 4;
		s[i].mem.hwm = s[i].mem.rss;
		if (s[i].mem.rss > r.peak_rss) {
			r.peak_rss = s[i].mem.rss;
			r.peak_rss_at = T0 + s[i].elapsed_ns;
		}
	}
	struct chart_run c;
	memset(&c, 0, sizeof(c));
	c.run = &r;
	c.s = s;
	c.n = n;
	struct chart_opts o;
	memset(&o, 0, sizeof(o));
	struct buf b = { 0 };
	html_report(&b, &c, &o, NULL, NULL);
	print_message("HTML report of a day at 1 s (86400 samples): %zu bytes\n", b.len);
	assert_true(b.len < 400 * 1024);
	buf_release(&b);
	free(s);
}

int main(void)
{
	setenv("TZ", "UTC", 1);
	tzset();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_html_report),
		cmocka_unit_test(test_html_procs),
		cmocka_unit_test(test_html_day),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
