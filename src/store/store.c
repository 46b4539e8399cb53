/* Opening the run database (the checks that keep another user from choosing what it is,
 * SQLite's handle on it, the schema checked or migrated by schema.c, in a child process for
 * STORE_SMALL) and closing it, a hub's connection too. The readers are read.c's, the
 * writes write.c's: this file calls write.c (store_write_release, the hub's thread, the
 * WAL hook) and never the other way round. */
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

int store_open_reader(struct store *st, struct store **out, char *err, size_t errlen)
{
	const char *path = sqlite3_db_filename(st->db, "main");
	if (!path || !*path) {
		snprintf(err, errlen, "the database has no file to open again");
		return -ENOENT;
	}
	return store_open(path, STORE_READONLY, out, err, errlen);
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
