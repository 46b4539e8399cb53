#include "model/model.h"
#include "base/util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == '-';
}

/* Copies s[0..len) without surrounding blanks into out; 0, or -EINVAL when it is empty,
 * too long or holds characters a name may not. */
static int take_name(const char *s, size_t len, char *out, size_t n)
{
	while (len && (*s == ' ' || *s == '\t')) {
		s++;
		len--;
	}
	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	if (len == 0 || len >= n)
		return -EINVAL;
	for (size_t i = 0; i < len; i++)
		if (!name_char(s[i]))
			return -EINVAL;
	memcpy(out, s, len);
	out[len] = '\0';
	return 0;
}

/* "stack[FUNC]" in s[0..len), blanks around it allowed: f->lhs the whole, f->stack
 * FUNC. 0, or -EINVAL when s is not of that form. */
static int take_stack(const char *s, size_t len, struct model_formula *f)
{
	while (len && (*s == ' ' || *s == '\t')) {
		s++;
		len--;
	}
	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	if (len < 8 || strncmp(s, "stack[", 6) != 0 || s[len - 1] != ']' ||
	    len >= sizeof(f->lhs))
		return -EINVAL;
	for (size_t i = 6; i < len - 1; i++)
		if ((unsigned char)s[i] <= ' ' || s[i] == ']' || s[i] == 0x7f)
			return -EINVAL;
	memcpy(f->lhs, s, len);
	f->lhs[len] = '\0';
	memcpy(f->stack, s + 6, len - 7);
	f->stack[len - 7] = '\0';
	return 0;
}

int64_t model_stack_bytes(const struct stored_stack *s, size_t n, const char *fn)
{
	size_t fl = strlen(fn);
	int64_t sum = 0;
	for (size_t i = 0; i < n; i++) {
		for (const char *line = s[i].frames; line && *line;) {
			const char *nl = strchr(line, '\n');
			size_t ll = nl ? (size_t)(nl - line) : strlen(line);
			if (ll >= fl && memcmp(line, fn, fl) == 0 &&
			    (ll == fl || line[fl] == ' ' || line[fl] == '+')) {
				sum += s[i].bytes;
				break;
			}
			line = nl ? nl + 1 : NULL;
		}
	}
	return sum;
}

int model_formula_parse(const char *s, int counters, struct model_formula *out, char *err,
			size_t errlen)
{
	struct model_formula f;
	memset(&f, 0, sizeof(f));
	const char *tilde = strchr(s, '~');
	if (!tilde || strchr(tilde + 1, '~')) {
		snprintf(err, errlen, "a model is 'FIGURE ~ TERM [+ TERM...]', e.g. 'peak ~ pw'");
		return -EINVAL;
	}
	if (!counters && take_stack(s, (size_t)(tilde - s), &f) == 0) {
		/* stack[FUNC]: the figure is the stacks' bytes (cmd_model reads them) */
	} else if (take_name(s, (size_t)(tilde - s), f.lhs, sizeof(f.lhs)) < 0) {
		snprintf(err, errlen, "name the figure to model left of '~' (%s)",
			 counters ? "rss or anon" : "peak, mean, cgroup_peak or stack[FUNCTION]");
		return -EINVAL;
	}
	static const char *const across[] = { "peak", "mean", "cgroup_peak" };
	static const char *const within[] = { "rss", "anon" };
	const char *const *ok = counters ? within : across;
	size_t nok = counters ? 2 : 3;
	int found = f.stack[0] != '\0';
	for (size_t i = 0; i < nok; i++)
		found |= strcmp(f.lhs, ok[i]) == 0;
	if (!found) {
		snprintf(err, errlen, "unknown figure '%s': give %s", f.lhs,
			 counters ? "rss or anon" : "peak, mean, cgroup_peak or stack[FUNCTION]");
		return -EINVAL;
	}
	const char *p = tilde + 1;
	for (;;) {
		const char *plus = strchr(p, '+');
		size_t len = plus ? (size_t)(plus - p) : strlen(p);
		if (f.k == MODEL_MAX_TERMS) {
			snprintf(err, errlen, "at most %d terms", MODEL_MAX_TERMS);
			return -EINVAL;
		}
		char *t = f.terms[f.k];
		if (take_name(p, len, t, MODEL_NAME_MAX) < 0) {
			snprintf(err, errlen, "each term is a %s (letters, digits, '_', '.', '-'), "
				 "joined by '+'", counters ? "counter.NAME" : "parameter name");
			return -EINVAL;
		}
		if (counters && (strncmp(t, "counter.", 8) != 0 || !t[8])) {
			snprintf(err, errlen, "inside a run, each term is counter.NAME (a counter "
				 "or gauge of the run)");
			return -EINVAL;
		}
		if (!counters && strlen(t) > RUN_PARAM_KEY_MAX) {
			snprintf(err, errlen, "a parameter name is at most %d characters",
				 RUN_PARAM_KEY_MAX);
			return -EINVAL;
		}
		for (size_t i = 0; i < f.k; i++) {
			if (strcmp(f.terms[i], t) == 0) {
				snprintf(err, errlen, "term '%s' given twice", t);
				return -EINVAL;
			}
		}
		f.k++;
		if (!plus)
			break;
		p = plus + 1;
	}
	*out = f;
	return 0;
}

