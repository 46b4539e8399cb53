#include "render/rows.h"
#include "base/fmt.h"
#include "base/parse.h"

#include <stdio.h>
#include <string.h>

void row_begin(struct row *w, struct buf *b, enum output_format f)
{
	w->b = b;
	w->ops = output_format_ops(f)->rows;
	w->fields = 0;
	buf_puts(b, w->ops->open);
}

int row_format_has_header(enum output_format f)
{
	return output_format_ops(f)->rows->header;
}

static void field(struct row *w, const char *name)
{
	if (w->fields)
		buf_puts(w->b, w->ops->sep);
	if (w->ops->key)
		w->ops->key(w->b, name);
	w->fields++;
}

void row_raw(struct row *w, const char *name, const char *value)
{
	field(w, name);
	buf_puts(w->b, value);
}

void row_u64(struct row *w, const char *name, uint64_t v)
{
	field(w, name);
	buf_printf(w->b, "%llu", (unsigned long long)v);
}

void row_null(struct row *w, const char *name)
{
	field(w, name);
	buf_puts(w->b, w->ops->null);
}

void row_str(struct row *w, const char *name, const char *s)
{
	field(w, name);
	w->ops->text(w->b, s);
}

void row_end(struct row *w)
{
	buf_puts(w->b, w->ops->close);
}

void row_column(struct row *w, const struct store_column *c, const void *row)
{
	char v[48];
	const char *name = store_column_json(c);
	if (store_column_null(c, row)) {
		row_null(w, name);
		return;
	}
	if (c->kind == COL_TEXT || c->kind == COL_CHARS) {
		row_str(w, name, store_column_text(c, row));
	} else if (c->out == OUT_PCT) {
		snprintf(v, sizeof(v), "%.2f", store_column_f64(c, row));
		row_raw(w, name, v);
	} else if (c->out == OUT_SECONDS) {
		uint64_t ns = (uint64_t)store_column_i64(c, row);
		snprintf(v, sizeof(v), "%llu.%03llu", (unsigned long long)(ns / NS_PER_S),
			 (unsigned long long)(ns % NS_PER_S / 1000000));
		row_raw(w, name, v);
	} else {
		row_u64(w, name, (uint64_t)store_column_i64(c, row));
	}
}

void proc_rows_header(struct buf *b, enum output_format f)
{
	struct row w;
	if (!row_format_has_header(f))
		return;
	row_begin(&w, b, f);
	row_str(&w, "time", "time");
	row_str(&w, "elapsed_s", "elapsed_s");
	for (size_t i = 0; i < store_proc_sample_table.ncols; i++) {
		const struct store_column *c = &store_proc_sample_table.cols[i];
		if (c->out != OUT_NONE)
			row_str(&w, store_column_json(c), store_column_json(c));
	}
	row_end(&w);
}

void proc_row(struct buf *b, enum output_format f, int64_t started_at, int64_t elapsed_ns,
	      const struct proc_figures *p)
{
	char t[40];
	struct row w;
	row_begin(&w, b, f);
	row_str(&w, "time", fmt_iso8601(t, sizeof(t), started_at + elapsed_ns));
	snprintf(t, sizeof(t), "%.3f", (double)elapsed_ns / NS_PER_S);
	row_raw(&w, "elapsed_s", t);
	for (size_t i = 0; i < store_proc_sample_table.ncols; i++)
		if (store_proc_sample_table.cols[i].out != OUT_NONE)
			row_column(&w, &store_proc_sample_table.cols[i], p);
	row_end(&w);
}
