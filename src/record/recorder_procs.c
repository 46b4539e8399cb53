/* Every process of a run: the kernel's exit records (each ended process's exact peak
 * and how it ended), the members of a set joining and leaving, those that vanished,
 * and the fold of those past PROCLOG_KEEP. Part of the recorder (recorder_int.h). */
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

/* A process of the run first seen now (elapsed ns). Those there at the first sample
 * of an attached target existed before the recording: their VmHWM is history. */
size_t rec_proc_seen(struct recorder *rc, pid_t pid, const struct proc_status *st,
		     int64_t elapsed)
{
	int old = rc->run->samples == 0 && !rc->target->is_child;
	size_t i = proclog_add(&rc->log, pid, st->ppid, st->name, elapsed, old, st->mem.hwm);
	if (pid == rc->target->pid && rc->hwm_reset_from) {
		/* --reset-peak: VmHWM restarted at the attach; what it says now is the run's */
		rc->log.p[i].hwm_before = (int64_t)rc->hwm_reset_from;
		rc->log.x[i].old = 0;
		if (!rc->run->hwm_reset) {
			char detail[64];
			snprintf(detail, sizeof(detail), "hwm_before_bytes=%llu",
				 (unsigned long long)rc->hwm_reset_from);
			store_add_event(rc->st, rc->run->id, rc->run->started_at + elapsed,
					"peak_reset", pid, detail);
			rc->run->hwm_reset = 1;
		}
	}
	return i;
}

/* The entry of the process pid of the run: alive, or ended less than RECENT_NS before
 * at (elapsed ns: when the news happened; news of its end may come before or after
 * other news of it); an older entry belongs to an earlier use of the pid. -1 when
 * none. */
static long entry_at(const struct recorder *rc, pid_t pid, int64_t at)
{
	long i = proclog_find(&rc->log, pid);
	if (i >= 0 && rc->log.p[i].end_ns >= 0 && rc->log.p[i].end_ns + RECENT_NS < at)
		return -1;
	return i;
}

static long current_entry(const struct recorder *rc, pid_t pid)
{
	return entry_at(rc, pid, mono_ns() - rc->start_mono);
}

/* A member of a set starting or ending, as an event at CLOCK_REALTIME t; more: the
 * exit's figure. comm is the target's own text, stored as it is. */
static void proc_event(struct recorder *rc, int64_t t, int start, pid_t pid, pid_t ppid,
		       const char *comm, const char *more)
{
	char detail[160];
	if (start)
		snprintf(detail, sizeof(detail), "ppid=%d comm=%s", (int)ppid, comm);
	else
		snprintf(detail, sizeof(detail), "comm=%s %s", comm, more);
	store_add_event(rc->st, rc->run->id, t, start ? "proc_start" : "proc_exit", pid, detail);
}

/* A set's context counts a live member's reads; once a process is not a live member
 * (it left, or lived between two samples), the ended sum (record/proclog.h) holds what
 * its sources rec_say it did. A record of a member still alive at the last read waits: the
 * read that finds it gone moves it there (proclog_read_set), so nothing counts twice. */
static void ended_sum(struct recorder *rc, size_t i, pid_t pid)
{
	if (rc->set_open && !procset_live(&rc->set, pid))
		proclog_sum(&rc->log, i);
}

/* One exit record: the exact peak of a process of the run, its last name and how it
 * ended. Returns 0, or -ENOENT when the process is not (yet) known to be the run's.
 * A process known only from its record (it lived between two samples) gets its start
 * and exit events here, at the times the record gives. */
