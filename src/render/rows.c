#include "render/rows.h"
#include "base/fmt.h"
#include "base/parse.h"
#include "render/json.h"

#include <stdio.h>
#include <string.h>

void row_begin(struct row *w, struct buf *b, int jsonl)
{
	w->b = b;
	w->jsonl = jsonl;
	w->fields = 0;
}

static void field(struct row *w, const char *name)
{
	if (w->jsonl) {
		buf_putc(w->b, w->fields ? ',' : '{');
		json_str(w->b, name);	/* counter.NAME: the application chose NAME */
		buf_putc(w->b, ':');
	} else if (w->fields) {
		buf_putc(w->b, ',');
	}
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
	if (w->jsonl)
		buf_puts(w->b, "null");
}

/* Whether a CSV text cell would be taken for a formula by a spreadsheet: it begins
 * with = + - @, a tab or a carriage return (OWASP's list for CSV injection). */
static int csv_formula(const char *v)
{
	return v[0] && strchr("=+-@\t\r", v[0]);
}

void row_str(struct row *w, const char *name, const char *s)
{
	field(w, name);
	if (w->jsonl) {
		json_str(w->b, s);
		return;
	}
	struct buf t = { 0 };
	buf_put_printable(&t, s);	/* no line breaks are left: only , and " need quoting */
	const char *v = buf_str(&t);
	/* A name from a process (comm, a counter's name) that a spreadsheet would run as
	 * a formula is written as text: a quote before it, the cell quoted. Numbers never
	 * come here (row_raw, row_u64), so a negative value stays a number. */
	int formula = csv_formula(v);
	if (!formula && !strpbrk(v, ",\"")) {
		buf_puts(w->b, v);
	} else {
		buf_puts(w->b, formula ? "\"'" : "\"");
		for (; *v; v++) {
			if (*v == '"')
				buf_putc(w->b, '"');
			buf_putc(w->b, *v);
		}
		buf_putc(w->b, '"');
	}
	buf_release(&t);
}

void row_end(struct row *w)
{
	buf_puts(w->b, w->jsonl ? "}\n" : "\n");
}

void row_column(struct row *w, const struct store_column *c, const void *row)
{
	char v[48];
	if (store_column_null(c, row)) {
		row_null(w, c->export_name);
		return;
	}
	if (c->kind == COL_TEXT || c->kind == COL_CHARS) {
		row_str(w, c->export_name, store_column_text(c, row));
	} else if (c->export_fmt == EXPORT_PCT) {
		snprintf(v, sizeof(v), "%.2f", store_column_f64(c, row));
		row_raw(w, c->export_name, v);
	} else if (c->export_fmt == EXPORT_NS_AS_S) {
		uint64_t ns = (uint64_t)store_column_i64(c, row);
		snprintf(v, sizeof(v), "%llu.%03llu", (unsigned long long)(ns / NS_PER_S),
			 (unsigned long long)(ns % NS_PER_S / 1000000));
		row_raw(w, c->export_name, v);
	} else {
		row_u64(w, c->export_name, (uint64_t)store_column_i64(c, row));
	}
}

void proc_rows_header(struct buf *b)
{
	struct row w;
	row_begin(&w, b, 0);
	row_str(&w, "time", "time");
	row_str(&w, "elapsed_s", "elapsed_s");
	for (size_t i = 0; i < store_proc_sample_table.ncols; i++) {
		const char *name = store_proc_sample_table.cols[i].export_name;
		if (name)
			row_str(&w, name, name);
	}
	row_end(&w);
}

void proc_row(struct buf *b, int jsonl, int64_t started_at, int64_t elapsed_ns,
	      const struct proc_figures *p)
{
	char t[40];
	struct row w;
	row_begin(&w, b, jsonl);
	row_str(&w, "time", fmt_iso8601(t, sizeof(t), started_at + elapsed_ns));
	snprintf(t, sizeof(t), "%.3f", (double)elapsed_ns / NS_PER_S);
	row_raw(&w, "elapsed_s", t);
	for (size_t i = 0; i < store_proc_sample_table.ncols; i++)
		if (store_proc_sample_table.cols[i].export_name)
			row_column(&w, &store_proc_sample_table.cols[i], p);
	row_end(&w);
}
