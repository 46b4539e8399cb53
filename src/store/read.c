/* Reading runs: the queries of store.h's "reading" part (store_resolve*, store_get_run,
 * store_list_runs, store_each_*, store_events and the other arrays), all through one row
 * loop (each_row; gather for the readers that return an array), and the "interrupted"
 * rule, applied to every run read (store_set_alive). store_delete_run is here too: it
 * reads the run first, to refuse one still being recorded. Nothing here calls the
 * opening (store.c) or the writer (write.c). */
#include "store/store.h"
#include "store/store_int.h"
#include "base/buf.h"
#include "base/util.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A reader's decoder of one result row: 0 to go on to the next row, non-zero to stop
 * there. */
typedef int (*row_fn)(void *ctx, sqlite3_stmt *s);

/* The loop of every reader: prepares sql, binds args[0..nargs) to its parameters ?1,
 * ?2, ..., hands each result row to row, and finalizes. Returns 0 once every row was
 * read, row's non-zero value where it stopped, or -EIO when sql could not be prepared
 * or a step failed. */
static int each_row(struct store *st, const char *sql, const int64_t *args, int nargs,
		    row_fn row, void *ctx)
{
	sqlite3_stmt *s;
	if (prepare(st, sql, &s) < 0)
		return -EIO;
	for (int i = 0; i < nargs; i++)
		sqlite3_bind_int64(s, i + 1, args[i]);
	int rc, ret = 0;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		if ((ret = row(ctx, s)) != 0)
			break;
	sqlite3_finalize(s);
	if (ret == 0 && rc != SQLITE_DONE)
		return -EIO;
	return ret;
}

/* A row that a reader returns in an array: its size, its decoder (into a zeroed row),
 * and what frees the strings a row owns (NULL: none). */
struct row_kind {
	size_t size;
	void (*load)(sqlite3_stmt *s, void *row);
	void (*release)(void *row);
};

struct gathered {
	const struct row_kind *k;
	char *rows;
	size_t n, cap;
};

static int gather_row(void *ctx, sqlite3_stmt *s)
{
	struct gathered *g = ctx;
	g->rows = xgrow(g->rows, g->n, &g->cap, g->k->size);
	void *row = g->rows + g->n * g->k->size;
	memset(row, 0, g->k->size);
	g->k->load(s, row);
	g->n++;
	return 0;
}

/* Every row of sql (its parameters bound as each_row binds them) in an array of k's
 * rows: *out, freed with free() after k's release of each row, and *n, written only on
 * success. Returns 0 or -EIO, with nothing left allocated. */
static int gather(struct store *st, const char *sql, const int64_t *args, int nargs,
		  const struct row_kind *k, void **out, size_t *n)
{
	struct gathered g = { k, NULL, 0, 0 };
	int e = each_row(st, sql, args, nargs, gather_row, &g);
	if (e < 0) {
		for (size_t i = 0; k->release && i < g.n; i++)
			k->release(g.rows + i * k->size);
		free(g.rows);
		return e;
	}
	*out = g.rows;
	*n = g.n;
	return 0;
}

static int stop_at_row(void *ctx, sqlite3_stmt *s)
{
	(void)ctx;
	(void)s;
	return 1;
}

static char *col_text(sqlite3_stmt *s, int i)
{
	const unsigned char *t = sqlite3_column_text(s, i);
	return xstrdup(t ? (const char *)t : "");
}

static void col_copy(sqlite3_stmt *s, int i, char *out, size_t n)
{
	const unsigned char *t = sqlite3_column_text(s, i);
	strlcpy_rsw(out, t ? (const char *)t : "", n);
}

/* "SELECT <every column of t> FROM <t's table> " followed by rest. */
static char *table_select(const struct store_table *t, const char *rest)
{
	struct buf b = { 0 };
	buf_puts(&b, "SELECT ");
	columns_list(&b, t, "");
	buf_printf(&b, " FROM %s %s", t->name, rest);
	return b.p;
}

void store_set_alive(struct store *st, store_alive_fn alive)
{
	st->alive = alive;
}

/* The store reads no /proc: whether a recorder lives is its caller's to say. */
static void settle_outcome(const struct store *st, struct run *r)
{
	if (strcmp(r->outcome, OUTCOME_RUNNING) != 0 || !st->alive || st->alive(r))
		return;
	strlcpy_rsw(r->outcome, OUTCOME_INTERRUPTED, sizeof(r->outcome));
	r->ended_at = r->last_at ? r->last_at : r->started_at;
}

