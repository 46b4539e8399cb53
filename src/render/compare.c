#include "render/compare.h"
#include "base/fmt.h"
#include "base/parse.h"
#include "base/util.h"
#include "render/json.h"
#include "render/xml.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB (1024.0 * 1024.0)

double cmp_slope(const struct sample *s, size_t n)
{
	if (n < 2)
		return 0;
	/* Centred sums keep the precision for long runs with large values. */
	double mt = 0, mv = 0;
	for (size_t i = 0; i < n; i++) {
		mt += (double)s[i].elapsed_ns / NS_PER_S;
		mv += (double)s[i].mem.rss;
	}
	mt /= (double)n;
	mv /= (double)n;
	double sxy = 0, sxx = 0;
	for (size_t i = 0; i < n; i++) {
		double dt = (double)s[i].elapsed_ns / NS_PER_S - mt;
		sxy += dt * ((double)s[i].mem.rss - mv);
		sxx += dt * dt;
	}
	return sxx > 0 ? sxy / sxx : 0;
}

enum cmp_verdict cmp_classify(double diff_pct, double spread_pct)
{
	double d = fabs(diff_pct);
	if (spread_pct < 0)
		return CMP_UNKNOWN_SPREAD;
	if (d <= spread_pct || d < 0.1)
		return CMP_NO_EVIDENCE;
	if (d > 2 * spread_pct && d >= 1.0)
		return CMP_CLEAR;
	return CMP_UNCLEAR;
}

/* --- the figures --- */

enum { M_PEAK, M_TTP, M_MEAN, M_LAST, M_SLOPE, M_FIXED };
enum kind { K_BYTES, K_SECONDS, K_RATE };

static const char *const m_names[M_FIXED] = { "peak", "time to peak", "mean", "last", "growth" };
static const char *const m_keys[M_FIXED] = {
	"peak_rss_bytes", "time_to_peak_s", "mean_rss_bytes", "last_rss_bytes", "growth_mib_per_s",
};

struct stat {
	double mean, min, max, sd;
};

/* All figures of all runs: vals[run * nm + metric], runs in group order. */
struct table {
	size_t nm, nruns;
	const char **shared;	/* mark labels every run has, in the first run's order */
	size_t nshared;
	double *vals;
	struct stat *gstat;	/* [group * nm + metric] */
};

static enum kind m_kind(size_t m)
{
	return m == M_TTP ? K_SECONDS : m == M_SLOPE ? K_RATE : K_BYTES;
}

static const struct mark *find_mark(const struct cmp_run *r, const char *label)
{
	for (size_t i = 0; i < r->nmarks; i++)
		if (strcmp(r->marks[i].label, label) == 0)
			return &r->marks[i];
	return NULL;
}

static const struct cmp_run *nth_run(const struct cmp_group *g, size_t ng, size_t k)
{
	for (size_t i = 0; i < ng; i++) {
		if (k < g[i].n)
			return &g[i].runs[k];
		k -= g[i].n;
	}
	return NULL;
}

