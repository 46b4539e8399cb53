/* Retention: thinning and emptying the series of finished runs, and giving the freed
 * pages back to the file system. The contract is in store.h; the rules for users in
 * docs/guide/storage.md ("Retention").
 *
 * How: a bucket is (elapsed_ns - first) / bucket_ns (integer division; first: the
 * run's first sample), the same key in every table, so a run's samples, counters, GPU
 * rows and set members are thinned on one grid. The samples are read once in key order
 * (no sort) and each bucket's row built in C from the table's own column list (PRAGMA
 * table_info), each column its maximum over the bucket except MemAvailable (its
 * minimum): a column added by a later migration is thinned by its maximum without a
 * change here. (The same in SQL, GROUP BY the bucket and a window for the time of its
 * highest RSS, sorted the run twice and took about six times as long.) The other tables
 * hold rows as they were read and keep the rows that matter (a bucket's highest and
 * last), not made-up ones.
 *
 * Not designed to be fast for a recorder's hot path: it runs after a recording, or by
 * hand. One run is one transaction, so a recorder writing to the same file waits for
 * one run at a time. */
#include "store/store.h"
#include "store/store_int.h"
#include "base/buf.h"
#include "base/util.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

struct gc {
	struct store *st;
	const struct store_gc_opts *o;
	store_gc_cb cb;
	void *ctx;
	struct store_gc_result *res;
	/* the sample table's columns other than run_id and elapsed_ns, read in one pass
	 * in key order and written back one row per bucket */
	char *read_sql;		/* SELECT elapsed_ns, cols FROM sample WHERE run_id ... */
	char *put_sql;		/* INSERT INTO sample (run_id, elapsed_ns, cols) VALUES ... */
	int ncols;
	int rss_col;		/* which of them is rss */
	unsigned char *use_min;	/* per column: 1 when a bucket keeps its minimum */
};

/* One value of a sample column (the table holds only numbers and NULLs). */
struct cell {
	int type;		/* SQLITE_NULL, SQLITE_INTEGER or SQLITE_FLOAT */
	int64_t i;
	double d;
};

int64_t store_gc_bucket_ns(int64_t span_ns, int64_t interval_ns, unsigned points)
{
	if (points <= 2 || span_ns <= 0)
		return interval_ns > 0 ? interval_ns : 1;
	/* the first and last samples are kept as they are: points - 2 buckets between */
	unsigned nb = points - 2;
	int64_t w = span_ns / nb + (span_ns % nb != 0);
	if (w < interval_ns)
		w = interval_ns;
	return w > 0 ? w : 1;
}

static int sql_err(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_OK: case SQLITE_ROW: case SQLITE_DONE: return 0;
	case SQLITE_BUSY: case SQLITE_LOCKED: return -EBUSY;
	case SQLITE_FULL: return -ENOSPC;
	default: return -EIO;
	}
}

static int exec_rc(struct store *st, const char *sql)
{
	int e = sql_err(sqlite3_exec(st->db, sql, NULL, NULL, NULL));
	if (e < 0)
		keep_errmsg(st);
	return e;
}

/* Runs sql with ?1..?4 bound to a..d (those the statement has); *changes: the rows it
 * changed (NULL: not wanted). */
static int run4(struct store *st, const char *sql, int64_t a, int64_t b, int64_t c, int64_t d,
		uint64_t *changes)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK) {
		keep_errmsg(st);
		return -EIO;
	}
	const int64_t v[4] = { a, b, c, d };
	int n = sqlite3_bind_parameter_count(s);
	for (int i = 0; i < n && i < 4; i++)
		sqlite3_bind_int64(s, i + 1, v[i]);
	int rc;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		;
	int e = sql_err(rc);
	if (e < 0)
		keep_errmsg(st);
	sqlite3_finalize(s);
	if (e == 0 && changes)
		*changes = (uint64_t)sqlite3_changes64(st->db);
	return e;
}

