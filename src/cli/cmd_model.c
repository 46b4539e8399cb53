/* rsswatch model: what memory costs per unit of a run parameter (across runs) or of an
 * application counter (inside one run), with intervals; the math in model/ and base/fit. */
#include "base/buf.h"
#include "base/parse.h"
#include "base/util.h"
#include "cli/cli.h"
#include "cli/output.h"
#include "cli/runload.h"
#include "model/model.h"
#include "render/fit_view.h"
#include "store/store.h"

#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int matches(const struct run *r, const struct run_param *want, size_t nwant)
{
	for (size_t i = 0; i < nwant; i++) {
		const struct run_param *p = run_param_find(r->params, r->nparams, want[i].key);
		if (!p || !run_param_matches(p, &want[i]))
			return 0;
	}
	return 1;
}

/* A stack[FUNC] figure: the bytes at run id's peak of the stacks through FUNC, into
 * *y; 0 when the run has no stacks stored at its peak. */
static int stack_figure(struct store *st, int64_t id, const char *fn, double *y)
{
	struct stored_stack *s = NULL;
	size_t n = 0;
	if (store_stacks(st, id, STACKS_AT_PEAK, &s, &n) < 0 || n == 0) {
		store_free_stacks(s, n);
		return 0;
	}
	*y = (double)model_stack_bytes(s, n, fn);
	store_free_stacks(s, n);
	return 1;
}

static void add_run(struct store *st, struct runs_model *m, const struct run *r)
{
	double y, x[MODEL_MAX_TERMS] = { 0 }, sy = 0;
	char why[112];
	int have_stacks = m->f.stack[0] && stack_figure(st, r->id, m->f.stack, &sy);
	if (model_run_usable(r, &m->f, have_stacks ? &sy : NULL, &y, x, why, sizeof(why))) {
		m->obs = xrealloc(m->obs, (m->nobs + 1) * sizeof(*m->obs));
		struct model_obs *o = &m->obs[m->nobs++];
		memset(o, 0, sizeof(*o));
		o->run_id = r->id;
		memcpy(o->x, x, sizeof(x));
		o->y = y;
	} else {
		m->skip = xrealloc(m->skip, (m->nskip + 1) * sizeof(*m->skip));
		m->skip[m->nskip].run_id = r->id;
		strlcpy_rsw(m->skip[m->nskip].why, why, sizeof(m->skip[m->nskip].why));
		m->nskip++;
	}
}

/* The first term of f that none of runs[0..n) has as a parameter (a mistyped name,
 * say), or NULL. */
static const char *term_nobody_has(const struct model_formula *f, const struct run *runs,
				   size_t n)
{
	for (size_t j = 0; j < f->k; j++) {
		size_t i = 0;
		while (i < n && !run_param_find(runs[i].params, runs[i].nparams, f->terms[j]))
			i++;
		if (i == n)
			return f->terms[j];
	}
	return NULL;
}

/* The runs named in refs, or every run when there are none, into *runs (n of them, to
 * free with store_free_runs). Returns 0, EXIT_USAGE or EXIT_FAIL (printed). */
static int read_runs(struct store *st, char **refs, size_t nrefs, struct run **runs, size_t *n)
{
	*runs = NULL;
	*n = 0;
	if (!nrefs) {
		if (store_list_runs(st, 0, runs, n) < 0) {
			cli_error("cannot list runs: %s", store_errmsg(st));
			return EXIT_FAIL;
		}
		return 0;
	}
	*runs = xcalloc(nrefs, sizeof(**runs));
	for (size_t i = 0; i < nrefs; i++) {
		int64_t id;
		int e = cli_resolve_run(st, refs[i], &id);
		if (e == 0 && store_get_run(st, id, &(*runs)[*n]) < 0) {
			cli_error("cannot read run %lld: %s", (long long)id, store_errmsg(st));
			e = EXIT_FAIL;
		}
		if (e) {
			store_free_runs(*runs, *n);
			*runs = NULL;
			*n = 0;
			return e;
		}
		(*n)++;
	}
	return 0;
}

