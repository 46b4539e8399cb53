#include "render/fit_view.h"
#include "base/fmt.h"
#include "base/parse.h"
#include "base/util.h"
#include "render/json.h"
#include "render/svg.h"
#include "render/xml.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* "+12.3 MiB" / "-1.0 GiB" / "12.3 MiB" (sign only when asked or negative). */
static const char *sbytes(char *out, size_t n, double v, int plus)
{
	char t[24];
	long long r = llround(v);	/* a byte's rounding: -0.0000001 is 0 B, not -0 B */
	fmt_bytes(t, sizeof(t), (uint64_t)(r < 0 ? -r : r));
	snprintf(out, n, "%s%s", r < 0 ? "-" : plus ? "+" : "", t);
	return out;
}

static const char *status_name(enum model_status s)
{
	switch (s) {
	case MODEL_OK: return "ok";
	case MODEL_TOO_FEW: return "too_few";
	case MODEL_DEGENERATE: return "degenerate";
	case MODEL_POOR: return "poor_fit";
	}
	return "?";
}

/* "peak = 86.2 GiB + 48.3 GiB × pw (±1.1 GiB per pw)" and one line per coefficient. */
static void equation(struct buf *b, const struct model_formula *f, const struct fit *fit,
		     double tq, const char *unit_word)
{
	char a[48], c[48], d[48];
	buf_printf(b, "%s = %s", f->lhs, sbytes(a, sizeof(a), fit->beta[0], 0));
	for (size_t j = 0; j < f->k; j++) {
		double v = fit->beta[j + 1];
		buf_printf(b, " %c %s × %s", v < 0 ? '-' : '+', sbytes(a, sizeof(a), fabs(v), 0),
			   f->terms[j]);
		if (fit->df)
			buf_printf(b, " (±%s per %s)", sbytes(c, sizeof(c), tq * fit->se[j + 1], 0),
				   unit_word ? unit_word : f->terms[j]);
	}
	buf_putc(b, '\n');
	if (!fit->df) {
		buf_puts(b, "          no degrees of freedom left: no intervals\n");
		return;
	}
	for (size_t j = 0; j <= f->k; j++) {
		double lo = fit->beta[j] - tq * fit->se[j], hi = fit->beta[j] + tq * fit->se[j];
		buf_printf(b, "  %-22s %12s   95%% [%s, %s]%s%s\n", j ? f->terms[j - 1] : "intercept",
			   sbytes(a, sizeof(a), fit->beta[j], 0), sbytes(c, sizeof(c), lo, 0),
			   sbytes(d, sizeof(d), hi, 0), j ? " per " : "", j ? f->terms[j - 1] : "");
	}
	buf_printf(b, "R²        %.4f, residual sd %s, %zu degrees of freedom (t = %.3f)\n",
		   fit->r2, sbytes(a, sizeof(a), fit->sigma, 0), fit->df, tq);
}

static void value_text(struct buf *b, double v)
{
	if (v == floor(v) && fabs(v) < 1e15)
		buf_printf(b, "%.0f", v);
	else
		buf_printf(b, "%.4g", v);
}