/* The first row of sql (?1 bound to a, where it has one): its columns 0..n-1 into out;
 * a NULL reads as dflt. -ENOENT: no row. */
static int query_row(struct store *st, const char *sql, int64_t a, int64_t *out, int n,
		     int64_t dflt)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK) {
		keep_errmsg(st);
		return -EIO;
	}
	if (sqlite3_bind_parameter_count(s) > 0)
		sqlite3_bind_int64(s, 1, a);
	int rc = sqlite3_step(s);
	int e = rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? -ENOENT : sql_err(rc);
	if (e == -EIO || e == -EBUSY || e == -ENOSPC)
		keep_errmsg(st);
	for (int i = 0; e == 0 && i < n; i++)
		out[i] = sqlite3_column_type(s, i) == SQLITE_NULL ? dflt : sqlite3_column_int64(s, i);
	sqlite3_finalize(s);
	return e;
}

static int pragma_i64(struct store *st, const char *sql, int64_t *out)
{
	return query_row(st, sql, 0, out, 1, 0);
}

/* The bytes of the pages in use (what the file would be after reclaiming). */
static int pages_used(struct store *st, uint64_t *out)
{
	int64_t count, freel, size;
	int e;
	if ((e = pragma_i64(st, "PRAGMA page_count", &count)) < 0 ||
	    (e = pragma_i64(st, "PRAGMA freelist_count", &freel)) < 0 ||
	    (e = pragma_i64(st, "PRAGMA page_size", &size)) < 0)
		return e;
	*out = (uint64_t)(count - freel) * (uint64_t)size;
	return 0;
}

/* The database file and its WAL as they are on disk. */
static uint64_t file_bytes(struct store *st)
{
	const char *path = sqlite3_db_filename(st->db, "main");
	char wal[PATH_MAX];
	struct stat sb;
	uint64_t n = 0;
	if (!path || !*path)
		return 0;
	if (stat(path, &sb) == 0)
		n += (uint64_t)sb.st_size;
	snprintf(wal, sizeof(wal), "%s-wal", path);
	if (stat(wal, &sb) == 0)
		n += (uint64_t)sb.st_size;
	return n;
}

/* The statements that thin the sample table, built from its columns. */
static int build_sample_sql(struct gc *g)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(g->st->db, "PRAGMA table_info(sample)", -1, &s, NULL) != SQLITE_OK) {
		keep_errmsg(g->st);
		return -EIO;
	}
	struct buf cols = { 0 }, marks = { 0 }, rd = { 0 }, put = { 0 };
	int rc, e = 0, cap = 0;
	g->rss_col = -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(s, 1);
		if (!name || strchr(name, '"')) {
			e = -EIO;
			break;
		}
		if (strcmp(name, "run_id") == 0 || strcmp(name, "elapsed_ns") == 0)
			continue;
		if (g->ncols == cap) {
			cap = cap ? cap * 2 : 32;
			g->use_min = xrealloc(g->use_min, (size_t)cap);
		}
		/* MemAvailable: the host at its worst in the bucket; the rest (sizes, thread
		 * counts, pressure, cumulative counters, where the maximum is the last
		 * figure) at their highest */
		g->use_min[g->ncols] = strcmp(name, "mem_available") == 0;
		if (strcmp(name, "rss") == 0)
			g->rss_col = g->ncols;
		g->ncols++;
		buf_printf(&cols, ", \"%s\"", name);
		buf_puts(&marks, ", ?");
	}
	sqlite3_finalize(s);
	if (e == 0 && rc != SQLITE_DONE)
		e = -EIO;
	if (e == 0 && g->rss_col < 0)
		e = -EIO;	/* not the table this code knows */
	if (e == 0) {
		buf_printf(&rd, "SELECT elapsed_ns%s FROM sample WHERE run_id = ?1 AND"
			   " elapsed_ns > ?2 AND elapsed_ns < ?3 ORDER BY elapsed_ns", buf_str(&cols));
		buf_printf(&put, "INSERT INTO sample (run_id, elapsed_ns%s) VALUES (?, ?%s)",
			   buf_str(&cols), buf_str(&marks));
		g->read_sql = rd.p;
		g->put_sql = put.p;
		rd.p = put.p = NULL;
	}
	buf_release(&cols);
	buf_release(&marks);
	buf_release(&rd);
	buf_release(&put);
	return e;
}