int model_run_usable(const struct run *r, const struct model_formula *f,
		     const double *stack_y, double *y, double *x, char *why, size_t whylen)
{
	if (strcmp(r->outcome, OUTCOME_RUNNING) == 0) {
		snprintf(why, whylen, "still recording");
		return 0;
	}
	if (strcmp(r->outcome, OUTCOME_INTERRUPTED) == 0) {
		snprintf(why, whylen, "interrupted (the recorder died: its peak may be incomplete)");
		return 0;
	}
	if (strcmp(r->outcome, OUTCOME_OOM_KILLED) == 0) {
		snprintf(why, whylen, "OOM-killed (its peak is where the limit stopped it, not "
			 "what it needed)");
		return 0;
	}
	if (strcmp(r->outcome, OUTCOME_SIGNALED) == 0) {
		snprintf(why, whylen, "killed by signal %d before it finished", r->signal);
		return 0;
	}
	if (strcmp(r->outcome, OUTCOME_EXITED) == 0 && r->exit_code > 0) {
		snprintf(why, whylen, "exited with %d (a failed run)", r->exit_code);
		return 0;
	}
	if (r->samples == 0) {
		snprintf(why, whylen, "no samples");
		return 0;
	}
	for (size_t j = 0; j < f->k; j++) {
		const struct run_param *p = run_param_find(r->params, r->nparams, f->terms[j]);
		if (!p) {
			snprintf(why, whylen, "no parameter %s", f->terms[j]);
			return 0;
		}
		if (!p->is_num) {
			snprintf(why, whylen, "%s=%.60s is not a number", p->key, p->value);
			return 0;
		}
		x[j] = p->num;
	}
	if (f->stack[0]) {
		if (!stack_y) {
			snprintf(why, whylen, "no stacks at its peak (record --stacks gives them)");
			return 0;
		}
		*y = *stack_y;
	} else if (strcmp(f->lhs, "peak") == 0) {
		*y = (double)r->peak_rss;
	} else if (strcmp(f->lhs, "mean") == 0) {
		*y = run_mean_rss(r);
	} else {
		if (!r->peak_cgroup) {
			snprintf(why, whylen, "no cgroup peak (recorded without a cgroup)");
			return 0;
		}
		*y = (double)r->peak_cgroup;
	}
	return 1;
}