void fit_view_runs_text(struct buf *b, const struct runs_model *m)
{
	char a[48], c[48], e[48];
	buf_printf(b, "model     %s ~", m->f.lhs);
	for (size_t j = 0; j < m->f.k; j++)
		buf_printf(b, "%s %s", j ? " +" : "", m->f.terms[j]);
	buf_printf(b, ", over %zu run%s\n", m->nobs, m->nobs == 1 ? "" : "s");
	if (m->status == MODEL_TOO_FEW) {
		buf_printf(b, "too few runs: %zu usable, a fit on %zu parameter%s needs at least %zu "
			   "(no fit, no prediction)\n", m->nobs, m->f.k, m->f.k == 1 ? "" : "s",
			   m->f.k + 2);
	} else if (m->status == MODEL_DEGENERATE) {
		buf_printf(b, "cannot fit: %s %s (no fit, no prediction)\n",
			   m->f.terms[m->bad_term ? m->bad_term - 1 : 0],
			   m->f.k == 1 ? "has the same value in every run" :
			   "is constant or a combination of the other terms");
	} else {
		equation(b, &m->f, &m->fit, m->tq, NULL);
		for (size_t i = 0; i < m->nobs; i++) {
			buf_printf(b, "%s run %lld (", i ? "\n         " : "runs     ",
				   (long long)m->obs[i].run_id);
			for (size_t j = 0; j < m->f.k; j++) {
				buf_printf(b, "%s%s=", j ? " " : "", m->f.terms[j]);
				value_text(b, m->obs[i].x[j]);
			}
			buf_printf(b, ") %s, residual %s", sbytes(a, sizeof(a), m->obs[i].y, 0),
				   sbytes(c, sizeof(c), m->obs[i].resid, 1));
		}
		buf_putc(b, '\n');
	}
	for (size_t i = 0; i < m->nskip; i++)
		buf_printf(b, "left out  run %lld: %s\n", (long long)m->skip[i].run_id, m->skip[i].why);
	if (m->budget) {
		buf_printf(b, "budget    %s", sbytes(a, sizeof(a), (double)m->budget, 0));
		if (m->budget_src == BUDGET_MEMTOTAL)
			buf_printf(b, " (MemTotal of %s, the recording host)", m->budget_host);
		else if (m->budget_src == BUDGET_CGROUP)
			buf_puts(b, " (the cgroup limit every run had)");
		buf_putc(b, '\n');
	}
	if (!m->predicted) {
		if (m->status == MODEL_POOR)
			buf_printf(b, "the fit is too poor to trust (R² %.3f < %.2f): no prediction\n",
				   m->fit.r2, MODEL_MIN_R2);
		else if (m->status == MODEL_OK)
			buf_printf(b, "no prediction: %s\n", m->no_prediction);
		return;
	}
	const char *t = m->f.terms[0];
	double budget = (double)m->budget;
	buf_puts(b, "predict   ");
	if (m->none_fits) {
		buf_printf(b, "even %s=", t);
		value_text(b, m->x_next);
		buf_printf(b, " needs %s of %s (does not fit)\n", sbytes(a, sizeof(a), m->need_next, 0),
			   sbytes(c, sizeof(c), budget, 0));
	} else {
		buf_printf(b, "%s=", t);
		value_text(b, m->x_fit);
		buf_printf(b, " needs %s of %s (fits, %s spare)", sbytes(a, sizeof(a), m->need_fit, 0),
			   sbytes(c, sizeof(c), budget, 0),
			   sbytes(e, sizeof(e), budget - m->need_fit, 0));
		if (m->integer) {
			buf_printf(b, "; %s=", t);
			value_text(b, m->x_next);
			buf_printf(b, " needs %s (does not fit)", sbytes(a, sizeof(a), m->need_next, 0));
		}
		buf_putc(b, '\n');
	}
	buf_puts(b, "          needs: the upper 95% prediction bound of one new run");
	if (m->f.k > 1)
		buf_printf(b, ", other terms held at run %lld's values", (long long)m->obs[0].run_id);
	buf_putc(b, '\n');
}

static void json_coefs(struct buf *b, const struct model_formula *f, const struct fit *fit,
		       double tq)
{
	buf_puts(b, "[");
	for (size_t j = 0; j <= f->k; j++) {
		buf_printf(b, "%s{\"term\":", j ? "," : "");
		json_str(b, j ? f->terms[j - 1] : "intercept");
		buf_puts(b, ",\"estimate\":");
		json_number(b, fit->beta[j]);
		buf_puts(b, ",\"se\":");
		json_number(b, fit->se[j]);
		buf_puts(b, ",\"low\":");
		json_number(b, fit->beta[j] - tq * fit->se[j]);
		buf_puts(b, ",\"high\":");
		json_number(b, fit->beta[j] + tq * fit->se[j]);
		buf_putc(b, '}');
	}
	buf_puts(b, "]");
}

static void json_formula(struct buf *b, const struct model_formula *f)
{
	buf_puts(b, "\"figure\":");
	json_str(b, f->lhs);
	buf_puts(b, ",\"terms\":[");
	for (size_t j = 0; j < f->k; j++) {
		if (j)
			buf_putc(b, ',');
		json_str(b, f->terms[j]);
	}
	buf_puts(b, "]");
}

/* ,"coefficients":[...],"r2":..,"df":..,"sigma_bytes":.. of a fit. */
static void json_fit(struct buf *b, const struct model_formula *f, const struct fit *fit,
		     double tq)
{
	buf_puts(b, ",\"coefficients\":");
	json_coefs(b, f, fit, tq);
	buf_puts(b, ",\"r2\":");
	json_number(b, fit->r2);
	buf_printf(b, ",\"df\":%zu,\"sigma_bytes\":", fit->df);
	json_number(b, fit->sigma);
}