static void table_build(struct table *t, const struct cmp_group *g, size_t ng)
{
	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < ng; i++)
		t->nruns += g[i].n;
	const struct cmp_run *first = nth_run(g, ng, 0);
	t->shared = xcalloc(first && first->nmarks ? first->nmarks : 1, sizeof(*t->shared));
	for (size_t i = 0; first && i < first->nmarks; i++) {
		const char *l = first->marks[i].label;
		int ok = find_mark(first, l) == &first->marks[i];	/* first occurrence only */
		for (size_t k = 1; ok && k < t->nruns; k++)
			ok = find_mark(nth_run(g, ng, k), l) != NULL;
		if (ok)
			t->shared[t->nshared++] = l;
	}
	t->nm = M_FIXED + t->nshared;
	t->vals = xcalloc(t->nruns * t->nm, sizeof(*t->vals));
	for (size_t k = 0; k < t->nruns; k++) {
		const struct cmp_run *r = nth_run(g, ng, k);
		double *v = &t->vals[k * t->nm];
		v[M_PEAK] = (double)r->run->peak_rss;
		/* a run without a peak has no time to it (0: no percentage against it) */
		v[M_TTP] = r->run->peak_rss && r->run->peak_rss_at
				   ? (double)(r->run->peak_rss_at - r->run->started_at) / NS_PER_S : 0;
		double sum = 0;
		for (size_t i = 0; i < r->n; i++)
			sum += (double)r->s[i].mem.rss;
		v[M_MEAN] = r->n ? sum / (double)r->n : run_mean_rss(r->run);
		v[M_LAST] = r->n ? (double)r->s[r->n - 1].mem.rss : (double)r->run->last_rss;
		v[M_SLOPE] = cmp_slope(r->s, r->n) / MIB;
		for (size_t j = 0; j < t->nshared; j++) {
			const struct mark *mk = find_mark(r, t->shared[j]);
			v[M_FIXED + j] = (double)samples_rss_at(r->s, r->n, mk->t - r->run->started_at);
		}
	}
	t->gstat = xcalloc(ng * t->nm, sizeof(*t->gstat));
	size_t k0 = 0;
	for (size_t i = 0; i < ng; i++) {
		for (size_t m = 0; m < t->nm; m++) {
			struct stat *s = &t->gstat[i * t->nm + m];
			double sum = 0;
			for (size_t k = 0; k < g[i].n; k++) {
				double x = t->vals[(k0 + k) * t->nm + m];
				sum += x;
				if (k == 0 || x < s->min)
					s->min = x;
				if (k == 0 || x > s->max)
					s->max = x;
			}
			s->mean = g[i].n ? sum / (double)g[i].n : 0;
			double ss = 0;
			for (size_t k = 0; k < g[i].n; k++) {
				double d = t->vals[(k0 + k) * t->nm + m] - s->mean;
				ss += d * d;
			}
			s->sd = g[i].n > 1 ? sqrt(ss / (double)(g[i].n - 1)) : 0;
		}
		k0 += g[i].n;
	}
}

static void table_free(struct table *t)
{
	free(t->shared);
	free(t->vals);
	free(t->gstat);
}

/* Half the range of a group as a percentage of its mean. */
static double spread_pct(const struct stat *s)
{
	return s->mean != 0 ? (s->max - s->min) / 2 / fabs(s->mean) * 100 : 0;
}

static void fmt_rate(char *out, size_t n, double mib_s, int sign)
{
	double a = fabs(mib_s);
	const char *sg = mib_s < 0 ? "-" : sign ? "+" : "";
	if (a >= 10)
		snprintf(out, n, "%s%.1f MiB/s", sg, a);
	else if (a >= 0.1 || a == 0)
		snprintf(out, n, "%s%.2f MiB/s", sg, a);
	else
		snprintf(out, n, "%s%.2g MiB/s", sg, a);
}

static void fmt_value(char *out, size_t n, size_t m, double v)
{
	char tmp[48];
	switch (m_kind(m)) {
	case K_SECONDS:
		fmt_duration(out, n, (int64_t)(v * NS_PER_S));
		break;
	case K_RATE:
		fmt_rate(out, n, v, 0);
		break;
	default:
		fmt_bytes(tmp, sizeof(tmp), v > 0 ? (uint64_t)llround(v) : 0);
		strlcpy_rsw(out, tmp, n);
	}
}

/* Whether every run of the groups ended with its target still alive ("stopped"): its
 * last sample is then the state it was left in, not a moment of its ending. */
static int all_left_alive(const struct cmp_group *g, size_t ng)
{
	for (size_t i = 0; i < ng; i++)
		for (size_t k = 0; k < g[i].n; k++)
			if (strcmp(g[i].runs[k].run->outcome, OUTCOME_STOPPED) != 0)
				return 0;
	return 1;
}

/* Whether a difference in figure m against base may be given as a percentage: never
 * against a zero base (that is "new", or nothing at all), and a time to peak shorter
 * than the first run's sampling interval is within one step of the sampling: a
 * percentage of it would be noise (a peak at +1ms against one at +5m is not
 * "+29999900%"). The last sample of a target that ended is wherever the last tick
 * fell in its ending (two identical sorts: 2 MiB against 97 MiB): compared only when
 * every target was left running. */
