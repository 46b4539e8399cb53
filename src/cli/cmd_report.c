/* rsswatch report: one run as a self-contained HTML page. */
#include "base/buf.h"
#include "base/util.h"
#include "cli/cli.h"
#include "cli/output.h"
#include "cli/runload.h"
#include "model/model.h"
#include "render/fit_view.h"
#include "render/html.h"
#include "render/png.h"
#include "render/procs.h"
#include "render/stack.h"
#include "store/store.h"

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPORT_MODELS 8	/* counters modelled at most, in the order first seen */

/* The run's RSS against each of its counters and gauges alone, as `rsswatch model RUN
 * 'rss ~ counter.NAME'` gives it, into out (nothing without counters or samples). */
static void counter_models(const struct loaded_run *lr, struct buf *out)
{
	double *values = lr->n ? xcalloc(lr->n, sizeof(*values)) : NULL;
	for (size_t i = 0; values && i < lr->ncounters && i < REPORT_MODELS; i++) {
		const struct counter_series *cs = &lr->counters[i];
		char formula[128], err[160];
		struct counter_model m;
		memset(&m, 0, sizeof(m));
		snprintf(formula, sizeof(formula), "rss ~ counter.%s", cs->name);
		if (model_formula_parse(formula, 1, &m.f, err, sizeof(err)) < 0)
			continue;	/* a name a formula cannot hold */
		m.run_id = lr->run.id;
		model_carry(lr->s, lr->n, cs->t, cs->v, cs->n, values, 1);
		model_counters_fit(&m, lr->s, lr->n, values, lr->run.interval_ns, lr->marks,
				   lr->nmarks, lr->run.started_at, lr->run.peak_rss,
				   lr->run.peak_rss_at - lr->run.started_at);
		if (out->len)
			buf_putc(out, '\n');
		fit_view_counters_text(out, &m);
	}
	free(values);
}

/* What the command line asks for. */
struct report_args {
	const char *db, *out, *png;
	enum output_format format;	/* html: the option refuses what the page cannot be */
	struct chart_opts o;
};

#define AT(field, type) CLI_AT(struct report_args, field, type)
static const struct cli_opt report_opts[] = {
	{ "output", 'o', CLI_STRING, AT(out, const char *), .arg = "FILE",
	  .help = "the HTML file to write ('-' for standard output)" },
	{ "format", 'f', CLI_FORMAT, AT(format, enum output_format),
	  .formats = FORMAT_BIT(FORMAT_HTML),
	  .help = ", the one format of the page (show --format json gives the run as JSON)" },
	{ "png", 0, CLI_STRING, AT(png, const char *), .arg = "FILE",
	  .help = "also (or only) the page's chart as a PNG image, titled, for chats and "
		  "tickets (when built with librsvg)" },
	{ "time", 0, CLI_CHOICE, AT(o.time, enum chart_time), .choices = cli_chart_times,
	  .help = "chart x axis: 'elapsed' (default) or 'wall' (local clock time)" },
	CLI_DB_ROW(struct report_args),
	CLI_OPTS_END,
};

const struct cli_cmd report_cli = {
	.verb = "report",
	.usage = "usage: rsswatch report [RUN] -o FILE.html [--png FILE.png] [OPTIONS]\n",
	.about = "Writes one run (default: the last) as a single HTML file to open in any browser\n"
		 "or attach to a ticket: the summary, a chart of memory over time (hover it to read\n"
		 "values), the marks with RSS at each and the change since the previous mark, the\n"
		 "processes of a set, the OOM kills, the events and the run's details; for a run\n"
		 "recorded with --stacks, a flame graph of what held the memory at its peak. The\n"
		 "file needs no network: styles, charts and scripts are inline. RUN is a run id or\n"
		 "'last'.\n",
	.opts = report_opts,
};

/* Reads the options into *a. Returns 0, CLI_DONE (--help printed) or EXIT_USAGE /
 * EXIT_FAIL (printed). */