static int fitted(enum model_status s)
{
	return s == MODEL_OK || s == MODEL_POOR;
}

void fit_view_runs_json(struct buf *b, const struct runs_model *m)
{
	buf_putc(b, '{');
	json_formula(b, &m->f);
	buf_puts(b, ",\"status\":");
	json_str(b, status_name(m->status));
	buf_puts(b, ",\"runs\":[");
	for (size_t i = 0; i < m->nobs; i++) {
		buf_printf(b, "%s{\"id\":%lld,\"x\":{", i ? "," : "", (long long)m->obs[i].run_id);
		for (size_t j = 0; j < m->f.k; j++) {
			if (j)
				buf_putc(b, ',');
			json_str(b, m->f.terms[j]);
			buf_putc(b, ':');
			json_number(b, m->obs[i].x[j]);
		}
		buf_puts(b, "},\"y_bytes\":");
		json_number(b, m->obs[i].y);
		buf_puts(b, ",\"residual_bytes\":");
		if (fitted(m->status))
			json_number(b, m->obs[i].resid);
		else
			buf_puts(b, "null");
		buf_putc(b, '}');
	}
	buf_puts(b, "],\"left_out\":[");
	for (size_t i = 0; i < m->nskip; i++) {
		buf_printf(b, "%s{\"id\":%lld,\"why\":", i ? "," : "", (long long)m->skip[i].run_id);
		json_str(b, m->skip[i].why);
		buf_putc(b, '}');
	}
	buf_puts(b, "]");
	if (fitted(m->status)) {
		json_fit(b, &m->f, &m->fit, m->tq);
	}
	buf_puts(b, ",\"budget_bytes\":");
	if (m->budget)
		buf_printf(b, "%llu", (unsigned long long)m->budget);
	else
		buf_puts(b, "null");
	buf_puts(b, ",\"budget_source\":");
	json_str(b, m->budget_src == BUDGET_GIVEN ? "given" : m->budget_src == BUDGET_MEMTOTAL ?
		 "mem_total" : m->budget_src == BUDGET_CGROUP ? "cgroup_limit" : "none");
	buf_puts(b, ",\"prediction\":");
	if (!m->predicted) {
		buf_puts(b, "null,\"no_prediction\":");
		json_str(b, m->status == MODEL_POOR ? "the fit is too poor to trust" :
			 m->no_prediction);
	} else {
		buf_puts(b, "{\"term\":");
		json_str(b, m->f.terms[0]);
		buf_puts(b, ",\"largest_fitting\":");
		if (m->none_fits)
			buf_puts(b, "null");
		else
			json_number(b, m->x_fit);
		buf_puts(b, ",\"needs_bytes\":");
		if (m->none_fits)
			buf_puts(b, "null");
		else
			json_number(b, m->need_fit);
		buf_puts(b, ",\"next\":");
		if (m->integer || m->none_fits)
			json_number(b, m->x_next);
		else
			buf_puts(b, "null");
		buf_puts(b, ",\"next_needs_bytes\":");
		if (m->integer || m->none_fits)
			json_number(b, m->need_next);
		else
			buf_puts(b, "null");
		buf_putc(b, '}');
	}
	buf_puts(b, "}\n");
}