static int pct_fair(const struct cmp_group *g, size_t ng, size_t m, double base)
{
	if (base == 0 || m_kind(m) == K_RATE)
		return 0;
	if (m == M_LAST && !all_left_alive(g, ng))
		return 0;
	if (m_kind(m) == K_SECONDS) {
		const struct run *r0 = g[0].runs[0].run;
		double step = r0->interval_ns > 0 ? (double)r0->interval_ns / NS_PER_S : 1.0;
		return fabs(base) >= step;
	}
	return 1;
}

static void fmt_diff(char *out, size_t n, size_t m, double d, double base, int fair)
{
	char a[48];
	const char *sg = d < 0 ? "-" : "+";
	switch (m_kind(m)) {
	case K_SECONDS:
		fmt_duration(a, sizeof(a), (int64_t)(fabs(d) * NS_PER_S));
		break;
	case K_RATE:
		fmt_rate(a, sizeof(a), fabs(d), 0);
		break;
	default:
		fmt_bytes(a, sizeof(a), (uint64_t)llround(fabs(d)));
	}
	if (fair)
		snprintf(out, n, "%s%s (%+.1f%%)", sg, a, d / fabs(base) * 100);
	else if (m_kind(m) == K_BYTES && base == 0 && d != 0)
		snprintf(out, n, "%s%s (new)", sg, a);
	else if (m_kind(m) != K_RATE && d != 0)
		snprintf(out, n, "%s%s (n/a)", sg, a);
	else
		snprintf(out, n, "%s%s", sg, a);
}

/* --- are the runs comparable? --- */

/* The program a run ran: the last path part of its command's first word (a cgroup
 * run: its path), into out. */
static void program_of(char *out, size_t n, const struct run *r)
{
	const char *t = r->target ? r->target : "";
	if (r->mode && strcmp(r->mode, "cgroup") == 0) {
		strlcpy_rsw(out, t, n);
		return;
	}
	size_t len = strcspn(t, " ");
	const char *base = t;
	for (size_t i = 0; i < len; i++)
		if (t[i] == '/')
			base = t + i + 1;
	len -= (size_t)(base - t);
	if (len >= n)
		len = n - 1;
	memcpy(out, base, len);
	out[len] = '\0';
}

static int is_set(const struct run *r)
{
	return r->tree || (r->mode && strcmp(r->mode, "cgroup") == 0);
}

static int exact_peak(const struct run *r)
{
	const char *p = r->peak_source;
	return p && (strcmp(p, PEAK_FROM_HWM) == 0 || strcmp(p, PEAK_FROM_EXIT) == 0 ||
		     strcmp(p, PEAK_FROM_WAIT) == 0 || strcmp(p, PEAK_FROM_OOM) == 0);
}

/* Appends one warning (a sentence without the final period) to w. */
static void warn_add(struct buf **w, size_t *n, struct buf *text)
{
	*w = xrealloc(*w, (*n + 1) * sizeof(**w));
	(*w)[(*n)++] = *text;
	memset(text, 0, sizeof(*text));
}

/* One reason why runs may not be comparable: each looks at the runs of g (total in all,
 * the first the base), and where it applies writes its warning into t and returns 1. */
typedef int (*cmp_warning_fn)(struct buf *t, const struct cmp_group *g, size_t ng, size_t total);

static int warn_no_base(struct buf *t, const struct cmp_group *g, size_t ng, size_t total)
{
	const struct cmp_run *c0 = nth_run(g, ng, 0);
	(void)total;
	if (c0->n != 0 && c0->run->peak_rss != 0)
		return 0;
	buf_printf(t, "run %lld, the base, has %s: differences against it are given without "
		      "percentages", (long long)c0->run->id, c0->n == 0 ? "no samples" : "no peak");
	return 1;
}