static int apply_exit(struct recorder *rc, const struct taskstats_exit *x)
{
	/* The record does not rec_say when it was sent: the process ended when it was read
	 * (read_ns; a set's are read as they come), or, without that, now. Its peak is
	 * placed at the sample that applies it, never after the run's end (the target's
	 * own record is read once its end is known). */
	int64_t at = real_ns();
	if (rc->run->ended_at && at > rc->run->ended_at)
		at = rc->run->ended_at;
	int64_t now = mono_ns() - rc->start_mono;
	int64_t end = x->read_ns ? x->read_ns - rc->start_mono : now;
	end = end > now ? now : end < 0 ? 0 : end;
	pid_t tgid = x->tgid ? x->tgid : x->pid;
	long i = current_entry(rc, tgid);
	if (i < 0 && x->pid == tgid) {
		/* Read late (a loaded machine): the entry of the process that lived when the
		 * record says, as one its kill line made, ended at the kill, seconds ago. */
		int64_t life = (int64_t)x->etime_us * 1000;
		i = proclog_find_at(&rc->log, tgid, end, 0, life + KILL_LATE_NS);
	}
	if (i >= 0 && strcmp(rc->log.p[i].ended, PROC_LEFT) == 0)
		return -ENOENT;	/* it left the cgroup: another process's record now */
	int unseen = 0;
	if (x->scope == TASKSTATS_TGID) {	/* the CPU sums of its threads */
		if (i < 0)
			return -ENOENT;
		proclog_exit_record(&rc->log, (size_t)i, x);
		ended_sum(rc, (size_t)i, tgid);
		return 0;
	}
	if (i < 0 && rc->root < 0 && x->pid == tgid && tgid == rc->target->pid &&
	    rc->target->is_child) {
		/* The launched command ended before any sample saw it (the shortest ones
		 * end while the recording starts): its record makes its entry. */
		int64_t born = end - (int64_t)x->etime_us * 1000;
		born = born > 0 ? born : 0;
		i = rc->root = (long)proclog_add(&rc->log, tgid, x->ppid, x->comm, born, 0, 0);
	}
	if (i < 0) {
		/* One that lived between two samples, in a set: its parent is the run's. */
		if (!rc->set_open || x->pid != tgid || x->ppid <= 0 ||
		    current_entry(rc, x->ppid) < 0)
			return -ENOENT;
		int64_t born = end - (int64_t)x->etime_us * 1000;
		struct proc_status st;
		memset(&st, 0, sizeof(st));
		st.ppid = x->ppid;
		strlcpy_rsw(st.name, x->comm, sizeof(st.name));
		born = born > 0 ? born : 0;
		i = (long)proclog_add(&rc->log, tgid, x->ppid, x->comm, born, 0, 0);
		proc_event(rc, rc->run->started_at + born, 1, tgid, x->ppid, x->comm, NULL);
		unseen = 1;
	} else if (rc->log.p[i].ppid <= 0 && x->pid == tgid && x->ppid > 0) {
		/* first known from its kill line: the record says where and when it began */
		int64_t born = end - (int64_t)x->etime_us * 1000;
		rc->log.p[i].ppid = x->ppid;
		if (born >= 0 && born < rc->log.p[i].first_ns)
			rc->log.p[i].first_ns = born;
	}
	if (x->pid == tgid && x->comm[0])
		strlcpy_rsw(rc->log.p[i].comm, x->comm, sizeof(rc->log.p[i].comm));
	proclog_exit_record(&rc->log, (size_t)i, x);
	ended_sum(rc, (size_t)i, tgid);
	if (x->have & TASKSTATS_HAVE_XACCT)
		rec_proc_peak(rc, (size_t)i, x->hiwater_rss, at, PEAK_FROM_EXIT);
	/* The process ended with this thread (AGROUP; before version 12, the leader). */
	if ((x->flags & AGROUP) || (!(x->have & TASKSTATS_HAVE_TGID) && x->pid == tgid)) {
		int ws = (int)x->exit_code;
		if (WIFSIGNALED(ws))
			proclog_end(&rc->log, (size_t)i, end, PROC_SIGNALED, -1, WTERMSIG(ws));
		else
			proclog_end(&rc->log, (size_t)i, end, PROC_EXITED, WEXITSTATUS(ws), -1);
		/* Its exit event, at the end the record gives: for one known only from it,
		 * and for a member whose leaving no sample has seen yet (at -i 1h, or a
		 * tree's target ending first, none may ever see it). */
		if (!rc->log.x[i].exit_said &&
		    (unseen || (rc->set_open && tgid != rc->target->pid && rc->run->samples))) {
			char more[48];
			snprintf(more, sizeof(more), "peak_rss=%llukB",
				 (unsigned long long)(rc->log.p[i].peak_rss / 1024));
			proc_event(rc, rc->run->started_at + end, 0, tgid, 0, rc->log.p[i].comm,
				   more);
			rc->log.x[i].exit_said = 1;
		}
	}
	return 0;
}

/* Keeps x, of a process not known yet, for the next drain (pending[]). On a busy
 * host, past PENDING_EXITS_MAX the unknown ones wait no longer. */
static void wait_record(struct recorder *rc, const struct taskstats_exit *x)
{
	if (rc->npending == rc->cappending) {
		if (rc->cappending >= PENDING_EXITS_MAX) {
			rc->exits_dropped++;
			return;
		}
		/* both arrays: they trade places at every drain */
		rc->cappending *= 2;
		rc->pending = xrealloc(rc->pending, rc->cappending * sizeof(*rc->pending));
		rc->retry = xrealloc(rc->retry, rc->cappending * sizeof(*rc->retry));
	}
	rc->pending[rc->npending++] = *x;
}

