/* rsswatch export: a run's samples as CSV or JSON lines, one row per sample; with
 * --procs, one row per process of a set per sample. */
#include "base/buf.h"
#include "base/fmt.h"
#include "base/parse.h"
#include "base/safefile.h"
#include "base/util.h"
#include "cli/cli.h"
#include "render/procs.h"
#include "render/rows.h"
#include "store/store.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
	"usage: rsswatch export [RUN] --format csv|jsonl [--procs] [-o FILE] [--db PATH]\n"
	"\n"
	"Writes one row per sample of RUN (default: the last): time (ISO 8601 UTC),\n"
	"elapsed_s, rss_bytes, hwm_bytes, anon_bytes, file_bytes, shmem_bytes, swap_bytes,\n"
	"threads, mem_available_bytes, and pss_bytes, uss_bytes, swap_pss_bytes,\n"
	"pss_read_us (--pss: on the samples where smaps_rollup was read), cgroup_bytes,\n"
	"cgroup_peak_bytes (the cgroup's peak over the interval where rsswatch made the\n"
	"cgroup), gpu_bytes where they were sampled, gpuN_bytes per GPU, the memory\n"
	"pressure (PSI) where the kernel has it: psi_some_avg10, psi_full_avg10 (percent),\n"
	"psi_some_total_us, psi_full_total_us, and cgroup_psi_* for a v2 cgroup; the\n"
	"context, cumulative since the process started (over a set: summed, those that\n"
	"left included): cpu_user_s, cpu_sys_s (CPU seconds in user and kernel mode),\n"
	"minflt, majflt (page faults without and with I/O), read_bytes, write_bytes\n"
	"(storage I/O, where /proc/PID/io is readable: empty otherwise); and\n"
	"counter.NAME for each counter the application published through librsswatch\n"
	"(its latest value at that time).\n"
	"\n"
	"With --procs (a run of a set: --tree, -g, or a launched COMMAND), one row per\n"
	"process per sample instead: time, elapsed_s, pid, ppid, comm, rss_bytes,\n"
	"anon_bytes, file_bytes, shmem_bytes, swap_bytes.\n"
	"\n"
	"  -f, --format F   csv or jsonl\n"
	"      --procs      one row per process of the set per sample\n"
	"  -o, --output F   write to file F instead of standard output\n"
	"      --db PATH    the run database\n";

/* A stream of (time, column, value) rows read ahead of the samples: counters and per-GPU
 * figures are stored when read (counters when they change), and each sample row shows
 * the latest value at or before its time. */
struct side_row {
	int64_t t;
	size_t col;
	long long v;
	int known;		/* 0: the value became unknown (a GPU lost) */
};

struct side {
	char **names;		/* column names */
	size_t ncols, names_cap;
	struct side_row *rows;
	size_t n, cap, next;
	long long *cur;		/* latest value per column */
	char *seen;		/* column has a value yet */
};

struct exporter {
	FILE *out;
	int jsonl;
	int64_t started_at;
	unsigned have;		/* optional columns present in this run */
	int64_t rows, row;	/* samples in the run; rows written */
	struct side counters, gpus;
	struct buf line;
};

static size_t side_col(struct side *sd, const char *name)
{
	for (size_t i = 0; i < sd->ncols; i++)
		if (strcmp(sd->names[i], name) == 0)
			return i;
	sd->names = xgrow(sd->names, sd->ncols, &sd->names_cap, sizeof(*sd->names));
	sd->names[sd->ncols] = xstrdup(name);
	return sd->ncols++;
}

static void side_add(struct side *sd, int64_t t, const char *name, long long v, int known)
{
	sd->rows = xgrow(sd->rows, sd->n, &sd->cap, sizeof(*sd->rows));
	sd->rows[sd->n].t = t;
	sd->rows[sd->n].col = side_col(sd, name);
	sd->rows[sd->n].v = v;
	sd->rows[sd->n].known = known;
	sd->n++;
}

