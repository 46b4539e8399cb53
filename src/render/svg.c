#include "render/svg.h"
#include "base/fmt.h"
#include "base/util.h"
#include "render/procs.h"
#include "render/xml.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NS 1000000000LL
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

uint64_t sample_rss(const struct sample *s) { return s->rss; }
static uint64_t get_hwm(const struct sample *s) { return s->hwm; }
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
	time_t sec = (time_t)(t_ns / NS);
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
	int64_t t0, t1;		/* axis domain */
	double vmax;
	double x0, x1, y0, y1;
	size_t cols;
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
			double top = (double)s->anon + (band >= 1 ? (double)s->file : 0) +
				     (band >= 2 ? (double)s->shmem : 0);
			buf_printf(c->b, "%s%.1f %.1f", j ? " L" : "M", px(c, axis_t(c, r, s->elapsed_ns)),
				   py(c, top));
		}
		for (size_t j = k; j-- > 0;) {
			const struct sample *s = &r->s[idx[j]];
			double bot = band == 0 ? 0 : (double)s->anon + (band == 2 ? (double)s->file : 0);
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

struct legend_item {
	const char *color;
	int kind;	/* 0 line, 1 dashed line, 2 area, 3 dotted, 4.. event symbol */
	struct buf text;	/* escaped */
};

enum { SYM_EXIT = 4, SYM_OOM, SYM_WARN, SYM_OTHER, SYM_TICK };

/* A set's process starts and exits: beyond this many, a tick each along the bottom of
 * the plot instead of a symbol each on the line (a make -j run has hundreds). */
#define PROC_EVENT_SYMBOLS 12

static int proc_event(const struct event *e)
{
	return strcmp(e->kind, "proc_start") == 0 || strcmp(e->kind, "proc_exit") == 0;
}

static int event_sym(const char *kind)
{
	if (strcmp(kind, "exit") == 0)
		return SYM_EXIT;
	if (strcmp(kind, "oom_kill") == 0)
		return SYM_OOM;
	if (strcmp(kind, "warn") == 0)
		return SYM_WARN;
	return SYM_OTHER;
}

static void symbol(struct buf *b, int sym, double x, double y)
{
	switch (sym) {
	case SYM_EXIT:
		buf_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\" fill=\"#fff\" stroke=\"#222\" stroke-width=\"2\"/>", x, y);
		break;
	case SYM_OOM:
		buf_printf(b, "<path d=\"M%.1f %.1fl10 10m0 -10l-10 10\" stroke=\"#b00020\" stroke-width=\"3\" stroke-linecap=\"round\"/>",
			   x - 5, y - 5);
		break;
	case SYM_WARN:
		buf_printf(b, "<path d=\"M%.1f %.1fl5.5 9.5h-11z\" fill=\"#e09f3e\" stroke=\"#8a5a00\"/>", x, y - 6);
		break;
	default:
		buf_printf(b, "<path d=\"M%.1f %.1fl5 5l-5 5l-5 -5z\" fill=\"#777\"/>", x, y - 5);
	}
}

static void legend_swatch(struct buf *b, const struct legend_item *it, double x, double y)
{
	switch (it->kind) {
	case 2:
		buf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"10\" fill=\"%s\"/>", x, y - 5, it->color);
		break;
	case 0: case 1: case 3:
		buf_printf(b, "<path d=\"M%.1f %.1fh16\" stroke=\"%s\" stroke-width=\"2\"%s/>", x - 1, y,
			   it->color, it->kind == 1 ? " stroke-dasharray=\"5 3\"" : it->kind == 3 ? " stroke-dasharray=\"2 2\"" : "");
		break;
	case SYM_TICK:
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
		if (r->s[i].rss > m)
			m = r->s[i].rss;
	return m;
}

/* Widens the axis domain to elapsed time el of run r (el < 0: nothing). */
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
#define SY(v) (y1 - ((double)(v) - (double)lo) / span * (y1 - y0))
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
			buf_printf(b, "M%.1f %.1f", x, SY(cs->v[i]));
		else if (x - col >= 1)
			buf_printf(b, " H%.1f V%.1f", x, SY(cs->v[i]));
		else
			buf_printf(b, " V%.1f", SY(cs->v[i]));
		if (x - col >= 1)
			col = x;
	}
	if (cs->n)
		buf_printf(b, " H%.1f", c->x1);
	buf_puts(b, "\"/></g>\n");
