/* Reader of the client library's shared page. See client.h for the checks made on the
 * file and lib/page.h for the layout and the ring protocol. */
#include "source/client.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/parse.h"
#include "base/sysroot.h"
#include "source/proc.h"
#include "lib/page.h"

_Static_assert(COUNTER_NAME_SIZE == RSW_PAGE_NAME_SIZE, "a counter's name is kept as the page holds it");

#define STALL_NS NS_PER_S	/* an unfinished mark is given up after this long */

/* tail is the next ticket to deliver; every ticket below it has been delivered or
 * counted as lost exactly once. */
struct client_page {
	int fd;			/* the page, open read-only; never mapped */
	int squatted;		/* found under a fallback name: the pid's own was taken */
	int64_t created_boot_ns;	/* from its header */
	uint64_t tail;
	uint64_t drops_seen;	/* ring_dropped already used to skip tickets */
	uint64_t stall_ticket;	/* the ticket the last drain stopped at ... */
	int64_t stall_since;	/* ... and since when (CLOCK_MONOTONIC), 0: none */
	/* two copies of the counter table (see client_counters_parse) */
	unsigned char states[sizeof(((struct rsw_page *)0)->counters)];
	unsigned char table[sizeof(((struct rsw_page *)0)->counters)];
	/* the ring, read in three passes (see client_page_drain_marks) */
	unsigned char copy_a[sizeof(((struct rsw_page *)0)->ring)];
	unsigned char copy_b[sizeof(((struct rsw_page *)0)->ring)];
	uint64_t seq_a[RSW_PAGE_RING_SLOTS];
};

#define COUNTERS_OFF offsetof(struct rsw_page, counters)
#define RING_OFF offsetof(struct rsw_page, ring)

int client_page_dir_changed(struct client_dir_watch *w)
{
	const char *dir = secure_getenv(RSW_PAGE_DIR_ENV);
	struct stat st;
	struct timespec now;
	if (!dir || !*dir)
		dir = RSW_PAGE_DIR_DEFAULT;
	if (!w->dirfd_plus1) {
		int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			return 1;
		w->dirfd_plus1 = fd + 1;
	}
	if (fstat(w->dirfd_plus1 - 1, &st) < 0 || clock_gettime(CLOCK_REALTIME, &now) < 0)
		return 1;
	if (w->have && st.st_mtim.tv_sec == w->mtime.tv_sec &&
	    st.st_mtim.tv_nsec == w->mtime.tv_nsec && now.tv_sec - st.st_mtim.tv_sec >= 2)
		return 0;
	w->mtime = st.st_mtim;
	w->have = 1;
	return 1;
}

void client_dir_watch_close(struct client_dir_watch *w)
{
	if (w->dirfd_plus1)
		close(w->dirfd_plus1 - 1);
	w->dirfd_plus1 = 0;
}

static int page_path(pid_t pid, char *buf, size_t n)
{
	const char *dir = secure_getenv(RSW_PAGE_DIR_ENV);
	int w;

	if (!dir || !*dir)
		dir = RSW_PAGE_DIR_DEFAULT;
	w = snprintf(buf, n, "%s/" RSW_PAGE_PREFIX "%ld", dir, (long)pid);
	if (w < 0 || (size_t)w >= n)
		return -ENAMETOOLONG;
	return 0;
}

/* ---- Parsers ---------------------------------------------------------------------- */

int client_header_parse(const void *buf, size_t len, struct client_header *out)
{
	struct rsw_page_header h;

	if (len < sizeof(h))
		return -EPROTO;
	memcpy(&h, buf, sizeof(h));
	if (h.magic == 0)
		return -ENOENT;		/* its creator has not finished */
	if (h.magic != RSW_PAGE_MAGIC || h.version != RSW_PAGE_VERSION ||
	    h.size != sizeof(struct rsw_page) || h.n_counters != RSW_PAGE_COUNTERS ||
	    h.ring_slots != RSW_PAGE_RING_SLOTS || h.name_size != RSW_PAGE_NAME_SIZE ||
	    h.label_size != RSW_PAGE_LABEL_SIZE)
		return -EPROTO;
	out->pid = (pid_t)h.pid;
	out->created_ns = h.created_ns;
	out->created_boot_ns = h.created_boot_ns;
	out->start_ticks = h.start_ticks;
	out->pid_ino = h.pid_ino;
	out->ring_head = h.ring_head;
	out->ring_dropped = h.ring_dropped;
	return 0;
}

