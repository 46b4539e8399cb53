/* Seeing and comparing runs: escaping, the SVG chart (against a golden file), its
 * downsampling, the HTML report, and comparisons of synthetic runs with known
 * differences, including none. */
#include "testutil.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <string.h>
#include <time.h>

#include "base/util.h"
#include "render/compare.h"
#include "render/html.h"
#include "render/png.h"
#include "render/svg.h"
#include "render/xml.h"

#define MIB (1024ULL * 1024)
#define NS 1000000000LL
#define T0 (1795919059LL * NS)

static void test_xml_escape(void **state)
{
	(void)state;
	struct buf b = { 0 };
	xml_text(&b, "<script>alert(1)</script>");
	assert_string_equal(buf_str(&b), "&lt;script&gt;alert(1)&lt;/script&gt;");
	buf_reset(&b);
	xml_text(&b, "a & b \"c\" 'd'");
	assert_string_equal(buf_str(&b), "a &amp; b &quot;c&quot; &#39;d&#39;");
	buf_reset(&b);
	/* control bytes and invalid UTF-8 become U+FFFD; valid UTF-8, tab and newline stay */
	xml_text(&b, "x\x01y\xff\xc0\xafz \xc3\xa9\xe2\x82\xac\t\n");
	assert_string_equal(buf_str(&b), "x\xef\xbf\xbdy\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdz \xc3\xa9\xe2\x82\xac\t\n");
	buf_reset(&b);
	xml_text(&b, NULL);
	assert_int_equal(b.len, 0);
	/* truncation counts characters and cuts at a boundary, ellipsis included */
	xml_text_trunc(&b, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9<>", 4);
	assert_string_equal(buf_str(&b), "\xc3\xa9\xc3\xa9\xc3\xa9\xe2\x80\xa6");
	buf_reset(&b);
	xml_text_trunc(&b, "a<b", 3);
	assert_string_equal(buf_str(&b), "a&lt;b");
	assert_int_equal(utf8_chars("\xc3\xa9t\xe2\x82\xac\xff"), 4);
	buf_release(&b);
}

/* A synthetic run: a ramp to 600 MiB at 60 s, a spike, a fall, GPU and cgroup figures,
 * two marks (one label trying to inject a script) and two events. */
struct synth {
	struct run run;
	struct sample s[241];
	struct mark marks[3];
	struct event events[2];
};

static void synth_init(struct synth *y, int64_t id, const char *label, double scale)
{
	memset(y, 0, sizeof(*y));
	y->run.id = id;
	y->run.label = (char *)label;
	y->run.host = "host<1>";
	y->run.kernel = "6.18";
	y->run.target = "./bench --pw 12 \"<b>\"";
	y->run.mode = "command";
	y->run.pid = 4242;
	y->run.started_at = T0;
	y->run.ended_at = T0 + 120 * NS;
	y->run.interval_ns = NS / 2;
	y->run.samples = 241;
	strlcpy_rsw(y->run.outcome, OUTCOME_OOM_KILLED, sizeof(y->run.outcome));
	y->run.exit_code = -1;
	y->run.signal = 9;
	y->run.peak_gpu = -1;
	uint64_t peak = 0;
	double sum = 0;
	for (int i = 0; i <= 240; i++) {
		struct sample *s = &y->s[i];
		s->elapsed_ns = (int64_t)i * NS / 2;
		double mib = i <= 120 ? 5.0 * i : 600 - 2.0 * (i - 120);
		if (i == 150)
			mib = 900;	/* a one-sample spike */
		s->mem.rss = (uint64_t)(mib * scale * MIB);
		s->mem.anon = s->mem.rss / 10 * 8;
		s->mem.file = s->mem.rss / 10 * 1;
		s->mem.shmem = s->mem.rss - s->mem.anon - s->mem.file;
		s->mem.hwm = s->mem.rss > peak ? s->mem.rss : peak;
		s->have = SAMPLE_GPU | SAMPLE_CGROUP;
		s->gpu = (uint64_t)i * 2 * MIB;
		s->cgroup = s->mem.rss + 40 * MIB;
		if (s->mem.rss > peak) {
			peak = s->mem.rss;
			y->run.peak_rss_at = T0 + s->elapsed_ns;
		}
		sum += (double)s->mem.rss;
	}
	y->run.peak_rss = peak;
	y->run.sum_rss = sum;
	y->run.last_rss = y->s[240].mem.rss;
	y->run.peak_gpu = 480 * (int64_t)MIB;
	y->marks[0].t = T0 + 20 * NS;
	y->marks[0].label = "synthesis done";
	y->marks[1].t = T0 + 21 * NS;
	y->marks[1].label = "<script>alert(1)</script>";
	y->marks[2].t = T0 + 100 * NS;
	y->marks[2].label = "proving done";
	strlcpy_rsw(y->events[0].kind, "warn", sizeof(y->events[0].kind));
	y->events[0].t = T0 + 50 * NS;
	y->events[0].detail = "rss over 250M & rising";
	strlcpy_rsw(y->events[1].kind, "oom_kill", sizeof(y->events[1].kind));
	y->events[1].t = T0 + 120 * NS;
	y->events[1].pid = 4242;
	y->events[1].detail = "Killed process 4242 (bench)";
}

static struct chart_run chart_of(struct synth *y)
{
	struct chart_run c;
	memset(&c, 0, sizeof(c));
	c.run = &y->run;
	c.s = y->s;
	c.n = 241;
	c.marks = y->marks;
	c.nmarks = 3;
	c.events = y->events;
	c.nevents = 2;
	return c;
}

static void test_svg_golden(void **state)
{
	(void)state;
	struct synth *y = xmalloc(sizeof(*y));
	synth_init(y, 42, "pw=12 <after fix>", 1.0);
	struct chart_run c = chart_of(y);
	struct chart_opts o;
	memset(&o, 0, sizeof(o));
	o.title = "run 42 \"pw=12\" <after fix>";
	struct buf b = { 0 };
	struct chart_geom g;
	svg_chart(&b, &c, 1, &o, &g);
	const char *svg = buf_str(&b);
	assert_golden("tests/fixtures/golden/svg-run.svg", svg);
	/* user strings only escaped */
	assert_null(strstr(svg, "<script"));
	assert_null(strstr(svg, "<after"));
	assert_non_null(strstr(svg, "&lt;script&gt;alert(1)&lt;/script&gt;"));
	/* the parts a reader needs */
	assert_non_null(strstr(svg, ">peak 900.0 MiB<"));
	assert_non_null(strstr(svg, ">GPU<"));
	assert_non_null(strstr(svg, ">cgroup (charged)<"));
	assert_non_null(strstr(svg, ">OOM kill<"));
	assert_non_null(strstr(svg, ">1m<"));
	assert_non_null(strstr(svg, ">800 MiB<"));
	assert_true(g.x0 > 0 && g.x1 > g.x0 && g.y1 > g.y0 && g.vmax >= 900.0 * MIB);
	buf_release(&b);
	free(y);
}

static void test_svg_overlay(void **state)
{
	(void)state;
	struct synth *a = xmalloc(sizeof(*a)), *z = xmalloc(sizeof(*z));
	synth_init(a, 1, "", 1.0);
	synth_init(z, 2, "bigger", 1.5);
	struct chart_run c[2] = { chart_of(a), chart_of(z) };
	c[1].shift_ns = 10 * NS;	/* aligned 10 s earlier */
	struct chart_opts o;
	memset(&o, 0, sizeof(o));
	struct buf b = { 0 };
	struct chart_geom g;
	svg_chart(&b, c, 2, &o, &g);
	const char *svg = buf_str(&b);
	assert_golden("tests/fixtures/golden/svg-overlay.svg", svg);
	/* each run named with its reported peak */
	assert_non_null(strstr(svg, ">run 1 (peak 900.0 MiB)<"));
	assert_non_null(strstr(svg, ">bigger (peak 1.3 GiB)<"));
	assert_non_null(strstr(svg, "stroke=\"#1d4e89\""));
	assert_non_null(strstr(svg, "stroke=\"#d1495b\""));
	assert_null(strstr(svg, ">anon<"));	/* overlays draw RSS only */
	assert_int_equal(g.t0, -10 * NS);	/* the shifted run starts before zero */
	assert_int_equal(g.t1, 120 * NS);
	/* a peak marker per run */
	const char *p1 = strstr(svg, "<g class=\"peak\">");
	assert_non_null(p1);
	assert_non_null(strstr(p1 + 1, "<g class=\"peak\">"));
	buf_release(&b);
	/* no samples at all: a frame with a note, no crash */
	struct chart_run e = c[0];
	e.n = 0;
	e.nmarks = 0;
	e.nevents = 0;
	svg_chart(&b, &e, 1, &o, NULL);
	assert_non_null(strstr(buf_str(&b), "no samples"));
	buf_release(&b);
	free(a);
	free(z);
}

/* The x extent of the peak label, estimated as the chart does (6.4 px a character, 10%
 * more for its weight), must lie inside the canvas. */
static void assert_peak_label_inside(const char *svg, int width)
{
	const char *g = strstr(svg, "<g class=\"peak\">");
	assert_non_null(g);
	const char *t = strstr(g, "<text x=\"");
	assert_non_null(t);
	double x = strtod(t + 9, NULL);
	const char *gt = strchr(t, '>');
	const char *end = strstr(gt, "</text>");
	assert_non_null(end);
	double w = 6.4 * 1.1 * (double)(end - gt - 1);
	int right = strstr(t, "text-anchor=\"end\"") != NULL && strstr(t, "text-anchor=\"end\"") < gt;
	double lo = right ? x - w : x, hi = right ? x : x + w;
	if (lo < 0 || hi > width)
		fail_msg("peak label from %.1f to %.1f outside 0..%d", lo, hi, width);
}

/* y of the first "<path d=\"M" after marker in svg, plus dy (NAN: not found). */
static double path_y_after(const char *svg, const char *marker, double dy)
{
	const char *k = strstr(svg, marker);
	if (!k || !(k = strstr(k, "<path d=\"M")))
		return NAN;
	char *end;
	strtod(k + 10, &end);
	return strtod(end + 1, NULL) + dy;
}

/* The box of the <text> element whose content starts with text, as the renderer
 * measures a bold label (SVG_CHAR_W x 1.1 a character, 10 px above the baseline and 3
 * below). Returns 0, or -1 when there is no such element. */
struct tbox {
	double x0, x1, y0, y1;
};
static int label_box_of(const char *svg, const char *text, struct tbox *bx)
{
	const char *k = strstr(svg, text);
	if (!k)
		return -1;
	const char *t = NULL;
	for (const char *p = svg; (p = strstr(p, "<text ")) && p < k; p++)
		t = p;
	const char *xs = t ? strstr(t, " x=\"") : NULL, *ys = t ? strstr(t, " y=\"") : NULL;
	if (!xs || !ys || xs > k || ys > k)
		return -1;
	double x = strtod(xs + 4, NULL), y = strtod(ys + 4, NULL);
	const char *close = strchr(k + 1, '<');
	double w = SVG_CHAR_W * 1.1 * (double)(close ? close - (k + 1) : 0);
	int end = strstr(t, "text-anchor=\"end\"") && strstr(t, "text-anchor=\"end\"") < k;
	bx->x0 = end ? x - w : x;
	bx->x1 = end ? x : x + w;
	bx->y0 = y - 10;
	bx->y1 = y + 3;
	return 0;
}

static int tboxes_overlap(const struct tbox *a, const struct tbox *b)
{
	return a->x0 < b->x1 && b->x0 < a->x1 && a->y0 < b->y1 && b->y0 < a->y1;
}

/* A set OOM-killed in a 200 MiB cgroup (v1, the cgroup's own peak): the limit is a
 * labelled line at the limit's height, the charged peak a labelled ring, and the kill's
 * cross sits at the victim's own RSS from the kernel's report (150 MiB), not at the
 * run's total after it (a few MiB), with the victim named. Many kills are counted in
 * the legend instead of labelled one by one. A far-off limit (64 GiB against 100 MiB)
 * is not drawn. */
static void test_svg_cgroup_oom(void **state)
{
	(void)state;
	struct run r;
	memset(&r, 0, sizeof(r));
	r.id = 9;
	r.label = "";
	r.mode = "command";
	r.tree = 1;
	r.started_at = T0;
	r.ended_at = T0 + 10 * NS;
	r.interval_ns = NS;
	r.samples = 11;
	r.peak_gpu = -1;
	r.cgroup = "/rsswatch-1";
	r.cgroup_limit = 200 * MIB;
	r.peak_cgroup = 200 * MIB;
	r.peak_cgroup_at = T0 + 5 * NS;
	r.peak_cgroup_exact = 1;
	r.oom_kills = 1;
	strlcpy_rsw(r.outcome, OUTCOME_EXITED, sizeof(r.outcome));
	struct sample sm[11];
	memset(sm, 0, sizeof(sm));
	for (int i = 0; i <= 10; i++) {
		sm[i].elapsed_ns = (int64_t)i * NS;
		sm[i].mem.rss = sm[i].mem.anon = (uint64_t)(i <= 5 ? 40 * i : 3) * MIB;
		sm[i].have = SAMPLE_CGROUP;
		sm[i].cgroup = sm[i].mem.rss;
		sm[i].cgroup_limit = 200 * MIB;
	}
	r.peak_rss = 200 * MIB;
	r.peak_rss_at = T0 + 5 * NS;
	r.last_rss = 3 * MIB;
	struct event ev[10];
	struct oom_kill kl[10];
	memset(ev, 0, sizeof(ev));
	memset(kl, 0, sizeof(kl));
	for (int i = 0; i < 10; i++) {
		strlcpy_rsw(ev[i].kind, "oom_kill", sizeof(ev[i].kind));
		ev[i].t = kl[i].t = T0 + (int64_t)(6 * NS + i * NS / 3);
		ev[i].pid = kl[i].pid = 77 + i;
		ev[i].detail = "anon_rss=150M";
		strlcpy_rsw(kl[i].comm, "mem<b>hog", sizeof(kl[i].comm));
		kl[i].anon_rss = (uint64_t)(140 + i) * MIB;
		kl[i].file_rss = 10 * MIB;
	}
	struct chart_run c;
	memset(&c, 0, sizeof(c));
	c.run = &r;
	c.s = sm;
	c.n = 11;
	c.events = ev;
	c.nevents = 1;
	c.kills = kl;
	c.nkills = 10;
	struct chart_opts o;
	memset(&o, 0, sizeof(o));
	struct buf b = { 0 };
	struct chart_geom g;
	svg_chart(&b, &c, 1, &o, &g);
	const char *svg = buf_str(&b);
	double ky = g.y1 - 200.0 * MIB * (g.y1 - g.y0) / g.vmax;
	double ly = path_y_after(svg, "<g class=\"cgroup-limit\">", 0);
	assert_true(fabs(ly - ky) < 0.06);
	assert_non_null(strstr(svg, ">cgroup limit 200.0 MiB<"));
	assert_non_null(strstr(svg, ">cgroup peak 200.0 MiB (charged by the kernel)<"));
	/* the kill at its own 150 MiB (the cross's path starts 5 px above and left) */
	double vy = g.y1 - 150.0 * MIB * (g.y1 - g.y0) / g.vmax;
	double xy = path_y_after(svg, "<g class=\"oom-kill\">", 5);
	assert_true(fabs(xy - vy) < 0.06);
	assert_non_null(strstr(svg, ">killed: mem&lt;b&gt;hog (pid 77), 150.0 MiB</text>"));
	assert_non_null(strstr(svg, "<title>OOM kill of pid 77 (mem&lt;b&gt;hog): RSS 150.0 MiB at the kill"));
	assert_null(strstr(svg, "mem<b>"));
	assert_peak_label_inside(svg, g.width);
	buf_release(&b);

	/* the kill at the cgroup's peak, both at the limit: the labels of the peak, the
	 * cgroup's peak and the kill each on a line of their own (they were drawn over
	 * each other) */
	int64_t kill_t = kl[0].t;
	ev[0].t = kl[0].t = T0 + 10 * NS;	/* at the run's end, at the right edge */
	r.peak_cgroup_at = kl[0].t;
	kl[0].anon_rss = 190 * MIB;
	r.peak_rss = 200 * MIB;
	r.peak_rss_at = kl[0].t;
	svg_chart(&b, &c, 1, &o, &g);
	svg = buf_str(&b);
	struct tbox bk, bc, bp, bl;
	assert_int_equal(label_box_of(svg, ">killed: ", &bk), 0);
	assert_int_equal(label_box_of(svg, ">cgroup peak ", &bc), 0);
	assert_int_equal(label_box_of(svg, ">peak 200.0 MiB", &bp), 0);
	assert_int_equal(label_box_of(svg, ">cgroup limit ", &bl), 0);
	assert_false(tboxes_overlap(&bk, &bc) || tboxes_overlap(&bk, &bp) || tboxes_overlap(&bk, &bl));
	assert_false(tboxes_overlap(&bc, &bp) || tboxes_overlap(&bc, &bl));
	buf_release(&b);
	kl[0].anon_rss = 140 * MIB;
	ev[0].t = kl[0].t = kill_t;
	r.peak_rss_at = T0 + 5 * NS;

	/* ten kills: each at its own RSS, counted in the legend, none labelled */
	c.nevents = 10;
	svg_chart(&b, &c, 1, &o, &g);
	svg = buf_str(&b);
	assert_non_null(strstr(svg, ">OOM kill (10, each at the killed process&apos;s RSS)<") ||
			strstr(svg, ">OOM kill (10, each at the killed process's RSS)<"));
	assert_null(strstr(svg, ">killed: "));
	const char *at = svg;
	for (int i = 0; i < 10; i++) {
		at = strstr(at, "<g class=\"oom-kill\">");
		assert_non_null(at);
		double want = g.y1 - (150.0 + i) * MIB * (g.y1 - g.y0) / g.vmax;
		assert_true(fabs(path_y_after(at, "<g class=\"oom-kill\">", 5) - want) < 0.06);
		at++;
	}
	buf_release(&b);

	/* a limit far above what the run used is left out */
	r.cgroup_limit = 64ULL << 30;
	r.peak_cgroup = 100 * MIB;
	r.oom_kills = 0;
	c.nevents = 0;
	svg_chart(&b, &c, 1, &o, &g);
	assert_null(strstr(buf_str(&b), "cgroup-limit"));
	assert_non_null(strstr(buf_str(&b), ">cgroup peak 100.0 MiB (charged by the kernel)<"));
	assert_true(g.vmax < 1024.0 * MIB);
	buf_release(&b);
}

/* OOM-killed 117 ms in, after its only sample: the axis reaches the kill, the sample is
 * a dot, the kill and the peak (from the kernel's OOM report) are drawn. */
static void test_svg_oom_one_sample(void **state)
{
	(void)state;
	struct run r;
	memset(&r, 0, sizeof(r));
	r.id = 7;
	r.label = "";
	r.started_at = T0;
	r.ended_at = T0 + 117 * NS / 1000;
	r.samples = 1;
	r.interval_ns = NS;
	r.peak_rss = 64 * MIB;
	r.peak_rss_at = r.ended_at;
	r.peak_source = PEAK_FROM_OOM;
	r.peak_gpu = -1;
	strlcpy_rsw(r.outcome, OUTCOME_OOM_KILLED, sizeof(r.outcome));
	struct sample s;
	memset(&s, 0, sizeof(s));
	s.mem.rss = s.mem.anon = 4 * MIB;
	s.mem.hwm = 4 * MIB;
	struct event e;
	memset(&e, 0, sizeof(e));
	strlcpy_rsw(e.kind, "oom_kill", sizeof(e.kind));
	e.t = r.ended_at;
	e.detail = "comm=memhog";
	struct chart_run c = { &r, &s, 1, NULL, 0, &e, 1, 0, NULL, NULL, 0, NULL, NULL, 0 };
	struct chart_opts o;
	memset(&o, 0, sizeof(o));
	struct buf b = { 0 };
	struct chart_geom g;
	svg_chart(&b, &c, 1, &o, &g);
	const char *svg = buf_str(&b);
	assert_golden("tests/fixtures/golden/svg-oom-one-sample.svg", svg);
	assert_true(g.t1 >= 117 * NS / 1000);
	assert_non_null(strstr(svg, "<circle class=\"point\""));
	assert_non_null(strstr(svg, ">peak 64.0 MiB from the OOM report<"));
	assert_non_null(strstr(svg, "stroke=\"#b00020\""));	/* the kill's cross */
	assert_null(strstr(svg, "no samples"));
	assert_true(g.vmax >= 64.0 * MIB);
	assert_peak_label_inside(svg, g.width);
	/* the kill is drawn inside the plot, at its right end */
	const char *k = strstr(svg, "<g class=\"events\">");
	assert_non_null(k);
	const char *m = strstr(k, "<path d=\"M");
	assert_non_null(m);
	double kx = strtod(m + 10, NULL) + 5;
	assert_true(kx <= g.x1 + 0.5 && kx > g.x1 - 5);
	buf_release(&b);

	/* no samples at all: the peak and the end are still drawn */
	c.n = 0;
	svg_chart(&b, &c, 1, &o, &g);
	assert_non_null(strstr(buf_str(&b), ">peak 64.0 MiB from the OOM report<"));
	assert_non_null(strstr(buf_str(&b), "stroke=\"#b00020\""));
	assert_true(g.t1 >= 117 * NS / 1000);
	buf_release(&b);
}

/* A peak that only VmHWM saw (773 MiB while samples read 160 MiB), at the last sample,
 * the right edge: drawn at its height, said to be from VmHWM, label inside the canvas. */
static void test_svg_hwm_peak(void **state)
{
	(void)state;
	struct synth *y = xmalloc(sizeof(*y));
	synth_init(y, 3, "", 1.0);
	for (int i = 0; i <= 240; i++)
		y->s[i].mem.rss = y->s[i].mem.anon = 160 * MIB, y->s[i].mem.file = y->s[i].mem.shmem = 0;
	y->run.peak_rss = 773 * MIB;
	y->run.peak_rss_at = T0 + 120 * NS;
	y->run.peak_source = PEAK_FROM_HWM;
	y->run.ended_at = T0 + 120 * NS;
	struct chart_run c = chart_of(y);
	c.nmarks = 0;
	c.nevents = 0;
	struct chart_opts o;
	memset(&o, 0, sizeof(o));
	struct buf b = { 0 };
	struct chart_geom g;
	svg_chart(&b, &c, 1, &o, &g);
	const char *svg = buf_str(&b);
	assert_non_null(strstr(svg, ">peak 773.0 MiB from VmHWM<"));
	assert_golden("tests/fixtures/golden/svg-hwm-peak.svg", svg);
	assert_true(g.vmax >= 773.0 * MIB);
	assert_peak_label_inside(svg, g.width);
	buf_release(&b);
	/* overlaid: the legend says it too, and the axis reaches it */
	struct chart_run two[2] = { c, c };
	svg_chart(&b, two, 2, &o, &g);
	assert_non_null(strstr(buf_str(&b), "(peak 773.0 MiB from VmHWM)"));
	assert_true(g.vmax >= 773.0 * MIB);
	buf_release(&b);
	/* a narrow chart still keeps the label inside */
	o.width = 200;
	svg_chart(&b, &c, 1, &o, &g);
	assert_peak_label_inside(buf_str(&b), g.width);
	buf_release(&b);
	free(y);
}

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

/* A set of 30 processes: 60 start and exit events become ticks, counted in the legend;
 * the largest process is named at its peak. Few events stay symbols. */
static void test_svg_set(void **state)
{
	(void)state;
	struct synth *y = xmalloc(sizeof(*y));
	synth_init(y, 9, "make -j2", 1.0);
	y->run.tree = 1;
	y->run.peak_process_pid = 123;
	y->run.peak_process_comm = "cc1<plus>";
	y->run.peak_process_rss = 300 * MIB;
	struct event ev[60];
	memset(ev, 0, sizeof(ev));
	for (int i = 0; i < 60; i++) {
		strlcpy_rsw(ev[i].kind, i % 2 ? "proc_exit" : "proc_start", sizeof(ev[i].kind));
		ev[i].t = T0 + (int64_t)i * NS;
		ev[i].pid = 1000 + i / 2;
		ev[i].detail = "comm=cc1";
	}
	struct chart_run c = chart_of(y);
	c.events = ev;
	c.nevents = 60;
	struct chart_opts o;
	memset(&o, 0, sizeof(o));
	struct buf b = { 0 };
	svg_chart(&b, &c, 1, &o, NULL);
	const char *svg = buf_str(&b);
	assert_golden("tests/fixtures/golden/svg-set-30.svg", svg);
	assert_null(strstr(svg, "l5 5l-5 5l-5 -5z"));	/* no diamonds */
	size_t ticks = 0;
	for (const char *p = svg; (p = strstr(p, "class=\"proc-event\"")); p++)
		ticks++;
	assert_int_equal(ticks, 60);
	assert_non_null(strstr(svg, ">process start or exit (60)<"));
	assert_non_null(strstr(svg, ">largest process: cc1&lt;plus&gt; (pid 123), peak 300.0 MiB<"));
	buf_release(&b);
	/* a few: a symbol each, as before */
	c.nevents = 4;
	svg_chart(&b, &c, 1, &o, NULL);
	assert_non_null(strstr(buf_str(&b), "l5 5l-5 5l-5 -5z"));
	assert_null(strstr(buf_str(&b), "proc-event"));
	buf_release(&b);
	/* not a set: no largest process line */
	y->run.tree = 0;
	svg_chart(&b, &c, 1, &o, NULL);
	assert_null(strstr(buf_str(&b), "largest process"));
	buf_release(&b);
	free(y);
}

/* The box of the first <text> of the first element of class cls in svg, as wide as its
 * characters in bold (the wider estimate) and one line of 11px high. */
static void text_box_of(const char *svg, const char *cls, double box[4])
{
	char key[64];
	snprintf(key, sizeof(key), "<g class=\"%s\">", cls);
	const char *g = strstr(svg, key);
	assert_non_null(g);
	const char *t = strstr(g, "<text x=\"");
	assert_non_null(t);
	char *end;
	double x = strtod(t + 9, &end);
	assert_true(strncmp(end, "\" y=\"", 5) == 0);
	double y = strtod(end + 5, &end);
	const char *close = strchr(t, '>');
	const char *stop = strchr(close, '<');
	assert_non_null(stop);
	size_t chars = 0;
	for (const char *p = close + 1; p < stop; p++)
		chars += ((unsigned char)*p & 0xc0) != 0x80;
	double w = SVG_CHAR_W * 1.1 * (double)chars;
	int anchored_end = strstr(t, "text-anchor=\"end\"") && strstr(t, "text-anchor=\"end\"") < close;
	box[0] = anchored_end ? x - w : x;
	box[1] = y - 10;
	box[2] = anchored_end ? x : x + w;
	box[3] = y + 3;
}

/* The largest process's label says something new and never covers the peak's label:
 * a run of one process (the target, with the run's peak) has none; a set whose largest
 * process peaks just under the set, early on, has both, apart. */
static void test_svg_largest_label(void **state)
{
	(void)state;
	struct synth *y = xmalloc(sizeof(*y));
	synth_init(y, 9, "one process", 1.0);
	y->run.tree = 1;
	y->run.peak_process_pid = y->run.pid;
	y->run.peak_process_comm = "python3";
	y->run.peak_process_rss = y->run.peak_rss;
	struct chart_run c = chart_of(y);
	struct chart_opts o;
	memset(&o, 0, sizeof(o));
	struct buf b = { 0 };
	svg_chart(&b, &c, 1, &o, NULL);
	assert_non_null(strstr(buf_str(&b), "<g class=\"peak\">"));
	assert_null(strstr(buf_str(&b), "largest process"));
	buf_release(&b);

	/* a set: a child holds nearly all of the peak, reached in the first seconds */
	y->run.peak_process_pid = y->run.pid + 1;
	y->run.peak_process_rss = y->run.peak_rss - 10 * MIB;
	y->run.peak_rss_at = T0 + 2 * NS;
	svg_chart(&b, &c, 1, &o, NULL);
	const char *svg = buf_str(&b);
	assert_non_null(strstr(svg, ">largest process: python3 (pid 4243), peak 890.0 MiB<"));
	double lb[4], pb[4];
	text_box_of(svg, "largest", lb);
	text_box_of(svg, "peak", pb);
	int apart = lb[2] <= pb[0] || pb[2] <= lb[0] || lb[3] <= pb[1] || pb[3] <= lb[1];
	if (!apart)
		fail_msg("largest process label [%.1f %.1f %.1f %.1f] overlaps the peak's [%.1f %.1f %.1f %.1f]",
			 lb[0], lb[1], lb[2], lb[3], pb[0], pb[1], pb[2], pb[3]);
	buf_release(&b);
	free(y);
}

static void test_downsample(void **state)
{
	(void)state;
	size_t n = 86400;
	struct sample *s = xcalloc(n, sizeof(*s));
	for (size_t i = 0; i < n; i++) {
		s[i].elapsed_ns = (int64_t)i * NS;
		s[i].mem.rss = 100 * MIB + (i % 7) * MIB;
	}
	s[43210].mem.rss = 5000 * MIB;	/* one sample, one second in a day */
	s[50000].mem.rss = 1 * MIB;
	size_t cols = 750;
	size_t *idx = xmalloc((2 * cols + 2) * sizeof(*idx));
	size_t k = chart_downsample(s, n, 0, (int64_t)(n - 1) * NS, cols, sample_rss, idx);
	assert_true(k <= 2 * cols + 2);
	assert_true(k > cols);
	int spike = 0, dip = 0;
	for (size_t i = 0; i < k; i++) {
		if (i)
			assert_true(idx[i] > idx[i - 1]);
		spike |= idx[i] == 43210;
		dip |= idx[i] == 50000;
	}
	assert_true(spike && dip);
	assert_int_equal(idx[0], 0);
	assert_int_equal(idx[k - 1], n - 1);
	/* fewer samples than columns: all of them */
	k = chart_downsample(s, 10, 0, 9 * NS, cols, sample_rss, idx);
	assert_int_equal(k, 10);
	free(idx);
	free(s);
	assert_true(fabs(nice_step(1000, 5) - 200) < 1e-9);
	assert_true(fabs(nice_step(11, 5) - 2.5) < 1e-9);
	assert_true(fabs(nice_step(0.9, 5) - 0.2) < 1e-9);
}

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
	struct html_procs hp = { p, ARRAY_SIZE(p), &k, 1, NULL, NULL };
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

/* The context panel: CPU and major faults as rates between samples, under the chart;
 * none for a run recorded without them. The run works flat out for a minute, then
 * stops using CPU and faults 1000 pages a second in from disk (thrashing). */
static void test_context(void **state)
{
	(void)state;
	struct synth *y = xmalloc(sizeof(*y));
	synth_init(y, 6, "", 1.0);
	struct chart_run c = chart_of(y);
	struct chart_opts o;
	memset(&o, 0, sizeof(o));
	struct buf b = { 0 }, plain = { 0 };
	struct chart_geom g, gp;
	svg_chart(&plain, &c, 1, &o, &gp);
	assert_null(strstr(buf_str(&plain), "class=\"context\""));
	for (int i = 0; i <= 240; i++) {
		struct sample *s = &y->s[i];
		s->have |= SAMPLE_CPU;
		s->cpu_user_ns = (uint64_t)(i <= 120 ? i : 120) * (uint64_t)NS / 2 * 3 / 4;
		s->cpu_sys_ns = (uint64_t)(i <= 120 ? i : 120) * (uint64_t)NS / 2 / 4;
		s->majflt = i <= 120 ? 7 : 7 + (uint64_t)(i - 120) * 500;
	}
	int64_t t[241], start = -1;
	double v[241];
	size_t k = chart_rates(y->s, 241, RATE_CPU, NS / 10, &start, t, v);
	assert_int_equal(k, 240);
	assert_int_equal(start, 0);
	assert_int_equal(t[0], NS / 2);
	assert_true(fabs(v[0] - 100) < 1e-9 && fabs(v[119] - 100) < 1e-9 && v[120] == 0);
	k = chart_rates(y->s, 241, RATE_MAJFLT, NS / 10, &start, t, v);
	assert_true(v[119] == 0 && fabs(v[120] - 1000) < 1e-9 && fabs(v[239] - 1000) < 1e-9);
	/* windows of at least 2 s: four samples each */
	assert_int_equal(chart_rates(y->s, 241, RATE_CPU, 2 * NS, &start, t, v), 60);
	/* a counter that goes down (a member left a set) reads 0, not a huge rate */
	y->s[10].cpu_user_ns = 0;
	chart_rates(y->s, 241, RATE_CPU, NS / 10, &start, t, v);
	assert_true(v[9] == 0 && v[10] > 100);
	y->s[10].cpu_user_ns = (uint64_t)10 * NS / 2 * 3 / 4;
	/* only one sample with the figures: no rate */
	assert_int_equal(chart_rates(y->s, 1, RATE_CPU, 0, &start, t, v), 0);

	svg_chart(&b, &c, 1, &o, &g);
	const char *svg = buf_str(&b);
	assert_non_null(strstr(svg, "<g class=\"context\">"));
	assert_non_null(strstr(svg, ">CPU</tspan> in % of one CPU (user + system): max 100%, mean 50%<"));
	assert_non_null(strstr(svg, ">major page faults</tspan> per second (reads from disk or swap): "
				    "max 1000/s, total 60000<"));
	assert_non_null(strstr(svg, ">100%</text>"));
	/* the left margin holds a scale of seven characters ("80000/s"), also when the
	 * memory axis's own labels are short ("4 KiB") */
	assert_true(g.x0 - 6 - 7 * SVG_CHAR_W >= 4);
	struct synth *tiny = xmalloc(sizeof(*tiny));
	synth_init(tiny, 8, "", 1.0 / 100000);
	tiny->run.peak_rss = 0;
	for (int i = 0; i <= 240; i++) {
		tiny->s[i].mem.hwm = tiny->s[i].mem.rss;
		tiny->s[i].gpu = tiny->s[i].cgroup = 0;
		tiny->s[i].have = y->s[i].have & ~(unsigned)(SAMPLE_GPU | SAMPLE_CGROUP);
		tiny->s[i].cpu_user_ns = y->s[i].cpu_user_ns;
		tiny->s[i].majflt = y->s[i].majflt * 80;
	}
	struct chart_run ct = chart_of(tiny);
	struct buf tb = { 0 };
	struct chart_geom tg;
	svg_chart(&tb, &ct, 1, &o, &tg);
	assert_non_null(strstr(buf_str(&tb), ">80000/s</text>"));
	assert_true(tg.x0 - 6 - 7 * SVG_CHAR_W >= 14);	/* the margin the axis labels get */
	buf_release(&tb);
	free(tiny);
	/* the picture grows by two strips under the chart; the chart keeps its place */
	assert_int_equal(g.height, gp.height + 8 + 2 * 58);
	assert_true(fabs(g.y1 - gp.y1) < 0.01);
	/* every point of the strips lies on the canvas and right of the scale */
	const char *p = strstr(svg, "<g class=\"context\">");
	const char *d = strstr(p, "stroke=\"#4f772d\" stroke-width=\"1.6\" d=\"M");
	assert_non_null(d);
	double x, yy;
	assert_int_equal(sscanf(d + strlen("stroke=\"#4f772d\" stroke-width=\"1.6\" d=\"M"), "%lf %lf", &x, &yy), 2);
	assert_true(x >= g.x0 - 0.1 && x <= g.x1 && yy > g.y1 && yy < g.height);
	/* several runs overlaid: no panel */
	struct chart_run two[2] = { c, c };
	buf_reset(&b);
	svg_chart(&b, two, 2, &o, NULL);
	assert_null(strstr(buf_str(&b), "class=\"context\""));
	/* the report carries it in its chart */
	buf_reset(&b);
	html_report(&b, &c, &o, NULL, NULL);
	assert_non_null(strstr(buf_str(&b), "<g class=\"context\">"));
	buf_release(&b);
	buf_release(&plain);
	free(y);
}

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

/* PNG through librsvg where the build has it: the image is the SVG's size times the
 * scale; a document that is not SVG is refused. Without librsvg, -ENOTSUP. */
static void test_png(void **state)
{
	(void)state;
	static const char svg[] = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"120\" height=\"80\">"
				  "<rect width=\"120\" height=\"80\" fill=\"#1d4e89\"/></svg>";
	struct buf b = { 0 };
	if (!png_available()) {
		assert_int_equal(svg_to_png(svg, strlen(svg), 2, &b), -ENOTSUP);
		assert_int_equal(b.len, 0);
		return;
	}
	assert_int_equal(svg_to_png(svg, strlen(svg), 2, &b), 0);
	assert_true(b.len > 24);
	const unsigned char *p = (const unsigned char *)b.p;
	assert_memory_equal(p, "\x89PNG\r\n\x1a\n", 8);
	/* IHDR: width and height, big-endian, at bytes 16 and 20 */
	assert_int_equal((p[16] << 24) | (p[17] << 16) | (p[18] << 8) | p[19], 240);
	assert_int_equal((p[20] << 24) | (p[21] << 16) | (p[22] << 8) | p[23], 160);
	size_t len = b.len;
	assert_int_equal(svg_to_png("not svg at all", 14, 2, &b), -EINVAL);
	assert_int_equal(b.len, len);
	buf_release(&b);
}

int main(void)
{
	setenv("TZ", "UTC", 1);
	tzset();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_xml_escape),
		cmocka_unit_test(test_svg_golden),
		cmocka_unit_test(test_svg_largest_label),
		cmocka_unit_test(test_svg_overlay),
		cmocka_unit_test(test_svg_oom_one_sample),
		cmocka_unit_test(test_svg_cgroup_oom),
		cmocka_unit_test(test_svg_hwm_peak),
		cmocka_unit_test(test_counters),
		cmocka_unit_test(test_context),
		cmocka_unit_test(test_by_process),
		cmocka_unit_test(test_png),
		cmocka_unit_test(test_svg_set),
		cmocka_unit_test(test_downsample),
		cmocka_unit_test(test_html_report),
		cmocka_unit_test(test_html_procs),
		cmocka_unit_test(test_html_day),
		cmocka_unit_test(test_compare_figures),
		cmocka_unit_test(test_compare_runs),
		cmocka_unit_test(test_compare_groups),
		cmocka_unit_test(test_compare_warnings),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
