/* The client library: the application side of the shared page described in page.h.
 *
 * Process-wide state is a handful of statics guarded by g_state. The first call moves
 * it NONE -> BUSY (one CAS winner creates the page) -> READY or FAILED; g_page and g_err
 * are written before the release store of the final state and read only after an
 * acquire load of it, so the hot path costs one load and one compare before its atomic.
 * A fork() child goes back to NONE and creates its own page on its first call.
 *
 * Nothing here may log, abort or allocate: errors are returned as -errno. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "rsswatch.h"
#include "page.h"

/* The page holds every name the API accepts, with its NUL (C89: no _Static_assert). */
typedef char rsw_name_fits_page[RSW_PAGE_NAME_SIZE == RSW_NAME_MAX + 1 ? 1 : -1];

#define ST_NONE 0
#define ST_BUSY 1
#define ST_READY 2
#define ST_FAILED 3

static int g_state;		/* ST_*, accessed with atomics */
static int g_err;		/* the setup error, when g_state is ST_FAILED */
static struct rsw_page *g_page;	/* the mapping, when g_state is ST_READY */
static pid_t g_pid;		/* the process that created g_path */
static char g_path[PATH_MAX];
static int g_handlers;		/* atexit and pthread_atfork handlers registered */

/* Waits, boundedly, for *p to leave value v: spins a little, then yields. The bound
 * matters: the thread we wait for may be the one a signal handler interrupted, and
 * then waiting longer would never end. Returns 0 or -EAGAIN. */
static int wait_while(int *p, int v)
{
	int i;

	for (i = 0; i < 20000; i++) {
		if (__atomic_load_n(p, __ATOMIC_ACQUIRE) != v)
			return 0;
		if (i >= 200)
			sched_yield();
	}
	return -EAGAIN;
}

/* Whether our parent is the recorder that launched us (page.h, RSW_PAGE_KEEP_ENV):
 * then it reads the page after we exit, and removes it. Without stdio or strtol's
 * locale: a plain decimal pid, nothing else. */
static int parent_keeps_page(void)
{
	const char *s = secure_getenv(RSW_PAGE_KEEP_ENV);
	long v = 0;

	if (!s || !*s)
		return 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > 4194304L)
			return 0;
		v = v * 10 + (*s - '0');
	}
	return v > 1 && (pid_t)v == getppid();
}

static void on_exit_unlink(void)
{
	if (__atomic_load_n(&g_state, __ATOMIC_ACQUIRE) == ST_READY && g_pid == getpid() &&
	    !parent_keeps_page())
		unlink(g_path);
}

/* In a fork() child: the inherited mapping is still shared with the parent's page, so
 * replace it with private memory at the same address (handles held by the child stay
 * valid but no longer touch the parent's figures), and set up afresh on the next call. */
