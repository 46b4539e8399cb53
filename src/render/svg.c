#include "render/svg.h"
#include "base/fmt.h"
#include "base/parse.h"
#include "base/util.h"
#include "render/procs.h"
#include "render/xml.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHAR_W SVG_CHAR_W
#define FONT SVG_FONT

static const char *const palette[] = {
	"#1d4e89", "#d1495b", "#2a9d8f", "#e09f3e", "#6d597a", "#4f772d", "#8d6e63", "#3d5a80",
};

#define C_RSS "#1d4e89"
#define C_ANON "#a9c9e8"
#define C_FILE "#bfe0b5"
#define C_SHMEM "#f3d3a3"
#define C_HWM "#c0392b"
#define C_PSS "#555555"
#define C_CGROUP "#0f8b8d"
#define C_GPU "#8e44ad"
#define C_MARK "#666666"

/* Layers of a set's memory by process: light, so the lines over them stay readable. */
static const char *const stack_fill[] = {
	"#8fb8de", "#f2a7a0", "#9fd4c9", "#f3cd8c", "#c3b1d0", "#b5cf9a", "#d7b9a8", "#a9bcd0",
};
#define C_OTHERS "#cfcfcf"

uint64_t sample_rss(const struct sample *s) { return s->mem.rss; }
static uint64_t get_hwm(const struct sample *s) { return s->mem.hwm; }
static uint64_t get_pss(const struct sample *s) { return s->have & SAMPLE_PSS ? s->pss : 0; }
static uint64_t get_cgroup(const struct sample *s) { return s->have & SAMPLE_CGROUP ? s->cgroup : 0; }
static uint64_t get_gpu(const struct sample *s) { return s->have & SAMPLE_GPU ? s->gpu : 0; }

size_t chart_downsample(const struct sample *s, size_t n, int64_t t0, int64_t t1, size_t cols,
			sample_get get, size_t *idx)
{
	size_t k = 0;
	if (n == 0)
		return 0;
	if (cols == 0)
		cols = 1;
	double span = t1 > t0 ? (double)(t1 - t0) : 1.0;
	idx[k++] = 0;
	size_t cur = SIZE_MAX, lo = 0, hi = 0;
	for (size_t i = 0; i <= n; i++) {
		size_t c = SIZE_MAX;
		if (i < n) {
			double f = (double)(s[i].elapsed_ns - t0) / span * (double)cols;
			c = f < 0 ? 0 : f >= (double)cols ? cols - 1 : (size_t)f;
		}
		if (c != cur && cur != SIZE_MAX) {
			size_t a = lo < hi ? lo : hi, z = lo < hi ? hi : lo;
			if (a > idx[k - 1])
				idx[k++] = a;
			if (z > idx[k - 1])
				idx[k++] = z;
		}
		if (i == n)
			break;
		if (c != cur) {
			cur = c;
			lo = hi = i;
		} else {
			if (get(&s[i]) < get(&s[lo]))
				lo = i;
			if (get(&s[i]) > get(&s[hi]))
				hi = i;
		}
	}
	if (n - 1 > idx[k - 1])
		idx[k++] = n - 1;
	return k;
}

double nice_step(double span, int target)
{
	if (span <= 0 || target < 1)
		return 1;
	double raw = span / target;
	double p = pow(10, floor(log10(raw)));
	static const double m[] = { 1, 2, 2.5, 5, 10 };
	for (size_t i = 0; i < ARRAY_SIZE(m); i++)
		if (m[i] * p >= raw)
			return m[i] * p;
	return 10 * p;
}

/* Time steps people read easily, in seconds. */
static const double time_steps[] = {
	0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300,
	600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 432000, 864000,
};

static double time_step(double span_s, int target)
{
	for (size_t i = 0; i < ARRAY_SIZE(time_steps); i++)
		if (span_s / time_steps[i] <= target)
			return time_steps[i];
	return nice_step(span_s / 86400, target) * 86400;
}

/* An elapsed time at a tick: "0", "250ms", "1.5s", "45s", "1m30s", "2h", "1d6h". */
static void fmt_tick_elapsed(char *out, size_t n, double t, double step)
{
	const char *sign = t < 0 ? "-" : "";
	t = fabs(t);
	if (t < 1e-9) {
		strlcpy_rsw(out, "0", n);
		return;
	}
	if (step < 1) {
		int dec = step >= 0.1 ? 1 : step >= 0.01 ? 2 : 3;
		if (t < 1 && step < 0.1)
			snprintf(out, n, "%s%.0fms", sign, t * 1000);
		else
			snprintf(out, n, "%s%.*fs", sign, dec, t);
		return;
	}
	long long s = llround(t);
	long long d = s / 86400, h = s / 3600 % 24, m = s / 60 % 60, sec = s % 60;
	char tmp[48];
	size_t k = 0;
	tmp[0] = '\0';
	if (d)
		k += (size_t)snprintf(tmp + k, sizeof(tmp) - k, "%lldd", d);
	if (h)
		k += (size_t)snprintf(tmp + k, sizeof(tmp) - k, "%lldh", h);
	if (m)
		k += (size_t)snprintf(tmp + k, sizeof(tmp) - k, "%lldm", m);
	if (sec)
		snprintf(tmp + k, sizeof(tmp) - k, "%llds", sec);
	snprintf(out, n, "%s%s", sign, tmp);
}

static void fmt_tick_wall(char *out, size_t n, int64_t t_ns, double step)
{
	time_t sec = (time_t)(t_ns / NS_PER_S);
	struct tm tm;
	localtime_r(&sec, &tm);
	if (step >= 86400)
		snprintf(out, n, "%02d-%02d", tm.tm_mon + 1, tm.tm_mday);
	else if (step >= 60)
		snprintf(out, n, "%02d:%02d", tm.tm_hour, tm.tm_min);
	else
		snprintf(out, n, "%02d:%02d:%02d", tm.tm_hour, tm.tm_min, tm.tm_sec);
}

void svg_tick_bytes(char *out, size_t n, double v, enum unit u, double step)
{
	if (v < 0.5) {
		strlcpy_rsw(out, "0", n);
		return;
	}
	double su = step / (double)(1ULL << (10 * u));
	int dec = su >= 1 ? 0 : su >= 0.1 ? 1 : 2;
	if (dec == 0 && fabs(su - floor(su)) > 1e-9)
		dec = 1;
	snprintf(out, n, "%.*f %s", dec, v / (double)(1ULL << (10 * u)), unit_name(u));
}

struct ctx {
	struct buf *b;
	const struct chart_run *runs;
	size_t nruns;
	const struct chart_opts *o;
	int wall;
	int single;		/* one run: its figures apart, its peak labelled, its panels */
	int rug;		/* process starts and exits drawn as ticks on the time axis */
	int width, height;	/* of the whole picture */
	int64_t t0, t1;		/* axis domain */
	double vmax;
	double x0, x1, y0, y1;
	size_t cols;
	/* The labels drawn on the plot so far (peak, limit, cgroup peak, largest process,
	 * kills), which the next one keeps clear of. */
	struct box {
		double x0, y0, x1, y1;
	} taken[12];
	size_t ntaken;
};

/* Axis time of an elapsed time of run r. */
static int64_t axis_t(const struct ctx *c, const struct chart_run *r, int64_t elapsed)
{
	return (c->wall ? r->run->started_at : 0) + elapsed - r->shift_ns;
}

static double px(const struct ctx *c, int64_t t)
{
	double span = c->t1 > c->t0 ? (double)(c->t1 - c->t0) : 1.0;
	return c->x0 + (double)(t - c->t0) / span * (c->x1 - c->x0);
}

static double py(const struct ctx *c, double v)
{
	return c->y1 - v / c->vmax * (c->y1 - c->y0);
}

static const char *run_color(const struct ctx *c, size_t i)
{
	return c->nruns == 1 ? C_RSS : palette[i % ARRAY_SIZE(palette)];
}

static void run_name(struct buf *b, const struct chart_run *r)
{
	if (r->name)
		xml_text_trunc(b, r->name, 48);
	else if (r->run->label[0])
		xml_text_trunc(b, r->run->label, 48);
	else
		buf_printf(b, "run %lld", (long long)r->run->id);
}

/* One polyline path of a series through the downsampled samples. With need set, samples
 * without that figure break the line. */
static void series_path(struct ctx *c, const struct chart_run *r, sample_get get, unsigned need,
			const char *stroke, const char *extra)
{
	size_t *idx = xmalloc((2 * c->cols + 2) * sizeof(*idx));
	int64_t t0 = c->wall ? c->t0 - r->run->started_at + r->shift_ns : c->t0 + r->shift_ns;
	int64_t t1 = t0 + (c->t1 - c->t0);
	size_t k = chart_downsample(r->s, r->n, t0, t1, c->cols, get, idx);
	buf_printf(c->b, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\" stroke-linejoin=\"round\"%s d=\"",
		   stroke, extra ? extra : "");
	int pen = 0;
	size_t drawn = 0;
	double lx = 0, ly = 0;
	for (size_t j = 0; j < k; j++) {
		const struct sample *s = &r->s[idx[j]];
		if (need && !(s->have & need)) {
			pen = 0;
			continue;
		}
		lx = px(c, axis_t(c, r, s->elapsed_ns));
		ly = py(c, (double)get(s));
		buf_printf(c->b, "%s%.1f %.1f", pen ? " L" : "M", lx, ly);
		pen = 1;
		drawn++;
	}
	buf_puts(c->b, "\"/>\n");
	/* a path through one point draws nothing: a run with one sample gets a dot */
	if (drawn == 1)
		buf_printf(c->b, "<circle class=\"point\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n", lx, ly,
			   stroke);
	free(idx);
}