#undef SY
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
		v[k] = which == RATE_CPU ? d / (double)dt * 100 : d / ((double)dt / 1e9);
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
#define RY(x) (y1 - (x) / top_v * (y1 - y0))
	char a[32], z[32];
	buf_printf(b, "<g class=\"%s\"><text x=\"%.1f\" y=\"%.1f\"><tspan font-weight=\"600\" fill=\"%s\">",
		   which == RATE_CPU ? "cpu" : "majflt", c->x0, top + 10, color);
	fmt_rate(a, sizeof(a), hi);
	if (which == RATE_CPU) {
		fmt_rate(z, sizeof(z), sum / span);
		buf_printf(b, "CPU</tspan> in %% of one CPU (user + system): max %s%%, mean %s%%</text>\n", a, z);
	} else {
		buf_printf(b, "major page faults</tspan> per second (reads from disk or swap): max %s/s, "
			      "total %.0f</text>\n", a, sum / 1e9);
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
		buf_printf(b, "M%.1f %.1f", lastx, RY(v[0]));
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
				buf_printf(b, " V%.1f V%.1f", RY(phi), RY(plo));
			pend = 0;
			buf_printf(b, " V%.1f H%.1f", RY(v[i]), x);
			lastx = x;
		}
	}
	buf_puts(b, "\"/></g>\n");
#undef RY
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
	int W = o->width > 0 ? o->width : 960, H = o->height > 0 ? o->height : 440;
	int max_points = o->max_points > 0 ? o->max_points : 1500;
	int single = nruns == 1;

	/* The domain: every sample, mark and event of every run. */
	int have_t = 0, have_dom = 0;
	uint64_t vmax = 0;
	unsigned have = 0;
	uint64_t any_parts = 0, any_hwm = 0, any_file = 0, any_shmem = 0;
	for (size_t i = 0; i < nruns; i++) {
		const struct chart_run *r = &runs[i];
		for (size_t j = 0; j < r->n; j++) {
			const struct sample *s = &r->s[j];
			int64_t t = axis_t(&c, r, s->elapsed_ns);
			if (!have_dom || t < c.t0)
				c.t0 = t;
			if (!have_dom || t > c.t1)
				c.t1 = t;
			have_t = have_dom = 1;
			uint64_t v = s->rss;
			if (single) {
				have |= s->have;
				any_parts |= s->anon | s->file | s->shmem;
				any_file |= s->file;
				any_shmem |= s->shmem;
				any_hwm |= s->hwm;
				if (s->hwm > v)
					v = s->hwm;
				if (s->anon + s->file + s->shmem > v)
					v = s->anon + s->file + s->shmem;
				if (get_pss(s) > v)
					v = get_pss(s);
				if (get_cgroup(s) > v)
					v = get_cgroup(s);
				if (get_gpu(s) > v)
					v = get_gpu(s);
			}
			if (v > vmax)
				vmax = v;
		}
		if (r->stack)
			for (size_t j = 0; j < r->stack->nt; j++)
				if (stack_total(r->stack, j) > vmax)
					vmax = stack_total(r->stack, j);
		/* the reported peak (VmHWM, exit record, OOM report) may be above every sample */
		if (r->run->peak_rss > vmax)
			vmax = r->run->peak_rss;
		for (size_t j = 0; j < r->nmarks; j++) {
			int64_t t = axis_t(&c, r, r->marks[j].t - r->run->started_at);
			if (have_dom && t < c.t0)
				c.t0 = t;
			if (have_dom && t > c.t1)
				c.t1 = t;
		}
		/* The axis spans the whole run: its recorded end, its events (an OOM kill after
		 * the last sample) and the time of its peak, not only the samples. */
		int64_t st = r->run->started_at;
		extend(&c, &have_dom, r, r->run->ended_at > st ? r->run->ended_at - st : -1);
		extend(&c, &have_dom, r, r->run->peak_rss && r->run->peak_rss_at >= st ?
					  r->run->peak_rss_at - st : -1);
		for (size_t j = 0; j < r->nevents; j++)
			extend(&c, &have_dom, r, r->events[j].t >= st ? r->events[j].t - st : -1);
	}
	if (!c.wall && c.t0 > 0)
		c.t0 = 0;
	if (c.t1 <= c.t0)
		c.t1 = c.t0 + NS;
	if (vmax == 0)
		vmax = 1024 * 1024;

	/* Y ticks: the unit of the largest value, a nice step, the top rounded up to it. */
	enum unit yu = unit_for(vmax);
	double ubytes = (double)(1ULL << (10 * yu));
	double ystep = nice_step(in_unit(vmax, yu), 5) * ubytes;
	if (ystep < 1)
		ystep = 1;
	double ytop = ceil((double)vmax / ystep) * ystep;
	if (ytop < (double)vmax * 1.04)
		ytop += ystep;
	c.vmax = ytop;
	char lab[64];
	size_t ylab_w = 1;
	for (double v = 0; v <= ytop + ystep / 2; v += ystep) {
		svg_tick_bytes(lab, sizeof(lab), v, yu, ystep);
		if (strlen(lab) > ylab_w)
			ylab_w = strlen(lab);
	}

	/* Legend items. */
	struct legend_item items[64];
	size_t nitems = 0;
