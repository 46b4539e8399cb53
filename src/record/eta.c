#include "record/eta.h"
#include "base/parse.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#define MAX_PAIRS (ETA_POINTS * (ETA_POINTS - 1) / 2)

/* The k-th smallest of v[0..n) (0-based), by Hoare's selection; reorders v. Expected
 * linear time; the middle element as pivot keeps sorted input (the usual case here:
 * slopes of a steady trend) linear too. */
static double select_kth(double *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;
	while (lo < hi) {
		double pivot = v[lo + (hi - lo) / 2];
		size_t i = lo, j = hi;
		while (i <= j) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j) {
				double tmp = v[i];
				v[i] = v[j];
				v[j] = tmp;
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return v[k];
	}
	return v[k];
}

/* The median of v[0..n), n > 0; reorders v. */
static double median(double *v, size_t n)
{
	size_t k = n / 2;
	double hi = select_kth(v, n, k);
	if (n % 2)
		return hi;
	/* after the selection, v[0..k) holds the k smallest: the largest of them */
	double lo = v[0];
	for (size_t i = 1; i < k; i++)
		if (v[i] > lo)
			lo = v[i];
	return (lo + hi) / 2;
}

/* The Theil slope of n >= 2 points: the median of the slopes of the pairs at least
 * half the points apart (Theil's own choice of pairs: a quarter as many as all pairs
 * to select from, each over a long baseline). -EINVAL when no pair has time between. */
static int theil_slope(const double *t, const double *y, size_t n, double *out)
{
	double slopes[MAX_PAIRS];
	size_t m = 0, half = n / 2;
	for (size_t i = 0; i + half < n; i++)
		for (size_t j = i + half; j < n; j++) {
			double dt = t[j] - t[i];
			if (dt > 0)
				slopes[m++] = (y[j] - y[i]) / dt;
		}
	if (!m)
		return -EINVAL;
	*out = median(slopes, m);
	return 0;
}

/* Mann-Kendall's z from S (the sum of the signs of y[j] - y[i] over all pairs i < j)
 * and n, without the correction for ties (ties make the test stricter). */
static double mk_z(long s, size_t n)
{
	double nn = (double)n;
	double sd = sqrt(nn * (nn - 1) * (2 * nn + 5) / 18);
	return s > 0 ? ((double)s - 1) / sd : s < 0 ? ((double)s + 1) / sd : 0;
}

static void trend_set(struct eta_trend *out, double slope, long s, size_t n)
{
	out->slope = slope;
	out->z = mk_z(s, n);
	out->n = n;
	out->rising = n >= ETA_MIN_POINTS && out->z >= ETA_MIN_Z && slope > 0;
}

static int sign(double d)
{
	return (d > 0) - (d < 0);
}

int eta_trend_fit(const double *t, const double *y, size_t n, struct eta_trend *out)
{
	long s = 0;
	double slope;
	if (n < 2 || n > ETA_POINTS)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!isfinite(t[i]) || !isfinite(y[i]))
			return -EINVAL;
	if (theil_slope(t, y, n, &slope) < 0)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			s += sign(y[j] - y[i]);
	trend_set(out, slope, s, n);
	return 0;
}

double eta_median3(double a, double b, double c)
{
	if (a > b) {
		double x = a;
		a = b;
		b = x;
	}
	/* a <= b */
	return c <= a ? a : c >= b ? b : c;
}

static void series_init(struct eta_series *s, int64_t interval_ns)
{
	memset(s, 0, sizeof(*s));
	s->spacing_ns = ETA_WINDOW_NS / ETA_POINTS;
	if (interval_ns > s->spacing_ns)
		s->spacing_ns = interval_ns;
	s->bucket = -1;
	s->rising_since = -1;
}

void eta_init(struct eta_state *e, int64_t interval_ns)
{
	series_init(&e->cg, interval_ns);
	series_init(&e->host, interval_ns);
}

/* Closes the point being filled: into the window (the oldest point out when it is
 * full), Mann-Kendall's S updated for the pairs that left and came (O(n)), and, when
 * that says memory rises, the slope refitted (O(n^2 / 8)). */
