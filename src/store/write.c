/* Writing runs: the batch of rows a recorder hands over, its transaction, and the
 * writer thread that keeps SQLite off the sampling path.
 *
 * A recorder appends rows to the front batch (memory only) and calls store_flush()
 * about once a second. Without the writer (store_writer_start() not called: tests,
 * `mark --run`) the flush writes the batch at once. With it, the flush swaps the front
 * batch with the back one, which the thread writes, and returns without waiting: a
 * lock held by another process, a slow disk or a full one stall only the thread. While
 * the back batch cannot be written, rows gather in front up to fixed bounds; past them,
 * samples are merged two into one, keeping the higher of each (so the peak survives),
 * and other rows are dropped and counted (store_lost()).
 *
 * Calls go one way: store.c (opening and closing, a hub's connection too) calls in
 * here (store_write_release, store_hub_start, store_hub_stop, the WAL hook), and
 * nothing here calls store.c (make lint checks it). */
#include "store/store_int.h"
#include "base/clock.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Bounds of the front batch while writes fail (about 10 MiB in all). */
#define MAX_SAMPLES 32768
#define MAX_ROWS 32768		/* per kind of row: counters, GPUs, processes */
#define MAX_NOTES 4096		/* events, marks, kills */

int store_run_begin(struct store *st, struct run *r)
{
	sqlite3_stmt *s;
	char *sql = columns_insert_sql(&store_run_table, "INSERT", COL_AT_BEGIN);
	int pe = prepare(st, sql, &s);
	free(sql);
	if (pe < 0)
		return -EIO;
	struct run begun = *r;
	strlcpy_rsw(begun.outcome, OUTCOME_RUNNING, sizeof(begun.outcome));
	columns_bind(s, 1, &store_run_table, COL_AT_BEGIN, &begun);
	int e = step_done(s);
	if (e == 0)
		r->id = sqlite3_last_insert_rowid(st->db);
	return e;
}

int store_put_params(struct store *st, int64_t run_id, const struct run_param *p, size_t n)
{
	if (n == 0)
		return 0;
	if (exec_sql(st->db, "BEGIN IMMEDIATE") < 0)
		return -EIO;
	for (size_t i = 0; i < n; i++) {
		sqlite3_stmt *s;
		if (prepare(st, "INSERT OR REPLACE INTO run_param (run_id, key, value, num)"
				" VALUES (?,?,?,?)", &s) < 0)
			goto fail;
		sqlite3_bind_int64(s, 1, run_id);
		sqlite3_bind_text(s, 2, p[i].key, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 3, p[i].value, -1, SQLITE_STATIC);
		if (p[i].is_num)
			sqlite3_bind_double(s, 4, p[i].num);
		else
			sqlite3_bind_null(s, 4);
		if (step_done(s) < 0)
			goto fail;
	}
	return exec_sql(st->db, "COMMIT") < 0 ? -EIO : 0;
fail:
	rollback(st);
	return -EIO;
}

/* Words and -errno for a failed SQLite call on st's connection, taken before a
 * ROLLBACK replaces them. */
static int sql_failure(struct store *st, char *msg, size_t n)
{
	int rc = sqlite3_extended_errcode(st->db) & 0xff;
	snprintf(msg, n, "%s", rc == SQLITE_FULL ? "disk full" : sqlite3_errmsg(st->db));
	if (!sqlite3_get_autocommit(st->db))
		exec_sql(st->db, "ROLLBACK");
	switch (rc) {
	case SQLITE_FULL: return -ENOSPC;
	case SQLITE_BUSY: case SQLITE_LOCKED: return -EBUSY;
	case SQLITE_READONLY: return -EROFS;
	default: return -EIO;
	}
}

static int insert_event(struct store *st, int64_t run_id, int64_t t, const char *kind,
			pid_t pid, const char *detail)
{
	sqlite3_stmt *s;
	if (prepare_kept(st, &st->ins_event, "INSERT INTO event (run_id, t, kind, pid, detail)"
			 " VALUES (?,?,?,?,?)") < 0)
		return -EIO;
	s = st->ins_event;
	sqlite3_bind_int64(s, 1, run_id);
	sqlite3_bind_int64(s, 2, t);
	sqlite3_bind_text(s, 3, kind, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 4, pid);
	sqlite3_bind_text(s, 5, detail ? detail : "", -1, SQLITE_STATIC);
	return step_kept(s);
}