static int read_args(int argc, char **argv, struct report_args *a)
{
	memset(a, 0, sizeof(*a));
	a->format = FORMAT_HTML;
	int ret = cli_parse(&report_cli, argc, argv, a);
	if (ret)
		return ret;
	static const char *const kinds[] = { ".html", ".htm", NULL };
	if (!a->out && !a->png)
		return cli_usage("report", "give the output file with -o FILE.html");
	if (a->out && (ret = cli_output_kind("report", a->out, kinds)) != 0)
		return ret;
	if (a->png && !png_available()) {
		cli_error("%s", png_unavailable());
		return EXIT_FAIL;
	}
	return 0;
}

/* --png: the page's chart, titled as the page is, since a picture travels alone.
 * Returns 0 or EXIT_FAIL (printed). */
static int report_png(const struct report_args *a, const struct loaded_run *lr,
		      const struct chart_run *cr)
{
	struct buf title = { 0 }, b = { 0 };
	struct chart_opts po = a->o;
	const struct run *one = &lr->run;
	runs_title(&title, &one, 1);
	po.title = buf_str(&title);
	svg_chart(&b, cr, 1, &po, NULL);
	int ret = write_png(a->png, &b);
	buf_release(&b);
	buf_release(&title);
	return ret;
}

/* The page (and the picture) of the loaded run; hp holds its processes and OOM kills,
 * and this adds the rest. Returns 0 or EXIT_FAIL (printed). */
static int report_write(const struct report_args *a, struct store *st, struct loaded_run *lr,
			struct html_procs *hp)
{
	struct chart_run cr;
	int ret = plot_prepare(lr, 1, NULL, &cr);
	if (ret)
		return ret;
	struct buf models = { 0 }, b = { 0 };
	counter_models(lr, &models);
	hp->counter_models = buf_str(&models);
	struct proc_stack stack;
	memset(&stack, 0, sizeof(stack));
	if (run_is_set(&lr->run)) {
		if (store_each_proc_at_sample(st, lr->run.id, proc_stack_add, &stack) < 0) {
			cli_error("cannot read run %lld: %s", (long long)lr->run.id, store_errmsg(st));
			ret = EXIT_FAIL;
		}
		proc_stack_finish(&stack, STACK_TOP);
		hp->stack = &stack;
	}
	if (!ret && a->out) {
		html_report(&b, &cr, &a->o, hp, "rsswatch " RSSWATCH_VERSION);
		ret = write_output(a->out, &b);
	}
	if (!ret && a->png)
		ret = report_png(a, lr, &cr);
	proc_stack_release(&stack);
	buf_release(&b);
	buf_release(&models);
	return ret;
}

int cmd_report(int argc, char **argv)
{
	struct report_args a;
	int ret = read_args(argc, argv, &a);
	if (ret)
		return ret == CLI_DONE ? EXIT_OK : ret;
	const char *ref;
	struct store *st;
	if ((ret = cli_one_run("report", argc, argv, a.db, &ref, &st)) != 0)
		return ret;
	struct loaded_run lr;
	struct proc_summary *procs = NULL;
	struct oom_kill *kills = NULL;
	struct stored_stack *stacks = NULL, *gpu_stacks = NULL;
	size_t np = 0, nk = 0, ns = 0, ngs = 0;
	if ((ret = loaded_run_load(st, ref, &lr)) != 0)
		goto out_store;
	if (store_processes(st, lr.run.id, &procs, &np) < 0 ||
	    store_oom_kills(st, lr.run.id, &kills, &nk) < 0 ||
	    (RUN_HAS_STACKS(&lr.run) &&
	     (store_stacks(st, lr.run.id, STACKS_AT_PEAK, &stacks, &ns) < 0 ||
	      store_stacks(st, lr.run.id, STACKS_AT_GPU_PEAK, &gpu_stacks, &ngs) < 0))) {
		cli_error("cannot read run %lld: %s", (long long)lr.run.id, store_errmsg(st));
		ret = EXIT_FAIL;
	} else {
		struct html_procs hp = { procs, np, kills, nk, NULL, NULL, stacks, ns, gpu_stacks,
					 ngs };
		ret = report_write(&a, st, &lr, &hp);
	}
	free(procs);
	free(kills);
	store_free_stacks(stacks, ns);
	store_free_stacks(gpu_stacks, ngs);
	loaded_run_release(&lr);
out_store:
	store_close(st);
	return ret;
}
