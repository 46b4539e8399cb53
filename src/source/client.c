/* Reader of the client library's shared page. See client.h for the checks made on the
 * file and lib/page.h for the layout and the ring protocol. */
#include "source/client.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock.h"
#include "../../lib/page.h"

#define STALL_NS 1000000000LL	/* an unfinished mark is given up after this long */

/* tail is the next ticket to deliver; every ticket below it has been delivered or
 * counted as lost exactly once. */
struct client_page {
	int fd;
	struct rsw_page *pg;
	uint64_t tail;
	uint64_t drops_seen;	/* ring_dropped already used to skip tickets */
	uint64_t stall_ticket;	/* the ticket the last drain stopped at ... */
	int64_t stall_since;	/* ... and since when (CLOCK_MONOTONIC), 0: none */
};

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

/* The size check that precedes every access: 0, or -EPROTO once the owner has
 * changed the file's size under us. */
static int check_size(const struct client_page *p)
{
	struct stat st;

	if (fstat(p->fd, &st) < 0)
		return -errno;
	return st.st_size == (off_t)sizeof(struct rsw_page) ? 0 : -EPROTO;
}

static int check_header(const struct rsw_page *pg)
{
	uint32_t magic = __atomic_load_n(&pg->hdr.magic, __ATOMIC_ACQUIRE);

	if (magic == 0)
		return -ENOENT;		/* its creator has not finished */
	if (magic != RSW_PAGE_MAGIC || pg->hdr.version != RSW_PAGE_VERSION ||
			pg->hdr.size != sizeof(struct rsw_page) ||
			pg->hdr.n_counters != RSW_PAGE_COUNTERS ||
			pg->hdr.ring_slots != RSW_PAGE_RING_SLOTS ||
			pg->hdr.name_size != RSW_PAGE_NAME_SIZE ||
			pg->hdr.label_size != RSW_PAGE_LABEL_SIZE)
		return -EPROTO;
	return 0;
}

