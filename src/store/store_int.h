/* Inside the store: the handle and the small SQL helpers that store.c (opening,
 * closing), read.c (the readers), schema.c, write.c (batches, the writer thread) and
 * retention.c share. Not for use outside src/store. */
#ifndef RSW_STORE_STORE_INT_H
#define RSW_STORE_STORE_INT_H

#include <errno.h>
#include <pthread.h>
#include <sqlite3.h>

#include "base/buf.h"
#include "base/parse.h"
#include "base/util.h"
#include "store/store.h"

/* 'RSW1' in PRAGMA application_id marks a file as ours. */
#define STORE_APPLICATION_ID 0x52535731

/* --- the schema (schema.c) --- */

/* The schema's history: step i brings PRAGMA user_version from i to i + 1;
 * store_schema_version steps in all. Exposed for the test that builds a database at
 * every old version. */
extern const char *const store_migrations[];
extern const int store_schema_version;
/* Checks that db is an rsswatch database of a schema this build can use, migrating an
 * older or empty one unless flags has STORE_READONLY. Returns 0 or -errno with a
 * reason in err: -EILSEQ (not ours, or corrupt), -EPROTONOSUPPORT (newer), -ENOENT
 * (empty and read-only), -ESTALE (older and read-only), -EIO. */
int store_schema_check(sqlite3 *db, unsigned flags, char *err, size_t errlen);
/* Whether the file at path may need its schema made or upgraded, from its header alone
 * (no SQLite connection: see STORE_SMALL). Never 0 for a file that does. */
int store_schema_may_need_migration(const char *path);

/* The WAL's bound, in frames (pages): SQLite's own automatic checkpoint size, about
 * 4.1 MB of WAL with 4 KiB pages. */
#define WAL_MAX_FRAMES 1000

/* The WAL hook set on every writer's connection (write.c): records the frame count and
 * checkpoints, passively, past WAL_MAX_FRAMES, as SQLite's automatic checkpoint did. */
int store_wal_hook(void *ctx, sqlite3 *db, const char *name, int frames);

/* The rows a recorder hands over, waiting for one transaction. Every row is a value
 * (strings are owned copies), so a batch can move to the writer thread whole. */
struct counter_row {
	int64_t elapsed_ns;
	char name[COUNTER_NAME_SIZE];
	long long value;
};
struct gpu_row {
	int64_t elapsed_ns;
	struct gpu_figures g;
};
struct proc_row {
	int64_t elapsed_ns;
	struct proc_figures p;
};
struct event_row {
	int64_t t;
	char kind[24];
	pid_t pid;
	char *detail;
};
struct mark_row {
	int64_t t;
	char *label;
};
struct stage_row {		/* a stage's peak for its mark's row (known 0: NULL) */
	int64_t mark_id;
	uint64_t peak;
	int64_t at;
	int known;
};

struct batch {
	int64_t run_id;
	struct sample *samples;
	size_t nsamples, capsamples;
	struct counter_row *counters;
	size_t ncounters, capcounters;
	struct gpu_row *gpus;
	size_t ngpus, capgpus;
	struct proc_row *procs;
	size_t nprocs, capprocs;
	struct event_row *events;
	size_t nevents, capevents;
	struct mark_row *marks;
	size_t nmarks, capmarks;
	struct stage_row *stages;
	size_t nstages, capstages;
	struct oom_kill *kills;
	size_t nkills, capkills;
	struct run progress;	/* the run's state to write with the rows (deep copy) */
	int have_progress;
};

struct store {
	sqlite3 *db;
	char errbuf[256];	/* SQLite's message for a failure that a ROLLBACK cleared */
	/* The writer's statements, prepared at their first use and kept until
	 * store_write_release. */
	sqlite3_stmt *ins_sample, *ins_counter, *ins_gpu, *ins_proc;
	sqlite3_stmt *ins_event, *ins_kill, *ins_mark, *upd_stage, *upd_progress;
	/* Rows wait in front until a flush. Without the writer thread the flush writes them
	 * at once; with it, front and back swap and the thread writes back (write.c). */
	struct batch front, back;
	struct store_lost lost;		/* rows dropped or merged past the bounds */
	store_alive_fn alive;		/* store_set_alive(), or NULL */
	/* the writer thread: everything below is under mu */
	pthread_t writer;
	int writer_on;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int back_full;		/* back holds rows the thread has not written yet */
	int stop;		/* the thread is to write back once more and end */
	int werr;		/* the last write's result: 0 or -errno */
	char werrmsg[240];	/* its words */
	/* Frames in the WAL after this connection's last commit (the WAL hook's count,
	 * anyone's frames included). Past WAL_MAX_FRAMES the writer thread starts no
	 * transaction until a checkpoint can empty the WAL (write.c). */
	int wal_frames;
	/* A shared writer (store_use_hub): hub writes back while in_hub; hurry asks the
	 * next flush to be written at once. */
	struct store_hub *hub;
	int in_hub, hurry;
};

