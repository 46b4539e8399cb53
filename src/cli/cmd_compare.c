/* rsswatch compare: did memory change between runs, or between groups of repeated runs? */
#include "base/buf.h"
#include "base/util.h"
#include "cli/cli.h"
#include "cli/compare_by.h"
#include "cli/runload.h"
#include "render/compare.h"
#include "render/svg.h"
#include "store/store.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
	"usage: rsswatch compare RUN RUN... [OPTIONS]\n"
	"       rsswatch compare RUN,RUN,... RUN,RUN,... [OPTIONS]\n"
	"\n"
	"Compares runs side by side: peak, time to peak, mean, last, growth (the\n"
	"least-squares slope of RSS) and RSS at each mark the runs share, with the\n"
	"difference against the first. Arguments with commas are groups of repeated runs:\n"
	"each group's mean and spread are shown, and a sentence says whether the difference\n"
	"between the groups is larger than the spread within them.\n"
	"\n"
	"      --by KEY        group the runs by the value of their parameter KEY (record\n"
	"                      --param), one group per value, in order of value\n"
	"      --json          one JSON object for scripts\n"
	"  -o, --output FILE   also draw the RSS of every run, overlaid, as an SVG file\n"
	"      --align MARK    in that drawing, align the runs at the mark MARK\n"
	"      --db PATH       the run database\n";

/* compare --by KEY: one group per value of the parameter; the groups named in b (when
 * not NULL). */
static int regroup(const char *key, struct cmp_run *cr, size_t n, struct cmp_group *g,
		   size_t *ng, struct buf *b)
{
	long long missing = 0;
	struct buf legend = { 0 };
	if (compare_group_by(key, cr, n, g, ng, &legend, &missing) < 0) {
		cli_error("run %lld has no parameter '%s' (see 'rsswatch show %lld')", missing,
			  key, missing);
		buf_release(&legend);
		return EXIT_FAIL;
	}
	if (*ng < 2) {
		cli_error("every run has the same %s: nothing to compare by", key);
		buf_release(&legend);
		return EXIT_FAIL;
	}
	if (b)
		buf_printf(b, "groups by %s: %s\n\n", key, buf_str(&legend));
	buf_release(&legend);
	return 0;
}

int cmd_compare(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "output", required_argument, NULL, 'o' },
		{ "align", required_argument, NULL, 'a' },
		{ "by", required_argument, NULL, 'b' },
		{ "db", required_argument, NULL, CLI_OPT_DB },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, json = 0;
	const char *db = NULL, *out = NULL, *align = NULL, *by = NULL;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":ho:", longopts, NULL)) != -1) {
		switch (c) {
		case 'j': json = 1; break;
		case 'o': out = optarg; break;
		case 'a': align = optarg; break;
		case 'b': by = optarg; break;
		case CLI_OPT_DB: db = optarg; break;
		case 'h': fputs(usage_text, stdout); return EXIT_OK;
		default: return cli_bad_option("compare", c, argv);
		}
	}
	if (optind == argc)
		return cli_usage("compare", "give at least two runs (or two groups of runs)");
	if (align && !out)
		return cli_usage("compare", "--align only applies to the drawing: add -o FILE.svg");
	struct store *st;
	int ret = cli_open_store(db, &st, 0);
	if (ret)
		return ret;
	/* "sID:N": the last N runs of a series, as N arguments (or in their group) */
	char **args;
	size_t ng;
	if ((ret = cli_expand_runs(st, argv + optind, (size_t)(argc - optind), &args, &ng)) != 0) {
		store_close(st);
		return ret;
	}
	if (ng < 2) {
		cli_free_refs(args, ng);
		store_close(st);
		return cli_usage("compare", "give at least two runs (or two groups of runs)");
	}
	int grouped = 0;
	size_t total = 0;
	for (size_t i = 0; i < ng; i++) {
		if (strchr(args[i], ','))
			grouped = 1;
		total++;
		for (const char *p = args[i]; *p; p++)
			if (*p == ',')
				total++;
	}
	struct loaded_run *lr = xcalloc(total, sizeof(*lr));
	struct cmp_run *cr = xcalloc(total, sizeof(*cr));
	struct cmp_group *g = xcalloc(total, sizeof(*g));	/* --by: up to one per run */
	struct chart_run *chart = NULL;
	struct buf b = { 0 };
	size_t loaded = 0;
	for (size_t i = 0; i < ng; i++) {
		char *arg = xstrdup(args[i]);
		g[i].runs = &cr[loaded];
		char *save = NULL;
		for (char *ref = strtok_r(arg, ",", &save); ref; ref = strtok_r(NULL, ",", &save)) {
			if ((ret = loaded_run_load(st, ref, &lr[loaded])) != 0) {
				free(arg);
				goto out;
			}
			cr[loaded].run = &lr[loaded].run;
			cr[loaded].s = lr[loaded].s;
			cr[loaded].n = lr[loaded].n;
			cr[loaded].marks = lr[loaded].marks;
			cr[loaded].nmarks = lr[loaded].nmarks;
			loaded++;
			g[i].n++;
		}
		free(arg);
		if (g[i].n == 0) {
			ret = cli_usage("compare", "empty group '%s'", args[i]);
			goto out;
		}
	}
	if (out) {
		chart = xcalloc(loaded, sizeof(*chart));
		if ((ret = plot_prepare(lr, loaded, align, chart)) != 0)
			goto out;
		struct chart_opts o;
		char xt[256];
		memset(&o, 0, sizeof(o));
		if (align) {
			snprintf(xt, sizeof(xt), "time since mark \"%s\"", align);
			o.x_title = xt;
		}
		svg_chart(&b, chart, loaded, &o, NULL);
		if ((ret = write_output(out, &b)) != 0)
			goto out;
		buf_reset(&b);
	}
	if (by) {
		grouped = 1;
		if ((ret = regroup(by, cr, loaded, g, &ng, json ? NULL : &b)) != 0)
			goto out;
	}
	if (json)
		compare_json(&b, g, ng, grouped);
	else
		compare_text(&b, g, ng, grouped);
	fputs(buf_str(&b), stdout);
out:
	for (size_t i = 0; i < loaded; i++)
		loaded_run_release(&lr[i]);
	free(lr);
	free(cr);
	free(g);
	free(chart);
	buf_release(&b);
	cli_free_refs(args, ng);
	store_close(st);
	return ret;
}