/* Orders the observations newest run first: held values and the order of the
 * residuals. */
static void newest_first(struct runs_model *m)
{
	for (size_t i = 1; i < m->nobs; i++) {
		struct model_obs o = m->obs[i];
		size_t j = i;
		while (j > 0 && m->obs[j - 1].run_id < o.run_id) {
			m->obs[j] = m->obs[j - 1];
			j--;
		}
		m->obs[j] = o;
	}
}

static int across_runs(struct store *st, const struct model_formula *f, char **refs,
		       size_t nrefs, const struct run_param *want, size_t nwant,
		       uint64_t budget, int json, const char *svg_out)
{
	struct runs_model m;
	memset(&m, 0, sizeof(m));
	m.f = *f;
	struct run *runs = NULL;
	size_t n = 0;
	int ret = read_runs(st, refs, nrefs, &runs, &n);
	if (ret)
		return ret;
	const char *missing = term_nobody_has(f, runs, n);
	if (missing) {
		struct buf shown = { 0 };
		buf_put_printable(&shown, missing);
		cli_error("no run has a parameter '%s' (record --param %s=VALUE gives one; "
			  "rsswatch ls shows them)", buf_str(&shown), buf_str(&shown));
		buf_release(&shown);
		store_free_runs(runs, n);
		return EXIT_FAIL;
	}
	int all_cgroup = 1;
	uint64_t cg_limit = 0;
	const struct run *newest = NULL;
	for (size_t i = 0; i < n; i++) {
		if (!matches(&runs[i], want, nwant))
			continue;
		size_t before = m.nobs;
		add_run(st, &m, &runs[i]);
		if (m.nobs == before)
			continue;
		if (!newest || runs[i].id > newest->id)
			newest = &runs[i];
		if (!runs[i].cgroup_limit)
			all_cgroup = 0;
		else if (!cg_limit || runs[i].cgroup_limit < cg_limit)
			cg_limit = runs[i].cgroup_limit;
	}
	if (f->stack[0]) {
		int seen = 0;
		for (size_t i = 0; i < m.nobs; i++)
			seen |= m.obs[i].y > 0;
		if (m.nobs && !seen) {
			struct buf shown = { 0 };
			buf_put_printable(&shown, f->stack);
			cli_error("no stack at the peak of these runs goes through '%s' (show "
				  "--stacks lists their frames)", buf_str(&shown));
			buf_release(&shown);
			runs_model_release(&m);
			store_free_runs(runs, n);
			return EXIT_FAIL;
		}
	}
	if (f->stack[0]) {
		/* a stack's bytes are a part of the peak: no budget to set them against (model
		 * peak says what fits) */
	} else if (budget) {
		m.budget = budget;
		m.budget_src = BUDGET_GIVEN;
	} else if (newest && all_cgroup && cg_limit) {
		m.budget = cg_limit;
		m.budget_src = BUDGET_CGROUP;
	} else if (newest && newest->mem_total) {
		m.budget = newest->mem_total;
		m.budget_src = BUDGET_MEMTOTAL;
		strlcpy_rsw(m.budget_host, newest->host[0] ? newest->host : "?", sizeof(m.budget_host));
	}
	newest_first(&m);
	model_runs_fit(&m);
	struct buf b = { 0 };
	if (svg_out) {
		fit_view_runs_svg(&b, &m, 0, 0);
		ret = write_output(svg_out, &b);
		buf_reset(&b);
	}
	if (json)
		fit_view_runs_json(&b, &m);
	else
		fit_view_runs_text(&b, &m);
	if (!svg_out || strcmp(svg_out, "-") != 0)
		fputs(buf_str(&b), stdout);
	buf_release(&b);
	/* no fit, nothing predicted: said on stdout, and a status a script can test */
	if (ret == 0 && m.status == MODEL_TOO_FEW)
		ret = EXIT_FAIL;
	runs_model_release(&m);
	store_free_runs(runs, n);
	return ret;
}