static int set_may_hold(const struct recorder *rc, const struct taskstats_exit *x)
{
	return !rc->set_open || procset_may_hold(&rc->set, x->tgid ? x->tgid : x->pid);
}

/* The records in doubt[] (of processes the set did not hold when they were read),
 * once the connector is drained after them: every fork before their exit is known
 * then, so those the set holds now go to keep, and the rest are other processes'. */
static void settle_doubt(struct recorder *rc,
			 void (*keep)(struct recorder *, const struct taskstats_exit *))
{
	size_t n = rc->ndoubt;
	if (!n)
		return;
	procset_take_events(&rc->set);
	rc->ndoubt = 0;
	for (size_t k = 0; k < n; k++) {
		if (set_may_hold(rc, &rc->doubt[k]))
			keep(rc, &rc->doubt[k]);
		else
			rc->exits_others++;
	}
}

/* Puts x in doubt[], settled first when it is full. */
static void doubt_record(struct recorder *rc, const struct taskstats_exit *x,
			 void (*keep)(struct recorder *, const struct taskstats_exit *))
{
	if (rc->ndoubt == DOUBT_EXITS)
		settle_doubt(rc, keep);
	rc->doubt[rc->ndoubt++] = *x;
}

/* One record at a drain: applied, or, for a process not known yet that the set may
 * hold, kept for the next drain. A group's CPU sums do not wait: its threads'
 * records add up to them. */
static void on_exit_record(void *ctx, const struct taskstats_exit *x)
{
	struct recorder *rc = ctx;
	if (apply_exit(rc, x) == 0 || x->scope != TASKSTATS_PID || !rc->pending)
		return;
	if (set_may_hold(rc, x))
		wait_record(rc, x);
	else
		doubt_record(rc, x, wait_record);
}

/* Applies the records xs[0..*n) that it can, again while any applies: a chain of
 * processes that lived between two samples sends the deepest's record first, before
 * its parent is known. Keeps those left, in xs. */
static void apply_waiting(struct recorder *rc, struct taskstats_exit *xs, size_t *n)
{
	for (int more = 1; more;) {
		more = 0;
		for (size_t k = 0; k < *n;) {
			if (apply_exit(rc, &xs[k]) == 0) {
				xs[k] = xs[--*n];
				more = 1;
			} else {
				k++;
			}
		}
	}
}

/* Reads the exit records waiting. One whose parent joined the run in the same drain is
 * placed now; those left from the last drain are tried once more (a parent's record
 * may come a drain after its child's), then dropped. */
void rec_drain_exits(struct recorder *rc)
{
	if (taskstats_fd(&rc->ts) < 0 && !rc->nearly)
		return;
	size_t nretry = rc->npending, known = rc->log.n;
	struct taskstats_exit *again = rc->pending;	/* those of the last drain */
	rc->pending = rc->retry;
	rc->retry = again;
	rc->npending = 0;
	for (size_t k = 0; k < rc->nearly; k++)
		on_exit_record(rc, &rc->early[k]);
	rc->nearly = 0;
	if (taskstats_fd(&rc->ts) >= 0 && taskstats_drain(&rc->ts, on_exit_record, rc) < 0) {
		taskstats_close(&rc->ts);
		rc->run->exit_records = 0;
	}
	settle_doubt(rc, wait_record);
	if (rc->log.n != known)
		apply_waiting(rc, rc->pending, &rc->npending);
	known = rc->log.n;
	apply_waiting(rc, rc->retry, &nretry);
	if (rc->log.n != known)
		apply_waiting(rc, rc->pending, &rc->npending);
}

static void keep_early(struct recorder *rc, const struct taskstats_exit *x)
{
	if (rc->nearly == rc->capearly) {	/* never past EARLY_EXITS_MAX: see below */
		rc->capearly *= 2;
		rc->early = xrealloc(rc->early, rc->capearly * sizeof(*rc->early));
	}
	rc->early[rc->nearly++] = *x;
}

static void on_early_record(void *ctx, const struct taskstats_exit *x)
{
	struct recorder *rc = ctx;
	if (set_may_hold(rc, x))
		keep_early(rc, x);
	else
		doubt_record(rc, x, keep_early);
}