static int warn_interval(struct buf *t, const struct cmp_group *g, size_t ng, size_t total)
{
	const struct run *r0 = nth_run(g, ng, 0)->run;
	char a[256], z[256];
	for (size_t k = 1; k < total; k++) {
		const struct run *r = nth_run(g, ng, k)->run;
		if (r->interval_ns == r0->interval_ns)
			continue;
		int fair = 1;
		for (size_t j = 0; j < total; j++)
			fair &= exact_peak(nth_run(g, ng, j)->run);
		buf_printf(t, "run %lld was sampled every %s and run %lld every %s: the mean, last "
			      "and growth depend on the sampling and are not comparable",
			   (long long)r->id, fmt_duration(a, sizeof(a), r->interval_ns),
			   (long long)r0->id, fmt_duration(z, sizeof(z), r0->interval_ns));
		buf_puts(t, fair ? "; the peaks are (each from VmHWM, an exit record, wait4 or the "
				   "kernel's OOM report, not from a sample)"
				 : "; peaks are comparable only where they come from VmHWM, an exit "
				   "record, wait4 or the OOM report, and some here are sampled: a "
				   "longer interval misses more");
		return 1;
	}
	return 0;
}

static int warn_set_and_one(struct buf *t, const struct cmp_group *g, size_t ng, size_t total)
{
	const struct run *r0 = nth_run(g, ng, 0)->run;
	for (size_t k = 1; k < total; k++) {
		const struct run *r = nth_run(g, ng, k)->run;
		if (is_set(r) == is_set(r0))
			continue;
		const struct run *set = is_set(r) ? r : r0, *one = is_set(r) ? r0 : r;
		buf_printf(t, "run %lld is a set of processes (RSS summed over a tree or a cgroup) "
			      "and run %lld a single process: every figure measures something "
			      "different; compare the largest process of the set instead",
			   (long long)set->id, (long long)one->id);
		return 1;
	}
	return 0;
}

static int warn_program(struct buf *t, const struct cmp_group *g, size_t ng, size_t total)
{
	const struct run *r0 = nth_run(g, ng, 0)->run;
	char a[256], z[256];
	program_of(z, sizeof(z), r0);
	for (size_t k = 1; k < total; k++) {
		const struct run *r = nth_run(g, ng, k)->run;
		program_of(a, sizeof(a), r);
		if (strcmp(a, z) == 0)
			continue;
		buf_printf(t, "run %lld ran ", (long long)r->id);
		buf_put_printable(t, a);
		buf_printf(t, " and run %lld ", (long long)r0->id);
		buf_put_printable(t, z);
		buf_puts(t, ": different programs; the figures are what each used, not a change "
			    "in one of them");
		return 1;
	}
	return 0;
}

static int warn_host(struct buf *t, const struct cmp_group *g, size_t ng, size_t total)
{
	const struct run *r0 = nth_run(g, ng, 0)->run;
	for (size_t k = 1; k < total; k++) {
		const struct run *r = nth_run(g, ng, k)->run;
		if (!(r->host && r0->host && r->host[0] && r0->host[0] && strcmp(r->host, r0->host) != 0))
			continue;
		buf_printf(t, "run %lld ran on host ", (long long)r->id);
		buf_put_printable(t, r->host);
		buf_printf(t, " and run %lld on ", (long long)r0->id);
		buf_put_printable(t, r0->host);
		buf_puts(t, ": memory use can depend on the machine (CPUs, libraries, page cache)");
		return 1;
	}
	return 0;
}

static int warn_memory(struct buf *t, const struct cmp_group *g, size_t ng, size_t total)
{
	const struct run *r0 = nth_run(g, ng, 0)->run;
	char a[256], z[256];
	for (size_t k = 1; k < total; k++) {
		const struct run *r = nth_run(g, ng, k)->run;
		double m = (double)r->mem_total, m0 = (double)r0->mem_total;
		if (!(m > 0 && m0 > 0 && fabs(m - m0) > 0.01 * m0))
			continue;
		buf_printf(t, "run %lld had %s of memory (MemTotal) and run %lld %s: reclaim, caches "
			      "and the OOM killer act at different sizes", (long long)r->id,
			   fmt_bytes(a, sizeof(a), r->mem_total), (long long)r0->id,
			   fmt_bytes(z, sizeof(z), r0->mem_total));
		return 1;
	}
	return 0;
}

/* Why the runs of g are not comparable, each against the first run, in words: a base
 * without samples or peak, sampled at different intervals, a set against a single
 * process, different programs, hosts or memory sizes. Each says which figures stay
 * fair. Returns the count; *w (each a buf to release, then the array to free) holds
 * them. */
