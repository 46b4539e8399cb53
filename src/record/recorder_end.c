/* How a run ended: OOM kills read from the kernel log and matched to the run's
 * processes, the cgroup's own count of them, the target's end and why, the closing
 * sample, and the end settled and written. Part of the recorder (recorder_int.h). */
#include "record/recorder_int.h"
#include "base/clock.h"
#include "base/fmt.h"
#include "base/parse.h"
#include "base/sysroot.h"
#include "base/util.h"
#include "record/target.h"

#include <linux/acct.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

int rec_in_set_cgroup(const struct recorder *rc, const char *memcg)
{
	const char *cg = rc->target->cg_path;
	if (!rc->target->cg_sample || !cg || !*cg || !memcg)
		return 0;
	size_t n = strlen(cg);
	return strncmp(memcg, cg, n) == 0 && (memcg[n] == '\0' || memcg[n] == '/');
}

static void count_oom_kills(struct recorder *rc)
{
	int64_t n = rc->kills_named + rc->kills_unnamed;
	rc->run->oom_kills = n > rc->cg_kills ? n : rc->cg_kills;
}

/* The entry of the process pid was at elapsed at (the kill's own time), or -1. */
static long kill_entry(const struct recorder *rc, pid_t pid, int64_t at)
{
	return proclog_find_at(&rc->log, pid, at, rc->opts->interval_ns + RECENT_NS, KILL_LATE_NS);
}

/* A kill is the run's when it is of the target, of a process of the run alive at the
 * kill's time, or of any process in a cgroup that holds only the run's processes (-g,
 * or one made for the command): that one may have lived between two samples. */
static int kill_is_ours(const struct recorder *rc, const struct kmsg_oom *kill, const char *memcg,
			int64_t at)
{
	if (kill->pid <= 0)
		return 0;
	return kill->pid == rc->target->pid || kill_entry(rc, kill->pid, at) >= 0 ||
	       rec_in_set_cgroup(rc, memcg);
}

/* Whether the kill of pid at t (CLOCK_REALTIME) was counted already, from its other
 * report; if not, it is remembered. A pid is not reused within RECENT_NS. */
static int seen_kill(struct recorder *rc, pid_t pid, int64_t t)
{
	for (size_t i = 0; i < rc->nkills_seen && i < KILLS_SEEN; i++) {
		const struct kill_seen *k = &rc->kills_seen[i];
		if (k->pid == pid && t - k->t < RECENT_NS && k->t - t < RECENT_NS)
			return 1;
	}
	rc->kills_seen[rc->nkills_seen++ % KILLS_SEEN] = (struct kill_seen){ pid, t };
	return 0;
}

/* The stored row of one kill (and, but for the target's, whose event comes with its
 * death's verdict, an oom_kill event). */
static void store_kill(struct recorder *rc, const struct kmsg_oom *kill, const char *memcg,
		       int64_t realtime_ns)
{
	struct oom_kill k;
	memset(&k, 0, sizeof(k));
	k.t = realtime_ns;
	k.pid = kill->pid;
	strlcpy_rsw(k.comm, kill->comm, sizeof(k.comm));
	k.anon_rss = kill->anon_rss;
	k.file_rss = kill->file_rss;
	k.shmem_rss = kill->shmem_rss;
	k.total_vm = kill->total_vm;
	strlcpy_rsw(k.memcg, memcg ? memcg : "", sizeof(k.memcg));
	store_add_oom_kill(rc->st, rc->run->id, &k);
	if (kill->pid != rc->target->pid) {
		char detail[600];
		oom_kill_detail(kill, memcg, detail, sizeof(detail));
		store_add_event(rc->st, rc->run->id, realtime_ns, "oom_kill", kill->pid, detail);
	}
}

/* A kill the engine reported is stored once its line has told the cgroup (it comes
 * milliseconds later), or without it after KILL_LINE_WAIT_NS, or at the end: kept
 * here meanwhile. When full, the oldest is stored as it is. */
