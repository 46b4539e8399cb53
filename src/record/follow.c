#include "record/follow.h"
#include "base/clock.h"
#include "base/parse.h"
#include "base/util.h"
#include "record/facts.h"
#include "record/pattern.h"
#include "record/target.h"
#include "source/cgroup.h"
#include "source/proc.h"
#include "store/store.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

/* A -g cgroup is read this often while waiting, beside the events: a process written
 * into cgroup.procs by another one makes neither a fork nor an exec event. */
#define FOLLOW_CGROUP_MS 1000

int follow_init(struct follow *f, const char *pattern, const char *cgroup_dir, int oldest,
		char *err, size_t errlen)
{
	memset(f, 0, sizeof(*f));
	f->cn.fd = -1;
	f->wake_fd = -1;
	f->cgroup_dir = cgroup_dir;
	f->oldest = oldest;
	if (pattern) {
		if (pattern_compile(&f->re, pattern, err, errlen) < 0)
			return -EINVAL;
		f->have_re = 1;
	}
	/* Whether the connector can be had at all, to be said once, before any wait. */
	int e = proccn_open(&f->cn);
	if (e < 0) {
		f->polling = 1;
		f->poll_err = e;
	}
	proccn_close(&f->cn);
	return 0;
}

void follow_release(struct follow *f)
{
	if (!f)
		return;
	if (f->have_re)
		regfree(&f->re);
	f->have_re = 0;
	proccn_close(&f->cn);
	if (f->wake_fd >= 0)
		close(f->wake_fd);
	f->wake_fd = -1;
}

/* Whether the cgroup has a process that a recording can read: 1, 0 (empty, or not
 * there), or -errno. cgroup.procs also lists a process in its exit (an OOM victim
 * whose memory is being freed, for some milliseconds; a process whose main thread
 * ended): one whose memory cannot be read (facts_memory_readable, the recorder's own
 * test of a member) is what the last run ended with, not a new instance. */
static int cgroup_populated(const char *dir)
{
	pid_t *pids = NULL;
	size_t n = 0;
	int e = cg_read_procs(dir, &pids, &n);
	if (e == -ENOENT || e == -ENODEV) {
		free(pids);
		return 0;
	}
	int found = 0;
	for (size_t i = 0; e == 0 && i < n && !found; i++) {
		int r = facts_memory_readable(pids[i]);
		found = r != -ESRCH && r != -ENOENT;
	}
	free(pids);
	return e < 0 ? e : found;
}

/* What is there now: 1 (*pid set), 0, or -errno. */
static int scan(struct follow *f, pid_t *pid)
{
	if (f->cgroup_dir) {
		*pid = 0;
		return cgroup_populated(f->cgroup_dir);
	}
	struct proc_match *m = NULL;
	size_t n = 0;
	int e = target_find_matches(&f->re, &m, &n), found = 0;
	for (size_t i = 0; e == 0 && i < n && !found; i++) {
		pid_t p = m[f->oldest ? i : n - 1 - i].pid;	/* sorted by start time */
		if ((found = target_filter_ok(&f->filter, p)))
			*pid = p;
	}
	free(m);
	return e < 0 ? e : found;
}

struct event_check {
	struct follow *f;
	const struct proc_id *anc;
	size_t nanc;
	int found;		/* 1: pid; -errno: a cgroup that could not be read */
	pid_t pid;
};

/* A new process (fork) or program (exec): the first that matches is the instance. */
static void on_event(void *ctx, const struct proccn_event *ev)
{
	struct event_check *c = ctx;
	struct proc_match pm;
	if (c->found || (ev->kind != PROCCN_FORK && ev->kind != PROCCN_EXEC) ||
	    ev->pid != ev->tgid)	/* threads come and go inside a process */
		return;
	if (c->f->cgroup_dir) {
		c->found = cgroup_populated(c->f->cgroup_dir);
		c->pid = 0;
	} else if (target_matches(&c->f->re, ev->tgid, c->anc, c->nanc, &pm) &&
		   target_filter_ok(&c->f->filter, ev->tgid)) {
		c->found = 1;
		c->pid = ev->tgid;
	}
}

static int wait_ms(const struct follow *f, int64_t deadline)
{
	int ms = f->polling ? FOLLOW_POLL_MS : f->cgroup_dir ? FOLLOW_CGROUP_MS : -1;
	if (deadline) {
		int64_t left = deadline - mono_ns();
		int64_t lms = left <= 0 ? 0 : left / NS_PER_MS + 1;
		if (ms < 0 || lms < ms)
			ms = (int)(lms > 3600000 ? 3600000 : lms);
	}
	return ms;
}

