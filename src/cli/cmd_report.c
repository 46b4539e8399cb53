/* rsswatch report: one run as a self-contained HTML page. */
#include "base/buf.h"
#include "base/util.h"
#include "cli/cli.h"
#include "cli/runload.h"
#include "model/model.h"
#include "render/model.h"
#include "render/html.h"
#include "render/png.h"
#include "render/procs.h"
#include "render/stack.h"
#include "store/store.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
	"usage: rsswatch report [RUN] -o FILE.html [--png FILE.png] [OPTIONS]\n"
	"\n"
	"Writes one run (default: the last) as a single HTML file to open in any browser\n"
	"or attach to a ticket: the summary, a chart of memory over time (hover it to read\n"
	"values), the marks with RSS at each and the change since the previous mark, the\n"
	"processes of a set, the OOM kills, the events and the run's details. The file\n"
	"needs no network: styles, chart and script are inline. RUN is a run id or 'last'.\n"
	"\n"
	"  -o, --output FILE  the HTML file to write ('-' for standard output)\n"
	"      --png FILE     also (or only) the page's chart as a PNG image, titled, for\n"
	"                     chats and tickets (when built with librsvg)\n"
	"      --time KIND    chart x axis: 'elapsed' (default) or 'wall' (local clock time)\n"
	"      --db PATH      the run database\n";

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
				   lr->nmarks, lr->run.started_at);
		if (out->len)
			buf_putc(out, '\n');
		model_counters_text(out, &m);
	}
	free(values);
}

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "time", required_argument, NULL, 't' },
		{ "png", required_argument, NULL, 'P' },
		{ "db", required_argument, NULL, CLI_OPT_DB },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	const char *db = NULL, *out = NULL, *png = NULL;
	struct chart_opts o;
	memset(&o, 0, sizeof(o));
	int ret;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":ho:", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'P': png = optarg; break;
		case 't':
			if ((ret = cli_chart_time("report", optarg, &o.time)) != 0)
				return ret;
			break;
		case CLI_OPT_DB: db = optarg; break;
		case 'h': fputs(usage_text, stdout); return EXIT_OK;
		default: return cli_bad_option("report", c, argv);
		}
	}
	if (!out && !png)
		return cli_usage("report", "give the output file with -o FILE.html");
	if (png && !png_available()) {
		cli_error("%s", png_unavailable());
		return EXIT_FAIL;
	}
	const char *ref;
	struct store *st;
	ret = cli_one_run("report", argc, argv, db, &ref, &st);
	if (ret)
		return ret;
	struct loaded_run lr;
	struct chart_run cr;
	struct buf b = { 0 };
	struct proc_summary *procs = NULL;
	struct oom_kill *kills = NULL;
	size_t np = 0, nk = 0;
	if ((ret = loaded_run_load(st, ref, &lr)) != 0)
		goto out_store;
	if (store_processes(st, lr.run.id, &procs, &np) < 0 ||
	    store_oom_kills(st, lr.run.id, &kills, &nk) < 0) {
		cli_error("cannot read run %lld: %s", (long long)lr.run.id, store_errmsg(st));
		ret = EXIT_FAIL;
	} else if ((ret = plot_prepare(&lr, 1, NULL, &cr)) == 0) {
		struct buf models = { 0 };
		counter_models(&lr, &models);
		struct html_procs hp = { procs, np, kills, nk, buf_str(&models), NULL };
		struct proc_stack stack;
		memset(&stack, 0, sizeof(stack));
		if (run_is_set(&lr.run)) {
			if (store_each_proc_at_sample(st, lr.run.id, proc_stack_add, &stack) < 0) {
				cli_error("cannot read run %lld: %s", (long long)lr.run.id, store_errmsg(st));
				ret = EXIT_FAIL;
			}
			proc_stack_finish(&stack, STACK_TOP);
			hp.stack = &stack;
		}
		if (!ret && out) {
			html_report(&b, &cr, &o, &hp, "rsswatch " RSSWATCH_VERSION);
			ret = write_output(out, &b);
		}
		if (!ret && png) {
			/* the page's chart, titled as the page is, since a picture travels alone */
			struct buf title = { 0 };
			struct chart_opts po = o;
			buf_printf(&title, "run %lld", (long long)lr.run.id);
			if (lr.run.label[0])
				buf_printf(&title, ": %s", lr.run.label);
			po.title = buf_str(&title);
			buf_reset(&b);
			svg_chart(&b, &cr, 1, &po, NULL);
			ret = write_png(png, &b);
			buf_release(&title);
		}
		proc_stack_release(&stack);
		buf_release(&models);
	}
	free(procs);
	free(kills);
	loaded_run_release(&lr);
out_store:
	buf_release(&b);
	store_close(st);
	return ret;
}