/* A set's exit records came between samples: read into early[] (struct recorder),
 * as many as EARLY_EXITS_MAX holds, but for other processes' (settle_doubt). */
void rec_collect_exits(struct recorder *rc)
{
	size_t room = (EARLY_EXITS_MAX - rc->nearly) / TASKSTATS_DGRAM_RECS;
	rc->early_armed = 0;
	rc->early_rearm = mono_ns() + EARLY_EVERY_NS;
	if (room && taskstats_drain_some(&rc->ts, room, on_early_record, rc) < 0) {
		taskstats_close(&rc->ts);
		rc->run->exit_records = 0;
	}
	settle_doubt(rc, keep_early);
	if (rc->set_open)
		procset_take_events(&rc->set);	/* its buffer never fills between samples */
}

/* The per-process rows of a tree or cgroup: a member's row is stored when its figures
 * change (an idle member of a large tree costs nothing), and a row of zeros when it
 * leaves the set; readers take a member's last row at or before a sample as its
 * figures then (docs/guide/storage.md). */
void rec_store_members(struct recorder *rc, int64_t elapsed, int64_t t)
{
	for (size_t i = 0; i < rc->set.n; i++) {
		struct procset_member *m = &rc->set.m[i];
		struct proc_figures p;
		if (!m->dead && m->gen == rc->set.gen) {
			long k = proclog_find(&rc->log, m->pid);
			if (k >= 0) {
				/* the name changes at exec */
				strlcpy_rsw(rc->log.p[k].comm, m->st.name, sizeof(rc->log.p[k].comm));
				rec_proc_peak(rc, (size_t)k, m->st.mem.rss, t, PEAK_FROM_SAMPLE);
				rec_proc_peak(rc, (size_t)k, m->st.mem.hwm, t, PEAK_FROM_HWM);
			}
		}
		memset(&p, 0, sizeof(p));
		p.pid = m->pid;
		p.ppid = m->st.ppid;
		strlcpy_rsw(p.comm, m->st.name, sizeof(p.comm));
		if (m->dead || m->gen != rc->set.gen) {
			if (m->row == ROW_LIVE) {
				p.gone = 1;
				store_add_proc(rc->st, rc->run->id, elapsed, &p);
				m->row = ROW_GONE;
			}
			continue;
		}
		p.mem = m->st.mem;
		p.mem.hwm = 0;	/* not stored: its change alone makes no row */
		if (m->row == ROW_LIVE && memcmp(&p, &m->row_figs, sizeof(p)) == 0)
			continue;
		store_add_proc(rc->st, rc->run->id, elapsed, &p);
		m->row_figs = p;
		m->row = ROW_LIVE;
	}
}

/* One process attached (-p, -n without -t): its descendants are not recorded. Notes
 * how many there are and what they hold, at the first sample and at the end. */
void rec_note_untracked(struct recorder *rc, int at_end)
{
	size_t n = 0;
	uint64_t rss = 0;
	char v[32];
	if (rc->target->tree || rc->target->set_cgroup_dir || rc->target->is_child ||
	    rc->target->pid <= 0)
		return;
	if (procset_descendants(rc->target->pid, &n, &rss) == 0 && rss > rc->untracked_rss) {
		rc->untracked_n = n;
		rc->untracked_rss = rss;
	}
	if (!at_end && n && !rc->opts->quiet)
		rec_say(rc, RECORDER_NOTE, "rsswatch: pid %d has %zu descendant%s holding %s, not "
			"recorded (add -t)", (int)rc->target->pid, n, n == 1 ? "" : "s",
			fmt_bytes(v, sizeof(v), rss));
	if (at_end && rc->untracked_n) {
		char detail[128];
		snprintf(detail, sizeof(detail), "%zu descendant%s held up to %s, not recorded "
			 "(add -t)", rc->untracked_n, rc->untracked_n == 1 ? "" : "s",
			 fmt_bytes(v, sizeof(v), rc->untracked_rss));
		store_add_event(rc->st, rc->run->id, real_ns(), "untracked", rc->target->pid, detail);
	}
}

/* Takes one sample. Returns 0, or -ESRCH when the target is gone. */
/* How many samples in a row may reuse a cached status so that it is read afresh at
 * least every bound_ns. */
unsigned rec_status_reuse_for(int64_t interval_ns, int64_t bound_ns)
{
	if (interval_ns >= bound_ns)
		return 0;
	int64_t n = bound_ns / interval_ns - 1;
	return n > (int64_t)UINT_MAX ? UINT_MAX : (unsigned)n;
}

