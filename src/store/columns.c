/* Every stored column of a run, a sample, a member of a set at a sample and a process
 * of a run: one table per row type (store/run.h says what a row of a table holds).
 * The store's INSERT, UPDATE and SELECT statements, their bindings and reads, and
 * export's columns are all derived from these tables, so adding a column is a
 * migration step (store.c) and one row here.
 *
 * A table's rows must agree with the schema the migrations produce: test_store checks
 * PRAGMA table_info of a fresh database against them. */
#include "store/run.h"
#include "store/store_int.h"
#include "base/buf.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

#define FIELD(T, f, k) .kind = k, .off = offsetof(struct T, f), .size = sizeof(((struct T *)0)->f)
#define NULL_IF(rule, T, f, k) .null = rule, .guard_off = offsetof(struct T, f), .guard_kind = k
#define OPTIONAL(bit) \
	NULL_IF(COL_NULL_UNLESS_FLAG, sample, have, COL_U32), .flag = bit
#define I "INTEGER"
#define R "REAL"
#define T "TEXT"
#define B COL_AT_BEGIN
#define P COL_AT_PROGRESS

_Static_assert(sizeof(pid_t) == sizeof(int), "pid_t is read as COL_INT");
_Static_assert(sizeof(unsigned) == sizeof(uint32_t), "sample.have is read as COL_U32");

