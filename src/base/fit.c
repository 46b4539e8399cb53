#include "base/fit.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A pivot smaller than this (columns have unit length) means the column is, to double
 * precision, a combination of the ones before it. */
#define RANK_TOL 1e-9

int fit_ols(const double *x, const double *y, size_t n, size_t k, struct fit *out,
	    double *resid, size_t *bad)
{
	size_t p = k + 1;
	if (p > FIT_MAX_COEF || n < p)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(y[i]))
			return -EINVAL;
		for (size_t j = 0; j < k; j++)
			if (!isfinite(x[i * k + j]))
				return -EINVAL;
	}
	/* a: the design, column-major, each column scaled to unit length (scale[j]) */
	double *a = malloc(n * p * sizeof(*a));
	double *b = malloc(n * sizeof(*b));
	if (!a || !b) {
		free(a);
		free(b);
		return -ENOMEM;
	}
	double scale[FIT_MAX_COEF];
	for (size_t j = 0; j < p; j++) {
		double ss = 0;
		for (size_t i = 0; i < n; i++) {
			double v = j == 0 ? 1.0 : x[i * k + j - 1];
			a[j * n + i] = v;
			ss += v * v;
		}
		scale[j] = sqrt(ss);
		if (scale[j] == 0) {	/* a regressor that is 0 everywhere */
			free(a);
			free(b);
			if (bad)
				*bad = j;
			return -EDOM;
		}
		for (size_t i = 0; i < n; i++)
			a[j * n + i] /= scale[j];
	}
	memcpy(b, y, n * sizeof(*b));

	/* Householder: column j below the diagonal is folded onto the diagonal; the same
	 * reflection is applied to the columns right of it and to b. */
	double rdiag[FIT_MAX_COEF];
	for (size_t j = 0; j < p; j++) {
		double *c = &a[j * n];
		double norm = 0;
		for (size_t i = j; i < n; i++)
			norm += c[i] * c[i];
		norm = sqrt(norm);
		if (norm < RANK_TOL) {
			free(a);
			free(b);
			if (bad)
				*bad = j;
			return -EDOM;
		}
		double alpha = c[j] > 0 ? -norm : norm;
		c[j] -= alpha;	/* c[j..n) is now v; v'v = 2 norm (norm + |c[j] old|) */
		double vv = 0;
		for (size_t i = j; i < n; i++)
			vv += c[i] * c[i];
		for (size_t m = j + 1; m <= p; m++) {
			double *d = m < p ? &a[m * n] : b;
			double dot = 0;
			for (size_t i = j; i < n; i++)
				dot += c[i] * d[i];
			double f = 2 * dot / vv;
			for (size_t i = j; i < n; i++)
				d[i] -= f * c[i];
		}
		rdiag[j] = alpha;
		if (fabs(alpha) < RANK_TOL) {
			free(a);
			free(b);
			if (bad)
				*bad = j;
			return -EDOM;
		}
	}
	/* R: rdiag on the diagonal, a[m * n + j] above it (row j, column m > j). */
#define R(row, col) ((row) == (col) ? rdiag[row] : a[(col) * n + (row)])
	double z[FIT_MAX_COEF];
	for (size_t jj = p; jj-- > 0; ) {
		double s = b[jj];
		for (size_t m = jj + 1; m < p; m++)
			s -= R(jj, m) * z[m];
		z[jj] = s / rdiag[jj];
	}
	/* Rinv (upper triangular), then cov = Rinv Rinv' in the scaled units */
	double ri[FIT_MAX_COEF][FIT_MAX_COEF];
	memset(ri, 0, sizeof(ri));
	for (size_t col = 0; col < p; col++) {
		for (size_t row = col + 1; row-- > 0; ) {
			double s = row == col ? 1.0 : 0.0;
			for (size_t m = row + 1; m <= col; m++)
				s -= R(row, m) * ri[m][col];
			ri[row][col] = s / rdiag[row];
		}
	}