/* The upper 95% prediction bound at first-term value v, the others held. */
static double upper_at(const struct runs_model *m, double v, double *mid)
{
	double x0[MODEL_MAX_TERMS], se;
	memcpy(x0, m->obs[0].x, sizeof(x0));
	x0[0] = v;
	double y = fit_predict(&m->fit, x0, NULL, &se);
	if (mid)
		*mid = y;
	return y + m->tq * se;
}

static void predict(struct runs_model *m)
{
	double budget = (double)m->budget;
	if (m->fit.beta[1] <= 0) {
		snprintf(m->no_prediction, sizeof(m->no_prediction),
			 "%s does not grow with %s: no largest value to predict", m->f.lhs,
			 m->f.terms[0]);
		return;
	}
	double lo = m->obs[0].x[0], hi = lo;
	m->integer = 1;
	for (size_t i = 0; i < m->nobs; i++) {
		double v = m->obs[i].x[0];
		lo = v < lo ? v : lo;
		hi = v > hi ? v : hi;
		m->integer &= v == floor(v);
	}
	m->predicted = 1;
	if (upper_at(m, lo, NULL) > budget) {
		m->none_fits = 1;
		m->x_next = lo;
		m->need_next = upper_at(m, lo, NULL);
		return;
	}
	/* the bound is convex in the value and grows beyond the data (slope > 0): walk
	 * out until it exceeds the budget, then bisect for the crossing */
	double step = hi - lo > 1 ? hi - lo : 1, good = lo, bad = hi;
	int n = 0;
	while (upper_at(m, bad, NULL) <= budget && n++ < 200) {
		good = bad;
		bad += step;
		step *= 2;
	}
	for (int i = 0; i < 200 && bad - good > 1e-9 * fabs(bad); i++) {
		double mid = 0.5 * (good + bad);
		if (upper_at(m, mid, NULL) <= budget)
			good = mid;
		else
			bad = mid;
	}
	if (m->integer) {
		m->x_fit = floor(good);
		if (m->x_fit < lo)
			m->x_fit = lo;
		m->x_next = m->x_fit + 1;
		m->need_next = upper_at(m, m->x_next, NULL);
	} else {
		m->x_fit = good;
	}
	m->need_fit = upper_at(m, m->x_fit, &m->need_fit_mid);
}

void model_runs_fit(struct runs_model *m)
{
	size_t k = m->f.k;
	m->status = MODEL_OK;
	if (m->nobs < k + 2) {
		m->status = MODEL_TOO_FEW;
		return;
	}
	double *x = xcalloc(m->nobs * k, sizeof(*x));
	double *y = xcalloc(m->nobs, sizeof(*y));
	double *res = xcalloc(m->nobs, sizeof(*res));
	for (size_t i = 0; i < m->nobs; i++) {
		memcpy(&x[i * k], m->obs[i].x, k * sizeof(*x));
		y[i] = m->obs[i].y;
	}
	int e = fit_ols(x, y, m->nobs, k, &m->fit, res, &m->bad_term);
	if (e == -EDOM) {
		m->status = MODEL_DEGENERATE;
	} else if (e < 0) {
		m->status = MODEL_TOO_FEW;
	} else {
		for (size_t i = 0; i < m->nobs; i++)
			m->obs[i].resid = res[i];
		m->tq = t_quantile(0.975, (double)m->fit.df);
		if (m->fit.r2 < MODEL_MIN_R2)
			m->status = MODEL_POOR;
	}
	free(x);
	free(y);
	free(res);
	if (m->status != MODEL_OK)
		snprintf(m->no_prediction, sizeof(m->no_prediction), "%s",
			 m->status == MODEL_POOR ? "the fit is too poor to trust" :
			 m->status == MODEL_DEGENERATE ? "the terms cannot be told apart" :
			 "too few runs");
	else if (m->f.stack[0] && m->fit.beta[1] - m->tq * m->fit.se[1] <= 0)
		snprintf(m->no_prediction, sizeof(m->no_prediction), "%s does not grow with %s "
			 "(flat within the 95%% interval of its slope)", m->f.lhs, m->f.terms[0]);
	else if (m->f.stack[0])
		snprintf(m->no_prediction, sizeof(m->no_prediction), "it grows with %s, as a part "
			 "of the peak: 'peak ~ %s' says what fits the budget", m->f.terms[0],
			 m->f.terms[0]);
	else if (!m->budget)
		snprintf(m->no_prediction, sizeof(m->no_prediction), "no budget known");
	else
		predict(m);
}