static void wait_for_line(struct recorder *rc, const struct kmsg_oom *kill, int64_t t)
{
	if (!rc->kwait)
		rc->kwait = xmalloc(KILLS_SEEN * sizeof(*rc->kwait));
	if (rc->nkwait == KILLS_SEEN) {
		store_kill(rc, &rc->kwait[0].kill, "", rc->kwait[0].t);
		memmove(rc->kwait, rc->kwait + 1, --rc->nkwait * sizeof(*rc->kwait));
	}
	struct kill_wait *w = &rc->kwait[rc->nkwait++];
	w->kill = *kill;
	w->t = t;
	w->due = mono_ns() + KILL_LINE_WAIT_NS;
}

/* The line of a kill waiting for it: stored with what the line adds. 1, or 0 when
 * none waited. */
static int line_came(struct recorder *rc, const struct kmsg_oom *line, const char *memcg)
{
	for (size_t i = 0; i < rc->nkwait; i++) {
		struct kill_wait *w = &rc->kwait[i];
		if (w->kill.pid != line->pid)
			continue;
		w->kill.memcg = line->memcg;
		w->kill.have |= line->have & KMSG_F_SCOPE;
		store_kill(rc, &w->kill, memcg, w->t);
		memmove(w, w + 1, (--rc->nkwait - i) * sizeof(*w));
		return 1;
	}
	return 0;
}

void rec_store_waiting_kills(struct recorder *rc, int at_end)
{
	int64_t now = mono_ns();
	size_t kept = 0;
	for (size_t i = 0; i < rc->nkwait; i++) {
		if (at_end || now >= rc->kwait[i].due)
			store_kill(rc, &rc->kwait[i].kill, "", rc->kwait[i].t);
		else
			rc->kwait[kept++] = rc->kwait[i];
	}
	rc->nkwait = kept;
}

/* One OOM kill of the run, from the engine (oom:mark_victim) or its kernel line:
 * counted, stored, its hook run, and the kernel's figures offered to its process. The
 * second report of a kill counts for nothing, but the log's names the cgroup. */
static void count_kill(struct recorder *rc, const struct kmsg_oom *kill, const char *memcg,
		       int64_t realtime_ns)
{
	struct run *r = rc->run;
	if (seen_kill(rc, kill->pid, realtime_ns)) {
		if (!(kill->have & KMSG_F_SCOPE))
			return;	/* the engine's, after the line */
		line_came(rc, kill, memcg);
		if (kill->pid != rc->target->pid || (rc->ev.kill.have & KMSG_F_SCOPE))
			return;
		/* the target's kill from the engine: the line tells what ran out */
		rc->ev.kill.memcg = kill->memcg;
		rc->ev.kill.have |= kill->have & KMSG_F_SCOPE;
		if (memcg && *memcg && !rc->ev.memcg[0])
			strlcpy_rsw(rc->ev.memcg, memcg, sizeof(rc->ev.memcg));
		return;
	}
	if (kill->have & KMSG_F_SCOPE)
		store_kill(rc, kill, memcg, realtime_ns);
	else
		wait_for_line(rc, kill, realtime_ns);	/* the engine's: its line is to come */
	rc->kills_named++;
	count_oom_kills(rc);
	rec_fire_hook(rc, "oom_kill", kill->pid, kill->comm,
		      kill->anon_rss + kill->file_rss + kill->shmem_rss);
	/* in the command's cgroup, but not recorded (--no-tree): counted, and no part of
	 * the run's peak */
	if (!rc->set_open && kill->pid != rc->target->pid)
		return;
	/* The kernel's figures at the kill are the victim's last and often its highest: a
	 * process that grows fast is killed between two samples. */
	int64_t elapsed = realtime_ns - r->started_at;
	/* judged at the kill's own time: its line may be read seconds after the exit
	 * record ended the entry, on a loaded machine */
	long i = kill_entry(rc, kill->pid, elapsed);
	if (i < 0)	/* a process no sample saw */
		i = (long)proclog_add(&rc->log, kill->pid, 0, kill->comm, elapsed, 0, 0);
	rec_proc_peak(rc, (size_t)i, kill->anon_rss + kill->file_rss + kill->shmem_rss, realtime_ns,
		      PEAK_FROM_OOM);
	proclog_end(&rc->log, (size_t)i, elapsed, PROC_OOM_KILLED, -1, SIGKILL);
	if (kill->pid != rc->target->pid)
		return;
	rc->target_kill_counted = 1;
	rc->ev.kill_seen = true;
	rc->ev.kill = *kill;
	rc->ev.kill_at = realtime_ns;
	strlcpy_rsw(rc->ev.memcg, memcg, sizeof(rc->ev.memcg));
}

