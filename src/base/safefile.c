/* Safe paths and safe output files: see safefile.h. */
#include "base/safefile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "base/util.h"

/* One step of a walk: the file at p (st from lstat). last: p is the directory itself. */
static int check_step(const char *p, const struct stat *st, int last, char *why, size_t n)
{
	uid_t me = geteuid();
	struct statvfs sv;

	if (S_ISLNK(st->st_mode)) {
		if (st->st_uid == 0 || st->st_uid == me)
			return 0;
		snprintf(why, n, "%s is a symbolic link made by another user (uid %u), who "
			 "decides where it leads: remove it, or give a path without it", p,
			 (unsigned)st->st_uid);
		return -EPERM;
	}
	if (!S_ISDIR(st->st_mode)) {
		snprintf(why, n, "%s is not a directory", p);
		return -ENOTDIR;
	}
	if (st->st_uid != 0 && st->st_uid != me) {
		snprintf(why, n, "%s belongs to another user (uid %u), who could replace what it "
			 "holds: use a directory of your own", p, (unsigned)st->st_uid);
		return -EPERM;
	}
	/* Write bits on a read-only file system (a mounted snapshot) let nobody write. */
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) && (last || !(st->st_mode & S_ISVTX)) &&
	    !(statvfs(p, &sv) == 0 && (sv.f_flag & ST_RDONLY))) {
		/* a shared directory such as /tmp is not to be changed: say where to go */
		if (st->st_mode & S_ISVTX)
			snprintf(why, n, "%s can be written by %s, who could plant files beside the "
				 "database: use a directory of your own (e.g. mkdir -m 700 %s/mine)",
				 p, st->st_mode & S_IWOTH ? "every user" : "its group", p);
		else
			snprintf(why, n, "%s can be written by %s: make it writable by its owner "
				 "only (chmod go-w %s), or use another directory", p,
				 st->st_mode & S_IWOTH ? "every user" : "its group", p);
		return -EPERM;
	}
	return 0;
}

/* Checks "/", then each longer prefix of the absolute path abs, up to abs itself; abs
 * itself as the directory that will hold files when last_holds. */
