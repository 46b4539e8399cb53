#include "record/eta.h"

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

int eta_trend_fit(const double *t, const double *y, size_t n, struct eta_trend *out)
{
	double slopes[MAX_PAIRS];
	size_t m = 0;
	long s = 0;
	if (n < 2 || n > ETA_POINTS)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!isfinite(t[i]) || !isfinite(y[i]))
			return -EINVAL;
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++) {
			double dy = y[j] - y[i], dt = t[j] - t[i];
			s += (dy > 0) - (dy < 0);
			if (dt > 0)
				slopes[m++] = dy / dt;
		}
	if (!m)
		return -EINVAL;	/* every point at one time */
	double nn = (double)n;
	double sd = sqrt(nn * (nn - 1) * (2 * nn + 5) / 18);
	out->slope = median(slopes, m);
	out->z = s > 0 ? ((double)s - 1) / sd : s < 0 ? ((double)s + 1) / sd : 0;
	out->n = n;
	out->rising = n >= ETA_MIN_POINTS && out->z >= ETA_MIN_Z && out->slope > 0;
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
}

void eta_init(struct eta_state *e, int64_t interval_ns)
{
	series_init(&e->cg, interval_ns);
	series_init(&e->host, interval_ns);
}

/* Closes the point being filled: into the ring, and the trend refitted. */
static void close_point(struct eta_series *s)
{
	double t[ETA_POINTS], y[ETA_POINTS];
	unsigned slot = (s->head + s->n) % ETA_POINTS;
	if (s->n == ETA_POINTS) {
		slot = s->head;
		s->head = (s->head + 1) % ETA_POINTS;
	} else {
		s->n++;
	}
	s->t[slot] = s->sum_t / s->count;
	s->y[slot] = s->sum_y / s->count;
	for (unsigned i = 0; i < s->n; i++) {
		t[i] = s->t[(s->head + i) % ETA_POINTS];
		y[i] = s->y[(s->head + i) % ETA_POINTS];
	}
	if (s->n < 2 || eta_trend_fit(t, y, s->n, &s->trend) < 0)
		memset(&s->trend, 0, sizeof(s->trend));
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
	s->sum_t += (double)elapsed_ns / 1e9;
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
	if (!s->trend.rising || s->nlast < 3)
		return;
	double head = eta_median3(s->last[0], s->last[1], s->last[2]);
	if (head < 0)
		head = 0;
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
		series_add(&e->host, s->elapsed_ns, (double)s->rss, (double)s->mem_available);
		series_project(&e->host, ETA_HOST, (double)s->mem_available + (double)s->rss, &host);
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
