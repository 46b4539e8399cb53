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

/* One step of a walk: the directory fd (st from fstat of it), p its path for messages.
 * last: it is the directory that will hold the files. */
static int check_dir_fd(int fd, const char *p, const struct stat *st, int last, char *why,
			size_t n)
{
	uid_t me = geteuid();
	struct statvfs sv;

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
	    !(fstatvfs(fd, &sv) == 0 && (sv.f_flag & ST_RDONLY))) {
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

/* The path walked so far, for messages: at appends "/name", or goes back to "/". */
static void shown_add(char *shown, size_t n, const char *name)
{
	size_t l = strlen(shown);
	if (name[0] == '/') {
		strlcpy_rsw(shown, "/", n);
		return;
	}
	snprintf(shown + l, n - l, "%s%s", l && shown[l - 1] == '/' ? "" : "/", name);
}

/* "/" opened and checked as a directory on the way. */
static int open_root(char *shown, size_t sn, char *why, size_t n)
{
	struct stat st;
	int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc;
	strlcpy_rsw(shown, "/", sn);
	if (fd < 0 || fstat(fd, &st) < 0) {
		rc = -errno;
		if (fd >= 0)
			close(fd);
		snprintf(why, n, "cannot look at /: %s", errstr(rc));
		return rc;
	}
	if ((rc = check_dir_fd(fd, "/", &st, 0, why, n)) < 0) {
		close(fd);
		return rc;
	}
	return fd;
}

int safe_dir_open(const char *dir, enum safe_dir how, char *why, size_t n)
{
	/* todo: what is left to walk; a symlink's target goes before the rest of it */
	char todo[2 * PATH_MAX], shown[PATH_MAX], name[NAME_MAX + 1], target[PATH_MAX];
	struct stat st;
	int fd, nfd, rc, links = 0, made = 0;

	if (dir[0] == '/') {
		if (strlcpy_rsw(todo, dir, sizeof(todo)) >= PATH_MAX)
			goto too_long;
	} else {
		if (!getcwd(todo, PATH_MAX)) {
			rc = -errno;
			snprintf(why, n, "cannot find the current directory: %s", errstr(rc));
			return rc;
		}
		size_t l = strlen(todo);
		if (snprintf(todo + l, sizeof(todo) - l, "/%s", dir) >= PATH_MAX - (int)l)
			goto too_long;
	}
	if ((fd = open_root(shown, sizeof(shown), why, n)) < 0)
		return fd;
	char *rest = todo;
	for (;;) {
		while (*rest == '/')
			rest++;
		if (!*rest)
			break;
		size_t len = strcspn(rest, "/");
		if (len > NAME_MAX) {
			close(fd);
			goto too_long;
		}
		memcpy(name, rest, len);
		name[len] = '\0';
		if (strcmp(name, ".") == 0) {
			rest += len;
			continue;
		}
		nfd = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0 && errno == ENOENT && how == SAFE_DIR_WAY) {
			/* the deepest part that exists: what the rest would be made in */
			close(fd);
			return 0;
		}
		if (nfd < 0 && errno == ENOENT && how == SAFE_DIR_MAKE && made < 64) {
			/* made relative to the parent checked above; opened again below without
			 * following a link, so a symlink planted meanwhile is looked at, not
			 * followed (EEXIST: made by someone else first, looked at the same way) */
			if (mkdirat(fd, name, 0700) < 0 && errno != EEXIST) {
				rc = -errno;
				shown_add(shown, sizeof(shown), name);
				snprintf(why, n, "cannot create directory %s: %s", shown, errstr(rc));
				close(fd);
				return rc;
			}
			made++;
			continue;
		}
		if (nfd < 0 && (errno == ELOOP || errno == ENOTDIR) &&
		    fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT &&
		    how == SAFE_DIR_MAKE && made < 64) {
			made++;		/* a link removed meanwhile: look again */
			continue;
		}
		if (nfd < 0 && (errno == ELOOP || errno == ENOTDIR) &&
		    fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
			shown_add(shown, sizeof(shown), name);
			if (st.st_uid != 0 && st.st_uid != geteuid()) {
				snprintf(why, n, "%s is a symbolic link made by another user (uid %u), "
					 "who decides where it leads: remove it, or give a path "
					 "without it", shown, (unsigned)st.st_uid);
				close(fd);
				return -EPERM;
			}
			ssize_t tl = readlinkat(fd, name, target, sizeof(target));
			if (tl < 0 || (size_t)tl >= sizeof(target) || ++links > 40) {
				rc = tl < 0 ? -errno : (size_t)tl >= sizeof(target) ? -ENAMETOOLONG
									      : -ELOOP;
				snprintf(why, n, "cannot follow %s: %s", shown, errstr(rc));
				close(fd);
				return rc;
			}
			target[tl] = '\0';
			/* the rest after the link's target: todo = target + rest */
			rest += len;
			size_t rl = strlen(rest);
			if ((size_t)tl + rl + 2 > sizeof(todo)) {
				close(fd);
				goto too_long;
			}
			memmove(todo + tl + 1, rest, rl + 1);
			memcpy(todo, target, (size_t)tl);
			todo[tl] = '/';
			rest = todo;
			/* the message shows the directory the link is in, then its target */
			char *slash = strrchr(shown, '/');
			if (slash)
				slash[slash == shown ? 1 : 0] = '\0';
			if (target[0] == '/') {
				close(fd);
				if ((fd = open_root(shown, sizeof(shown), why, n)) < 0)
					return fd;
			}
			continue;
		}
		shown_add(shown, sizeof(shown), name);
		if (nfd < 0) {
			rc = -errno;
			if (rc == -ENOTDIR || rc == -ELOOP)
				snprintf(why, n, "%s is not a directory", shown);
			else
				snprintf(why, n, "cannot look at %s: %s", shown, errstr(rc));
			close(fd);
			return rc == -ELOOP ? -ENOTDIR : rc;
		}
		close(fd);
		fd = nfd;
		rest += len;
		if (fstat(fd, &st) < 0) {
			rc = -errno;
			snprintf(why, n, "cannot look at %s: %s", shown, errstr(rc));
			close(fd);
			return rc;
		}
		if ((rc = check_dir_fd(fd, shown, &st, 0, why, n)) < 0) {
			close(fd);
			return rc;
		}
	}
	/* the directory itself holds files: not writable by others even when sticky */
	if (how != SAFE_DIR_WAY) {
		if (fstat(fd, &st) < 0) {
			rc = -errno;
			snprintf(why, n, "cannot look at %s: %s", shown, errstr(rc));
			close(fd);
			return rc;
		}
		if ((rc = check_dir_fd(fd, shown, &st, 1, why, n)) < 0) {
			close(fd);
			return rc;
		}
	}
	if (how == SAFE_DIR_WAY) {
		close(fd);
		return 0;
	}
	return fd;
too_long:
	snprintf(why, n, "%s: path too long", dir);
	return -ENAMETOOLONG;
}

int safe_dir_check(const char *dir, char *why, size_t n)
{
	int fd = safe_dir_open(dir, SAFE_DIR_OPEN, why, n);
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

int safe_dir_check_way(const char *dir, char *why, size_t n)
{
	return safe_dir_open(dir, SAFE_DIR_WAY, why, n);
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