void fit_view_counters_text(struct buf *b, const struct counter_model *m)
{
	char a[48], c[48];
	buf_printf(b, "model     run %lld: %s ~", (long long)m->run_id, m->f.lhs);
	for (size_t j = 0; j < m->f.k; j++)
		buf_printf(b, "%s %s", j ? " +" : "", m->f.terms[j]);
	buf_printf(b, ", over %zu samples\n", m->nsamples);
	if (m->status == MODEL_TOO_FEW) {
		buf_printf(b, "too few samples for %zu counter%s (no fit)\n", m->f.k,
			   m->f.k == 1 ? "" : "s");
	} else if (m->status == MODEL_DEGENERATE) {
		buf_printf(b, "cannot fit: %s %s (no fit)\n",
			   m->f.terms[m->bad_term ? m->bad_term - 1 : 0],
			   m->f.k == 1 ? "never changed during the run" :
			   "is constant or a combination of the other counters");
	} else {
		equation(b, &m->f, &m->fit, m->tq, "unit");
		buf_printf(b, "lag       %zu sample%s (%s): memory follows the counters that much later; "
			   "lags 0..%zu tried, the best R² kept (R² %.4f without lag)\n", m->lag,
			   m->lag == 1 ? "" : "s", fmt_duration(a, sizeof(a), m->lag_ns),
			   m->lags_tried ? m->lags_tried - 1 : 0, m->r2_lag0);
		if (m->status == MODEL_POOR)
			buf_printf(b, "the fit is poor (R² %.3f < %.2f): the counters do not explain "
				   "memory well\n", m->fit.r2, MODEL_MIN_R2);
	}
	buf_printf(b, "peak      %s at +%s", sbytes(a, sizeof(a), (double)m->peak, 0),
		   fmt_duration(c, sizeof(c), m->peak_ns));
	if (m->mark_before || m->mark_after) {
		buf_puts(b, ", between ");
		if (m->mark_before) {
			buf_puts(b, "mark \"");
			buf_put_printable(b, m->mark_before);
			buf_printf(b, "\" (+%s)", fmt_duration(a, sizeof(a), m->mark_before_ns));
		} else {
			buf_puts(b, "the start");
		}
		buf_puts(b, " and ");
		if (m->mark_after) {
			buf_puts(b, "mark \"");
			buf_put_printable(b, m->mark_after);
			buf_printf(b, "\" (+%s)", fmt_duration(a, sizeof(a), m->mark_after_ns));
		} else {
			buf_puts(b, "the end");
		}
	} else {
		buf_puts(b, " (the run has no marks)");
	}
	buf_putc(b, '\n');
}

void fit_view_counters_json(struct buf *b, const struct counter_model *m)
{
	buf_printf(b, "{\"run\":%lld,", (long long)m->run_id);
	json_formula(b, &m->f);
	buf_puts(b, ",\"status\":");
	json_str(b, status_name(m->status));
	buf_printf(b, ",\"samples\":%zu", m->nsamples);
	if (fitted(m->status)) {
		json_fit(b, &m->f, &m->fit, m->tq);
		buf_printf(b, ",\"lag_samples\":%zu,\"lag_s\":%.3f,\"lags_tried\":%zu,\"r2_lag0\":",
			   m->lag, (double)m->lag_ns / NS_PER_S, m->lags_tried);
		json_number(b, m->r2_lag0);
	}
	buf_printf(b, ",\"peak_bytes\":%llu,\"peak_elapsed_s\":%.3f,\"peak_after_mark\":",
		   (unsigned long long)m->peak, (double)m->peak_ns / NS_PER_S);
	if (m->mark_before)
		json_str(b, m->mark_before);
	else
		buf_puts(b, "null");
	buf_puts(b, ",\"peak_before_mark\":");
	if (m->mark_after)
		json_str(b, m->mark_after);
	else
		buf_puts(b, "null");
	buf_puts(b, "}\n");
}

/* --- the picture of a fit across runs --- */

/* Where things go on the canvas of model_runs_svg. */
struct fig {
	double x0, x1, y0, y1;	/* the plot area, y0 at the top */
	double xlo, xhi;	/* the first term's values at x0, x1 */
	double ytop;		/* bytes at y0 (0 at y1) */
};

static double fx(const struct fig *g, double v)
{
	return g->x0 + (v - g->xlo) / (g->xhi - g->xlo) * (g->x1 - g->x0);
}

static double fy(const struct fig *g, double v)
{
	return g->y1 - v / g->ytop * (g->y1 - g->y0);
}

/* The fitted value along the first term at v, the others held at the newest run's, and
 * the half-widths of the 95% bands there: of the line (mean) and of one new run. */
static double along(const struct runs_model *m, double v, double *hw_mean, double *hw_obs)
{
	double x0[MODEL_MAX_TERMS], sm, so;
	memcpy(x0, m->obs[0].x, sizeof(x0));
	x0[0] = v;
	double y = fit_predict(&m->fit, x0, &sm, &so);
	*hw_mean = m->fit.df ? m->tq * sm : 0;
	*hw_obs = m->fit.df ? m->tq * so : 0;
	return y;
}

/* A run's figure moved to the held values of the other terms (the first term's own
 * effect kept): what the picture plots, so that the points sit around the line. */
static double adjusted(const struct runs_model *m, const struct model_obs *o)
{
	double y = o->y;
	for (size_t j = 1; j < m->f.k; j++)
		y -= m->fit.beta[j + 1] * (o->x[j] - m->obs[0].x[j]);
	return y;
}

