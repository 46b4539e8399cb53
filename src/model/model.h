/* Memory models: what a figure of a run (its peak, mean or cgroup peak) costs per unit
 * of a run parameter, fitted across runs; and, inside one run, what RSS costs per unit
 * of application counters, fitted over its samples. Pure: runs, samples and counters
 * in, fits and predictions out; the CLI loads the data and a renderer prints it.
 *
 * Runs that cannot say what a configuration needs are left out, each with the reason:
 * missing or non-numeric parameter, no samples, still recording, interrupted (the
 * recorder died: the peak may be incomplete), OOM-killed or killed by a signal (the
 * run stopped before it reached its need), a command that failed (nonzero exit). */
#ifndef RSW_MODEL_MODEL_H
#define RSW_MODEL_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "base/fit.h"
#include "store/run.h"

#define MODEL_MAX_TERMS (FIT_MAX_COEF - 1)
#define MODEL_NAME_MAX 72

/* "peak ~ pw + pipelines": the figure on the left, the terms on the right. */
struct model_formula {
	char lhs[MODEL_NAME_MAX];
	/* Across runs, "stack[FUNC]": FUNC, and the figure is the live bytes at the peak
	 * of the stacks through it (model_stack_bytes); else empty. */
	char stack[MODEL_NAME_MAX];
	char terms[MODEL_MAX_TERMS][MODEL_NAME_MAX];
	size_t k;
};

/* Parses a formula. Terms are parameter names ([A-Za-z0-9_.-]), or with counters set,
 * counter.NAME; no term twice. Across runs the figure is peak, mean, cgroup_peak or
 * stack[FUNC] (FUNC: a function as the stacks name it, C++ and Rust names too: any
 * printable bytes but ']' and blanks). Returns 0 or -EINVAL with a one-line reason in
 * err. */
int model_formula_parse(const char *s, int counters, struct model_formula *out, char *err,
			size_t errlen);

enum model_status {
	MODEL_OK,
	MODEL_TOO_FEW,		/* fewer observations than coefficients + 1 */
	MODEL_DEGENERATE,	/* a term is constant or a combination of the others */
	MODEL_POOR,		/* R² under MODEL_MIN_R2: coefficients shown, nothing predicted */
};
#define MODEL_MIN_R2 0.9

/* --- across runs --- */

struct model_obs {
	int64_t run_id;
	double x[MODEL_MAX_TERMS];
	double y;
	double resid;
};
struct model_skip {
	int64_t run_id;
	char why[112];
};

/* Where the budget came from. */
enum model_budget_src { BUDGET_NONE, BUDGET_GIVEN, BUDGET_MEMTOTAL, BUDGET_CGROUP };

struct runs_model {
	struct model_formula f;
	struct model_obs *obs;		/* newest run first */
	size_t nobs;
	struct model_skip *skip;
	size_t nskip;
	enum model_status status;
	size_t bad_term;		/* MODEL_DEGENERATE: 1-based */
	struct fit fit;
	double tq;			/* t quantile 0.975 at the fit's df */
	/* the budget and the prediction along the first term, the others held at the
	 * newest run's values (held[1..k)) */
	uint64_t budget;
	enum model_budget_src budget_src;
	char budget_host[64];
	int predicted;		/* 0: no prediction (why in no_prediction) */
	char no_prediction[224];
	int integer;		/* the first term took only whole values: predict whole ones */
	double x_fit, need_fit;		/* the largest value that fits, and its upper bound */
	double need_fit_mid;		/* the fitted value there */
	double x_next, need_next;	/* the next whole value (integer only), which does not */
	int none_fits;			/* even the smallest value observed does not fit */
};

/* Whether run r can be an observation of the model: writes its figure into *y and its
 * terms into x, or a reason into why and returns 0. For a stack[FUNC] figure, stack_y
 * is the run's (model_stack_bytes of its stacks at the peak), NULL when the run has
 * none stored. */
int model_run_usable(const struct run *r, const struct model_formula *f,
		     const double *stack_y, double *y, double *x, char *why, size_t whylen);
/* The bytes that the stacks s[0..n) through function fn hold: the sum over the stacks
 * with a frame of that function (a frame is a line "FUNC (file:line)", "FUNC" or
 * "FUNC+0x..", innermost first; inlined frames are lines too), each stack once. */
int64_t model_stack_bytes(const struct stored_stack *s, size_t n, const char *fn);
/* Fits m->obs (filled by the caller), sets status, residuals, and with a budget (m->
 * budget non-zero) the prediction. */
void model_runs_fit(struct runs_model *m);
void runs_model_release(struct runs_model *m);

/* --- inside one run --- */

#define MODEL_MAX_LAG 20

struct counter_model {
	struct model_formula f;
	int64_t run_id;
	size_t nsamples;	/* samples used (after the lag) */
	size_t lag;		/* in samples: counters at sample i - lag explain memory at i */
	int64_t lag_ns;
	size_t lags_tried;	/* 0..lags_tried-1 */
	double r2_lag0;		/* R² without lag, for comparison */
	enum model_status status;
	size_t bad_term;
	struct fit fit;
	double tq;
	/* where the peak fell: its elapsed time and the marks around it (NULL: none) */
	int64_t peak_ns;
	uint64_t peak;
	const char *mark_before, *mark_after;
	int64_t mark_before_ns, mark_after_ns;
};

/* Fits the figure of samples s[0..n) against the counters values[i * k + j] (counter j
 * at sample i, carried forward), trying each lag of 0..MODEL_MAX_LAG samples (at most a
 * fifth of the samples) and keeping the one with the best R². marks (t in realtime,
 * started_at the run's start) locate the peak: the run's own (peak bytes at peak_ns
 * after the start, from VmHWM, an exit record or the kernel's page counts) where it is
 * known (peak > 0) and at least the highest sample, else the highest sample. */
void model_counters_fit(struct counter_model *m, const struct sample *s, size_t n,
			const double *values, int64_t interval_ns, const struct mark *marks,
			size_t nmarks, int64_t started_at, uint64_t peak, int64_t peak_ns);

/* The values of one counter or gauge at each of samples s[0..n): the last of its
 * changes (t[j] elapsed, v[j], in time order, m of them) at or before each sample, 0
 * before the first, into out[i * stride]. */
void model_carry(const struct sample *s, size_t n, const int64_t *t, const long long *v,
		 size_t m, double *out, size_t stride);

#endif