static int counter_row(void *ctx, int64_t t, const char *name, long long v)
{
	char col[64];
	snprintf(col, sizeof(col), "counter.%s", name);
	side_add(ctx, t, col, v, 1);
	return 0;
}

static int gpu_row(void *ctx, int64_t t, const struct gpu_figures *g)
{
	char col[32];
	snprintf(col, sizeof(col), "gpu%u_bytes", g->device);
	side_add(ctx, t, col, (long long)g->target_bytes, g->target_known);
	return 0;
}

static void side_ready(struct side *sd)
{
	sd->cur = xcalloc(sd->ncols, sizeof(*sd->cur));
	sd->seen = xcalloc(sd->ncols, 1);
}

static void side_release(struct side *sd)
{
	for (size_t i = 0; i < sd->ncols; i++)
		free(sd->names[i]);
	free(sd->names);
	free(sd->rows);
	free(sd->cur);
	free(sd->seen);
}

/* Appends the side's columns, as of time t. The last sample's row also takes the
 * values stored after it (the application's last counters, read once the target had
 * ended): they are the values at the end of the run. */
static void side_fields(struct row *w, struct side *sd, int64_t t, int last)
{
	while (sd->next < sd->n && (last || sd->rows[sd->next].t <= t)) {
		sd->cur[sd->rows[sd->next].col] = sd->rows[sd->next].v;
		sd->seen[sd->rows[sd->next].col] = (char)sd->rows[sd->next].known;
		sd->next++;
	}
	for (size_t i = 0; i < sd->ncols; i++) {
		if (!sd->seen[i]) {
			row_null(w, sd->names[i]);
			continue;
		}
		char v[32];
		snprintf(v, sizeof(v), "%lld", sd->cur[i]);
		row_raw(w, sd->names[i], v);
	}
}

/* Columns present only where the run sampled them; is_pct 1: a double (percent, two
 * decimals); 2: nanoseconds (a uint64_t) written as seconds; else a uint64_t. */
static const struct {
	unsigned flag;
	const char *name;
	size_t off;
	int is_pct;
} optional_cols[] = {
	{ SAMPLE_PSS, "pss_bytes", offsetof(struct sample, pss), 0 },
	{ SAMPLE_PSS, "uss_bytes", offsetof(struct sample, uss), 0 },
	{ SAMPLE_PSS, "swap_pss_bytes", offsetof(struct sample, swap_pss), 0 },
	{ SAMPLE_PSS, "pss_read_us", offsetof(struct sample, pss_read_us), 0 },
	{ SAMPLE_CGROUP, "cgroup_bytes", offsetof(struct sample, cgroup), 0 },
	{ SAMPLE_CGROUP_PEAK, "cgroup_peak_bytes", offsetof(struct sample, cgroup_peak), 0 },
	{ SAMPLE_PSI, "psi_some_avg10", offsetof(struct sample, psi_some_avg10), 1 },
	{ SAMPLE_PSI_FULL, "psi_full_avg10", offsetof(struct sample, psi_full_avg10), 1 },
	{ SAMPLE_PSI, "psi_some_total_us", offsetof(struct sample, psi_some_total_us), 0 },
	{ SAMPLE_PSI_FULL, "psi_full_total_us", offsetof(struct sample, psi_full_total_us), 0 },
	{ SAMPLE_CG_PSI, "cgroup_psi_some_avg10", offsetof(struct sample, cg_psi_some_avg10), 1 },
	{ SAMPLE_CG_PSI_FULL, "cgroup_psi_full_avg10", offsetof(struct sample, cg_psi_full_avg10), 1 },
	{ SAMPLE_CG_PSI, "cgroup_psi_some_total_us", offsetof(struct sample, cg_psi_some_total_us), 0 },
	{ SAMPLE_CG_PSI_FULL, "cgroup_psi_full_total_us", offsetof(struct sample, cg_psi_full_total_us), 0 },
	{ SAMPLE_CPU, "cpu_user_s", offsetof(struct sample, cpu_user_ns), 2 },
	{ SAMPLE_CPU, "cpu_sys_s", offsetof(struct sample, cpu_sys_ns), 2 },
	{ SAMPLE_CPU, "minflt", offsetof(struct sample, minflt), 0 },
	{ SAMPLE_CPU, "majflt", offsetof(struct sample, majflt), 0 },
	{ SAMPLE_IO, "read_bytes", offsetof(struct sample, read_bytes), 0 },
	{ SAMPLE_IO, "write_bytes", offsetof(struct sample, write_bytes), 0 },
	/* last: the per-GPU columns follow it */
	{ SAMPLE_GPU, "gpu_bytes", offsetof(struct sample, gpu), 0 },
};