size_t client_counters_parse(const void *states, const void *table, size_t len,
			     struct client_counter *out, size_t max)
{
	const size_t sz = sizeof(struct rsw_page_counter);
	size_t n = 0;

	for (size_t i = 0; i < RSW_PAGE_COUNTERS && (i + 1) * sz <= len && n < max; i++) {
		struct rsw_page_counter c;
		uint32_t state;

		memcpy(&state, (const char *)states + i * sz + offsetof(struct rsw_page_counter, state),
		       sizeof(state));
		if (state != RSW_SLOT_READY)
			continue;
		memcpy(&c, (const char *)table + i * sz, sz);
		memcpy(out[n].name, c.name, sizeof(out[n].name));
		out[n].name[sizeof(out[n].name) - 1] = '\0';
		if (rsw_page_name_len(out[n].name) <= 0 ||
		    (c.kind != RSW_KIND_COUNTER && c.kind != RSW_KIND_GAUGE))
			continue;
		out[n].is_gauge = c.kind == RSW_KIND_GAUGE;
		out[n].value = (long long)c.value;
		n++;
	}
	return n;
}

int client_mark_parse(const void *slot, size_t len, uint64_t t, int64_t *ns, char *label)
{
	struct rsw_page_mark m;
	uint64_t want = 2 * t + 2;

	if (len < sizeof(m))
		return 0;
	memcpy(&m, slot, sizeof(m));
	if (m.seq > want)
		return -1;
	if (m.seq != want)
		return 0;
	*ns = m.realtime_ns;
	memcpy(label, m.label, RSW_PAGE_LABEL_SIZE);
	label[RSW_PAGE_LABEL_SIZE - 1] = '\0';
	return 1;
}

int client_header_is_of(const struct client_header *h, const struct client_ident *who,
			long ticks_per_s)
{
	if (h->pid != who->pid)
		return -ESTALE;
	if (h->pid_ino && who->pid_ino)
		return h->pid_ino == who->pid_ino ? 0 : -ESTALE;
	if (who->start_ticks == 0 || ticks_per_s <= 0)
		return 0;
	if (h->start_ticks != 0 && h->start_ticks != who->start_ticks)
		return -ESTALE;
	/* The start time is whole ticks, rounded down: a page made by the target itself
	 * is never older than it. */
	if (who->start_ticks > (uint64_t)INT64_MAX / NS_PER_S)
		return -ESTALE;
	int64_t start_ns = (int64_t)who->start_ticks * (NS_PER_S / ticks_per_s);
	return h->created_boot_ns >= start_ns ? 0 : -ESTALE;
}

int client_ident_read(pid_t pid, struct client_ident *out)
{
	struct proc_stat ps;
	struct statfs sf;
	struct stat st;
	int rc = proc_read_stat(pid, &ps);

	if (rc < 0)
		return rc == -ENOENT ? -ESRCH : rc;
	out->pid = pid;
	out->start_ticks = ps.starttime;
	out->pid_ino = 0;
	long fd = syscall(SYS_pidfd_open, (long)pid, 0L);
	if (fd >= 0) {
		if (fstatfs((int)fd, &sf) == 0 && (unsigned long)sf.f_type == RSW_PIDFS_MAGIC &&
		    fstat((int)fd, &st) == 0)
			out->pid_ino = (uint64_t)st.st_ino;
		close((int)fd);
	}
	return 0;
}

/* ---- Reading the file ------------------------------------------------------------ */

/* Copies n bytes at off; -EPROTO when the file is shorter now (its owner truncated it). */
static int read_at(int fd, void *buf, size_t n, size_t off)
{
	ssize_t r;

	do
		r = pread(fd, buf, n, (off_t)off);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	return (size_t)r == n ? 0 : -EPROTO;
}

