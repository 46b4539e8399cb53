/* `export`'s rows: a run's samples in a row format (render/format.h: CSV, JSON lines,
 * ...), one row per sample, the columns derived from the store's column table
 * (store/run.h: store_sample_table, in its order, each under its output name), then one
 * column per GPU (gpuN_bytes) and per application counter (counter.NAME). Pure: rows
 * into a buffer.
 *
 * Use: export_init; feed every sample to export_scan (which optional columns the run
 * has), every counter value to export_counter and every GPU row to export_gpu; then
 * export_ready, export_header and export_row for each sample in time order;
 * export_release. A set's members at each sample (`export --procs`) are proc_row's
 * (render/rows.h). */
#ifndef RSW_RENDER_EXPORT_H
#define RSW_RENDER_EXPORT_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "render/format.h"
#include "store/run.h"

/* Values stored apart from the samples (counters when they change, GPU figures when
 * read), each row of output showing the latest at or before its time. */
struct export_side {
	char **names;		/* column names */
	size_t ncols, names_cap;
	struct export_side_row *rows;
	size_t n, cap, next;
	long long *cur;		/* latest value per column */
	char *seen;		/* the column has a (known) value */
};

struct exporter {
	enum output_format format;	/* a row format (output_formats_with_rows) */
	int64_t started_at;
	unsigned have;		/* the optional figures (SAMPLE_*) some sample has */
	int64_t rows, row;	/* samples in the run; rows written */
	struct export_side counters, gpus;
};

void export_init(struct exporter *ex, enum output_format format, int64_t started_at);
/* The first pass over the samples; a store_each_sample callback (returns 0). */
int export_scan(void *ex, const struct sample *s);
/* A store_each_counter and a store_each_gpu callback (return 0). */
int export_counter(void *ex, int64_t elapsed_ns, const char *name, long long value);
int export_gpu(void *ex, int64_t elapsed_ns, const struct gpu_figures *g);
/* Ends the first pass. */
void export_ready(struct exporter *ex);
/* The header line, for a format that has one (CSV): the columns this run has. */
void export_header(const struct exporter *ex, struct buf *b);
/* One sample's row, appended to b. Called for every sample, in time order: the last
 * row also takes the counters stored after the last sample (read once the target had
 * ended: the values at the end of the run). */
void export_row(struct exporter *ex, struct buf *b, const struct sample *s);
void export_release(struct exporter *ex);

/* export --help's words on the rows: every column export writes, with its help line
 * from the column tables (store/run.h), the optional ones apart, and the columns of
 * --procs. Lines of at most 80 columns, each ending in a newline. */
void export_columns_help(struct buf *b);

#endif