static int cell_load(sqlite3_stmt *s, int i, struct cell *c)
{
	c->type = sqlite3_column_type(s, i);
	if (c->type == SQLITE_INTEGER)
		c->i = sqlite3_column_int64(s, i);
	else if (c->type == SQLITE_FLOAT)
		c->d = sqlite3_column_double(s, i);
	else if (c->type != SQLITE_NULL)
		return -EIO;	/* text or blob: no column of sample holds one */
	return 0;
}

/* a < b, for two numbers */
static int cell_less(const struct cell *a, const struct cell *b)
{
	if (a->type == SQLITE_INTEGER && b->type == SQLITE_INTEGER)
		return a->i < b->i;
	double x = a->type == SQLITE_INTEGER ? (double)a->i : a->d;
	double y = b->type == SQLITE_INTEGER ? (double)b->i : b->d;
	return x < y;
}

/* Folds v into the bucket's acc: NULL never wins, otherwise the maximum (minimum). */
static void cell_fold(struct cell *acc, const struct cell *v, int use_min)
{
	if (v->type == SQLITE_NULL)
		return;
	if (acc->type == SQLITE_NULL || (use_min ? cell_less(v, acc) : cell_less(acc, v)))
		*acc = *v;
}

/* Thins the run's samples strictly between first and last to one row per bucket of
 * width w: one pass in key order (no sort), the buckets' rows kept in memory (at most
 * as many as the level allows), then the range deleted and the rows written.
 * *removed: the sample rows that went. */
static int thin_samples(struct gc *g, int64_t id, int64_t w, int64_t first, int64_t last,
			uint64_t *removed)
{
	struct store *st = g->st;
	const size_t nc = (size_t)g->ncols;
	sqlite3_stmt *s = NULL;
	struct cell *rows = NULL, *acc = NULL, v;
	int64_t *times = NULL, k = 0, rep_t = 0;
	size_t n = 0, cap = 0;
	int have = 0, rc, e = 0;
	if (sqlite3_prepare_v2(st->db, g->read_sql, -1, &s, NULL) != SQLITE_OK) {
		keep_errmsg(st);
		return -EIO;
	}
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_int64(s, 2, first);
	sqlite3_bind_int64(s, 3, last);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t t = sqlite3_column_int64(s, 0), kk = (t - first) / w;
		if (!have || kk != k) {
			/* a new bucket: its row starts as this sample */
			if (n == cap) {
				cap = cap ? cap * 2 : 256;
				rows = xrealloc(rows, cap * nc * sizeof(*rows));
				times = xrealloc(times, cap * sizeof(*times));
			}
			acc = &rows[n * nc];
			times[n++] = rep_t = t;
			k = kk;
			have = 1;
			for (size_t c = 0; c < nc && e == 0; c++)
				e = cell_load(s, (int)c + 1, &acc[c]);
		} else {
			for (size_t c = 0; c < nc && e == 0; c++) {
				if ((e = cell_load(s, (int)c + 1, &v)) < 0)
					break;
				/* the row stands at the time of the bucket's (first) highest RSS */
				if ((int)c == g->rss_col && v.type != SQLITE_NULL &&
				    (acc[c].type == SQLITE_NULL || cell_less(&acc[c], &v)))
					times[n - 1] = rep_t = t;
				cell_fold(&acc[c], &v, g->use_min[c]);
			}
		}
		if (e < 0)
			break;
	}
	if (e == 0 && rc != SQLITE_DONE) {
		e = sql_err(rc);
		keep_errmsg(st);
	}
	sqlite3_finalize(s);
	s = NULL;
	uint64_t gone = 0;
	if (e == 0)
		e = run4(st, "DELETE FROM sample WHERE run_id = ?1 AND elapsed_ns > ?2 AND"
			 " elapsed_ns < ?3", id, first, last, 0, &gone);
	if (e == 0 && sqlite3_prepare_v2(st->db, g->put_sql, -1, &s, NULL) != SQLITE_OK) {
		keep_errmsg(st);
		e = -EIO;
	}
	for (size_t r = 0; e == 0 && r < n; r++) {
		sqlite3_reset(s);
		sqlite3_bind_int64(s, 1, id);
		sqlite3_bind_int64(s, 2, times[r]);
		for (size_t c = 0; c < nc; c++) {
			const struct cell *x = &rows[r * nc + c];
			if (x->type == SQLITE_INTEGER)
				sqlite3_bind_int64(s, (int)c + 3, x->i);
			else if (x->type == SQLITE_FLOAT)
				sqlite3_bind_double(s, (int)c + 3, x->d);
			else
				sqlite3_bind_null(s, (int)c + 3);
		}
		if ((e = sql_err(sqlite3_step(s))) < 0)
			keep_errmsg(st);
	}
	sqlite3_finalize(s);
	free(rows);
	free(times);
	if (e == 0)
		*removed = gone - n;
	return e;
}