static int read_header(int fd, struct client_header *h)
{
	unsigned char buf[sizeof(struct rsw_page_header)];
	int rc = read_at(fd, buf, sizeof(buf), 0);

	return rc ? rc : client_header_parse(buf, sizeof(buf), h);
}

/* Copies the slots of tickets first .. first+n-1 (n <= RSW_PAGE_RING_SLOTS), in ticket
 * order, into buf: one read, or two where the run wraps round the end of the ring. */
static int read_slots(int fd, uint64_t first, size_t n, unsigned char *buf)
{
	const size_t sz = sizeof(struct rsw_page_mark);
	size_t i = (size_t)(first & (RSW_PAGE_RING_SLOTS - 1));
	size_t n1 = n < RSW_PAGE_RING_SLOTS - i ? n : RSW_PAGE_RING_SLOTS - i;
	int rc = read_at(fd, buf, n1 * sz, RING_OFF + i * sz);

	if (rc == 0 && n > n1)
		rc = read_at(fd, buf + n1 * sz, (n - n1) * sz, RING_OFF);
	return rc;
}

static uint64_t slot_seq(const unsigned char *slot)
{
	uint64_t seq;

	memcpy(&seq, slot + offsetof(struct rsw_page_mark, seq), sizeof(seq));
	return seq;
}

/* 0, or -EPROTO once the owner has changed the file's size. */
static int check_size(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	return st.st_size == (off_t)sizeof(struct rsw_page) ? 0 : -EPROTO;
}

int client_page_open_fd(int fd, pid_t pid, uid_t uid, const struct client_ident *who,
			struct client_page **out)
{
	struct client_ident ident;
	struct client_header h;
	struct client_page *p;
	struct stat st;
	int rc;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_uid != uid || (st.st_mode & 07777) != 0600 ||
	    st.st_nlink != 1)
		return -EPERM;
	if (st.st_size != (off_t)sizeof(struct rsw_page))
		return st.st_size == 0 ? -ENOENT : -EPROTO;
	rc = read_header(fd, &h);
	if (rc)
		return rc;
	if (!who) {
		if ((rc = client_ident_read(pid, &ident)) < 0)
			return rc;
		who = &ident;
	}
	rc = client_header_is_of(&h, who, sysconf(_SC_CLK_TCK));
	if (rc)
		return rc;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->fd = fd;
	p->created_boot_ns = h.created_boot_ns;
	*out = p;
	return 0;
}

/* Whether name[0..len) is a fallback name "rsswatch.<pid>.<16 hex digits>" of pid. */
static int is_fallback_name_n(const char *name, size_t len, pid_t pid)
{
	char prefix[32];
	int n = snprintf(prefix, sizeof(prefix), RSW_PAGE_PREFIX "%ld.", (long)pid);

	if (n < 0 || (size_t)n >= sizeof(prefix) || len != (size_t)n + RSW_PAGE_FALLBACK_DIGITS ||
	    memcmp(name, prefix, (size_t)n) != 0)
		return 0;
	for (size_t k = (size_t)n; k < len; k++)
		if (!((name[k] >= '0' && name[k] <= '9') || (name[k] >= 'a' && name[k] <= 'f')))
			return 0;
	return 1;
}

static int is_fallback_name(const char *name, pid_t pid)
{
	return is_fallback_name_n(name, strlen(name), pid);
}

/* Hex digits in s[*i..len) up to the byte stop; moves *i past stop. 0 or -EINVAL. */
static int scan_hex(const char *s, size_t len, size_t *i, char stop, uint64_t *out)
{
	uint64_t v = 0;
	size_t k = *i;

	for (; k < len && s[k] != stop; k++) {
		int d = s[k] >= '0' && s[k] <= '9' ? s[k] - '0' :
			s[k] >= 'a' && s[k] <= 'f' ? s[k] - 'a' + 10 : -1;
		if (d < 0 || v > (UINT64_MAX >> 4))
			return -EINVAL;
		v = v << 4 | (uint64_t)d;
	}
	if (k == *i || k == len)
		return -EINVAL;
	*i = k + 1;
	*out = v;
	return 0;
}

