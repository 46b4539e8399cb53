#include "record/agent.h"
#include "record/gpus.h"
#include "base/clock.h"
#include "base/parse.h"
#include "base/sysroot.h"
#include "base/util.h"
#include "record/cgctl.h"
#include "record/facts.h"
#include "record/follow.h"
#include "record/recorder.h"
#include "record/target.h"
#include "store/store.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

/* One target and its thread. Everything but done is the thread's own once it runs;
 * done is set by the thread as it returns. */
struct slot {
	struct agent *a;
	const struct agent_target *t;
	pthread_t th;
	int started;
	struct store *st;
	struct metrics_server *x;
	struct record_opts ro;
	struct recorder_sink sink;
	int sigfd;
	struct follow fw;
	int fw_open;
	char cg_dir[PATH_MAX];	/* a cgroup target's directory, found at the start */
	struct proc_filter filter;	/* a match target's user= and cgroup= */
	int64_t series;		/* the id of the target's first run; 0 before it */
	int64_t prev_end;	/* realtime ns the last kept instance ended; 0: none yet */
	int64_t prev_run;
	uint64_t instances;
	pid_t failed_pid;	/* the last instance that could not be attached (said once) */
	uid_t prev_uid;		/* the owner of the last instance, when have_prev_uid */
	int have_prev_uid;
	int failed;
	atomic_int done;
};

struct agent {
	const struct agent_opts *o;
	struct slot *s;
	size_t n;
	struct store_hub *hub;	/* one writer for every target's batches; NULL: each its own */
	struct follow_hub *events;	/* one proc connector listener for every wait; NULL: poll */
	atomic_int stop;
};

static void note(struct slot *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct slot *s, const char *fmt, ...)
{
	char text[512];
	va_list ap;
	if (!s->a->o->note)
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	s->a->o->note(s->a->o->note_ctx, s->t->name, text);
}

/* The recorders' lines, with the target's name. */
static void sink_note(void *ctx, enum recorder_note kind, const char *text)
{
	struct slot *s = ctx;
	(void)kind;
	if (s->a->o->note)
		s->a->o->note(s->a->o->note_ctx, s->t->name, text);
}

static void fill_run(struct slot *s, struct run *r, pid_t pid, const struct run_cgroup *tc)
{
	memset(r, 0, sizeof(*r));
	facts_host(r);
	r->label = xstrdup(s->t->name);
	if (s->t->kind == AGENT_CGROUP) {
		r->target = xstrdup(tc->path);
		r->cgroup = xstrdup(tc->path);
		r->mode = xstrdup("cgroup");
	} else {
		r->target = facts_cmdline(pid);
		r->mode = xstrdup(s->t->kind == AGENT_MATCH ? "name" : "pid");
	}
	r->pid = pid;
	r->started_at = real_ns();
	r->interval_ns = s->ro.interval_ns;
	run_set_unknown(r);
	r->series = s->series;
}

/* An instance after the first: a "restart" event of its run, as record --follow
 * stores it. */
static void store_restart(struct slot *s, const struct run *r)
{
	int64_t gap;
	if (follow_store_restart(s->st, r, s->prev_end, s->prev_run, &gap) < 0)
		note(s, "rsswatch: cannot store the restart of run %lld: %s", (long long)r->id,
		     store_errmsg(s->st));
}

/* The target of one instance: the cgroup (reset its peak, sample it), or pid through a
 * pidfd, with the cgroup it is in. Returns 0, -ESRCH (gone, or the cgroup removed
 * again: wait on) or another -errno. */
static int attach_instance(struct slot *s, pid_t pid, struct run_cgroup *tc,
			   struct record_target *t)
{
	if (s->t->kind == AGENT_CGROUP) {
		if (run_cgroup_open_named(tc, s->cg_dir) < 0)
			return -ESRCH;
		t->set_cgroup_dir = tc->loc.dir;
		t->cg_sample = 1;
		t->cg_reset_peak = 1;
	} else {
		int fd = target_pidfd_open(pid);
		if (fd < 0)
			return fd;
		int e = facts_memory_readable(pid);
		if (e < 0) {
			close(fd);
			return e;
		}
		t->pid = pid;
		t->pidfd = fd;
		run_cgroup_watch(tc, pid);
	}
	if (tc->open) {
		t->cg = &tc->reader;
		t->cg_path = tc->path;
		if (tc->loc.version == 2)
			t->psi_cgroup_dir = tc->loc.dir;
	}
	return 0;
}