/* A set's kill line whose process is not known yet: kept for rec_settle_kills. When full,
 * the oldest goes. */
static void pend_kill(struct recorder *rc, const struct kmsg_oom *kill, int64_t realtime_ns)
{
	if (!rc->set_open || kill->pid <= 0)
		return;	/* one process: only its own kills are the run's */
	if (!rc->pkills)
		rc->pkills = xmalloc(PENDING_KILLS * sizeof(*rc->pkills));
	if (rc->npkills == PENDING_KILLS)
		memmove(rc->pkills, rc->pkills + 1, --rc->npkills * sizeof(*rc->pkills));
	struct pending_kill *p = &rc->pkills[rc->npkills++];
	p->t = realtime_ns;
	p->pid = kill->pid;
	p->memcg = kill->memcg;
	p->have = kill->have;
	strlcpy_rsw(p->comm, kill->comm, sizeof(p->comm));
	p->total_vm = kill->total_vm;
	p->anon_rss = kill->anon_rss;
	p->file_rss = kill->file_rss;
	p->shmem_rss = kill->shmem_rss;
	p->pgtables = kill->pgtables;
}

/* The waiting kill lines whose process is known now are counted; those that waited
 * long enough (or all, at the end) are dropped: they were of other processes. */
void rec_settle_kills(struct recorder *rc, int at_end)
{
	int64_t now = mono_ns() - rc->start_mono;
	int64_t wait = PENDING_KILL_INTERVALS * rc->opts->interval_ns + RECENT_NS;
	size_t kept = 0;
	for (size_t k = 0; k < rc->npkills; k++) {
		struct pending_kill p = rc->pkills[k];
		int64_t at = p.t - rc->run->started_at;
		if (kill_entry(rc, p.pid, at) >= 0) {
			struct kmsg_oom o;
			memset(&o, 0, sizeof(o));
			o.kind = KMSG_OOM_KILLED;
			o.pid = p.pid;
			o.memcg = p.memcg;
			o.have = p.have;
			strlcpy_rsw(o.comm, p.comm, sizeof(o.comm));
			o.total_vm = p.total_vm;
			o.anon_rss = p.anon_rss;
			o.file_rss = p.file_rss;
			o.shmem_rss = p.shmem_rss;
			o.pgtables = p.pgtables;
			count_kill(rc, &o, "", p.t);
		} else if (!at_end && now - at < wait) {
			rc->pkills[kept++] = p;
		}
	}
	rc->npkills = kept;
	rec_store_waiting_kills(rc, at_end);
}

/* The OOM killer chose a process the engine tracks: the run's, certainly (the target,
 * or a member of its tree, even one no sample saw), counted now with the kernel's
 * figures of that moment. */
static void on_victim(void *ctx, const struct kpeak_victim *v)
{
	struct recorder *rc = ctx;
	struct kmsg_oom o;
	memset(&o, 0, sizeof(o));
	o.kind = KMSG_OOM_KILLED;
	o.pid = v->pid;
	strlcpy_rsw(o.comm, v->comm, sizeof(o.comm));
	o.uid = v->uid;
	o.total_vm = v->total_vm;
	o.anon_rss = v->anon_rss;
	o.file_rss = v->file_rss;
	o.shmem_rss = v->shmem_rss;
	o.pgtables = v->pgtables;
	o.oom_score_adj = v->oom_score_adj;
	o.have = KMSG_F_TOTAL_VM | KMSG_F_ANON_RSS | KMSG_F_FILE_RSS | KMSG_F_SHMEM_RSS |
		 KMSG_F_UID | KMSG_F_PGTABLES | KMSG_F_OOM_SCORE_ADJ;
	count_kill(rc, &o, "", v->at + rc->real_off);
}