static int insert_kill(struct store *st, int64_t run_id, const struct oom_kill *k)
{
	sqlite3_stmt *s;
	if (prepare_kept(st, &st->ins_kill, "INSERT INTO oom_kill (run_id, t, pid, comm, anon_rss,"
			 " file_rss, shmem_rss, total_vm, memcg) VALUES (?,?,?,?,?,?,?,?,?)") < 0)
		return -EIO;
	s = st->ins_kill;
	sqlite3_bind_int64(s, 1, run_id);
	sqlite3_bind_int64(s, 2, k->t);
	sqlite3_bind_int64(s, 3, k->pid);
	sqlite3_bind_text(s, 4, k->comm, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 5, (int64_t)k->anon_rss);
	sqlite3_bind_int64(s, 6, (int64_t)k->file_rss);
	sqlite3_bind_int64(s, 7, (int64_t)k->shmem_rss);
	sqlite3_bind_int64(s, 8, (int64_t)k->total_vm);
	sqlite3_bind_text(s, 9, k->memcg, -1, SQLITE_STATIC);
	return step_kept(s);
}

static int insert_mark(struct store *st, int64_t run_id, int64_t t, const char *label)
{
	sqlite3_stmt *s;
	if (prepare_kept(st, &st->ins_mark, "INSERT INTO mark (run_id, t, label) VALUES (?,?,?)") < 0)
		return -EIO;
	s = st->ins_mark;
	sqlite3_bind_int64(s, 1, run_id);
	sqlite3_bind_int64(s, 2, t);
	sqlite3_bind_text(s, 3, label, -1, SQLITE_STATIC);
	return step_kept(s);
}

static int update_stage(struct store *st, int64_t run_id, const struct stage_row *g)
{
	if (prepare_kept(st, &st->upd_stage, "UPDATE mark SET stage_peak = ?, stage_peak_at = ?"
			 " WHERE rowid = ? AND run_id = ?") < 0)
		return -EIO;
	sqlite3_stmt *s = st->upd_stage;
	bind_opt_i64(s, 1, (int64_t)g->peak, g->known);
	bind_opt_i64(s, 2, g->at, g->known);
	sqlite3_bind_int64(s, 3, g->mark_id);
	sqlite3_bind_int64(s, 4, run_id);
	return step_kept(s);
}

/* *slot: the INSERT OR REPLACE of every column of t, prepared. */
static int prepare_columns(struct store *st, const struct store_table *t, sqlite3_stmt **slot)
{
	char *sql = columns_insert_sql(t, "INSERT OR REPLACE", 0);
	int e = prepare(st, sql, slot);
	free(sql);
	return e;
}

static int insert_rows(struct store *st, const struct batch *b)
{
	if (!st->ins_sample && prepare_columns(st, &store_sample_table, &st->ins_sample) < 0)
		return -EIO;
	sqlite3_stmt *s = st->ins_sample;
	for (size_t i = 0; i < b->nsamples; i++) {
		sqlite3_reset(s);
		sqlite3_bind_int64(s, 1, b->run_id);
		columns_bind(s, 2, &store_sample_table, 0, &b->samples[i]);
		if (sqlite3_step(s) != SQLITE_DONE)
			return -EIO;
	}
	if (b->ncounters && !st->ins_counter &&
	    prepare(st, "INSERT OR REPLACE INTO counter (run_id, elapsed_ns, name, value)"
			" VALUES (?,?,?,?)", &st->ins_counter) < 0)
		return -EIO;
	for (size_t i = 0; i < b->ncounters; i++) {
		s = st->ins_counter;
		sqlite3_reset(s);
		sqlite3_bind_int64(s, 1, b->run_id);
		sqlite3_bind_int64(s, 2, b->counters[i].elapsed_ns);
		sqlite3_bind_text(s, 3, b->counters[i].name, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 4, b->counters[i].value);
		if (sqlite3_step(s) != SQLITE_DONE)
			return -EIO;
	}
	if (b->ngpus && !st->ins_gpu &&
	    prepare(st, "INSERT OR REPLACE INTO gpu (run_id, elapsed_ns, device, target_bytes,"
			" used_bytes, total_bytes) VALUES (?,?,?,?,?,?)", &st->ins_gpu) < 0)
		return -EIO;
	if (b->nprocs && !st->ins_proc &&
	    prepare_columns(st, &store_proc_sample_table, &st->ins_proc) < 0)
		return -EIO;
	for (size_t i = 0; i < b->nprocs; i++) {
		const struct proc_row *pr = &b->procs[i];
		s = st->ins_proc;
		sqlite3_reset(s);
		sqlite3_bind_int64(s, 1, b->run_id);
		sqlite3_bind_int64(s, 2, pr->elapsed_ns);
		columns_bind(s, 3, &store_proc_sample_table, 0, &pr->p);
		if (sqlite3_step(s) != SQLITE_DONE)
			return -EIO;
	}
	for (size_t i = 0; i < b->ngpus; i++) {
		const struct gpu_row *g = &b->gpus[i];
		s = st->ins_gpu;
		sqlite3_reset(s);
		sqlite3_bind_int64(s, 1, b->run_id);
		sqlite3_bind_int64(s, 2, g->elapsed_ns);
		sqlite3_bind_int64(s, 3, g->g.device);
		bind_opt_i64(s, 4, (int64_t)g->g.target_bytes, g->g.target_known);
		sqlite3_bind_int64(s, 5, (int64_t)g->g.used_bytes);
		sqlite3_bind_int64(s, 6, (int64_t)g->g.total_bytes);
		if (sqlite3_step(s) != SQLITE_DONE)
			return -EIO;
	}
	for (size_t i = 0; i < b->nevents; i++) {
		const struct event_row *ev = &b->events[i];
		if (insert_event(st, b->run_id, ev->t, ev->kind, ev->pid, ev->detail) < 0)
			return -EIO;
	}
	for (size_t i = 0; i < b->nmarks; i++)
		if (insert_mark(st, b->run_id, b->marks[i].t, b->marks[i].label) < 0)
			return -EIO;
	for (size_t i = 0; i < b->nstages; i++)
		if (update_stage(st, b->run_id, &b->stages[i]) < 0)
			return -EIO;
	for (size_t i = 0; i < b->nkills; i++)
		if (insert_kill(st, b->run_id, &b->kills[i]) < 0)
			return -EIO;
	return 0;
}