static int is_bytes_term(const char *t)
{
	size_t n = strlen(t);
	return n > 6 && strcmp(t + n - 6, "_bytes") == 0;
}

/* A value of the first term: bytes for a term named *_bytes, else the number. */
static void x_value(struct buf *b, double v, int bytes)
{
	char a[48];
	if (bytes)
		buf_puts(b, sbytes(a, sizeof(a), v, 0));
	else
		value_text(b, v);
}

static void x_tick(char *out, size_t n, double v, double step, int bytes, enum unit u)
{
	if (bytes) {
		svg_tick_bytes(out, n, v, u, step);
		return;
	}
	int dec = step >= 1 ? 0 : step >= 0.1 ? 1 : step >= 0.01 ? 2 : 3;
	snprintf(out, n, "%.*f", dec, fabs(v) < step / 1e6 ? 0.0 : v);
}

/* A band between lower and upper edges along the first term, as one closed path. */
static void band_path(struct buf *b, const struct runs_model *m, const struct fig *g, int obs,
		      const char *fill)
{
	enum { N = 120 };
	double up[N + 1], lo[N + 1], xs[N + 1];
	for (int i = 0; i <= N; i++) {
		double hm, ho;
		xs[i] = g->xlo + (g->xhi - g->xlo) * i / N;
		double y = along(m, xs[i], &hm, &ho);
		up[i] = y + (obs ? ho : hm);
		lo[i] = y - (obs ? ho : hm);
	}
	buf_printf(b, "<path fill=\"%s\" stroke=\"none\" d=\"M%.1f %.1f", fill, fx(g, xs[0]), fy(g, up[0]));
	for (int i = 1; i <= N; i++)
		buf_printf(b, "L%.1f %.1f", fx(g, xs[i]), fy(g, up[i]));
	for (int i = N; i >= 0; i--)
		buf_printf(b, "L%.1f %.1f", fx(g, xs[i]), fy(g, lo[i]));
	buf_puts(b, "Z\"/>\n");
}

static const char *figure_words(const char *lhs)
{
	return strcmp(lhs, "peak") == 0 ? "peak RSS" : strcmp(lhs, "mean") == 0 ? "mean RSS"
		: strcmp(lhs, "cgroup_peak") == 0 ? "cgroup peak" : lhs;
}

/* What a chart of the model draws, decided before drawing. */
struct model_view {
	const char *term;	/* the first term: the x axis */
	int fit_ok, xbytes;	/* a line was fitted; the term is in bytes */
	int budget_in;		/* the budget is drawn (predicted against, or near the runs) */
	enum unit yu;
	double ystep;
	size_t ylab_w;		/* characters of the widest y label */
};

/* The domain: every run, the prediction, zero when it is near, and the budget when it
 * is predicted against or not far above the runs. Sets g's value ranges. */
static void model_domain(const struct runs_model *m, struct model_view *v, struct fig *g)
{
	double xmin = 0, xmax = 1, ymax = 0;
	for (size_t i = 0; i < m->nobs; i++) {
		double x = m->obs[i].x[0], y = v->fit_ok ? adjusted(m, &m->obs[i]) : m->obs[i].y;
		xmin = i == 0 || x < xmin ? x : xmin;
		xmax = i == 0 || x > xmax ? x : xmax;
		ymax = y > ymax ? y : ymax;
	}
	if (m->predicted) {
		double last = m->integer || m->none_fits ? m->x_next : m->x_fit;
		xmax = last > xmax ? last : xmax;
	}
	if (xmin > 0 && xmin <= xmax - xmin)
		xmin = 0;
	if (xmax <= xmin)
		xmax = xmin + 1;
	double pad = (xmax - xmin) * 0.04;
	g->xlo = xmin >= 0 && xmin - pad < 0 ? xmin - pad * 0.5 : xmin - pad;
	g->xhi = xmax + pad;
	double data_top = ymax;
	if (v->fit_ok)
		for (int i = 0; i <= 20; i++) {
			double hm, ho, x = g->xlo + (g->xhi - g->xlo) * i / 20;
			double y = along(m, x, &hm, &ho) + ho;
			ymax = y > ymax ? y : ymax;
		}
	v->budget_in = m->budget && (m->predicted || (double)m->budget <= 3 * (data_top > 0 ? data_top : 1));
	if (v->budget_in && (double)m->budget > ymax)
		ymax = (double)m->budget;
	if (ymax <= 0)
		ymax = 1024 * 1024;
	v->yu = unit_for((uint64_t)ymax);
	double ub = (double)(1ULL << (10 * v->yu));
	v->ystep = nice_step(ymax / ub, 6) * ub;
	g->ytop = ceil(ymax * 1.04 / v->ystep) * v->ystep;
	char lab[64];
	v->ylab_w = 1;
	for (double y = 0; y <= g->ytop + v->ystep / 2; y += v->ystep) {
		svg_tick_bytes(lab, sizeof(lab), y, v->yu, v->ystep);
		v->ylab_w = strlen(lab) > v->ylab_w ? strlen(lab) : v->ylab_w;
	}
}