/* A member the engine saw moved out of the cgroup: it is no longer the run's, and its
 * exit record, when it comes, is another process's (apply_exit). */
static void on_left(void *ctx, pid_t pid, int64_t at)
{
	struct recorder *rc = ctx;
	int64_t elapsed = at - rc->start_mono;
	long i = proclog_find(&rc->log, pid);
	if (i >= 0 && strcmp(rc->log.p[i].ended, PROC_RUNNING) == 0)
		proclog_end(&rc->log, (size_t)i, elapsed > 0 ? elapsed : 0, PROC_LEFT, -1, -1);
	rec_stacks_left(rc, pid);
}

void rec_drain_victims(struct recorder *rc)
{
	if (rc->kpeak) {
		struct kpeak_handlers h = { NULL, on_victim, on_left, rc };
		kpeak_drain(rc->kpeak, &h);
	}
}

void rec_drain_kills(struct recorder *rc)
{
	rec_drain_victims(rc);
	oom_watch_drain(&rc->oom, rec_on_oom_kill, rc);
}

void rec_on_oom_kill(void *ctx, const struct kmsg_oom *kill, const char *memcg,
		     int64_t realtime_ns)
{
	struct recorder *rc = ctx;
	if (kill_is_ours(rc, kill, memcg, realtime_ns - rc->run->started_at))
		count_kill(rc, kill, memcg, realtime_ns);
	else
		pend_kill(rc, kill, realtime_ns);
}

/* The rise of the OOM kill count of a cgroup that holds only the run's processes, as
 * the last sample read it (or, at_end, as it is now): the floor of run->oom_kills. */
void rec_cgroup_kills(struct recorder *rc, int at_end)
{
	if (!rc->target->cg_sample || !rc->oom.cg_known)
		return;
	uint64_t n = rc->sampler.cg_oom_kill;
	int known = rc->sampler.cg_oom_known;
	if (at_end) {
		struct oom_evidence ev;
		memset(&ev, 0, sizeof(ev));
		oom_watch_counters(&rc->oom, &ev);
		known = ev.cg_known;
		n = rc->oom.cg_start + ev.cg_delta;
	}
	if (known && n > rc->oom.cg_start && (int64_t)(n - rc->oom.cg_start) > rc->cg_kills)
		rc->cg_kills = (int64_t)(n - rc->oom.cg_start);
	count_oom_kills(rc);
}

/* The target died of SIGKILL: was it the OOM killer? The kernel logs the kill line
 * before the victim exits, so it is normally read by now; when the counters rec_say an OOM
 * kill happened but no line was read yet, give the log a moment. */
