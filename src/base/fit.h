/* Least squares with intervals, for a handful of coefficients: ordinary least squares
 * by Householder QR (never the normal equations: their condition number is the square
 * of the design's), the t distribution's quantile for 95% intervals, and prediction
 * bounds for a new point. Pure: no I/O, no allocation beyond the call.
 *
 * Columns are scaled to unit length before the factorisation so that a regressor in
 * bytes and one in counts weigh alike when deciding whether the design is degenerate,
 * and the results are scaled back. */
#ifndef RSW_BASE_FIT_H
#define RSW_BASE_FIT_H

#include <stddef.h>

#define FIT_MAX_COEF 8	/* the intercept and up to 7 regressors */

/* A fit of y = b0 + b1 x1 + ... + bk xk over n observations (p = k + 1 coefficients).
 * df = n - p; sigma (the residual standard error) and se are NaN when df is 0.
 * cov is (X'X)^-1, the covariance of beta divided by sigma^2. */
struct fit {
	size_t n, p, df;
	double beta[FIT_MAX_COEF];
	double se[FIT_MAX_COEF];
	double cov[FIT_MAX_COEF][FIT_MAX_COEF];
	double sigma;
	double rss, tss, r2;
};

/* Fits y[0..n) against the k regressors in x (row i is x[i*k .. i*k+k)), with an
 * intercept. resid, when not NULL, gets the n residuals y - fitted. Returns 0;
 * -EINVAL when k + 1 > FIT_MAX_COEF or n < k + 1 or a value is not finite; -EDOM when
 * the design is degenerate (a regressor constant or a combination of the others: that
 * column's index, 1-based among the regressors, in *bad when bad is not NULL). */
int fit_ols(const double *x, const double *y, size_t n, size_t k, struct fit *out,
	    double *resid, size_t *bad);

/* The fitted value at the regressors x0[0..k), and (when not NULL) the standard error
 * of that mean and of a new observation there (NaN when df is 0). */
double fit_predict(const struct fit *f, const double *x0, double *se_mean, double *se_obs);

/* The distribution function of Student's t with df > 0 degrees of freedom. */
double t_cdf(double t, double df);
/* Its quantile: the t with t_cdf(t, df) = p, for 0 < p < 1 (NaN otherwise). Accurate
 * to about 1e-10 relative; t_quantile(0.975, df) is the factor of a 95% interval. */
double t_quantile(double p, double df);

#endif
