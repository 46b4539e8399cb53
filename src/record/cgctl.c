#include "record/cgctl.h"
#include "base/clock.h"
#include "base/parse.h"
#include "base/sysroot.h"
#include "base/util.h"
#include "source/proc.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

/* Processes may fork while they are moved: a move of all of a cgroup's repeats until
 * it is empty, at most this many rounds (a fork bomb is not waited out). */
#define MOVE_ROUNDS 16
/* An exiting process keeps its cgroup busy for a moment after waitpid(): removal is
 * retried this often. */
#define DESTROY_RETRY_NS (5 * NS_PER_MS)
/* How long the removal of the run's cgroup waits for its last process to be gone (its
 * processes have ended: this is the kernel's lag, not theirs), and of a killed
 * recorder's cgroup after its processes were moved out. */
#define DESTROY_WAIT_MS 2000
#define STALE_DESTROY_WAIT_MS 500
/* Names tried for the run's cgroup ("rsswatch-PID", "rsswatch-PID-1", ...) when killed
 * recorders whose pid was ours left theirs behind. */
#define NAME_TRIES 100

static int cg_file_path(char *out, size_t n, const char *dir, const char *name)
{
	int w = snprintf(out, n, "%s/%s", dir, name);
	return w < 0 || (size_t)w >= n ? -ENAMETOOLONG : 0;
}

static int write_in(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX];
	int e = cg_file_path(path, sizeof(path), dir, name);
	if (e < 0)
		return e;
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t tl = strlen(text);
	ssize_t w;
	do
		w = write(fd, text, tl);
	while (w < 0 && errno == EINTR);
	e = w < 0 ? -errno : (size_t)w == tl ? 0 : -EIO;
	close(fd);
	return e;
}

static int read_in(const char *dir, const char *name, struct rfile *f)
{
	char path[PATH_MAX];
	int e = cg_file_path(path, sizeof(path), dir, name);
	if (e == 0)
		e = rfile_open_abs(f, path);
	if (e == 0)
		e = rfile_read(f);
	return e;
}

static int write_pid(const char *dir, pid_t pid)
{
	char text[24];
	snprintf(text, sizeof(text), "%d\n", (int)pid);
	return write_in(dir, "cgroup.procs", text);
}

#define LEAF_NAME "rsswatch-leaf"

/* Moves every process of dir into dir/LEAF_NAME. Processes may fork while they are
 * moved, so this repeats until dir is empty, a bounded number of times. */
static int move_into_leaf(const char *dir)
{
	char leaf[PATH_MAX];
	int e = cg_file_path(leaf, sizeof(leaf), dir, LEAF_NAME);
	if (e < 0)
		return e;
	if (mkdir(leaf, 0755) < 0 && errno != EEXIST)
		return -errno;
	for (int round = 0; round < MOVE_ROUNDS; round++) {
		pid_t *pids;
		size_t n;
		if ((e = cg_read_procs(dir, &pids, &n)) < 0)
			return e;
		for (size_t i = 0; i < n && e == 0; i++) {
			e = write_pid(leaf, pids[i]);
			if (e == -ESRCH)	/* exited meanwhile */
				e = 0;
		}
		free(pids);
		if (e < 0 || n == 0)
			return e;
	}
	return -EBUSY;
}

static int enable_memory_below(const char *dir, unsigned flags)
{
	struct rfile f = RFILE_INIT;
	int e = read_in(dir, "cgroup.controllers", &f);
	if (e == 0 && !cg_controllers_have_memory(f.buf, f.len))
		e = -EOPNOTSUPP;
	if (e == 0)
		e = read_in(dir, "cgroup.subtree_control", &f);
	bool on = e == 0 && cg_controllers_have_memory(f.buf, f.len);
	rfile_close(&f);
	if (e < 0 || on)
		return e;
	if (flags & CG_CREATE_AS_IS)
		return -EOPNOTSUPP;
	e = write_in(dir, "cgroup.subtree_control", "+memory");
	if (e == -EBUSY) {
		/* the "no internal processes" rule: dir holds processes of its own */
		if ((e = move_into_leaf(dir)) < 0)
			return e;
		e = write_in(dir, "cgroup.subtree_control", "+memory");
	}
	return e == -EINVAL || e == -ENOENT ? -EOPNOTSUPP : e;
}