/* The fit in words: the line's equation and R², and what was predicted, or why
 * nothing was fitted. */
static void fit_words(struct buf *t, const struct runs_model *m, const struct model_view *v)
{
	char a[64];
	if (!v->fit_ok) {
		buf_puts(t, m->status == MODEL_TOO_FEW ? "too few runs to fit" :
			     "cannot fit: the term does not vary");
		return;
	}
	buf_printf(t, "%s = %s", m->f.lhs, sbytes(a, sizeof(a), m->fit.beta[0], 0));
	for (size_t j = 0; j < m->f.k; j++) {
		double c = fabs(m->fit.beta[j + 1]);
		buf_printf(t, " %c ", m->fit.beta[j + 1] < 0 ? '-' : '+');
		if (is_bytes_term(m->f.terms[j]))
			buf_printf(t, "%.4g", c);	/* bytes per byte: a ratio */
		else
			buf_puts(t, sbytes(a, sizeof(a), c, 0));
		buf_printf(t, " × %s", m->f.terms[j]);
	}
	buf_printf(t, ", R² %.4f", m->fit.r2);
	if (m->status == MODEL_POOR)
		buf_puts(t, ": too poor a fit to predict from");
	else if (m->predicted && !m->none_fits) {
		buf_printf(t, "; largest %s that fits: ", v->term);
		x_value(t, m->x_fit, v->xbytes);
	}
}