/* anon, file and shmem stacked from the bottom, drawn from RSS's downsampled samples. */
static void stacked_areas(struct ctx *c, const struct chart_run *r)
{
	size_t *idx = xmalloc((2 * c->cols + 2) * sizeof(*idx));
	int64_t t0 = c->wall ? c->t0 - r->run->started_at : c->t0 + r->shift_ns;
	size_t k = chart_downsample(r->s, r->n, t0, t0 + (c->t1 - c->t0), c->cols, sample_rss, idx);
	static const char *const fill[3] = { C_ANON, C_FILE, C_SHMEM };
	for (int band = 0; band < 3; band++) {
		buf_printf(c->b, "<path fill=\"%s\" stroke=\"none\" d=\"", fill[band]);
		for (size_t j = 0; j < k; j++) {
			const struct sample *s = &r->s[idx[j]];
			double top = (double)s->mem.anon + (band >= 1 ? (double)s->mem.file : 0) +
				     (band >= 2 ? (double)s->mem.shmem : 0);
			buf_printf(c->b, "%s%.1f %.1f", j ? " L" : "M", px(c, axis_t(c, r, s->elapsed_ns)),
				   py(c, top));
		}
		for (size_t j = k; j-- > 0;) {
			const struct sample *s = &r->s[idx[j]];
			double bot = band == 0 ? 0 : (double)s->mem.anon + (band == 2 ? (double)s->mem.file : 0);
			buf_printf(c->b, " L%.1f %.1f", px(c, axis_t(c, r, s->elapsed_ns)), py(c, bot));
		}
		buf_puts(c->b, " Z\"/>\n");
	}
	free(idx);
}

static const char *layer_fill(const struct proc_stack *st, size_t l)
{
	if (st->others && l == st->nlayers - 1)
		return C_OTHERS;
	return stack_fill[l % ARRAY_SIZE(stack_fill)];
}

static uint64_t stack_total(const struct proc_stack *st, size_t i)
{
	uint64_t v = 0;
	for (size_t l = 0; l < st->nlayers; l++)
		v += st->v[i * st->nlayers + l];
	return v;
}

/* A set's members stacked from the bottom (the largest first), each layer through the
 * times that hold the smallest and largest total of each pixel column. */
static void stack_areas(struct ctx *c, const struct chart_run *r)
{
	const struct proc_stack *st = r->stack;
	if (!st->nt || !st->nlayers)
		return;
	size_t *idx = xmalloc((2 * c->cols + 2) * sizeof(*idx));
	size_t k = 0, cur = SIZE_MAX, lo = 0, hi = 0;
	for (size_t i = 0; i <= st->nt; i++) {
		size_t col = SIZE_MAX;
		if (i < st->nt) {
			double f = (px(c, axis_t(c, r, st->t[i])) - c->x0) / (c->x1 - c->x0) * (double)c->cols;
			col = f < 0 ? 0 : f >= (double)c->cols ? c->cols - 1 : (size_t)f;
		}
		if (col != cur && cur != SIZE_MAX) {
			size_t a = lo < hi ? lo : hi, z = lo < hi ? hi : lo;
			idx[k++] = a;
			if (z != a)
				idx[k++] = z;
		}
		if (i == st->nt)
			break;
		if (col != cur) {
			cur = col;
			lo = hi = i;
		} else {
			if (stack_total(st, i) < stack_total(st, lo))
				lo = i;
			if (stack_total(st, i) > stack_total(st, hi))
				hi = i;
		}
	}
	double *base = xcalloc(k ? k : 1, sizeof(*base));
	buf_puts(c->b, "<g class=\"by-process\">\n");
	for (size_t l = 0; l < st->nlayers; l++) {
		buf_printf(c->b, "<path fill=\"%s\" stroke=\"#fff\" stroke-width=\"0.5\" d=\"", layer_fill(st, l));
		for (size_t j = 0; j < k; j++)
			buf_printf(c->b, "%s%.1f %.1f", j ? " L" : "M", px(c, axis_t(c, r, st->t[idx[j]])),
				   py(c, base[j] + (double)st->v[idx[j] * st->nlayers + l]));
		for (size_t j = k; j-- > 0;)
			buf_printf(c->b, " L%.1f %.1f", px(c, axis_t(c, r, st->t[idx[j]])), py(c, base[j]));
		buf_puts(c->b, " Z\"><title>");
		xml_text(c->b, st->layers[l].comm);
		if (st->layers[l].pid)
			buf_printf(c->b, " (pid %d)", (int)st->layers[l].pid);
		buf_puts(c->b, "</title></path>\n");
		for (size_t j = 0; j < k; j++)
			base[j] += (double)st->v[idx[j] * st->nlayers + l];
	}
	buf_puts(c->b, "</g>\n");
	free(base);
	free(idx);
}

/* How a legend item is drawn: a line, an area, or the symbol of an event kind (the
 * event kinds in the order the legend lists them). */
enum legend_kind {
	LEGEND_LINE,
	LEGEND_DASHED,	/* VmHWM */
	LEGEND_AREA,
	LEGEND_DOTTED,	/* PSS */
	LEGEND_EXIT,
	LEGEND_OOM,
	LEGEND_WARN,
	LEGEND_EVENT,
	LEGEND_TICK,	/* a set's process starts and exits, as ticks on the time axis */
	LEGEND_STAGE,	/* a stage's own peak (between two marks), from the engine */
};

struct legend_item {
	const char *color;
	enum legend_kind kind;
	struct buf text;	/* escaped */
	double x, y;	/* where legend_flow put it */
};

#define LEGEND_MAX 64

/* The legend: its items in the order they are drawn, at most LEGEND_MAX. */
struct legend {
	struct legend_item items[LEGEND_MAX];
	size_t n;
};

/* A new item's (empty) text, or NULL when the legend is full. */
static struct buf *legend_add(struct legend *lg, const char *color, enum legend_kind kind)
{
	if (lg->n >= LEGEND_MAX)
		return NULL;
	struct legend_item *it = &lg->items[lg->n++];
	memset(it, 0, sizeof(*it));
	it->color = color;
	it->kind = kind;
	return &it->text;
}

/* An item whose text is the renderer's own (not escaped). */
static void legend_add_text(struct legend *lg, const char *color, enum legend_kind kind, const char *text)
{
	struct buf *t = legend_add(lg, color, kind);
	if (t)
		buf_puts(t, text);
}

/* A set's process starts and exits: beyond this many, a tick each along the bottom of
 * the plot instead of a symbol each on the line (a make -j run has hundreds). */
#define PROC_EVENT_SYMBOLS 12

/* OOM kills up to this many are each named beside their cross; more are named in
 * their tooltips only, and counted in the legend (a crash loop has dozens). */
#define KILL_LABELS 3

static enum legend_kind event_sym(const char *kind)
{
	if (strcmp(kind, "exit") == 0)
		return LEGEND_EXIT;
	if (strcmp(kind, "oom_kill") == 0)
		return LEGEND_OOM;
	if (strcmp(kind, "warn") == 0)
		return LEGEND_WARN;
	return LEGEND_EVENT;
}

static void symbol(struct buf *b, enum legend_kind sym, double x, double y)
{
	switch (sym) {
	case LEGEND_EXIT:
		buf_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\" fill=\"#fff\" stroke=\"#222\" stroke-width=\"2\"/>", x, y);
		break;
	case LEGEND_OOM:
		buf_printf(b, "<path d=\"M%.1f %.1fl10 10m0 -10l-10 10\" stroke=\"#b00020\" stroke-width=\"3\" stroke-linecap=\"round\"/>",
			   x - 5, y - 5);
		break;
	case LEGEND_WARN:
		buf_printf(b, "<path d=\"M%.1f %.1fl5.5 9.5h-11z\" fill=\"#e09f3e\" stroke=\"#8a5a00\"/>", x, y - 6);
		break;
	case LEGEND_STAGE:	/* a hollow triangle pointing down at (x, y) */
		buf_printf(b, "<path d=\"M%.1f %.1fh10l-5 8z\" fill=\"#fff\" stroke=\"#1f3b73\" "
			   "stroke-width=\"1.5\"/>", x - 5, y - 8);
		break;
	default:
		buf_printf(b, "<path d=\"M%.1f %.1fl5 5l-5 5l-5 -5z\" fill=\"#777\"/>", x, y - 5);
	}
}