static void load_run(sqlite3_stmt *s, void *row)
{
	columns_load(s, 0, &store_run_table, row);
}

static void release_run(void *row)
{
	run_release(row);
}

static const struct row_kind run_rows = { sizeof(struct run), load_run, release_run };

/* The runs of "SELECT <every run column> FROM run <rest>", read as store_set_alive()
 * says, without their parameters. */
static int select_runs(struct store *st, const char *rest, const int64_t *args, int nargs,
		       struct run **out, size_t *n)
{
	char *sql = table_select(&store_run_table, rest);
	void *rows;
	int e = gather(st, sql, args, nargs, &run_rows, &rows, n);
	free(sql);
	if (e < 0)
		return e;
	struct run *runs = rows;
	for (size_t i = 0; i < *n; i++)
		settle_outcome(st, &runs[i]);
	*out = runs;
	return 0;
}

static void load_param(sqlite3_stmt *s, void *row)
{
	struct run_param *q = row;
	col_copy(s, 0, q->key, sizeof(q->key));
	q->value = col_text(s, 1);
	q->is_num = sqlite3_column_type(s, 2) != SQLITE_NULL;
	q->num = q->is_num ? sqlite3_column_double(s, 2) : 0;
}

static void release_param(void *row)
{
	free(((struct run_param *)row)->value);
}

static const struct row_kind param_rows = { sizeof(struct run_param), load_param,
					    release_param };

/* Reads the run's parameters into r->params, sorted by key. */
static int load_params(struct store *st, struct run *r)
{
	void *p;
	int e = gather(st, "SELECT key, value, num FROM run_param WHERE run_id = ? ORDER BY key",
		       &r->id, 1, &param_rows, &p, &r->nparams);
	if (e == 0)
		r->params = p;
	return e;
}

/* Run ids, NULLs passed over (max(id) of no runs). */
struct ids {
	int64_t *p;
	size_t n, cap;
};

static int id_row(void *ctx, sqlite3_stmt *s)
{
	struct ids *ids = ctx;
	if (sqlite3_column_type(s, 0) == SQLITE_NULL)
		return 0;
	ids->p = xgrow(ids->p, ids->n, &ids->cap, sizeof(*ids->p));
	ids->p[ids->n++] = sqlite3_column_int64(s, 0);
	return 0;
}

int store_resolve_runs(struct store *st, const char *ref, int64_t **ids, size_t *n)
{
	struct run_ref r;
	if (run_ref_parse(ref, &r) < 0)
		return -EINVAL;
	const char *sql = r.series ?
		"SELECT id FROM run WHERE series = ? ORDER BY id DESC LIMIT ?" :
		r.id ? "SELECT id FROM run WHERE id = ?" : "SELECT max(id) FROM run";
	if (r.count > INT64_MAX)
		return -EIO;
	int64_t args[2] = { r.id, (int64_t)r.count };
	struct ids got = { NULL, 0, 0 };
	int e = each_row(st, sql, args, r.series ? 2 : r.id ? 1 : 0, id_row, &got);
	if (e < 0 || !got.n) {
		free(got.p);
		return e < 0 ? e : -ENOENT;
	}
	int64_t *out = got.p;
	size_t cnt = got.n;
	for (size_t i = 0; i < cnt / 2; i++) {	/* oldest first */
		int64_t t = out[i];
		out[i] = out[cnt - 1 - i];
		out[cnt - 1 - i] = t;
	}
	*ids = out;
	*n = cnt;
	return 0;
}

int store_resolve(struct store *st, const char *ref, int64_t *id)
{
	struct run_ref r;
	int64_t *ids;
	size_t n;
	if (run_ref_parse(ref, &r) < 0)
		return -EINVAL;
	if (r.count > 1)
		return -E2BIG;
	int e = store_resolve_runs(st, ref, &ids, &n);
	if (e < 0)
		return e;
	*id = ids[0];
	free(ids);
	return 0;
}

int store_series_runs(struct store *st, int64_t series, struct run **out, size_t *n)
{
	return select_runs(st, "WHERE series = ? ORDER BY id", &series, 1, out, n);
}

