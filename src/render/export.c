#include "render/export.h"
#include "base/fmt.h"
#include "base/parse.h"
#include "base/util.h"
#include "render/rows.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct export_side_row {
	int64_t t;
	size_t col;
	long long v;
	int known;		/* 0: the value became unknown (a GPU lost) */
};

void export_init(struct exporter *ex, enum output_format format, int64_t started_at)
{
	memset(ex, 0, sizeof(*ex));
	ex->format = format;
	ex->started_at = started_at;
}

static size_t side_col(struct export_side *sd, const char *name)
{
	for (size_t i = 0; i < sd->ncols; i++)
		if (strcmp(sd->names[i], name) == 0)
			return i;
	sd->names = xgrow(sd->names, sd->ncols, &sd->names_cap, sizeof(*sd->names));
	sd->names[sd->ncols] = xstrdup(name);
	return sd->ncols++;
}

static void side_add(struct export_side *sd, int64_t t, const char *name, long long v, int known)
{
	sd->rows = xgrow(sd->rows, sd->n, &sd->cap, sizeof(*sd->rows));
	sd->rows[sd->n].t = t;
	sd->rows[sd->n].col = side_col(sd, name);
	sd->rows[sd->n].v = v;
	sd->rows[sd->n].known = known;
	sd->n++;
}

int export_counter(void *ctx, int64_t t, const char *name, long long v)
{
	struct exporter *ex = ctx;
	char col[64];
	snprintf(col, sizeof(col), "counter.%s", name);
	side_add(&ex->counters, t, col, v, 1);
	return 0;
}

int export_gpu(void *ctx, int64_t t, const struct gpu_figures *g)
{
	struct exporter *ex = ctx;
	char col[32];
	snprintf(col, sizeof(col), "gpu%u_bytes", g->device);
	side_add(&ex->gpus, t, col, (long long)g->target_bytes, g->target_known);
	return 0;
}

int export_scan(void *ctx, const struct sample *s)
{
	struct exporter *ex = ctx;
	ex->have |= s->have;
	ex->rows++;
	return 0;
}

static void side_ready(struct export_side *sd)
{
	sd->cur = xcalloc(sd->ncols ? sd->ncols : 1, sizeof(*sd->cur));
	sd->seen = xcalloc(sd->ncols ? sd->ncols : 1, 1);
}

void export_ready(struct exporter *ex)
{
	side_ready(&ex->counters);
	side_ready(&ex->gpus);
}

static void side_release(struct export_side *sd)
{
	for (size_t i = 0; i < sd->ncols; i++)
		free(sd->names[i]);
	free(sd->names);
	free(sd->rows);
	free(sd->cur);
	free(sd->seen);
	memset(sd, 0, sizeof(*sd));
}

void export_release(struct exporter *ex)
{
	side_release(&ex->counters);
	side_release(&ex->gpus);
}

/* Appends the side's columns, as of time t (the last row: every value stored). */
static void side_fields(struct row *w, struct export_side *sd, int64_t t, int last)
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

/* Whether the run has column c: every sample has the fixed ones, the optional ones
 * (stored NULL where not measured) where some sample measured them. */
static int exported(const struct exporter *ex, const struct store_column *c)
{
	if (c->out == OUT_NONE)
		return 0;
	return c->null != COL_NULL_UNLESS_FLAG || (ex->have & c->flag);
}

#define HELP_NAME_WIDTH 24
#define HELP_WIDTH 80

/* text's words from column col on, wrapped at HELP_WIDTH with lines that go on at
 * column indent; ends the line. */
static void wrapped(struct buf *b, size_t indent, size_t col, const char *text)
{
	size_t first = col;
	for (const char *p = text; *p;) {
		size_t n = strcspn(p, " ");
		if (col > first && col + 1 + n > HELP_WIDTH) {
			buf_printf(b, "\n%*s", (int)indent, "");
			col = first = indent;
		} else if (col > first) {
			buf_putc(b, ' ');
			col++;
		}
		buf_append(b, p, n);
		col += n;
		p += n;
		while (*p == ' ')
			p++;
	}
	buf_putc(b, '\n');
}