static size_t cmp_warnings(const struct cmp_group *g, size_t ng, struct buf **w)
{
	static const cmp_warning_fn checks[] = {
		warn_no_base, warn_interval, warn_set_and_one, warn_program, warn_host, warn_memory,
	};
	size_t n = 0, total = 0;
	*w = NULL;
	for (size_t i = 0; i < ng; i++)
		total += g[i].n;
	if (!nth_run(g, ng, 0))
		return 0;
	struct buf t = { 0 };
	for (size_t i = 0; i < ARRAY_SIZE(checks); i++)
		if (checks[i](&t, g, ng, total))
			warn_add(w, &n, &t);
	buf_release(&t);
	return n;
}

static void warnings_free(struct buf *w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		buf_release(&w[i]);
	free(w);
}

/* --- text --- */

struct grid {
	size_t rows, cols;
	char **cell;	/* rows * cols, malloc'ed or NULL */
};

static void grid_set(struct grid *gr, size_t r, size_t c, const char *s)
{
	free(gr->cell[r * gr->cols + c]);
	gr->cell[r * gr->cols + c] = xstrdup(s);
}

static void grid_print(struct buf *b, struct grid *gr)
{
	size_t *w = xcalloc(gr->cols, sizeof(*w));
	for (size_t r = 0; r < gr->rows; r++)
		for (size_t c = 0; c < gr->cols; c++) {
			const char *s = gr->cell[r * gr->cols + c];
			if (s && utf8_chars(s) > w[c])
				w[c] = utf8_chars(s);
		}
	for (size_t r = 0; r < gr->rows; r++) {
		struct buf line = { 0 };
		for (size_t c = 0; c < gr->cols; c++) {
			const char *s = gr->cell[r * gr->cols + c];
			if (!s)
				s = "";
			buf_puts(&line, s);
			if (c + 1 < gr->cols)
				for (size_t k = utf8_chars(s); k < w[c] + 3; k++)
					buf_putc(&line, ' ');
		}
		while (line.len && line.p[line.len - 1] == ' ')
			line.p[--line.len] = '\0';
		buf_puts(b, buf_str(&line));
		buf_putc(b, '\n');
		buf_release(&line);
	}
	for (size_t i = 0; i < gr->rows * gr->cols; i++)
		free(gr->cell[i]);
	free(gr->cell);
	free(w);
}

/* A label for a column header: at most 22 characters (an ellipsis ends a longer one),
 * control bytes dropped, never cut inside a UTF-8 sequence. */
static void short_label(char *out, size_t n, const char *label)
{
	size_t k = 0, chars = 0;
	const unsigned char *p = (const unsigned char *)label;
	while (*p) {
		size_t len = 1;
		while ((p[len] & 0xc0) == 0x80 && len < 4)
			len++;
		if (*p < 0x20 || *p == 0x7f) {
			p += len;
			continue;
		}
		if (++chars > 22 || k + len + 4 > n) {
			memcpy(out + k, "\xe2\x80\xa6", 3);
			k += 3;
			break;
		}
		memcpy(out + k, p, len);
		k += len;
		p += len;
	}
	out[k] = '\0';
}

static void side_name(char *out, size_t n, const struct cmp_group *g, size_t i, int grouped)
{
	if (grouped)
		snprintf(out, n, "%c", (char)('A' + (i % 26)));
	else
		snprintf(out, n, "run %lld", (long long)g[i].runs[0].run->id);
}

