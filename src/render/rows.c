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
	if (!strpbrk(v, ",\"")) {
		buf_puts(w->b, v);
	} else {
		buf_putc(w->b, '"');
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

void proc_rows_header(struct buf *b)
{
	buf_puts(b, "time,elapsed_s,pid,ppid,comm,rss_bytes,anon_bytes,file_bytes,shmem_bytes,"
		    "swap_bytes\n");
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
	row_u64(&w, "pid", (uint64_t)p->pid);
	row_u64(&w, "ppid", (uint64_t)p->ppid);
	row_str(&w, "comm", p->comm);
	row_u64(&w, "rss_bytes", p->rss);
	row_u64(&w, "anon_bytes", p->anon);
	row_u64(&w, "file_bytes", p->file);
	row_u64(&w, "shmem_bytes", p->shmem);
	row_u64(&w, "swap_bytes", p->swap);
	row_end(&w);
}