static int walk(const char *abs, int last_holds, char *why, size_t n)
{
	char p[PATH_MAX];
	struct stat st;
	size_t len = strlen(abs);
	int rc;

	while (len > 1 && abs[len - 1] == '/')
		len--;
	if (len >= sizeof(p)) {
		snprintf(why, n, "%s: path too long", abs);
		return -ENAMETOOLONG;
	}
	memcpy(p, abs, len);
	p[len] = '\0';
	for (size_t i = 1; i <= len; i++) {
		/* "/" alone first; then the prefixes that end a component */
		if (i > 1 && ((i < len && abs[i] != '/') || abs[i - 1] == '/'))
			continue;
		char c = p[i];
		p[i] = '\0';
		if (lstat(p, &st) < 0) {
			rc = -errno;
			snprintf(why, n, "cannot look at %s: %s", p, errstr(rc));
			return rc;
		}
		rc = check_step(p, &st, last_holds && i == len, why, n);
		p[i] = c;
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* safe_dir_check, and safe_dir_check_way when !holds. */
static int dir_check(const char *dir, int holds, char *why, size_t n)
{
	char abs[PATH_MAX], *real;
	int rc;

	if (dir[0] == '/') {
		if (strlcpy_rsw(abs, dir, sizeof(abs)) >= sizeof(abs)) {
			snprintf(why, n, "%s: path too long", dir);
			return -ENAMETOOLONG;
		}
	} else {
		if (!getcwd(abs, sizeof(abs))) {
			rc = -errno;
			snprintf(why, n, "cannot find the current directory: %s", errstr(rc));
			return rc;
		}
		size_t l = strlen(abs);
		if (snprintf(abs + l, sizeof(abs) - l, "/%s", dir) >= (int)(sizeof(abs) - l)) {
			snprintf(why, n, "%s: path too long", dir);
			return -ENAMETOOLONG;
		}
	}
	if ((rc = walk(abs, holds, why, n)) < 0)
		return rc;
	/* Where the symlinks (of root or the caller) lead. */
	if (!(real = realpath(dir, NULL))) {
		rc = -errno;
		snprintf(why, n, "cannot resolve %s: %s", dir, errstr(rc));
		return rc;
	}
	rc = strcmp(real, abs) == 0 ? 0 : walk(real, holds, why, n);
	free(real);
	return rc;
}

int safe_dir_check(const char *dir, char *why, size_t n)
{
	return dir_check(dir, 1, why, n);
}

int safe_dir_check_way(const char *dir, char *why, size_t n)
{
	char p[PATH_MAX];
	struct stat st;

	if (strlcpy_rsw(p, dir, sizeof(p)) >= sizeof(p)) {
		snprintf(why, n, "%s: path too long", dir);
		return -ENAMETOOLONG;
	}
	/* The deepest part that exists: what mkdir would make the rest in. */
	while (lstat(p, &st) < 0) {
		char *slash = strrchr(p, '/');
		if (errno != ENOENT || !slash)
			return dir_check(errno == ENOENT ? "." : p, 0, why, n);
		if (slash == p) {
			p[1] = '\0';
			break;
		}
		*slash = '\0';
	}
	return dir_check(p, 0, why, n);
}

int safe_file_check(const struct stat *st, const char *path, int root_ok, char *why,
		    size_t n)
{
	uid_t me = geteuid();

	if (!S_ISREG(st->st_mode)) {
		snprintf(why, n, "%s is not a regular file", path);
		return -EPERM;
	}
	if (st->st_uid != me && !(root_ok && st->st_uid == 0)) {
		snprintf(why, n, "%s belongs to another user (uid %u): refusing to use it; "
			 "give a file of your own", path, (unsigned)st->st_uid);
		return -EPERM;
	}
	if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(why, n, "%s can be written by %s: make it writable by its owner only "
			 "(chmod go-w %s)", path, st->st_mode & S_IWOTH ? "every user" : "its group",
			 path);
		return -EPERM;
	}
	return 0;
}

/* Fails safefile_open with err and a reason. */
static FILE *open_failed(struct safefile *sf, int err)
{
	free(sf->path);
	free(sf->tmp);
	sf->path = sf->tmp = NULL;
	errno = err;
	return NULL;
}

/* What kind of file st is, in words for a refusal. */
static const char *kind_words(const struct stat *st)
{
	return S_ISFIFO(st->st_mode) ? "a FIFO (named pipe)" : S_ISSOCK(st->st_mode) ? "a socket"
	       : S_ISBLK(st->st_mode) ? "a block device" : S_ISDIR(st->st_mode) ? "a directory"
	       : "not a regular file";
}

/* path names the caller's own standard output: "-", or /dev/stdout (a link to
 * /proc/self/fd/1, which leads to whatever descriptor 1 is: a pipe, a terminal). */
static int names_stdout(const char *path)
{
	return strcmp(path, "-") == 0 || strcmp(path, "/dev/stdout") == 0;
}

/* A character device of root's or the caller's (/dev/null, the caller's terminal),
 * written in place: opened without blocking (a FIFO put there meanwhile has no
 * reader: ENXIO) and checked on the descriptor itself, which must be the device that
 * lst (lstat, or stat through a link of root's or the caller's) described. */
static FILE *open_device(struct safefile *sf, const char *path, const struct stat *want,
			 int via_link)
{
	struct stat st;
	uid_t me = geteuid();
	int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK |
		      (via_link ? 0 : O_NOFOLLOW));
	if (fd < 0 || fstat(fd, &st) < 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		snprintf(sf->why, sizeof(sf->why), "%s", errstr(e));
		return open_failed(sf, e);
	}
	if (!S_ISCHR(st.st_mode) || st.st_rdev != want->st_rdev || st.st_ino != want->st_ino ||
	    (st.st_uid != 0 && st.st_uid != me)) {
		close(fd);
		snprintf(sf->why, sizeof(sf->why), "it was replaced while it was opened: "
			 "refusing to write into it");
		return open_failed(sf, EPERM);
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		(void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	if (!(sf->f = fdopen(fd, "w"))) {
		int e = errno;
		close(fd);
		snprintf(sf->why, sizeof(sf->why), "%s", errstr(e));
		return open_failed(sf, e);
	}
	sf->path = xstrdup(path);
	return sf->f;
}

FILE *safefile_open(struct safefile *sf, const char *path, mode_t mode)
{
	struct stat lst, st;
	int fd;

	memset(sf, 0, sizeof(*sf));
	if (names_stdout(path)) {
		sf->f = stdout;
		sf->is_stdout = 1;
		return sf->f;
	}
	int have = lstat(path, &lst) == 0;
	if (!have && errno != ENOENT) {
		int e = errno;
		snprintf(sf->why, sizeof(sf->why), "%s", errstr(e));
		return open_failed(sf, e);
	}
	if (have && S_ISLNK(lst.st_mode)) {
		if (lst.st_uid != 0 && lst.st_uid != geteuid()) {
			snprintf(sf->why, sizeof(sf->why), "it is a symbolic link made by another "
				 "user (uid %u): refusing to write through it; remove it or write "
				 "elsewhere", (unsigned)lst.st_uid);
			return open_failed(sf, EPERM);
		}
		if (stat(path, &st) < 0) {
			int e = errno;
			snprintf(sf->why, sizeof(sf->why), "it is a symbolic link that leads "
				 "nowhere (%s)", errstr(e));
			return open_failed(sf, e);
		}
	} else {
		st = lst;
	}
	if (have && S_ISDIR(st.st_mode)) {
		snprintf(sf->why, sizeof(sf->why), "it is a directory");
		return open_failed(sf, EISDIR);
	}
	if (have && !S_ISREG(st.st_mode)) {
		/* Another user's FIFO would read the output (and, without a reader, keep
		 * the writer waiting for ever); a socket or a block device is no place for
		 * it either. Only a character device of root's or the caller's is kept. */
		if (!S_ISCHR(st.st_mode)) {
			snprintf(sf->why, sizeof(sf->why), "it is %s, not a regular file: refusing "
				 "to write into it; give a regular file, or - for standard output",
				 kind_words(&st));
			return open_failed(sf, EPERM);
		}
		if (st.st_uid != 0 && st.st_uid != geteuid()) {
			snprintf(sf->why, sizeof(sf->why), "it is a device of another user (uid %u): "
				 "refusing to write into it; give a regular file, or - for standard "
				 "output", (unsigned)st.st_uid);
			return open_failed(sf, EPERM);
		}
		return open_device(sf, path, &st, S_ISLNK(lst.st_mode));
	}
	/* A regular file, or none yet: a new file beside it, renamed over it at the end. */
	if (have && S_ISLNK(lst.st_mode)) {
		if (!(sf->path = realpath(path, NULL))) {
			int e = errno;
			snprintf(sf->why, sizeof(sf->why), "cannot resolve it: %s", errstr(e));
			return open_failed(sf, e);
		}
	} else {
		sf->path = xstrdup(path);
	}
	const char *slash = strrchr(sf->path, '/');
	size_t dlen = slash ? (size_t)(slash - sf->path) + 1 : 0;
	const char *base = sf->path + dlen;
	size_t tl = dlen + strlen(base) + 16;
	sf->tmp = xmalloc(tl);
	snprintf(sf->tmp, tl, "%.*s.%s.XXXXXX", (int)dlen, sf->path, base);
	fd = mkostemp(sf->tmp, O_CLOEXEC);	/* O_CREAT|O_EXCL, 0600 */
	if (fd < 0) {
		int e = errno;
		snprintf(sf->why, sizeof(sf->why), "cannot create a file in its directory: %s",
			 errstr(e));
		return open_failed(sf, e);
	}
	mode_t mask = umask(0);
	umask(mask);
	if (fchmod(fd, mode & ~mask & 0777) < 0 || !(sf->f = fdopen(fd, "w"))) {
		int e = errno;
		close(fd);
		unlink(sf->tmp);
		snprintf(sf->why, sizeof(sf->why), "%s", errstr(e));
		return open_failed(sf, e);
	}
	return sf->f;
}

int safefile_close(struct safefile *sf, int keep)
{
	int rc = 0;

	if (!sf->f)
		return 0;
	if (sf->is_stdout) {
		errno = 0;
		if (fflush(sf->f) != 0 || ferror(sf->f))
			rc = -(errno ? errno : EIO);
		sf->f = NULL;
		if (rc)
			snprintf(sf->why, sizeof(sf->why), "%s", errstr(rc));
		return rc;
	}
	if (fflush(sf->f) != 0 || ferror(sf->f))
		rc = -(errno ? errno : EIO);
	if (sf->tmp && keep && rc == 0 && fsync(fileno(sf->f)) < 0)
		rc = -errno;
	if (fclose(sf->f) != 0 && rc == 0)
		rc = -errno;
	sf->f = NULL;
	if (sf->tmp) {
		if (keep && rc == 0 && rename(sf->tmp, sf->path) < 0)
			rc = -errno;
		if (!keep || rc)
			unlink(sf->tmp);
	}
	if (rc)
		snprintf(sf->why, sizeof(sf->why), "%s", errstr(rc));
	free(sf->path);
	free(sf->tmp);
	sf->path = sf->tmp = NULL;
	return rc;
}