int client_maps_line_parse(const char *line, size_t len, pid_t pid, struct client_map_page *out)
{
	uint64_t lo, hi, off, maj, min, ino;
	size_t i = 0, k, name;

	if (scan_hex(line, len, &i, '-', &lo) || scan_hex(line, len, &i, ' ', &hi))
		return 0;
	/* perms: "rw-s", shared as the library maps its page */
	if (len - i < 5 || line[i + 3] != 's' || line[i + 4] != ' ')
		return 0;
	i += 5;
	if (scan_hex(line, len, &i, ' ', &off) || scan_hex(line, len, &i, ':', &maj) ||
	    scan_hex(line, len, &i, ' ', &min) || maj > 0xfff || min > 0xfffff)
		return 0;
	for (k = i; k < len && line[k] >= '0' && line[k] <= '9'; k++)
		;
	if (k == i || k == len || line[k] != ' ' || parse_u64_n(line + i, k - i, &ino) != 0 ||
	    ino == 0)
		return 0;
	for (i = k; i < len && line[i] == ' '; i++)
		;
	if (i == len || line[i] != '/')
		return 0;	/* anonymous, [heap], [stack]: no file */
	for (name = k = i; k < len; k++)
		if (line[k] == '/')
			name = k + 1;
	if (!is_fallback_name_n(line + name, len - name, pid))
		return 0;	/* also " (deleted)": its name no longer leads to it */
	(void)lo;
	(void)hi;
	(void)off;
	out->ino = ino;
	out->dev_major = (unsigned)maj;
	out->dev_minor = (unsigned)min;
	memcpy(out->name, line + name, len - name);
	out->name[len - name] = '\0';
	return 1;
}

/* The page at path, when it is the file the target mapped (c: from its memory map).
 * Nothing is opened before fstatat() shows a regular file of uid that is that inode. */
static int open_candidate(const char *path, const struct client_map_page *c, pid_t pid, uid_t uid,
			  const struct client_ident *who, struct client_page **out)
{
	struct stat st, fst;
	int fd, rc;

	if (fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_uid != uid || (uint64_t)st.st_ino != c->ino ||
	    major(st.st_dev) != c->dev_major || minor(st.st_dev) != c->dev_minor)
		return -EPERM;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &fst) < 0 || fst.st_ino != st.st_ino || fst.st_dev != st.st_dev) {
		close(fd);
		return -EAGAIN;	/* replaced between the two */
	}
	rc = client_page_open_fd(fd, pid, uid, who, out);
	if (rc)
		close(fd);
	return rc;
}

/* The page pid made under a fallback name because its own was taken (lib/rsswatch.c).
 * It is not looked for in the directory, where any user can make as many files at
 * fallback names as it likes: the target keeps its page mapped, so its memory map
 * (/proc/PID/maps, readable by root and by the target's user) names it, with its
 * inode. At most CLIENT_MAPS_MAX bytes of the map are read and CLIENT_CANDIDATES_MAX
 * fallback names in it looked at (f->capped says when there was more); the newest page
 * that passes every check is taken. */
static int open_fallback(pid_t pid, uid_t uid, struct client_find *f, struct client_page **out)
{
	const char *dir = secure_getenv(RSW_PAGE_DIR_ENV);
	struct client_map_page cand[CLIENT_CANDIDATES_MAX];
	struct client_page *best = NULL, *p;
	struct client_ident who;
	char path[PATH_MAX];
	size_t len = 0, n = 0, at;
	ssize_t r = 0;
	char *buf;
	int fd, rc;

	if ((rc = client_ident_read(pid, &who)) < 0)
		return rc;
	if (!dir || !*dir)
		dir = RSW_PAGE_DIR_DEFAULT;
	if (sysroot_path(path, sizeof(path), "/proc/%ld/maps", (long)pid) < 0)
		return -ENAMETOOLONG;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	if (!(buf = malloc(CLIENT_MAPS_MAX))) {
		close(fd);
		return -ENOMEM;
	}
	while (len < CLIENT_MAPS_MAX &&
	       ((r = read(fd, buf + len, CLIENT_MAPS_MAX - len)) > 0 || (r < 0 && errno == EINTR)))
		if (r > 0)
			len += (size_t)r;
	if (len == CLIENT_MAPS_MAX) {
		char more;
		if (read(fd, &more, 1) == 1)
			f->capped = 1;
	}
	close(fd);
	for (at = 0; at < len;) {
		char *nl = memchr(buf + at, '\n', len - at);
		size_t end = nl ? (size_t)(nl - buf) : len;

		if (!nl && f->capped)
			break;		/* a line cut short by the cap */
		if (client_maps_line_parse(buf + at, end - at, pid, &cand[n]) == 1) {
			if (n == CLIENT_CANDIDATES_MAX) {
				f->capped = 1;
				break;
			}
			n++;
		}
		at = end + 1;
	}
	free(buf);
	for (size_t k = 0; k < n; k++) {
		int w = snprintf(path, sizeof(path), "%s/%s", dir, cand[k].name);
		if (w < 0 || (size_t)w >= sizeof(path) ||
		    open_candidate(path, &cand[k], pid, uid, &who, &p) != 0)
			continue;
		if (best && best->created_boot_ns >= p->created_boot_ns) {
			client_page_close(p);
		} else {
			client_page_close(best);
			best = p;
		}
	}
	if (!best)
		return -ENOENT;
	*out = best;
	return 0;
}