static void legend_swatch(struct buf *b, const struct legend_item *it, double x, double y)
{
	switch (it->kind) {
	case LEGEND_AREA:
		buf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"10\" fill=\"%s\"/>", x, y - 5, it->color);
		break;
	case LEGEND_LINE:
	case LEGEND_DASHED:
	case LEGEND_DOTTED:
		buf_printf(b, "<path d=\"M%.1f %.1fh16\" stroke=\"%s\" stroke-width=\"2\"%s/>", x - 1, y, it->color,
			   it->kind == LEGEND_DASHED ? " stroke-dasharray=\"5 3\"" :
			   it->kind == LEGEND_DOTTED ? " stroke-dasharray=\"2 2\"" : "");
		break;
	case LEGEND_TICK:
		buf_printf(b, "<path d=\"M%.1f %.1fv10M%.1f %.1fv10\" stroke=\"#777\"/>", x + 4, y - 5, x + 10, y - 5);
		break;
	default:
		symbol(b, it->kind, x + 7, y);
	}
}

struct mark_label {
	double x;
	const char *text;
	const char *color;
	int row;
	int right;	/* anchored at its end, left of the line */
};

static int cmp_ml(const void *a, const void *b)
{
	const struct mark_label *p = a, *q = b;
	return p->x < q->x ? -1 : p->x > q->x;
}

static uint64_t max_sampled(const struct chart_run *r)
{
	uint64_t m = 0;
	for (size_t i = 0; i < r->n; i++)
		if (r->s[i].mem.rss > m)
			m = r->s[i].mem.rss;
	return m;
}

/* Widens the axis domain to elapsed time el of run r (el < 0: nothing). */
/* The cgroup limit drawn for run r: its limit when memory came near it (a charged
 * peak of half of it or more, or an OOM kill), so that a 64 GiB limit does not flatten
 * a 100 MiB run into the axis; 0: none drawn. */
static uint64_t limit_drawn(const struct run *r)
{
	uint64_t l = r->cgroup_limit;
	if (!l || l == UINT64_MAX)
		return 0;
	return r->peak_cgroup >= l / 2 || r->oom_kills > 0 ? l : 0;
}

/* The kernel's report of the kill that event e (an oom_kill) stands for: the one of
 * its pid nearest in time. NULL: none. */
static const struct oom_kill *kill_of(const struct chart_run *r, const struct event *e)
{
	const struct oom_kill *best = NULL;
	int64_t bd = 0;
	if (strcmp(e->kind, "oom_kill") != 0)
		return NULL;
	for (size_t i = 0; i < r->nkills; i++) {
		if (r->kills[i].pid != e->pid)
			continue;
		int64_t d = r->kills[i].t > e->t ? r->kills[i].t - e->t : e->t - r->kills[i].t;
		if (!best || d < bd) {
			best = &r->kills[i];
			bd = d;
		}
	}
	return best;
}

static uint64_t kill_rss(const struct oom_kill *k)
{
	return k->anon_rss + k->file_rss + k->shmem_rss;
}

static void extend(struct ctx *c, int *have, const struct chart_run *r, int64_t el)
{
	if (el < 0)
		return;
	int64_t t = axis_t(c, r, el);
	if (!*have || t < c->t0)
		c->t0 = t;
	if (!*have || t > c->t1)
		c->t1 = t;
	*have = 1;
}

/* The y of value v in a strip whose scale runs from lo at y1 up to lo + span at y0. */
static double strip_y(double v, double lo, double span, double y0, double y1)
{
	return y1 - (v - lo) / span * (y1 - y0);
}

#define COUNTER_STRIPS 6	/* counters drawn at most; the rest named in a line */
#define STRIP_H 58

/* One counter as a step line (a value holds until the next) in a strip from y top to
 * bottom, from its first value to the end of the axis. Values that fall into one pixel
 * column are drawn as a vertical stroke through their range, so a long series stays a
 * small path and a spike is never lost. */
static void counter_strip(struct ctx *c, const struct chart_run *r, const struct counter_series *cs,
			  double top, const char *color)
{
	struct buf *b = c->b;
	long long lo = 0, hi = 0;
	for (size_t i = 0; i < cs->n; i++) {
		if (i == 0 || cs->v[i] < lo)
			lo = cs->v[i];
		if (i == 0 || cs->v[i] > hi)
			hi = cs->v[i];
	}
	if (lo > 0)
		lo = 0;
	double y0 = top + 16, y1 = top + STRIP_H - 6;
	double span = hi > lo ? (double)hi - (double)lo : 1.0;
	char a[48], z[48];
	buf_printf(b, "<g class=\"counter\"><text x=\"%.1f\" y=\"%.1f\"><tspan font-weight=\"600\" fill=\"%s\">",
		   c->x0, top + 10, color);
	xml_text_trunc(b, cs->name, 48);
	buf_printf(b, "</tspan> max %s, last %s</text>\n", counter_value_text(a, sizeof(a), cs->name, hi),
		   counter_value_text(z, sizeof(z), cs->name, cs->n ? cs->v[cs->n - 1] : 0));
	buf_printf(b, "<path d=\"M%.1f %.1fH%.1fM%.1f %.1fH%.1f\" stroke=\"#e6e6e6\"/>", c->x0, y0, c->x1, c->x0,
		   y1, c->x1);
	buf_printf(b, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\" d=\"", color);
	double col = -1e9;
	for (size_t i = 0; i < cs->n; i++) {
		double x = px(c, axis_t(c, r, cs->t[i]));
		if (i == 0)
			buf_printf(b, "M%.1f %.1f", x, strip_y((double)cs->v[i], (double)lo, span, y0, y1));
		else if (x - col >= 1)
			buf_printf(b, " H%.1f V%.1f", x, strip_y((double)cs->v[i], (double)lo, span, y0, y1));
		else
			buf_printf(b, " V%.1f", strip_y((double)cs->v[i], (double)lo, span, y0, y1));
		if (x - col >= 1)
			col = x;
	}
	if (cs->n)
		buf_printf(b, " H%.1f", c->x1);
	buf_puts(b, "\"/></g>\n");
}

static uint64_t rate_counter(const struct sample *s, enum chart_rate which)
{
	return which == RATE_CPU ? s->cpu_user_ns + s->cpu_sys_ns : s->majflt;
}

size_t chart_rates(const struct sample *s, size_t n, enum chart_rate which, int64_t min_dt,
		   int64_t *start, int64_t *t, double *v)
{
	size_t k = 0, a = SIZE_MAX;
	for (size_t i = 0; i < n; i++) {
		if (!(s[i].have & SAMPLE_CPU))
			continue;
		if (a == SIZE_MAX) {
			a = i;
			*start = s[i].elapsed_ns;
			continue;
		}
		int64_t dt = s[i].elapsed_ns - s[a].elapsed_ns;
		/* the last sample closes what is left, however short */
		if (dt <= 0 || (dt < min_dt && i + 1 < n))
			continue;
		uint64_t x0 = rate_counter(&s[a], which), x1 = rate_counter(&s[i], which);
		double d = x1 > x0 ? (double)(x1 - x0) : 0;
		v[k] = which == RATE_CPU ? d / (double)dt * 100 : d / ((double)dt / NS_PER_S);
		t[k++] = s[i].elapsed_ns;
		a = i;
	}
	return k;
}

/* Context windows are at least this long: 10 clock ticks, so CPU reads in steps of 10%. */
#define CONTEXT_MIN_DT (100 * 1000000LL)

static void fmt_rate(char *out, size_t n, double v)
{
	if (v >= 99999.5)
		snprintf(out, n, "%.0fk", v / 1000);
	else
		snprintf(out, n, "%.*f", v > 0 && v < 9.95 ? 1 : 0, v);
}

/* One context rate of run r as a step line in a strip from y top (the value over each
 * window holds from its start to its end), with its scale at the left: CPU from 0 to
 * at least 100%, faults from 0 to a nice step above their highest rate. Windows that
 * fall into one pixel column are drawn as a vertical stroke through their range. */
