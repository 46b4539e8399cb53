/* render/svg.c: the chart against a golden file, its labels kept on the canvas and apart,
 * overlays, OOM kills, sets, rates and downsampling. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/util.h"
#include "render/html.h"
#include "render/svg.h"
#include "synth.h"

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

int main(void)
{
	setenv("TZ", "UTC", 1);
	tzset();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_svg_golden),
		cmocka_unit_test(test_svg_largest_label),
		cmocka_unit_test(test_svg_overlay),
		cmocka_unit_test(test_svg_oom_one_sample),
		cmocka_unit_test(test_svg_cgroup_oom),
		cmocka_unit_test(test_svg_hwm_peak),
		cmocka_unit_test(test_svg_set),
		cmocka_unit_test(test_context),
		cmocka_unit_test(test_downsample),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
