/* Opening the run database (the checks that keep another user from choosing what it is,
 * SQLite's handle on it, the schema checked or migrated by schema.c, in a child process for
 * STORE_SMALL), closing it, and reading runs. */
#include "store/store.h"
#include "store/store_int.h"
#include "base/buf.h"
#include "base/safefile.h"
#include "base/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

static int on_readonly_fs(const char *path)
{
	struct statvfs sv;
	return statvfs(path, &sv) == 0 && (sv.f_flag & ST_RDONLY);
}

/* Internal: a read-only open that must not upgrade the schema (it just did), and one
 * that reads the file as immutable (no locks, no side files). */
#define STORE_NO_UPGRADE (1u << 8)
#define STORE_IMMUTABLE (1u << 9)

/* "file:PATH?immutable=1" with PATH's '%', '?' and '#' escaped, as SQLite's URIs ask. */
static char *immutable_uri(const char *path)
{
	struct buf b = { 0 };
	buf_puts(&b, "file:");
	for (const char *p = path; *p; p++) {
		if (*p == '%' || *p == '?' || *p == '#')
			buf_printf(&b, "%%%02X", (unsigned char)*p);
		else
			buf_putc(&b, *p);
	}
	buf_puts(&b, "?immutable=1");
	return b.p;
}

/* Whether a reader that could not set up WAL's shared memory (it may not create the
 * -shm file beside a database it may only read) may read the file as immutable: when
 * no -wal file holds changes that are not in the database file yet. */
static int readable_without_wal(const char *path)
{
	char wal[PATH_MAX];
	struct stat sb;
	snprintf(wal, sizeof(wal), "%s-wal", path);
	return lstat(wal, &sb) < 0 ? errno == ENOENT : S_ISREG(sb.st_mode) && sb.st_size == 0;
}

/* The checks that keep another user from choosing what the database is: the file and
 * its directory belong to the caller (a reader may also read root's), nobody else can
 * write them, and no symlink leads to it. fd is the file, opened without following a
 * link. SQLite's side files (-wal, -shm, -journal), which it opens by name, must not
 * be links or another user's either. Returns 0 or -errno with a reason in err. */
static int check_file(const char *path, int dfd, const char *base, int fd, unsigned flags,
		      char *err, size_t errlen)
{
	static const char *const sides[] = { "-wal", "-shm", "-journal" };
	char why[400], side[PATH_MAX], sidename[NAME_MAX + 16];
	struct stat sb;
	int r = 0;

	if (fstat(fd, &sb) < 0) {
		r = -errno;
		snprintf(why, sizeof(why), "cannot look at %s: %s", path, errstr(r));
	}
	if (r == 0)
		r = safe_file_check(&sb, path, flags & STORE_READONLY, why, sizeof(why));
	if (r < 0) {
		snprintf(err, errlen, "refusing the database: %s", why);
		return r;
	}
	for (size_t i = 0; i < ARRAY_SIZE(sides); i++) {
		snprintf(side, sizeof(side), "%s%s", path, sides[i]);
		snprintf(sidename, sizeof(sidename), "%s%s", base, sides[i]);
		if (fstatat(dfd, sidename, &sb, AT_SYMLINK_NOFOLLOW) == 0 && (!S_ISREG(sb.st_mode) ||
		    (sb.st_uid != geteuid() && sb.st_uid != 0))) {
			snprintf(err, errlen, "refusing the database: %s is %s: remove it", side,
				 S_ISLNK(sb.st_mode) ? "a symbolic link" : !S_ISREG(sb.st_mode) ?
				 "not a regular file" : "another user's file");
			return -EPERM;
		}
	}
	return 0;
}

/* SQLite's page cache starts, by default, with a block for 20 pages that it writes
 * through at once (about 87 KiB of the recorder's 4 MiB); without it, pages are
 * allocated as they are used, up to the cache_size set below. Must come before
 * SQLite's first use; if something used it first, the default stays (no harm). */
static pthread_once_t sqlite_once = PTHREAD_ONCE_INIT;

static void sqlite_setup(void)
{
	(void)sqlite3_config(SQLITE_CONFIG_PAGECACHE, (void *)0, 0, 0);
}

/* The directory that holds the database at path, walked and checked component by
 * component (safe_dir_open), and made (each missing part 0700) when the file does not
 * exist yet and may be created. *dfd: its descriptor; base: the file's name in it.
 * A directory at path is refused. Returns 0 or -errno with err set. */
