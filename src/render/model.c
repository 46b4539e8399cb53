#include "render/model.h"
#include "base/fmt.h"
#include "render/json.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* "+12.3 MiB" / "-1.0 GiB" / "12.3 MiB" (sign only when asked or negative). */
static const char *sbytes(char *out, size_t n, double v, int plus)
{
	char t[24];
	fmt_bytes(t, sizeof(t), (uint64_t)llround(fabs(v)));
	snprintf(out, n, "%s%s", v < 0 ? "-" : plus ? "+" : "", t);
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

void model_runs_text(struct buf *b, const struct runs_model *m)
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

static int fitted(enum model_status s)
{
	return s == MODEL_OK || s == MODEL_POOR;
}

void model_runs_json(struct buf *b, const struct runs_model *m)
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
		buf_puts(b, ",\"coefficients\":");
		json_coefs(b, &m->f, &m->fit, m->tq);
		buf_puts(b, ",\"r2\":");
		json_number(b, m->fit.r2);
		buf_printf(b, ",\"df\":%zu,\"sigma_bytes\":", m->fit.df);
		json_number(b, m->fit.sigma);
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

void model_counters_text(struct buf *b, const struct counter_model *m)
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

void model_counters_json(struct buf *b, const struct counter_model *m)
{
	buf_printf(b, "{\"run\":%lld,", (long long)m->run_id);
	json_formula(b, &m->f);
	buf_puts(b, ",\"status\":");
	json_str(b, status_name(m->status));
	buf_printf(b, ",\"samples\":%zu", m->nsamples);
	if (fitted(m->status)) {
		buf_puts(b, ",\"coefficients\":");
		json_coefs(b, &m->f, &m->fit, m->tq);
		buf_puts(b, ",\"r2\":");
		json_number(b, m->fit.r2);
		buf_printf(b, ",\"df\":%zu,\"sigma_bytes\":", m->fit.df);
		json_number(b, m->fit.sigma);
		buf_printf(b, ",\"lag_samples\":%zu,\"lag_s\":%.3f,\"lags_tried\":%zu,\"r2_lag0\":",
			   m->lag, (double)m->lag_ns / 1e9, m->lags_tried);
		json_number(b, m->r2_lag0);
	}
	buf_printf(b, ",\"peak_bytes\":%llu,\"peak_elapsed_s\":%.3f,\"peak_after_mark\":",
		   (unsigned long long)m->peak, (double)m->peak_ns / 1e9);
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