/* The title (the model), the fit in words under it, and the legend. */
static void model_head(struct buf *b, const struct runs_model *m, const struct model_view *v, int W)
{
	struct buf t = { 0 };
	buf_printf(&t, "%s ~", m->f.lhs);
	for (size_t j = 0; j < m->f.k; j++)
		buf_printf(&t, "%s %s", j ? " +" : "", m->f.terms[j]);
	buf_printf(&t, " over %zu run%s", m->nobs, m->nobs == 1 ? "" : "s");
	buf_puts(b, "<text x=\"16\" y=\"22\" font-size=\"14\" font-weight=\"600\" fill=\"#222\">");
	xml_text_trunc(b, buf_str(&t), (size_t)((W - 32) / 7.5));
	buf_puts(b, "</text>\n");
	buf_reset(&t);
	fit_words(&t, m, v);
	buf_puts(b, "<text x=\"16\" y=\"40\" fill=\"#444\">");
	xml_text_trunc(b, buf_str(&t), (size_t)((W - 32) / SVG_CHAR_W));
	buf_puts(b, "</text>\n");
	buf_release(&t);

	double lx = 16, ly = 60;
	struct { const char *text; const char *svg; } leg[] = {
		{ "runs", "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"#1d4e89\"/>" },
		{ "fitted line", "<path d=\"M%.1f %.1fh16\" stroke=\"#1d4e89\" stroke-width=\"2\"/>" },
		{ "95% band of the line", "<rect x=\"%.1f\" y=\"%.1f\" width=\"16\" height=\"9\" fill=\"#7fa6d1\"/>" },
		{ "95% band of one new run", "<rect x=\"%.1f\" y=\"%.1f\" width=\"16\" height=\"9\" fill=\"#dbe7f4\"/>" },
		{ "budget", "<path d=\"M%.1f %.1fh16\" stroke=\"#c0392b\" stroke-width=\"1.5\" stroke-dasharray=\"5 3\"/>" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(leg); i++) {
		if ((i >= 1 && i <= 3 && !v->fit_ok) || (i == 3 && !m->fit.df) || (i == 2 && !m->fit.df) ||
		    (i == 4 && !v->budget_in))
			continue;
		int circle = i == 0, rect = i == 2 || i == 3;
		buf_printf(b, leg[i].svg, circle ? lx + 8 : lx, circle || !rect ? ly : ly - 4.5);
		buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", lx + 22, ly + 4, leg[i].text);
		lx += 22 + SVG_CHAR_W * (double)strlen(leg[i].text) + 18;
	}
}

/* The y axis (bytes of the figure modelled) and the x axis (the first term's own
 * values: bytes in a nice step of the unit of the largest, else plain numbers). */
static void model_axes(struct buf *b, const struct runs_model *m, const struct model_view *v,
		       const struct fig *g)
{
	char lab[64];
	buf_puts(b, "<g class=\"axis-y\" text-anchor=\"end\">\n");
	for (double y = 0; y <= g->ytop + v->ystep / 2; y += v->ystep) {
		svg_tick_bytes(lab, sizeof(lab), y, v->yu, v->ystep);
		buf_printf(b, "<path d=\"M%.1f %.1fH%.1f\" stroke=\"%s\"/><text x=\"%.1f\" y=\"%.1f\">%s</text>\n",
			   g->x0, fy(g, y), g->x1, y == 0 ? "#999" : "#e6e6e6", g->x0 - 6, fy(g, y) + 4, lab);
	}
	buf_printf(b, "<text transform=\"translate(16 %.1f) rotate(-90)\" text-anchor=\"middle\" fill=\"#666\">",
		   (g->y0 + g->y1) / 2);
	xml_text(b, figure_words(m->f.lhs));
	buf_puts(b, "</text>\n</g>\n");

	int target = (int)((g->x1 - g->x0) / 80);
	enum unit xu = unit_for((uint64_t)fmax(fabs(g->xhi), fabs(g->xlo)));
	double xub = v->xbytes ? (double)(1ULL << (10 * xu)) : 1;
	double xstep = nice_step((g->xhi - g->xlo) / xub, target < 2 ? 2 : target) * xub;
	if (!v->xbytes && m->integer && xstep < 1)
		xstep = 1;
	buf_puts(b, "<g class=\"axis-x\" text-anchor=\"middle\">\n");
	buf_printf(b, "<path d=\"M%.1f %.1fH%.1f\" stroke=\"#999\"/>\n", g->x0, g->y1, g->x1);
	for (double x = ceil(g->xlo / xstep) * xstep; x <= g->xhi + xstep * 1e-9; x += xstep) {
		x_tick(lab, sizeof(lab), x, xstep, v->xbytes, xu);
		buf_printf(b, "<path d=\"M%.1f %.1fv5\" stroke=\"#999\"/><text x=\"%.1f\" y=\"%.1f\">%s</text>\n",
			   fx(g, x), g->y1, fx(g, x), g->y1 + 17, lab);
	}
	buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#666\">", (g->x0 + g->x1) / 2, g->y1 + 38);
	xml_text(b, v->term);
	if (m->f.k > 1)
		buf_printf(b, " (points and line at run %lld's other terms)", (long long)m->obs[0].run_id);
	buf_puts(b, "</text>\n</g>\n");
}

/* The bands and the line, clipped to the plot. */
static void model_line(struct buf *b, const struct runs_model *m, const struct model_view *v,
		       const struct fig *g)
{
	buf_printf(b, "<clipPath id=\"rsw-model-plot\"><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
		   "height=\"%.1f\"/></clipPath>\n<g clip-path=\"url(#rsw-model-plot)\">\n",
		   g->x0, g->y0, g->x1 - g->x0, g->y1 - g->y0);
	if (v->fit_ok) {
		if (m->fit.df) {
			band_path(b, m, g, 1, "#dbe7f4");
			band_path(b, m, g, 0, "#7fa6d1");
		}
		double hm, ho;
		buf_printf(b, "<path d=\"M%.1f %.1fL%.1f %.1f\" stroke=\"#1d4e89\" stroke-width=\"2\"/>\n",
			   fx(g, g->xlo), fy(g, along(m, g->xlo, &hm, &ho)), fx(g, g->xhi),
			   fy(g, along(m, g->xhi, &hm, &ho)));
	}
	buf_puts(b, "</g>\n");
}

/* The budget at the left end (the line rises away from it), and a marker at the largest
 * value that fits with its label at the marker's foot, where the line is far above. */
static void model_budget(struct buf *b, const struct runs_model *m, const struct model_view *v,
			 const struct fig *g)
{
	char a[64];
	if (v->budget_in) {
		double by = fy(g, (double)m->budget);
		buf_printf(b, "<path d=\"M%.1f %.1fH%.1f\" stroke=\"#c0392b\" stroke-width=\"1.5\" "
			   "stroke-dasharray=\"5 3\"/>\n", g->x0, by, g->x1);
		buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#c0392b\">budget %s%s</text>\n",
			   g->x0 + 6, by < g->y0 + 14 ? by + 14 : by - 5, sbytes(a, sizeof(a), (double)m->budget, 0),
			   m->budget_src == BUDGET_CGROUP ? " (cgroup limit)" :
			   m->budget_src == BUDGET_MEMTOTAL ? " (MemTotal)" : "");
	}
	if (!m->predicted || m->none_fits)
		return;
	double vx = fx(g, m->x_fit), top = fy(g, m->need_fit);
	buf_printf(b, "<path d=\"M%.1f %.1fV%.1f\" stroke=\"#2a7f3f\" stroke-dasharray=\"2 3\"/>"
		   "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"#2a7f3f\"/>\n", vx, g->y1, top, vx, top);
	struct buf t = { 0 };
	buf_printf(&t, "%s=", v->term);
	x_value(&t, m->x_fit, v->xbytes);
	buf_printf(&t, " fits (needs up to %s)", sbytes(a, sizeof(a), m->need_fit, 0));
	double tw = SVG_CHAR_W * (double)utf8_chars(buf_str(&t));
	int left = vx + 6 + tw > g->x1;
	buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#2a7f3f\"%s>", left ? vx - 6 : vx + 6, g->y1 - 8,
		   left ? " text-anchor=\"end\"" : "");
	xml_text(b, buf_str(&t));
	buf_puts(b, "</text>\n");
	buf_release(&t);
}

/* The runs, each with its figures on hover; a budget above the chart said in words. */
static void model_points(struct buf *b, const struct runs_model *m, const struct model_view *v,
			 const struct fig *g)
{
	char a[64], c[64];
	struct buf t = { 0 };
	buf_puts(b, "<g class=\"runs\">\n");
	for (size_t i = 0; i < m->nobs; i++) {
		const struct model_obs *o = &m->obs[i];
		double y = v->fit_ok ? adjusted(m, o) : o->y;
		buf_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"#1d4e89\" stroke=\"#fff\">"
			   "<title>", fx(g, o->x[0]), fy(g, y));
		buf_reset(&t);
		buf_printf(&t, "run %lld: ", (long long)o->run_id);
		for (size_t j = 0; j < m->f.k; j++) {
			buf_printf(&t, "%s=", m->f.terms[j]);
			value_text(&t, o->x[j]);
			buf_putc(&t, ' ');
		}
		buf_printf(&t, "%s %s", m->f.lhs, sbytes(a, sizeof(a), o->y, 0));
		if (v->fit_ok)
			buf_printf(&t, ", residual %s", sbytes(c, sizeof(c), o->resid, 1));
		xml_text(b, buf_str(&t));
		buf_puts(b, "</title></circle>\n");
	}
	buf_puts(b, "</g>\n");
	buf_release(&t);
	if (m->budget && !v->budget_in)
		buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" fill=\"#c0392b\">budget %s: "
			   "above the chart</text>\n", g->x1 - 4, g->y0 + 12,
			   sbytes(a, sizeof(a), (double)m->budget, 0));
}

void fit_view_runs_svg(struct buf *b, const struct runs_model *m, int W, int H)
{
	struct model_view v;
	struct fig g;
	memset(&v, 0, sizeof(v));
	v.term = m->f.terms[0];
	v.fit_ok = fitted(m->status);
	v.xbytes = is_bytes_term(v.term);
	if (W <= 0)
		W = 960;
	if (H <= 0)
		H = 560;
	model_domain(m, &v, &g);
	g.x0 = 34 + SVG_CHAR_W * (double)v.ylab_w + 8;
	g.x1 = W - 24;
	g.y0 = 78;
	g.y1 = H - 58;

	buf_printf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"rsw-model\" width=\"%d\" "
		   "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"" SVG_FONT "\" font-size=\"11\" "
		   "fill=\"#333\">\n<rect width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n", W, H, W, H, W, H);
	model_head(b, m, &v, W);
	model_axes(b, m, &v, &g);
	model_line(b, m, &v, &g);
	model_budget(b, m, &v, &g);
	model_points(b, m, &v, &g);
	buf_puts(b, "</svg>\n");
}