/* First pass: which optional columns the run has, and how many rows. */
static int scan_have(void *ctx, const struct sample *s)
{
	struct exporter *ex = ctx;
	ex->have |= s->have;
	ex->rows++;
	return 0;
}

static int write_row(void *ctx, const struct sample *s)
{
	struct exporter *ex = ctx;
	char v[48];
	struct row w;
	buf_reset(&ex->line);
	row_begin(&w, &ex->line, ex->jsonl);
	row_str(&w, "time", fmt_iso8601(v, sizeof(v), ex->started_at + s->elapsed_ns));
	snprintf(v, sizeof(v), "%.3f", (double)s->elapsed_ns / NS_PER_S);
	row_raw(&w, "elapsed_s", v);
	const struct { const char *name; uint64_t v; } cols[] = {
		{ "rss_bytes", s->rss }, { "hwm_bytes", s->hwm }, { "anon_bytes", s->anon },
		{ "file_bytes", s->file }, { "shmem_bytes", s->shmem }, { "swap_bytes", s->swap },
		{ "threads", s->threads }, { "mem_available_bytes", s->mem_available },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cols); i++)
		row_u64(&w, cols[i].name, cols[i].v);
	for (size_t i = 0; i < ARRAY_SIZE(optional_cols); i++) {
		if (!(ex->have & optional_cols[i].flag))
			continue;
		const char *field = (const char *)s + optional_cols[i].off;
		const char *name = optional_cols[i].name;
		if (!(s->have & optional_cols[i].flag)) {
			row_null(&w, name);
		} else if (optional_cols[i].is_pct == 1) {
			snprintf(v, sizeof(v), "%.2f", *(const double *)(const void *)field);
			row_raw(&w, name, v);
		} else if (optional_cols[i].is_pct == 2) {
			uint64_t ns = *(const uint64_t *)(const void *)field;
			snprintf(v, sizeof(v), "%llu.%03llu", (unsigned long long)(ns / NS_PER_S),
				 (unsigned long long)(ns % NS_PER_S / 1000000));
			row_raw(&w, name, v);
		} else {
			row_u64(&w, name, *(const uint64_t *)(const void *)field);
		}
	}
	int last = ++ex->row == ex->rows;
	side_fields(&w, &ex->gpus, s->elapsed_ns, last);
	side_fields(&w, &ex->counters, s->elapsed_ns, last);
	row_end(&w);
	return fputs(buf_str(&ex->line), ex->out) < 0 ? -EIO : 0;
}

/* The CSV header of the sample rows: the columns this run has. */
static void samples_header(struct exporter *ex)
{
	static const char *const fixed[] = { "time", "elapsed_s", "rss_bytes", "hwm_bytes",
					     "anon_bytes", "file_bytes", "shmem_bytes", "swap_bytes",
					     "threads", "mem_available_bytes" };
	struct row w;
	row_begin(&w, &ex->line, 0);
	for (size_t i = 0; i < ARRAY_SIZE(fixed); i++)
		row_str(&w, fixed[i], fixed[i]);
	for (size_t i = 0; i < ARRAY_SIZE(optional_cols); i++)
		if (ex->have & optional_cols[i].flag)
			row_str(&w, optional_cols[i].name, optional_cols[i].name);
	for (size_t i = 0; i < ex->gpus.ncols; i++)
		row_str(&w, ex->gpus.names[i], ex->gpus.names[i]);
	for (size_t i = 0; i < ex->counters.ncols; i++)
		row_str(&w, ex->counters.names[i], ex->counters.names[i]);
	row_end(&w);
}

