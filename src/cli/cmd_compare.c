/* rsswatch compare: did memory change between runs, or between groups of repeated runs? */
#include "base/buf.h"
#include "base/util.h"
#include "cli/cli.h"
#include "cli/compare_by.h"
#include "cli/output.h"
#include "cli/runload.h"
#include "render/compare.h"
#include "render/stackdiff.h"
#include "render/svg.h"
#include "store/store.h"

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* What the command line asks for. */
struct compare_args {
	const char *db, *out, *align, *by;
	enum output_format format;
	int stacks;		/* --stacks: the live bytes by stack of two runs */
	uint64_t top;		/* --top: its rows; 0: not given */
	int grouped;		/* an argument lists several runs */
	char **groups;		/* the arguments, ng of them: each one run or a group */
	size_t ng;
	size_t total;		/* the runs the arguments name, all groups together */
};

#define AT(field, type) CLI_AT(struct compare_args, field, type)
static const struct cli_opt compare_opts[] = {
	{ "by", 0, CLI_STRING, AT(by, const char *), .arg = "KEY",
	  .help = "group the runs by the value of their parameter KEY (record --param), one "
		  "group per value, in order of value" },
	{ "format", 'f', CLI_FORMAT, AT(format, enum output_format), .formats = CLI_TEXT_JSON,
	  .help = " (default: text)" },
	{ "json", 0, CLI_FLAG, AT(format, enum output_format), .set = FORMAT_JSON,
	  .help = "the same as --format json: one JSON object for scripts (with --stacks, "
		  "an array of the stacks)" },
	{ "stacks", 0, CLI_FLAG, AT(stacks, int),
	  .help = "two runs recorded with --stacks: the stacks whose live bytes at the peak "
		  "changed the most, matched by their functions (not their lines), with the "
		  "bytes in each run and the change" },
	{ "top", 0, CLI_INT, AT(top, uint64_t), .min = 1, .arg = "N",
	  .help = "with --stacks: the N stacks that changed the most (default 15)" },
	{ "output", 'o', CLI_STRING, AT(out, const char *), .arg = "FILE",
	  .help = "also draw the RSS of every run, overlaid, as an SVG file" },
	{ "align", 0, CLI_STRING, AT(align, const char *), .arg = "MARK",
	  .help = "in that drawing, align the runs at the mark MARK" },
	CLI_DB_ROW(struct compare_args),
	CLI_OPTS_END,
};

const struct cli_cmd compare_cli = {
	.verb = "compare",
	.usage = "usage: rsswatch compare RUN RUN... [OPTIONS]\n"
		 "       rsswatch compare RUN,RUN,... RUN,RUN,... [OPTIONS]\n"
		 "       rsswatch compare RUN RUN --stacks [--top N] [--json]\n",
	.about = "Compares runs side by side: peak, time to peak, mean, last, growth (the\n"
		 "least-squares slope of RSS) and RSS at each mark the runs share, with the\n"
		 "difference against the first. Arguments with commas are groups of repeated runs:\n"
		 "each group's mean and spread are shown, and a sentence says whether the difference\n"
		 "between the groups is larger than the spread within them.\n"
		 "RUN is a run id or 'last'; sID is the last run of series ID (record --follow),\n"
		 "sID:N its last N runs (as N arguments, or inside a group, N runs of it).\n"
		 "With --stacks, two runs recorded with --stacks: the call stacks whose live bytes\n"
		 "at the peak changed the most from the first run to the second.\n",
	.opts = compare_opts,
};

/* Reads the options and the groups into *a. Returns 0, CLI_DONE (--help printed) or
 * EXIT_USAGE (printed). */
static int read_args(int argc, char **argv, struct compare_args *a)
{
	memset(a, 0, sizeof(*a));
	a->format = FORMAT_TEXT;
	int ret = cli_parse(&compare_cli, argc, argv, a);
	if (ret)
		return ret;
	a->groups = argv + optind;
	a->ng = (size_t)(argc - optind);
	if (a->ng == 0)
		return cli_usage("compare", "give at least two runs (or two groups of runs)");
	if (a->align && !a->out)
		return cli_usage("compare", "--align only applies to the drawing: add -o FILE.svg");
	if (a->top && !a->stacks)
		return cli_usage("compare", "--top only applies to --stacks");
	if (a->stacks && (a->by || a->out))
		return cli_usage("compare", "--stacks compares two runs' stacks: drop %s",
				 a->by ? "--by" : "-o");
	return 0;
}

/* Once "sID:N" arguments are expanded (cli_expand_runs): at least two, and how many
 * runs they name in all. Returns 0 or EXIT_USAGE (printed). */
static int count_runs(struct compare_args *a)
{
	if (a->ng < 2)
		return cli_usage("compare", "give at least two runs (or two groups of runs)");
	for (size_t i = 0; i < a->ng; i++) {
		if (strchr(a->groups[i], ','))
			a->grouped = 1;
		a->total++;
		for (const char *p = a->groups[i]; *p; p++)
			if (*p == ',')
				a->total++;
	}
	return 0;
}

/* Loads the runs of every group, in order, into lr and cr (room for a->total each),
 * and the groups into g; *loaded counts the runs loaded, also on failure. Returns 0,
 * EXIT_USAGE or EXIT_FAIL (printed). */