int client_pages_kept_for_me(void)
{
	char me[24];
	snprintf(me, sizeof(me), "%d", (int)getpid());
	return setenv(RSW_PAGE_KEEP_ENV, me, 1) < 0 ? -errno : 0;
}

int client_page_find(pid_t pid, uid_t uid, struct client_find *f, struct client_page **out)
{
	return client_page_find_of(pid, uid, NULL, f, out);
}

int client_page_find_of(pid_t pid, uid_t uid, const struct client_ident *who,
			struct client_find *f, struct client_page **out)
{
	struct client_find none;
	char path[PATH_MAX];
	struct stat st, fst;
	int fd, rc;

	if (!f)
		f = &none;
	memset(f, 0, sizeof(*f));
	if (pid <= 0)
		return -EINVAL;
	rc = page_path(pid, path, sizeof(path));
	if (rc)
		return rc;
	/* Looked at before it is opened: another user's file is never opened. */
	if (fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (S_ISREG(st.st_mode) && st.st_uid == uid) {
		fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd < 0)
			return errno == ELOOP || errno == ENXIO ? -ENOENT : -errno;
		if (fstat(fd, &fst) < 0 || fst.st_ino != st.st_ino || fst.st_dev != st.st_dev) {
			close(fd);
			return -ENOENT;	/* replaced meanwhile: look again later */
		}
		rc = client_page_open_fd(fd, pid, uid, who, out);
		if (rc)
			close(fd);
		return rc;
	}
	/* A symlink, a socket, any other kind of file than a regular one, or a file of
	 * another user: what the library never makes there. Someone took the name first
	 * (squatting), and the library made its page under a fallback name. */
	f->squatted = 1;
	f->squat_uid = st.st_uid;
	f->squat_type = st.st_mode & S_IFMT;
	rc = open_fallback(pid, uid, f, out);
	if (rc == -ESRCH)
		return rc;
	if (rc)
		return -EEXIST;
	(*out)->squatted = 1;
	return 0;
}

int client_page_open(pid_t pid, uid_t uid, struct client_page **out)
{
	return client_page_find(pid, uid, NULL, out);
}

int client_page_squatted(const struct client_page *p)
{
	return p->squatted;
}

void client_page_close(struct client_page *p)
{
	if (!p)
		return;
	close(p->fd);
	free(p);
}

/* The ring is read in three passes over the tickets between tail and head: their seqs
 * (copy A), then their contents (copy B), then their seqs again (copy A, reused). Seq
 * only grows while writers follow the protocol, so a ticket whose seq is complete in
 * both seq passes did not change while copy B was taken: the seqlock of a mapping,
 * done with reads, at three reads per drain whatever the number of marks. */