static void attribute_kill(struct recorder *rc, int sig)
{
	struct run *r = rc->run;
	struct oom_evidence *ev = &rc->ev;
	struct oom_verdict v;
	rec_drain_kills(rc);
	oom_watch_counters(&rc->oom, ev);
	int64_t deadline = mono_ns() + KILL_LINE_WAIT_NS;
	/* Named by the engine alone, the kill's line is still to come (it is printed just
	 * after): it says which cgroup's limit, or the host, ran out. */
	while (sig == SIGKILL && (!ev->kill_seen || !(ev->kill.have & KMSG_F_SCOPE)) &&
	       oom_watch_fd(&rc->oom) >= 0 && (ev->cg_delta || ev->vm_delta || ev->kill_seen) &&
	       mono_ns() < deadline) {
		struct pollfd p = { oom_watch_fd(&rc->oom), POLLIN, 0 };
		poll(&p, 1, KILL_LINE_POLL_MS);
		rec_drain_kills(rc);
	}
	ev->signal = sig;
	ev->cg_path = rc->target->cg_path;
	oom_decide(ev, &v);
	if (v.oom && !rc->target_kill_counted) {
		/* the counters rec_say so, but no kernel line named it */
		rc->kills_unnamed++;
		count_oom_kills(rc);
		rc->target_kill_counted = 1;
		if (rc->root >= 0)
			proclog_end(&rc->log, (size_t)rc->root, r->ended_at - r->started_at,
				    PROC_OOM_KILLED, -1, SIGKILL);
	}
	if (v.oom) {
		strlcpy_rsw(r->outcome, OUTCOME_OOM_KILLED, sizeof(r->outcome));
		r->oom_at = ev->kill_seen ? ev->kill_at : r->ended_at;
		r->oom_rss_known = v.rss_known;
		r->oom_anon_rss = v.anon_rss;
		free(r->oom_memcg);
		r->oom_memcg = xstrdup(v.memcg);
	}
	if (v.note[0]) {
		free(r->outcome_note);
		r->outcome_note = xstrdup(v.note);
	}
	if (v.event_kind)
		store_add_event(rc->st, r->id, v.oom ? r->oom_at : r->ended_at, v.event_kind,
				rc->target->pid, v.detail);
	if (v.oom && !ev->kill_seen)	/* no kernel line: rec_on_oom_kill did not run the hook */
		rec_fire_hook(rc, "oom_kill", rc->target->pid, NULL, r->last_rss);
}

#define PRE_EXEC_SLACK (1024 * 1024)

/* The program's name in a command line as the run stores it ("/bin/true -x": "true"),
 * for a process no read named. */
static void command_name(const char *cmdline, char *out, size_t n)
{
	const char *p = cmdline ? cmdline : "", *base = p;
	size_t len = 0;
	while (*p == '\'' || *p == '"')
		base = ++p;
	for (; *p && *p != ' ' && *p != '\'' && *p != '"'; p++)
		if (*p == '/')
			base = p + 1;
	len = (size_t)(p - base);
	if (len >= n)
		len = n - 1;
	memcpy(out, base, len);
	out[len] = '\0';
}