/* A member's status is read afresh at least every max(1 s, SET_STATUS_NS_PER_MEMBER x
 * members): 1,000 members at 100 ms cost 50 status reads a sample, not 100. Nothing
 * is lost by it, only the moment of a member's spike: a member's VmHWM only grows and
 * is read at the latest one bound later, a member whose figures change is read at
 * once (statm is the cache's key), and one that exits has its exact peak from its
 * exit record (docs/guide/peaks.md). Called at each sample; costs nothing unless the bound
 * changed with the set's size. */
void rec_set_status_bound(struct recorder *rc)
{
	int64_t bound = (int64_t)rc->set.n * SET_STATUS_NS_PER_MEMBER;
	unsigned reuse = rec_status_reuse_for(rc->opts->interval_ns, bound > NS_PER_S ? bound : NS_PER_S);
	if (reuse == rc->set.status_reuse)
		return;
	rc->set.status_reuse = reuse;	/* members found later */
	for (size_t i = 0; i < rc->set.n; i++)
		proc_reader_max_reuse(&rc->set.m[i].proc, reuse);
}

/* Bounds the memory kept per process ever seen (PROCLOG_KEEP): what is folded is
 * said once, and stored as an event with the totals so far. */
void rec_fold_processes(struct recorder *rc, int64_t t, int64_t elapsed)
{
	size_t n = proclog_fold(&rc->log, elapsed, PROCLOG_SETTLED_NS, PROCLOG_KEEP, &rc->root);
	if (!n)
		return;
	const struct proclog_folded *f = &rc->log.folded;
	char detail[128];
	snprintf(detail, sizeof(detail), "count=%llu peak_max_bytes=%llu kept=%zu",
		 (unsigned long long)f->n, (unsigned long long)f->peak_max, rc->log.n);
	store_add_event(rc->st, rc->run->id, t, "procs_folded", rc->target->pid, detail);
	if (f->n == n)
		rec_say(rc, RECORDER_NOTE, "rsswatch: more than %d processes: those that ended "
			"with the smallest peaks are kept only as totals from now on (their CPU "
			"and I/O stay in the set's figures; procs_folded events count them)", PROCLOG_KEEP);
}

/* Members joining and leaving the set. Those there at the first sample are not
 * events: they are where the recording starts. */
/* When a member that joined now (elapsed ns) started, in the run's elapsed time: its
 * own start time from /proc/PID/stat (to the clock tick), not the sample that found
 * it, so that a child is not shown starting before its parent. Never before the run's
 * start, nor after now. */
static int64_t member_start(const struct recorder *rc, pid_t pid, int64_t elapsed)
{
	uint64_t ticks;
	if (procset_starttime(&rc->set, pid, &ticks) < 0)
		return elapsed;
	int64_t born = (int64_t)proc_ticks_ns(ticks) - rc->start_boot;
	return born < 0 ? 0 : born > elapsed ? elapsed : born;
}

/* Reads /proc/PID/NAME into buf (terminated); its length, or -1. */
static ssize_t read_proc_file(pid_t pid, const char *name, char *buf, size_t n)
{
	char path[64];
	if (sysroot_path(path, sizeof(path), "/proc/%d/%s", (int)pid, name) < 0)
		return -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t r = read(fd, buf, n - 1);
	close(fd);
	if (r >= 0)
		buf[r] = 0;
	return r;
}

/* Whether pid, gone from the list of the set's cgroup, was moved out of it: its
 * /proc/PID/cgroup names another cgroup, and it is not in its exit. An exiting process
 * leaves the list before it is a zombie; on cgroup v2 it still names the set's cgroup,
 * but on v1 an exiting one names the hierarchy's root, and so does a zombie: its state,
 * read after, tells. */
static int moved_out(const struct recorder *rc, pid_t pid)
{
	char buf[4096], cg[PATH_MAX];
	struct proc_stat st;
	if (!rc->target->cg)
		return 0;
	ssize_t n = read_proc_file(pid, "cgroup", buf, sizeof(buf));
	if (n <= 0 || cg_proc_path_parse(buf, (size_t)n, rc->target->cg->version, cg, sizeof(cg)) < 0 ||
	    rec_in_set_cgroup(rc, cg))
		return 0;
	n = read_proc_file(pid, "stat", buf, sizeof(buf));
	return n > 0 && proc_stat_parse(buf, (size_t)n, &st) == 0 && !proc_stat_exiting(&st);
}