static int hub_wait(struct follow *f, int sigfd, int64_t deadline, pid_t *pid);

int follow_wait(struct follow *f, int sigfd, int64_t deadline, pid_t *pid)
{
	if (f->hub && !f->polling)
		return hub_wait(f, sigfd, deadline, pid);
	struct event_check c = { .f = f };
	struct proc_id *anc = NULL;
	int r;
	/* Subscribed before the scan: a process that starts between the two is in the
	 * events, one that started before is in the scan. */
	if (!f->polling) {
		int e = proccn_open(&f->cn);
		if (e < 0) {
			f->polling = 1;
			f->poll_err = e;
		}
	}
	if (!f->cgroup_dir)
		target_ancestry(getpid(), &anc, &c.nanc);
	c.anc = anc;
	if ((r = scan(f, pid)) != 0)
		goto out;
	for (;;) {
		struct pollfd p[2] = { { sigfd, POLLIN, 0 }, { f->cn.fd, POLLIN, 0 } };
		int n = poll(p, f->cn.fd >= 0 ? 2 : 1, wait_ms(f, deadline));
		if (n < 0 && errno != EINTR) {
			r = -errno;
			break;
		}
		if (n > 0 && (p[0].revents & POLLIN)) {
			r = 0;	/* the signal stays for the caller */
			break;
		}
		int rescan = n == 0;	/* polling, or the cgroup's second */
		if (n > 0 && f->cn.fd >= 0 && p[1].revents) {
			int e = proccn_drain(&f->cn, on_event, &c);
			if (c.found) {
				r = c.found;
				*pid = c.pid;
				break;
			}
			if (e == -ENOBUFS)
				rescan = 1;	/* events lost: look at what is there */
			else if (e < 0) {
				/* the connector failed: poll from here on */
				proccn_close(&f->cn);
				f->polling = 1;
				f->poll_err = e;
			}
		}
		if (deadline && mono_ns() >= deadline) {
			r = 0;
			break;
		}
		if (rescan && (r = scan(f, pid)) != 0)
			break;
	}
out:
	free(anc);
	proccn_close(&f->cn);
	return r;
}

int follow_owner_check(struct store *st, const struct run *r, uid_t *prev_uid, int *have_prev,
		       char *line, size_t n)
{
	char detail[64];
	uid_t uid;
	if (r->pid <= 0 || proc_read_uid(r->pid, &uid) < 0)
		return 0;	/* gone already: its run says so */
	int changed = *have_prev && uid != *prev_uid;
	uid_t last = *prev_uid;
	*prev_uid = uid;
	*have_prev = 1;
	if (!changed)
		return 0;
	snprintf(line, n, "warning: pid %d belongs to uid %u, the last instance to uid %u: "
		 "another user's process may have the target's name (match by owner: user=, "
		 "--user)", (int)r->pid, (unsigned)uid, (unsigned)last);
	snprintf(detail, sizeof(detail), "uid=%u last_uid=%u", (unsigned)uid, (unsigned)last);
	return store_add_event(st, r->id, r->started_at, "owner_changed", r->pid, detail) < 0 ? -1 : 1;
}

static int first_sample_cb(void *ctx, const struct sample *smp)
{
	*(int64_t *)ctx = smp->elapsed_ns;
	return 1;
}

int follow_store_restart(struct store *st, const struct run *r, int64_t prev_end,
			 int64_t prev_run, int64_t *gap_ns)
{
	int64_t first = 0;
	char detail[96];
	if (store_each_sample(st, r->id, first_sample_cb, &first) < 0)
		first = 0;	/* then the run's start */
	int64_t at = r->started_at + first, gap = at - prev_end;
	*gap_ns = gap < 0 ? 0 : gap;
	snprintf(detail, sizeof(detail), "gap_us=%lld after_run=%lld",
		 (long long)(*gap_ns / 1000), (long long)prev_run);
	return store_add_event(st, r->id, at, "restart", r->pid, detail);
}

/* The hub. waiters[0..n) are the follows waiting now, under lock; the thread reads the
 * connector and is the only one to touch cn. stop_fd wakes it to end. */
struct follow_hub {
	pthread_t th;
	struct proccn cn;
	int stop_fd;
	atomic_int stop;
	pthread_mutex_t lock;
	struct follow **waiters;
	size_t n, cap;
	size_t npattern;		/* waiters with a pattern */
	int64_t cg_kicked;		/* when cgroup waiters were last woken (mono ns) */
	int cg_pending;			/* a start since then: wake them when the time comes */
	struct proc_id *anc;		/* the agent's ancestry, read once */
	size_t nanc;
};