static void close_point(struct eta_series *s)
{
	double t = s->sum_t / s->count, y = s->sum_y / s->count;
	if (s->n == ETA_POINTS) {
		for (unsigned i = 1; i < s->n; i++)
			s->mk_s -= sign(s->y[i] - s->y[0]);
		memmove(s->t, s->t + 1, (s->n - 1) * sizeof(*s->t));
		memmove(s->y, s->y + 1, (s->n - 1) * sizeof(*s->y));
		s->n--;
	}
	for (unsigned i = 0; i < s->n; i++)
		s->mk_s += sign(y - s->y[i]);
	s->t[s->n] = t;
	s->y[s->n] = y;
	s->n++;
	/* The slope only matters when memory rises: otherwise it is not fitted (a flat or
	 * falling figure, the usual case, costs O(n) a point) */
	double slope = 0;
	trend_set(&s->trend, 1, s->mk_s, s->n);
	if (s->trend.rising && theil_slope(s->t, s->y, s->n, &slope) < 0)
		slope = 0;
	trend_set(&s->trend, slope, s->mk_s, s->n);
	s->recent_holds = 0;
	if (!s->trend.rising) {
		s->rising_since = -1;
		return;
	}
	if (s->rising_since < 0)
		s->rising_since = s->t[0];
	/* The last quarter, fitted alone: does it still rise as the window does? */
	unsigned r = s->n / 4 > ETA_MIN_POINTS ? s->n / 4 : ETA_MIN_POINTS;
	double recent;
	if (theil_slope(s->t + s->n - r, s->y + s->n - r, r, &recent) == 0)
		s->recent_holds = recent >= s->trend.slope / 2;
}

/* Adds a sample of the figure (y) and the headroom left under its limit. */
static void series_add(struct eta_series *s, int64_t elapsed_ns, double y, double headroom)
{
	int64_t b = elapsed_ns / s->spacing_ns;
	if (s->count && b != s->bucket)
		close_point(s);
	if (!s->count || b != s->bucket) {
		s->bucket = b;
		s->sum_t = s->sum_y = 0;
		s->count = 0;
	}
	s->sum_t += (double)elapsed_ns / NS_PER_S;
	s->sum_y += y;
	s->count++;
	if (s->nlast == 3) {
		s->last[0] = s->last[1];
		s->last[1] = s->last[2];
		s->last[2] = headroom;
	} else {
		s->last[s->nlast++] = headroom;
	}
}

/* The projection of one series, or have = 0. */
static void series_project(const struct eta_series *s, enum eta_limit l, double limit,
			   struct eta_projection *out)
{
	memset(out, 0, sizeof(*out));
	if (!s->trend.rising || !s->recent_holds || s->nlast < 3)
		return;
	double head = eta_median3(s->last[0], s->last[1], s->last[2]);
	if (head < 0)
		head = 0;
	/* no further ahead than a few times as long as the rise has been seen */
	if (head / s->trend.slope > ETA_HORIZON * (s->t[s->n - 1] - s->rising_since))
		return;
	out->have = 1;
	out->limit = l;
	out->rate = s->trend.slope;
	out->eta_s = head / s->trend.slope;
	out->headroom = (uint64_t)head;
	out->limit_bytes = (uint64_t)limit;
}

/* A series whose figure stopped being sampled starts afresh when it comes back. */
static void series_forget(struct eta_series *s)
{
	series_init(s, s->spacing_ns);
}

void eta_add(struct eta_state *e, const struct sample *s, struct eta_projection *out)
{
	struct eta_projection cg, host;
	memset(out, 0, sizeof(*out));
	if ((s->have & SAMPLE_CGROUP) && s->cgroup_limit && s->cgroup_limit != UINT64_MAX) {
		double lim = (double)s->cgroup_limit, use = (double)s->cgroup;
		series_add(&e->cg, s->elapsed_ns, use, lim - use);
		series_project(&e->cg, ETA_CGROUP, lim, &cg);
	} else {
		if (e->cg.n || e->cg.count)
			series_forget(&e->cg);
		cg.have = 0;
	}
	if (s->mem_available) {
		series_add(&e->host, s->elapsed_ns, (double)s->mem.rss, (double)s->mem_available);
		series_project(&e->host, ETA_HOST, (double)s->mem_available + (double)s->mem.rss, &host);
	} else {
		if (e->host.n || e->host.count)
			series_forget(&e->host);
		host.have = 0;
	}
	if (cg.have && (!host.have || cg.eta_s <= host.eta_s))
		*out = cg;
	else if (host.have)
		*out = host;
}

const char *eta_limit_name(enum eta_limit l)
{
	return l == ETA_CGROUP ? "cgroup limit" : l == ETA_HOST ? "MemAvailable" : "";
}

const char *eta_limit_key(enum eta_limit l)
{
	return l == ETA_CGROUP ? "cgroup" : l == ETA_HOST ? "host" : "";
}