static void rate_strip(struct ctx *c, const struct chart_run *r, enum chart_rate which, double top,
		       const char *color)
{
	struct buf *b = c->b;
	int64_t *t = xmalloc(r->n * sizeof(*t)), start = 0;
	double *v = xmalloc(r->n * sizeof(*v));
	size_t k = chart_rates(r->s, r->n, which, CONTEXT_MIN_DT, &start, t, v);
	double hi = 0, sum = 0;
	for (size_t i = 0; i < k; i++) {
		if (v[i] > hi)
			hi = v[i];
		sum += v[i] * (double)(t[i] - (i ? t[i - 1] : start));
	}
	double span = k ? (double)(t[k - 1] - start) : 1;
	double top_v = which == RATE_CPU ? 100 : 1;
	if (hi > top_v) {
		double step = nice_step(hi, 4);
		top_v = ceil(hi / step) * step;
	}
	double y0 = top + 16, y1 = top + STRIP_H - 6;
	char a[32], z[32];
	buf_printf(b, "<g class=\"%s\"><text x=\"%.1f\" y=\"%.1f\"><tspan font-weight=\"600\" fill=\"%s\">",
		   which == RATE_CPU ? "cpu" : "majflt", c->x0, top + 10, color);
	fmt_rate(a, sizeof(a), hi);
	if (which == RATE_CPU) {
		fmt_rate(z, sizeof(z), sum / span);
		buf_printf(b, "CPU</tspan> in %% of one CPU (user + system): max %s%%, mean %s%%</text>\n", a, z);
	} else {
		buf_printf(b, "major page faults</tspan> per second (reads from disk or swap): max %s/s, "
			      "total %.0f</text>\n", a, sum / NS_PER_S);
	}
	if (top_v >= 99999.5)
		fmt_rate(a, sizeof(a), top_v);
	else
		snprintf(a, sizeof(a), "%g", top_v);
	buf_printf(b, "<g fill=\"#666\" text-anchor=\"end\"><text x=\"%.1f\" y=\"%.1f\">%s%s</text>"
		      "<text x=\"%.1f\" y=\"%.1f\">0</text></g>\n", c->x0 - 6, y0 + 4, a,
		   which == RATE_CPU ? "%" : "/s", c->x0 - 6, y1 + 4);
	buf_printf(b, "<path d=\"M%.1f %.1fH%.1fM%.1f %.1fH%.1f\" stroke=\"#e6e6e6\"/>", c->x0, y0, c->x1, c->x0,
		   y1, c->x1);
	buf_printf(b, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\" d=\"", color);
	if (k) {
		double lastx = px(c, axis_t(c, r, start)), plo = 0, phi = 0;
		int pend = 0;
		buf_printf(b, "M%.1f %.1f", lastx, strip_y(v[0], 0, top_v, y0, y1));
		for (size_t i = 0; i < k; i++) {
			double x = px(c, axis_t(c, r, t[i]));
			if (x - lastx < 1 && i + 1 < k) {
				if (!pend || v[i] < plo)
					plo = v[i];
				if (!pend || v[i] > phi)
					phi = v[i];
				pend = 1;
				continue;
			}
			if (pend)
				buf_printf(b, " V%.1f V%.1f", strip_y(phi, 0, top_v, y0, y1), strip_y(plo, 0, top_v, y0, y1));
			pend = 0;
			buf_printf(b, " V%.1f H%.1f", strip_y(v[i], 0, top_v, y0, y1), x);
			lastx = x;
		}
	}
	buf_puts(b, "\"/></g>\n");
	free(t);
	free(v);
}

/* Whether run r gets a context panel: two samples with CPU figures at least. */
static int has_context(const struct chart_run *r)
{
	size_t m = 0;
	for (size_t i = 0; i < r->n && m < 2; i++)
		m += !!(r->s[i].have & SAMPLE_CPU);
	return m >= 2;
}

#define MARK_CHARS 30
#define MAX_ROWS 6

/* What the samples hold, found while taking the domain: the legend and the series
 * drawn follow from it. The parts, VmHWM and kinds are looked at for one run only. */
struct seen {
	int samples;	/* some run has a sample */
	unsigned have;	/* SAMPLE_* of any sample */
	uint64_t parts, hwm, file, shmem;	/* nonzero: some sample has them */
	uint64_t vmax;	/* the highest figure to draw */
};

/* The y axis: the unit of the largest value, a nice step, the top rounded up to it. */
struct yscale {
	enum unit unit;
	double step, top;
	size_t label_w;	/* characters of the widest tick label */
};

/* The highest figure drawn for sample x of a chart of one run; notes what x has. */
static uint64_t sample_top(const struct sample *x, struct seen *s)
{
	uint64_t v = x->mem.rss;
	s->have |= x->have;
	s->parts |= x->mem.anon | x->mem.file | x->mem.shmem;
	s->file |= x->mem.file;
	s->shmem |= x->mem.shmem;
	s->hwm |= x->mem.hwm;
	if (x->mem.hwm > v)
		v = x->mem.hwm;
	if (x->mem.anon + x->mem.file + x->mem.shmem > v)
		v = x->mem.anon + x->mem.file + x->mem.shmem;
	if (get_pss(x) > v)
		v = get_pss(x);
	if (get_cgroup(x) > v)
		v = get_cgroup(x);
	if (get_gpu(x) > v)
		v = get_gpu(x);
	return v;
}

/* Widens the domain to run r: its samples, marks, recorded end, events and the time of
 * its peak (an OOM kill may come after the last sample), and raises s->vmax to its
 * highest figure, the reported peak included (VmHWM, an exit record or the OOM report
 * may be above every sample). */
static void domain_run(struct ctx *c, const struct chart_run *r, int *have_dom, struct seen *s)
{
	for (size_t j = 0; j < r->n; j++) {
		int64_t t = axis_t(c, r, r->s[j].elapsed_ns);
		if (!*have_dom || t < c->t0)
			c->t0 = t;
		if (!*have_dom || t > c->t1)
			c->t1 = t;
		*have_dom = s->samples = 1;
		uint64_t v = c->single ? sample_top(&r->s[j], s) : r->s[j].mem.rss;
		if (v > s->vmax)
			s->vmax = v;
	}
	if (r->stack)
		for (size_t j = 0; j < r->stack->nt; j++)
			if (stack_total(r->stack, j) > s->vmax)
				s->vmax = stack_total(r->stack, j);
	if (r->run->peak_rss > s->vmax)
		s->vmax = r->run->peak_rss;
	for (size_t j = 0; j < r->nkills; j++)
		if (kill_rss(&r->kills[j]) > s->vmax)
			s->vmax = kill_rss(&r->kills[j]);
	if (c->single && r->run->peak_cgroup > s->vmax)
		s->vmax = r->run->peak_cgroup;
	if (c->single && limit_drawn(r->run) > s->vmax)
		s->vmax = limit_drawn(r->run);
	for (size_t j = 0; j < r->nmarks; j++) {
		int64_t t = axis_t(c, r, r->marks[j].t - r->run->started_at);
		if (*have_dom && t < c->t0)
			c->t0 = t;
		if (*have_dom && t > c->t1)
			c->t1 = t;
	}
	int64_t st = r->run->started_at;
	extend(c, have_dom, r, r->run->ended_at > st ? r->run->ended_at - st : -1);
	extend(c, have_dom, r, r->run->peak_rss && r->run->peak_rss_at >= st ? r->run->peak_rss_at - st : -1);
	if (c->single)
		extend(c, have_dom, r, r->run->peak_cgroup && r->run->peak_cgroup_at >= st
					       ? r->run->peak_cgroup_at - st : -1);
	for (size_t j = 0; j < r->nevents; j++)
		extend(c, have_dom, r, r->events[j].t >= st ? r->events[j].t - st : -1);
}

/* The domain of every run: c's time span (elapsed time starts at 0 at the latest) and
 * what the samples hold. */
static void chart_domain(struct ctx *c, struct seen *s)
{
	int have_dom = 0;
	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < c->nruns; i++)
		domain_run(c, &c->runs[i], &have_dom, s);
	if (!c->wall && c->t0 > 0)
		c->t0 = 0;
	if (c->t1 <= c->t0)
		c->t1 = c->t0 + NS_PER_S;
	if (s->vmax == 0)
		s->vmax = 1024 * 1024;
}

/* The y scale for values up to vmax; sets c's top value. */
static void chart_yscale(struct ctx *c, uint64_t vmax, struct yscale *y)
{
	y->unit = unit_for(vmax);
	double ubytes = (double)(1ULL << (10 * y->unit));
	y->step = nice_step(in_unit(vmax, y->unit), 5) * ubytes;
	if (y->step < 1)
		y->step = 1;
	y->top = ceil((double)vmax / y->step) * y->step;
	if (y->top < (double)vmax * 1.04)
		y->top += y->step;
	c->vmax = y->top;
	char lab[64];
	y->label_w = 1;
	for (double v = 0; v <= y->top + y->step / 2; v += y->step) {
		svg_tick_bytes(lab, sizeof(lab), v, y->unit, y->step);
		if (strlen(lab) > y->label_w)
			y->label_w = strlen(lab);
	}
}

/* The legend of one run: RSS, a set's layers by process or the anon/file/shmem areas,
 * then each other figure its samples have. */
static void legend_one_run(struct legend *lg, const struct chart_run *r, const struct seen *s)
{
	const struct proc_stack *st = r->stack;
	legend_add_text(lg, C_RSS, LEGEND_LINE, st ? "RSS (all processes)" : "RSS");
	for (size_t l = 0; st && l < st->nlayers; l++) {
		struct buf *t = legend_add(lg, layer_fill(st, l), LEGEND_AREA);
		if (!t)
			break;
		if (st->others && l == st->nlayers - 1) {
			buf_printf(t, "%zu other process%s", st->others, st->others == 1 ? "" : "es");
		} else {
			xml_text_trunc(t, st->layers[l].comm, 24);
			buf_printf(t, " (%d)", (int)st->layers[l].pid);
		}
	}
	if (s->parts && !st) {
		legend_add_text(lg, C_ANON, LEGEND_AREA, "anon");
		if (s->file)
			legend_add_text(lg, C_FILE, LEGEND_AREA, "file");
		if (s->shmem)
			legend_add_text(lg, C_SHMEM, LEGEND_AREA, "shmem");
	}
	if (s->hwm)
		legend_add_text(lg, C_HWM, LEGEND_DASHED, "HWM (peak so far)");
	if (s->have & SAMPLE_PSS)
		legend_add_text(lg, C_PSS, LEGEND_DOTTED, "PSS");
	if (s->have & SAMPLE_CGROUP)
		legend_add_text(lg, C_CGROUP, LEGEND_LINE, "cgroup (charged)");
	if (s->have & SAMPLE_GPU)
		legend_add_text(lg, C_GPU, LEGEND_LINE, "GPU");
}