#define ADD_ITEM(col, k, txt) do { if (nitems < ARRAY_SIZE(items)) { \
		items[nitems].color = (col); items[nitems].kind = (k); \
		memset(&items[nitems].text, 0, sizeof(struct buf)); \
		buf_puts(&items[nitems].text, (txt)); nitems++; } } while (0)
	if (single) {
		ADD_ITEM(C_RSS, 0, runs[0].stack ? "RSS (all processes)" : "RSS");
		const struct proc_stack *st = runs[0].stack;
		for (size_t l = 0; st && l < st->nlayers && nitems < ARRAY_SIZE(items); l++) {
			items[nitems].color = layer_fill(st, l);
			items[nitems].kind = 2;
			memset(&items[nitems].text, 0, sizeof(struct buf));
			if (st->others && l == st->nlayers - 1) {
				buf_printf(&items[nitems].text, "%zu other process%s", st->others,
					   st->others == 1 ? "" : "es");
			} else {
				xml_text_trunc(&items[nitems].text, st->layers[l].comm, 24);
				buf_printf(&items[nitems].text, " (%d)", (int)st->layers[l].pid);
			}
			nitems++;
		}
		if (any_parts && !st) {
			ADD_ITEM(C_ANON, 2, "anon");
			if (any_file)
				ADD_ITEM(C_FILE, 2, "file");
			if (any_shmem)
				ADD_ITEM(C_SHMEM, 2, "shmem");
		}
		if (any_hwm)
			ADD_ITEM(C_HWM, 1, "HWM (peak so far)");
		if (have & SAMPLE_PSS)
			ADD_ITEM(C_PSS, 3, "PSS");
		if (have & SAMPLE_CGROUP)
			ADD_ITEM(C_CGROUP, 0, "cgroup");
		if (have & SAMPLE_GPU)
			ADD_ITEM(C_GPU, 0, "GPU");
	} else {
		for (size_t i = 0; i < nruns && nitems < ARRAY_SIZE(items); i++) {
			items[nitems].color = run_color(&c, i);
			items[nitems].kind = 0;
			memset(&items[nitems].text, 0, sizeof(struct buf));
			run_name(&items[nitems].text, &runs[i]);
			if (runs[i].run->peak_rss) {
				struct buf t = { 0 };
				char v[32];
				const char *from = run_peak_from(runs[i].run, max_sampled(&runs[i]));
				buf_printf(&t, " (peak %s%s%s)", fmt_bytes(v, sizeof(v), runs[i].run->peak_rss),
					   from ? " " : "", from ? from : "");
				xml_text(&items[nitems].text, buf_str(&t));
				buf_release(&t);
			}
			nitems++;
		}
	}
	unsigned syms = 0;
	size_t nproc_ev = 0;
	for (size_t i = 0; i < nruns; i++)
		for (size_t j = 0; j < runs[i].nevents; j++)
			nproc_ev += proc_event(&runs[i].events[j]);
	int rug = nproc_ev > PROC_EVENT_SYMBOLS;
	for (size_t i = 0; i < nruns; i++)
		for (size_t j = 0; j < runs[i].nevents; j++)
			if (!rug || !proc_event(&runs[i].events[j]))
				syms |= 1u << event_sym(runs[i].events[j].kind);
	static const char *const sym_names[] = { [SYM_EXIT] = "exit", [SYM_OOM] = "OOM kill",
						 [SYM_WARN] = "warning", [SYM_OTHER] = "event" };
	for (int k = SYM_EXIT; k <= SYM_OTHER; k++)
		if (syms & (1u << k))
			ADD_ITEM("", k, sym_names[k]);
	if (rug) {
		char t[64];
		snprintf(t, sizeof(t), "process start or exit (%zu)", nproc_ev);
		ADD_ITEM("", SYM_TICK, t);
	}

	/* Legend rows: items flow left to right, wrapping at the width. */
	double lx[64], ly[64];
	double top = 10;
	if (o->title)
		top += 22;
	double x = 16;
	int lrow = 0;
	for (size_t i = 0; i < nitems; i++) {
		double w = 22 + CHAR_W * (double)utf8_chars(buf_str(&items[i].text)) + 16;
		if (x + w > W - 10 && x > 16) {
			x = 16;
			lrow++;
		}
		lx[i] = x;
		ly[i] = top + 8 + lrow * 18;
		x += w;
	}
	top += (nitems ? (lrow + 1) * 18 : 0) + 6;

	/* the context panel's scale ("80000/s") shares the left margin */
	if (single && !o->no_context && has_context(&runs[0]) && ylab_w < 7)
		ylab_w = 7;
	c.x0 = 14 + CHAR_W * (double)ylab_w + 8;
	c.x1 = W - 20;

	/* Mark labels: each in the first row above the plot where it does not collide with
	 * the label before it, so close marks stack instead of overlapping. */
	size_t nml = 0;
	for (size_t i = 0; i < nruns; i++)
		nml += runs[i].nmarks;
	struct mark_label *ml = xcalloc(nml ? nml : 1, sizeof(*ml));
	nml = 0;
	for (size_t i = 0; i < nruns; i++)
		for (size_t j = 0; j < runs[i].nmarks; j++) {
			const struct chart_run *r = &runs[i];
			double mx = px(&c, axis_t(&c, r, r->marks[j].t - r->run->started_at));
			/* the same label at the same place (runs aligned at it) is drawn once */
			int dup = 0;
			for (size_t k = 0; k < nml; k++)
				if (fabs(ml[k].x - mx) < 1 && strcmp(ml[k].text, r->marks[j].label) == 0)
					dup = 1;
			if (dup)
				continue;
			ml[nml].x = mx;
			ml[nml].text = r->marks[j].label;
			ml[nml].color = single ? C_MARK : run_color(&c, i);
			nml++;
		}
	qsort(ml, nml, sizeof(*ml), cmp_ml);
	double row_end[MAX_ROWS];
	int rows = 0;
	for (int r = 0; r < MAX_ROWS; r++)
		row_end[r] = -1e9;
	for (size_t i = 0; i < nml; i++) {
		size_t chars = utf8_chars(ml[i].text);
		double w = CHAR_W * (double)(chars > MARK_CHARS ? MARK_CHARS : chars);
		ml[i].right = ml[i].x + 4 + w > c.x1 + 10;
		double start = ml[i].right ? ml[i].x - 4 - w : ml[i].x - 1;
		double end = ml[i].right ? ml[i].x + 1 : ml[i].x + 4 + w;
		int best = 0;
		for (int r = 0; r < MAX_ROWS; r++) {
			if (row_end[r] + 6 <= start) {
				best = r;
				break;
			}
			if (row_end[r] < row_end[best])
				best = r;
		}
		ml[i].row = best;
		row_end[best] = end;
		if (best + 1 > rows)
			rows = best + 1;
	}
	double mark_band = rows * 14;
	c.y0 = top + mark_band + 8;
	c.y1 = H - 46;
	if (c.y1 - c.y0 < 60)
		c.y1 = c.y0 + 60;
	H = (int)(c.y1 + 46);
	/* Counters and gauges of one run: a strip each under the time axis. */
	size_t nstrips = 0, nc_more = 0;
	/* First the context (CPU, major faults) when the run recorded it, then counters. */
	int context = single && !o->no_context && has_context(&runs[0]);
	double context_top = H;
	if (context)
		H += 8 + 2 * STRIP_H;
	double panel_top = H;
	if (single) {
		nstrips = runs[0].ncounters < COUNTER_STRIPS ? runs[0].ncounters : COUNTER_STRIPS;
		nc_more = runs[0].ncounters - nstrips;
		if (nstrips)
			H += (int)(8 + nstrips * STRIP_H + (nc_more ? 16 : 0));
	}
	double plot_w = c.x1 - c.x0;
	c.cols = (size_t)(plot_w < max_points / 2 ? plot_w : max_points / 2);
	if (c.cols < 2)
		c.cols = 2;

	buf_printf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"rsw-chart\" width=\"%d\" height=\"%d\" "
		   "viewBox=\"0 0 %d %d\" font-family=\"" FONT "\" font-size=\"11\" fill=\"#333\">\n",
		   W, H, W, H);
	buf_printf(b, "<rect width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n", W, H);
	if (o->title) {
		buf_puts(b, "<text x=\"16\" y=\"22\" font-size=\"14\" font-weight=\"600\" fill=\"#222\">");
		xml_text_trunc(b, o->title, (size_t)((W - 32) / 7.5));
		buf_puts(b, "</text>\n");
	}
	for (size_t i = 0; i < nitems; i++) {
		legend_swatch(b, &items[i], lx[i], ly[i]);
		buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", lx[i] + 20, ly[i] + 4,
			   buf_str(&items[i].text));
		buf_release(&items[i].text);
	}

	/* Grid and y axis. */
	buf_puts(b, "<g class=\"axis-y\" text-anchor=\"end\">\n");
	for (double v = 0; v <= ytop + ystep / 2; v += ystep) {
		double y = py(&c, v);
		svg_tick_bytes(lab, sizeof(lab), v, yu, ystep);
		buf_printf(b, "<path d=\"M%.1f %.1fH%.1f\" stroke=\"%s\"/><text x=\"%.1f\" y=\"%.1f\">%s</text>\n",
			   c.x0, y, c.x1, v == 0 ? "#999" : "#e6e6e6", c.x0 - 6, y + 4, lab);
	}
	buf_puts(b, "</g>\n");

	/* X axis: ticks at multiples of a readable step. */
	double span_s = (double)(c.t1 - c.t0) / 1e9;
	int target = (int)(plot_w / 90);
	if (target < 2)
		target = 2;
	double step = time_step(span_s, target);
	int64_t step_ns = (int64_t)llround(step * 1e9);
	if (step_ns < 1)
		step_ns = 1;
	int64_t off = 0;
	if (c.wall) {
		time_t sec = (time_t)(c.t0 / NS);
		struct tm tm;
		localtime_r(&sec, &tm);
		off = (int64_t)tm.tm_gmtoff * NS;
	}
	/* the first multiple of the step at or after the start, also for negative times */
	int64_t first = (c.t0 + off) / step_ns * step_ns;
	if (first > c.t0 + off)
		first -= step_ns;
	if (first < c.t0 + off)
		first += step_ns;
	buf_puts(b, "<g class=\"axis-x\" text-anchor=\"middle\">\n");
	buf_printf(b, "<path d=\"M%.1f %.1fH%.1f\" stroke=\"#999\"/>\n", c.x0, c.y1, c.x1);
	for (int64_t t = first; t - off <= c.t1; t += step_ns) {
		double tx = px(&c, t - off);
		if (c.wall)
			fmt_tick_wall(lab, sizeof(lab), t - off, step);
		else
			fmt_tick_elapsed(lab, sizeof(lab), (double)t / 1e9, step);
		buf_printf(b, "<path d=\"M%.1f %.1fv5\" stroke=\"#999\"/><text x=\"%.1f\" y=\"%.1f\">%s</text>\n",
			   tx, c.y1, tx, c.y1 + 17, lab);
	}
	buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#666\">", (c.x0 + c.x1) / 2, c.y1 + 36);
	if (o->x_title)
		xml_text(b, o->x_title);
	else
		buf_puts(b, c.wall ? "local time" : "elapsed time");
	buf_puts(b, "</text>\n</g>\n");

	if (!have_t)
		buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#888\">no samples</text>\n",
			   (c.x0 + c.x1) / 2, (c.y0 + c.y1) / 2);

	/* Series. */
	buf_puts(b, "<g class=\"series\">\n");
	if (single && runs[0].n) {
		const struct chart_run *r = &runs[0];
		if (r->stack)
			stack_areas(&c, r);
		else if (any_parts)
			stacked_areas(&c, r);
		if (have & SAMPLE_CGROUP)
			series_path(&c, r, get_cgroup, SAMPLE_CGROUP, C_CGROUP, NULL);
		if (have & SAMPLE_PSS)
			series_path(&c, r, get_pss, SAMPLE_PSS, C_PSS, " stroke-dasharray=\"2 2\"");
		if (have & SAMPLE_GPU)
			series_path(&c, r, get_gpu, SAMPLE_GPU, C_GPU, NULL);
		if (any_hwm)
			series_path(&c, r, get_hwm, 0, C_HWM, " stroke-dasharray=\"5 3\"");
		series_path(&c, r, sample_rss, 0, C_RSS, NULL);
	} else {
		for (size_t i = nruns; i-- > 0;)
			if (runs[i].n)
				series_path(&c, &runs[i], sample_rss, 0, run_color(&c, i), NULL);
	}
	buf_puts(b, "</g>\n");

	/* Marks: a dashed line through the plot and its label in the band above. */
	buf_puts(b, "<g class=\"marks\">\n");
	for (size_t i = 0; i < nml; i++) {
		double ty = top + 10 + ml[i].row * 14;
		buf_printf(b, "<path d=\"M%.1f %.1fV%.1f\" stroke=\"%s\" stroke-dasharray=\"3 3\"/>",
			   ml[i].x, ty - 9, c.y1, ml[i].color);
		buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" fill=\"%s\"%s>", ml[i].right ? ml[i].x - 4 : ml[i].x + 4,
			   ty, ml[i].color, ml[i].right ? " text-anchor=\"end\"" : "");
		xml_text_trunc(b, ml[i].text, MARK_CHARS);
		buf_puts(b, "<title>");
		xml_text(b, ml[i].text);
		buf_puts(b, "</title></text>\n");
	}
	buf_puts(b, "</g>\n");
	free(ml);

	/* A set: its largest process by peak, as a dotted line at that peak with its name,
	 * so the picture says who used the memory (by process, the legend names it). */
	if (single && !runs[0].stack && run_is_set(runs[0].run) && runs[0].run->peak_process_pid > 0 &&
	    runs[0].run->peak_process_rss) {
		const struct run *r = runs[0].run;
		char v[32];
		double lpy = py(&c, (double)r->peak_process_rss);
		buf_printf(b, "<g class=\"largest\"><path d=\"M%.1f %.1fH%.1f\" stroke=\"#8d6e63\" "
			      "stroke-dasharray=\"1 3\" stroke-width=\"1.5\"/><text x=\"%.1f\" y=\"%.1f\" fill=\"#6d4c41\">"
			      "largest process: ", c.x0, lpy, c.x1, c.x0 + 6, lpy - 4 < c.y0 + 10 ? c.y0 + 10 : lpy - 4);
		xml_text_trunc(b, r->peak_process_comm && r->peak_process_comm[0] ? r->peak_process_comm : "?", 32);
		buf_printf(b, " (pid %d), peak %s</text></g>\n", (int)r->peak_process_pid,
			   fmt_bytes(v, sizeof(v), r->peak_process_rss));
	}

	/* The reported peak of each run (which may be above every sample: VmHWM, an exit
	 * record, the OOM report), then events on the RSS line. One run gets its peak
	 * labelled, in the words show and report use; overlays name it in the legend. */
	for (size_t i = 0; i < nruns; i++) {
		const struct chart_run *r = &runs[i];
		if (!r->run->peak_rss)
			continue;
		int64_t pe = r->run->peak_rss_at > r->run->started_at ? r->run->peak_rss_at - r->run->started_at : 0;
		double ppx = px(&c, axis_t(&c, r, pe)), ppy = py(&c, (double)r->run->peak_rss);
		const char *col = run_color(&c, i);
		buf_printf(b, "<g class=\"peak\"><circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"%s/>",
			   ppx, ppy, single ? col : "#fff", single ? "" : " stroke-width=\"2\"");
		if (!single)
			buf_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"/>",
				   ppx, ppy, col);
		if (single) {
			struct buf t = { 0 };
			char v[32];
			const char *from = run_peak_from(r->run, max_sampled(r));
			buf_printf(&t, "peak %s", fmt_bytes(v, sizeof(v), r->run->peak_rss));
			if (from)
				buf_printf(&t, " %s", from);
			/* kept inside the canvas: right of the dot, else left of it, else at the edge */
			double tw = CHAR_W * 1.1 * (double)utf8_chars(buf_str(&t));
			double tx = ppx + 7;
			int end = 0;
			if (tx + tw > W - 4) {
				end = 1;
				tx = ppx - 7;
				if (tx - tw < 4)
					tx = 4 + tw;
			}
			buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" font-weight=\"600\" fill=\"%s\"%s>", tx,
				   ppy - 6 < c.y0 + 10 ? c.y0 + 10 : ppy - 6, col, end ? " text-anchor=\"end\"" : "");
			xml_text(b, buf_str(&t));
			buf_puts(b, "</text>");
			buf_release(&t);
		}
		buf_puts(b, "</g>\n");
	}
	buf_puts(b, "<g class=\"events\">\n");
	for (size_t i = 0; i < nruns; i++) {
		const struct chart_run *r = &runs[i];
		for (size_t j = 0; j < r->nevents; j++) {
			const struct event *e = &r->events[j];
			int64_t el = e->t - r->run->started_at;
			if (rug && proc_event(e)) {
				buf_printf(b, "<path class=\"proc-event\" d=\"M%.1f %.1fv-6\" stroke=\"#777\"/>\n",
					   px(&c, axis_t(&c, r, el)), c.y1);
				continue;
			}
			/* on the RSS line; a kill at the time of the peak (the OOM report's
			 * figure) at the peak */
			uint64_t at = samples_rss_at(r->s, r->n, el);
			if (e->t == r->run->peak_rss_at && r->run->peak_rss > at)
				at = r->run->peak_rss;
			double ex = px(&c, axis_t(&c, r, el)), ey = py(&c, (double)at);
			buf_puts(b, "<g>");
			symbol(b, event_sym(e->kind), ex, ey);
			buf_puts(b, "<title>");
			xml_text(b, e->kind);
			if (e->detail && e->detail[0]) {
				buf_puts(b, ": ");
				xml_text(b, e->detail);
			}
			buf_puts(b, "</title></g>\n");
		}
	}
	buf_puts(b, "</g>\n");
	if (context) {
		buf_printf(b, "<g class=\"context\">\n<path d=\"M%.1f %.1fH%.1f\" stroke=\"#d8dee4\"/>\n", c.x0,
			   context_top, c.x1);
		rate_strip(&c, &runs[0], RATE_CPU, context_top + 8, "#4f772d");
		rate_strip(&c, &runs[0], RATE_MAJFLT, context_top + 8 + STRIP_H, "#b00020");
		buf_puts(b, "</g>\n");
	}
	if (nstrips) {
		buf_printf(b, "<g class=\"counters\">\n<path d=\"M%.1f %.1fH%.1f\" stroke=\"#d8dee4\"/>\n", c.x0,
			   panel_top, c.x1);
		for (size_t i = 0; i < nstrips; i++)
			counter_strip(&c, &runs[0], &runs[0].counters[i], panel_top + 8 + (double)i * STRIP_H,
				      palette[(i + 2) % ARRAY_SIZE(palette)]);
		if (nc_more) {
			buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#666\">and %zu more (plot --counters NAME,... "
				      "picks them)</text>\n", c.x0, panel_top + 8 + (double)nstrips * STRIP_H + 10, nc_more);
		}
		buf_puts(b, "</g>\n");
	}
	buf_puts(b, "</svg>\n");

	if (g) {
		g->x0 = c.x0;
		g->x1 = c.x1;
		g->y0 = c.y0;
		g->y1 = c.y1;
		g->t0 = c.t0;
		g->t1 = c.t1;
		g->vmax = c.vmax;
		g->width = W;
		g->height = H;
	}
}