/* The verdict sentence on the peak of side i against side 0. */
static void verdict(struct buf *b, const struct table *t, const struct cmp_group *g, size_t i, int grouped)
{
	char a[32], z[32];
	side_name(z, sizeof(z), g, 0, grouped);
	side_name(a, sizeof(a), g, i, grouped);
	const struct stat *s0 = &t->gstat[0 * t->nm + M_PEAK], *si = &t->gstat[i * t->nm + M_PEAK];
	if (s0->mean == 0) {	/* no percentage against nothing */
		char v[32];
		if (si->mean == 0)
			buf_printf(b, "neither %s nor %s has a peak to compare", a, z);
		else
			buf_printf(b, "%s's peak is %s; %s has no peak to compare it with", a,
				   fmt_bytes(v, sizeof(v), (uint64_t)si->mean), z);
		return;
	}
	double d = (si->mean - s0->mean) / s0->mean * 100;
	double spread = -1;
	if (grouped && g[0].n > 1 && g[i].n > 1) {
		spread = spread_pct(s0);
		if (spread_pct(si) > spread)
			spread = spread_pct(si);
	}
	enum cmp_verdict v = cmp_classify(d, spread);
	const char *dir = d >= 0 ? "higher" : "lower";
	switch (v) {
	case CMP_UNKNOWN_SPREAD:
		if (fabs(d) < 0.1)
			buf_printf(b, "%s's peak is the same as %s's (within 0.1%%)", a, z);
		else
			buf_printf(b, "%s's peak is %.1f%% %s than %s's", a, fabs(d), dir, z);
		buf_puts(b, grouped ? "; a group of one run does not show the spread of repeated runs"
				    : "; with one run each, the spread of repeated runs is unknown "
				      "(compare groups of repeated runs: A1,A2,A3 B1,B2,B3)");
		break;
	case CMP_NO_EVIDENCE:
		buf_printf(b, "the difference in peak between %s and %s (%.1f%%) is within the spread of "
			      "repeated runs (\xc2\xb1%.1f%%): no evidence of a change", a, z, fabs(d), spread);
		break;
	case CMP_UNCLEAR:
		buf_printf(b, "%s's peak is %.1f%% %s than %s's, outside the spread within each group "
			      "(\xc2\xb1%.1f%%) but not by much: more runs would tell", a, fabs(d), dir, z, spread);
		break;
	case CMP_CLEAR:
		buf_printf(b, "%s's peak is %.1f%% %s than %s's, well outside the spread within each group "
			      "(\xc2\xb1%.1f%%)", a, fabs(d), dir, z, spread);
		break;
	}
}

/* The table's two header rows: each side's name (a group's with its number of runs) and
 * label (a group's: "mean ± spread"), each side after the first with a column of its
 * differences. */
static void text_header(struct grid *gr, const struct cmp_group *g, size_t ng, int grouped)
{
	char v[64], d[96], h[64];
	for (size_t i = 0; i < ng; i++) {
		size_t col = i == 0 ? 1 : 2 * i;
		side_name(h, sizeof(h), g, i, grouped);
		if (grouped) {
			char n[96];
			snprintf(n, sizeof(n), "%s (%zu run%s)", h, g[i].n, g[i].n == 1 ? "" : "s");
			grid_set(gr, 0, col, n);
			grid_set(gr, 1, col, "mean \xc2\xb1 spread");
		} else {
			grid_set(gr, 0, col, h);
			if (g[i].runs[0].run->label[0]) {
				short_label(v, sizeof(v), g[i].runs[0].run->label);
				snprintf(d, sizeof(d), "\"%s\"", v);
				grid_set(gr, 1, col, d);
			}
		}
		if (i > 0) {
			side_name(v, sizeof(v), g, 0, grouped);
			snprintf(d, sizeof(d), "vs %s", v);
			grid_set(gr, 0, col + 1, d);
		}
	}
}

/* A row per figure and per shared mark: each side's value (a group's mean and spread)
 * and its difference from the first side. */
static void text_rows(struct grid *gr, const struct table *t, const struct cmp_group *g, size_t ng,
		      int grouped)
{
	char v[64], d[96];
	for (size_t m = 0; m < t->nm; m++) {
		size_t row = 2 + m;
		if (m < M_FIXED) {
			grid_set(gr, row, 0, m_names[m]);
		} else {
			short_label(v, sizeof(v), t->shared[m - M_FIXED]);
			snprintf(d, sizeof(d), "at \"%s\"", v);
			grid_set(gr, row, 0, d);
		}
		for (size_t i = 0; i < ng; i++) {
			size_t col = i == 0 ? 1 : 2 * i;
			const struct stat *s = &t->gstat[i * t->nm + m];
			fmt_value(v, sizeof(v), m, s->mean);
			if (grouped && g[i].n > 1) {
				snprintf(d, sizeof(d), "%s \xc2\xb1%.1f%%", v, spread_pct(s));
				grid_set(gr, row, col, d);
			} else {
				if (m == M_SLOPE)
					fmt_rate(v, sizeof(v), s->mean, 1);
				grid_set(gr, row, col, v);
			}
			if (i > 0) {
				const struct stat *s0 = &t->gstat[m];
				fmt_diff(d, sizeof(d), m, s->mean - s0->mean, s0->mean, pct_fair(g, ng, m, s0->mean));
				grid_set(gr, row, col + 1, d);
			}
		}
	}
}