int store_get_run(struct store *st, int64_t id, struct run *out)
{
	struct run *runs;
	size_t cnt;
	int e = select_runs(st, "WHERE id = ?", &id, 1, &runs, &cnt);
	if (e < 0)
		return e;
	if (!cnt) {
		free(runs);
		return -ENOENT;
	}
	*out = runs[0];
	free(runs);
	if ((e = load_params(st, out)) < 0) {
		run_release(out);
		return e;
	}
	out->hwm_reset = each_row(st, "SELECT 1 FROM event WHERE run_id = ? AND"
				  " kind = 'peak_reset' LIMIT 1", &id, 1, stop_at_row, NULL) == 1;
	return 0;
}

int store_list_runs(struct store *st, size_t limit, struct run **out, size_t *n)
{
	int64_t lim = limit ? (int64_t)limit : -1;
	struct run *runs;
	size_t cnt;
	int e = select_runs(st, "ORDER BY id DESC LIMIT ?", &lim, 1, &runs, &cnt);
	if (e < 0)
		return e;
	for (size_t i = 0; i < cnt; i++)
		if (load_params(st, &runs[i]) < 0) {
			store_free_runs(runs, cnt);
			return -EIO;
		}
	*out = runs;
	*n = cnt;
	return 0;
}

void store_free_runs(struct run *runs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		run_release(&runs[i]);
	free(runs);
}

/* A caller's callback and its context, for the readers that hand rows over one at a
 * time (store_each_*). */
struct each {
	union {
		store_sample_cb sample;
		store_counter_cb counter;
		store_gpu_cb gpu;
		store_proc_cb proc;
	} cb;
	void *ctx;
};

static int sample_row(void *ctx, sqlite3_stmt *s)
{
	const struct each *e = ctx;
	struct sample m;
	memset(&m, 0, sizeof(m));
	columns_load(s, 0, &store_sample_table, &m);
	return e->cb.sample(e->ctx, &m);
}

int store_each_sample(struct store *st, int64_t id, store_sample_cb cb, void *ctx)
{
	struct each e = { .cb.sample = cb, .ctx = ctx };
	char *sql = table_select(&store_sample_table, "WHERE run_id = ? ORDER BY elapsed_ns");
	int ret = each_row(st, sql, &id, 1, sample_row, &e);
	free(sql);
	return ret;
}

static int counter_row(void *ctx, sqlite3_stmt *s)
{
	const struct each *e = ctx;
	const unsigned char *name = sqlite3_column_text(s, 1);
	return e->cb.counter(e->ctx, sqlite3_column_int64(s, 0), name ? (const char *)name : "",
			     sqlite3_column_int64(s, 2));
}

int store_each_counter(struct store *st, int64_t id, store_counter_cb cb, void *ctx)
{
	struct each e = { .cb.counter = cb, .ctx = ctx };
	return each_row(st, "SELECT elapsed_ns, name, value FROM counter WHERE run_id = ?"
			" ORDER BY elapsed_ns, name", &id, 1, counter_row, &e);
}

static int gpu_row(void *ctx, sqlite3_stmt *s)
{
	const struct each *e = ctx;
	struct gpu_figures g;
	memset(&g, 0, sizeof(g));
	g.device = (unsigned)sqlite3_column_int64(s, 1);
	g.target_known = sqlite3_column_type(s, 2) != SQLITE_NULL;
	g.target_bytes = (uint64_t)sqlite3_column_int64(s, 2);
	g.used_bytes = (uint64_t)sqlite3_column_int64(s, 3);
	g.total_bytes = (uint64_t)sqlite3_column_int64(s, 4);
	return e->cb.gpu(e->ctx, sqlite3_column_int64(s, 0), &g);
}

int store_each_gpu(struct store *st, int64_t id, store_gpu_cb cb, void *ctx)
{
	struct each e = { .cb.gpu = cb, .ctx = ctx };
	return each_row(st, "SELECT elapsed_ns, device, target_bytes, used_bytes, total_bytes"
			" FROM gpu WHERE run_id = ? ORDER BY elapsed_ns, device", &id, 1, gpu_row,
			&e);
}

static int proc_row(void *ctx, sqlite3_stmt *s)
{
	const struct each *e = ctx;
	struct proc_figures f;
	memset(&f, 0, sizeof(f));
	columns_load(s, 1, &store_proc_sample_table, &f);
	return e->cb.proc(e->ctx, sqlite3_column_int64(s, 0), &f);
}

