/* rsswatch export: a run's samples in a row format (CSV, JSON lines, ...: every format
 * of render/format.h with row ops), one row per sample; with --procs, one row per
 * process of a set per sample. */
#include "base/buf.h"
#include "base/safefile.h"
#include "base/util.h"
#include "cli/cli.h"
#include "render/callstacks.h"
#include "render/export.h"
#include "render/procs.h"
#include "render/rows.h"
#include "store/store.h"

#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* Where the rows go: the renderer's row in line, then the file. */
struct sink {
	FILE *out;
	struct exporter ex;
	struct buf line;
};

static int write_row(void *ctx, const struct sample *s)
{
	struct sink *k = ctx;
	buf_reset(&k->line);
	export_row(&k->ex, &k->line, s);
	return fputs(buf_str(&k->line), k->out) < 0 ? -EIO : 0;
}

static int write_proc_row(void *ctx, int64_t elapsed_ns, const struct proc_figures *p)
{
	struct sink *k = ctx;
	buf_reset(&k->line);
	proc_row(&k->line, k->ex.format, k->ex.started_at, elapsed_ns, p);
	return fputs(buf_str(&k->line), k->out) < 0 ? -EIO : 0;
}

/* What the command line asks for. */
struct export_args {
	const char *db, *output;
	enum output_format format;	/* FORMAT_COUNT: not given */
	int procs;
	int stacks;		/* 1 + enum stack_moment; 0: samples */
};

static const struct cli_choice stack_moments[] = {
	{ "peak", 1 + STACKS_AT_PEAK },
	{ "end", 1 + STACKS_AT_END },
	{ "gpu", 1 + STACKS_AT_GPU_PEAK },
	{ NULL, 0 },
};

#define AT(field, type) CLI_AT(struct export_args, field, type)
static const struct cli_opt export_opts[] = {
	{ "format", 'f', CLI_FORMAT, AT(format, enum output_format), .formats = CLI_FORMAT_ROWS },
	{ "procs", 0, CLI_FLAG, AT(procs, int), .help = "one row per process of the set per sample" },
	{ "stacks", 0, CLI_CHOICE, AT(stacks, int), .flags = CLI_OPTIONAL,
	  .set = 1 + STACKS_AT_PEAK, .choices = stack_moments, .arg = "WHEN",
	  .help = "instead of samples: a run recorded with --stacks as folded stacks (root "
		  "first, frames separated by ';', then the bytes), what flamegraph.pl, inferno "
		  "and speedscope read; WHEN peak (the default), end, or gpu (the device "
		  "memory from the CUDA driver at its peak)" },
	{ "output", 'o', CLI_STRING, AT(output, const char *), .arg = "F",
	  .help = "write to file F (mode 0600) instead of standard output (-)" },
	CLI_DB_ROW(struct export_args),
	CLI_OPTS_END,
};

/* The usage names the row formats of render/format.c's table: "csv|jsonl|...". */
static void export_help(const struct cli_cmd *c, struct buf *b)
{
	struct buf bars = { 0 };
	output_format_names(&bars, output_formats_with_rows(), "|", "|");
	buf_printf(b, "usage: rsswatch export [RUN] --format %s [--procs] [-o FILE] [--db PATH]\n"
		   "       rsswatch export [RUN] --stacks[=peak|end|gpu] [-o FILE] [--db PATH]\n"
		   "\n", buf_str(&bars));
	export_columns_help(b);
	buf_puts(b, "\n");
	cli_help_options(c, b);
	buf_release(&bars);
}

const struct cli_cmd export_cli = {
	.verb = "export",
	.opts = export_opts,
	.help = export_help,
};

/* Reads the options into *a. Returns 0, CLI_DONE (--help printed) or EXIT_USAGE
 * (printed). */
static int read_args(int argc, char **argv, struct export_args *a)
{
	memset(a, 0, sizeof(*a));
	a->format = FORMAT_COUNT;
	int ret = cli_parse(&export_cli, argc, argv, a);
	if (ret == 0 && a->stacks && (a->format != FORMAT_COUNT || a->procs))
		return cli_usage("export", "--stacks has a format of its own: drop --format and "
				 "--procs");
	if (ret == 0 && a->format == FORMAT_COUNT && !a->stacks) {
		struct buf names = { 0 };
		output_format_names(&names, output_formats_with_rows(), ", ", " or ");
		ret = cli_usage("export", "give --format %s", buf_str(&names));
		buf_release(&names);
	}
	return ret;
}

/* The run into *r and, without --procs, the exporter's first pass over its samples,
 * counters and GPUs (which columns the rows will have) into k. Returns 0 or EXIT_FAIL
 * (printed). */
static int export_scan_run(const struct export_args *a, struct store *st, int64_t id,
			   struct run *r, struct sink *k)
{
	if (store_get_run(st, id, r) < 0 ||
	    (!a->procs && (store_each_sample(st, id, export_scan, &k->ex) < 0 ||
			   store_each_counter(st, id, export_counter, &k->ex) < 0 ||
			   store_each_gpu(st, id, export_gpu, &k->ex) < 0))) {
		cli_error("cannot read run %lld: %s", (long long)id, store_errmsg(st));
		return EXIT_FAIL;
	}
	if (a->procs && !run_is_set(r)) {
		cli_error("run %lld recorded one process; --procs needs a set: record with -t or a "
			  "COMMAND", (long long)id);
		return EXIT_FAIL;
	}
	k->ex.started_at = r->started_at;
	export_ready(&k->ex);
	return 0;
}