/* The legend of several runs: each run's name in its colour, with its peak. */
static void legend_runs(struct legend *lg, const struct ctx *c)
{
	for (size_t i = 0; i < c->nruns; i++) {
		const struct run *run = c->runs[i].run;
		struct buf *t = legend_add(lg, run_color(c, i), LEGEND_LINE);
		if (!t)
			break;
		run_name(t, &c->runs[i]);
		if (run->peak_rss) {
			struct buf p = { 0 };
			char v[32];
			const char *from = run_peak_from(run, max_sampled(&c->runs[i]));
			buf_printf(&p, " (peak %s%s%s)", fmt_bytes(v, sizeof(v), run->peak_rss), from ? " " : "",
				   from ? from : "");
			xml_text(t, buf_str(&p));
			buf_release(&p);
		}
	}
}

/* The number of process starts and exits over every run. */
static size_t count_proc_events(const struct ctx *c)
{
	size_t n = 0;
	for (size_t i = 0; i < c->nruns; i++)
		for (size_t j = 0; j < c->runs[i].nevents; j++)
			n += event_is_process(&c->runs[i].events[j]);
	return n;
}

/* Whether the stage that mark m opens has a peak of its own to draw: known (the
 * engine's page counts), and not the run's peak, whose dot is drawn already. */
static int stage_peak_drawn(const struct chart_run *r, const struct mark *m)
{
	return m->stage_peak_known && m->stage_peak && m->stage_peak_at >= r->run->started_at &&
	       !(m->stage_peak == r->run->peak_rss && m->stage_peak_at == r->run->peak_rss_at);
}

/* The legend's event symbols, each kind drawn once; process starts and exits as ticks
 * (c->rug), counted. */
static void legend_events(struct legend *lg, const struct ctx *c, size_t nproc_ev)
{
	static const char *const sym_names[] = {
		[LEGEND_EXIT] = "exit", [LEGEND_OOM] = "OOM kill", [LEGEND_WARN] = "warning",
		[LEGEND_EVENT] = "event",
	};
	unsigned syms = 0;
	size_t nkill = 0;
	for (size_t i = 0; i < c->nruns; i++)
		for (size_t j = 0; j < c->runs[i].nevents; j++)
			if (!c->rug || !event_is_process(&c->runs[i].events[j])) {
				syms |= 1u << event_sym(c->runs[i].events[j].kind);
				nkill += event_sym(c->runs[i].events[j].kind) == LEGEND_OOM;
			}
	for (enum legend_kind k = LEGEND_EXIT; k <= LEGEND_EVENT; k++) {
		if (!(syms & (1u << k)))
			continue;
		if (k == LEGEND_OOM && nkill > KILL_LABELS) {
			char t[96];
			snprintf(t, sizeof(t), "OOM kill (%zu, each at the killed process's RSS)", nkill);
			legend_add_text(lg, "", k, t);
		} else {
			legend_add_text(lg, "", k, sym_names[k]);
		}
	}
	if (c->rug) {
		char t[64];
		snprintf(t, sizeof(t), "process start or exit (%zu)", nproc_ev);
		legend_add_text(lg, "", LEGEND_TICK, t);
	}
	if (c->single) {
		const struct chart_run *r = &c->runs[0];
		for (size_t j = 0; j < r->nmarks; j++)
			if (stage_peak_drawn(r, &r->marks[j])) {
				legend_add_text(lg, "", LEGEND_STAGE, "a stage's own peak (kernel)");
				break;
			}
	}
}

/* Places the legend's items in rows from y top, left to right, wrapping at the width.
 * Returns the y under the legend. */
static double legend_flow(struct legend *lg, double top, int width)
{
	double x = 16;
	int row = 0;
	for (size_t i = 0; i < lg->n; i++) {
		struct legend_item *it = &lg->items[i];
		double w = 22 + CHAR_W * (double)utf8_chars(buf_str(&it->text)) + 16;
		if (x + w > width - 10 && x > 16) {
			x = 16;
			row++;
		}
		it->x = x;
		it->y = top + 8 + row * 18;
		x += w;
	}
	return top + (lg->n ? (row + 1) * 18 : 0) + 6;
}

/* Labels of the marks of every run, placed in rows above the plot. */
struct mark_labels {
	struct mark_label *v;
	size_t n;
	int rows;	/* rows used */
};

/* The marks' labels in the order of their x; the same label at the same place (runs
 * aligned at it) is taken once. */
static void mark_labels_collect(const struct ctx *c, struct mark_labels *m)
{
	size_t n = 0;
	for (size_t i = 0; i < c->nruns; i++)
		n += c->runs[i].nmarks;
	m->v = xcalloc(n ? n : 1, sizeof(*m->v));
	m->n = 0;
	m->rows = 0;
	for (size_t i = 0; i < c->nruns; i++) {
		const struct chart_run *r = &c->runs[i];
		for (size_t j = 0; j < r->nmarks; j++) {
			double mx = px(c, axis_t(c, r, r->marks[j].t - r->run->started_at));
			int dup = 0;
			for (size_t k = 0; k < m->n; k++)
				if (fabs(m->v[k].x - mx) < 1 && strcmp(m->v[k].text, r->marks[j].label) == 0)
					dup = 1;
			if (dup)
				continue;
			m->v[m->n].x = mx;
			m->v[m->n].text = r->marks[j].label;
			m->v[m->n].color = c->single ? C_MARK : run_color(c, i);
			m->n++;
		}
	}
	qsort(m->v, m->n, sizeof(*m->v), cmp_ml);
}

/* Puts each label in the first row where it does not collide with the label before
 * it, so close marks stack instead of overlapping; with every row taken, in the row
 * that ends first. A label near the right edge is drawn left of its line. */
static void mark_labels_stack(const struct ctx *c, struct mark_labels *m)
{
	double row_end[MAX_ROWS];
	for (int r = 0; r < MAX_ROWS; r++)
		row_end[r] = -1e9;
	for (size_t i = 0; i < m->n; i++) {
		struct mark_label *l = &m->v[i];
		size_t chars = utf8_chars(l->text);
		double w = CHAR_W * (double)(chars > MARK_CHARS ? MARK_CHARS : chars);
		l->right = l->x + 4 + w > c->x1 + 10;
		double start = l->right ? l->x - 4 - w : l->x - 1;
		double end = l->right ? l->x + 1 : l->x + 4 + w;
		int best = 0;
		for (int r = 0; r < MAX_ROWS; r++) {
			if (row_end[r] + 6 <= start) {
				best = r;
				break;
			}
			if (row_end[r] < row_end[best])
				best = r;
		}
		l->row = best;
		row_end[best] = end;
		if (best + 1 > m->rows)
			m->rows = best + 1;
	}
}

/* The panels under the time axis of a chart of one run. */
struct panels {
	int context;	/* CPU and major faults */
	double context_top;
	double counters_top;
	size_t nstrips, more;	/* counters drawn, and those only counted */
};

/* The plot area from y top (under the legend and the mark labels) and the panels under
 * it: sets c's y range and height, and the pixel columns a series is reduced to. */
static void chart_layout(struct ctx *c, double top, int context, struct panels *p)
{
	memset(p, 0, sizeof(*p));
	c->y0 = top + 8;
	c->y1 = c->height - 46;
	if (c->y1 - c->y0 < 60)
		c->y1 = c->y0 + 60;
	c->height = (int)(c->y1 + 46);
	p->context = context;
	p->context_top = c->height;
	if (context)
		c->height += 8 + 2 * STRIP_H;
	p->counters_top = c->height;
	if (c->single) {
		size_t nc = c->runs[0].ncounters;
		p->nstrips = nc < COUNTER_STRIPS ? nc : COUNTER_STRIPS;
		p->more = nc - p->nstrips;
		if (p->nstrips)
			c->height += (int)(8 + p->nstrips * STRIP_H + (p->more ? 16 : 0));
	}
	int max_points = c->o->max_points > 0 ? c->o->max_points : 1500;
	double plot_w = c->x1 - c->x0;
	c->cols = (size_t)(plot_w < max_points / 2 ? plot_w : max_points / 2);
	if (c->cols < 2)
		c->cols = 2;
}

/* The <svg> element's start, the title and the legend (whose texts it releases). */
static void draw_head(struct ctx *c, struct legend *lg)
{
	struct buf *b = c->b;
	int W = c->width, H = c->height;
	buf_printf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"rsw-chart\" width=\"%d\" height=\"%d\" "
		   "viewBox=\"0 0 %d %d\" font-family=\"" FONT "\" font-size=\"11\" fill=\"#333\">\n",
		   W, H, W, H);
	buf_printf(b, "<rect width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n", W, H);
	if (c->o->title) {
		buf_puts(b, "<text x=\"16\" y=\"22\" font-size=\"14\" font-weight=\"600\" fill=\"#222\">");
		xml_text_trunc(b, c->o->title, (size_t)((W - 32) / 7.5));
		buf_puts(b, "</text>\n");
	}
	for (size_t i = 0; i < lg->n; i++) {
		struct legend_item *it = &lg->items[i];
		legend_swatch(b, it, it->x, it->y);
		buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", it->x + 20, it->y + 4, buf_str(&it->text));
		buf_release(&it->text);
	}
}