int client_page_open(pid_t pid, uid_t uid, struct client_page **out)
{
	struct client_page *p;
	struct rsw_page *pg;
	struct stat st;
	char path[PATH_MAX];
	int fd, rc;

	if (pid <= 0)
		return -EINVAL;
	rc = page_path(pid, path, sizeof(path));
	if (rc)
		return rc;
	fd = open(path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return errno == ELOOP ? -EPERM : -errno;
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		goto fail;
	}
	rc = -EPERM;
	if (!S_ISREG(st.st_mode) || st.st_uid != uid || (st.st_mode & 07777) != 0600 ||
			st.st_nlink != 1)
		goto fail;
	rc = st.st_size == 0 ? -ENOENT : -EPROTO;
	if (st.st_size != (off_t)sizeof(struct rsw_page))
		goto fail;
	pg = mmap(NULL, sizeof(*pg), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (pg == MAP_FAILED) {
		rc = -errno;
		goto fail;
	}
	rc = check_header(pg);
	if (rc)
		goto fail_unmap;
	p = calloc(1, sizeof(*p));
	if (!p) {
		rc = -ENOMEM;
		goto fail_unmap;
	}
	p->fd = fd;
	p->pg = pg;
	*out = p;
	return 0;
fail_unmap:
	munmap(pg, sizeof(*pg));
fail:
	close(fd);
	return rc;
}

void client_page_close(struct client_page *p)
{
	if (!p)
		return;
	munmap(p->pg, sizeof(*p->pg));
	close(p->fd);
	free(p);
}

/* Copies ticket t out of its slot if the slot holds it complete and unchanged over the
 * copy (the seqlock check). Returns 1 delivered, 0 not there yet (being written, not
 * yet claimed, or given up by its writer), -1 gone (a newer ticket took the slot). */
static int read_mark(struct rsw_page_mark *m, uint64_t t, int64_t *ns, char *label)
{
	uint64_t want = 2 * t + 2, s1, s2;

	s1 = __atomic_load_n(&m->seq, __ATOMIC_ACQUIRE);
	if (s1 > want)
		return -1;
	if (s1 != want)
		return 0;
	*ns = __atomic_load_n(&m->realtime_ns, __ATOMIC_RELAXED);
	memcpy(label, m->label, RSW_PAGE_LABEL_SIZE);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	s2 = __atomic_load_n(&m->seq, __ATOMIC_RELAXED);
	if (s2 != s1)
		return -1;	/* overwritten while we copied: a torn read */
	label[RSW_PAGE_LABEL_SIZE - 1] = '\0';
	return 1;
}

int client_page_drain_marks(struct client_page *p, client_mark_cb cb, void *ctx)
{
	struct rsw_page *pg = p->pg;
	char label[RSW_PAGE_LABEL_SIZE];
	uint64_t head, lost = 0, dropped;
	int64_t ns;
	int rc;

	rc = check_size(p);
	if (rc)
		return rc;
	head = __atomic_load_n(&pg->hdr.ring_head, __ATOMIC_ACQUIRE);
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
	while (p->tail < head) {
		struct rsw_page_mark *m = &pg->ring[p->tail & (RSW_PAGE_RING_SLOTS - 1)];

		rc = read_mark(m, p->tail, &ns, label);
		if (rc > 0) {
			cb(ctx, (long long)ns, label);
		} else if (rc < 0) {
			lost++;
		} else {
			/* Not there yet. If its writer gave up (ring_dropped grew, and the
			 * slot is not this ticket's own write in progress), count it lost
			 * now; else wait for it, but not for ever. */
			uint64_t s = __atomic_load_n(&m->seq, __ATOMIC_ACQUIRE);

			dropped = __atomic_load_n(&pg->hdr.ring_dropped, __ATOMIC_RELAXED);
			if (s != 2 * p->tail + 1 && dropped > p->drops_seen) {
				p->drops_seen++;
				lost++;
			} else if (p->stall_since == 0 || p->stall_ticket != p->tail) {
				p->stall_ticket = p->tail;
				p->stall_since = mono_ns();
				break;
			} else if (mono_ns() - p->stall_since > STALL_NS) {
				lost++;
			} else {
				break;
			}
		}
		p->tail++;
		p->stall_since = 0;
	}
	return lost > INT32_MAX ? INT32_MAX : (int)lost;
}

size_t client_page_counters(struct client_page *p, struct client_counter *out, size_t max)
{
	size_t n = 0, i;

	if (check_size(p))
		return 0;
	for (i = 0; i < RSW_PAGE_COUNTERS && n < max; i++) {
		struct rsw_page_counter *c = &p->pg->counters[i];
		uint32_t kind;

		if (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) != RSW_SLOT_READY)
			continue;
		memcpy(out[n].name, c->name, sizeof(out[n].name));
		out[n].name[sizeof(out[n].name) - 1] = '\0';
		kind = __atomic_load_n(&c->kind, __ATOMIC_RELAXED);
		if (rsw_page_name_len(out[n].name) <= 0 ||
				(kind != RSW_KIND_COUNTER && kind != RSW_KIND_GAUGE))
			continue;
		out[n].is_gauge = kind == RSW_KIND_GAUGE;
		out[n].value = (long long)__atomic_load_n(&c->value, __ATOMIC_RELAXED);
		n++;
	}
	return n;
}

int client_page_mark(struct client_page *p, const char *label)
{
	int rc;

	if (!label || !*label)
		return -EINVAL;
	rc = check_size(p);
	if (rc)
		return rc;
	return rsw_page_put_mark(p->pg, real_ns(), label, rsw_page_label_len(label));
}

int client_page_remove_stale(pid_t pid)
{
	struct stat st;
	char path[PATH_MAX];
	int rc;

	if (pid <= 0)
		return -EINVAL;
	rc = page_path(pid, path, sizeof(path));
	if (rc)
		return rc;
	if (lstat(path, &st) < 0)
		return -errno;
	if (kill(pid, 0) == 0 || errno == EPERM)
		return -EBUSY;
	if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
		return -EPERM;
	if (unlink(path) < 0)
		return -errno;
	return 0;
}