/* The target has exited (or is a zombie): find out how. */
void rec_target_ended(struct recorder *rc)
{
	struct run *r = rc->run;
	int ws = 0, e;
	uint64_t maxrss = 0;
	struct rusage ru;
	/* It ended now (its pidfd said so); the wait for its status below is not part of
	 * the run. A non-child's status is known once its parent reaps it; give that parent
	 * a moment, then rec_say we do not know rather than guess. */
	r->ended_at = real_ns();
	rc->end_mono = mono_ns();
	for (int tries = 0; ; tries++) {
		e = target_exit_status(rc->target->pidfd, rc->target->is_child, &ws, &ru);
		if (!target_exit_ask_again(e, tries))
			break;
		poll(NULL, 0, EXIT_STATUS_POLL_MS);
	}
	if (e == 0 && rc->target->is_child) {
		maxrss = ru.ru_maxrss > 0 ? (uint64_t)ru.ru_maxrss * 1024 : 0;
		rc->ru = ru;
		rc->have_ru = 1;
	}
	int64_t end = r->ended_at - r->started_at;
	rec_drain_exits(rc);	/* the target's record comes before its pidfd is readable */
	/* wait4's peak is the largest of the command and of every descendant reaped in
	 * its tree: the run's when the run is that tree (not with --no-tree). It also
	 * holds the child's footprint before its exec (a copy of this recorder, which
	 * still grows by a few pages in the exec), so only a figure above that one by
	 * PRE_EXEC_SLACK is surely the command's. */
	uint64_t before = rc->target->launch.pre_exec_rss;
	if (rc->set_open && before < UINT64_MAX - PRE_EXEC_SLACK &&
	    maxrss > before + PRE_EXEC_SLACK)
		rec_run_peak(rc, maxrss, r->ended_at, PEAK_FROM_WAIT);
	if (rc->root < 0 && rc->target->is_child && maxrss) {
		/* No sample and no exit record saw the command: it ended while the
		 * recording started, with exit records off (not root). wait4's figure is
		 * all there is; it holds the copy before the exec too, so it is the
		 * command's peak or, for one smaller than that copy, above it. */
		char comm[PROC_NAME_MAX];
		command_name(r->target, comm, sizeof(comm));
		rc->root = (long)proclog_add(&rc->log, rc->target->pid, getpid(), comm, 0, 0, 0);
		rec_proc_peak(rc, (size_t)rc->root, maxrss, r->ended_at, PEAK_FROM_WAIT);
	}
	if (e < 0) {
		strlcpy_rsw(r->outcome, OUTCOME_EXITED, sizeof(r->outcome));
		r->exit_code = -1;
		if (rc->root >= 0)
			proclog_end(&rc->log, (size_t)rc->root, end, PROC_GONE, -1, -1);
	} else if (WIFSIGNALED(ws)) {
		strlcpy_rsw(r->outcome, OUTCOME_SIGNALED, sizeof(r->outcome));
		r->signal = WTERMSIG(ws);
		if (rc->root >= 0)
			proclog_end(&rc->log, (size_t)rc->root, end, PROC_SIGNALED, -1, r->signal);
		attribute_kill(rc, r->signal);
	} else {
		strlcpy_rsw(r->outcome, OUTCOME_EXITED, sizeof(r->outcome));
		r->exit_code = WEXITSTATUS(ws);
		if (rc->root >= 0)
			proclog_end(&rc->log, (size_t)rc->root, end, PROC_EXITED, r->exit_code, -1);
	}
	rc->stop = TARGET_ENDED;
}

/* The OOM kill among the processes that ended since the sample before the last (the
 * last ones of a -g cgroup), or -1. */
static long last_oom_victim(const struct recorder *rc)
{
	for (size_t i = rc->log.n; i-- > 0;) {
		const struct proc_summary *p = &rc->log.p[i];
		if (p->end_ns >= rc->prev_elapsed && strcmp(p->ended, PROC_OOM_KILLED) == 0)
			return (long)i;
	}
	return -1;
}

/* -g: the cgroup became empty or was removed. When its last processes went because the
 * OOM killer killed one of them, that is how the run ended. */