/* The grid and the y axis's labels. */
static void draw_y_axis(struct ctx *c, const struct yscale *y)
{
	char lab[64];
	buf_puts(c->b, "<g class=\"axis-y\" text-anchor=\"end\">\n");
	for (double v = 0; v <= y->top + y->step / 2; v += y->step) {
		double ty = py(c, v);
		svg_tick_bytes(lab, sizeof(lab), v, y->unit, y->step);
		buf_printf(c->b, "<path d=\"M%.1f %.1fH%.1f\" stroke=\"%s\"/><text x=\"%.1f\" y=\"%.1f\">%s</text>\n",
			   c->x0, ty, c->x1, v == 0 ? "#999" : "#e6e6e6", c->x0 - 6, ty + 4, lab);
	}
	buf_puts(c->b, "</g>\n");
}

/* The time axis: ticks at multiples of a readable step (of local time in wall mode),
 * and its title. */
static void draw_x_axis(struct ctx *c)
{
	struct buf *b = c->b;
	char lab[64];
	int target = (int)((c->x1 - c->x0) / 90);
	if (target < 2)
		target = 2;
	double step = time_step((double)(c->t1 - c->t0) / NS_PER_S, target);
	int64_t step_ns = (int64_t)llround(step * NS_PER_S);
	if (step_ns < 1)
		step_ns = 1;
	int64_t off = 0;
	if (c->wall) {
		time_t sec = (time_t)(c->t0 / NS_PER_S);
		struct tm tm;
		localtime_r(&sec, &tm);
		off = (int64_t)tm.tm_gmtoff * NS_PER_S;
	}
	/* the first multiple of the step at or after the start, also for negative times */
	int64_t first = (c->t0 + off) / step_ns * step_ns;
	if (first > c->t0 + off)
		first -= step_ns;
	if (first < c->t0 + off)
		first += step_ns;
	buf_puts(b, "<g class=\"axis-x\" text-anchor=\"middle\">\n");
	buf_printf(b, "<path d=\"M%.1f %.1fH%.1f\" stroke=\"#999\"/>\n", c->x0, c->y1, c->x1);
	for (int64_t t = first; t - off <= c->t1; t += step_ns) {
		double tx = px(c, t - off);
		if (c->wall)
			fmt_tick_wall(lab, sizeof(lab), t - off, step);
		else
			fmt_tick_elapsed(lab, sizeof(lab), (double)t / NS_PER_S, step);
		buf_printf(b, "<path d=\"M%.1f %.1fv5\" stroke=\"#999\"/><text x=\"%.1f\" y=\"%.1f\">%s</text>\n",
			   tx, c->y1, tx, c->y1 + 17, lab);
	}
	buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#666\">", (c->x0 + c->x1) / 2, c->y1 + 36);
	if (c->o->x_title)
		xml_text(b, c->o->x_title);
	else
		buf_puts(b, c->wall ? "local time" : "elapsed time");
	buf_puts(b, "</text>\n</g>\n");
}

/* The series: of one run its areas (by process, else anon/file/shmem) under its lines;
 * of several, one RSS line each, the first run drawn last (on top). */
static void draw_series(struct ctx *c, const struct seen *s)
{
	if (!s->samples)
		buf_printf(c->b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#888\">no samples</text>\n",
			   (c->x0 + c->x1) / 2, (c->y0 + c->y1) / 2);
	buf_puts(c->b, "<g class=\"series\">\n");
	if (c->single && c->runs[0].n) {
		const struct chart_run *r = &c->runs[0];
		if (r->stack)
			stack_areas(c, r);
		else if (s->parts)
			stacked_areas(c, r);
		if (s->have & SAMPLE_CGROUP)
			series_path(c, r, get_cgroup, SAMPLE_CGROUP, C_CGROUP, NULL);
		if (s->have & SAMPLE_PSS)
			series_path(c, r, get_pss, SAMPLE_PSS, C_PSS, " stroke-dasharray=\"2 2\"");
		if (s->have & SAMPLE_GPU)
			series_path(c, r, get_gpu, SAMPLE_GPU, C_GPU, NULL);
		if (s->hwm)
			series_path(c, r, get_hwm, 0, C_HWM, " stroke-dasharray=\"5 3\"");
		series_path(c, r, sample_rss, 0, C_RSS, NULL);
	} else if (!c->single) {
		for (size_t i = c->nruns; i-- > 0;)
			if (c->runs[i].n)
				series_path(c, &c->runs[i], sample_rss, 0, run_color(c, i), NULL);
	}
	buf_puts(c->b, "</g>\n");
}

/* Marks: a dashed line through the plot each, its label in its row of the band that
 * starts at y top. */
static void draw_marks(struct ctx *c, const struct mark_labels *m, double top)
{
	struct buf *b = c->b;
	buf_puts(b, "<g class=\"marks\">\n");
	for (size_t i = 0; i < m->n; i++) {
		const struct mark_label *l = &m->v[i];
		double ty = top + 10 + l->row * 14;
		buf_printf(b, "<path d=\"M%.1f %.1fV%.1f\" stroke=\"%s\" stroke-dasharray=\"3 3\"/>", l->x, ty - 9,
			   c->y1, l->color);
		buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" fill=\"%s\"%s>", l->right ? l->x - 4 : l->x + 4, ty,
			   l->color, l->right ? " text-anchor=\"end\"" : "");
		xml_text_trunc(b, l->text, MARK_CHARS);
		buf_puts(b, "<title>");
		xml_text(b, l->text);
		buf_puts(b, "</title></text>\n");
	}
	buf_puts(b, "</g>\n");
}

/* The box a line of 11px text of width w takes, its baseline at y, starting at x (or
 * ending there: end). */
static struct box text_box(double x, double y, double w, int end)
{
	struct box bx = { end ? x - w : x, y - 10, end ? x : x + w, y + 3 };
	return bx;
}

static int boxes_overlap(const struct box *a, const struct box *b)
{
	return a->x0 < b->x1 && b->x0 < a->x1 && a->y0 < b->y1 && b->y0 < a->y1;
}

/* The label of one run's peak, in the words show and report use, and where it goes. */
struct peak_label {
	struct buf text;	/* not escaped */
	double x, y;
	int end;	/* anchored at its end, left of the dot */
	struct box box;
};

/* The point of run r's reported peak. */
static void peak_point(const struct ctx *c, const struct chart_run *r, double *x, double *y)
{
	int64_t pe = r->run->peak_rss_at > r->run->started_at ? r->run->peak_rss_at - r->run->started_at : 0;
	*x = px(c, axis_t(c, r, pe));
	*y = py(c, (double)r->run->peak_rss);
}

/* Places the peak label of run r: right of the dot, else left of it, else at the left
 * edge, so it stays inside the canvas; above the dot, yet below the plot's top. */
static void peak_label_place(const struct ctx *c, const struct chart_run *r, struct peak_label *pl)
{
	char v[32];
	const char *from = run_peak_from(r->run, max_sampled(r));
	buf_printf(&pl->text, "peak %s", fmt_bytes(v, sizeof(v), r->run->peak_rss));
	if (from)
		buf_printf(&pl->text, " %s", from);
	double ppx, ppy;
	peak_point(c, r, &ppx, &ppy);
	/* bold: wider than the plain text */
	double tw = CHAR_W * 1.1 * (double)utf8_chars(buf_str(&pl->text));
	pl->x = ppx + 7;
	pl->end = 0;
	if (pl->x + tw > c->width - 4) {
		pl->end = 1;
		pl->x = ppx - 7;
		if (pl->x - tw < 4)
			pl->x = 4 + tw;
	}
	pl->y = ppy - 6 < c->y0 + 10 ? c->y0 + 10 : ppy - 6;
	/* not struck through by the cgroup limit's line: just above it, else under it */
	uint64_t lim = c->single ? limit_drawn(r->run) : 0;
	double ly = lim ? py(c, (double)lim) : -100;
	if (lim && ly > pl->y - 12 && ly < pl->y + 5)
		pl->y = ly - 5 >= c->y0 + 10 ? ly - 5 : ly + 14;
	pl->box = text_box(pl->x, pl->y, tw, pl->end);
}

#define LARGEST_COMM_CHARS 32

/* A set's largest process by peak, as a dotted line at that peak with its name, so the
 * picture says who used the memory. Not drawn by process (the legend names it), nor
 * where it says nothing new: the largest process is the target itself, with the run's
 * peak (a run of one process). Its label goes to the first place that keeps clear of
 * the box avoid (the peak's label; NULL: none): above the line at its left end, at its
 * right end, then below the line at either end. */
static void take_box(struct ctx *c, const struct box *bx)
{
	if (c->ntaken < ARRAY_SIZE(c->taken))
		c->taken[c->ntaken++] = *bx;
}