static const struct store_column run_cols[] = {
	{ "id", I, FIELD(run, id, COL_I64) },
	{ "label", T, FIELD(run, label, COL_TEXT), .when = B },
	{ "host", T, FIELD(run, host, COL_TEXT), .when = B },
	{ "kernel", T, FIELD(run, kernel, COL_TEXT), .when = B },
	{ "target", T, FIELD(run, target, COL_TEXT), .when = B },
	{ "mode", T, FIELD(run, mode, COL_TEXT), .when = B },
	{ "pid", I, FIELD(run, pid, COL_INT), .when = B | P },
	{ "started_at", I, FIELD(run, started_at, COL_I64), .when = B | P },
	{ "ended_at", I, FIELD(run, ended_at, COL_I64),
	  NULL_IF(COL_NULL_IF_ZERO, run, ended_at, COL_I64), .when = P },
	{ "last_at", I, FIELD(run, last_at, COL_I64),
	  NULL_IF(COL_NULL_IF_ZERO, run, last_at, COL_I64), .when = P },
	{ "interval_ns", I, FIELD(run, interval_ns, COL_I64), .when = B },
	{ "samples", I, FIELD(run, samples, COL_I64), .when = P },
	/* store_run_begin writes "running" whatever the run says */
	{ "outcome", T, FIELD(run, outcome, COL_CHARS), .when = B | P },
	{ "exit_code", I, FIELD(run, exit_code, COL_INT),
	  NULL_IF(COL_NULL_IF_NEG, run, exit_code, COL_INT), .dflt = -1, .when = P },
	{ "signal", I, FIELD(run, signal, COL_INT),
	  NULL_IF(COL_NULL_IF_NOT_POS, run, signal, COL_INT), .dflt = -1, .when = P },
	{ "peak_rss", I, FIELD(run, peak_rss, COL_U64), .when = P },
	{ "peak_rss_at", I, FIELD(run, peak_rss_at, COL_I64),
	  NULL_IF(COL_NULL_IF_ZERO, run, peak_rss_at, COL_I64), .when = P },
	{ "peak_gpu", I, FIELD(run, peak_gpu, COL_I64),
	  NULL_IF(COL_NULL_IF_NEG, run, peak_gpu, COL_I64), .dflt = -1, .when = P },
	{ "peak_gpu_at", I, FIELD(run, peak_gpu_at, COL_I64),
	  NULL_IF(COL_NULL_IF_NEG, run, peak_gpu, COL_I64), .when = P },
	{ "sum_rss", R, FIELD(run, sum_rss, COL_F64), .when = P },
	{ "last_rss", I, FIELD(run, last_rss, COL_U64), .when = P },
	{ "mem_total", I, FIELD(run, mem_total, COL_U64), .when = B },
	{ "recorder_pid", I, FIELD(run, recorder_pid, COL_INT), .when = B },
	{ "recorder_start", I, FIELD(run, recorder_start, COL_U64), .when = B },
	{ "boot_id", T, FIELD(run, boot_id, COL_TEXT), .when = B },
	/* schema 3 */
	{ "oom_at", I, FIELD(run, oom_at, COL_I64),
	  NULL_IF(COL_NULL_IF_ZERO, run, oom_at, COL_I64), .when = P },
	{ "oom_anon_rss", I, FIELD(run, oom_anon_rss, COL_U64),
	  NULL_IF(COL_NULL_UNLESS_FLAG, run, oom_rss_known, COL_INT), .flag = 1, .when = P },
	{ "oom_memcg", T, FIELD(run, oom_memcg, COL_TEXT), .when = P },
	{ "outcome_note", T, FIELD(run, outcome_note, COL_TEXT), .when = P },
	{ "cgroup", T, FIELD(run, cgroup, COL_TEXT), .when = B },
	{ "cgroup_limit", I, FIELD(run, cgroup_limit, COL_U64),
	  NULL_IF(COL_NULL_IF_ZERO, run, cgroup_limit, COL_U64), .when = B | P },
	{ "peak_cgroup", I, FIELD(run, peak_cgroup, COL_U64),
	  NULL_IF(COL_NULL_IF_ZERO, run, peak_cgroup, COL_U64), .when = P },
	{ "peak_cgroup_at", I, FIELD(run, peak_cgroup_at, COL_I64),
	  NULL_IF(COL_NULL_IF_ZERO, run, peak_cgroup, COL_U64), .when = P },
	/* schema 4, 6 */
	{ "tree", I, FIELD(run, tree, COL_INT), .when = B },
	{ "pss_interval_ns", I, FIELD(run, pss_interval_ns, COL_I64), .when = B },
	/* schema 8 */
	{ "hwm_before", I, FIELD(run, hwm_before, COL_I64),
	  NULL_IF(COL_NULL_IF_NEG, run, hwm_before, COL_I64), .dflt = -1, .when = P },
	{ "oom_kills", I, FIELD(run, oom_kills, COL_I64), .when = P },
	{ "peak_source", T, FIELD(run, peak_source, COL_TEXT), .when = P },
	{ "peak_process_rss", I, FIELD(run, peak_process_rss, COL_U64),
	  NULL_IF(COL_NULL_IF_NOT_POS, run, peak_process_pid, COL_INT), .when = P },
	{ "peak_process_pid", I, FIELD(run, peak_process_pid, COL_INT),
	  NULL_IF(COL_NULL_IF_NOT_POS, run, peak_process_pid, COL_INT), .when = P },
	{ "peak_process_comm", T, FIELD(run, peak_process_comm, COL_TEXT), .when = P },
	{ "exit_records", I, FIELD(run, exit_records, COL_INT), .when = P },
	{ "peak_cgroup_exact", I, FIELD(run, peak_cgroup_exact, COL_INT), .when = P },
	/* schema 10 */
	{ "min_eta_ns", I, FIELD(run, min_eta_ns, COL_I64),
	  NULL_IF(COL_NULL_IF_EMPTY, run, min_eta_limit, COL_CHARS), .dflt = -1, .when = P },
	{ "min_eta_at", I, FIELD(run, min_eta_at, COL_I64),
	  NULL_IF(COL_NULL_IF_EMPTY, run, min_eta_limit, COL_CHARS), .when = P },
	{ "min_eta_limit", T, FIELD(run, min_eta_limit, COL_CHARS), .when = P },
	/* schema 12: a followed run's series is known after its first run's INSERT */
	{ "series", I, FIELD(run, series, COL_I64),
	  NULL_IF(COL_NULL_IF_NOT_POS, run, series, COL_I64), .when = B | P },
	/* schema 15 */
	{ "cgroup_peak_before", I, FIELD(run, cgroup_peak_before, COL_U64),
	  NULL_IF(COL_NULL_IF_ZERO, run, cgroup_peak_before, COL_U64), .when = P },
};

