#include "record/follow.h"
#include "base/clock.h"
#include "base/parse.h"
#include "base/util.h"
#include "record/facts.h"
#include "record/pattern.h"
#include "record/target.h"
#include "source/cgroup.h"
#include "store/store.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A -g cgroup is read this often while waiting, beside the events: a process written
 * into cgroup.procs by another one makes neither a fork nor an exec event. */
#define FOLLOW_CGROUP_MS 1000

int follow_init(struct follow *f, const char *pattern, const char *cgroup_dir, int oldest,
		char *err, size_t errlen)
{
	memset(f, 0, sizeof(*f));
	f->cn.fd = -1;
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
	int e = find_matches(&f->re, &m, &n);
	if (e == 0 && n > 0)
		*pid = m[f->oldest ? 0 : n - 1].pid;	/* sorted by start time */
	free(m);
	return e < 0 ? e : n > 0;
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
	} else if (proc_matches(&c->f->re, ev->tgid, c->anc, c->nanc, &pm)) {
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

int follow_wait(struct follow *f, int sigfd, int64_t deadline, pid_t *pid)
{
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
		proc_ancestry(getpid(), &anc, &c.nanc);
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