static void draw_largest(struct ctx *c)
{
	const struct box *avoid = c->taken;
	size_t navoid = c->ntaken;
	const struct run *r = c->runs[0].run;
	if (!c->single || c->runs[0].stack || !run_is_set(r) || r->peak_process_pid <= 0 || !r->peak_process_rss)
		return;
	if (r->peak_process_pid == r->pid && r->peak_process_rss >= r->peak_rss)
		return;
	const char *comm = r->peak_process_comm && r->peak_process_comm[0] ? r->peak_process_comm : "?";
	static const char head[] = "largest process: ";
	char v[32], tail[80];
	snprintf(tail, sizeof(tail), " (pid %d), peak %s", (int)r->peak_process_pid,
		 fmt_bytes(v, sizeof(v), r->peak_process_rss));
	size_t cc = utf8_chars(comm);
	double w = CHAR_W * (double)(strlen(head) + (cc < LARGEST_COMM_CHARS ? cc : LARGEST_COMM_CHARS) + strlen(tail));
	double lpy = py(c, (double)r->peak_process_rss);
	double above = lpy - 4 < c->y0 + 10 ? c->y0 + 10 : lpy - 4;
	double below = lpy + 14 > c->y1 - 4 ? c->y1 - 4 : lpy + 14;
	const struct {
		double x, y;
		int end;
	} at[] = { { c->x0 + 6, above, 0 }, { c->x1 - 6, above, 1 }, { c->x0 + 6, below, 0 }, { c->x1 - 6, below, 1 } };
	size_t k = 0;
	for (; navoid && k < ARRAY_SIZE(at); k++) {
		struct box bx = text_box(at[k].x, at[k].y, w, at[k].end);
		size_t j = 0;
		while (j < navoid && !boxes_overlap(&bx, &avoid[j]))
			j++;
		if (j == navoid)
			break;
	}
	if (k == ARRAY_SIZE(at))
		k = 0;
	struct box mine = text_box(at[k].x, at[k].y, w, at[k].end);
	take_box(c, &mine);
	buf_printf(c->b, "<g class=\"largest\"><path d=\"M%.1f %.1fH%.1f\" stroke=\"#8d6e63\" "
			 "stroke-dasharray=\"1 3\" stroke-width=\"1.5\"/><text x=\"%.1f\" y=\"%.1f\" fill=\"#6d4c41\"%s>%s",
		   c->x0, lpy, c->x1, at[k].x, at[k].y, at[k].end ? " text-anchor=\"end\"" : "", head);
	xml_text_trunc(c->b, comm, LARGEST_COMM_CHARS);
	buf_printf(c->b, "%s</text></g>\n", tail);
}

/* The reported peak of run i (which may be above every sample: VmHWM, an exit record,
 * the OOM report) as a dot; one run's with its label pl, overlays' named in the legend. */
static void draw_peak(struct ctx *c, size_t i, const struct peak_label *pl)
{
	struct buf *b = c->b;
	double ppx, ppy;
	peak_point(c, &c->runs[i], &ppx, &ppy);
	const char *col = run_color(c, i);
	buf_printf(b, "<g class=\"peak\"><circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"%s/>", ppx, ppy,
		   c->single ? col : "#fff", c->single ? "" : " stroke-width=\"2\"");
	if (!c->single)
		buf_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"/>",
			   ppx, ppy, col);
	if (c->single) {
		buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" font-weight=\"600\" fill=\"%s\"%s>", pl->x, pl->y, col,
			   pl->end ? " text-anchor=\"end\"" : "");
		xml_text(b, buf_str(&pl->text));
		buf_puts(b, "</text>");
	}
	buf_puts(b, "</g>\n");
}

/* Whether bx is clear of taken[0..n) and inside the canvas. */
static int box_free(const struct ctx *c, const struct box *bx, const struct box *taken, size_t n)
{
	if (bx->x0 < 2 || bx->x1 > c->width - 2)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (boxes_overlap(bx, &taken[i]))
			return 0;
	return 1;
}

#define C_LIMIT "#b00020"

/* One run's memory cgroup: its limit as a dashed line labelled at its left end (where
 * limit_drawn says), and its charged peak (the kernel's figure, shared pages counted
 * once, unlike summed RSS) as a ring labelled in the first place clear of the labels
 * already placed. Adds the boxes of its labels to taken (room for 2 more). */
static void draw_cgroup(struct ctx *c, struct box *taken, size_t *ntaken)
{
	const struct run *r = c->runs[0].run;
	struct buf *b = c->b;
	char v[32], t[128];
	uint64_t lim = limit_drawn(r);
	if (lim) {
		double ly = py(c, (double)lim);
		snprintf(t, sizeof(t), "cgroup limit %s", fmt_bytes(v, sizeof(v), lim));
		double ty = ly - 4 < c->y0 + 10 ? ly + 13 : ly - 4, tw = CHAR_W * 1.1 * (double)strlen(t);
		/* at the line's left end, else its right end (clear of the peak's label) */
		double tx = c->x0 + 6;
		int end = 0;
		struct box bx = text_box(tx, ty, tw, 0);
		if (!box_free(c, &bx, taken, *ntaken)) {
			tx = c->x1 - 6;
			end = 1;
			bx = text_box(tx, ty, tw, 1);
		}
		buf_printf(b, "<g class=\"cgroup-limit\"><path d=\"M%.1f %.1fH%.1f\" stroke=\"%s\" "
			      "stroke-width=\"1.5\" stroke-dasharray=\"8 4\"/><text x=\"%.1f\" y=\"%.1f\" "
			      "fill=\"%s\" font-weight=\"600\"%s>%s<title>the memory cgroup's limit (%llu "
			      "bytes): above it the kernel reclaims, then OOM-kills</title></text></g>\n",
			   c->x0, ly, c->x1, C_LIMIT, tx, ty, C_LIMIT, end ? " text-anchor=\"end\"" : "", t,
			   (unsigned long long)lim);
		taken[(*ntaken)++] = bx;
	}
	if (!r->peak_cgroup)
		return;
	int64_t el = r->peak_cgroup_at > r->started_at ? r->peak_cgroup_at - r->started_at : 0;
	double x = px(c, axis_t(c, &c->runs[0], el)), y = py(c, (double)r->peak_cgroup);
	snprintf(t, sizeof(t), "cgroup peak %s (charged by the kernel)", fmt_bytes(v, sizeof(v), r->peak_cgroup));
	double w = CHAR_W * 1.1 * (double)strlen(t);
	double up = y - 7 < c->y0 + 10 ? c->y0 + 10 : y - 7, down = y + 16 > c->y1 - 4 ? c->y1 - 4 : y + 16;
	double lower = y + 30 > c->y1 - 4 ? c->y1 - 4 : y + 30;
	const struct {
		double x, y;
		int end;
	} at[] = { { x - 7, up, 1 }, { x + 7, up, 0 }, { x - 7, down, 1 }, { x + 7, down, 0 },
		   { x - 7, lower, 1 }, { x + 7, lower, 0 }, { c->x0 + 6, down, 0 } };
	size_t k = 0;
	struct box bx = text_box(at[0].x, at[0].y, w, at[0].end);
	for (; k < ARRAY_SIZE(at); k++) {
		bx = text_box(at[k].x, at[k].y, w, at[k].end);
		if (box_free(c, &bx, taken, *ntaken))
			break;
	}
	if (k == ARRAY_SIZE(at)) {
		k = 0;
		bx = text_box(at[0].x, at[0].y, w, at[0].end);
	}
	buf_printf(b, "<g class=\"cgroup-peak\"><circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"#fff\" "
		      "stroke=\"%s\" stroke-width=\"2\"/><text x=\"%.1f\" y=\"%.1f\" fill=\"%s\" "
		      "font-weight=\"600\"%s>%s<title>%s: the memory charged to the run's cgroup at its "
		      "highest; shared pages count once, where summed RSS counts them once per "
		      "process</title></text></g>\n",
		   x, y, C_CGROUP, at[k].x, at[k].y, C_CGROUP, at[k].end ? " text-anchor=\"end\"" : "", t,
		   r->peak_cgroup_exact ? "the cgroup's own peak" : "the highest usage sampled");
	taken[(*ntaken)++] = bx;
}

/* One run's stages' own peaks (a mark's stage_peak, from the engine's page counts),
 * each as a hollow triangle pointing at where and when it was reached, named on hover:
 * which stage made which high, even where no sample saw it. The stage that holds the
 * run's peak is its dot already. */
static void draw_stage_peaks(struct ctx *c)
{
	const struct chart_run *r = &c->runs[0];
	int any = 0;
	for (size_t j = 0; j < r->nmarks; j++) {
		const struct mark *m = &r->marks[j];
		if (!stage_peak_drawn(r, m))
			continue;
		double x = px(c, axis_t(c, r, m->stage_peak_at - r->run->started_at));
		double y = py(c, (double)m->stage_peak);
		if (x < c->x0 || x > c->x1 || y < c->y0 || y > c->y1)
			continue;
		char v[32], t[32];
		if (!any)
			buf_puts(c->b, "<g class=\"stage-peaks\">\n");
		any = 1;
		buf_puts(c->b, "<g>");
		symbol(c->b, LEGEND_STAGE, x, y);
		buf_puts(c->b, "<title>stage ");
		xml_text(c->b, m->label);
		buf_printf(c->b, ": its peak %s at %s, from the kernel's page counts</title></g>\n",
			   fmt_bytes(v, sizeof(v), m->stage_peak),
			   fmt_offset(t, sizeof(t), m->stage_peak_at - r->run->started_at));
	}
	if (any)
		buf_puts(c->b, "</g>\n");
}

