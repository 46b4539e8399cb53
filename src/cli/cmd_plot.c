/* rsswatch plot: memory over time of one or more runs as an SVG file. */
#include "base/buf.h"
#include "base/parse.h"
#include "base/util.h"
#include "cli/cli.h"
#include "cli/output.h"
#include "cli/runload.h"
#include "render/png.h"
#include "render/procs.h"
#include "render/stack.h"
#include "render/svg.h"
#include "store/store.h"

#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Keeps, in the order given, the counters of cr named in the comma-separated list
 * names ("none": no counters); into *keep (to free). Returns 0 or EXIT_FAIL (printed). */
static int pick_counters(struct chart_run *cr, const char *names, struct counter_series **keep)
{
	*keep = NULL;
	cr->ncounters = strcmp(names, "none") == 0 ? 0 : cr->ncounters;
	if (!cr->ncounters) {
		cr->counters = NULL;
		return 0;
	}
	char *list = xstrdup(names), *save = NULL;
	size_t n = 0;
	struct counter_series *k = xcalloc(cr->ncounters, sizeof(*k));
	for (char *name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
		size_t i;
		for (i = 0; i < cr->ncounters; i++)
			if (strcmp(cr->counters[i].name, name) == 0)
				break;
		if (i == cr->ncounters) {
			cli_error("run %lld has no counter or gauge '%s'", (long long)cr->run->id, name);
			free(list);
			free(k);
			return EXIT_FAIL;
		}
		if (n < cr->ncounters)
			k[n++] = cr->counters[i];	/* shallow: the arrays stay the run's */
	}
	free(list);
	cr->counters = k;
	cr->ncounters = n;
	*keep = k;
	return 0;
}

/* What the command line asks for. */
struct plot_args {
	const char *db, *out, *align, *counters;
	int by_process;
	enum output_format format;	/* FORMAT_SVG or FORMAT_PNG; FORMAT_COUNT: not given */
	struct chart_opts o;
	char **refs;		/* the runs to draw, n of them */
	size_t n;
};

#define AT(field, type) CLI_AT(struct plot_args, field, type)
static const struct cli_opt plot_opts[] = {
	{ "output", 'o', CLI_STRING, AT(out, const char *), .arg = "FILE",
	  .help = "the SVG file to write ('-' for standard output); a name ending in .png "
		  "gives a PNG image at twice the size (when built with librsvg)" },
	{ "format", 'f', CLI_FORMAT, AT(format, enum output_format),
	  .formats = FORMAT_BIT(FORMAT_SVG) | FORMAT_BIT(FORMAT_PNG),
	  .help = ": what -o - writes (default svg); with a file name, it must agree with the "
		  "name's ending" },
	{ "align", 0, CLI_STRING, AT(align, const char *), .arg = "MARK",
	  .help = "overlay runs aligned at the mark MARK (default: at their start)" },
	{ "by-process", 0, CLI_FLAG, AT(by_process, int),
	  .help = "one set (--tree, -g): its largest processes' RSS stacked, the 8 largest by "
		  "peak named, the rest as others" },
	{ "counters", 0, CLI_STRING, AT(counters, const char *), .arg = "NAME,...",
	  .help = "the application counters and gauges to draw under the chart of one run "
		  "(default: the first 6; 'none' for none)" },
	{ "time", 0, CLI_CHOICE, AT(o.time, enum chart_time), .choices = cli_chart_times,
	  .help = "x axis: 'elapsed' (default) or 'wall' (local clock time)" },
	{ "title", 0, CLI_STRING, AT(o.title, const char *), .arg = "TEXT",
	  .help = "a title above the chart" },
	{ "width", 0, CLI_INT, AT(o.width, int), .min = 200, .max = 10000, .arg = "PX",
	  .help = "image width (default 960)" },
	{ "height", 0, CLI_INT, AT(o.height, int), .min = 200, .max = 10000, .arg = "PX",
	  .help = "image height (default 440)" },
	CLI_DB_ROW(struct plot_args),
	CLI_OPTS_END,
};

const struct cli_cmd plot_cli = {
	.verb = "plot",
	.usage = "usage: rsswatch plot RUN... -o FILE.svg|FILE.png [OPTIONS]\n",
	.about = "Draws memory over time as an SVG image. One run: RSS over its anon, file and\n"
		 "shmem parts, the high-water mark, PSS, cgroup and GPU memory when sampled, the\n"
		 "peak, marks and events; below it, CPU use and major page faults per second\n"
		 "(when recorded) and its counters and gauges. Several runs: one RSS line each,\n"
		 "overlaid, with each run's peak marked.\n"
		 "RUN is a run id or 'last' (the default); sID is the last run of series ID\n"
		 "(record --follow), sID:N its last N runs.\n",
	.opts = plot_opts,
};

/* The picture -o names: a file's name says what it holds (a --format given must agree);
 * standard output takes the --format given, else SVG. Into *f; returns 0 or EXIT_USAGE
 * (printed). */