/* The run's state as it goes (the columns COL_AT_PROGRESS), by its id. */
static int write_progress(struct store *st, const struct run *r)
{
	if (!st->upd_progress) {
		char *sql = columns_update_sql(&store_run_table, COL_AT_PROGRESS, "id");
		int e = prepare(st, sql, &st->upd_progress);
		free(sql);
		if (e < 0)
			return -EIO;
	}
	sqlite3_stmt *s = st->upd_progress;
	sqlite3_reset(s);
	int i = columns_bind(s, 1, &store_run_table, COL_AT_PROGRESS, r);
	sqlite3_bind_int64(s, i, r->id);
	return step_kept(s);
}

int store_wal_hook(void *ctx, sqlite3 *db, const char *name, int frames)
{
	struct store *st = ctx;
	st->wal_frames = frames;
	if (frames >= WAL_MAX_FRAMES)
		(void)sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
	return SQLITE_OK;
}

/* Whether the writer may add to the WAL: it holds fewer than WAL_MAX_FRAMES frames, or
 * a RESTART checkpoint, tried without waiting, copied them all into the database and
 * found no reader in the WAL (so the next commit starts it again from its beginning).
 *
 * A reader's snapshot keeps every frame after it in the WAL, and nothing the writer
 * can do in WAL mode ends that snapshot: a user allowed to read a database shared with
 * them could hold a read transaction for ever and make the WAL grow without bound
 * (7.1 MB after 20 s at 1 ms, against SQLite's 4.1 MB checkpoint size). The writer
 * thread therefore stops adding past the bound and keeps the rows in memory, bounded
 * as for a database locked by another writer, until the reader lets go; the recorder
 * says so once. */
static int wal_has_room(struct store *st)
{
	if (st->wal_frames < WAL_MAX_FRAMES)
		return 1;
	sqlite3_busy_timeout(st->db, 0);
	int rc = sqlite3_wal_checkpoint_v2(st->db, "main", SQLITE_CHECKPOINT_RESTART, NULL, NULL);
	sqlite3_busy_timeout(st->db, 10000);
	if (rc != SQLITE_OK)
		return 0;
	st->wal_frames = 0;
	return 1;
}

/* Writes the batches b[0..nb) in one transaction on st's connection (a store's own
 * batch, or a hub's round of several stores' batches). bounded: refused (-EAGAIN)
 * while the WAL is past its bound and cannot be emptied (wal_has_room); the last
 * flush of a run is not bounded, so that what it holds is not lost. Returns 0, or
 * -errno with words in msg. */
