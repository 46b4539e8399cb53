#include "render/json.h"
#include "base/fmt.h"
#include "base/parse.h"
#include "base/utf8.h"
#include "base/util.h"
#include "render/procs.h"

#include <string.h>

void json_str(struct buf *b, const char *s)
{
	buf_putc(b, '"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		size_t l = utf8_seq(p);
		if (l == 0) {	/* not UTF-8 (a process may name itself anything) */
			buf_puts(b, "\\ufffd");
			continue;
		}
		if (l > 1) {
			buf_append(b, p, l);
			p += l - 1;
			continue;
		}
		switch (*p) {
		case '"': buf_puts(b, "\\\""); break;
		case '\\': buf_puts(b, "\\\\"); break;
		case '\n': buf_puts(b, "\\n"); break;
		case '\r': buf_puts(b, "\\r"); break;
		case '\t': buf_puts(b, "\\t"); break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				buf_printf(b, "\\u%04x", *p);
			else
				buf_putc(b, (char)*p);
		}
	}
	buf_putc(b, '"');
}

void json_time(struct buf *b, int64_t realtime_ns)
{
	char t[40];
	if (!realtime_ns) {
		buf_puts(b, "null");
		return;
	}
	json_str(b, fmt_iso8601(t, sizeof(t), realtime_ns));
}

static void json_opt_int(struct buf *b, long long v, int present)
{
	if (present)
		buf_printf(b, "%lld", v);
	else
		buf_puts(b, "null");
}

/* ns as seconds to the millisecond (as export writes CPU times), or null when negative
 * (not known). */
static void json_opt_secs(struct buf *b, int64_t ns)
{
	if (ns < 0)
		buf_puts(b, "null");
	else
		buf_printf(b, "%lld.%03lld", (long long)(ns / NS_PER_S),
			   (long long)(ns % NS_PER_S / 1000000));
}

/* A string, or null when it is NULL or empty (a field that was not known). */
static void json_opt_str(struct buf *b, const char *s)
{
	if (s && s[0])
		json_str(b, s);
	else
		buf_puts(b, "null");
}

void json_run(struct buf *b, const struct run *r)
{
	buf_putc(b, '{');
	json_run_fields(b, r);
	buf_putc(b, '}');
}

void json_number(struct buf *b, double v)
{
	if (v == (double)(long long)v && v > -9007199254740992.0 && v < 9007199254740992.0)
		buf_printf(b, "%lld", (long long)v);
	else if (v == v && v - v == 0)	/* finite */
		buf_printf(b, "%.17g", v);
	else
		buf_puts(b, "null");
}

void json_params(struct buf *b, const struct run_param *p, size_t n)
{
	buf_putc(b, '{');
	for (size_t i = 0; i < n; i++) {
		if (i)
			buf_putc(b, ',');
		json_str(b, p[i].key);
		buf_putc(b, ':');
		if (p[i].is_num)
			json_number(b, p[i].num);
		else
			json_str(b, p[i].value);
	}
	buf_putc(b, '}');
}

/* A column's value in a run object, as its out says; null where its NULL rule says
 * it is not there, or where the column its json_with names is not (false for a flag). */
static void json_column(struct buf *b, const struct store_table *t, const struct store_column *c,
			const void *row)
{
	const struct store_column *with = c->json_with ? store_table_column(t, c->json_with) : NULL;
	int absent = store_column_null(c, row) || (with && store_column_null(with, row));
	const char *text = store_column_text(c, row);
	int64_t v = store_column_i64(c, row);
	switch (c->out) {
	case OUT_NONE:
		return;
	case OUT_BOOL:
		buf_puts(b, !absent && v ? "true" : "false");
		return;
	case OUT_TIME:
		json_time(b, absent ? 0 : v);
		return;
	case OUT_TIME_US:
		if (absent || !v) {
			buf_puts(b, "null");
		} else {
			char iso[40];
			json_str(b, fmt_iso8601_us(iso, sizeof(iso), v));
		}
		return;
	case OUT_TEXT_OR_NULL:
		json_opt_str(b, absent ? NULL : text);
		return;
	default:
		break;
	}
	if (absent)
		buf_puts(b, "null");
	else if (text)
		json_str(b, text);
	else if (c->out == OUT_PCT)
		buf_printf(b, "%.2f", store_column_f64(c, row));
	else if (c->out == OUT_SECONDS)
		json_opt_secs(b, v);
	else if (c->out == OUT_SECONDS_G)
		buf_printf(b, "%.6g", (double)v / NS_PER_S);
	else if (c->out == OUT_SECONDS_1)
		buf_printf(b, "%.1f", (double)v / NS_PER_S);
	else if (c->kind == COL_U64)
		buf_printf(b, "%llu", (unsigned long long)v);
	else
		buf_printf(b, "%lld", (long long)v);
}

static void put_params(struct buf *b, const struct run *r)
{
	buf_puts(b, ",\"params\":");
	json_params(b, r->params, r->nparams);
}

/* Until the end, the last sample, or nothing yet. */
static void put_duration(struct buf *b, const struct run *r)
{
	int64_t end = r->ended_at ? r->ended_at : r->last_at ? r->last_at : r->started_at;
	buf_printf(b, ",\"duration_s\":%.3f", (double)(end - r->started_at) / NS_PER_S);
}

static void put_mean(struct buf *b, const struct run *r)
{
	buf_printf(b, ",\"mean_rss_bytes\":%.0f", run_mean_rss(r));
}

/* The fields of a run object that are no column of their own, each after the column
 * it follows. */