static int picture_format(const char *verb, const char *out, int given, enum output_format *f)
{
	if (strcmp(out, "-") == 0 || strcmp(out, "/dev/stdout") == 0) {
		if (!given)
			*f = FORMAT_SVG;
		return 0;
	}
	enum output_format named = path_is_png(out) ? FORMAT_PNG : FORMAT_SVG;
	if (given && *f != named) {
		struct buf shown = { 0 };
		buf_put_printable(&shown, out);
		int ret = cli_usage(verb, "--format %s and -o %s disagree: the name's ending says "
				    "%s (give a name ending in %s, or - for standard output)",
				    output_format_ops(*f)->name, buf_str(&shown),
				    output_format_ops(named)->name, output_format_ops(*f)->ext);
		buf_release(&shown);
		return ret;
	}
	*f = named;
	return 0;
}

/* Reads the options and runs into *a. Returns 0, CLI_DONE (--help printed) or
 * EXIT_USAGE / EXIT_FAIL (printed). */
static int read_args(int argc, char **argv, struct plot_args *a)
{
	static char *last[] = { "last" };
	memset(a, 0, sizeof(*a));
	a->format = FORMAT_COUNT;
	int ret = cli_parse(&plot_cli, argc, argv, a);
	if (ret)
		return ret;
	static const char *const kinds[] = { ".svg", ".png", NULL };
	if (!a->out)
		return cli_usage("plot", "give the output file with -o FILE.svg");
	if ((ret = cli_output_kind("plot", a->out, kinds)) != 0)
		return ret;
	if ((ret = picture_format("plot", a->out, a->format != FORMAT_COUNT, &a->format)) != 0)
		return ret;
	if (a->format == FORMAT_PNG && !png_available()) {
		cli_error("%s", png_unavailable());
		return EXIT_FAIL;
	}
	if (a->align && a->o.time == CHART_WALL)
		return cli_usage("plot", "--align and --time wall do not go together");
	a->refs = optind < argc ? argv + optind : last;
	a->n = optind < argc ? (size_t)(argc - optind) : 1;
	return 0;
}

/* --by-process: the processes of the set drawn in cr, stacked, into *stack (which cr
 * then points to). Returns 0 or EXIT_FAIL (printed). */
static int plot_stack(struct store *st, struct chart_run *cr, struct proc_stack *stack)
{
	long long id = (long long)cr->run->id;
	if (!run_is_set(cr->run)) {
		cli_error("run %lld is one process: --by-process needs a set (record --tree or -g)", id);
		return EXIT_FAIL;
	}
	if (store_each_proc_at_sample(st, cr->run->id, proc_stack_add, stack) < 0) {
		cli_error("cannot read run %lld: %s", id, store_errmsg(st));
		return EXIT_FAIL;
	}
	proc_stack_finish(stack, STACK_TOP);
	if (!stack->nt) {
		cli_error("run %lld has no per-process figures", id);
		return EXIT_FAIL;
	}
	cr->stack = stack;
	return 0;
}

/* Draws the n runs of cr and writes the picture to the file the command line names.
 * Returns 0 or EXIT_FAIL (printed). */
static int plot_write(const struct plot_args *a, struct chart_run *cr, size_t n)
{
	struct chart_opts o = a->o;
	struct buf b = { 0 }, title = { 0 };
	char xt[256];
	if (a->align) {
		snprintf(xt, sizeof(xt), "time since mark \"%s\"", a->align);
		o.x_title = xt;
	}
	int png = a->format == FORMAT_PNG;
	if (png && !o.title) {	/* a picture travels alone: it says what it shows */
		const struct run **runs = xcalloc(n, sizeof(*runs));
		for (size_t i = 0; i < n; i++)
			runs[i] = cr[i].run;
		runs_title(&title, runs, n);
		free(runs);
		o.title = buf_str(&title);
	}
	svg_chart(&b, cr, n, &o, NULL);
	int ret = png ? write_png(a->out, &b) : write_output(a->out, &b);
	buf_release(&b);
	buf_release(&title);
	return ret;
}

int cmd_plot(int argc, char **argv)
{
	struct plot_args a;
	int ret = read_args(argc, argv, &a);
	if (ret)
		return ret == CLI_DONE ? EXIT_OK : ret;
	/* "sID:N": the last N runs of a series */
	struct store *st;
	if ((ret = cli_open_runs(a.db, a.refs, a.n, &st, &a.refs, &a.n)) != 0)
		return ret;
	if (a.by_process && a.n > 1) {
		cli_free_refs(a.refs, a.n);
		store_close(st);
		return cli_usage("plot", "--by-process draws one run");
	}
	struct loaded_run *lr = xcalloc(a.n, sizeof(*lr));
	struct chart_run *cr = xcalloc(a.n, sizeof(*cr));
	struct counter_series *picked = NULL;
	struct proc_stack stack;
	memset(&stack, 0, sizeof(stack));
	size_t loaded = 0;
	for (; loaded < a.n; loaded++)
		if ((ret = loaded_run_load(st, a.refs[loaded], &lr[loaded])) != 0)
			goto out;
	if ((ret = plot_prepare(lr, a.n, a.align, cr)) != 0)
		goto out;
	if (a.counters && a.n == 1 && (ret = pick_counters(&cr[0], a.counters, &picked)) != 0)
		goto out;
	if (a.by_process && (ret = plot_stack(st, &cr[0], &stack)) != 0)
		goto out;
	ret = plot_write(&a, cr, a.n);
out:
	for (size_t i = 0; i < loaded; i++)
		loaded_run_release(&lr[i]);
	free(lr);
	free(cr);
	free(picked);
	proc_stack_release(&stack);
	cli_free_refs(a.refs, a.n);
	store_close(st);
	return ret;
}