/* Counter values carried forward to each sample. */
struct carry {
	const struct model_formula *f;
	const struct sample *s;
	size_t n;
	double *values;		/* n * k */
	double cur[MODEL_MAX_TERMS];
	int seen[MODEL_MAX_TERMS];
	size_t next;		/* the first sample not yet filled */
};

static void carry_fill(struct carry *c, int64_t until_ns, int inclusive)
{
	size_t k = c->f->k;
	while (c->next < c->n && (c->s[c->next].elapsed_ns < until_ns ||
				  (inclusive && c->s[c->next].elapsed_ns == until_ns))) {
		memcpy(&c->values[c->next * k], c->cur, k * sizeof(double));
		c->next++;
	}
}

static int on_counter(void *ctx, int64_t elapsed_ns, const char *name, long long value)
{
	struct carry *c = ctx;
	carry_fill(c, elapsed_ns, 0);	/* a change at a sample's time counts for it */
	for (size_t j = 0; j < c->f->k; j++) {
		if (strcmp(c->f->terms[j] + 8, name) == 0) {
			c->cur[j] = (double)value;
			c->seen[j] = 1;
		}
	}
	return 0;
}

static int inside_run(struct store *st, const char *ref, const struct model_formula *f, int json)
{
	struct loaded_run lr;
	int ret = loaded_run_load(st, ref, &lr);
	if (ret)
		return ret;
	struct carry c;
	memset(&c, 0, sizeof(c));
	c.f = f;
	c.s = lr.s;
	c.n = lr.n;
	c.values = xcalloc(lr.n * f->k + 1, sizeof(double));
	if (store_each_counter(st, lr.run.id, on_counter, &c) < 0) {
		cli_error("cannot read the counters of run %lld: %s", (long long)lr.run.id,
			  store_errmsg(st));
		ret = EXIT_FAIL;
		goto out;
	}
	carry_fill(&c, INT64_MAX, 1);
	for (size_t j = 0; j < f->k; j++) {
		if (!c.seen[j]) {
			cli_error("run %lld has no counter or gauge '%s'", (long long)lr.run.id,
				  f->terms[j] + 8);
			ret = EXIT_FAIL;
			goto out;
		}
	}
	struct counter_model m;
	memset(&m, 0, sizeof(m));
	m.f = *f;
	m.run_id = lr.run.id;
	model_counters_fit(&m, lr.s, lr.n, c.values, lr.run.interval_ns, lr.marks, lr.nmarks,
			   lr.run.started_at, lr.run.peak_rss, lr.run.peak_rss_at - lr.run.started_at);
	struct buf b = { 0 };
	if (json)
		fit_view_counters_json(&b, &m);
	else
		fit_view_counters_text(&b, &m);
	fputs(buf_str(&b), stdout);
	buf_release(&b);
out:
	free(c.values);
	loaded_run_release(&lr);
	return ret;
}

/* What the command line asks for. want is the caller's to free with run_params_free,
 * also on failure. */
struct model_args {
	const char *db, *svg_out;
	enum output_format format;
	uint64_t budget;
	struct cli_params want;
};

#define AT(field, type) CLI_AT(struct model_args, field, type)
static const struct cli_opt model_opts[] = {
	{ "param", 0, CLI_CALLBACK, AT(want, struct cli_params), .fn = cli_opt_param,
	  .arg = "KEY=VALUE", .help = "only runs with this parameter (repeatable)" },
	{ "budget", 0, CLI_SIZE, AT(budget, uint64_t), .min = 1, .eg = "755G",
	  .help = "the memory to fit in (e.g. 755G); default: the cgroup limit when every run "
		  "had one, else the recording host's MemTotal" },
	{ "output", 'o', CLI_STRING, AT(svg_out, const char *), .arg = "FILE.svg",
	  .help = "across runs: also draw the runs, the fitted line with its 95% bands and "
		  "the budget line along the first KEY (\"-\": standard output, instead of the "
		  "text)" },
	{ "format", 'f', CLI_FORMAT, AT(format, enum output_format), .formats = CLI_TEXT_JSON,
	  .help = " (default: text)" },
	{ "json", 0, CLI_FLAG, AT(format, enum output_format), .set = FORMAT_JSON,
	  .help = "the same as --format json: one JSON object" },
	CLI_DB_ROW(struct model_args),
	CLI_OPTS_END,
};