static int commit_batches(struct store *st, const struct batch *const *b, size_t nb,
			  int bounded, char *msg, size_t n)
{
	size_t rows = 0;
	for (size_t i = 0; i < nb; i++)
		rows += b[i]->nsamples + b[i]->ncounters + b[i]->ngpus + b[i]->nprocs +
			b[i]->nevents + b[i]->nmarks + b[i]->nstages + b[i]->nkills +
			(size_t)b[i]->have_progress;
	if (!rows)
		return 0;
	if (bounded && !wal_has_room(st)) {
		snprintf(msg, n, "its write-ahead log (the -wal file) reached its bound of %d "
			 "pages and a reader keeps it from being emptied: a read transaction held "
			 "open, perhaps by another user", WAL_MAX_FRAMES);
		return -EAGAIN;
	}
	if (sqlite3_exec(st->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		return sql_failure(st, msg, n);
	for (size_t i = 0; i < nb; i++)
		if (insert_rows(st, b[i]) < 0 ||
		    (b[i]->have_progress && write_progress(st, &b[i]->progress) < 0))
			return sql_failure(st, msg, n);
	if (sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		return sql_failure(st, msg, n);
	return 0;
}

static int commit_batch(struct store *st, const struct batch *b, int bounded, char *msg,
			size_t n)
{
	return commit_batches(st, &b, 1, bounded, msg, n);
}

/* The strings of a run that write_progress binds, owned by the batch. */
static void progress_free(struct run *p)
{
	store_row_free_text(&store_run_table, p);
	memset(p, 0, sizeof(*p));
}

/* A copy of r with its own copies of the text that write_progress binds (its other
 * strings and its parameters left out). */
static void progress_set(struct batch *b, const struct run *r)
{
	progress_free(&b->progress);
	b->progress = *r;
	b->progress.params = NULL;
	b->progress.nparams = 0;
	for (size_t i = 0; i < store_run_table.ncols; i++) {
		const struct store_column *c = &store_run_table.cols[i];
		if (c->kind != COL_TEXT)
			continue;
		char *from, *copy = NULL;
		memcpy(&from, (const char *)r + c->off, sizeof(from));
		if (from && (c->when & COL_AT_PROGRESS))
			copy = xstrdup(from);
		memcpy((char *)&b->progress + c->off, &copy, sizeof(copy));
	}
	b->have_progress = 1;
}

/* Empties b, keeping its arrays for the next rows. */
static void batch_clear(struct batch *b)
{
	for (size_t i = 0; i < b->nevents; i++)
		free(b->events[i].detail);
	for (size_t i = 0; i < b->nmarks; i++)
		free(b->marks[i].label);
	b->nsamples = b->ncounters = b->ngpus = b->nprocs = 0;
	b->nevents = b->nmarks = b->nstages = b->nkills = 0;
	progress_free(&b->progress);
	b->have_progress = 0;
}

static void batch_free(struct batch *b)
{
	batch_clear(b);
	free(b->samples);
	free(b->counters);
	free(b->gpus);
	free(b->procs);
	free(b->events);
	free(b->marks);
	free(b->stages);
	free(b->kills);
	memset(b, 0, sizeof(*b));
}

static int batch_empty(const struct batch *b)
{
	return !b->nsamples && !b->ncounters && !b->ngpus && !b->nprocs && !b->nevents &&
	       !b->nmarks && !b->nstages && !b->nkills;
}

/* A slot for one more row of an array, or NULL past max (the row is dropped). */
static void *slot(void **arr, size_t *n, size_t *cap, size_t size, size_t max)
{
	if (*n >= max)
		return NULL;
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		*arr = xrealloc(*arr, *cap * size);
	}
	return (char *)*arr + (*n)++ * size;
}
#define SLOT(b, field, max) \
	slot((void **)&(b)->field, &(b)->n##field, &(b)->cap##field, sizeof(*(b)->field), max)

/* Rows of one run at a time: a batch belongs to the run of its first row. */
static int batch_for(struct store *st, int64_t run_id)
{
	struct batch *b = &st->front;
	if (!batch_empty(b) && b->run_id != run_id)
		return -EINVAL;
	b->run_id = run_id;
	return 0;
}

/* The front batch holds MAX_SAMPLES: merges each two neighbours into the one with the
 * higher RSS, carrying the higher of their other high-water figures, so that what
 * the run peaked at survives at half the time resolution. */
static void merge_samples(struct store *st)
{
	struct batch *b = &st->front;
	size_t k = 0;
	for (size_t i = 0; i + 1 < b->nsamples; i += 2) {
		struct sample x = b->samples[i], y = b->samples[i + 1];
		struct sample m = y.mem.rss > x.mem.rss ? y : x;
		m.mem.hwm = x.mem.hwm > y.mem.hwm ? x.mem.hwm : y.mem.hwm;
		if ((x.have | y.have) & SAMPLE_GPU) {
			m.gpu = x.gpu > y.gpu ? x.gpu : y.gpu;
			m.have |= SAMPLE_GPU;
		}
		if ((x.have | y.have) & SAMPLE_CGROUP_PEAK) {
			m.cgroup_peak = x.cgroup_peak > y.cgroup_peak ? x.cgroup_peak : y.cgroup_peak;
			m.have |= SAMPLE_CGROUP_PEAK;
		}
		b->samples[k++] = m;
	}
	if (b->nsamples % 2)
		b->samples[k++] = b->samples[b->nsamples - 1];
	st->lost.samples_merged += b->nsamples - k;
	b->nsamples = k;
}

int store_add_sample(struct store *st, int64_t run_id, const struct sample *smp)
{
	if (batch_for(st, run_id) < 0)
		return -EINVAL;
	if (st->front.nsamples >= MAX_SAMPLES)
		merge_samples(st);
	*(struct sample *)SLOT(&st->front, samples, MAX_SAMPLES) = *smp;
	return 0;
}

size_t store_pending(const struct store *st)
{
	return st->front.nsamples;
}

int store_filling(const struct store *st)
{
	const struct batch *b = &st->front;
	return b->nsamples >= MAX_SAMPLES / 4 || b->ncounters >= MAX_ROWS / 4 ||
	       b->ngpus >= MAX_ROWS / 4 || b->nprocs >= MAX_ROWS / 4 ||
	       b->nevents >= MAX_NOTES / 4 || b->nmarks >= MAX_NOTES / 4 ||
	       b->nstages >= MAX_NOTES / 4 ||
	       b->nkills >= MAX_NOTES / 4;
}

struct store_lost store_lost(const struct store *st)
{
	return st->lost;
}

int store_add_counter(struct store *st, int64_t run_id, int64_t elapsed_ns, const char *name,
		      long long value)
{
	if (batch_for(st, run_id) < 0)
		return -EINVAL;
	struct counter_row *c = SLOT(&st->front, counters, MAX_ROWS);
	if (!c) {
		st->lost.rows_dropped++;
		return -ENOBUFS;
	}
	c->elapsed_ns = elapsed_ns;
	strlcpy_rsw(c->name, name, sizeof(c->name));
	c->value = value;
	return 0;
}

int store_add_gpu(struct store *st, int64_t run_id, int64_t elapsed_ns, const struct gpu_figures *g)
{
	if (batch_for(st, run_id) < 0)
		return -EINVAL;
	struct gpu_row *r = SLOT(&st->front, gpus, MAX_ROWS);
	if (!r) {
		st->lost.rows_dropped++;
		return -ENOBUFS;
	}
	r->elapsed_ns = elapsed_ns;
	r->g = *g;
	return 0;
}

int store_add_proc(struct store *st, int64_t run_id, int64_t elapsed_ns, const struct proc_figures *p)
{
	if (batch_for(st, run_id) < 0)
		return -EINVAL;
	struct proc_row *r = SLOT(&st->front, procs, MAX_ROWS);
	if (!r) {
		st->lost.rows_dropped++;
		return -ENOBUFS;
	}
	r->elapsed_ns = elapsed_ns;
	r->p = *p;
	return 0;
}

/* Events, marks and kills are written at once where no writer thread runs (a mark
 * from `rsswatch mark --run`), else with the next batch. */
int store_add_event(struct store *st, int64_t run_id, int64_t t, const char *kind, pid_t pid,
		    const char *detail)
{
	if (!st->writer_on)
		return insert_event(st, run_id, t, kind, pid, detail);
	if (batch_for(st, run_id) < 0)
		return -EINVAL;
	struct event_row *e = SLOT(&st->front, events, MAX_NOTES);
	if (!e) {
		st->lost.rows_dropped++;
		return -ENOBUFS;
	}
	e->t = t;
	strlcpy_rsw(e->kind, kind, sizeof(e->kind));
	e->pid = pid;
	e->detail = xstrdup(detail ? detail : "");
	return 0;
}

int store_add_mark(struct store *st, int64_t run_id, int64_t t, const char *label)
{
	if (!st->writer_on)
		return insert_mark(st, run_id, t, label);
	if (batch_for(st, run_id) < 0)
		return -EINVAL;
	struct mark_row *m = SLOT(&st->front, marks, MAX_NOTES);
	if (!m) {
		st->lost.rows_dropped++;
		return -ENOBUFS;
	}
	m->t = t;
	m->label = xstrdup(label);
	return 0;
}

int store_set_stage_peak(struct store *st, int64_t run_id, int64_t mark_id, int known,
			 uint64_t peak, int64_t at)
{
	struct stage_row g = { mark_id, peak, at, known };
	if (!st->writer_on)
		return update_stage(st, run_id, &g);
	if (batch_for(st, run_id) < 0)
		return -EINVAL;
	struct stage_row *r = SLOT(&st->front, stages, MAX_NOTES);
	if (!r) {
		st->lost.rows_dropped++;
		return -ENOBUFS;
	}
	*r = g;
	return 0;
}

int store_add_oom_kill(struct store *st, int64_t run_id, const struct oom_kill *k)
{
	if (!st->writer_on)
		return insert_kill(st, run_id, k);
	if (batch_for(st, run_id) < 0)
		return -EINVAL;
	struct oom_kill *o = SLOT(&st->front, kills, MAX_NOTES);
	if (!o) {
		st->lost.rows_dropped++;
		return -ENOBUFS;
	}
	*o = *k;
	return 0;
}

/* --- the writer thread --- */

static void *writer_main(void *arg)
{
	struct store *st = arg;
	char msg[sizeof(st->werrmsg)];
	pthread_mutex_lock(&st->mu);
	for (;;) {
		while (!st->back_full && !st->stop)
			pthread_cond_wait(&st->cv, &st->mu);
		if (!st->back_full)
			break;
		pthread_mutex_unlock(&st->mu);
		int e = commit_batch(st, &st->back, 1, msg, sizeof(msg));
		pthread_mutex_lock(&st->mu);
		st->werr = e;
		if (e == 0) {
			batch_clear(&st->back);
			st->back_full = 0;
			continue;
		}
		strlcpy_rsw(st->werrmsg, msg, sizeof(st->werrmsg));
		if (st->stop)
			break;	/* store_run_finish() writes what is left */
		/* try again in a second (a lock released, space freed) */
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += 1;
		while (!st->stop && pthread_cond_timedwait(&st->cv, &st->mu, &ts) == 0)
			;
	}
	pthread_mutex_unlock(&st->mu);
	return NULL;
}

/* A writer's mutex and condition, whose timed waits run on CLOCK_MONOTONIC. */
static void lock_init(pthread_mutex_t *mu, pthread_cond_t *cv)
{
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_mutex_init(mu, NULL);
	pthread_cond_init(cv, &ca);
	pthread_condattr_destroy(&ca);
}

/* --- a writer shared by several stores (store.h, store_hub) --- */

/* How long a round waits for more stores' batches after the first one: the commits of
 * many recorders at 1 s (each flushing every FLUSH_EVERY_NS, store.h) become about one
 * a second. A killed recorder may lose up to this much more than without a hub. */
#define HUB_GATHER_NS (1000 * 1000 * 1000LL)

struct store_hub {
	struct store *w;		/* the hub's own connection and statements */
	pthread_t th;
	pthread_mutex_t mu;		/* guards what follows; taken before a store's mu */
	pthread_cond_t cv;
	struct store **m;		/* the stores that joined */
	size_t n, cap;
	int64_t due;			/* CLOCK_MONOTONIC ns the next round starts; 0: idle */
	int stop;
};

static void hub_join(struct store_hub *h, struct store *st)
{
	pthread_mutex_lock(&h->mu);
	if (h->n == h->cap) {
		h->cap = h->cap ? h->cap * 2 : 16;
		h->m = xrealloc(h->m, h->cap * sizeof(*h->m));
	}
	h->m[h->n++] = st;
	pthread_mutex_unlock(&h->mu);
}

static void hub_leave(struct store_hub *h, struct store *st)
{
	pthread_mutex_lock(&h->mu);
	for (size_t i = 0; i < h->n; i++)
		if (h->m[i] == st) {
			h->m[i] = h->m[--h->n];
			break;
		}
	pthread_mutex_unlock(&h->mu);
}

/* A store handed a batch over: a round starts HUB_GATHER_NS after the first one that
 * waits, or now when hurried. */
static void hub_wake(struct store_hub *h, int hurry)
{
	int64_t now = mono_ns();
	pthread_mutex_lock(&h->mu);
	if (hurry || !h->due || h->due > now + HUB_GATHER_NS)
		h->due = hurry ? now : now + HUB_GATHER_NS;
	pthread_cond_signal(&h->cv);
	pthread_mutex_unlock(&h->mu);
}

/* One round: every joined store's waiting batch, in one transaction on the hub's
 * connection. Returns 0 or -errno (each store's werr says it too, and its batch stays
 * for the next round). */
static int hub_round(struct store_hub *h)
{
	char msg[sizeof(h->w->werrmsg)];
	struct store **take;
	const struct batch **backs;
	size_t n = 0;
	pthread_mutex_lock(&h->mu);
	take = xmalloc((h->n ? h->n : 1) * sizeof(*take));
	backs = xmalloc((h->n ? h->n : 1) * sizeof(*backs));
	for (size_t i = 0; i < h->n; i++) {
		struct store *st = h->m[i];
		pthread_mutex_lock(&st->mu);
		if (st->back_full && !st->stop) {
			st->in_hub = 1;
			backs[n] = &st->back;
			take[n++] = st;
		}
		pthread_mutex_unlock(&st->mu);
	}
	pthread_mutex_unlock(&h->mu);
	int e = commit_batches(h->w, backs, n, 1, msg, sizeof(msg));
	for (size_t i = 0; i < n; i++) {
		struct store *st = take[i];
		pthread_mutex_lock(&st->mu);
		st->werr = e;
		if (e == 0) {
			batch_clear(&st->back);
			st->back_full = 0;
		} else {
			strlcpy_rsw(st->werrmsg, msg, sizeof(st->werrmsg));
		}
		st->in_hub = 0;
		pthread_cond_broadcast(&st->cv);	/* writer_stop may wait for it */
		pthread_mutex_unlock(&st->mu);
	}
	free(take);
	free(backs);
	return e;
}

static void *hub_main(void *arg)
{
	struct store_hub *h = arg;
	pthread_mutex_lock(&h->mu);
	while (!h->stop) {
		int64_t now = mono_ns();
		if (!h->due || h->due > now) {
			struct timespec ts;
			int64_t until = h->due ? h->due : now + 60 * NS_PER_S;
			ts.tv_sec = (time_t)(until / NS_PER_S);
			ts.tv_nsec = (long)(until % NS_PER_S);
			pthread_cond_timedwait(&h->cv, &h->mu, &ts);
			continue;
		}
		h->due = 0;
		pthread_mutex_unlock(&h->mu);
		int e = hub_round(h);
		pthread_mutex_lock(&h->mu);
		if (e < 0 && !h->due)	/* try again in a second (a lock released, space freed) */
			h->due = mono_ns() + NS_PER_S;
	}
	pthread_mutex_unlock(&h->mu);
	return NULL;
}

int store_hub_start(struct store *w, struct store_hub **out)
{
	struct store_hub *h = xcalloc(1, sizeof(*h));
	h->w = w;
	lock_init(&h->mu, &h->cv);
	int e = pthread_create(&h->th, NULL, hub_main, h);
	if (e != 0) {
		pthread_cond_destroy(&h->cv);
		pthread_mutex_destroy(&h->mu);
		free(h);
		return -e;
	}
	*out = h;
	return 0;
}

struct store *store_hub_stop(struct store_hub *h)
{
	pthread_mutex_lock(&h->mu);
	h->stop = 1;
	pthread_cond_signal(&h->cv);
	pthread_mutex_unlock(&h->mu);
	pthread_join(h->th, NULL);
	pthread_cond_destroy(&h->cv);
	pthread_mutex_destroy(&h->mu);
	struct store *w = h->w;
	free(h->m);
	free(h);
	return w;
}

void store_use_hub(struct store *st, struct store_hub *h)
{
	st->hub = h;
}

int store_writer_start(struct store *st)
{
	if (st->writer_on)
		return 0;
	lock_init(&st->mu, &st->cv);
	st->stop = st->back_full = 0;
	if (st->hub) {
		hub_join(st->hub, st);
		st->writer_on = 1;
		return 0;
	}
	int e = pthread_create(&st->writer, NULL, writer_main, st);
	if (e != 0) {
		pthread_cond_destroy(&st->cv);
		pthread_mutex_destroy(&st->mu);
		return -e;
	}
	st->writer_on = 1;
	return 0;
}

/* Ends the thread once it has tried to write what it holds. */
static void writer_stop(struct store *st)
{
	if (!st->writer_on)
		return;
	pthread_mutex_lock(&st->mu);
	st->stop = 1;
	pthread_cond_signal(&st->cv);
	if (st->hub)	/* no new round takes it (stop); wait out the one writing it */
		while (st->in_hub)
			pthread_cond_wait(&st->cv, &st->mu);
	pthread_mutex_unlock(&st->mu);
	if (st->hub)
		hub_leave(st->hub, st);
	else
		pthread_join(st->writer, NULL);
	pthread_cond_destroy(&st->cv);
	pthread_mutex_destroy(&st->mu);
	st->writer_on = 0;
}

/* Writes what waits, in order (back, then front), on the caller's thread. */
static int flush_sync(struct store *st)
{
	char msg[sizeof(st->werrmsg)];
	int e = 0;
	if (st->back_full) {
		if ((e = commit_batch(st, &st->back, 0, msg, sizeof(msg))) < 0)
			goto fail;
		batch_clear(&st->back);
		st->back_full = 0;
	}
	if ((e = commit_batch(st, &st->front, 0, msg, sizeof(msg))) < 0)
		goto fail;
	batch_clear(&st->front);
	st->werr = 0;
	return 0;
fail:
	st->werr = e;
	strlcpy_rsw(st->werrmsg, msg, sizeof(st->werrmsg));
	return e;
}

int store_flush(struct store *st, const struct run *r)
{
	progress_set(&st->front, r);
	st->front.run_id = r->id;
	if (!st->writer_on)
		return flush_sync(st);
	pthread_mutex_lock(&st->mu);
	int e = st->werr;
	if (!st->back_full) {
		struct batch t = st->back;
		st->back = st->front;
		st->front = t;
		st->back_full = 1;
		pthread_cond_signal(&st->cv);
	}
	pthread_mutex_unlock(&st->mu);
	if (st->hub)
		hub_wake(st->hub, st->hurry);
	st->hurry = 0;
	return e;
}

void store_hurry(struct store *st)
{
	st->hurry = 1;
}

int store_run_finish(struct store *st, const struct run *r)
{
	progress_set(&st->front, r);
	st->front.run_id = r->id;
	writer_stop(st);
	return flush_sync(st);
}

void store_write_release(struct store *st)
{
	writer_stop(st);
	batch_free(&st->front);
	batch_free(&st->back);
	sqlite3_finalize(st->ins_sample);
	sqlite3_finalize(st->ins_counter);
	sqlite3_finalize(st->ins_gpu);
	sqlite3_finalize(st->ins_proc);
	sqlite3_finalize(st->ins_event);
	sqlite3_finalize(st->ins_kill);
	sqlite3_finalize(st->ins_mark);
	sqlite3_finalize(st->upd_stage);
	sqlite3_finalize(st->upd_progress);
}

int store_put_processes(struct store *st, int64_t run_id, const struct proc_summary *p, size_t n)
{
	sqlite3_stmt *s;
	int e = 0;
	if (!n)
		return 0;
	if (sqlite3_exec(st->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		return -EBUSY;
	if (prepare_columns(st, &store_process_table, &s) < 0) {
		exec_sql(st->db, "ROLLBACK");
		return -EIO;
	}
	for (size_t i = 0; i < n && e == 0; i++, p++) {
		sqlite3_reset(s);
		sqlite3_bind_int64(s, 1, run_id);
		columns_bind(s, 2, &store_process_table, 0, p);
		if (sqlite3_step(s) != SQLITE_DONE)
			e = -EIO;
	}
	sqlite3_finalize(s);
	if (e < 0 || exec_sql(st->db, "COMMIT") < 0) {
		exec_sql(st->db, "ROLLBACK");
		return e < 0 ? e : -EIO;
	}
	return 0;
}


static const char *const stack_moments[STACK_MOMENTS] = { "peak", "end", "gpu" };

static int put_stack_list(sqlite3_stmt *ins_stack, sqlite3_stmt *ins_bytes,
			  int64_t run_id, const char *at, const struct stored_stack *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		sqlite3_reset(ins_stack);
		sqlite3_bind_int64(ins_stack, 1, run_id);
		sqlite3_bind_int64(ins_stack, 2, v[i].id);
		sqlite3_bind_text(ins_stack, 3, v[i].frames ? v[i].frames : "", -1, SQLITE_STATIC);
		sqlite3_reset(ins_bytes);
		sqlite3_bind_int64(ins_bytes, 1, run_id);
		sqlite3_bind_text(ins_bytes, 2, at, -1, SQLITE_STATIC);
		sqlite3_bind_int64(ins_bytes, 3, v[i].id);
		sqlite3_bind_int64(ins_bytes, 4, v[i].bytes);
		sqlite3_bind_int64(ins_bytes, 5, (int64_t)v[i].blocks);
		if (sqlite3_step(ins_stack) != SQLITE_DONE || sqlite3_step(ins_bytes) != SQLITE_DONE)
			return -EIO;
	}
	return 0;
}

int store_put_stacks(struct store *st, int64_t run_id, const struct stored_moment *at)
{
	sqlite3_stmt *a = NULL, *b = NULL;
	if (sqlite3_exec(st->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		return -EBUSY;
	int e = prepare(st, "INSERT OR IGNORE INTO stack (run_id, id, frames) VALUES (?, ?, ?)",
			&a);
	if (e == 0)
		e = prepare(st, "INSERT OR REPLACE INTO stack_bytes (run_id, at, stack_id, bytes,"
			    " blocks) VALUES (?, ?, ?, ?, ?)", &b);
	for (int m = 0; m < STACK_MOMENTS && e == 0; m++)
		e = put_stack_list(a, b, run_id, stack_moments[m], at[m].v, at[m].n);
	sqlite3_finalize(a);
	sqlite3_finalize(b);
	if (e < 0 || exec_sql(st->db, "COMMIT") < 0) {
		rollback(st);
		return e < 0 ? e : -EIO;
	}
	return 0;
}