/* In export's order: the fixed figures, then those a run may lack, GPU last (the
 * per-GPU columns follow it). */
static const struct store_column sample_cols[] = {
	{ "elapsed_ns", I, FIELD(sample, elapsed_ns, COL_I64) },
	{ "rss", I, FIELD(sample, mem.rss, COL_U64), .export_name = "rss_bytes" },
	{ "hwm", I, FIELD(sample, mem.hwm, COL_U64), .export_name = "hwm_bytes" },
	{ "anon", I, FIELD(sample, mem.anon, COL_U64), .export_name = "anon_bytes" },
	{ "file", I, FIELD(sample, mem.file, COL_U64), .export_name = "file_bytes" },
	{ "shmem", I, FIELD(sample, mem.shmem, COL_U64), .export_name = "shmem_bytes" },
	{ "swap", I, FIELD(sample, mem.swap, COL_U64), .export_name = "swap_bytes" },
	{ "threads", I, FIELD(sample, threads, COL_U32), .export_name = "threads" },
	{ "mem_available", I, FIELD(sample, mem_available, COL_U64),
	  .export_name = "mem_available_bytes" },
	{ "pss", I, FIELD(sample, pss, COL_U64), OPTIONAL(SAMPLE_PSS), .export_name = "pss_bytes" },
	{ "uss", I, FIELD(sample, uss, COL_U64), OPTIONAL(SAMPLE_PSS), .export_name = "uss_bytes" },
	{ "swap_pss", I, FIELD(sample, swap_pss, COL_U64), OPTIONAL(SAMPLE_PSS),
	  .export_name = "swap_pss_bytes" },
	{ "pss_read_us", I, FIELD(sample, pss_read_us, COL_I64), OPTIONAL(SAMPLE_PSS),
	  .export_name = "pss_read_us" },
	{ "cgroup", I, FIELD(sample, cgroup, COL_U64), OPTIONAL(SAMPLE_CGROUP),
	  .export_name = "cgroup_bytes" },
	{ "cgroup_peak", I, FIELD(sample, cgroup_peak, COL_U64), OPTIONAL(SAMPLE_CGROUP_PEAK),
	  .export_name = "cgroup_peak_bytes" },
	{ "psi_some_avg10", R, FIELD(sample, psi_some_avg10, COL_F64), OPTIONAL(SAMPLE_PSI),
	  .export_name = "psi_some_avg10", .export_fmt = EXPORT_PCT },
	{ "psi_full_avg10", R, FIELD(sample, psi_full_avg10, COL_F64), OPTIONAL(SAMPLE_PSI_FULL),
	  .export_name = "psi_full_avg10", .export_fmt = EXPORT_PCT },
	{ "psi_some_total_us", I, FIELD(sample, psi_some_total_us, COL_U64), OPTIONAL(SAMPLE_PSI),
	  .export_name = "psi_some_total_us" },
	{ "psi_full_total_us", I, FIELD(sample, psi_full_total_us, COL_U64),
	  OPTIONAL(SAMPLE_PSI_FULL), .export_name = "psi_full_total_us" },
	{ "cg_psi_some_avg10", R, FIELD(sample, cg_psi_some_avg10, COL_F64), OPTIONAL(SAMPLE_CG_PSI),
	  .export_name = "cgroup_psi_some_avg10", .export_fmt = EXPORT_PCT },
	{ "cg_psi_full_avg10", R, FIELD(sample, cg_psi_full_avg10, COL_F64),
	  OPTIONAL(SAMPLE_CG_PSI_FULL), .export_name = "cgroup_psi_full_avg10",
	  .export_fmt = EXPORT_PCT },
	{ "cg_psi_some_total_us", I, FIELD(sample, cg_psi_some_total_us, COL_U64),
	  OPTIONAL(SAMPLE_CG_PSI), .export_name = "cgroup_psi_some_total_us" },
	{ "cg_psi_full_total_us", I, FIELD(sample, cg_psi_full_total_us, COL_U64),
	  OPTIONAL(SAMPLE_CG_PSI_FULL), .export_name = "cgroup_psi_full_total_us" },
	{ "cpu_user_ns", I, FIELD(sample, cpu_user_ns, COL_U64), OPTIONAL(SAMPLE_CPU),
	  .export_name = "cpu_user_s", .export_fmt = EXPORT_NS_AS_S },
	{ "cpu_sys_ns", I, FIELD(sample, cpu_sys_ns, COL_U64), OPTIONAL(SAMPLE_CPU),
	  .export_name = "cpu_sys_s", .export_fmt = EXPORT_NS_AS_S },
	{ "minflt", I, FIELD(sample, minflt, COL_U64), OPTIONAL(SAMPLE_CPU), .export_name = "minflt" },
	{ "majflt", I, FIELD(sample, majflt, COL_U64), OPTIONAL(SAMPLE_CPU), .export_name = "majflt" },
	{ "read_bytes", I, FIELD(sample, read_bytes, COL_U64), OPTIONAL(SAMPLE_IO),
	  .export_name = "read_bytes" },
	{ "write_bytes", I, FIELD(sample, write_bytes, COL_U64), OPTIONAL(SAMPLE_IO),
	  .export_name = "write_bytes" },
	{ "gpu", I, FIELD(sample, gpu, COL_U64), OPTIONAL(SAMPLE_GPU), .export_name = "gpu_bytes" },
};