const struct cli_cmd model_cli = {
	.verb = "model",
	.usage = "usage: rsswatch model 'FIGURE ~ KEY [+ KEY...]' [RUN...] [OPTIONS]\n"
		 "       rsswatch model RUN 'rss ~ counter.NAME [+ counter.NAME...]' [--format F]\n",
	.about = "Across runs: fits FIGURE (peak, mean, cgroup_peak, or stack[FUNCTION]: the live\n"
		 "bytes at the peak of the stacks through FUNCTION, from record --stacks) of the\n"
		 "runs given (default: every run) against their numeric parameters (record --param\n"
		 "KEY=VALUE) by least squares. Prints each coefficient with its 95% interval, R²,\n"
		 "every run's residual, the runs left out and why, and the largest value of the\n"
		 "first KEY whose upper 95% prediction bound fits the budget (for a stack: whether\n"
		 "it grows with KEY). Needs at least KEYS + 2 usable runs and R² of 0.9 to predict.\n"
		 "Inside a run: fits RSS (or anon) over the run's samples against application\n"
		 "counters or gauges (carried forward between changes), trying lags of 0..20\n"
		 "samples and keeping the best R²; says between which marks the peak fell.\n",
	.opts = model_opts,
};

/* Reads the options into *a. Returns 0, CLI_DONE (--help printed) or EXIT_USAGE
 * (printed). */
static int read_args(int argc, char **argv, struct model_args *a)
{
	memset(a, 0, sizeof(*a));
	a->format = FORMAT_TEXT;
	int ret = cli_parse(&model_cli, argc, argv, a);
	if (ret)
		return ret;
	static const char *const kinds[] = { ".svg", NULL };
	if (a->svg_out)
		return cli_output_kind("model", a->svg_out, kinds);
	return 0;
}

/* The formula among the operands (first; or second, after the RUN, for a model inside
 * a run) into *f, and which kind it is into *inside. Returns 0 or EXIT_USAGE (printed). */
static int read_formula(int argc, char **argv, const struct model_args *a,
			struct model_formula *f, int *inside)
{
	char why[160];
	if (optind >= argc)
		return cli_usage("model", "give a model, e.g. 'peak ~ pw'");
	/* inside a run: RUN first, then a formula over counters */
	*inside = !strchr(argv[optind], '~');
	const char *formula = *inside ? (optind + 1 < argc ? argv[optind + 1] : NULL) : argv[optind];
	if (!formula)
		return cli_usage("model", "give a model after the run, e.g. 'rss ~ counter.items'");
	if (model_formula_parse(formula, *inside, f, why, sizeof(why)) < 0) {
		struct buf shown = { 0 };
		buf_put_printable(&shown, formula);
		int ret = cli_usage("model", "invalid model '%s': %s", buf_str(&shown), why);
		buf_release(&shown);
		return ret;
	}
	if (*inside && (optind + 2 < argc || a->want.n || a->budget || a->svg_out))
		return cli_usage("model", "a model inside a run takes one RUN and its formula "
				 "(no --param, --budget, -o or more runs)");
	return 0;
}

int cmd_model(int argc, char **argv)
{
	struct model_args a;
	struct model_formula f;
	struct store *st;
	int inside = 0;
	int ret = read_args(argc, argv, &a);
	if (ret == 0)
		ret = read_formula(argc, argv, &a, &f, &inside);
	if (ret == 0 && (ret = cli_open_store(a.db, &st, 0)) == 0) {
		if (inside)
			ret = inside_run(st, argv[optind], &f, a.format == FORMAT_JSON);
		else
			ret = across_runs(st, &f, argv + optind + 1, (size_t)(argc - optind - 1),
					  a.want.v, a.want.n, a.budget, a.format == FORMAT_JSON,
					  a.svg_out);
		store_close(st);
	}
	run_params_free(a.want.v, a.want.n);
	return ret == CLI_DONE ? EXIT_OK : ret;
}