/* The other tables of rows over time, thinned on the same grid (?1 run, ?2 bucket
 * width, ?3 and ?4 the first and last samples, outside which nothing is removed): the
 * keys of the rows to keep go into temp.gc_keep (a: the series within the table, e:
 * the time), then the others are deleted. (A NOT IN over the window query itself was
 * evaluated row by row: a minute for 100,000 counter rows.) */
static const struct {
	const char *keep, *del;
} thin_others[] = {
	/* a counter keeps its value until its next row: each bucket's highest value and
	 * its last (the value carried into the next bucket) */
	{ "INSERT OR IGNORE INTO temp.gc_keep SELECT name, elapsed_ns FROM (SELECT name,"
	  " elapsed_ns, row_number() OVER (PARTITION BY name, (elapsed_ns - ?3) / ?2 ORDER BY"
	  " value DESC, elapsed_ns) AS hi, row_number() OVER (PARTITION BY name,"
	  " (elapsed_ns - ?3) / ?2 ORDER BY elapsed_ns DESC) AS last FROM counter WHERE"
	  " run_id = ?1) WHERE hi = 1 OR last = 1",
	  "DELETE FROM counter WHERE run_id = ?1 AND elapsed_ns > ?3 AND elapsed_ns < ?4 AND"
	  " NOT EXISTS (SELECT 1 FROM temp.gc_keep k WHERE k.a = counter.name AND"
	  " k.e = counter.elapsed_ns)" },
	/* a GPU: the reading with its highest figure for the target, and for the device */
	{ "INSERT OR IGNORE INTO temp.gc_keep SELECT device, elapsed_ns FROM (SELECT device,"
	  " elapsed_ns, row_number() OVER (PARTITION BY device, (elapsed_ns - ?3) / ?2 ORDER BY"
	  " target_bytes DESC, elapsed_ns) AS hi_t, row_number() OVER (PARTITION BY device,"
	  " (elapsed_ns - ?3) / ?2 ORDER BY used_bytes DESC, elapsed_ns) AS hi_u FROM gpu"
	  " WHERE run_id = ?1) WHERE hi_t = 1 OR hi_u = 1",
	  "DELETE FROM gpu WHERE run_id = ?1 AND elapsed_ns > ?3 AND elapsed_ns < ?4 AND"
	  " NOT EXISTS (SELECT 1 FROM temp.gc_keep k WHERE k.a = gpu.device AND"
	  " k.e = gpu.elapsed_ns)" },
	/* a member of a set: its highest and last rows in each bucket, its first row and
	 * the rows where it left the set or came back (a row holds until the next one) */
	{ "INSERT OR IGNORE INTO temp.gc_keep SELECT pid, elapsed_ns FROM (SELECT pid,"
	  " elapsed_ns, row_number() OVER (PARTITION BY pid, (elapsed_ns - ?3) / ?2 ORDER BY"
	  " rss DESC, elapsed_ns) AS hi, row_number() OVER (PARTITION BY pid,"
	  " (elapsed_ns - ?3) / ?2 ORDER BY elapsed_ns DESC) AS last, row_number() OVER"
	  " (PARTITION BY pid ORDER BY elapsed_ns) AS first, lag(gone) OVER (PARTITION BY pid"
	  " ORDER BY elapsed_ns) AS back FROM proc_sample WHERE run_id = ?1) WHERE hi = 1 OR"
	  " last = 1 OR first = 1 OR back = 1",
	  "DELETE FROM proc_sample WHERE run_id = ?1 AND elapsed_ns > ?3 AND elapsed_ns < ?4"
	  " AND gone = 0 AND NOT EXISTS (SELECT 1 FROM temp.gc_keep k WHERE k.a ="
	  " proc_sample.pid AND k.e = proc_sample.elapsed_ns)" },
};