/* Under a table of groups: each group's runs, and the range and spread of its peaks. */
static void text_groups(struct buf *b, const struct table *t, const struct cmp_group *g, size_t ng)
{
	char h[64], lo[32], hi[32], sd[32];
	buf_putc(b, '\n');
	for (size_t i = 0; i < ng; i++) {
		side_name(h, sizeof(h), g, i, 1);
		buf_printf(b, "%s: run%s", h, g[i].n == 1 ? "" : "s");
		for (size_t k = 0; k < g[i].n; k++)
			buf_printf(b, "%s %lld", k ? "," : "", (long long)g[i].runs[k].run->id);
		const struct stat *s = &t->gstat[i * t->nm + M_PEAK];
		fmt_bytes(lo, sizeof(lo), (uint64_t)s->min);
		fmt_bytes(hi, sizeof(hi), (uint64_t)s->max);
		fmt_bytes(sd, sizeof(sd), (uint64_t)s->sd);
		if (g[i].n > 1)
			buf_printf(b, "; peak %s..%s, stddev %s", lo, hi, sd);
		buf_putc(b, '\n');
	}
}

void compare_text(struct buf *b, const struct cmp_group *g, size_t ng, int grouped)
{
	struct table t;
	if (ng == 0)
		return;
	table_build(&t, g, ng);
	struct grid gr;
	gr.rows = 2 + t.nm;
	gr.cols = 1 + 2 * ng - 1;
	gr.cell = xcalloc(gr.rows * gr.cols, sizeof(*gr.cell));
	text_header(&gr, g, ng, grouped);
	text_rows(&gr, &t, g, ng, grouped);
	grid_print(b, &gr);
	if (grouped)
		text_groups(b, &t, g, ng);
	buf_putc(b, '\n');
	struct buf *w;
	size_t nw = cmp_warnings(g, ng, &w);
	for (size_t i = 0; i < nw; i++)
		buf_printf(b, "warning: %s.\n", buf_str(&w[i]));
	if (nw)
		buf_putc(b, '\n');
	warnings_free(w, nw);
	for (size_t i = 1; i < ng; i++) {
		verdict(b, &t, g, i, grouped);
		buf_puts(b, ".\n");
	}
	table_free(&t);
}

/* --- JSON --- */

static void json_num(struct buf *b, double v)
{
	if (!isfinite(v))
		buf_puts(b, "null");
	else if ((v == floor(v) || fabs(v) >= 1e6) && fabs(v) < 9e15)
		buf_printf(b, "%.0f", v);	/* byte counts: whole bytes */
	else
		buf_printf(b, "%.6g", v);
}

static void json_key(struct buf *b, const struct table *t, size_t m)
{
	if (m < M_FIXED) {
		json_str(b, m_keys[m]);
	} else {
		struct buf k = { 0 };
		buf_puts(&k, "rss_bytes_at:");
		buf_puts(&k, t->shared[m - M_FIXED]);
		json_str(b, buf_str(&k));
		buf_release(&k);
	}
}

/* "runs": each run with its group, its figures and its RSS at each shared mark. */
static void json_runs(struct buf *b, const struct table *t, const struct cmp_group *g, size_t ng,
		      int grouped)
{
	char h[32];
	buf_puts(b, "\"runs\":[");
	size_t k = 0;
	for (size_t i = 0; i < ng; i++)
		for (size_t j = 0; j < g[i].n; j++, k++) {
			const struct run *r = g[i].runs[j].run;
			buf_printf(b, "%s{\"id\":%lld,\"label\":", k ? "," : "", (long long)r->id);
			json_str(b, r->label);
			if (grouped) {
				side_name(h, sizeof(h), g, i, grouped);
				buf_puts(b, ",\"group\":");
				json_str(b, h);
			}
			for (size_t m = 0; m < M_FIXED; m++) {
				buf_putc(b, ',');
				json_key(b, t, m);
				buf_putc(b, ':');
				json_num(b, t->vals[k * t->nm + m]);
			}
			buf_puts(b, ",\"rss_bytes_at_marks\":{");
			for (size_t m = M_FIXED; m < t->nm; m++) {
				if (m > M_FIXED)
					buf_putc(b, ',');
				json_str(b, t->shared[m - M_FIXED]);
				buf_putc(b, ':');
				json_num(b, t->vals[k * t->nm + m]);
			}
			buf_puts(b, "}}");
		}
	buf_putc(b, ']');
}

