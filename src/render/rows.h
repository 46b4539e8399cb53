/* Rows for `export`, written field by field in any row format of render/format.h (CSV,
 * JSON lines, ...): how a row opens, separates and closes its fields, quotes its text and
 * writes a missing value is the format's row_ops, so this file has no code per format.
 * CSV follows RFC 4180 (a field with a comma, quote or line break is quoted, quotes
 * doubled); JSON lines are one object per row, the field names as keys. A CSV text cell
 * that a spreadsheet would take for a formula is neutralised (row_str). Text from
 * elsewhere (a process name) reaches CSV through buf_put_printable and JSON through
 * json_str. */
#ifndef RSW_RENDER_ROWS_H
#define RSW_RENDER_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "render/format.h"
#include "store/run.h"

struct row {
	struct buf *b;
	const struct row_ops *ops;
	int fields;		/* written so far in this row */
};

/* Starts a row in b (appended to), in format f: one with row ops (output_formats_with_rows). */
void row_begin(struct row *w, struct buf *b, enum output_format f);
/* A field whose text is already a JSON number (or null): written as it is. */
void row_raw(struct row *w, const char *name, const char *value);
void row_u64(struct row *w, const char *name, uint64_t v);
/* A missing value: the format's null (empty in CSV, null in JSON lines). */
void row_null(struct row *w, const char *name);
/* A text field. In CSV, one that begins with = + - @, a tab or a carriage return is
 * written as "'TEXT" (quoted, a single quote before it), so that no spreadsheet runs it
 * as a formula. */
void row_str(struct row *w, const char *name, const char *s);
/* Column c of row (a struct of c's table), under its output name (store_column_json),
 * written as its out says (OUT_PCT, OUT_SECONDS; else the integer or text); a value
 * its NULL rule says is not stored is missing (row_null). */
void row_column(struct row *w, const struct store_column *c, const void *row);
/* Ends the row with its newline (and the closing brace in JSON lines). */
void row_end(struct row *w);

/* Whether format f (a row format) starts with a header line naming the columns. */
int row_format_has_header(enum output_format f);
/* The header line of `export --procs` in format f, with its newline: time, elapsed_s and
 * the exported columns of store_proc_sample_table; nothing for a format without one. */
void proc_rows_header(struct buf *b, enum output_format f);
/* One process of a set at one sample (`export --procs`): time (ISO 8601 UTC: started_at
 * plus elapsed_ns), elapsed_s, and the exported columns of store_proc_sample_table
 * (pid, ppid, comm, rss_bytes, anon_bytes, file_bytes, shmem_bytes, swap_bytes). */
void proc_row(struct buf *b, enum output_format f, int64_t started_at, int64_t elapsed_ns,
	      const struct proc_figures *p);

#endif