static const char *const empty_series[] = {
	"DELETE FROM sample WHERE run_id = ?1",
	"DELETE FROM counter WHERE run_id = ?1",
	"DELETE FROM gpu WHERE run_id = ?1",
	"DELETE FROM proc_sample WHERE run_id = ?1",
};

static int begin(struct gc *g)
{
	return g->o->dry_run ? 0 : exec_rc(g->st, "BEGIN IMMEDIATE");
}

static int end(struct gc *g, int e)
{
	if (g->o->dry_run)
		return e;
	if (e == 0)
		e = exec_rc(g->st, "COMMIT");
	if (e < 0)
		sqlite3_exec(g->st->db, "ROLLBACK", NULL, NULL, NULL);
	return e;
}

/* Records the level run id was brought to (the upsert keeps rows_before from the
 * first time). */
static int put_level(struct store *st, int64_t id, unsigned points, int64_t bucket_ns,
		     int64_t rows_before, int64_t now)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(st->db, "INSERT INTO run_gc (run_id, points, bucket_ns,"
			       " rows_before, t) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (run_id)"
			       " DO UPDATE SET points = excluded.points, bucket_ns ="
			       " excluded.bucket_ns, t = excluded.t", -1, &s, NULL) != SQLITE_OK) {
		keep_errmsg(st);
		return -EIO;
	}
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_int64(s, 2, points);
	sqlite3_bind_int64(s, 3, bucket_ns);
	sqlite3_bind_int64(s, 4, rows_before);
	sqlite3_bind_int64(s, 5, now);
	int e = sql_err(sqlite3_step(s));
	if (e < 0)
		keep_errmsg(st);
	sqlite3_finalize(s);
	return e;
}

/* Brings run r down to at most points sample rows (0: none), unless it is there already;
 * *done: whether anything changed. Inside the caller's transaction. */