static const struct store_column proc_sample_cols[] = {
	{ "pid", I, FIELD(proc_figures, pid, COL_INT), .export_name = "pid" },
	{ "ppid", I, FIELD(proc_figures, ppid, COL_INT), .export_name = "ppid" },
	{ "comm", T, FIELD(proc_figures, comm, COL_CHARS), .export_name = "comm" },
	{ "rss", I, FIELD(proc_figures, mem.rss, COL_U64), .export_name = "rss_bytes" },
	{ "anon", I, FIELD(proc_figures, mem.anon, COL_U64), .export_name = "anon_bytes" },
	{ "file", I, FIELD(proc_figures, mem.file, COL_U64), .export_name = "file_bytes" },
	{ "shmem", I, FIELD(proc_figures, mem.shmem, COL_U64), .export_name = "shmem_bytes" },
	{ "swap", I, FIELD(proc_figures, mem.swap, COL_U64), .export_name = "swap_bytes" },
	/* schema 7 */
	{ "gone", I, FIELD(proc_figures, gone, COL_INT) },
};

static const struct store_column process_cols[] = {
	{ "pid", I, FIELD(proc_summary, pid, COL_INT) },
	{ "ppid", I, FIELD(proc_summary, ppid, COL_INT) },
	{ "comm", T, FIELD(proc_summary, comm, COL_CHARS) },
	{ "first_ns", I, FIELD(proc_summary, first_ns, COL_I64) },
	{ "end_ns", I, FIELD(proc_summary, end_ns, COL_I64),
	  NULL_IF(COL_NULL_IF_NEG, proc_summary, end_ns, COL_I64), .dflt = -1 },
	{ "peak_rss", I, FIELD(proc_summary, peak_rss, COL_U64) },
	{ "peak_source", T, FIELD(proc_summary, peak_source, COL_CHARS) },
	{ "hwm_before", I, FIELD(proc_summary, hwm_before, COL_I64),
	  NULL_IF(COL_NULL_IF_NEG, proc_summary, hwm_before, COL_I64), .dflt = -1 },
	{ "ended", T, FIELD(proc_summary, ended, COL_CHARS) },
	{ "exit_code", I, FIELD(proc_summary, exit_code, COL_INT),
	  NULL_IF(COL_NULL_IF_NEG, proc_summary, exit_code, COL_INT), .dflt = -1 },
	{ "signal", I, FIELD(proc_summary, signal, COL_INT),
	  NULL_IF(COL_NULL_IF_NOT_POS, proc_summary, signal, COL_INT), .dflt = -1 },
	/* schema 12 */
#define CONTEXT(f) { #f, I, FIELD(proc_summary, f, COL_I64), \
		     NULL_IF(COL_NULL_IF_NEG, proc_summary, f, COL_I64), .dflt = -1 }
	CONTEXT(cpu_user_ns), CONTEXT(cpu_sys_ns), CONTEXT(minflt), CONTEXT(majflt),
	CONTEXT(read_bytes), CONTEXT(write_bytes),