/* The rows of the view proc_at_sample for one run. The view finds each member's row
 * with a subquery per (sample, row) pair, which takes tens of seconds for a run of a
 * thousand samples; here each stored row is valid from its time until the member's next
 * row (lead()), and the samples in that range come from the sample table's key. */
int store_each_proc_at_sample(struct store *st, int64_t id, store_proc_cb cb, void *ctx)
{
	struct each e = { .cb.proc = cb, .ctx = ctx };
	struct buf sql = { 0 };
	buf_puts(&sql, "WITH p AS (SELECT elapsed_ns, ");
	columns_list(&sql, &store_proc_sample_table, "");
	buf_puts(&sql, ", coalesce(lead(elapsed_ns) OVER (PARTITION BY pid ORDER BY"
		       " elapsed_ns), 9223372036854775807) AS until FROM proc_sample WHERE"
		       " run_id = ?1) SELECT s.elapsed_ns, ");
	columns_list(&sql, &store_proc_sample_table, "p.");
	buf_puts(&sql, " FROM p JOIN sample s ON s.run_id = ?1 AND"
		       " s.elapsed_ns >= p.elapsed_ns AND s.elapsed_ns < p.until"
		       " WHERE p.gone = 0 ORDER BY s.elapsed_ns, p.pid");
	int ret = each_row(st, buf_str(&sql), &id, 1, proc_row, &e);
	buf_release(&sql);
	return ret;
}

static void load_event(sqlite3_stmt *s, void *row)
{
	struct event *e = row;
	e->t = sqlite3_column_int64(s, 0);
	col_copy(s, 1, e->kind, sizeof(e->kind));
	e->pid = (pid_t)sqlite3_column_int64(s, 2);
	e->detail = col_text(s, 3);
}

static void release_event(void *row)
{
	free(((struct event *)row)->detail);
}

static const struct row_kind event_rows = { sizeof(struct event), load_event, release_event };

int store_events(struct store *st, int64_t id, struct event **out, size_t *n)
{
	void *rows;
	int e = gather(st, "SELECT t, kind, pid, detail FROM event WHERE run_id = ?"
		       " ORDER BY t, rowid", &id, 1, &event_rows, &rows, n);
	if (e == 0)
		*out = rows;
	return e;
}

void store_free_events(struct event *ev, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(ev[i].detail);
	free(ev);
}

static void load_kill(sqlite3_stmt *s, void *row)
{
	struct oom_kill *o = row;
	o->t = sqlite3_column_int64(s, 0);
	o->pid = (pid_t)sqlite3_column_int64(s, 1);
	col_copy(s, 2, o->comm, sizeof(o->comm));
	o->anon_rss = (uint64_t)sqlite3_column_int64(s, 3);
	o->file_rss = (uint64_t)sqlite3_column_int64(s, 4);
	o->shmem_rss = (uint64_t)sqlite3_column_int64(s, 5);
	o->total_vm = (uint64_t)sqlite3_column_int64(s, 6);
	col_copy(s, 7, o->memcg, sizeof(o->memcg));
}

static const struct row_kind kill_rows = { sizeof(struct oom_kill), load_kill, NULL };

int store_oom_kills(struct store *st, int64_t id, struct oom_kill **out, size_t *n)
{
	void *rows;
	int e = gather(st, "SELECT t, pid, comm, anon_rss, file_rss, shmem_rss, total_vm, memcg"
		       " FROM oom_kill WHERE run_id = ? ORDER BY t, rowid", &id, 1, &kill_rows,
		       &rows, n);
	if (e == 0)
		*out = rows;
	return e;
}

static void load_process(sqlite3_stmt *s, void *row)
{
	columns_load(s, 0, &store_process_table, row);
}

static const struct row_kind process_rows = { sizeof(struct proc_summary), load_process, NULL };

int store_processes(struct store *st, int64_t id, struct proc_summary **out, size_t *n)
{
	char *sql = table_select(&store_process_table,
				 "WHERE run_id = ? ORDER BY peak_rss DESC, first_ns, pid");
	void *rows;
	int e = gather(st, sql, &id, 1, &process_rows, &rows, n);
	free(sql);
	if (e == 0)
		*out = rows;
	return e;
}