/* The run begun in the store, in the target's series. Returns 0 or -EIO (noted). */
static int begin_instance(struct slot *s, struct run *run, pid_t pid, struct run_cgroup *tc)
{
	fill_run(s, run, pid, tc);
	if (store_run_begin(s->st, run) < 0) {
		note(s, "rsswatch: cannot start a run: %s", store_errmsg(s->st));
		return -EIO;
	}
	if (!s->series)
		s->series = run->id;	/* the series is named after its first run */
	run->series = s->series;
	s->instances++;
	metrics_server_target(s->x, 1, run->id, pid, s->instances, s->instances - 1);
	if (pid)
		note(s, "rsswatch: recording pid %d as run %lld", (int)pid, (long long)run->id);
	else
		note(s, "rsswatch: recording memory cgroup %s as run %lld", tc->path,
		     (long long)run->id);
	return 0;
}

/* An instance gone before its first sample leaves no run, as with record --follow. */
static void forget_instance(struct slot *s, const struct run *run)
{
	store_delete_run(s->st, run->id);
	if (s->series == run->id)
		s->series = 0;
	s->instances--;
	metrics_server_target(s->x, 0, 0, 0, s->instances, s->instances ? s->instances - 1 : 0);
}

/* Attaches to pid (0 for a cgroup target) and records it to its end or a stop. Returns
 * 0 (a run kept), -ESRCH (gone before its first sample, or before it could be
 * attached: no run), or another -errno (noted). */
static int record_instance(struct slot *s, pid_t pid)
{
	struct record_target t;
	struct run run;
	struct run_cgroup *tc = xmalloc(sizeof(*tc));
	int ret, store_err = 0;
	memset(&t, 0, sizeof(t));
	memset(&run, 0, sizeof(run));
	t.pidfd = -1;
	run_cgroup_init(tc, &s->sink);
	if ((ret = attach_instance(s, pid, tc, &t)) < 0 ||
	    (ret = begin_instance(s, &run, pid, tc)) < 0)
		goto out;
	char line[256];
	int oc = follow_owner_check(s->st, &run, &s->prev_uid, &s->have_prev_uid, line,
				    sizeof(line));
	if (oc < 0)
		note(s, "rsswatch: cannot store an event of run %lld: %s", (long long)run.id,
		     store_errmsg(s->st));
	if (oc != 0)
		note(s, "rsswatch: %s", line);
	int e = record(&s->ro, &t, s->sigfd, s->st, &run, &store_err);
	if (e == -ESRCH && !run.samples && !store_err) {
		forget_instance(s, &run);
		ret = -ESRCH;
		goto out;
	}
	if (s->prev_end)
		store_restart(s, &run);
	if (e < 0)
		note(s, "rsswatch: recording of run %lld ended early: %s", (long long)run.id, errstr(e));
	if (store_err)
		note(s, "rsswatch: run %lld is not stored in full: %s", (long long)run.id,
		     errstr(store_err));
	note(s, "rsswatch: run %lld ended: %s", (long long)run.id, run.outcome);
	s->prev_end = run.ended_at ? run.ended_at : real_ns();
	s->prev_run = run.id;
	metrics_server_target(s->x, 0, run.id, pid, s->instances, s->instances - 1);
out:
	run_release(&run);
	if (t.pidfd >= 0)
		close(t.pidfd);
	run_cgroup_release(tc);
	free(tc);
	return ret;
}

/* Waits up to ms for the stop signal (left pending on sigfd). */
static int stop_within(int sigfd, int ms)
{
	struct pollfd p = { sigfd, POLLIN, 0 };
	return poll(&p, 1, ms) > 0;
}