static int compare_load(struct store *st, const struct compare_args *a, struct loaded_run *lr,
			struct cmp_run *cr, struct cmp_group *g, size_t *loaded)
{
	for (size_t i = 0; i < a->ng; i++) {
		char *arg = xstrdup(a->groups[i]);
		char *save = NULL;
		g[i].runs = &cr[*loaded];
		for (char *ref = strtok_r(arg, ",", &save); ref; ref = strtok_r(NULL, ",", &save)) {
			size_t k = *loaded;
			int ret = loaded_run_load(st, ref, &lr[k]);
			if (ret) {
				free(arg);
				return ret;
			}
			cr[k].run = &lr[k].run;
			cr[k].s = lr[k].s;
			cr[k].n = lr[k].n;
			cr[k].marks = lr[k].marks;
			cr[k].nmarks = lr[k].nmarks;
			(*loaded)++;
			g[i].n++;
		}
		free(arg);
		if (g[i].n == 0)
			return cli_usage("compare", "empty group '%s'", a->groups[i]);
	}
	return 0;
}

/* One run's stacks at the peak, for --stacks. Returns 0 or EXIT_FAIL / EXIT_USAGE
 * (printed). */
static int stacks_load(struct store *st, const char *ref, struct run *r, struct stored_stack **v,
		       size_t *n)
{
	int64_t id;
	int ret = cli_resolve_run(st, ref, &id);
	if (ret)
		return ret;
	if (store_get_run(st, id, r) < 0) {
		cli_error("cannot read run %lld: %s", (long long)id, store_errmsg(st));
		return EXIT_FAIL;
	}
	if (!RUN_HAS_STACKS(r)) {
		cli_error("run %lld has no stacks: record with --stacks to compare them",
			  (long long)id);
		return EXIT_FAIL;
	}
	if (store_stacks(st, id, STACKS_AT_PEAK, v, n) < 0) {
		cli_error("cannot read the stacks of run %lld: %s", (long long)id, store_errmsg(st));
		return EXIT_FAIL;
	}
	return 0;
}

/* --stacks: the two runs' live bytes at the peak, stack by stack (render/stackdiff.h).
 * Returns 0, EXIT_USAGE or EXIT_FAIL (printed). */
static int compare_stacks(struct store *st, const struct compare_args *a)
{
	if (a->ng != 2 || a->grouped)
		return cli_usage("compare", "--stacks compares two runs: give two, not groups");
	struct run r[2];
	struct stored_stack *v[2] = { NULL, NULL };
	size_t n[2] = { 0, 0 };
	struct stackdiff d = { 0 };
	struct buf b = { 0 };
	int ret = 0;
	memset(r, 0, sizeof(r));
	for (int i = 0; i < 2 && !ret; i++)
		ret = stacks_load(st, a->groups[i], &r[i], &v[i], &n[i]);
	if (ret)
		goto out;
	stackdiff_build(v[0], n[0], v[1], n[1], &d);
	if (a->format == FORMAT_JSON)
		stackdiff_json(&b, &d);
	else
		stackdiff_text(&b, &d, r[0].id, r[1].id, a->top ? (size_t)a->top : STACKDIFF_TOP);
	fputs(buf_str(&b), stdout);
out:
	stackdiff_release(&d);
	buf_release(&b);
	for (int i = 0; i < 2; i++) {
		store_free_stacks(v[i], n[i]);
		run_release(&r[i]);
	}
	return ret;
}

/* -o: the RSS of the n loaded runs, overlaid, into the SVG file. Returns 0 or EXIT_FAIL
 * (printed). */
static int compare_draw(const struct compare_args *a, struct loaded_run *lr, size_t n)
{
	struct chart_run *chart = xcalloc(n, sizeof(*chart));
	struct chart_opts o;
	struct buf b = { 0 };
	char xt[256];
	int ret = plot_prepare(lr, n, a->align, chart);
	if (ret)
		goto out;
	memset(&o, 0, sizeof(o));
	if (a->align) {
		snprintf(xt, sizeof(xt), "time since mark \"%s\"", a->align);
		o.x_title = xt;
	}
	svg_chart(&b, chart, n, &o, NULL);
	ret = write_output(a->out, &b);
out:
	buf_release(&b);
	free(chart);
	return ret;
}

int cmd_compare(int argc, char **argv)
{
	struct compare_args a;
	int ret = read_args(argc, argv, &a);
	if (ret)
		return ret == CLI_DONE ? EXIT_OK : ret;
	/* "sID:N": the last N runs of a series, as N arguments (or in their group) */
	struct store *st;
	if ((ret = cli_open_runs(a.db, a.groups, a.ng, &st, &a.groups, &a.ng)) != 0)
		return ret;
	ret = count_runs(&a);
	if (ret == 0 && a.stacks)
		ret = compare_stacks(st, &a);
	if (ret || a.stacks) {
		cli_free_refs(a.groups, a.ng);
		store_close(st);
		return ret;
	}
	struct loaded_run *lr = xcalloc(a.total, sizeof(*lr));
	struct cmp_run *cr = xcalloc(a.total, sizeof(*cr));
	struct cmp_group *g = xcalloc(a.total, sizeof(*g));	/* --by: up to one per run */
	struct buf b = { 0 };
	size_t loaded = 0, ng = a.ng;
	int grouped = a.grouped;
	if ((ret = compare_load(st, &a, lr, cr, g, &loaded)) != 0)
		goto out;
	if (a.out && (ret = compare_draw(&a, lr, loaded)) != 0)
		goto out;
	if (a.by) {
		grouped = 1;
		if ((ret = regroup(a.by, cr, loaded, g, &ng, a.format == FORMAT_JSON ? NULL : &b)) != 0)
			goto out;
	}
	if (a.format == FORMAT_JSON)
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
	buf_release(&b);
	cli_free_refs(a.groups, a.ng);
	store_close(st);
	return ret;
}