/* "  NAME  help", the help wrapped under itself. */
static void help_line(struct buf *b, const char *name, const char *help)
{
	size_t indent = 2 + HELP_NAME_WIDTH + 2;
	buf_printf(b, "  %-*s  ", HELP_NAME_WIDTH, name);
	if (strlen(name) > HELP_NAME_WIDTH)
		buf_printf(b, "\n%*s", (int)indent, "");
	wrapped(b, indent, indent, help);
}

void export_columns_help(struct buf *b)
{
	const struct store_table *t = &store_sample_table;
	buf_puts(b, "Writes one row per sample of RUN (default: the last). Over a set (--tree, -g,\n"
		    "a launched COMMAND) the figures are totals over its processes, and the last\n"
		    "row of a run whose target ended is at its end, with the run's totals.\n"
		    "The columns:\n");
	help_line(b, "time", "The sample's time (ISO 8601 UTC).");
	help_line(b, "elapsed_s", "Seconds since the run began.");
	int optional = 0;
	for (size_t i = 0; i < t->ncols; i++) {
		const struct store_column *c = &t->cols[i];
		if (c->out == OUT_NONE)
			continue;
		if (c->null == COL_NULL_UNLESS_FLAG && !optional++)
			buf_puts(b, "and where the run has them (empty or null otherwise):\n");
		help_line(b, store_column_json(c), c->help);
	}
	help_line(b, "gpuN_bytes", "The target's memory on GPU N, where it was read.");
	help_line(b, "counter.NAME", "Each counter the application published through "
		  "librsswatch: its latest value at that time.");
	struct buf procs = { 0 };
	buf_puts(&procs, "time, elapsed_s");
	for (size_t i = 0; i < store_proc_sample_table.ncols; i++)
		if (store_proc_sample_table.cols[i].out != OUT_NONE)
			buf_printf(&procs, ", %s", store_column_json(&store_proc_sample_table.cols[i]));
	buf_putc(&procs, '.');
	buf_puts(b, "\nWith --procs (a run of a set), one row per process per sample instead:\n");
	wrapped(b, 0, 0, buf_str(&procs));
	buf_release(&procs);
}

void export_header(const struct exporter *ex, struct buf *b)
{
	struct row w;
	if (!row_format_has_header(ex->format))
		return;
	row_begin(&w, b, ex->format);
	row_str(&w, "time", "time");
	row_str(&w, "elapsed_s", "elapsed_s");
	for (size_t i = 0; i < store_sample_table.ncols; i++) {
		const struct store_column *c = &store_sample_table.cols[i];
		if (exported(ex, c))
			row_str(&w, store_column_json(c), store_column_json(c));
	}
	for (size_t i = 0; i < ex->gpus.ncols; i++)
		row_str(&w, ex->gpus.names[i], ex->gpus.names[i]);
	for (size_t i = 0; i < ex->counters.ncols; i++)
		row_str(&w, ex->counters.names[i], ex->counters.names[i]);
	row_end(&w);
}

void export_row(struct exporter *ex, struct buf *b, const struct sample *s)
{
	char v[48];
	struct row w;
	row_begin(&w, b, ex->format);
	row_str(&w, "time", fmt_iso8601(v, sizeof(v), ex->started_at + s->elapsed_ns));
	snprintf(v, sizeof(v), "%.3f", (double)s->elapsed_ns / NS_PER_S);
	row_raw(&w, "elapsed_s", v);
	for (size_t i = 0; i < store_sample_table.ncols; i++) {
		const struct store_column *c = &store_sample_table.cols[i];
		if (exported(ex, c))
			row_column(&w, c, s);
	}
	int last = ++ex->row == ex->rows;
	side_fields(&w, &ex->gpus, s->elapsed_ns, last);
	side_fields(&w, &ex->counters, s->elapsed_ns, last);
	row_end(&w);
}