static void *target_main(void *arg)
{
	struct slot *s = arg;
	const struct agent_target *t = s->t;
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, AGENT_STOP_SIGNAL);
	s->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (s->sigfd < 0) {
		note(s, "rsswatch: cannot set up signal handling: %s", errstr(errno));
		s->failed = 1;
		goto out;
	}
	pid_t only = 0;
	if (t->kind == AGENT_PID && parse_pid(t->value, &only) < 0)
		only = 0;	/* checked by the parser */
	if (t->kind != AGENT_PID) {
		char why[128];
		if (follow_init(&s->fw, t->kind == AGENT_MATCH ? t->value : NULL,
				t->kind == AGENT_CGROUP ? s->cg_dir : NULL, s->a->o->oldest, why,
				sizeof(why)) < 0) {
			note(s, "rsswatch: invalid pattern: %s", why);
			s->failed = 1;
			goto out;
		}
		s->fw_open = 1;
		s->fw.filter = s->filter;
		if (s->a->o->no_proccn) {
			s->fw.polling = 1;
			s->fw.poll_err = -EPERM;
		} else if (s->a->events && follow_use_hub(&s->fw, s->a->events) < 0) {
			s->fw.polling = 1;
			s->fw.poll_err = -EMFILE;
		}
		if (t->kind == AGENT_MATCH)
			note(s, "rsswatch: waiting for a process matching '%s'", t->value);
		else
			note(s, "rsswatch: waiting for a process in memory cgroup %s", s->cg_dir);
	}
	while (!atomic_load(&s->a->stop)) {
		pid_t pid = only;
		if (t->kind == AGENT_PID) {
			if (s->instances)
				break;	/* a pid is recorded once */
		} else {
			int r = follow_wait(&s->fw, s->sigfd, 0, &pid);
			if (r < 0) {
				note(s, "rsswatch: cannot wait for the next instance: %s", errstr(r));
				s->failed = 1;
				break;
			}
			if (r == 0)
				break;	/* the stop signal */
		}
		int e = record_instance(s, pid);
		if (e == 0 || e == -ESRCH) {
			if (t->kind == AGENT_PID)
				break;
			continue;
		}
		if (t->kind == AGENT_PID || e == -EIO) {
			if (e != -EIO)
				note(s, "rsswatch: cannot attach to pid %d: %s", (int)pid, errstr(e));
			s->failed = 1;
			break;
		}
		/* a live instance that cannot be read (another user's, hidden /proc): said
		 * once; it would be found again at once, so wait a second between tries */
		if (pid != s->failed_pid)
			note(s, "rsswatch: cannot attach to pid %d: %s", (int)pid, errstr(e));
		s->failed_pid = pid;
		if (stop_within(s->sigfd, 1000))
			break;
	}
out:
	atomic_store(&s->done, 1);
	return NULL;
}

/* A cgroup target's directory: where it is, or, for one that does not exist yet (a
 * service's cgroup, made when the service starts), where it will be: under the v1
 * memory hierarchy where there is one, else under v2; the wait for its first process
 * takes a missing cgroup as an empty one. Returns 0, or -ENOENT (err says why) when
 * there is no memory cgroup hierarchy at all. */
static int find_cgroup(struct slot *s, char *err, size_t errlen)
{
	struct run_cgroup *tc = xmalloc(sizeof(*tc));
	int ret = 0;
	run_cgroup_init(tc, NULL);
	const char *arg = s->t->value;
	const struct cg_mount *m = &tc->mount;
	if (run_cgroup_open_named(tc, arg) == 0) {
		strlcpy_rsw(s->cg_dir, tc->loc.dir, sizeof(s->cg_dir));
	} else if (!tc->have_mount || (!m->has_v1 && !m->has_v2)) {
		snprintf(err, errlen, "target %s: no memory cgroup '%s' (no memory cgroup "
			 "hierarchy is mounted)", s->t->name, arg);
		ret = -ENOENT;
	} else {
		const char *mnt = m->has_v1 ? m->v1_mnt : m->v2_mnt;
		int full = (m->has_v1 && strncmp(arg, m->v1_mnt, strlen(m->v1_mnt)) == 0) ||
			   (m->has_v2 && strncmp(arg, m->v2_mnt, strlen(m->v2_mnt)) == 0);
		if (snprintf(s->cg_dir, sizeof(s->cg_dir), "%s%s%s%s", sysroot(), full ? "" : mnt,
			     arg[0] == '/' ? "" : "/", arg) >= (int)sizeof(s->cg_dir)) {
			snprintf(err, errlen, "target %s: memory cgroup '%s': path too long",
				 s->t->name, arg);
			ret = -ENAMETOOLONG;
		} else {
			note(s, "rsswatch: memory cgroup %s does not exist yet: waiting for it",
			     s->cg_dir);
		}
	}
	run_cgroup_release(tc);
	free(tc);
	return ret;
}