static const struct {
	const char *after;
	void (*put)(struct buf *b, const struct run *r);
} run_extras[] = {
	{ "label", put_params },
	{ "ended_at", put_duration },
	{ "sum_rss", put_mean },
};

const char *const json_run_extra_names[] = { "params", "duration_s", "mean_rss_bytes", NULL };

/* The run table's columns of some output, in its order, under their output names. */
void json_run_fields(struct buf *b, const struct run *r)
{
	const struct store_table *t = &store_run_table;
	int n = 0;
	for (size_t i = 0; i < t->ncols; i++) {
		const struct store_column *c = &t->cols[i];
		if (c->out != OUT_NONE) {
			buf_printf(b, "%s\"%s\":", n++ ? "," : "", store_column_json(c));
			json_column(b, t, c, r);
		}
		for (size_t k = 0; k < ARRAY_SIZE(run_extras); k++)
			if (strcmp(run_extras[k].after, c->name) == 0)
				run_extras[k].put(b, r);
	}
}

/* One kill: what the kernel said, figures in bytes (0 where its line lacked them). */
static void json_kill(struct buf *b, const struct run *r, const struct oom_kill *k)
{
	buf_printf(b, "{\"pid\":%d,\"comm\":", (int)k->pid);
	json_str(b, k->comm);
	buf_puts(b, ",\"time\":");
	json_time(b, k->t);
	buf_printf(b, ",\"elapsed_s\":%.3f", (double)(k->t - r->started_at) / NS_PER_S);
	buf_printf(b, ",\"anon_rss_bytes\":%llu,\"file_rss_bytes\":%llu,\"shmem_rss_bytes\":%llu,"
		      "\"total_vm_bytes\":%llu,\"memcg\":", (unsigned long long)k->anon_rss,
		   (unsigned long long)k->file_rss, (unsigned long long)k->shmem_rss,
		   (unsigned long long)k->total_vm);
	json_opt_str(b, k->memcg);
	buf_putc(b, '}');
}

void json_oom_kills(struct buf *b, const struct run *r, const struct oom_kill *k, size_t n)
{
	buf_putc(b, '[');
	for (size_t i = 0; i < n; i++) {
		if (i)
			buf_putc(b, ',');
		json_kill(b, r, &k[i]);
	}
	if (!n && r->oom_at) {
		/* A run recorded before kills had their own table (schema 8): the target's
		 * kill from the run's own fields; the rest was not kept. */
		buf_printf(b, "{\"pid\":%d,\"comm\":null,\"time\":", (int)r->pid);
		json_time(b, r->oom_at);
		buf_printf(b, ",\"elapsed_s\":%.3f,\"anon_rss_bytes\":",
			   (double)(r->oom_at - r->started_at) / NS_PER_S);
		json_opt_int(b, (long long)r->oom_anon_rss, r->oom_rss_known);
		buf_puts(b, ",\"file_rss_bytes\":null,\"shmem_rss_bytes\":null,"
			    "\"total_vm_bytes\":null,\"memcg\":");
		json_opt_str(b, r->oom_memcg);
		buf_putc(b, '}');
	}
	buf_putc(b, ']');
}

void json_processes(struct buf *b, const struct proc_summary *p, size_t n)
{
	buf_putc(b, '[');
	for (size_t i = 0; i < n; i++) {
		buf_printf(b, "%s{\"pid\":%d,\"ppid\":%d,\"comm\":", i ? "," : "", (int)p[i].pid,
			   (int)p[i].ppid);
		json_str(b, p[i].comm);
		buf_printf(b, ",\"started_s\":%.3f,\"ended_s\":", (double)p[i].first_ns / NS_PER_S);
		if (p[i].end_ns >= 0)
			buf_printf(b, "%.3f", (double)p[i].end_ns / NS_PER_S);
		else
			buf_puts(b, "null");
		buf_printf(b, ",\"peak_rss_bytes\":%llu,\"peak_exact\":%s,\"peak_source\":",
			   (unsigned long long)p[i].peak_rss,
			   peak_is_exact(p[i].peak_source) ? "true" : "false");
		json_opt_str(b, p[i].peak_source);
		buf_puts(b, ",\"hwm_before_bytes\":");
		json_opt_int(b, p[i].hwm_before, p[i].hwm_before >= 0);
		buf_puts(b, ",\"ended\":");
		json_opt_str(b, p[i].ended);
		buf_puts(b, ",\"exit_code\":");
		json_opt_int(b, p[i].exit_code, p[i].exit_code >= 0);
		buf_puts(b, ",\"signal\":");
		json_opt_int(b, p[i].signal, p[i].signal > 0);
		buf_puts(b, ",\"cpu_user_s\":");
		json_opt_secs(b, p[i].cpu_user_ns);
		buf_puts(b, ",\"cpu_sys_s\":");
		json_opt_secs(b, p[i].cpu_sys_ns);
		buf_puts(b, ",\"minflt\":");
		json_opt_int(b, p[i].minflt, p[i].minflt >= 0);
		buf_puts(b, ",\"majflt\":");
		json_opt_int(b, p[i].majflt, p[i].majflt >= 0);
		buf_puts(b, ",\"read_bytes\":");
		json_opt_int(b, p[i].read_bytes, p[i].read_bytes >= 0);
		buf_puts(b, ",\"write_bytes\":");
		json_opt_int(b, p[i].write_bytes, p[i].write_bytes >= 0);
		buf_putc(b, '}');
	}
	buf_putc(b, ']');
}