int client_page_drain_marks(struct client_page *p, client_mark_cb cb, void *ctx)
{
	struct client_header h;
	char label[RSW_PAGE_LABEL_SIZE];
	uint64_t head, lost = 0;
	size_t n, k;
	int rc;

	if ((rc = check_size(p->fd)) != 0 || (rc = read_header(p->fd, &h)) != 0)
		return rc == -ENOENT ? -EPROTO : rc;
	head = h.ring_head;
	if (head < p->tail) {
		/* Only a writer that does not follow the protocol moves head back. */
		p->tail = head;
		p->stall_since = 0;
		return 0;
	}
	if (head - p->tail > RSW_PAGE_RING_SLOTS) {
		lost += head - RSW_PAGE_RING_SLOTS - p->tail;
		p->tail = head - RSW_PAGE_RING_SLOTS;
	}
	n = (size_t)(head - p->tail);
	if (n == 0)
		return lost > INT32_MAX ? INT32_MAX : (int)lost;
	if ((rc = read_slots(p->fd, p->tail, n, p->copy_a)) != 0)
		return rc;
	for (k = 0; k < n; k++)
		p->seq_a[k] = slot_seq(p->copy_a + k * sizeof(struct rsw_page_mark));
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if ((rc = read_slots(p->fd, p->tail, n, p->copy_b)) != 0)
		return rc;
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if ((rc = read_slots(p->fd, p->tail, n, p->copy_a)) != 0)
		return rc;
	for (k = 0; k < n; k++) {
		uint64_t want = 2 * p->tail + 2, s = p->seq_a[k];
		int64_t ns = 0;

		if (s == want && slot_seq(p->copy_a + k * sizeof(struct rsw_page_mark)) == want &&
		    client_mark_parse(p->copy_b + k * sizeof(struct rsw_page_mark),
				      sizeof(struct rsw_page_mark), p->tail, &ns, label) > 0) {
			cb(ctx, (long long)ns, label);
		} else if (s >= want) {
			lost++;		/* a newer ticket took the slot, before or during the copy */
		} else if (s != 2 * p->tail + 1 && h.ring_dropped > p->drops_seen) {
			/* Not there, and its writer gave up (ring_dropped grew, and the
			 * slot is not this ticket's own write in progress): lost now. */
			p->drops_seen++;
			lost++;
		} else if (p->stall_since == 0 || p->stall_ticket != p->tail) {
			/* Not there yet: wait for it, to keep order, but not for ever. */
			p->stall_ticket = p->tail;
			p->stall_since = mono_ns();
			break;
		} else if (mono_ns() - p->stall_since > STALL_NS) {
			lost++;
		} else {
			break;
		}
		p->tail++;
		p->stall_since = 0;
	}
	return lost > INT32_MAX ? INT32_MAX : (int)lost;
}

size_t client_page_counters(struct client_page *p, struct client_counter *out, size_t max)
{
	/* The states first, then (after them in time) the names they vouch for. */
	if (check_size(p->fd) != 0 || read_at(p->fd, p->states, sizeof(p->states), COUNTERS_OFF) != 0)
		return 0;
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (read_at(p->fd, p->table, sizeof(p->table), COUNTERS_OFF) != 0)
		return 0;
	return client_counters_parse(p->states, p->table, sizeof(p->table), out, max);
}

int client_page_remove_stale(pid_t pid)
{
	const char *dir = secure_getenv(RSW_PAGE_DIR_ENV);
	struct stat st;
	char path[PATH_MAX];
	int rc, alive;
	DIR *d;

	if (pid <= 0)
		return -EINVAL;
	rc = page_path(pid, path, sizeof(path));
	if (rc)
		return rc;
	alive = kill(pid, 0) == 0 || errno == EPERM;
	if (lstat(path, &st) < 0)
		rc = -errno;
	else if (alive)
		return -EBUSY;
	else if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
		rc = -EPERM;
	else
		rc = unlink(path) < 0 ? -errno : 0;
	/* And the pages it made under fallback names, its own being taken. */
	if (!dir || !*dir)
		dir = RSW_PAGE_DIR_DEFAULT;
	if (!alive && (d = opendir(dir))) {
		struct dirent *de;

		while ((de = readdir(d)))
			if (is_fallback_name(de->d_name, pid) &&
			    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) &&
			    unlinkat(dirfd(d), de->d_name, 0) == 0 && rc == -ENOENT)
				rc = 0;
		closedir(d);
	}
	return rc;
}