int agent_start(struct agent **out, const struct agentconf *c, const struct agent_opts *o,
		char *err, size_t errlen)
{
	struct agent *a = xcalloc(1, sizeof(*a));
	int ret = 0;
	a->o = o;
	a->n = c->n;
	a->s = xcalloc(c->n, sizeof(*a->s));
	for (size_t i = 0; i < c->n; i++) {
		struct slot *s = &a->s[i];
		s->a = a;
		s->t = &c->t[i];
		s->sigfd = -1;
		s->x = metrics_server_slot(o->metrics, i);
		s->sink.note = sink_note;
		s->sink.ctx = s;
		s->ro.interval_ns = o->interval_ns;
		s->ro.quiet = 1;
		s->ro.sink = &s->sink;
		s->ro.metrics = s->x;
		s->ro.no_proccn = o->no_proccn;
		/* GPU figures where a driver is present: a handle of each target's own (its
		 * thread's buffers and device state); without a driver, none, quietly, as
		 * record says only with -v */
		char gwhy[256];
		if (!o->no_gpu && gpus_open(&s->ro, 0, gwhy, sizeof(gwhy)) < 0)
			s->ro.nvml = NULL;
		if (s->t->kind == AGENT_CGROUP && (ret = find_cgroup(s, err, errlen)) < 0)
			goto fail;
		if (s->t->user && (ret = user_uid(s->t->user, &s->filter.uid)) < 0) {
			snprintf(err, errlen, "target %s: no user '%s'", s->t->name, s->t->user);
			goto fail;
		}
		s->filter.have_uid = s->t->user != NULL;
		s->filter.cgroup = s->t->within;
		/* one after the other: the first creates and migrates the database */
		char why[256];
		int e = store_open(o->db_path, STORE_CREATE, &s->st, why, sizeof(why));
		if (e < 0) {
			snprintf(err, errlen, "%s: %s", o->db_path, why);
			ret = e;
			goto fail;
		}
		store_set_alive(s->st, recorder_alive);
	}
	/* The targets' commits, coalesced: one transaction about once a second for all of
	 * them, not one per target every few seconds. Without it (it could not be made),
	 * each target's recorder writes on its own. */
	char hwhy[256];
	if (store_hub_open(o->db_path, &a->hub, hwhy, sizeof(hwhy)) == 0)
		for (size_t i = 0; i < a->n; i++)
			store_use_hub(a->s[i].st, a->hub);
	/* One listener of the host's fork and exec events for every target's wait: one
	 * read of each new process, one pass over the patterns, only the target that
	 * matches woken. Without it (no connector) every target polls /proc. */
	if (!o->no_proccn && follow_hub_start(&a->events) < 0)
		a->events = NULL;
	for (size_t i = 0; i < a->n; i++) {
		struct slot *s = &a->s[i];
		int e = pthread_create(&s->th, NULL, target_main, s);
		if (e != 0) {
			snprintf(err, errlen, "cannot start a thread for target %s: %s", s->t->name,
				 errstr(e));
			ret = -e;
			goto fail;
		}
		s->started = 1;
	}
	*out = a;
	return 0;
fail:
	agent_stop(a);
	return ret;
}

size_t agent_running(struct agent *a)
{
	size_t n = 0;
	for (size_t i = 0; i < a->n; i++)
		if (a->s[i].started && !atomic_load(&a->s[i].done))
			n++;
	return n;
}

int agent_stop(struct agent *a)
{
	int failed = 0;
	if (!a)
		return 0;
	atomic_store(&a->stop, 1);
	for (size_t i = 0; i < a->n; i++)
		if (a->s[i].started)
			pthread_kill(a->s[i].th, AGENT_STOP_SIGNAL);
	for (size_t i = 0; i < a->n; i++) {
		struct slot *s = &a->s[i];
		if (s->started)
			pthread_join(s->th, NULL);
		failed += s->failed;
		if (s->fw_open)
			follow_release(&s->fw);
		if (s->sigfd >= 0)
			close(s->sigfd);
		if (s->ro.nvml)
			gpus_close(&s->ro);
		store_close(s->st);
	}
	store_hub_close(a->hub);	/* every target's recorder has finished */
	follow_hub_stop(a->events);	/* every target's wait has been released */
	free(a->s);
	free(a);
	return failed;
}