int cgctl_child_create(const struct cg_loc *parent, const char *name, uint64_t limit,
		       unsigned flags, struct cg_loc *out)
{
	struct cg_loc c;
	char text[24];
	int e;
	if (!name[0] || strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return -EINVAL;
	if (parent->version != 1 && parent->version != 2)
		return -EINVAL;
	c.version = parent->version;
	if ((e = cg_file_path(c.dir, sizeof(c.dir), parent->dir, name)) < 0)
		return e;
	if (c.version == 2 && (e = enable_memory_below(parent->dir, flags)) < 0)
		return e;
	if (mkdir(c.dir, 0755) < 0)
		return -errno;
	if (limit == CG_UNLIMITED)
		snprintf(text, sizeof(text), c.version == 2 ? "max" : "-1");
	else
		snprintf(text, sizeof(text), "%llu", (unsigned long long)limit);
	if (c.version == 2) {
		e = write_in(c.dir, "memory.max", text);
		if (e == 0) {
			e = write_in(c.dir, "memory.swap.max", "0");
			if (e == -ENOENT)	/* no swap accounting */
				e = 0;
		}
	} else {
		e = write_in(c.dir, "memory.limit_in_bytes", text);
	}
	if (e < 0) {
		rmdir(c.dir);
		return e;
	}
	*out = c;
	return 0;
}

int cgctl_attach(const struct cg_loc *cg, pid_t pid)
{
	return write_pid(cg->dir, pid ? pid : getpid());
}

/* Moves every process of from into to, in rounds (they may fork meanwhile). Returns
 * how many moves succeeded. */
static size_t move_all(const char *from, const char *to)
{
	size_t moved = 0;
	for (int round = 0; round < MOVE_ROUNDS; round++) {
		pid_t *pids;
		size_t n, ok = 0;
		if (cg_read_procs(from, &pids, &n) < 0)
			break;
		for (size_t i = 0; i < n; i++)
			ok += write_pid(to, pids[i]) == 0;
		free(pids);
		moved += ok;
		if (n == 0 || ok == 0)
			break;
	}
	return moved;
}

size_t cgctl_evacuate(const struct cg_loc *parent, const char *dir, char *where)
{
	snprintf(where, PATH_MAX, "%s", parent->dir);
	if (parent->version == 2) {
		/* processes may stay in parent only while no controller is on below it */
		struct rfile f = RFILE_INIT;
		int e = read_in(parent->dir, "cgroup.subtree_control", &f);
		int busy = e == 0 && f.len > 0 && f.buf[0] != '\n';
		rfile_close(&f);
		if (busy && cg_file_path(where, PATH_MAX, parent->dir, LEAF_NAME) == 0 &&
		    mkdir(where, 0755) < 0 && errno != EEXIST)
			snprintf(where, PATH_MAX, "%s", parent->dir);
	}
	return move_all(dir, where);
}

int cgctl_leaf_undo(const struct cg_loc *parent)
{
	char leaf[PATH_MAX];
	int e;
	if (parent->version != 2)
		return 0;
	if ((e = cg_file_path(leaf, sizeof(leaf), parent->dir, LEAF_NAME)) < 0)
		return e;
	DIR *d = opendir(parent->dir);
	if (!d)
		return -errno;
	struct dirent *de;
	int others = 0, have_leaf = 0;
	while ((de = readdir(d))) {
		if (de->d_type != DT_DIR || strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (strcmp(de->d_name, LEAF_NAME) == 0)
			have_leaf = 1;
		else
			others++;
	}
	closedir(d);
	if (!have_leaf)
		return 0;
	if (others)
		return -EBUSY;
	if ((e = write_in(parent->dir, "cgroup.subtree_control", "-memory")) < 0)
		return e;
	move_all(leaf, parent->dir);
	return rmdir(leaf) == 0 || errno == ENOENT ? 0 : -errno;
}

int cgctl_child_destroy(const struct cg_loc *cg, int timeout_ms)
{
	int64_t deadline = mono_ns() + (int64_t)timeout_ms * NS_PER_MS;
	for (;;) {
		if (rmdir(cg->dir) == 0)
			return 0;
		int e = -errno;
		if (e != -EBUSY || mono_ns() >= deadline)
			return e;
		struct timespec ts = { 0, DESTROY_RETRY_NS };
		nanosleep(&ts, NULL);
	}
}

/* ---- The cgroup of a recording ----------------------------------------------------- */

static void note(const struct run_cgroup *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void note(const struct run_cgroup *c, const char *fmt, ...)
{
	char text[PATH_MAX * 2 + 128];
	va_list ap;
	if (!c->sink || !c->sink->note)
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	c->sink->note(c->sink->ctx, RECORDER_NOTE, text);
}

void run_cgroup_init(struct run_cgroup *c, const struct recorder_sink *sink)
{
	memset(c, 0, sizeof(*c));
	c->sink = sink;
	c->have_mount = cg_mount_read(&c->mount) == 0;
}

/* c->path from c->loc. */
static void set_path(struct run_cgroup *c)
{
	if (c->have_mount)
		cg_hier_path(&c->mount, &c->loc, c->path, sizeof(c->path));
	else
		strlcpy_rsw(c->path, c->loc.dir, sizeof(c->path));
}

/* The cgroups "rsswatch-PID" and "rsswatch-PID-N" in parent whose PID is no rsswatch
 * now were left by recorders killed before they could clean up (SIGKILL, a crash).
 * Processes still in one (the command, or what it started, outlived its recorder:
 * rsswatch does not kill it, see docs/guide/cgroups.md) are moved up to parent, as
 * run_cgroup_release() does, and keep running without the limit (on v2 into the
 * parent's leaf: see cgctl_evacuate()); then the cgroup is removed. The leaf stays for
 * this run's cgroup; run_cgroup_release() undoes it at the end. */
static void remove_stale(const struct run_cgroup *c)
{
	const struct cg_loc *parent = &c->parent;
	DIR *d = opendir(parent->dir);
	struct dirent *de;
	if (!d)
		return;
	while ((de = readdir(d))) {
		char *end;
		struct proc_stat ps;
		struct cg_loc stale = { .version = parent->version };
		if (strncmp(de->d_name, "rsswatch-", 9) != 0)
			continue;
		long pid = strtol(de->d_name + 9, &end, 10);
		if (end == de->d_name + 9 || (*end && *end != '-') || pid <= 0 || pid > INT32_MAX)
			continue;
		if (proc_read_stat((pid_t)pid, &ps) == 0 && strcmp(ps.comm, "rsswatch") == 0)
			continue;	/* alive (or a namesake): leave it */
		if (snprintf(stale.dir, sizeof(stale.dir), "%s/%s", parent->dir, de->d_name) >=
		    (int)sizeof(stale.dir) || cgctl_child_destroy(&stale, 0) != -EBUSY)
			continue;
		char where[PATH_MAX];
		size_t moved = cgctl_evacuate(parent, stale.dir, where);
		if (moved)
			note(c, "rsswatch: %zu process%s left in %s by a recorder that was killed "
			     "moved to %s", moved, moved == 1 ? "" : "es", stale.dir, where);
		cgctl_child_destroy(&stale, STALE_DESTROY_WAIT_MS);
	}
	closedir(d);
}

int run_cgroup_make(struct run_cgroup *c, uint64_t limit, enum run_cgroup_step *step)
{
	char name[64];
	int e;
	*step = RUN_CGROUP_FIND;
	if (!c->have_mount)
		return -ENOENT;
	if ((e = cg_find_in(&c->mount, 0, &c->parent)) < 0)
		return e;
	/* On v2, rsswatch may run in the leaf an earlier run made for the processes of its
	 * cgroup (cgctl_child_create): the run's cgroup goes beside that leaf, where memory
	 * is enabled already, not into a new leaf below it, and so on at every run. */
	char *slash = strrchr(c->parent.dir, '/');
	if (c->parent.version == 2 && slash && slash > c->parent.dir &&
	    strcmp(slash + 1, "rsswatch-leaf") == 0)
		*slash = '\0';
	remove_stale(c);
	*step = RUN_CGROUP_CREATE;
	for (int i = 0; i < NAME_TRIES; i++) {
		if (i)
			snprintf(name, sizeof(name), "rsswatch-%d-%d", (int)getpid(), i);
		else
			snprintf(name, sizeof(name), "rsswatch-%d", (int)getpid());
		if ((e = cgctl_child_create(&c->parent, name, limit ? limit : CG_UNLIMITED,
					    limit ? 0 : CG_CREATE_AS_IS, &c->loc)) != -EEXIST)
			break;
	}
	if (e < 0)
		return e;
	*step = RUN_CGROUP_READ;
	if ((e = cg_reader_open(&c->reader, c->loc.version, c->loc.dir, true)) < 0) {
		cgctl_child_destroy(&c->loc, 0);
		return e;
	}
	c->made = 1;
	c->open = 1;
	set_path(c);
	return 0;
}

void run_cgroup_watch(struct run_cgroup *c, pid_t pid)
{
	if (!c->have_mount || cg_find_in(&c->mount, pid, &c->loc) < 0 ||
	    cg_reader_open(&c->reader, c->loc.version, c->loc.dir, false) < 0)
		return;
	set_path(c);
	if (strcmp(c->path, "/") == 0) {
		cg_reader_close(&c->reader);
		return;
	}
	c->open = 1;
}

/* Whether arg has a ".." component: it could lead out of the cgroup hierarchy. */
static int has_dotdot(const char *arg)
{
	for (const char *p = arg; (p = strstr(p, "..")); p += 2)
		if ((p == arg || p[-1] == '/') && (p[2] == '\0' || p[2] == '/'))
			return 1;
	return 0;
}

int run_cgroup_open_named(struct run_cgroup *c, const char *arg)
{
	const struct cg_mount *m = &c->mount;
	int found = 0;
	if (has_dotdot(arg))
		return -EINVAL;
	int has_v1 = c->have_mount && m->has_v1, has_v2 = c->have_mount && m->has_v2;
	/* The v1 memory hierarchy first, then v2; a directory given in full is taken as
	 * it is. */
	for (int pass = 0; pass < 3 && !found; pass++) {
		const char *mnt = pass == 0 ? "" : pass == 1 ? m->v1_mnt : m->v2_mnt;
		int version = pass == 1 ? 1 : 2;
		if ((pass == 1 && !has_v1) || (pass == 2 && !has_v2))
			continue;
		if (pass == 0) {
			if (has_v1 && strncmp(arg, m->v1_mnt, strlen(m->v1_mnt)) == 0)
				version = 1;
			else if (!(has_v2 && strncmp(arg, m->v2_mnt, strlen(m->v2_mnt)) == 0))
				continue;
		}
		const char *sep = arg[0] == '/' ? "" : "/";
		if (snprintf(c->loc.dir, sizeof(c->loc.dir), "%s%s%s%s", sysroot(), mnt, sep, arg) >=
		    (int)sizeof(c->loc.dir))
			continue;
		size_t l = strlen(c->loc.dir);
		while (l > 1 && c->loc.dir[l - 1] == '/')
			c->loc.dir[--l] = '\0';
		c->loc.version = version;
		found = cg_reader_open(&c->reader, version, c->loc.dir, false) == 0;
	}
	if (!found)
		return -ENOENT;
	/* Only a directory on a cgroup file system is a cgroup. Under RSSWATCH_SYSROOT
	 * (a fixture tree for tests) the tree is plain files: the check is left out. */
	struct statfs fs;
	if (!sysroot()[0] && (statfs(c->loc.dir, &fs) < 0 ||
			      (fs.f_type != CGROUP_SUPER_MAGIC && fs.f_type != CGROUP2_SUPER_MAGIC))) {
		cg_reader_close(&c->reader);
		return -EXDEV;
	}
	c->open = 1;
	set_path(c);
	return 0;
}

int run_cgroup_release(struct run_cgroup *c)
{
	if (c->open)
		cg_reader_close(&c->reader);
	c->open = 0;
	if (!c->made)
		return 0;
	c->made = 0;
	int e = cgctl_child_destroy(&c->loc, DESTROY_WAIT_MS);
	if (e == -EBUSY) {
		char where[PATH_MAX];
		size_t n = cgctl_evacuate(&c->parent, c->loc.dir, where);
		if (n)
			note(c, "rsswatch: %zu process%s left in %s moved to %s", n,
			     n == 1 ? "" : "es", c->path, where);
		e = cgctl_child_destroy(&c->loc, DESTROY_WAIT_MS);
	}
	/* v2: the parent as it was, unless other recorders (or others) use it now */
	cgctl_leaf_undo(&c->parent);
	return e == -ENOENT ? 0 : e;
}

int run_cgroup_join(void *loc)
{
	return cgctl_attach(loc, 0);
}