static void wake(struct follow *f)
{
	uint64_t one = 1;
	if (write(f->wake_fd, &one, sizeof(one)) < 0) {
		/* the counter is full: the follow is awake anyway */
	}
}

/* Under h->lock: wakes the cgroup waiters, at most every FOLLOW_HUB_CGROUP_MS. */
static void kick_cgroups(struct follow_hub *h, int64_t now)
{
	if (now - h->cg_kicked < FOLLOW_HUB_CGROUP_MS * NS_PER_MS) {
		h->cg_pending = 1;
		return;
	}
	h->cg_kicked = now;
	h->cg_pending = 0;
	for (size_t i = 0; i < h->n; i++)
		if (h->waiters[i]->cgroup_dir) {
			h->waiters[i]->hub_rescan = 1;
			wake(h->waiters[i]);
		}
}

static void hub_event(void *ctx, const struct proccn_event *ev)
{
	struct follow_hub *h = ctx;
	struct proc_match pm;
	if ((ev->kind != PROCCN_FORK && ev->kind != PROCCN_EXEC) || ev->pid != ev->tgid ||
	    atomic_load(&h->stop))
		return;
	pthread_mutex_lock(&h->lock);
	size_t npat = h->npattern, ncg = h->n - npat;
	if (ncg)
		kick_cgroups(h, mono_ns());
	pthread_mutex_unlock(&h->lock);
	/* read once, outside the lock, for every pattern */
	if (!npat || !target_candidate(ev->tgid, h->anc, h->nanc, &pm))
		return;
	pthread_mutex_lock(&h->lock);
	for (size_t i = 0; i < h->n && !atomic_load(&h->stop); i++) {
		struct follow *f = h->waiters[i];
		if (f->cgroup_dir || f->hub_pid || !target_match_re(&f->re, &pm) ||
		    !target_filter_ok(&f->filter, ev->tgid))
			continue;
		f->hub_pid = ev->tgid;
		wake(f);
	}
	pthread_mutex_unlock(&h->lock);
}

/* Under h->lock: every waiter is told to look again (events were lost), or that the
 * hub has failed (it then polls). */
static void wake_all(struct follow_hub *h, int failed)
{
	for (size_t i = 0; i < h->n; i++) {
		h->waiters[i]->hub_rescan = 1;
		if (failed)
			h->waiters[i]->hub_failed = failed;
		wake(h->waiters[i]);
	}
}

static void *hub_main(void *arg)
{
	struct follow_hub *h = arg;
	int failed = 0;
	while (!atomic_load(&h->stop)) {
		struct pollfd p[2] = { { h->stop_fd, POLLIN, 0 }, { h->cn.fd, POLLIN, 0 } };
		int ms = -1;
		pthread_mutex_lock(&h->lock);
		if (h->cg_pending) {
			int64_t left = h->cg_kicked + FOLLOW_HUB_CGROUP_MS * NS_PER_MS - mono_ns();
			ms = left <= 0 ? 0 : (int)(left / NS_PER_MS) + 1;
		}
		pthread_mutex_unlock(&h->lock);
		int n = poll(p, 2, ms);
		if (n < 0 && errno != EINTR) {
			failed = -errno;
			break;
		}
		if (n > 0 && p[0].revents)
			break;
		if (n > 0 && p[1].revents) {
			int e = proccn_drain(&h->cn, hub_event, h);
			if (e == -ENOBUFS) {
				pthread_mutex_lock(&h->lock);
				wake_all(h, 0);
				pthread_mutex_unlock(&h->lock);
			} else if (e < 0) {
				failed = e;
				break;
			}
		}
		pthread_mutex_lock(&h->lock);
		if (h->cg_pending)
			kick_cgroups(h, mono_ns());
		pthread_mutex_unlock(&h->lock);
	}
	if (failed) {
		pthread_mutex_lock(&h->lock);
		proccn_close(&h->cn);
		wake_all(h, failed);
		h->cn.fd = -2;	/* failed: later waiters poll */
		pthread_mutex_unlock(&h->lock);
	}
	return NULL;
}