#undef CONTEXT
};

const struct store_table store_run_table = { "run", { NULL }, run_cols, ARRAY_SIZE(run_cols) };
const struct store_table store_sample_table = { "sample", { "run_id", NULL }, sample_cols,
						ARRAY_SIZE(sample_cols) };
const struct store_table store_proc_sample_table = { "proc_sample", { "run_id", "elapsed_ns", NULL },
						     proc_sample_cols, ARRAY_SIZE(proc_sample_cols) };
const struct store_table store_process_table = { "process", { "run_id", NULL }, process_cols,
						 ARRAY_SIZE(process_cols) };

/* --- reading and writing fields by their kind --- */

static int64_t get_i64(const void *row, size_t off, enum col_kind k)
{
	const char *p = (const char *)row + off;
	int64_t i64;
	uint64_t u64;
	uint32_t u32;
	int i;
	double d;
	switch (k) {
	case COL_I64: memcpy(&i64, p, sizeof(i64)); return i64;
	case COL_U64: memcpy(&u64, p, sizeof(u64)); return (int64_t)u64;
	case COL_U32: memcpy(&u32, p, sizeof(u32)); return u32;
	case COL_INT: memcpy(&i, p, sizeof(i)); return i;
	case COL_F64: memcpy(&d, p, sizeof(d)); return (int64_t)d;
	case COL_TEXT: case COL_CHARS: break;
	}
	return 0;
}

static void set_i64(void *row, size_t off, enum col_kind k, int64_t v)
{
	char *p = (char *)row + off;
	uint64_t u64 = (uint64_t)v;
	uint32_t u32 = (uint32_t)v;
	int i = (int)v;
	double d = (double)v;
	switch (k) {
	case COL_I64: memcpy(p, &v, sizeof(v)); break;
	case COL_U64: memcpy(p, &u64, sizeof(u64)); break;
	case COL_U32: memcpy(p, &u32, sizeof(u32)); break;
	case COL_INT: memcpy(p, &i, sizeof(i)); break;
	case COL_F64: memcpy(p, &d, sizeof(d)); break;
	case COL_TEXT: case COL_CHARS: break;
	}
}

static const char *get_text(const void *row, size_t off, enum col_kind k)
{
	const char *p = (const char *)row + off;
	if (k == COL_CHARS)
		return p;
	if (k == COL_TEXT) {
		const char *s;
		memcpy(&s, p, sizeof(s));
		return s ? s : "";
	}
	return NULL;
}

int64_t store_column_i64(const struct store_column *c, const void *row)
{
	return get_i64(row, c->off, c->kind);
}

double store_column_f64(const struct store_column *c, const void *row)
{
	double d;
	if (c->kind != COL_F64)
		return (double)get_i64(row, c->off, c->kind);
	memcpy(&d, (const char *)row + c->off, sizeof(d));
	return d;
}

const char *store_column_text(const struct store_column *c, const void *row)
{
	return get_text(row, c->off, c->kind);
}

int store_column_null(const struct store_column *c, const void *row)
{
	switch (c->null) {
	case COL_NEVER_NULL: return 0;
	case COL_NULL_IF_ZERO: return get_i64(row, c->guard_off, c->guard_kind) == 0;
	case COL_NULL_IF_NEG: return get_i64(row, c->guard_off, c->guard_kind) < 0;
	case COL_NULL_IF_NOT_POS: return get_i64(row, c->guard_off, c->guard_kind) <= 0;
	case COL_NULL_IF_EMPTY: return get_text(row, c->guard_off, c->guard_kind)[0] == '\0';
	case COL_NULL_UNLESS_FLAG:
		return !((uint64_t)get_i64(row, c->guard_off, c->guard_kind) & c->flag);
	}
	return 0;
}

/* --- SQL --- */

static int wanted(const struct store_column *c, unsigned when)
{
	return when == 0 || (c->when & when);
}