void rec_cgroup_ended(struct recorder *rc)
{
	struct run *r = rc->run;
	r->ended_at = real_ns();
	rc->end_mono = mono_ns();
	/* the kill line comes before the exit; give one that is late a moment */
	int64_t deadline = mono_ns() + CGROUP_KILL_LINE_WAIT_NS;
	rec_drain_kills(rc);
	rec_drain_exits(rc);
	rec_settle_kills(rc, 0);
	while (last_oom_victim(rc) < 0 && oom_watch_fd(&rc->oom) >= 0 && mono_ns() < deadline) {
		struct pollfd p = { oom_watch_fd(&rc->oom), POLLIN, 0 };
		if (poll(&p, 1, KILL_LINE_POLL_MS) <= 0)
			break;
		rec_drain_kills(rc);
		rec_drain_exits(rc);
		rec_settle_kills(rc, 0);
	}
	long v = last_oom_victim(rc);
	free(r->outcome_note);
	if (v >= 0) {
		const struct proc_summary *p = &rc->log.p[v];
		strlcpy_rsw(r->outcome, OUTCOME_OOM_KILLED, sizeof(r->outcome));
		r->signal = SIGKILL;
		r->oom_at = r->started_at + p->end_ns;
		r->outcome_note = xstrdup("the cgroup became empty: its last processes ended with "
					  "an OOM kill");
	} else {
		strlcpy_rsw(r->outcome, OUTCOME_EXITED, sizeof(r->outcome));
		r->outcome_note = xstrdup(rc->set_end == -ENODEV ? "the cgroup was removed"
								  : "the cgroup became empty");
	}
	r->exit_code = -1;
	rc->stop = TARGET_ENDED;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static int same_context(const struct sample *a, const struct sample *b)
{
	unsigned k = SAMPLE_CPU | SAMPLE_IO;
	return (a->have & k) == (b->have & k) && a->cpu_user_ns == b->cpu_user_ns &&
	       a->cpu_sys_ns == b->cpu_sys_ns && a->minflt == b->minflt &&
	       a->majflt == b->majflt && a->read_bytes == b->read_bytes &&
	       a->write_bytes == b->write_bytes;
}

/* The closing sample of a run whose target ended. Samples come on the timer, so the
 * last one may be up to an interval before the end, and a command shorter than the
 * recording's start has none: what was done since (a perl of 0.9 s sampled every
 * second, the members of a make that ended between samples) would be in no sample,
 * and show, export and the charts take the context from the samples. So the run gets
 * one more sample at its end, when its context moved since the last one or it has
 * none: its context is the run's total (every process's most complete figures,
 * summed: proclog_total), and for a launched tree never below wait4's rusage, exact
 * for the command and every descendant reaped in its tree. Nothing is read at the end:
 * its memory figures repeat the last sample's (none: 0), so that no peak, mean or last
 * figure moves. Called once every process's last read is in the log. */
static void closing_sample(struct recorder *rc)
{
	struct run *r = rc->run;
	struct sample s;
	if (rc->stop != TARGET_ENDED || !rc->sampler_open || !rc->end_mono)
		return;
	if (r->samples) {
		s = rc->last;
		s.have &= SAMPLE_CGROUP | SAMPLE_PSI | SAMPLE_PSI_FULL | SAMPLE_CG_PSI |
			  SAMPLE_CG_PSI_FULL | SAMPLE_CPU | SAMPLE_IO;
	} else {
		memset(&s, 0, sizeof(s));
		s.mem_available = rc->sampler.mem_last.available;
	}
	proclog_total(&rc->log, &s);
	if (rc->have_ru && rc->set_open) {
		int had = (s.have & SAMPLE_CPU) != 0;
		s.have |= SAMPLE_CPU;
		s.cpu_user_ns = max_u64(had ? s.cpu_user_ns : 0, tv_ns(&rc->ru.ru_utime));
		s.cpu_sys_ns = max_u64(had ? s.cpu_sys_ns : 0, tv_ns(&rc->ru.ru_stime));
		s.minflt = max_u64(had ? s.minflt : 0, (uint64_t)rc->ru.ru_minflt);
		s.majflt = max_u64(had ? s.majflt : 0, (uint64_t)rc->ru.ru_majflt);
	}
	rec_cpu_from_exec(rc, &s);
	if (r->samples && same_context(&s, &rc->last))
		return;
	int64_t end = rc->end_mono - rc->start_mono;
	s.elapsed_ns = !r->samples || end > rc->last.elapsed_ns ? end : rc->last.elapsed_ns + 1;
	if (s.elapsed_ns < 0)
		s.elapsed_ns = 0;
	rec_hand_over(rc, &s, r->started_at + s.elapsed_ns);
}

/* n things the engine could not keep, past one of its tables: said (n, then what) and
 * stored as an event of kind with detail dropped=N. */
static void note_drops(struct recorder *rc, const char *kind, uint64_t n, const char *what)
{
	char detail[64];
	if (!n)
		return;
	snprintf(detail, sizeof(detail), "dropped=%llu", (unsigned long long)n);
	store_add_event(rc->st, rc->run->id, real_ns(), kind, rc->target->pid, detail);
	rec_say(rc, RECORDER_NOTE, "rsswatch: %llu %s", (unsigned long long)n, what);
}

/* Processes the eBPF engine could not track (its table was full): its peak then counts
 * the others only, a lower bound that wins only above every other figure. GPU blocks
 * the probes could not keep: between NVML reads they are not counted, so a spike made
 * of them is missed. */
static void note_engine_drops(struct recorder *rc)
{
	struct kpeak_figures f;
	struct kpeak_gpu g;
	if (!rc->kpeak)
		return;
	kpeak_read(rc->kpeak, &f);
	note_drops(rc, "kernel_peaks_incomplete", f.dropped, "processes were past the eBPF "
		   "engine's table: its peak counts the others only");
	if (!kpeak_gpu_files(rc->kpeak))
		return;
	kpeak_gpu_read(rc->kpeak, &g);
	note_drops(rc, "gpu_probes_incomplete", g.dropped, "GPU blocks were past the probes' "
		   "table: between NVML reads they are not counted");
}

/* How the run ended, settled: the OOM kills and exit records that came in with the
 * end, its outcome when it was stopped, the processes that vanished, every process's
 * last counters, the closing sample and the largest process. */
void rec_settle_end(struct recorder *rc, int e)
{
	struct run *run = rc->run;
	if (rc->set_open)
		rec_drain_kills(rc);
	rec_drain_exits(rc);
	rec_kernel_peak(rc);	/* after the exit records and wait4: its time is the peak's */
	note_engine_drops(rc);
	rec_settle_kills(rc, 1);
	if (rc->sampler_open)
		rec_cgroup_kills(rc, 1);	/* the cgroup is still there: its count is final */
	/* The set's last figures are stored; members left are not "exits". */
	rec_note_untracked(rc, 1);
	if (rc->stop == SIGNALED || rc->stop == DURATION || (e < 0 && rc->stop == RUNNING)) {
		strlcpy_rsw(run->outcome, OUTCOME_STOPPED, sizeof(run->outcome));
		run->ended_at = real_ns();
	}
	rec_end_vanished(rc);
	if (rc->sampler.cg_peak_rose)
		run->peak_cgroup_exact = 1;	/* the run reached it: an exact peak of the run */
	/* the last counters of processes still alive */
	if (rc->set_open)
		proclog_read_set(&rc->log, &rc->set, 1);
	else if (rc->root >= 0 && rc->sampler_open)
		proclog_read(&rc->log, (size_t)rc->root, &rc->sampler.stat_last,
			     rc->sampler.have_stat, &rc->sampler.io_last, rc->sampler.have_io);
	closing_sample(rc);
	rec_note_lost_exits(rc);
	long big = proclog_largest(&rc->log);
	if (big >= 0) {
		run->peak_process_rss = rc->log.p[big].peak_rss;
		run->peak_process_pid = rc->log.p[big].pid;
		free(run->peak_process_comm);
		run->peak_process_comm = xstrdup(rc->log.p[big].comm);
	}
}

/* The end, told and written: to the /metrics scrapes still to come, to the hooks
 * (their status is part of the run), and to the store, on this thread, with retries
 * for FINISH_GIVE_UP_NS. Returns the store's last error, or 0. */
int rec_write_end(struct recorder *rc)
{
	struct run *run = rc->run;
	metrics_server_end(rc->opts->metrics, run);
	hooks_finish(rc->opts->hooks, rc->st, run->id);
	int fe;
	int64_t give_up = mono_ns() + FINISH_GIVE_UP_NS;
	while ((fe = store_run_finish(rc->st, run)) < 0 && mono_ns() < give_up)
		poll(NULL, 0, FINISH_RETRY_MS);
	if (fe == 0)
		rec_stages_end(rc);	/* every mark is stored now */
	proclog_order_starts(&rc->log);
	rec_root_cpu_from_exec(rc);
	while (fe == 0 && (fe = store_put_processes(rc->st, run->id, rc->log.p, rc->log.n)) < 0 &&
	       mono_ns() < give_up)
		poll(NULL, 0, FINISH_RETRY_MS);
	while (fe == 0 && (fe = rec_stacks_write(rc)) < 0 && mono_ns() < give_up)
		poll(NULL, 0, FINISH_RETRY_MS);
	return fe;
}