static int open_place(const char *path, unsigned flags, int *dfd, char *base, size_t bn,
		      char *err, size_t errlen)
{
	struct stat sb;
	char dir[PATH_MAX], why[400];
	int r, exists = lstat(path, &sb) == 0;
	if (exists && S_ISDIR(sb.st_mode)) {
		snprintf(err, errlen, "%s is a directory, not a database", path);
		return -EISDIR;
	}
	if (!exists && (errno != ENOENT || !(flags & STORE_CREATE))) {
		r = -errno;
		snprintf(err, errlen, r == -ENOENT ? "no runs recorded yet (no database at %s)"
						  : "cannot open %s: %s", path, errstr(r));
		return r;
	}
	if (strlcpy_rsw(dir, path, sizeof(dir)) >= sizeof(dir)) {
		snprintf(err, errlen, "%s: path too long", path);
		return -ENAMETOOLONG;
	}
	if (strlcpy_rsw(base, basename(dir), bn) >= bn) {
		snprintf(err, errlen, "%s: name too long", path);
		return -ENAMETOOLONG;
	}
	strlcpy_rsw(dir, path, sizeof(dir));
	r = safe_dir_open(dirname(dir), exists ? SAFE_DIR_OPEN : SAFE_DIR_MAKE, why, sizeof(why));
	if (r < 0) {
		snprintf(err, errlen, r == -EPERM ? "refusing the database: %s" : "%s", why);
		return r;
	}
	*dfd = r;
	if (!exists && faccessat(r, ".", W_OK, 0) < 0) {
		r = -errno;
		strlcpy_rsw(dir, path, sizeof(dir));
		snprintf(err, errlen, "cannot create database in %s: %s", dirname(dir), errstr(r));
		close(*dfd);
		return r;
	}
	return 0;
}

/* The name SQLite is given for the file base in the directory dfd: the directory's own
 * path as the kernel has it (/proc/self/fd), with no symlink left in it. SQLite
 * resolves every symlink of a name it is given (and refuses them all with
 * SQLITE_OPEN_NOFOLLOW), so it cannot be handed /proc/self/fd/N itself. Each directory
 * of that path was checked on its descriptor and is writable by nobody else (or is
 * sticky, and then its entry on the path is root's or the caller's): no other user can
 * change where it leads. open_sqlite checks afterwards that it led to our file. */
static char *sqlite_name(int dfd, const char *base, char *err, size_t errlen)
{
	char fdp[64], real[PATH_MAX];
	snprintf(fdp, sizeof(fdp), "/proc/self/fd/%d", dfd);
	ssize_t n = readlink(fdp, real, sizeof(real) - 1);
	if (n <= 0 || real[0] != '/') {
		snprintf(err, errlen, "cannot find the path of the database's directory (%s): %s",
			 fdp, n < 0 ? errstr(-errno) : "not a path");
		return NULL;
	}
	real[n] = '\0';
	struct buf b = { 0 };
	buf_printf(&b, "%s%s%s", real, n > 1 ? "/" : "", base);
	return b.p;
}

/* The file itself, base in the directory dfd, opened by us first (never through a
 * symlink; a new one made here, 0600). Returns the fd or -errno with err set. */