void columns_list(struct buf *b, const struct store_table *t, const char *prefix)
{
	for (size_t i = 0; i < t->ncols; i++)
		buf_printf(b, "%s%s%s", i ? ", " : "", prefix, t->cols[i].name);
}

char *columns_insert_sql(const struct store_table *t, const char *verb, unsigned when)
{
	struct buf b = { 0 };
	size_t n = 0;
	buf_printf(&b, "%s INTO %s (", verb, t->name);
	for (size_t k = 0; t->keys[k]; k++, n++)
		buf_printf(&b, "%s%s", n ? ", " : "", t->keys[k]);
	for (size_t i = 0; i < t->ncols; i++)
		if (wanted(&t->cols[i], when))
			buf_printf(&b, "%s%s", n++ ? ", " : "", t->cols[i].name);
	buf_puts(&b, ") VALUES (");
	for (size_t i = 0; i < n; i++)
		buf_puts(&b, i ? ",?" : "?");
	buf_putc(&b, ')');
	return b.p;
}

char *columns_update_sql(const struct store_table *t, unsigned when, const char *key)
{
	struct buf b = { 0 };
	size_t n = 0;
	buf_printf(&b, "UPDATE %s SET ", t->name);
	for (size_t i = 0; i < t->ncols; i++)
		if (wanted(&t->cols[i], when))
			buf_printf(&b, "%s%s = ?", n++ ? ", " : "", t->cols[i].name);
	buf_printf(&b, " WHERE %s = ?", key);
	return b.p;
}

int columns_bind(sqlite3_stmt *s, int first, const struct store_table *t, unsigned when,
		 const void *row)
{
	int i = first;
	for (size_t k = 0; k < t->ncols; k++) {
		const struct store_column *c = &t->cols[k];
		if (!wanted(c, when))
			continue;
		if (store_column_null(c, row))
			sqlite3_bind_null(s, i);
		else if (c->kind == COL_TEXT || c->kind == COL_CHARS)
			sqlite3_bind_text(s, i, get_text(row, c->off, c->kind), -1, SQLITE_STATIC);
		else if (c->kind == COL_F64)
			sqlite3_bind_double(s, i, store_column_f64(c, row));
		else
			sqlite3_bind_int64(s, i, get_i64(row, c->off, c->kind));
		i++;
	}
	return i;
}

void columns_load(sqlite3_stmt *s, int first, const struct store_table *t, void *row)
{
	for (size_t k = 0; k < t->ncols; k++) {
		const struct store_column *c = &t->cols[k];
		int i = first + (int)k;
		char *p = (char *)row + c->off;
		if (c->kind == COL_TEXT) {
			const unsigned char *v = sqlite3_column_text(s, i);
			char *dup = xstrdup(v ? (const char *)v : "");
			memcpy(p, &dup, sizeof(dup));
			continue;
		}
		if (c->kind == COL_CHARS) {
			const unsigned char *v = sqlite3_column_text(s, i);
			strlcpy_rsw(p, v ? (const char *)v : "", c->size);
			continue;
		}
		if (sqlite3_column_type(s, i) == SQLITE_NULL) {
			set_i64(row, c->off, c->kind, c->dflt);
			continue;
		}
		if (c->kind == COL_F64) {
			double d = sqlite3_column_double(s, i);
			memcpy(p, &d, sizeof(d));
		} else {
			set_i64(row, c->off, c->kind, sqlite3_column_int64(s, i));
		}
		if (c->null == COL_NULL_UNLESS_FLAG)
			set_i64(row, c->guard_off, c->guard_kind,
				(int64_t)((uint64_t)get_i64(row, c->guard_off, c->guard_kind) | c->flag));
	}
}

void store_row_free_text(const struct store_table *t, void *row)
{
	for (size_t k = 0; k < t->ncols; k++) {
		if (t->cols[k].kind != COL_TEXT)
			continue;
		char *p = (char *)row + t->cols[k].off, *s;
		memcpy(&s, p, sizeof(s));
		free(s);
		s = NULL;
		memcpy(p, &s, sizeof(s));
	}
}