int follow_hub_start(struct follow_hub **out)
{
	struct follow_hub *h = xcalloc(1, sizeof(*h));
	int e = proccn_open(&h->cn);
	if (e < 0) {
		free(h);
		return e;
	}
	h->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (h->stop_fd < 0) {
		e = -errno;
		proccn_close(&h->cn);
		free(h);
		return e;
	}
	pthread_mutex_init(&h->lock, NULL);
	target_ancestry(getpid(), &h->anc, &h->nanc);
	e = pthread_create(&h->th, NULL, hub_main, h);
	if (e != 0) {
		close(h->stop_fd);
		proccn_close(&h->cn);
		pthread_mutex_destroy(&h->lock);
		free(h->anc);
		free(h);
		return -e;
	}
	*out = h;
	return 0;
}

void follow_hub_stop(struct follow_hub *h)
{
	if (!h)
		return;
	atomic_store(&h->stop, 1);
	uint64_t one = 1;
	if (write(h->stop_fd, &one, sizeof(one)) < 0) {
		/* cannot fail for a counter at 0 or 1 */
	}
	pthread_join(h->th, NULL);
	if (h->cn.fd >= 0)
		proccn_close(&h->cn);
	close(h->stop_fd);
	pthread_mutex_destroy(&h->lock);
	free(h->waiters);
	free(h->anc);
	free(h);
}

int follow_use_hub(struct follow *f, struct follow_hub *h)
{
	f->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (f->wake_fd < 0)
		return -errno;
	f->hub = h;
	f->polling = 0;
	return 0;
}

/* Joins h's waiters; returns 0, or -errno when the hub has failed (f then polls). */
static int hub_join(struct follow_hub *h, struct follow *f)
{
	int ret = 0;
	pthread_mutex_lock(&h->lock);
	if (h->cn.fd < 0) {
		ret = -EIO;
	} else {
		if (h->n == h->cap) {
			h->cap = h->cap ? h->cap * 2 : 16;
			h->waiters = xrealloc(h->waiters, h->cap * sizeof(*h->waiters));
		}
		h->waiters[h->n++] = f;
		if (!f->cgroup_dir)
			h->npattern++;
		f->hub_pid = 0;
		f->hub_rescan = 0;
		f->hub_failed = 0;
	}
	pthread_mutex_unlock(&h->lock);
	return ret;
}

static void hub_leave(struct follow_hub *h, struct follow *f)
{
	pthread_mutex_lock(&h->lock);
	for (size_t i = 0; i < h->n; i++)
		if (h->waiters[i] == f) {
			h->waiters[i] = h->waiters[--h->n];
			if (!f->cgroup_dir)
				h->npattern--;
			break;
		}
	pthread_mutex_unlock(&h->lock);
}

/* follow_wait through the hub: joined before the scan (the hub listens all the time),
 * so a process that starts between the two is in its events. */
static int hub_wait(struct follow *f, int sigfd, int64_t deadline, pid_t *pid)
{
	struct follow_hub *h = f->hub;
	int r;
	if (hub_join(h, f) < 0) {
		f->polling = 1;
		f->poll_err = -EIO;
		return follow_wait(f, sigfd, deadline, pid);
	}
	if ((r = scan(f, pid)) != 0)
		goto out;
	for (;;) {
		struct pollfd p[2] = { { sigfd, POLLIN, 0 }, { f->wake_fd, POLLIN, 0 } };
		int n = poll(p, 2, wait_ms(f, deadline));
		if (n < 0 && errno != EINTR) {
			r = -errno;
			break;
		}
		if (n > 0 && (p[0].revents & POLLIN)) {
			r = 0;	/* the signal stays for the caller */
			break;
		}
		int rescan = n == 0, failed = 0;
		pid_t found = 0;
		if (n > 0 && p[1].revents) {
			uint64_t v;
			if (read(f->wake_fd, &v, sizeof(v)) < 0) {
				/* nothing to read: woken for nothing */
			}
			pthread_mutex_lock(&h->lock);
			found = f->hub_pid;
			rescan |= f->hub_rescan;
			failed = f->hub_failed;
			f->hub_pid = 0;
			f->hub_rescan = 0;
			pthread_mutex_unlock(&h->lock);
		}
		if (found) {
			*pid = found;
			r = 1;
			break;
		}
		if (failed) {
			f->polling = 1;
			f->poll_err = failed;
		}
		if (deadline && mono_ns() >= deadline) {
			r = 0;
			break;
		}
		if (rescan && (r = scan(f, pid)) != 0)
			break;
		if (failed) {
			hub_leave(h, f);
			return follow_wait(f, sigfd, deadline, pid);
		}
	}
out:
	hub_leave(h, f);
	return r;
}