static int reduce_run(struct gc *g, const struct run *r, unsigned points, struct store_gc_run *out,
		      int *done)
{
	struct store *st = g->st;
	int64_t lvl[2], span[3];
	int e;
	*done = 0;
	e = query_row(st, "SELECT points, rows_before FROM run_gc WHERE run_id = ?", r->id, lvl, 2, 0);
	if (e < 0 && e != -ENOENT)
		return e;
	int known = e == 0;
	if (known && (uint64_t)lvl[0] <= points)
		return 0;	/* as coarse already */
	if ((e = query_row(st, "SELECT count(*), min(elapsed_ns), max(elapsed_ns) FROM sample"
			   " WHERE run_id = ?", r->id, span, 3, 0)) < 0)
		return e;
	uint64_t rows = (uint64_t)span[0];
	if (points && rows <= (uint64_t)points)
		return 0;	/* few enough */
	memset(out, 0, sizeof(*out));
	out->id = r->id;
	out->points = points;
	out->rows_before = rows;
	uint64_t n = 0, removed = 0;
	if (points == 0) {
		for (size_t i = 0; i < ARRAY_SIZE(empty_series); i++) {
			if ((e = run4(st, empty_series[i], r->id, 0, 0, 0, &n)) < 0)
				return e;
			removed += n;
		}
		if (removed == 0)
			return 0;
	} else {
		int64_t w = store_gc_bucket_ns(span[2] - span[1], r->interval_ns, points);
		out->bucket_ns = w;
		if ((e = thin_samples(g, r->id, w, span[1], span[2], &removed)) < 0)
			return e;
		out->rows_after = rows - removed;
		/* e typed INTEGER: without it the lookup used only a, not (a, e) */
		if ((e = run4(st, "CREATE TEMP TABLE IF NOT EXISTS gc_keep (a, e INTEGER,"
			      " PRIMARY KEY (a, e)) WITHOUT ROWID", 0, 0, 0, 0, NULL)) < 0)
			return e;
		for (size_t i = 0; i < ARRAY_SIZE(thin_others); i++) {
			if ((e = run4(st, "DELETE FROM temp.gc_keep", 0, 0, 0, 0, NULL)) < 0 ||
			    (e = run4(st, thin_others[i].keep, r->id, w, span[1], span[2], NULL)) < 0 ||
			    (e = run4(st, thin_others[i].del, r->id, w, span[1], span[2], &n)) < 0)
				return e;
			removed += n;
		}
		if ((e = run4(st, "DROP TABLE temp.gc_keep", 0, 0, 0, 0, NULL)) < 0)
			return e;
	}
	out->rows_removed = removed;
	if ((e = put_level(st, r->id, points, out->bucket_ns, known ? lvl[1] : (int64_t)rows,
			   g->o->now_ns)) < 0)
		return e;
	*done = 1;
	return 0;
}


/* Brings run r to the level points in a transaction of its own, and counts it. */
static int apply(struct gc *g, const struct run *r, unsigned points)
{
	struct store_gc_run one;
	int done = 0;
	int e = begin(g);
	if (e == 0)
		e = reduce_run(g, r, points, &one, &done);
	if ((e = end(g, e)) < 0 || !done)
		return e;
	g->res->rows_removed += one.rows_removed;
	if (points)
		g->res->runs_thinned++;
	else
		g->res->runs_emptied++;
	if (g->cb)
		g->cb(g->ctx, &one);
	return 0;
}

/* Gives the free pages back to the file system and empties the WAL. VACUUM rewrites the
 * file (the new copy goes through the WAL: about the size of the pages in use, on the
 * database's file system) and turns on incremental auto-vacuum, so that later calls
 * only cut the free pages off the end. */
static int reclaim(struct gc *g)
{
	struct store *st = g->st;
	int64_t freel, av;
	uint64_t used;
	int e;
	if ((e = pragma_i64(st, "PRAGMA freelist_count", &freel)) < 0 ||
	    (e = pragma_i64(st, "PRAGMA auto_vacuum", &av)) < 0 ||
	    (e = pages_used(st, &used)) < 0)
		return e;
	if (freel > 0 && av == 2) {
		if ((e = exec_rc(st, "PRAGMA incremental_vacuum")) < 0)
			return e;
		g->res->reclaimed = 1;
	} else if (freel > 0) {
		const char *path = sqlite3_db_filename(st->db, "main");
		char dir[PATH_MAX];
		struct statvfs sv;
		strlcpy_rsw(dir, path ? path : ".", sizeof(dir));
		if (statvfs(dirname(dir), &sv) == 0) {
			uint64_t avail = (uint64_t)sv.f_bavail * sv.f_frsize;
			uint64_t need = used + used / 8 + (1u << 20);
			if (avail < need) {
				g->res->disk_free = avail;
				g->res->disk_needed = need;
				return -ENOSPC;
			}
		}
		if ((e = exec_rc(st, "PRAGMA auto_vacuum = INCREMENTAL")) < 0 ||
		    (e = exec_rc(st, "VACUUM")) < 0)
			return e;
		g->res->reclaimed = 2;
	}
	int64_t ck[3];
	if ((e = query_row(st, "PRAGMA wal_checkpoint(TRUNCATE)", 0, ck, 3, 0)) < 0 && e != -ENOENT)
		return e;
	g->res->checkpoint_busy = e == 0 && ck[0] != 0;
	return 0;
}