static int write_proc_row(void *ctx, int64_t elapsed_ns, const struct proc_figures *p)
{
	struct exporter *ex = ctx;
	buf_reset(&ex->line);
	proc_row(&ex->line, ex->jsonl, ex->started_at, elapsed_ns, p);
	return fputs(buf_str(&ex->line), ex->out) < 0 ? -EIO : 0;
}

int cmd_export(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "procs", no_argument, NULL, 'P' },
		{ "db", required_argument, NULL, CLI_OPT_DB },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, procs = 0;
	const char *db = NULL, *format = NULL, *output = NULL;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'f': format = optarg; break;
		case 'o': output = optarg; break;
		case 'P': procs = 1; break;
		case CLI_OPT_DB: db = optarg; break;
		case 'h': fputs(usage_text, stdout); return EXIT_OK;
		case ':': return cli_usage("export", "option '%s' needs a value", argv[optind - 1]);
		default: return cli_usage("export", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (!format)
		return cli_usage("export", "give --format csv or --format jsonl");
	if (strcmp(format, "csv") != 0 && strcmp(format, "jsonl") != 0)
		return cli_usage("export", "unknown format '%s': give csv or jsonl", format);
	if (argc - optind > 1)
		return cli_usage("export", "give one RUN");
	const char *ref = optind < argc ? argv[optind] : "last";

	struct store *st;
	int ret = cli_open_store(db, &st, 0);
	if (ret)
		return ret;
	int64_t id;
	struct run r;
	memset(&r, 0, sizeof(r));
	struct exporter ex;
	memset(&ex, 0, sizeof(ex));
	ex.jsonl = format[0] == 'j';
	if ((ret = cli_resolve_run(st, ref, &id)) != 0)
		goto out;
	if (store_get_run(st, id, &r) < 0 || (!procs && (store_each_sample(st, id, scan_have, &ex) < 0 ||
	    store_each_counter(st, id, counter_row, &ex.counters) < 0 ||
	    store_each_gpu(st, id, gpu_row, &ex.gpus) < 0))) {
		cli_error("cannot read run %lld: %s", (long long)id, store_errmsg(st));
		ret = EXIT_FAIL;
		goto out;
	}
	if (procs && !run_is_set(&r)) {
		cli_error("run %lld recorded one process; --procs needs a set: record with -t or a "
			  "COMMAND", (long long)id);
		ret = EXIT_FAIL;
		goto out;
	}
	ex.started_at = r.started_at;
	side_ready(&ex.counters);
	side_ready(&ex.gpus);
	struct safefile sf;
	ex.out = output ? safefile_open(&sf, output, 0644) : stdout;
	if (!ex.out) {
		cli_error("cannot write %s: %s", output, sf.why);
		ret = EXIT_FAIL;
		goto out;
	}
	if (!ex.jsonl) {
		buf_reset(&ex.line);
		if (procs)
			proc_rows_header(&ex.line);
		else
			samples_header(&ex);
		fputs(buf_str(&ex.line), ex.out);
	}
	int e = procs ? store_each_proc_at_sample(st, id, write_proc_row, &ex)
		      : store_each_sample(st, id, write_row, &ex);
	const char *why = e < 0 ? store_errmsg(st) : NULL;
	errno = 0;
	if (fflush(ex.out) != 0 || ferror(ex.out))
		why = errno ? errstr(errno) : "write error";
	if (output && safefile_close(&sf, !why) < 0 && !why)
		why = "write error";
	if (why) {
		cli_error("cannot write %s: %s", output ? output : "to standard output", why);
		ret = EXIT_FAIL;
	}
out:
	side_release(&ex.counters);
	side_release(&ex.gpus);
	buf_release(&ex.line);
	run_release(&r);
	store_close(st);
	return ret;
}