void rec_on_proc(void *ctx, pid_t pid, int start, const struct proc_status *st)
{
	struct recorder *rc = ctx;
	int64_t elapsed = mono_ns() - rc->start_mono;
	long k = proclog_find(&rc->log, pid);
	const char *comm = st->name;
	if (start && k >= 0 && rc->log.p[k].ppid <= 0 && rc->log.p[k].end_ns + RECENT_NS >= elapsed &&
	    strcmp(rc->log.p[k].ended, PROC_OOM_KILLED) == 0) {
		/* Its kill line came before its first sample, which finds it still listed
		 * in its exit: the same process (else a second entry, killed by SIGKILL). */
		rc->log.p[k].ppid = st->ppid;
	} else if (start) {
		if (rc->kpeak)
			kpeak_track(rc->kpeak, pid);	/* from its next change */
		k = (long)rec_proc_seen(rc, pid, st, member_start(rc, pid, elapsed));
		if (pid == rc->target->pid) {
			rc->root = k;
			if (rc->log.p[k].hwm_before >= 0)
				rc->run->hwm_before = rc->log.p[k].hwm_before;
		}
	} else if (k >= 0) {
		/* out of a cgroup's list and in another cgroup: moved out, and its exit
		 * record, when it comes, is not the run's (the engine says so itself, as it
		 * happens: on_left) */
		int left = rc->target->set_cgroup_dir && !rc->kpeak && moved_out(rc, pid);
		proclog_end(&rc->log, (size_t)k, elapsed, left ? PROC_LEFT : PROC_GONE, -1, -1);
		comm = rc->log.p[k].comm;	/* an exit record may know its last name */
	}
	if (pid == rc->target->pid || rc->run->samples == 0)
		return;
	if (!start && k >= 0 && rc->log.x[k].exit_said)
		return;	/* said when its exit record came */
	if (!start && k >= 0)
		rc->log.x[k].exit_said = 1;
	char more[48];
	snprintf(more, sizeof(more), "last_rss=%llukB", (unsigned long long)(st->mem.rss / 1024));
	/* a member that joined: when it started; one that left: when its exit record
	 * says it ended, else now */
	int64_t at = start && k >= 0 ? rc->run->started_at + rc->log.p[k].first_ns :
		     !start && k >= 0 && rc->log.p[k].end_ns >= 0 ?
			     rc->run->started_at + rc->log.p[k].end_ns : real_ns();
	proc_event(rc, at, start, pid, st->ppid, comm, more);
}

/* At the run's end, a member still listed as running may be gone: it ended after the
 * last sample, with no exit record to rec_say so (they need root; one may be lost). Read
 * through its own open files (so never another process given its pid), one reaped or a
 * zombie ended, how unknown ("gone"), by the run's end: never "running" after it. */
void rec_end_vanished(struct recorder *rc)
{
	if (!rc->set_open)
		return;
	const struct run *r = rc->run;
	int64_t end = r->ended_at ? r->ended_at - r->started_at : mono_ns() - rc->start_mono;
	for (size_t k = 0; k < rc->set.n; k++) {
		struct procset_member *m = &rc->set.m[k];
		long i = proclog_find(&rc->log, m->pid);
		struct proc_stat ps;
		if (i < 0 || strcmp(rc->log.p[i].ended, PROC_RUNNING) != 0)
			continue;
		int e = proc_reader_read_stat(&m->proc, &ps);
		if (e == -ESRCH || (e == 0 && ps.state == 'Z'))
			proclog_end(&rc->log, (size_t)i, end, PROC_GONE, -1, -1);
	}
}

/* Exit records that never reached the run: lost by the socket (its buffer overflowed)
 * or dropped for want of room while their process was not known yet. Most of them are
 * other processes' (every exit on the host comes), but the run cannot tell: said, and
 * stored as an event, so that a process missing from the table is explained. */
void rec_note_lost_exits(struct recorder *rc)
{
	uint64_t lost = rc->ts.lost, dropped = rc->exits_dropped;
	char detail[128];
	if (!lost && !dropped)
		return;
	snprintf(detail, sizeof(detail), "lost=%llu dropped=%llu",
		 (unsigned long long)lost, (unsigned long long)dropped);
	store_add_event(rc->st, rc->run->id, rc->run->ended_at ? rc->run->ended_at : real_ns(),
			"exit_records_lost", rc->target->pid, detail);
	rec_say(rc, RECORDER_NOTE, "rsswatch: %llu exit records were lost and %llu dropped on a "
		"busy host (some may be this run's: their processes keep their sampled figures)",
		(unsigned long long)lost, (unsigned long long)dropped);
}