int store_gc(struct store *st, const struct store_gc_opts *o, store_gc_cb cb, void *ctx,
	     struct store_gc_result *res)
{
	static const unsigned levels[] = { STORE_GC_FINE, STORE_GC_COARSE, 0 };
	struct gc g = { .st = st, .o = o, .cb = cb, .ctx = ctx, .res = res };
	struct run *runs = NULL;
	size_t n = 0;
	uint64_t used = 0;
	memset(res, 0, sizeof(*res));
	res->bytes_before = file_bytes(st);
	st->errbuf[0] = '\0';
	int e = build_sample_sql(&g);
	if (e == 0)
		e = store_list_runs(st, 0, &runs, &n);
	if (e < 0)
		goto out;
	/* oldest first: store_list_runs gives the newest first */
	for (size_t i = 0; i < n / 2; i++) {
		struct run t = runs[i];
		runs[i] = runs[n - 1 - i];
		runs[n - 1 - i] = t;
	}
	res->runs_seen = n;
	for (size_t i = 0; i < n; i++)
		res->runs_running += strcmp(runs[i].outcome, OUTCOME_RUNNING) == 0;
	if (o->dry_run && (e = exec_rc(st, "BEGIN IMMEDIATE")) < 0)
		goto out;

	for (size_t i = 0; o->keep_ns >= 0 && i < n && e == 0; i++) {
		const struct run *r = &runs[i];
		int64_t ended = r->ended_at ? r->ended_at : r->last_at ? r->last_at : r->started_at;
		if (strcmp(r->outcome, OUTCOME_RUNNING) != 0 && o->now_ns - ended > o->keep_ns)
			e = apply(&g, r, STORE_GC_FINE);
	}
	for (size_t l = 0; o->max_bytes && l < ARRAY_SIZE(levels) && e == 0; l++) {
		for (size_t i = 0; i < n && e == 0; i++) {
			if ((e = pages_used(st, &used)) < 0 || used <= o->max_bytes)
				break;
			if (strcmp(runs[i].outcome, OUTCOME_RUNNING) != 0)
				e = apply(&g, &runs[i], levels[l]);
		}
		if (used <= o->max_bytes)
			break;
	}
	if (e == 0)
		e = pages_used(st, &used);
	if (e == 0) {
		res->bytes_used = used;
		res->over_bound = o->max_bytes && used > o->max_bytes;
	}
	if (o->dry_run) {
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
		res->bytes_after = used;
	} else {
		if (e == 0)
			e = reclaim(&g);
		res->bytes_after = file_bytes(st);
	}
out:
	if (e < 0 && !st->errbuf[0])
		keep_errmsg(st);
	store_free_runs(runs, n);
	free(g.read_sql);
	free(g.put_sql);
	free(g.use_min);
	return e;
}

int store_run_thinning(struct store *st, int64_t id, struct run_thinning *out)
{
	int64_t v[4];
	int e = query_row(st, "SELECT points, bucket_ns, rows_before, t FROM run_gc WHERE run_id = ?",
			  id, v, 4, 0);
	if (e == -ENOENT)
		return 0;
	if (e < 0)
		return e;
	out->points = v[0];
	out->bucket_ns = v[1];
	out->rows_before = v[2];
	out->at = v[3];
	return 1;
}