static int open_file(const char *path, int dfd, const char *base, unsigned flags, char *err,
		     size_t errlen)
{
	int r;
	/* O_PATH: closing it keeps the POSIX locks that this process's SQLite connections
	 * hold on the file (closing any other descriptor of it drops them all, and a
	 * reader could then take the last connection's part and delete the WAL that they
	 * still write: the agent opens one store per target). A file made here had no
	 * connection yet. */
	int fd = openat(dfd, base, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && (flags & STORE_CREATE)) {
		int made = openat(dfd, base, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
				  0600);
		if (made >= 0 || errno == EEXIST) {	/* EEXIST: made by another meanwhile */
			if (made >= 0)
				close(made);
			fd = openat(dfd, base, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		}
	}
	struct stat ls;
	if (fd >= 0 && fstat(fd, &ls) == 0 && S_ISLNK(ls.st_mode)) {
		close(fd);
		fd = -1;
		errno = ELOOP;
	}
	if (fd < 0) {
		r = -errno;
		if (r == -ELOOP)
			snprintf(err, errlen, "refusing the database: %s is a symbolic link: give "
				 "the path of the file itself", path);
		else
			snprintf(err, errlen, "cannot open %s: %s", path, errstr(r));
		return r == -ELOOP ? -EPERM : r;
	}
	if ((r = check_file(path, dfd, base, fd, flags, err, errlen)) < 0) {
		close(fd);
		return r;
	}
	return fd;
}

/* SQLite's handle on the file fd was opened on (closed here), through real (its name
 * from sqlite_name; path is the name the user gave, for messages), refused when real
 * no longer leads to it. *flags gains STORE_READONLY | STORE_IMMUTABLE for a
 * database on a read-only filesystem. Returns 0 or -errno with err set. */
static int open_sqlite(const char *path, const char *real, unsigned *flags, int fd,
		       sqlite3 **out, char *err, size_t errlen)
{
	sqlite3 *db = NULL;
	int oflags = (*flags & STORE_READONLY) ? SQLITE_OPEN_READONLY
					       : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
	const char *name = real;
	char *uri = NULL;
	if (!(*flags & STORE_CREATE) && on_readonly_fs(real)) {
		/* A database on a read-only filesystem (a mounted backup, a snapshot) cannot
		 * change under us, and SQLite could not make its WAL side files there: read it
		 * as immutable. */
		*flags |= STORE_READONLY | STORE_IMMUTABLE;
	}
	if (*flags & STORE_IMMUTABLE) {
		uri = immutable_uri(real);
		name = uri;
		oflags = SQLITE_OPEN_READONLY | SQLITE_OPEN_URI;
	}
	pthread_once(&sqlite_once, sqlite_setup);
	int orc = sqlite3_open_v2(name, &db, oflags | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW,
				  NULL);
	free(uri);
	struct stat now, then;
	if (orc == SQLITE_OK && (fstat(fd, &then) < 0 || lstat(real, &now) < 0 ||
				 now.st_dev != then.st_dev || now.st_ino != then.st_ino)) {
		/* Only someone who may write the directory could have done this. */
		snprintf(err, errlen, "refusing the database: %s was replaced while it was opened",
			 path);
		sqlite3_close(db);
		close(fd);
		return -EPERM;
	}
	close(fd);
	if (orc != SQLITE_OK) {
		snprintf(err, errlen, "cannot open database %s: %s", path,
			 db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		return -EIO;
	}
	sqlite3_busy_timeout(db, 10000);
	*out = db;
	return 0;
}

/* How a writer uses the database. */
static int writer_pragmas(sqlite3 *db, const char *path, char *err, size_t errlen)
{
	/* WAL: readers never block the recorder; NORMAL: a commit survives the recorder
	 * being killed (not a power cut, which costs the last commits). A recorder only
	 * appends (the path to the last leaf of each table and index): 64 KiB of page
	 * cache is enough, and it keeps the recorder's own footprint small beside the
	 * process it watches. */
	if (exec_sql(db, "PRAGMA journal_mode = WAL") < 0 ||
	    exec_sql(db, "PRAGMA synchronous = NORMAL") < 0 ||
	    /* a WAL that grew past its bound (write.c) is cut back to it when it restarts */
	    exec_sql(db, "PRAGMA journal_size_limit = 4194304") < 0 ||
	    exec_sql(db, "PRAGMA cache_size = -64") < 0) {
		snprintf(err, errlen, "cannot use database %s: %s", path, sqlite3_errmsg(db));
		return -EIO;
	}
	return 0;
}

/* Whether this process runs one thread only: /proc/self/task holds "." and ".." and
 * one entry per thread. Unknown counts as more. */
static int single_threaded(void)
{
	DIR *d = opendir("/proc/self/task");
	int n = 0;
	if (!d)
		return 0;
	while (readdir(d) && n < 4)
		n++;
	closedir(d);
	return n == 3;
}

/* STORE_SMALL: makes or upgrades the schema in a child process (see store.h). Any
 * failure is left to the caller's own open, which migrates and explains. Only while
 * the caller runs one thread: a fork copies the locks other threads hold (the
 * allocator's, SQLite's) as they are, and the child could wait on them for ever; with
 * another thread the schema is made here. The caller has no connection to the file
 * (the header is read through a descriptor of its own). */
static void migrate_apart(const char *path, const char *real, unsigned flags, int fd)
{
	if (!store_schema_may_need_migration(real) || !single_threaded())
		return;
	pid_t pid = fork();
	if (pid == 0) {
		char err[256];
		sqlite3 *db = NULL;
		int ok = open_sqlite(path, real, &flags, fd, &db, err, sizeof(err)) == 0 &&
			 store_schema_check(db, flags, err, sizeof(err)) == 0;
		sqlite3_close(db);
		_exit(ok ? 0 : 1);
	}
	if (pid > 0)
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
}

int store_open(const char *path, unsigned flags, struct store **out, char *err, size_t errlen)
{
	sqlite3 *db = NULL;
	char base[NAME_MAX + 1];
	int dfd;
	int r = open_place(path, flags, &dfd, base, sizeof(base), err, errlen);
	if (r < 0)
		return r;
	int fd = open_file(path, dfd, base, flags, err, errlen);
	char *real = fd >= 0 ? sqlite_name(dfd, base, err, errlen) : NULL;
	close(dfd);
	if (fd < 0)
		return fd;
	if (!real) {
		close(fd);
		return -EIO;
	}
	if ((flags & STORE_SMALL) && !(flags & STORE_READONLY))
		migrate_apart(path, real, flags, fd);
	r = open_sqlite(path, real, &flags, fd, &db, err, errlen);
	if (r < 0) {
		free(real);
		return r;
	}
	r = store_schema_check(db, flags, err, errlen);
	int ec = sqlite3_errcode(db);
	int no_wal = readable_without_wal(real);
	free(real);
	if (r == -EIO && (flags & STORE_READONLY) && !(flags & STORE_IMMUTABLE) &&
	    (ec == SQLITE_READONLY || ec == SQLITE_CANTOPEN) && no_wal) {
		/* A user who may read the database but not write beside it (a database
		 * shared read-only, with no recorder writing to it now). */
		sqlite3_close(db);
		return store_open(path, flags | STORE_IMMUTABLE, out, err, errlen);
	}
	if (r == -ESTALE && !(flags & STORE_NO_UPGRADE)) {
		/* A reader of a database of an older schema: upgrade it once (that needs
		 * writing), then read it as asked. */
		struct store *w;
		sqlite3_close(db);
		if ((r = store_open(path, flags & ~(STORE_READONLY | STORE_CREATE), &w, err,
				    errlen)) < 0)
			return r;
		store_close(w);
		return store_open(path, flags | STORE_NO_UPGRADE, out, err, errlen);
	}
	if (r == -ESTALE)
		r = -EPROTONOSUPPORT;
	if (r == 0 && !(flags & STORE_READONLY) && sqlite3_db_readonly(db, "main") != 1)
		r = writer_pragmas(db, path, err, errlen);
	if (r < 0) {
		sqlite3_close(db);
		return r;
	}
	struct store *st = xcalloc(1, sizeof(*st));
	st->db = db;
	if (!(flags & STORE_READONLY) && sqlite3_db_readonly(db, "main") != 1)
		sqlite3_wal_hook(db, store_wal_hook, st);
	*out = st;
	return 0;
}

void store_close(struct store *st)
{
	if (!st)
		return;
	store_write_release(st);	/* the writer's thread, batches and statements */
	sqlite3_close(st->db);
	free(st);
}

/* The hub's own connection is opened and closed here; its thread is write.c's. */
int store_hub_open(const char *path, struct store_hub **out, char *err, size_t errlen)
{
	struct store *w;
	int e = store_open(path, STORE_CREATE, &w, err, errlen);
	if (e < 0)
		return e;
	if ((e = store_hub_start(w, out)) < 0) {
		snprintf(err, errlen, "cannot start the database writer: %s", errstr(e));
		store_close(w);
	}
	return e;
}

void store_hub_close(struct store_hub *h)
{
	if (h)
		store_close(store_hub_stop(h));
}

const char *store_errmsg(struct store *st)
{
	/* the writer's words, while its last write failed (the connection is its own
	 * then); after a ROLLBACK SQLite's own message is "not an error": the one kept */
	if (st->werr && st->werrmsg[0])
		return st->werrmsg;
	if (sqlite3_errcode(st->db) == SQLITE_OK)
		return st->errbuf[0] ? st->errbuf : "unknown error";
	return sqlite3_errmsg(st->db);
}

/* --- reading --- */

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

static void load_mark(sqlite3_stmt *s, void *row)
{
	struct mark *m = row;
	m->t = sqlite3_column_int64(s, 0);
	m->label = col_text(s, 1);
}

static void release_mark(void *row)
{
	free(((struct mark *)row)->label);
}

static const struct row_kind mark_rows = { sizeof(struct mark), load_mark, release_mark };

int store_marks(struct store *st, int64_t id, struct mark **out, size_t *n)
{
	void *rows;
	int e = gather(st, "SELECT t, label FROM mark WHERE run_id = ? ORDER BY t, rowid", &id, 1,
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
					      "run_gc", "run" };
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