/* A set's largest process, then the peak of every run. */
static void draw_peaks(struct ctx *c)
{
	struct peak_label pl;
	memset(&pl, 0, sizeof(pl));
	int labelled = c->single && c->runs[0].run->peak_rss;
	if (labelled) {
		peak_label_place(c, &c->runs[0], &pl);
		take_box(c, &pl.box);
	}
	if (c->single)
		draw_cgroup(c, c->taken, &c->ntaken);
	draw_largest(c);
	if (c->single)
		draw_stage_peaks(c);
	for (size_t i = 0; i < c->nruns; i++)
		if (c->runs[i].run->peak_rss)
			draw_peak(c, i, &pl);
	buf_release(&pl.text);
}

/* An OOM kill in words: "OOM kill of pid 4242 (memhog): RSS 198.3 MiB at the kill
 * (anon ..., file ..., shmem ...)", escaped. */
static void kill_words(struct buf *b, const struct oom_kill *k)
{
	char a[32], f[32], s[32], t[32];
	buf_printf(b, "OOM kill of pid %d (", (int)k->pid);
	xml_text(b, k->comm[0] ? k->comm : "?");
	buf_printf(b, "): RSS %s at the kill (anon %s, file %s, shmem %s; the kernel's report)",
		   fmt_bytes(t, sizeof(t), kill_rss(k)), fmt_bytes(a, sizeof(a), k->anon_rss),
		   fmt_bytes(f, sizeof(f), k->file_rss), fmt_bytes(s, sizeof(s), k->shmem_rss));
}

/* The label beside a kill's cross at (x, y): "killed: memhog (pid 4242), 198.3 MiB",
 * below the cross, else above it or further down, on whichever side keeps it clear of
 * the labels already drawn (the peak's and the cgroup's sit near a kill) and inside
 * the canvas. */
static void kill_label(struct ctx *c, const struct oom_kill *k, double x, double y)
{
	char v[32], tail[64];
	snprintf(tail, sizeof(tail), " (pid %d), %s", (int)k->pid, fmt_bytes(v, sizeof(v), kill_rss(k)));
	const char *comm = k->comm[0] ? k->comm : "?";
	size_t cc = utf8_chars(comm);
	double w = CHAR_W * (double)(8 + (cc < LARGEST_COMM_CHARS ? cc : LARGEST_COMM_CHARS) + strlen(tail));
	const double dy[] = { 18, -10, 32, 46, 60, -24 };
	double tx = x + 8, ty = y + 18 > c->y1 - 4 ? y - 10 : y + 18;
	int end = x + 8 + w > c->width - 4;
	int found = 0;
	for (size_t i = 0; i < ARRAY_SIZE(dy) && !found; i++) {
		double cy = y + dy[i];
		if (cy > c->y1 - 4 || cy < c->y0 + 10)
			continue;
		for (int side = 0; side < 2 && !found; side++) {
			struct box bx = text_box(side ? x - 8 : x + 8, cy, w, side);
			if (box_free(c, &bx, c->taken, c->ntaken)) {
				tx = side ? x - 8 : x + 8;
				ty = cy;
				end = side;
				found = 1;
			}
		}
	}
	if (!found)
		tx = end ? x - 8 : x + 8;
	struct box mine = text_box(tx, ty, w, end);
	take_box(c, &mine);
	buf_printf(c->b, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#b00020\"%s>killed: ", tx, ty,
		   end ? " text-anchor=\"end\"" : "");
	xml_text_trunc(c->b, comm, LARGEST_COMM_CHARS);
	buf_printf(c->b, "%s</text>", tail);
}

/* Events: a symbol each on the RSS line (a kill at the time of the peak, the OOM
 * report's figure, at the peak) with its kind and detail as its title; a set's many
 * process starts and exits as ticks on the time axis. */
static void draw_events(struct ctx *c)
{
	struct buf *b = c->b;
	size_t nkills = 0;
	for (size_t i = 0; i < c->nruns; i++)
		for (size_t j = 0; j < c->runs[i].nevents; j++)
			nkills += event_sym(c->runs[i].events[j].kind) == LEGEND_OOM;
	buf_puts(b, "<g class=\"events\">\n");
	for (size_t i = 0; i < c->nruns; i++) {
		const struct chart_run *r = &c->runs[i];
		for (size_t j = 0; j < r->nevents; j++) {
			const struct event *e = &r->events[j];
			int64_t el = e->t - r->run->started_at;
			if (c->rug && event_is_process(e)) {
				buf_printf(b, "<path class=\"proc-event\" d=\"M%.1f %.1fv-6\" stroke=\"#777\"/>\n",
					   px(c, axis_t(c, r, el)), c->y1);
				continue;
			}
			const struct oom_kill *k = kill_of(r, e);
			uint64_t at = samples_rss_at(r->s, r->n, el);
			if (k)
				at = kill_rss(k);	/* the victim's own, not the run's total */
			else if (e->t == r->run->peak_rss_at && r->run->peak_rss > at)
				at = r->run->peak_rss;
			double ex = px(c, axis_t(c, r, el)), ey = py(c, (double)at);
			buf_puts(b, k ? "<g class=\"oom-kill\">" : "<g>");
			symbol(b, event_sym(e->kind), ex, ey);
			if (k && nkills <= KILL_LABELS)
				kill_label(c, k, ex, ey);
			buf_puts(b, "<title>");
			if (k)
				kill_words(b, k);
			else
				xml_text(b, e->kind);
			if (e->detail && e->detail[0]) {
				buf_puts(b, k ? "; " : ": ");
				xml_text(b, e->detail);
			}
			buf_puts(b, "</title></g>\n");
		}
	}
	buf_puts(b, "</g>\n");
}

/* Under the chart of one run: the context panel (CPU, major faults), then a strip per
 * counter or gauge, and how many more there are. */
static void draw_panels(struct ctx *c, const struct panels *p)
{
	struct buf *b = c->b;
	const struct chart_run *r = &c->runs[0];
	if (p->context) {
		buf_printf(b, "<g class=\"context\">\n<path d=\"M%.1f %.1fH%.1f\" stroke=\"#d8dee4\"/>\n", c->x0,
			   p->context_top, c->x1);
		rate_strip(c, r, RATE_CPU, p->context_top + 8, "#4f772d");
		rate_strip(c, r, RATE_MAJFLT, p->context_top + 8 + STRIP_H, "#b00020");
		buf_puts(b, "</g>\n");
	}
	if (!p->nstrips)
		return;
	buf_printf(b, "<g class=\"counters\">\n<path d=\"M%.1f %.1fH%.1f\" stroke=\"#d8dee4\"/>\n", c->x0,
		   p->counters_top, c->x1);
	for (size_t i = 0; i < p->nstrips; i++)
		counter_strip(c, r, &r->counters[i], p->counters_top + 8 + (double)i * STRIP_H,
			      palette[(i + 2) % ARRAY_SIZE(palette)]);
	if (p->more)
		buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#666\">and %zu more (plot --counters NAME,... "
			      "picks them)</text>\n", c->x0, p->counters_top + 8 + (double)p->nstrips * STRIP_H + 10, p->more);
	buf_puts(b, "</g>\n");
}

void svg_chart(struct buf *b, const struct chart_run *runs, size_t nruns,
	       const struct chart_opts *o, struct chart_geom *g)
{
	struct ctx c;
	memset(&c, 0, sizeof(c));
	c.b = b;
	c.runs = runs;
	c.nruns = nruns;
	c.o = o;
	c.wall = o->time == CHART_WALL;
	c.single = nruns == 1;
	c.width = o->width > 0 ? o->width : 960;
	c.height = o->height > 0 ? o->height : 440;

	struct seen s;
	chart_domain(&c, &s);
	struct yscale y;
	chart_yscale(&c, s.vmax, &y);

	size_t nproc_ev = count_proc_events(&c);
	c.rug = nproc_ev > PROC_EVENT_SYMBOLS;
	struct legend *lg = xmalloc(sizeof(*lg));
	lg->n = 0;
	if (c.single)
		legend_one_run(lg, &runs[0], &s);
	else
		legend_runs(lg, &c);
	legend_events(lg, &c, nproc_ev);
	double top = legend_flow(lg, o->title ? 32 : 10, c.width);

	/* the context panel's scale ("80000/s") shares the left margin */
	int context = c.single && !o->no_context && has_context(&runs[0]);
	if (context && y.label_w < 7)
		y.label_w = 7;
	c.x0 = 14 + CHAR_W * (double)y.label_w + 8;
	c.x1 = c.width - 20;

	struct mark_labels m;
	mark_labels_collect(&c, &m);
	mark_labels_stack(&c, &m);
	struct panels p;
	chart_layout(&c, top + m.rows * 14, context, &p);

	draw_head(&c, lg);
	free(lg);
	draw_y_axis(&c, &y);
	draw_x_axis(&c);
	draw_series(&c, &s);
	draw_marks(&c, &m, top);
	free(m.v);
	draw_peaks(&c);
	draw_events(&c);
	draw_panels(&c, &p);
	buf_puts(b, "</svg>\n");

	if (g) {
		g->x0 = c.x0;
		g->x1 = c.x1;
		g->y0 = c.y0;
		g->y1 = c.y1;
		g->t0 = c.t0;
		g->t1 = c.t1;
		g->vmax = c.vmax;
		g->width = c.width;
		g->height = c.height;
	}
}