void runs_model_release(struct runs_model *m)
{
	free(m->obs);
	free(m->skip);
	memset(m, 0, sizeof(*m));
}

static double figure_of(const struct counter_model *m, const struct sample *s)
{
	return strcmp(m->f.lhs, "anon") == 0 ? (double)s->mem.anon : (double)s->mem.rss;
}

void model_counters_fit(struct counter_model *m, const struct sample *s, size_t n,
			const double *values, int64_t interval_ns, const struct mark *marks,
			size_t nmarks, int64_t started_at, uint64_t peak, int64_t peak_ns)
{
	size_t k = m->f.k;
	size_t maxlag = n / 5 < MODEL_MAX_LAG ? n / 5 : MODEL_MAX_LAG;
	m->status = MODEL_TOO_FEW;
	m->lags_tried = 0;
	double best = -INFINITY;
	double *x = xcalloc(n * k + 1, sizeof(*x));
	double *y = xcalloc(n + 1, sizeof(*y));
	for (size_t lag = 0; lag <= maxlag; lag++) {
		size_t rows = n - lag;
		if (rows < k + 2)
			break;
		for (size_t i = 0; i < rows; i++) {
			y[i] = figure_of(m, &s[i + lag]);
			memcpy(&x[i * k], &values[i * k], k * sizeof(*x));
		}
		struct fit f;
		size_t bad = 0;
		int e = fit_ols(x, y, rows, k, &f, NULL, &bad);
		m->lags_tried = lag + 1;
		if (e == -EDOM && lag == 0) {
			m->status = MODEL_DEGENERATE;
			m->bad_term = bad;
		}
		if (e < 0)
			continue;
		if (lag == 0)
			m->r2_lag0 = f.r2;
		if (f.r2 > best + 1e-12) {	/* a longer lag must do strictly better */
			best = f.r2;
			m->fit = f;
			m->lag = lag;
			m->nsamples = rows;
			m->status = f.r2 < MODEL_MIN_R2 ? MODEL_POOR : MODEL_OK;
		}
	}
	free(x);
	free(y);
	m->lag_ns = (int64_t)m->lag * interval_ns;
	if (m->status == MODEL_OK || m->status == MODEL_POOR)
		m->tq = t_quantile(0.975, (double)m->fit.df);
	/* the peak, and the marks around it */
	m->peak = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i].mem.rss > m->peak || i == 0) {
			m->peak = s[i].mem.rss;
			m->peak_ns = s[i].elapsed_ns;
		}
	}
	if (peak && peak >= m->peak && peak_ns >= 0) {	/* between samples, at its own time */
		m->peak = peak;
		m->peak_ns = peak_ns;
	}
	m->mark_before = m->mark_after = NULL;
	for (size_t i = 0; i < nmarks; i++) {
		int64_t t = marks[i].t - started_at;
		if (t <= m->peak_ns) {
			m->mark_before = marks[i].label;
			m->mark_before_ns = t;
		} else if (!m->mark_after) {
			m->mark_after = marks[i].label;
			m->mark_after_ns = t;
		}
	}
}

void model_carry(const struct sample *s, size_t n, const int64_t *t, const long long *v,
		 size_t m, double *out, size_t stride)
{
	size_t j = 0;
	double cur = 0;
	for (size_t i = 0; i < n; i++) {
		while (j < m && t[j] <= s[i].elapsed_ns)
			cur = (double)v[j++];
		out[i * stride] = cur;
	}
}