#undef R
	memset(out, 0, sizeof(*out));
	out->n = n;
	out->p = p;
	out->df = n - p;
	for (size_t j = 0; j < p; j++) {
		out->beta[j] = z[j] / scale[j];
		for (size_t l = 0; l < p; l++) {
			double s = 0;
			for (size_t m = (j > l ? j : l); m < p; m++)
				s += ri[j][m] * ri[l][m];
			out->cov[j][l] = s / (scale[j] * scale[l]);
		}
	}
	double mean = 0;
	for (size_t i = 0; i < n; i++)
		mean += y[i];
	mean /= (double)n;
	for (size_t i = 0; i < n; i++) {
		double fit = out->beta[0];
		for (size_t j = 0; j < k; j++)
			fit += out->beta[j + 1] * x[i * k + j];
		double r = y[i] - fit;
		if (resid)
			resid[i] = r;
		out->rss += r * r;
		out->tss += (y[i] - mean) * (y[i] - mean);
	}
	out->r2 = out->tss > 0 ? 1 - out->rss / out->tss : 1.0;
	out->sigma = out->df ? sqrt(out->rss / (double)out->df) : NAN;
	for (size_t j = 0; j < p; j++)
		out->se[j] = out->sigma * sqrt(out->cov[j][j]);
	free(a);
	free(b);
	return 0;
}

double fit_predict(const struct fit *f, const double *x0, double *se_mean, double *se_obs)
{
	double v[FIT_MAX_COEF];
	v[0] = 1;
	for (size_t j = 1; j < f->p; j++)
		v[j] = x0[j - 1];
	double y = 0, q = 0;
	for (size_t j = 0; j < f->p; j++) {
		y += f->beta[j] * v[j];
		for (size_t l = 0; l < f->p; l++)
			q += v[j] * f->cov[j][l] * v[l];
	}
	if (q < 0)
		q = 0;
	if (se_mean)
		*se_mean = f->sigma * sqrt(q);
	if (se_obs)
		*se_obs = f->sigma * sqrt(1 + q);
	return y;
}

/* The continued fraction of the regularised incomplete beta function I_x(a, b), by
 * the modified Lentz method; converges fast for x < (a + 1) / (a + b + 2). */
static double beta_cf(double a, double b, double x)
{
	const double tiny = 1e-300;
	double c = 1, d = 1 - (a + b) * x / (a + 1);
	if (fabs(d) < tiny)
		d = tiny;
	d = 1 / d;
	double h = d;
	for (int m = 1; m <= 500; m++) {
		double m2 = 2.0 * m;
		double num = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
		d = 1 + num * d;
		c = 1 + num / c;
		if (fabs(d) < tiny)
			d = tiny;
		if (fabs(c) < tiny)
			c = tiny;
		d = 1 / d;
		h *= d * c;
		num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
		d = 1 + num * d;
		c = 1 + num / c;
		if (fabs(d) < tiny)
			d = tiny;
		if (fabs(c) < tiny)
			c = tiny;
		d = 1 / d;
		double del = d * c;
		h *= del;
		if (fabs(del - 1) < 1e-15)
			break;
	}
	return h;
}

static double inc_beta(double a, double b, double x)
{
	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	double lfront = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x);
	if (x < (a + 1) / (a + b + 2))
		return exp(lfront) * beta_cf(a, b, x) / a;
	return 1 - exp(lfront) * beta_cf(b, a, 1 - x) / b;
}

double t_cdf(double t, double df)
{
	if (isnan(t) || !(df > 0))
		return NAN;
	if (isinf(t))
		return t > 0 ? 1 : 0;
	double tail = 0.5 * inc_beta(df / 2, 0.5, df / (df + t * t));	/* P(T > |t|) */
	return t > 0 ? 1 - tail : tail;
}

double t_quantile(double p, double df)
{
	if (!(p > 0 && p < 1) || !(df > 0))
		return NAN;
	if (p == 0.5)
		return 0;
	if (p < 0.5)
		return -t_quantile(1 - p, df);
	double lo = 0, hi = 1;
	while (t_cdf(hi, df) < p && hi < 1e300)
		hi *= 2;
	for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
		double mid = 0.5 * (lo + hi);
		if (t_cdf(mid, df) < p)
			lo = mid;
		else
			hi = mid;
	}
	return 0.5 * (lo + hi);
}