static void on_fork_child(void)
{
	if (g_page)
		mmap(g_page, sizeof(*g_page), PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	g_page = NULL;
	g_err = 0;
	__atomic_store_n(&g_state, ST_NONE, __ATOMIC_RELEASE);
}

/* g_path = dir "/rsswatch." pid, without printf (not allowed to allocate). */
static int build_path(pid_t pid)
{
	const char *dir = secure_getenv(RSW_PAGE_DIR_ENV);
	char digits[16];
	size_t dlen, plen = sizeof(RSW_PAGE_PREFIX) - 1, n = 0;
	unsigned long v = (unsigned long)pid;

	if (!dir || !*dir)
		dir = RSW_PAGE_DIR_DEFAULT;
	do {
		digits[sizeof(digits) - 1 - n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v && n < sizeof(digits));
	dlen = strlen(dir);
	if (dlen + 1 + plen + n + 1 > sizeof(g_path))
		return -ENAMETOOLONG;
	memcpy(g_path, dir, dlen);
	g_path[dlen] = '/';
	memcpy(g_path + dlen + 1, RSW_PAGE_PREFIX, plen);
	memcpy(g_path + dlen + 1 + plen, digits + sizeof(digits) - n, n);
	g_path[dlen + 1 + plen + n] = '\0';
	return 0;
}

/* This process's start time in clock ticks after boot, field 22 of /proc/self/stat
 * (the same figure a recorder reads from /proc/PID/stat), or 0 when it cannot be read.
 * The name before it (field 2) may hold spaces and ')': the fields start after the
 * last ')'. Without stdio, which may allocate. */
static uint64_t own_start_ticks(void)
{
	char buf[1024];
	size_t len = 0;
	ssize_t r;
	uint64_t v = 0;
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC), field = 2, digits = 0;
	char *p, *end;

	if (fd < 0)
		return 0;
	while (len < sizeof(buf) - 1 && ((r = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0 ||
					 (r < 0 && errno == EINTR)))
		if (r > 0)
			len += (size_t)r;
	close(fd);
	end = buf + len;
	for (p = end; p > buf && p[-1] != ')'; p--)
		;
	if (p == buf)
		return 0;
	for (; p < end && field < 22; p++)
		if (*p == ' ')
			field++;
	for (; p < end && *p >= '0' && *p <= '9'; p++, digits++) {
		if (v > (UINT64_MAX - 9) / 10)
			return 0;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	return field == 22 && digits > 0 ? v : 0;
}

/* 64 bits no other user can guess: from getrandom(), else from clocks and addresses
 * (the fallback only has to be unknown in advance, since O_EXCL makes the name ours
 * once taken). */
static uint64_t unguessable(void)
{
	uint64_t v = 0;
	struct timespec ts;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) == (ssize_t)sizeof(v))
		return v;
	if (clock_gettime(CLOCK_MONOTONIC, &ts) == 0)
		v ^= (uint64_t)ts.tv_nsec * (((uint64_t)0x9e3779b9u << 32) | 0x7f4a7c15u) ^
		     (uint64_t)ts.tv_sec;
	if (clock_gettime(CLOCK_REALTIME, &ts) == 0)
		v ^= (uint64_t)ts.tv_nsec << 21;
	v ^= (uint64_t)(size_t)&ts ^ ((uint64_t)(size_t)&g_state << 17);
	return v;
}

/* Turns g_path "DIR/rsswatch.PID" (base bytes long) into a fallback name
 * "DIR/rsswatch.PID.XXXXXXXXXXXXXXXX" with 16 new random hex digits. */
static int fallback_path(size_t base)
{
	static const char digits[] = "0123456789abcdef";
	uint64_t v;
	int i;

	if (base + 1 + RSW_PAGE_FALLBACK_DIGITS + 1 > sizeof(g_path))
		return -ENAMETOOLONG;
	v = unguessable();
	g_path[base] = '.';
	for (i = 0; i < RSW_PAGE_FALLBACK_DIGITS; i++, v >>= 4)
		g_path[base + 1 + i] = digits[v & 15];
	g_path[base + 1 + RSW_PAGE_FALLBACK_DIGITS] = '\0';
	return 0;
}

/* The inode number of a pidfd of this process, where pidfds are pidfs files (Linux
 * 6.9+: one inode per process, never reused while the system runs), else 0. */
static uint64_t own_pid_ino(void)
{
	uint64_t ino = 0;
#ifdef SYS_pidfd_open
	struct statfs sf;
	struct stat st;
	long fd = syscall(SYS_pidfd_open, (long)getpid(), 0L);

	if (fd < 0)
		return 0;
	if (fstatfs((int)fd, &sf) == 0 && (unsigned long)sf.f_type == RSW_PIDFS_MAGIC &&
	    fstat((int)fd, &st) == 0)
		ino = (uint64_t)st.st_ino;
	close((int)fd);
#endif
	return ino;
}

/* Creates, sizes and maps this process's page; publishes the header with the magic
 * last. A file already at our name belongs to no live process but us (a process that
 * died without its exit handler, or this process before an exec): it is unlinked and
 * the name taken again with O_EXCL. O_NOFOLLOW and O_EXCL mean a symlink planted there
 * is removed, never followed.
 *
 * Squatting: in a sticky directory such as /dev/shm, a file, symlink or directory that
 * another user made at our name cannot be removed (any user can make one there for
 * pids to come). Then the page goes to a fallback name, the primary name followed by
 * a dot and 16 random hex digits, made with O_EXCL; a recorder that finds the primary
 * name taken by a file our user does not own looks for it there. */
static int create_page(void)
{
	struct rsw_page *pg;
	struct timespec ts;
	pid_t pid = getpid();
	int fd = -1, rc, attempt;
	size_t base;

	rc = build_path(pid);
	if (rc)
		return rc;
	base = strlen(g_path);
	for (attempt = 0;; attempt++) {
		fd = open(g_path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0)
			break;
		if (errno != EEXIST)
			return -errno;
		if (attempt >= 8)
			return -EEXIST;
		if (attempt == 0 && unlink(g_path) == 0)
			continue;	/* a stale page of ours: take the name again */
		if (attempt == 0 && errno == ENOENT)
			continue;	/* it went away meanwhile */
		/* Taken by what we may not remove: a fresh unguessable name each try. */
		rc = fallback_path(base);
		if (rc)
			return rc;
	}
	if (fchmod(fd, 0600) < 0 || ftruncate(fd, (off_t)sizeof(*pg)) < 0) {
		rc = -errno;
		goto fail;
	}
	pg = mmap(NULL, sizeof(*pg), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (pg == MAP_FAILED) {
		rc = -errno;
		goto fail;
	}
	close(fd);
	pg->hdr.version = RSW_PAGE_VERSION;
	pg->hdr.size = (uint32_t)sizeof(*pg);
	pg->hdr.pid = (int32_t)pid;
	pg->hdr.n_counters = RSW_PAGE_COUNTERS;
	pg->hdr.ring_slots = RSW_PAGE_RING_SLOTS;
	pg->hdr.name_size = RSW_PAGE_NAME_SIZE;
	pg->hdr.label_size = RSW_PAGE_LABEL_SIZE;
	if (clock_gettime(CLOCK_REALTIME, &ts) == 0)
		pg->hdr.created_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	if (clock_gettime(CLOCK_BOOTTIME, &ts) == 0)
		pg->hdr.created_boot_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	pg->hdr.start_ticks = own_start_ticks();
	pg->hdr.pid_ino = own_pid_ino();
	__atomic_store_n(&pg->hdr.magic, RSW_PAGE_MAGIC, __ATOMIC_RELEASE);
	g_page = pg;
	g_pid = pid;
	if (!g_handlers) {
		/* Failing to register only means the file outlives the process; the
		 * recorder removes stale pages. */
		atexit(on_exit_unlink);
		pthread_atfork(NULL, NULL, on_fork_child);
		g_handlers = 1;
	}
	return 0;
fail:
	close(fd);
	unlink(g_path);
	return rc;
}

static int setup_slow(void)
{
	int st = ST_NONE, rc;

	if (!__atomic_compare_exchange_n(&g_state, &st, ST_BUSY, 0, __ATOMIC_ACQUIRE,
			__ATOMIC_ACQUIRE)) {
		if (st == ST_BUSY) {
			rc = wait_while(&g_state, ST_BUSY);
			if (rc)
				return rc;
			st = __atomic_load_n(&g_state, __ATOMIC_ACQUIRE);
		}
		if (st == ST_READY)
			return 0;
		return st == ST_FAILED ? g_err : -EAGAIN;
	}
	rc = create_page();
	if (rc) {
		g_err = rc;
		__atomic_store_n(&g_state, ST_FAILED, __ATOMIC_RELEASE);
	} else {
		__atomic_store_n(&g_state, ST_READY, __ATOMIC_RELEASE);
	}
	return rc;
}

/* 0 when g_page may be used. The common case is one acquire load. */
static int ready(void)
{
	if (__atomic_load_n(&g_state, __ATOMIC_ACQUIRE) == ST_READY)
		return 0;
	return setup_slow();
}

int rsw_init(void)
{
	return ready();
}

/* Where the probe for a name of n bytes starts. It looks at the length and at most
 * eight bytes, so it costs the same for every name: names that collide here are told
 * apart by the probe's comparisons, and 64 slots need no better spread than this. */
static unsigned hash_name(const char *s, int n)
{
	unsigned h = (unsigned)n * 0x9e3779b1u;
	int i;

	for (i = 0; i < 4 && i < n; i++) {
		h = (h ^ (unsigned char)s[i]) * 0x01000193u;
		h = (h ^ (unsigned char)s[n - 1 - i]) * 0x01000193u;
	}
	return h ^ (h >> 16);
}

/* Finds the slot of name, claiming a free one when the name is new. Slots are claimed
 * in probe order and never freed, so a name is always found before the first free slot
 * of its probe sequence, and two threads creating one name meet at the same slot. */
static int find_slot(const char *name, uint32_t kind, struct rsw_page_counter **out)
{
	struct rsw_page_counter *c;
	unsigned h, i;
	uint32_t st;
	int n, rc;

	if (!name)
		return -EINVAL;
	n = rsw_page_name_len(name);
	if (n < 0)
		return -ENAMETOOLONG;
	if (n == 0)
		return -EINVAL;
	rc = ready();
	if (rc)
		return rc;
	h = hash_name(name, n);
	for (i = 0; i < RSW_PAGE_COUNTERS;) {
		c = &g_page->counters[(h + i) & (RSW_PAGE_COUNTERS - 1)];
		st = __atomic_load_n(&c->state, __ATOMIC_ACQUIRE);
		if (st == RSW_SLOT_FREE) {
			if (!__atomic_compare_exchange_n(&c->state, &st, RSW_SLOT_CLAIMING, 0,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
				continue;	/* someone claimed it: look again */
			memcpy(c->name, name, (size_t)n + 1);
			c->kind = kind;
			__atomic_store_n(&c->state, RSW_SLOT_READY, __ATOMIC_RELEASE);
			*out = c;
			return 0;
		}
		if (st == RSW_SLOT_CLAIMING) {
			rc = wait_while((int *)&c->state, RSW_SLOT_CLAIMING);
			if (rc)
				return rc;
			continue;
		}
		if (memcmp(c->name, name, (size_t)n + 1) == 0) {
			if (c->kind != kind)
				return -EEXIST;
			*out = c;
			return 0;
		}
		i++;
	}
	return -ENOSPC;
}

RSW_EXTENSION int rsw_counter_add(const char *name, long long delta)
{
	struct rsw_page_counter *c;
	int rc = find_slot(name, RSW_KIND_COUNTER, &c);

	if (rc)
		return rc;
	__atomic_fetch_add(&c->value, (uint64_t)delta, __ATOMIC_RELAXED);
	return 0;
}

RSW_EXTENSION int rsw_gauge_set(const char *name, long long value)
{
	struct rsw_page_counter *c;
	int rc = find_slot(name, RSW_KIND_GAUGE, &c);

	if (rc)
		return rc;
	__atomic_store_n(&c->value, (uint64_t)value, __ATOMIC_RELAXED);
	return 0;
}

rsw_counter_t *rsw_counter(const char *name)
{
	struct rsw_page_counter *c;

	return find_slot(name, RSW_KIND_COUNTER, &c) ? NULL : (rsw_counter_t *)c;
}

RSW_EXTENSION int rsw_counter_add_h(rsw_counter_t *counter, long long delta)
{
	if (!counter)
		return -EINVAL;
	__atomic_fetch_add(&((struct rsw_page_counter *)counter)->value, (uint64_t)delta,
		__ATOMIC_RELAXED);
	return 0;
}

rsw_gauge_t *rsw_gauge(const char *name)
{
	struct rsw_page_counter *c;

	return find_slot(name, RSW_KIND_GAUGE, &c) ? NULL : (rsw_gauge_t *)c;
}

RSW_EXTENSION int rsw_gauge_set_h(rsw_gauge_t *gauge, long long value)
{
	if (!gauge)
		return -EINVAL;
	__atomic_store_n(&((struct rsw_page_counter *)gauge)->value, (uint64_t)value,
		__ATOMIC_RELAXED);
	return 0;
}

int rsw_mark(const char *label)
{
	struct timespec ts;
	int rc;

	if (!label || !*label)
		return -EINVAL;
	rc = ready();
	if (rc)
		return rc;
	if (clock_gettime(CLOCK_REALTIME, &ts) < 0)
		return -errno;
	return rsw_page_put_mark(g_page, (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec,
		label, rsw_page_label_len(label));
}