/* Folded stacks of run id (export --stacks) to the output. 0 or EXIT_FAIL (printed). */
static int export_stacks(const struct export_args *a, struct store *st, int64_t id)
{
	struct run r;
	memset(&r, 0, sizeof(r));
	struct stored_stack *v = NULL;
	size_t n = 0;
	if (store_get_run(st, id, &r) < 0 ||
	    (RUN_HAS_STACKS(&r) && store_stacks(st, id, (enum stack_moment)(a->stacks - 1), &v, &n) < 0)) {
		cli_error("cannot read run %lld: %s", (long long)id, store_errmsg(st));
		run_release(&r);
		return EXIT_FAIL;
	}
	int has = RUN_HAS_STACKS(&r);
	int no_gpu = !r.stacks_gpu_peak_at;
	run_release(&r);
	if (!has) {
		cli_error("run %lld has no stacks: record with --stacks", (long long)id);
		return EXIT_FAIL;
	}
	static const char *const none[STACK_MOMENTS] = {
		[STACKS_AT_PEAK] = "no stack held memory at its peak",
		[STACKS_AT_END] = "no stack held memory at its end",
		[STACKS_AT_GPU_PEAK] = "no stack held GPU memory",
	};
	enum stack_moment at = (enum stack_moment)(a->stacks - 1);
	if (!n)	/* an empty answer, said: a pipe into flamegraph.pl would say nothing */
		fprintf(stderr, "rsswatch: run %lld: %s%s\n", (long long)id, none[at],
			at == STACKS_AT_GPU_PEAK && no_gpu ? " (the GPU probes saw no "
			"allocation from the CUDA driver)" : "");
	struct buf b = { 0 };
	callstacks_folded(&b, v, n);
	store_free_stacks(v, n);
	struct safefile sf;
	FILE *out = a->output ? safefile_open(&sf, a->output, 0600) : stdout;
	if (!out) {
		cli_error("cannot write %s: %s", a->output, sf.why);
		buf_release(&b);
		return EXIT_FAIL;
	}
	errno = 0;
	const char *why = NULL;
	if (fputs(buf_str(&b), out) < 0 || fflush(out) != 0 || ferror(out))
		why = errno ? errstr(errno) : "write error";
	buf_release(&b);
	if (a->output && safefile_close(&sf, !why) < 0 && !why)
		why = "write error";
	if (why) {
		cli_error("cannot write %s: %s", a->output && strcmp(a->output, "-") ? a->output
			  : "to standard output", why);
		return EXIT_FAIL;
	}
	return 0;
}

/* The header (where the format has one) and the rows of run id to the output file or
 * standard output. Returns 0 or EXIT_FAIL (printed). */
static int export_write(const struct export_args *a, struct store *st, int64_t id,
			struct sink *k)
{
	struct safefile sf;
	k->out = a->output ? safefile_open(&sf, a->output, 0600) : stdout;
	if (!k->out) {
		cli_error("cannot write %s: %s", a->output, sf.why);
		return EXIT_FAIL;
	}
	buf_reset(&k->line);
	if (a->procs)
		proc_rows_header(&k->line, k->ex.format);
	else
		export_header(&k->ex, &k->line);
	fputs(buf_str(&k->line), k->out);
	int e = a->procs ? store_each_proc_at_sample(st, id, write_proc_row, k)
			 : store_each_sample(st, id, write_row, k);
	const char *why = e < 0 ? store_errmsg(st) : NULL;
	errno = 0;
	if (fflush(k->out) != 0 || ferror(k->out))
		why = errno ? errstr(errno) : "write error";
	if (a->output && safefile_close(&sf, !why) < 0 && !why)
		why = "write error";
	if (why) {
		cli_error("cannot write %s: %s", a->output && strcmp(a->output, "-") ? a->output
			  : "to standard output", why);
		return EXIT_FAIL;
	}
	return 0;
}

int cmd_export(int argc, char **argv)
{
	struct export_args a;
	int ret = read_args(argc, argv, &a);
	if (ret)
		return ret == CLI_DONE ? EXIT_OK : ret;
	const char *ref;
	struct store *st;
	if ((ret = cli_one_run("export", argc, argv, a.db, &ref, &st)) != 0)
		return ret;
	int64_t id;
	struct run r;
	memset(&r, 0, sizeof(r));
	struct sink k;
	memset(&k, 0, sizeof(k));
	if (a.stacks) {
		if ((ret = cli_resolve_run(st, ref, &id)) == 0)
			ret = export_stacks(&a, st, id);
		store_close(st);
		return ret;
	}
	export_init(&k.ex, a.format, 0);
	if ((ret = cli_resolve_run(st, ref, &id)) == 0 &&
	    (ret = export_scan_run(&a, st, id, &r, &k)) == 0)
		ret = export_write(&a, st, id, &k);
	export_release(&k.ex);
	buf_release(&k.line);
	run_release(&r);
	store_close(st);
	return ret;
}