/* ",groups": each group's runs and the mean, range and spread of each figure. */
static void json_groups(struct buf *b, const struct table *t, const struct cmp_group *g, size_t ng)
{
	char h[32];
	buf_puts(b, ",\"groups\":[");
	for (size_t i = 0; i < ng; i++) {
		side_name(h, sizeof(h), g, i, 1);
		buf_printf(b, "%s{\"name\":", i ? "," : "");
		json_str(b, h);
		buf_puts(b, ",\"runs\":[");
		for (size_t j = 0; j < g[i].n; j++)
			buf_printf(b, "%s%lld", j ? "," : "", (long long)g[i].runs[j].run->id);
		buf_putc(b, ']');
		for (size_t m = 0; m < t->nm; m++) {
			const struct stat *s = &t->gstat[i * t->nm + m];
			buf_putc(b, ',');
			json_key(b, t, m);
			buf_puts(b, ":{\"mean\":");
			json_num(b, s->mean);
			buf_puts(b, ",\"min\":");
			json_num(b, s->min);
			buf_puts(b, ",\"max\":");
			json_num(b, s->max);
			buf_puts(b, ",\"stddev\":");
			json_num(b, s->sd);
			buf_puts(b, ",\"spread_pct\":");
			json_num(b, spread_pct(s));
			buf_putc(b, '}');
		}
		buf_putc(b, '}');
	}
	buf_putc(b, ']');
}

/* ",differences": each side after the first against it, per figure, with a percentage
 * where one is fair. */
static void json_differences(struct buf *b, const struct table *t, const struct cmp_group *g, size_t ng,
			     int grouped)
{
	char h[32], a[32];
	buf_puts(b, ",\"differences\":[");
	for (size_t i = 1; i < ng; i++) {
		side_name(h, sizeof(h), g, i, grouped);
		side_name(a, sizeof(a), g, 0, grouped);
		buf_printf(b, "%s{\"name\":", i > 1 ? "," : "");
		json_str(b, h);
		buf_puts(b, ",\"against\":");
		json_str(b, a);
		for (size_t m = 0; m < t->nm; m++) {
			double base = t->gstat[m].mean, d = t->gstat[i * t->nm + m].mean - base;
			buf_putc(b, ',');
			json_key(b, t, m);
			buf_puts(b, ":{\"diff\":");
			json_num(b, d);
			buf_puts(b, ",\"pct\":");
			if (pct_fair(g, ng, m, base))
				json_num(b, d / fabs(base) * 100);
			else
				buf_puts(b, "null");
			buf_putc(b, '}');
		}
		buf_putc(b, '}');
	}
	buf_putc(b, ']');
}

void compare_json(struct buf *b, const struct cmp_group *g, size_t ng, int grouped)
{
	struct table t;
	table_build(&t, g, ng);
	buf_putc(b, '{');
	json_runs(b, &t, g, ng, grouped);
	if (grouped)
		json_groups(b, &t, g, ng);
	json_differences(b, &t, g, ng, grouped);
	buf_puts(b, ",\"verdicts\":[");
	for (size_t i = 1; i < ng; i++) {
		struct buf s = { 0 };
		verdict(&s, &t, g, i, grouped);
		if (i > 1)
			buf_putc(b, ',');
		json_str(b, buf_str(&s));
		buf_release(&s);
	}
	buf_puts(b, "],\"warnings\":[");
	struct buf *w;
	size_t nw = cmp_warnings(g, ng, &w);
	for (size_t i = 0; i < nw; i++) {
		if (i)
			buf_putc(b, ',');
		json_str(b, buf_str(&w[i]));
	}
	warnings_free(w, nw);
	buf_puts(b, "]}\n");
	table_free(&t);
}