static inline int exec_sql(sqlite3 *db, const char *sql)
{
	return sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -EIO;
}

/* Keeps SQLite's words for store_errmsg() before a ROLLBACK clears them. */
static inline void keep_errmsg(struct store *st)
{
	if (sqlite3_errcode(st->db) != SQLITE_OK)
		strlcpy_rsw(st->errbuf, sqlite3_errmsg(st->db), sizeof(st->errbuf));
}

/* Ends a failed transaction, keeping SQLite's reason for store_errmsg(). */
static inline void rollback(struct store *st)
{
	keep_errmsg(st);
	exec_sql(st->db, "ROLLBACK");
}

static inline int prepare(struct store *st, const char *sql, sqlite3_stmt **out)
{
	return sqlite3_prepare_v2(st->db, sql, -1, out, NULL) == SQLITE_OK ? 0 : -EIO;
}

/* *slot, prepared from sql at its first use, reset for new bindings. */
static inline int prepare_kept(struct store *st, sqlite3_stmt **slot, const char *sql)
{
	if (!*slot && prepare(st, sql, slot) < 0)
		return -EIO;
	sqlite3_reset(*slot);
	return 0;
}

/* Steps a kept statement that returns no rows, and resets it for its next use. */
static inline int step_kept(sqlite3_stmt *s)
{
	int rc = sqlite3_step(s);
	sqlite3_reset(s);
	return rc == SQLITE_DONE ? 0 : (rc == SQLITE_BUSY ? -EBUSY : -EIO);
}

/* Steps a statement that returns no rows and finalizes it. */
static inline int step_done(sqlite3_stmt *s)
{
	int rc = sqlite3_step(s);
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : (rc == SQLITE_BUSY ? -EBUSY : -EIO);
}

static inline void bind_opt_i64(sqlite3_stmt *s, int i, int64_t v, int present)
{
	if (present)
		sqlite3_bind_int64(s, i, v);
	else
		sqlite3_bind_null(s, i);
}

static inline void bind_opt_f64(sqlite3_stmt *s, int i, double v, int present)
{
	if (present)
		sqlite3_bind_double(s, i, v);
	else
		sqlite3_bind_null(s, i);
}

/* The column tables (store/run.h) as SQL (columns.c). when selects a run's columns
 * by COL_AT_* (0: every column). The strings returned are freed with free(). */
/* "VERB INTO table (keys..., columns...) VALUES (?,...)" */
char *columns_insert_sql(const struct store_table *t, const char *verb, unsigned when);
/* "UPDATE table SET column = ?, ... WHERE key = ?": the key is the last parameter. */
char *columns_update_sql(const struct store_table *t, unsigned when, const char *key);
/* Appends "PREFIXa, PREFIXb, ..." (every column, in the table's order) to b. */
void columns_list(struct buf *b, const struct store_table *t, const char *prefix);
/* Binds row's columns to parameters first, first + 1, ...; returns the next index. */
int columns_bind(sqlite3_stmt *s, int first, const struct store_table *t, unsigned when,
		 const void *row);
/* Reads every column of a SELECT of columns_list() from result column first into row
 * (zeroed by the caller; COL_TEXT fields come owned). */
void columns_load(sqlite3_stmt *s, int first, const struct store_table *t, void *row);

/* --- the writer (write.c), below the opening (store.c), which calls it and never the
 * other way round --- */

/* Ends the writer thread and frees what the batches and the writer hold, its
 * statements included (store_close, before it closes the connection). */
void store_write_release(struct store *st);
/* Starts a hub's thread writing through w, a store opened for it (store_hub_open).
 * Returns 0 or -errno; on failure w is the caller's still. */
int store_hub_start(struct store *w, struct store_hub **out);
/* Ends h's thread and frees h; returns the store it wrote through, for store_close
 * (store_hub_close). */
struct store *store_hub_stop(struct store_hub *h);

#endif