static void load_stack(sqlite3_stmt *s, void *row)
{
	struct stored_stack *o = row;
	o->id = sqlite3_column_int64(s, 0);
	o->bytes = sqlite3_column_int64(s, 1);
	o->blocks = (uint64_t)sqlite3_column_int64(s, 2);
	o->frames = col_text(s, 3);
}

static void release_stack(void *row)
{
	free(((struct stored_stack *)row)->frames);
}

static const struct row_kind stack_rows = { sizeof(struct stored_stack), load_stack,
					    release_stack };

int store_stacks(struct store *st, int64_t id, enum stack_moment at, struct stored_stack **out,
		 size_t *n)
{
	void *rows;
	static const char *const query[STACK_MOMENTS] = {
#define STACKS_AT(m) "SELECT b.stack_id, b.bytes, b.blocks, s.frames FROM stack_bytes b JOIN" \
		     " stack s ON s.run_id = b.run_id AND s.id = b.stack_id WHERE b.run_id = ?" \
		     " AND b.at = '" m "' ORDER BY b.bytes DESC, b.stack_id"
		STACKS_AT("peak"), STACKS_AT("end"), STACKS_AT("gpu"),
#undef STACKS_AT
	};
	if ((unsigned)at >= STACK_MOMENTS)
		return -EINVAL;
	int e = gather(st, query[at], &id, 1, &stack_rows, &rows, n);
	if (e == 0)
		*out = rows;
	return e;
}

void store_free_stacks(struct stored_stack *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].frames);
	free(v);
}

static void load_mark(sqlite3_stmt *s, void *row)
{
	struct mark *m = row;
	m->t = sqlite3_column_int64(s, 0);
	m->label = col_text(s, 1);
	m->id = sqlite3_column_int64(s, 2);
	m->stage_peak_known = sqlite3_column_type(s, 3) != SQLITE_NULL;
	m->stage_peak = m->stage_peak_known ? (uint64_t)sqlite3_column_int64(s, 3) : 0;
	m->stage_peak_at = m->stage_peak_known ? sqlite3_column_int64(s, 4) : 0;
}

static void release_mark(void *row)
{
	free(((struct mark *)row)->label);
}

static const struct row_kind mark_rows = { sizeof(struct mark), load_mark, release_mark };

int store_marks(struct store *st, int64_t id, struct mark **out, size_t *n)
{
	void *rows;
	int e = gather(st, "SELECT t, label, rowid, stage_peak, stage_peak_at FROM mark"
		       " WHERE run_id = ? ORDER BY t, rowid", &id, 1, &mark_rows, &rows, n);
	if (e == 0)
		*out = rows;
	return e;
}

int store_marks_after(struct store *st, int64_t id, int64_t after, struct mark **out, size_t *n)
{
	void *rows;
	const int64_t args[] = { id, after };
	int e = gather(st, "SELECT t, label, rowid, stage_peak, stage_peak_at FROM mark"
		       " WHERE run_id = ? AND rowid > ? ORDER BY rowid LIMIT 4096", args, 2,
		       &mark_rows, &rows, n);
	if (e == 0)
		*out = rows;
	return e;
}

void store_free_marks(struct mark *m, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(m[i].label);
	free(m);
}

int store_delete_run(struct store *st, int64_t id)
{
	struct run r;
	int e = store_get_run(st, id, &r);
	if (e < 0)
		return e;
	int busy = strcmp(r.outcome, OUTCOME_RUNNING) == 0;
	run_release(&r);
	if (busy)
		return -EBUSY;
	static const char *const tables[] = { "sample", "event", "mark", "counter", "gpu",
					      "proc_sample", "oom_kill", "process", "run_param",
					      "run_gc", "stack", "stack_bytes", "run" };
	if (exec_sql(st->db, "BEGIN IMMEDIATE") < 0)
		return -EIO;
	for (size_t i = 0; i < ARRAY_SIZE(tables); i++) {
		char sql[64];
		sqlite3_stmt *s;
		snprintf(sql, sizeof(sql), "DELETE FROM %s WHERE %s = ?", tables[i],
			 strcmp(tables[i], "run") == 0 ? "id" : "run_id");
		if (prepare(st, sql, &s) < 0)
			goto fail;
		sqlite3_bind_int64(s, 1, id);
		if (step_done(s) < 0)
			goto fail;
	}
	return exec_sql(st->db, "COMMIT");
fail:
	rollback(st);
	return -EIO;
}
