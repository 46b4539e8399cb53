#include "record/recorder.h"
#include "base/clock.h"
#include "base/fmt.h"
#include "base/parse.h"
#include "base/sysroot.h"
#include "base/util.h"
#include "record/eta_watch.h"
#include "record/oom.h"
#include "record/proclog.h"
#include "record/sampler.h"
#include "record/target.h"
#include "source/client.h"
#include "source/taskstats.h"

#include <linux/acct.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

/* A batch goes to the store every FLUSH_EVERY_NS, or once FLUSH_EVERY_SAMPLES wait (at
 * 1 kHz, eight short transactions a second), or once other rows fill a quarter of the
 * batch's bounds (a flood of marks), or at every sample while memory is near a limit
 * (the machine may be about to die): what a killed recorder can lose. Each commit
 * costs about as much as a few samples of one process; a batch of 128 samples is
 * 32 KiB, held twice (one filling, one being written). */
#define FLUSH_EVERY_NS (5 * NS_PER_S)
#define FLUSH_EVERY_SAMPLES 128
#define CLIENT_COUNTERS_MAX 64
/* A set's exit records of processes not known yet wait one drain (struct recorder's
 * pending[]): PENDING_EXITS at first, doubled as a busy host needs, up to
 * PENDING_EXITS_MAX (640 KiB the two arrays); past that they are dropped and
 * counted (exits_dropped). Every exit on the host comes here: on this 2-core machine
 * with other builds running, about 200 a second of other processes' exits. */
#define PENDING_EXITS 256
#define PENDING_EXITS_MAX 2048
/* A set's exit records read between samples (struct recorder's early[]): at most
 * EARLY_EXITS kept, and a read at most every EARLY_EVERY_NS, so that a busy host's
 * exits cost at most 10 wake-ups a second (every 10 ms: 100, and 8 ms of CPU a
 * second against 1 without, for a tree on a host with about 80 exits a second). */
#define EARLY_EXITS 512
#define EARLY_EVERY_NS (100 * NS_PER_MS)

/* How long the recorder waits for what comes a moment later, and why. */

/* The kernel logs an OOM kill before the victim exits; the line is normally read by
 * then. When the counters say there was one but no line came, give the log this long
 * (looking every KILL_LINE_POLL_MS), then decide from the counters alone. */
#define KILL_LINE_WAIT_NS (500 * NS_PER_MS)
#define KILL_LINE_POLL_MS 50
/* A kill line read before its process is known to be the run's (it lived between two
 * samples, and its exit record makes it known at the next sample's drain) waits in
 * pkills[] for it: at most PENDING_KILLS lines, each for PENDING_KILL_INTERVALS
 * intervals and RECENT_NS more, then it was some other process's. */
#define PENDING_KILLS 64
#define PENDING_KILL_INTERVALS 3
/* A kill is matched to the process its pid named at its time: one first seen up to an
 * interval and RECENT_NS after it (a process is first seen at the sample after its
 * start, or from its exit record), and ended no more than KILL_LATE_NS before it. A
 * process ends after its kill, but the kill's time is carried over from the log's
 * clock by the smallest read delay seen (oom.h), which on a loaded machine can be
 * late by more than the victim took to exit (a second process entry for one pid,
 * measured under stress-ng --cpu 2 with a bound of 100 ms). */
#define KILL_LATE_NS RECENT_NS
/* A -g cgroup emptied: its last process's kill line may follow the exit by a moment. */
#define CGROUP_KILL_LINE_WAIT_NS (200 * NS_PER_MS)
/* A non-child's exit status is known once its parent reaps it: asked every
 * EXIT_STATUS_POLL_MS for at most 2 s (record/target.h: exit_status_ask_again), then
 * the status is said to be not known rather than guessed. */
/* A target whose status reads failed is a zombie whose pidfd turns readable at once;
 * a second is far more than that takes, and bounds a wait on a confused kernel. */
#define ZOMBIE_PIDFD_WAIT_MS 1000
/* The run's end is written on this thread: a locked database or a full disk gets
 * retries every FINISH_RETRY_MS for FINISH_GIVE_UP_NS (a lock is held for a short
 * transaction; space may come back), then the run is left as the store has it. */
#define FINISH_GIVE_UP_NS (3 * NS_PER_S)
#define FINISH_RETRY_MS 200
/* The application's page may appear at any time: a look every PAGE_RETRY_NS costs one
 * stat of its directory and finds it within a tenth of a second. Once its name is
 * found taken (squatted), a look reads the target's memory map (client_page_find):
 * every PAGE_SQUAT_RETRY_NS then. */
#define PAGE_RETRY_NS (100 * NS_PER_MS)
/* The processes of a run are kept one by one up to PROCLOG_KEEP (about 400 bytes
 * each: 1.6 MiB); past that, those that ended more than PROCLOG_SETTLED_NS ago (no
 * exit record or kill line comes that late) are folded into one aggregate, smallest
 * peaks first (proclog_fold), said once and stored as procs_folded events. */
#define PROCLOG_KEEP 4096
#define PROCLOG_SETTLED_NS (10 * NS_PER_S)
#define PAGE_SQUAT_RETRY_NS NS_PER_S
/* Sampling far behind its interval (check_pace): fewer than a quarter of the samples
 * asked, over a window of at least BEHIND_WINDOW_NS and BEHIND_WINDOW_TICKS intervals. */
#define BEHIND_WINDOW_NS (500 * NS_PER_MS)
#define BEHIND_WINDOW_TICKS 10
/* An application's counter is stored at most COUNTERS_PER_S times a second; changes
 * in between are coalesced into the next row, and the last value is always stored. */
#define COUNTERS_PER_S 10
/* A large set's members have their status read afresh at least every this much per
 * member, and at least every second (set_status_bound). */
#define SET_STATUS_NS_PER_MEMBER (2 * NS_PER_MS)

enum stop_reason { RUNNING, TARGET_ENDED, SIGNALED, DURATION };

/* A kill line waiting for its process (PENDING_KILLS): the kernel's figures. */
struct pending_kill {
	int64_t t;		/* the kill, CLOCK_REALTIME ns */
	pid_t pid;
	bool memcg;
	unsigned have;
	char comm[KMSG_COMM_MAX];
	uint64_t total_vm, anon_rss, file_rss, shmem_rss, pgtables;
};

struct recorder {
	const struct record_opts *opts;
	const struct record_target *target;
	struct store *st;
	struct run *run;
	int sigfd, timerfd;
	int gpufd;		/* the GPU poll's timerfd, or -1 */
	struct sampler sampler;
	int64_t start_mono;
	int64_t last_flush;
	int64_t last_sample;	/* mono ns of the last sample taken (0: none) */
	int64_t start_boot;	/* CLOCK_BOOTTIME at start_mono: the clock of a process's start */
	unsigned every, since_live;
	enum stop_reason stop;
	int stop_signo;		/* the stop signal read (SIGNALED), or 0 */
	int sampler_open;	/* sampler needs closing */
	struct client_page *page;	/* the application's page, once found */
	int64_t page_next_try;
	int exits_filtered;	/* the listener hears the target only: drained when ready */
	struct client_dir_watch page_dir;	/* nothing new there: no need to look */
	int squat_warned;	/* someone took the page's name: said once */
	int find_capped_warned;	/* a look for the page hit its bounds: said once */
	/* The pace of sampling (check_pace): timer expirations and samples taken since
	 * pace_since (CLOCK_MONOTONIC); a collapse is said once. */
	uint64_t pace_due, pace_taken;
	int64_t pace_since;
	int behind_said;
	/* Marks lost to ring overruns: said at once, then at most every LOST_SAY_NS, and
	 * stored as one event at the end. */
	uint64_t marks_lost, marks_lost_said;
	int64_t marks_lost_say_at;
	/* Marks stored are rate-limited (a token bucket): a flood from the application
	 * cannot make the recorder spend its CPU writing them. Those over are counted. */
	double mark_tokens;
	int64_t mark_tokens_at;
	uint64_t marks_over;
	/* The application's counters, as last read; each is stored when it changes, at
	 * most COUNTERS_PER_S times a second (counter_dirty: a value read is not stored
	 * yet; counter_at: elapsed ns of its last row). Values read and replaced before
	 * they could be stored are counted in counters_coalesced. */
	struct client_counter counters[CLIENT_COUNTERS_MAX];
	size_t ncounters;
	int64_t counter_at[CLIENT_COUNTERS_MAX];
	unsigned char counter_dirty[CLIENT_COUNTERS_MAX];
	uint64_t counters_coalesced, counter_rows;
	int store_error;	/* the last flush error, reported once */
	struct oom_watch oom;
	struct oom_evidence ev;	/* what is known about the target's death */
	struct procset set;
	int set_open;
	int set_end;		/* -ESRCH: the cgroup became empty; -ENODEV: removed */
	uint64_t warn_at;	/* the --warn threshold in bytes, once known (0: none) */
	int warn_cgroup;	/* it is a share of the cgroup's limit */
	int warned;		/* above it now */
	int pss_warned;		/* the cost of a PSS read on a large target was said */
	int pss_said;		/* a PSS read error was said */
	struct proclog log;	/* every process of the run, with its own peak */
	long root;		/* the target's entry in log, -1 before the first sample */
	uint64_t hwm_reset_from;	/* --reset-peak: VmHWM before the reset (0: none) */
	int target_kill_counted;	/* the target's OOM kill is in run->oom_kills */
	/* OOM kills: those the kernel log named (kills_named), the target's that only the
	 * counters proved (kills_unnamed), and the rise of the cgroup's own count where
	 * the cgroup holds the run alone (cg_kills). run->oom_kills is the larger of the
	 * first two's sum and cg_kills: the cgroup's count is the floor, for lines lost to
	 * an overrun or never matched to a process (count_oom_kills). */
	int64_t kills_named, kills_unnamed, cg_kills;
	struct pending_kill *pkills;	/* PENDING_KILLS, allocated at the first */
	size_t npkills;
	int64_t last_elapsed, prev_elapsed;	/* the last two samples taken */
	/* The kernel's exit records (taskstats), drained at each sample: a record whose
	 * process is not known yet (its fork is read at the next sample, or its parent's
	 * record comes later) waits one drain in pending. Only a set has such records:
	 * the two arrays (PENDING_EXITS each at first, 80 KiB together) are allocated when a set
	 * is opened, so that recording one process never touches their pages. */
	struct taskstats_listener ts;
	struct taskstats_exit *pending, *retry;
	size_t npending, cappending;
	uint64_t exits_dropped;	/* records not kept for want of room in pending[] */
	/* A set's records read as they come between samples, only to learn when each
	 * process ended (the time of the read: taskstats.h); they are applied at the next
	 * sample's drain, first and in order, as if read then. The socket is in the
	 * loop's epoll set one-shot, armed again EARLY_EVERY_NS after a read while early[]
	 * has room for another datagram; when it has none, the rest wait for the sample. */
	struct taskstats_exit *early;
	size_t nearly;
	int early_armed;
	int64_t early_rearm;	/* CLOCK_MONOTONIC: when it may be armed again */
	size_t untracked_n;	/* one process attached: the most descendants it had */
	uint64_t untracked_rss;	/* and the most RSS they held, not recorded */
	struct eta_watch eta;	/* time to exhaustion (record/eta_watch.h) */
	struct sample last;	/* the last sample handed over (run->samples of them) */
	/* A launched command's rusage from wait4 (have_ru): its tree's CPU and faults,
	 * exact, for the closing sample (closing_sample). */
	struct rusage ru;
	int have_ru;
	int64_t end_mono;	/* CLOCK_MONOTONIC: when the target ended (0: it did not) */
};

int recorder_alive(const struct run *r)
{
	char boot[64];
	struct proc_stat ps;
	if (proc_read_boot_id(boot, sizeof(boot)) < 0 || strcmp(boot, r->boot_id) != 0)
		return 0;
	if (proc_read_stat(r->recorder_pid, &ps) < 0)
		return 0;
	return ps.starttime == r->recorder_start && ps.state != 'Z';
}

void recorder_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
}

/* A line for the sink (recorder.h); nothing without one. */
static void say(const struct recorder *rc, enum recorder_note kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void say(const struct recorder *rc, enum recorder_note kind, const char *fmt, ...)
{
	const struct recorder_sink *k = rc->opts->sink;
	char text[1024];
	va_list ap;
	if (!k || !k->note)
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	k->note(k->ctx, kind, text);
}

/* Words for a store error. */
static const char *store_words(struct recorder *rc, int e)
{
	return e == -ENOSPC ? "disk full" : e == -EBUSY ? "the database is locked by another "
							  "process" : store_errmsg(rc->st);
}

static void flush(struct recorder *rc)
{
	int e = store_flush(rc->st, rc->run);
	if (e < 0 && e != rc->store_error)
		say(rc, RECORDER_NOTE, "rsswatch: cannot write to the database yet (%s); sampling "
		    "goes on, the samples wait in memory (bounded: past about 30,000 the "
		    "higher of each two is kept) and are written once it works again",
		    store_words(rc, e));
	else if (e == 0 && rc->store_error < 0)
		say(rc, RECORDER_NOTE, "rsswatch: writing to the database again");
	rc->store_error = e;
	rc->last_flush = mono_ns();
}

/* Memory near a limit: the cgroup's (90%), or the host's (5% available). */
static int near_limit(const struct recorder *rc, const struct sample *s)
{
	if (rc->warned)
		return 1;
	if ((s->have & SAMPLE_CGROUP) && s->cgroup_limit && s->cgroup_limit != CG_UNLIMITED &&
	    s->cgroup >= s->cgroup_limit / 10 * 9)
		return 1;
	return rc->run->mem_total && s->mem_available < rc->run->mem_total / 20;
}

#define LOST_SAY_NS (10 * NS_PER_S)
#define MARKS_PER_S 2000	/* stored at most, on average */
#define MARKS_BURST 2000	/* stored at once, at most (below the batch's bound) */

static void say_lost_marks(struct recorder *rc, int64_t elapsed)
{
	uint64_t n = rc->marks_lost + rc->marks_over - rc->marks_lost_said;
	if (!n)
		return;
	say(rc, RECORDER_NOTE, "rsswatch: %llu marks of pid %d were not stored (more than "
	    "256 between two samples, or more than %d a second)%s",
	    (unsigned long long)n, (int)rc->target->pid, MARKS_PER_S,
	    rc->marks_lost_said ? " since the last report" :
	    "; further losses are reported at most every 10s");
	rc->marks_lost_said = rc->marks_lost + rc->marks_over;
	rc->marks_lost_say_at = elapsed + LOST_SAY_NS;
}

static void on_mark(void *ctx, long long realtime_ns, const char *label)
{
	struct recorder *rc = ctx;
	if (rc->mark_tokens < 1) {
		rc->marks_over++;
		return;
	}
	rc->mark_tokens -= 1;
	store_add_mark(rc->st, rc->run->id, realtime_ns, label);
}

/* The owner of a process: the owner of its /proc directory (its effective uid). */
static uid_t target_owner(pid_t pid)
{
	char path[64];
	struct stat sb;
	if (sysroot_path(path, sizeof(path), "/proc/%d", (int)pid) < 0 || stat(path, &sb) < 0)
		return (uid_t)-1;
	return sb.st_uid;
}

/* --reset-peak: restarts the target's VmHWM (clear_refs 5), after noting its value. */
static void reset_hwm(struct recorder *rc)
{
	struct proc_status st;
	char path[64];
	if (proc_reader_read(&rc->sampler.proc, &st) < 0 ||
	    sysroot_path(path, sizeof(path), "/proc/%d/clear_refs", (int)rc->target->pid) < 0)
		return;
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return;
	if (write(fd, "5", 1) == 1)
		rc->hwm_reset_from = st.hwm ? st.hwm : 1;
	close(fd);
	proc_reader_invalidate(&rc->sampler.proc);
}

static const char *file_type_words(mode_t type)
{
	return type == S_IFREG ? "file" : type == S_IFDIR ? "directory" :
	       type == S_IFLNK ? "symbolic link" : type == S_IFIFO ? "FIFO" :
	       type == S_IFSOCK ? "socket" : "special file";
}

/* Looks for the application's page (librsswatch) until it is found. Called from the
 * loop after a sample, never within one, at most every PAGE_RETRY_NS (while the page
 * directory changes; PAGE_SQUAT_RETRY_NS once the page's name is found taken), and
 * each look is bounded whatever other users make in the directory
 * (client_page_find: one fstatat, or one bounded read of the target's memory map). */
static void find_page(struct recorder *rc)
{
	pid_t pid = rc->target->pid;
	int64_t elapsed = mono_ns() - rc->start_mono;
	struct client_find f;
	if (rc->page || pid <= 0 || elapsed < rc->page_next_try)
		return;
	rc->page_next_try = elapsed + PAGE_RETRY_NS;
	if (!client_page_dir_changed(&rc->page_dir))
		return;
	/* The owner now: a launched command may have changed its user (setpriv, su) */
	uid_t owner = target_owner(pid);
	int e = client_page_find(pid, owner, &f, &rc->page);
	if (f.squatted)
		rc->page_next_try = elapsed + PAGE_SQUAT_RETRY_NS;
	if (f.squatted && (e == 0 || e == -EEXIST) && !rc->squat_warned) {
		rc->squat_warned = 1;
		say(rc, RECORDER_NOTE, "rsswatch: warning: %s took the name of the shared page "
		    "of pid %d (a %s of uid %u); %s",
		    f.squat_uid == owner ? "the target's own user" : "another user", (int)pid,
		    file_type_words(f.squat_type), (unsigned)f.squat_uid, e == 0 ?
		    "its marks and counters are read from the page it made instead" :
		    "its marks and counters cannot be read unless it makes another page");
	}
	if (f.capped && !rc->find_capped_warned) {
		rc->find_capped_warned = 1;
		say(rc, RECORDER_NOTE, "rsswatch: warning: the memory map of pid %d is longer than "
		    "%d KiB or names more than %d fallback pages: its shared page was looked for "
		    "in the first part only", (int)pid, CLIENT_MAPS_MAX / 1024,
		    CLIENT_CANDIDATES_MAX);
	}
}

/* Stores counter k's value when it is due (at most COUNTERS_PER_S rows a second;
 * final: the run's end, all that wait). */
static void store_counter(struct recorder *rc, size_t k, int64_t elapsed, int final)
{
	if (!rc->counter_dirty[k] ||
	    (!final && elapsed - rc->counter_at[k] < NS_PER_S / COUNTERS_PER_S))
		return;
	store_add_counter(rc->st, rc->run->id, elapsed, rc->counters[k].name, rc->counters[k].value);
	rc->counter_dirty[k] = 0;
	rc->counter_at[k] = elapsed;
	rc->counter_rows++;
}

/* The application's own marks and counters, once its page is found (find_page).
 * final: the run's end (every counter's last value is stored). */
static void poll_client(struct recorder *rc, int64_t elapsed, int final)
{
	if (!rc->page)
		return;
	rc->mark_tokens += (double)(elapsed - rc->mark_tokens_at) * MARKS_PER_S / NS_PER_S;
	if (rc->mark_tokens > MARKS_BURST)
		rc->mark_tokens = MARKS_BURST;
	rc->mark_tokens_at = elapsed;
	uint64_t over = rc->marks_over;
	int lost = client_page_drain_marks(rc->page, on_mark, rc);
	if (lost > 0)
		rc->marks_lost += (uint64_t)lost;
	if ((lost > 0 || rc->marks_over > over) && elapsed >= rc->marks_lost_say_at)
		say_lost_marks(rc, elapsed);
	struct client_counter c[CLIENT_COUNTERS_MAX];
	size_t n = client_page_counters(rc->page, c, CLIENT_COUNTERS_MAX);
	uint64_t coalesced = rc->counters_coalesced;
	for (size_t i = 0; i < n; i++) {
		/* Stored when a value changes; readers carry it forward. */
		size_t k;
		for (k = 0; k < rc->ncounters; k++)
			if (strcmp(rc->counters[k].name, c[i].name) == 0)
				break;
		if (k < rc->ncounters && rc->counters[k].value == c[i].value)
			continue;
		if (k == rc->ncounters) {
			if (k == CLIENT_COUNTERS_MAX)
				continue;
			rc->ncounters++;
			rc->counter_at[k] = INT64_MIN / 2;	/* the first value: at once */
		} else if (rc->counter_dirty[k]) {
			rc->counters_coalesced++;	/* replaced before it was stored */
		}
		rc->counters[k] = c[i];
		rc->counter_dirty[k] = 1;
	}
	for (size_t k = 0; k < rc->ncounters; k++)
		store_counter(rc, k, elapsed, final);
	if (!coalesced && rc->counters_coalesced)
		say(rc, RECORDER_NOTE, "rsswatch: counters of pid %d changed more than %d times a "
		    "second: each is stored at most %d times a second, its last value always (the "
		    "values in between are counted, not stored)", (int)rc->target->pid,
		    COUNTERS_PER_S, COUNTERS_PER_S);
}

/* Sampling far behind its interval: a recorder starved of CPU, stalled, or slowed by
 * what it reads. The timer's expirations (ticks: how many since the last read, missed
 * ones included) are counted against the samples taken; a window of at least
 * BEHIND_WINDOW_NS and BEHIND_WINDOW_TICKS intervals with fewer than a quarter of
 * the samples asked is said once, in one line and one event, so that a collapse is
 * never silent. */
static void check_pace(struct recorder *rc, uint64_t ticks, int64_t now)
{
	int64_t window = BEHIND_WINDOW_TICKS * rc->opts->interval_ns;
	if (window < BEHIND_WINDOW_NS)
		window = BEHIND_WINDOW_NS;
	rc->pace_due += ticks ? ticks : 1;
	rc->pace_taken++;
	if (now - rc->pace_since < window)
		return;
	if (!rc->behind_said && rc->pace_taken * 4 < rc->pace_due) {
		char every[32], detail[128];
		double secs = (double)(now - rc->pace_since) / NS_PER_S;
		rc->behind_said = 1;
		fmt_duration(every, sizeof(every), rc->opts->interval_ns);
		say(rc, RECORDER_NOTE, "rsswatch: warning: sampling fell behind: %llu samples in "
		    "%.1fs where %llu were asked (every %s); the recorder is starved of CPU or "
		    "stalled, and the run has gaps", (unsigned long long)rc->pace_taken, secs,
		    (unsigned long long)rc->pace_due, every);
		snprintf(detail, sizeof(detail), "asked=%llu taken=%llu window_ms=%lld",
			 (unsigned long long)rc->pace_due, (unsigned long long)rc->pace_taken,
			 (long long)((now - rc->pace_since) / NS_PER_MS));
		store_add_event(rc->st, rc->run->id, real_ns(), "sampling_behind",
				rc->target->pid, detail);
	}
	rc->pace_due = rc->pace_taken = 0;
	rc->pace_since = now;
}

/* --warn: a warning ends when memory falls below this share of the threshold. */
#define WARN_REARM_PCT 90

/* Runs the user's command for an event, if there is one (record/hooks.h). comm NULL:
 * the target's name. */
static void fire_hook(struct recorder *rc, const char *event, pid_t pid, const char *comm,
		      uint64_t rss)
{
	if (!comm && rc->root >= 0)
		comm = rc->log.p[rc->root].comm;
	struct hook_facts f = { rc->run->id, pid, rss, rc->run->cgroup_limit, comm };
	hooks_fire(rc->opts->hooks, rc->st, event, &f);
}

/* --listen: the sample, the run's totals and the application's counters, for scrapes. */
static void publish(struct recorder *rc, const struct sample *s)
{
	struct prom_snapshot p;
	memset(&p, 0, sizeof(p));
	p.have_sample = 1;
	p.run = rc->run->id;
	p.pid = rc->target->pid;
	if (rc->root >= 0)
		strlcpy_rsw(p.comm, rc->log.p[rc->root].comm, sizeof(p.comm));
	p.s = *s;
	p.high_water = rc->run->peak_rss;
	p.cgroup_peak = rc->run->peak_cgroup;
	p.samples = rc->run->samples;
	p.oom_kills = rc->run->oom_kills;
	p.samples_dropped = (int64_t)store_lost(rc->st).samples_merged;
	p.sample_cost_s = (double)(mono_ns() - rc->start_mono - s->elapsed_ns) / NS_PER_S;
	if (rc->eta.now.have) {
		strlcpy_rsw(p.eta_limit, eta_limit_key(rc->eta.now.limit), sizeof(p.eta_limit));
		p.eta_s = rc->eta.now.eta_s;
	}
	for (size_t i = 0; i < rc->ncounters && i < PROM_COUNTERS_MAX; i++, p.ncounters++) {
		strlcpy_rsw(p.counters[i].name, rc->counters[i].name, sizeof(p.counters[i].name));
		p.counters[i].value = rc->counters[i].value;
		p.counters[i].is_gauge = rc->counters[i].is_gauge;
	}
	metrics_server_update(rc->opts->metrics, &p);
}

/* --warn: an event and a line each time memory crosses the threshold, either way. */
static void check_warn(struct recorder *rc, const struct sample *s, int64_t t)
{
	const struct record_opts *o = rc->opts;
	char v[32], th[32], hms[16], why[64] = "";
	if (!o->warn_bytes && o->warn_pct <= 0)
		return;
	if (!rc->warn_at) {
		if (o->warn_bytes) {
			rc->warn_at = o->warn_bytes;
		} else if ((s->have & SAMPLE_CGROUP) && s->cgroup_limit && s->cgroup_limit != CG_UNLIMITED) {
			rc->warn_at = (uint64_t)((double)s->cgroup_limit * o->warn_pct / 100.0);
			rc->warn_cgroup = 1;
		} else if (rc->run->mem_total) {
			rc->warn_at = (uint64_t)((double)rc->run->mem_total * o->warn_pct / 100.0);
		}
		if (!rc->warn_at)
			return;
	}
	if (o->warn_pct > 0)
		snprintf(why, sizeof(why), " (%g%% of %s)", o->warn_pct,
			 rc->warn_cgroup ? "the cgroup limit" : "MemTotal");
	uint64_t cur = rc->warn_cgroup ? s->cgroup : s->rss;
	const char *what = rc->warn_cgroup ? "cgroup usage" : "rss";
	/* Hysteresis: once over, back under only below WARN_REARM_PCT of the threshold,
	 * so that a target hovering around it makes one warn, not one per sample. */
	int above = rc->warned ? cur >= rc->warn_at / 100 * WARN_REARM_PCT : cur >= rc->warn_at;
	if (above == rc->warned)
		return;
	rc->warned = above;
	char detail[192];
	snprintf(detail, sizeof(detail), "%s %s %s %s%s", what, fmt_bytes(v, sizeof(v), cur),
		 above ? ">=" : "<", fmt_bytes(th, sizeof(th), rc->warn_at), why);
	store_add_event(rc->st, rc->run->id, t, above ? "warn" : "warn_clear", rc->target->pid, detail);
	if (above)
		fire_hook(rc, "warn", rc->target->pid, NULL, cur);
	if (!o->quiet)
		say(rc, above ? RECORDER_ALERT : RECORDER_NOTE, "%s %s: %s",
		    fmt_hms(hms, sizeof(hms), t), above ? "WARNING memory over the threshold"
							: "memory back under the threshold", detail);
}

/* --pss, when a read is due: says once what a read costs a large target, then reads.
 * Errors are said once; PSS is then off for the rest of the run. */
static void read_pss(struct recorder *rc, int64_t now, struct sample *s)
{
	char v[32], ms[32];
	const char *who = rc->set_open ? "the processes" : "the target";
	if (!rc->pss_warned && s->rss > PSS_WARN_RSS) {
		rc->pss_warned = 1;
		double gib = (double)s->rss / (double)(1ULL << 30);
		say(rc, RECORDER_NOTE, "rsswatch: warning: %s hold%s %s resident: each PSS read "
		    "(smaps_rollup) costs about 9 ms per GiB (about %.0f ms here) and stalls "
		    "%s mmap/munmap calls while it runs; reading it at most every %s",
		    who, rc->set_open ? "" : "s", fmt_bytes(v, sizeof(v), s->rss), gib * 9.0,
		    rc->set_open ? "their" : "its",
		    fmt_duration(ms, sizeof(ms), rc->opts->pss_interval_ns));
	}
	int e = sampler_read_pss(&rc->sampler, now, s);
	if (rc->pss_said || !rc->opts->sink)
		return;
	if (e < 0 && e != -ESRCH) {
		rc->pss_said = 1;
		say(rc, RECORDER_NOTE, "rsswatch: cannot read the PSS of %s: %s%s; recording "
		    "without it", who, errstr(e), e == -EACCES || e == -EPERM ? " (smaps_rollup "
		    "needs ptrace-read permission on the process)" : "");
	} else if (e == 0 && rc->sampler.pss_nfailed) {
		rc->pss_said = 1;
		say(rc, RECORDER_NOTE, "rsswatch: cannot read the PSS of %zu of the processes (%s): "
		    "the PSS sum leaves them out", rc->sampler.pss_nfailed,
		    errstr(rc->sampler.pss_err));
	}
}

/* Offers a figure for the run's peak (at CLOCK_REALTIME t). An exact figure equal to
 * a sampled peak confirms it: its source changes, not its time. */
static void run_peak(struct recorder *rc, uint64_t bytes, int64_t t, const char *source)
{
	struct run *r = rc->run;
	int confirms = peak_confirms(r->peak_rss, r->peak_source, bytes, source);
	if (bytes <= r->peak_rss && !confirms)
		return;
	if (!confirms) {
		r->peak_rss = bytes;
		r->peak_rss_at = t;
	}
	free(r->peak_source);
	r->peak_source = xstrdup(source);
}

/* Offers a figure for process i's peak, and so for the run's: over a set, the run's
 * peak is never below the largest member's. */
static void proc_peak(struct recorder *rc, size_t i, uint64_t bytes, int64_t t, const char *source)
{
	uint64_t p = proclog_offer(&rc->log, i, bytes, source);
	if (p)
		run_peak(rc, p, t, source);
}

/* A process of the run first seen now (elapsed ns). Those there at the first sample
 * of an attached target existed before the recording: their VmHWM is history. */
static size_t proc_seen(struct recorder *rc, pid_t pid, const struct proc_status *st,
			int64_t elapsed)
{
	int old = rc->run->samples == 0 && !rc->target->is_child;
	size_t i = proclog_add(&rc->log, pid, st->ppid, st->name, elapsed, old, st->hwm);
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
#define RECENT_NS (2 * NS_PER_S)
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
 * its sources say it did. A record of a member still alive at the last read waits: the
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
	/* The record does not say when it was sent: the process ended when it was read
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
		proc_peak(rc, (size_t)i, x->hiwater_rss, at, PEAK_FROM_EXIT);
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

static void on_exit_record(void *ctx, const struct taskstats_exit *x)
{
	struct recorder *rc = ctx;
	/* Only a set gains members from records; on a busy host, past PENDING_EXITS_MAX
	 * the unknown ones wait no longer (every exit on the host comes here). A group's
	 * CPU sums do not wait: its threads' records add up to them. */
	if (apply_exit(rc, x) == 0 || x->scope != TASKSTATS_PID || !rc->pending)
		return;
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
static void drain_exits(struct recorder *rc)
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
	if (rc->log.n != known)
		apply_waiting(rc, rc->pending, &rc->npending);
	known = rc->log.n;
	apply_waiting(rc, rc->retry, &nretry);
	if (rc->log.n != known)
		apply_waiting(rc, rc->pending, &rc->npending);
}

static void on_early_record(void *ctx, const struct taskstats_exit *x)
{
	struct recorder *rc = ctx;
	rc->early[rc->nearly++] = *x;	/* collect_exits asked for no more than fit */
}

/* A set's exit records came between samples: read into early[] (struct recorder). */
static void collect_exits(struct recorder *rc)
{
	size_t room = (EARLY_EXITS - rc->nearly) / TASKSTATS_DGRAM_RECS;
	rc->early_armed = 0;
	rc->early_rearm = mono_ns() + EARLY_EVERY_NS;
	if (room && taskstats_drain_some(&rc->ts, room, on_early_record, rc) < 0) {
		taskstats_close(&rc->ts);
		rc->run->exit_records = 0;
	}
}

/* The per-process rows of a tree or cgroup: a member's row is stored when its figures
 * change (an idle member of a large tree costs nothing), and a row of zeros when it
 * leaves the set; readers take a member's last row at or before a sample as its
 * figures then (docs/guide/storage.md). */
static void store_members(struct recorder *rc, int64_t elapsed, int64_t t)
{
	for (size_t i = 0; i < rc->set.n; i++) {
		struct procset_member *m = &rc->set.m[i];
		struct proc_figures p;
		if (!m->dead && m->gen == rc->set.gen) {
			long k = proclog_find(&rc->log, m->pid);
			if (k >= 0) {
				/* the name changes at exec */
				strlcpy_rsw(rc->log.p[k].comm, m->st.name, sizeof(rc->log.p[k].comm));
				proc_peak(rc, (size_t)k, m->st.rss, t, PEAK_FROM_SAMPLE);
				proc_peak(rc, (size_t)k, m->st.hwm, t, PEAK_FROM_HWM);
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
		p.rss = m->st.rss;
		p.anon = m->st.anon;
		p.file = m->st.file;
		p.shmem = m->st.shmem;
		p.swap = m->st.swap;
		if (m->row == ROW_LIVE && memcmp(&p, &m->row_figs, sizeof(p)) == 0)
			continue;
		store_add_proc(rc->st, rc->run->id, elapsed, &p);
		m->row_figs = p;
		m->row = ROW_LIVE;
	}
}

/* One process attached (-p, -n without -t): its descendants are not recorded. Notes
 * how many there are and what they hold, at the first sample and at the end. */
static void note_untracked(struct recorder *rc, int at_end)
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
		say(rc, RECORDER_NOTE, "rsswatch: pid %d has %zu descendant%s holding %s, not "
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
static unsigned status_reuse_for(int64_t interval_ns, int64_t bound_ns)
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
static void set_status_bound(struct recorder *rc)
{
	int64_t bound = (int64_t)rc->set.n * SET_STATUS_NS_PER_MEMBER;
	unsigned reuse = status_reuse_for(rc->opts->interval_ns, bound > NS_PER_S ? bound : NS_PER_S);
	if (reuse == rc->set.status_reuse)
		return;
	rc->set.status_reuse = reuse;	/* members found later */
	for (size_t i = 0; i < rc->set.n; i++)
		proc_reader_max_reuse(&rc->set.m[i].proc, reuse);
}

/* A single process's own entry in the log: found at its first sample, its name as
 * it is now (it changes at exec), and its peak from the sample and from VmHWM. */
static void track_target(struct recorder *rc, const struct sample *s, int64_t t)
{
	struct run *r = rc->run;
	if (rc->root < 0) {
		struct proc_status st;
		memset(&st, 0, sizeof(st));
		st.ppid = rc->sampler.ppid;
		strlcpy_rsw(st.name, rc->sampler.name, sizeof(st.name));
		st.hwm = s->hwm;
		rc->root = (long)proc_seen(rc, rc->target->pid, &st, s->elapsed_ns);
		if (rc->log.p[rc->root].hwm_before >= 0)
			r->hwm_before = rc->log.p[rc->root].hwm_before;
	}
	strlcpy_rsw(rc->log.p[rc->root].comm, rc->sampler.name, sizeof(rc->log.p[rc->root].comm));
	proc_peak(rc, (size_t)rc->root, s->rss, t, PEAK_FROM_SAMPLE);
	proc_peak(rc, (size_t)rc->root, s->hwm, t, PEAK_FROM_HWM);
}

/* The run's GPU and cgroup peaks, and the cgroup's limit, from one sample. */
static void track_peaks(struct run *r, const struct sample *s, int64_t t)
{
	if ((s->have & SAMPLE_GPU) && (int64_t)s->gpu > r->peak_gpu) {
		r->peak_gpu = (int64_t)s->gpu;
		r->peak_gpu_at = t;
	}
	if (s->have & SAMPLE_CGROUP) {
		uint64_t cg = (s->have & SAMPLE_CGROUP_PEAK) ? s->cgroup_peak : s->cgroup;
		if (cg > r->peak_cgroup) {
			r->peak_cgroup = cg;
			r->peak_cgroup_at = t;
		}
		if (s->cgroup_limit != CG_UNLIMITED)
			r->cgroup_limit = s->cgroup_limit;
	}
}

/* The thresholds (--warn, --warn-eta) and the hooks waiting to be reaped. */
static void check_alerts(struct recorder *rc, const struct sample *s, int64_t t)
{
	struct run *r = rc->run;
	check_warn(rc, s, t);
	int eta_warned = rc->eta.warned;
	eta_watch_sample(&rc->eta, s, t, rc->st, r, rc->target->pid);
	if (rc->eta.warned && !eta_warned) {
		char words[256];
		if (!rc->opts->quiet && rc->opts->sink) {
			eta_watch_words(&rc->eta, t, words, sizeof(words));
			say(rc, RECORDER_ALERT, "%s", words);
		}
		fire_hook(rc, "warn_eta", rc->target->pid, NULL, s->rss);
	}
	hooks_poll(rc->opts->hooks, rc->st, r->id);
}

/* The sample counted in the run and handed to the store, the exporter and the live
 * line. */
static void hand_over(struct recorder *rc, struct sample *s, int64_t t)
{
	struct run *r = rc->run;
	r->samples++;
	rc->prev_elapsed = rc->last_elapsed;
	rc->last_elapsed = s->elapsed_ns;
	r->sum_rss += (double)s->rss;
	r->last_rss = s->rss;
	r->last_at = t;
	rc->last = *s;
	store_add_sample(rc->st, r->id, s);
	if (rc->opts->metrics)
		publish(rc, s);
	const struct recorder_sink *k = rc->opts->sink;
	if (k && k->live && !rc->opts->quiet && ++rc->since_live >= rc->every) {
		struct recorder_live l = { t, s, rc->eta.now.have ? rc->eta.now.eta_s : -1,
					   eta_limit_name(rc->eta.now.limit), rc->counters,
					   rc->ncounters };
		rc->since_live = 0;
		k->live(k->ctx, &l);
	}
}

static void settle_kills(struct recorder *rc, int at_end);
static void cgroup_kills(struct recorder *rc, int at_end);

/* Bounds the memory kept per process ever seen (PROCLOG_KEEP): what is folded is
 * said once, and stored as an event with the totals so far. */
static void fold_processes(struct recorder *rc, int64_t t, int64_t elapsed)
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
		say(rc, RECORDER_NOTE, "rsswatch: more than %d processes: those that ended with "
		    "the smallest peaks are kept only as totals from now on (their CPU and I/O "
		    "stay in the set's figures; procs_folded events count them)", PROCLOG_KEEP);
}

static int take_sample(struct recorder *rc)
{
	struct sample s;
	int64_t now = mono_ns();
	if (!rc->exits_filtered)
		drain_exits(rc);	/* first: a member's last name is known when it leaves */
	int e = sampler_read(&rc->sampler, now, &s);
	if (e < 0) {
		if (rc->set_open && rc->target->pid <= 0)
			rc->set_end = e == -ESRCH && rc->set.procs_path &&
				      access(rc->set.procs_path, F_OK) < 0 ? -ENODEV : -ESRCH;
		return e;
	}
	s.elapsed_ns = now - rc->start_mono;
	rc->last_sample = now;
	if (rc->set_open) {
		/* the last counters of those that left, then all that ended so far */
		proclog_read_set(&rc->log, &rc->set, 0);
		proclog_add_ended(&rc->log, &s);
	}
	/* the processes that joined (at this sample, or from exit records) may be those
	 * of kill lines read before they were known */
	if (rc->npkills)
		settle_kills(rc, 0);
	cgroup_kills(rc, 0);
	if (sampler_pss_due(&rc->sampler, now))
		read_pss(rc, now, &s);

	struct run *r = rc->run;
	int64_t t = r->started_at + s.elapsed_ns;
	/* Over a set, the sum of each member's VmHWM is no peak of the whole (they peak at
	 * different times): the sampled totals count, and each member's own peak
	 * (store_members). */
	run_peak(rc, s.rss, t, PEAK_FROM_SAMPLE);
	if (!rc->set_open)
		track_target(rc, &s, t);
	track_peaks(r, &s, t);
	if (rc->sampler.gpu_fresh)
		for (size_t i = 0; i < rc->sampler.ngpus; i++)
			store_add_gpu(rc->st, r->id, s.elapsed_ns, &rc->sampler.gpus[i]);
	if (rc->target->pid > 0)
		poll_client(rc, s.elapsed_ns, 0);
	if (rc->set_open) {
		store_members(rc, s.elapsed_ns, t);
		set_status_bound(rc);
	}
	fold_processes(rc, t, s.elapsed_ns);
	check_alerts(rc, &s, t);
	hand_over(rc, &s, t);
	int urgent = near_limit(rc, &s);
	if (urgent)
		store_hurry(rc->st);	/* a shared writer too writes it at once */
	if (urgent || now - rc->last_flush >= FLUSH_EVERY_NS ||
	    store_pending(rc->st) >= FLUSH_EVERY_SAMPLES || store_filling(rc->st))
		flush(rc);
	return 0;
}

/* Is memcg (as the kernel log names it) the cgroup that holds only the set, or below it? */
static int in_set_cgroup(const struct recorder *rc, const char *memcg)
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
	       in_set_cgroup(rc, memcg);
}

/* One OOM kill of the run, from its kernel line: counted, stored, its hook run, and
 * the kernel's figures offered to its process. */
static void count_kill(struct recorder *rc, const struct kmsg_oom *kill, const char *memcg,
		       int64_t realtime_ns)
{
	struct run *r = rc->run;
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
	store_add_oom_kill(rc->st, r->id, &k);
	rc->kills_named++;
	count_oom_kills(rc);
	fire_hook(rc, "oom_kill", kill->pid, kill->comm,
		  kill->anon_rss + kill->file_rss + kill->shmem_rss);
	/* the target's own kill has its event when its death is decided (attribute_kill) */
	if (kill->pid != rc->target->pid) {
		char detail[600];
		oom_kill_detail(kill, memcg, detail, sizeof(detail));
		store_add_event(rc->st, r->id, realtime_ns, "oom_kill", kill->pid, detail);
	}
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
	proc_peak(rc, (size_t)i, kill->anon_rss + kill->file_rss + kill->shmem_rss, realtime_ns,
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

/* A set's kill line whose process is not known yet: kept for settle_kills. When full,
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
static void settle_kills(struct recorder *rc, int at_end)
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
}

static void on_oom_kill(void *ctx, const struct kmsg_oom *kill, const char *memcg,
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
static void cgroup_kills(struct recorder *rc, int at_end)
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
 * before the victim exits, so it is normally read by now; when the counters say an OOM
 * kill happened but no line was read yet, give the log a moment. */
static void attribute_kill(struct recorder *rc, int sig)
{
	struct run *r = rc->run;
	struct oom_evidence *ev = &rc->ev;
	struct oom_verdict v;
	oom_watch_drain(&rc->oom, on_oom_kill, rc);
	oom_watch_counters(&rc->oom, ev);
	int64_t deadline = mono_ns() + KILL_LINE_WAIT_NS;
	while (sig == SIGKILL && !ev->kill_seen && oom_watch_fd(&rc->oom) >= 0 &&
	       (ev->cg_delta || ev->vm_delta) && mono_ns() < deadline) {
		struct pollfd p = { oom_watch_fd(&rc->oom), POLLIN, 0 };
		poll(&p, 1, KILL_LINE_POLL_MS);
		oom_watch_drain(&rc->oom, on_oom_kill, rc);
	}
	ev->signal = sig;
	ev->cg_path = rc->target->cg_path;
	oom_decide(ev, &v);
	if (v.oom && !rc->target_kill_counted) {
		/* the counters say so, but no kernel line named it */
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
	if (v.oom && !ev->kill_seen)	/* no kernel line: on_oom_kill did not run the hook */
		fire_hook(rc, "oom_kill", rc->target->pid, NULL, r->last_rss);
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
static void target_ended(struct recorder *rc)
{
	struct run *r = rc->run;
	int ws = 0, e;
	uint64_t maxrss = 0;
	struct rusage ru;
	/* It ended now (its pidfd said so); the wait for its status below is not part of
	 * the run. A non-child's status is known once its parent reaps it; give that parent
	 * a moment, then say we do not know rather than guess. */
	r->ended_at = real_ns();
	rc->end_mono = mono_ns();
	for (int tries = 0; ; tries++) {
		e = pidfd_exit_status(rc->target->pidfd, rc->target->is_child, &ws, &ru);
		if (!exit_status_ask_again(e, tries))
			break;
		poll(NULL, 0, EXIT_STATUS_POLL_MS);
	}
	if (e == 0 && rc->target->is_child) {
		maxrss = ru.ru_maxrss > 0 ? (uint64_t)ru.ru_maxrss * 1024 : 0;
		rc->ru = ru;
		rc->have_ru = 1;
	}
	int64_t end = r->ended_at - r->started_at;
	drain_exits(rc);	/* the target's record comes before its pidfd is readable */
	/* wait4's peak is the largest of the command and of every descendant reaped in
	 * its tree: the run's when the run is that tree (not with --no-tree). It also
	 * holds the child's footprint before its exec (a copy of this recorder, which
	 * still grows by a few pages in the exec), so only a figure above that one by
	 * PRE_EXEC_SLACK is surely the command's. */
	if (rc->set_open && rc->target->pre_exec_rss < UINT64_MAX - PRE_EXEC_SLACK &&
	    maxrss > rc->target->pre_exec_rss + PRE_EXEC_SLACK)
		run_peak(rc, maxrss, r->ended_at, PEAK_FROM_WAIT);
	if (rc->root < 0 && rc->target->is_child && maxrss) {
		/* No sample and no exit record saw the command: it ended while the
		 * recording started, with exit records off (not root). wait4's figure is
		 * all there is; it holds the copy before the exec too, so it is the
		 * command's peak or, for one smaller than that copy, above it. */
		char comm[PROC_NAME_MAX];
		command_name(r->target, comm, sizeof(comm));
		rc->root = (long)proclog_add(&rc->log, rc->target->pid, getpid(), comm, 0, 0, 0);
		proc_peak(rc, (size_t)rc->root, maxrss, r->ended_at, PEAK_FROM_WAIT);
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

static void on_proc(void *ctx, pid_t pid, int start, const struct proc_status *st)
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
		k = (long)proc_seen(rc, pid, st, member_start(rc, pid, elapsed));
		if (pid == rc->target->pid) {
			rc->root = k;
			if (rc->log.p[k].hwm_before >= 0)
				rc->run->hwm_before = rc->log.p[k].hwm_before;
		}
	} else if (k >= 0) {
		proclog_end(&rc->log, (size_t)k, elapsed, PROC_GONE, -1, -1);
		comm = rc->log.p[k].comm;	/* an exit record may know its last name */
	}
	if (pid == rc->target->pid || rc->run->samples == 0)
		return;
	if (!start && k >= 0 && rc->log.x[k].exit_said)
		return;	/* said when its exit record came */
	if (!start && k >= 0)
		rc->log.x[k].exit_said = 1;
	char more[48];
	snprintf(more, sizeof(more), "last_rss=%llukB", (unsigned long long)(st->rss / 1024));
	/* a member that joined: when it started; one that left: when its exit record
	 * says it ended, else now */
	int64_t at = start && k >= 0 ? rc->run->started_at + rc->log.p[k].first_ns :
		     !start && k >= 0 && rc->log.p[k].end_ns >= 0 ?
			     rc->run->started_at + rc->log.p[k].end_ns : real_ns();
	proc_event(rc, at, start, pid, st->ppid, comm, more);
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
static void cgroup_ended(struct recorder *rc)
{
	struct run *r = rc->run;
	r->ended_at = real_ns();
	rc->end_mono = mono_ns();
	/* the kill line comes before the exit; give one that is late a moment */
	int64_t deadline = mono_ns() + CGROUP_KILL_LINE_WAIT_NS;
	oom_watch_drain(&rc->oom, on_oom_kill, rc);
	drain_exits(rc);
	settle_kills(rc, 0);
	while (last_oom_victim(rc) < 0 && oom_watch_fd(&rc->oom) >= 0 && mono_ns() < deadline) {
		struct pollfd p = { oom_watch_fd(&rc->oom), POLLIN, 0 };
		if (poll(&p, 1, KILL_LINE_POLL_MS) <= 0)
			break;
		oom_watch_drain(&rc->oom, on_oom_kill, rc);
		drain_exits(rc);
		settle_kills(rc, 0);
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

static void handle_signal(struct recorder *rc)
{
	struct signalfd_siginfo si;
	while (read(rc->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (!rc->target->is_child) {
			rc->stop = SIGNALED;
			rc->stop_signo = (int)si.ssi_signo;
			continue;
		}
		/* A launched command: pass the signal on and record until it ends. A signal
		 * from the terminal (SI_KERNEL) reached the command's process group already;
		 * sending it again would deliver it twice. */
		if (si.ssi_code != SI_KERNEL)
			kill(rc->target->pid, (int)si.ssi_signo);
	}
}


/* GPU memory has no high-water mark: a spike between two samples is seen only by a
 * read during it. When GPU reads are due more often than samples, they get their own
 * timer, on deadlines start + k * gpu_interval as the sampler expects; otherwise (and
 * without NVML) there is no timer and a sample reads when one is due. */
static int gpu_timer_open(struct recorder *rc)
{
	int64_t every = rc->opts->gpu_interval_ns, first = rc->start_mono + every;
	rc->gpufd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (rc->gpufd < 0)
		return -errno;
	struct itimerspec its = {
		.it_interval = { (time_t)(every / NS_PER_S), (long)(every % NS_PER_S) },
		.it_value = { (time_t)(first / NS_PER_S), (long)(first % NS_PER_S) },
	};
	if (timerfd_settime(rc->gpufd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
		return -errno;
	return 0;
}

static int setup(struct recorder *rc)
{
	/* The slow parts first (netlink round trips, a thread, a walk of /proc), so that
	 * the run's clock starts with its files open and its first sample. Exit records
	 * need root (CAP_NET_ADMIN) and the real machine, not a fixture. */
	struct taskstats_listener *given = rc->opts->exit_listener;
	if (given && taskstats_fd(given) >= 0) {
		rc->ts = *given;	/* taken over: the caller's copy is left closed */
		*given = (struct taskstats_listener)TASKSTATS_LISTENER_INIT;
	}
	if (taskstats_fd(&rc->ts) >= 0 && (*sysroot() || rc->opts->no_exit_records))
		taskstats_close(&rc->ts);
	rc->run->exit_records = !*sysroot() && !rc->opts->no_exit_records &&
				(taskstats_fd(&rc->ts) >= 0 || taskstats_open(&rc->ts) == 0);
	if (store_writer_start(rc->st) < 0)
		flush(rc);	/* no thread: writes wait on the database (never fails here) */
	note_untracked(rc, 0);
	rc->start_mono = mono_ns();
	rc->start_boot = boottime_ns();
	/* The first sample goes to the store at once: the run's row then holds the
	 * target's pid (a launched command's is not known before) and a first figure for
	 * ls, mark -p and a reader, from the start rather than after the first batch. */
	rc->last_flush = rc->start_mono - FLUSH_EVERY_NS;
	int e = sampler_open(&rc->sampler, rc->target->pid);
	if (e < 0)
		return e;
	/* A cached status can hide a VmHWM that rose and fell back (source/proc.h): it is
	 * read afresh at least once a second (a large set: set_status_bound). */
	unsigned reuse = status_reuse_for(rc->opts->interval_ns, NS_PER_S);
	proc_reader_max_reuse(&rc->sampler.proc, reuse);
	if (rc->opts->reset_peak && rc->target->pid > 0 && !rc->target->is_child)
		reset_hwm(rc);
	rc->sampler_open = 1;
	if (rc->target->set_cgroup_dir || rc->target->tree) {
		if (rc->target->set_cgroup_dir)
			e = procset_open_cgroup(&rc->set, rc->target->set_cgroup_dir, on_proc, rc);
		else
			/* fork events are the real machine's: not for a fixture tree */
			e = procset_open_tree(&rc->set, rc->target->pid,
					      !rc->opts->no_proccn && !*sysroot(), on_proc, rc);
		if (e < 0)
			return e;
		rc->set.status_reuse = reuse;
		rc->set_open = 1;
		rc->pending = xmalloc(PENDING_EXITS * sizeof(*rc->pending));
		rc->retry = xmalloc(PENDING_EXITS * sizeof(*rc->retry));
		rc->cappending = PENDING_EXITS;
		if (rc->run->exit_records)
			rc->early = xmalloc(EARLY_EXITS * sizeof(*rc->early));
		sampler_use_set(&rc->sampler, &rc->set);
	} else if (rc->run->exit_records && rc->target->pid > 0) {
		/* One process: the host's other exits are of no use; without the filter
		 * (it failed) they are read and ignored, as before. */
		rc->exits_filtered = taskstats_only(&rc->ts, rc->target->pid) == 0;
	}
	if (rc->opts->pss_interval_ns)
		sampler_use_pss(&rc->sampler, rc->opts->pss_interval_ns);
	if (rc->opts->nvml)
		sampler_use_gpu(&rc->sampler, rc->opts->nvml, rc->opts->gpu_interval_ns,
				rc->start_mono);
	if (rc->target->cg && rc->target->cg_sample) {
		rc->run->peak_cgroup_exact = sampler_use_cgroup(&rc->sampler, rc->target->cg,
								rc->target->cg_reset_peak);
		if (rc->sampler.cg_peak_before != UINT64_MAX)
			rc->run->cgroup_peak_before = rc->sampler.cg_peak_before;
	}
	if (rc->target->psi_cgroup_dir)
		sampler_use_cgroup_psi(&rc->sampler, rc->target->psi_cgroup_dir);	/* none: fine */
	struct oom_watch *early = rc->opts->oom_watch;
	if (early && early->open) {
		rc->oom = *early;	/* taken over: the caller's copy is left closed */
		memset(early, 0, sizeof(*early));
		early->kmsg.fd = -1;
	} else {
		oom_watch_open(&rc->oom, rc->target->cg);
	}
	rc->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (rc->timerfd < 0)
		return -errno;
	/* Absolute deadlines start + k * interval: late wake-ups never accumulate. */
	int64_t first = rc->start_mono + rc->opts->interval_ns;
	struct itimerspec its = {
		.it_interval = { (time_t)(rc->opts->interval_ns / NS_PER_S),
				 (long)(rc->opts->interval_ns % NS_PER_S) },
		.it_value = { (time_t)(first / NS_PER_S), (long)(first % NS_PER_S) },
	};
	if (timerfd_settime(rc->timerfd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
		return -errno;
	if (rc->opts->nvml && rc->opts->gpu_interval_ns < rc->opts->interval_ns)
		return gpu_timer_open(rc);
	return 0;
}

/* A GPU poll: the highest GPU figures since the last sample (record/sampler.h). */
static void gpu_tick(struct recorder *rc)
{
	uint64_t ticks;
	if (read(rc->gpufd, &ticks, sizeof(ticks)) == (ssize_t)sizeof(ticks))
		sampler_poll_gpu(&rc->sampler, mono_ns());
}

static int poll_timeout_ms(const struct recorder *rc)
{
	if (!rc->opts->duration_ns)
		return -1;
	int64_t left = rc->start_mono + rc->opts->duration_ns - mono_ns();
	if (left <= 0)
		return 0;
	return (int)(left / NS_PER_MS + 1);
}

/* The files the loop waits on, in an epoll set (a poll of them all at every sample
 * would ask each one, at 1 kHz a sixth of the recorder's time): their index is the
 * event's data. The exit records' socket is there only when it is filtered to the one
 * target (taskstats_only): then it is drained when it has something, not at every
 * sample. For a set every exit on the host comes: it is there one-shot, read into
 * early[] at most every EARLY_EVERY_NS, and drained at samples. */
enum { LOOP_TIMER, LOOP_TARGET, LOOP_SIGNAL, LOOP_OOM, LOOP_GPU, LOOP_EXITS, LOOP_NFDS };

static int loop_open(struct recorder *rc)
{
	int fds[LOOP_NFDS] = { rc->timerfd, rc->target->pidfd, rc->sigfd, oom_watch_fd(&rc->oom),
			       rc->gpufd, rc->exits_filtered || rc->early ? taskstats_fd(&rc->ts) : -1 };
	int ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		return -errno;
	for (unsigned k = 0; k < LOOP_NFDS; k++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = k };
		if (k == LOOP_EXITS && !rc->exits_filtered)
			ev.events |= EPOLLONESHOT;
		if (fds[k] >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, fds[k], &ev) < 0) {
			int e = -errno;
			close(ep);
			return e;
		}
	}
	rc->early_armed = fds[LOOP_EXITS] >= 0;
	return ep;
}

/* Arms the set's exit records in the loop's epoll set ep again, once EARLY_EVERY_NS
 * passed since the last read and early[] has room. Returns how long until it may be
 * armed (ms), or -1 when there is nothing to wait for. */
static int arm_exits(struct recorder *rc, int ep)
{
	if (!rc->early || rc->early_armed || taskstats_fd(&rc->ts) < 0 ||
	    EARLY_EXITS - rc->nearly < TASKSTATS_DGRAM_RECS)
		return -1;
	int64_t left = rc->early_rearm - mono_ns();
	if (left > 0)
		return (int)(left / NS_PER_MS + 1);
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT, .data.u32 = LOOP_EXITS };
	if (epoll_ctl(ep, EPOLL_CTL_MOD, taskstats_fd(&rc->ts), &ev) == 0)
		rc->early_armed = 1;
	return -1;
}

/* At the run's end, a member still listed as running may be gone: it ended after the
 * last sample, with no exit record to say so (they need root; one may be lost). Read
 * through its own open files (so never another process given its pid), one reaped or a
 * zombie ended, how unknown ("gone"), by the run's end: never "running" after it. */
static void end_vanished(struct recorder *rc)
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

static uint64_t tv_ns(const struct timeval *tv)
{
	return (uint64_t)tv->tv_sec * NS_PER_S + (uint64_t)tv->tv_usec * 1000;
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
	if (r->samples && same_context(&s, &rc->last))
		return;
	int64_t end = rc->end_mono - rc->start_mono;
	s.elapsed_ns = !r->samples || end > rc->last.elapsed_ns ? end : rc->last.elapsed_ns + 1;
	if (s.elapsed_ns < 0)
		s.elapsed_ns = 0;
	hand_over(rc, &s, r->started_at + s.elapsed_ns);
}

/* Exit records that never reached the run: lost by the socket (its buffer overflowed)
 * or dropped for want of room while their process was not known yet. Most of them are
 * other processes' (every exit on the host comes), but the run cannot tell: said, and
 * stored as an event, so that a process missing from the table is explained. */
static void note_lost_exits(struct recorder *rc)
{
	uint64_t lost = rc->ts.lost, dropped = rc->exits_dropped;
	char detail[128];
	if (!lost && !dropped)
		return;
	snprintf(detail, sizeof(detail), "lost=%llu dropped=%llu",
		 (unsigned long long)lost, (unsigned long long)dropped);
	store_add_event(rc->st, rc->run->id, rc->run->ended_at ? rc->run->ended_at : real_ns(),
			"exit_records_lost", rc->target->pid, detail);
	say(rc, RECORDER_NOTE, "rsswatch: %llu exit records were lost and %llu dropped on a busy "
	    "host (some may be this run's: their processes keep their sampled figures)",
	    (unsigned long long)lost, (unsigned long long)dropped);
}

/* The loop's wait: until the duration's end or the exit records may be armed again. */
static int wait_ms(struct recorder *rc, int ep)
{
	int a = poll_timeout_ms(rc), b = arm_exits(rc, ep);
	return a < 0 ? b : b < 0 || a < b ? a : b;
}

int record(const struct record_opts *opts, const struct record_target *target, int sigfd,
	   struct store *st, struct run *run, int *store_err)
{
	struct recorder rc;
	memset(&rc, 0, sizeof(rc));
	rc.oom.kmsg.fd = -1;
	rc.oom.kmsg_err = -EBADF;
	rc.opts = opts;
	rc.target = target;
	rc.st = st;
	rc.run = run;
	rc.sigfd = sigfd;
	rc.timerfd = -1;
	rc.root = -1;
	rc.ts = (struct taskstats_listener)TASKSTATS_LISTENER_INIT;
	proclog_init(&rc.log);
	rc.gpufd = -1;
	rc.start_mono = mono_ns();
	rc.last_flush = rc.start_mono;
	rc.mark_tokens = MARKS_BURST;
	eta_watch_init(&rc.eta, opts->interval_ns, opts->warn_eta_ns);
	rc.every = opts->every;
	if (!rc.every)
		rc.every = opts->interval_ns >= NS_PER_S ? 1 : (unsigned)(NS_PER_S / opts->interval_ns);
	rc.since_live = rc.every - 1;	/* the first sample gets a line */

	int e = setup(&rc);
	if (e == 0 && take_sample(&rc) == -ESRCH) {
		if (target->pidfd < 0)
			cgroup_ended(&rc);
		else
			target_ended(&rc);	/* ended before the first sample */
	}

	if (e == 0)
		find_page(&rc);
	rc.pace_since = mono_ns();
	int ep = e == 0 ? loop_open(&rc) : -1;
	if (e == 0 && ep < 0)
		e = ep;
	while (e == 0 && rc.stop == RUNNING) {
		struct epoll_event evs[LOOP_NFDS];
		unsigned ready = 0;
		int n = epoll_wait(ep, evs, LOOP_NFDS, wait_ms(&rc, ep));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			e = -errno;
			break;
		}
		for (int k = 0; k < n; k++)
			if (evs[k].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
				ready |= 1u << evs[k].data.u32;
		if ((ready & (1u << LOOP_EXITS)) && rc.exits_filtered)
			drain_exits(&rc);	/* the target's own: at once (level-triggered) */
		else if (ready & (1u << LOOP_EXITS))
			collect_exits(&rc);
		if (ready & (1u << LOOP_GPU))
			gpu_tick(&rc);
		if (ready & (1u << LOOP_OOM))
			oom_watch_drain(&rc.oom, on_oom_kill, &rc);
		if (ready & (1u << LOOP_SIGNAL))
			handle_signal(&rc);
		if (ready & (1u << LOOP_TARGET)) {
			target_ended(&rc);
			break;
		}
		if (ready & (1u << LOOP_TIMER)) {
			uint64_t ticks;
			if (read(rc.timerfd, &ticks, sizeof(ticks)) != (ssize_t)sizeof(ticks)) {
				if (errno != EAGAIN) {
					e = -errno;
					break;
				}
				ticks = 1;
			}
			check_pace(&rc, ticks, mono_ns());
			/* -ESRCH: a zombie already; its pidfd becomes readable at once. */
			if (take_sample(&rc) == -ESRCH && rc.stop == RUNNING) {
				if (target->pidfd < 0) {
					cgroup_ended(&rc);
				} else {
					struct pollfd pfd = { target->pidfd, POLLIN, 0 };
					poll(&pfd, 1, ZOMBIE_PIDFD_WAIT_MS);
					target_ended(&rc);
				}
			}
			if (rc.stop == RUNNING)
				find_page(&rc);	/* after the sample, never within it */
		}
		if (rc.stop == RUNNING && opts->duration_ns &&
		    mono_ns() - rc.start_mono >= opts->duration_ns)
			rc.stop = DURATION;
	}

	/* Stopped with the target alive (a signal, -d): one more sample, unless one was
	 * just taken, so that what rose since the last (VmHWM keeps a spike) is not lost
	 * to the interval: Ctrl-C on a recording at 1 m kept nothing of its last minute. */
	if (e == 0 && (rc.stop == SIGNALED || rc.stop == DURATION) &&
	    mono_ns() - rc.last_sample >= NS_PER_MS)
		take_sample(&rc);	/* -ESRCH: it ended meanwhile; the last sample stands */
	/* The cgroup's peak since the last sample (its last moments are often the
	 * highest, and an OOM-killed command dies between two samples). */
	uint64_t cg_peak;
	if (rc.sampler_open && sampler_cgroup_peak(&rc.sampler, &cg_peak) &&
	    cg_peak > run->peak_cgroup) {
		run->peak_cgroup = cg_peak;
		run->peak_cgroup_at = run->ended_at ? run->ended_at : real_ns();
	}
	/* GPU reads since the last sample: a spike in the last moments counts too. */
	uint64_t gpu_hi;
	int64_t gpu_hi_at;
	if (rc.sampler_open && sampler_gpu_pending(&rc.sampler, &gpu_hi, &gpu_hi_at) &&
	    (int64_t)gpu_hi > run->peak_gpu) {
		run->peak_gpu = (int64_t)gpu_hi;
		run->peak_gpu_at = run->started_at + (gpu_hi_at - rc.start_mono);
	}
	/* Marks and counters written just before the target ended are still in its page. */
	if (rc.page)
		poll_client(&rc, mono_ns() - rc.start_mono, 1);
	say_lost_marks(&rc, 0);
	if (rc.counters_coalesced) {
		char detail[96];
		snprintf(detail, sizeof(detail), "coalesced=%llu stored=%llu per_s=%d",
			 (unsigned long long)rc.counters_coalesced,
			 (unsigned long long)rc.counter_rows, COUNTERS_PER_S);
		store_add_event(st, run->id, run->ended_at ? run->ended_at : real_ns(),
				"counters_coalesced", target->pid, detail);
	}
	if (rc.marks_lost || rc.marks_over) {
		char detail[96];
		snprintf(detail, sizeof(detail), "count=%llu overrun=%llu over_rate=%llu",
			 (unsigned long long)(rc.marks_lost + rc.marks_over),
			 (unsigned long long)rc.marks_lost, (unsigned long long)rc.marks_over);
		store_add_event(st, run->id, run->ended_at ? run->ended_at : real_ns(),
				"marks_lost", target->pid, detail);
	}
	/* Kernel log records of OOM kills of members, and exit records, that came in with
	 * the end. */
	if (rc.set_open)
		oom_watch_drain(&rc.oom, on_oom_kill, &rc);
	drain_exits(&rc);
	settle_kills(&rc, 1);
	if (rc.sampler_open)
		cgroup_kills(&rc, 1);	/* the cgroup is still there: its count is final */
	/* The set's last figures are stored; members left are not "exits". */
	note_untracked(&rc, 1);
	if (rc.stop == SIGNALED || rc.stop == DURATION || (e < 0 && rc.stop == RUNNING)) {
		strlcpy_rsw(run->outcome, OUTCOME_STOPPED, sizeof(run->outcome));
		run->ended_at = real_ns();
	}
	end_vanished(&rc);
	if (rc.sampler.cg_peak_rose)
		run->peak_cgroup_exact = 1;	/* the run reached it: an exact peak of the run */
	/* the last counters of processes still alive */
	if (rc.set_open)
		proclog_read_set(&rc.log, &rc.set, 1);
	else if (rc.root >= 0 && rc.sampler_open)
		proclog_read(&rc.log, (size_t)rc.root, &rc.sampler.stat_last, rc.sampler.have_stat,
			     &rc.sampler.io_last, rc.sampler.have_io);
	closing_sample(&rc);
	note_lost_exits(&rc);
	long big = proclog_largest(&rc.log);
	if (big >= 0) {
		run->peak_process_rss = rc.log.p[big].peak_rss;
		run->peak_process_pid = rc.log.p[big].pid;
		free(run->peak_process_comm);
		run->peak_process_comm = xstrdup(rc.log.p[big].comm);
	}
	metrics_server_end(opts->metrics, run);	/* how it ended, for the scrapes still to come */
	hooks_finish(opts->hooks, st, run->id);	/* their status is part of the run */
	/* The end is written on this thread (FINISH_GIVE_UP_NS). */
	int fe;
	int64_t give_up = mono_ns() + FINISH_GIVE_UP_NS;
	while ((fe = store_run_finish(st, run)) < 0 && mono_ns() < give_up)
		poll(NULL, 0, FINISH_RETRY_MS);
	proclog_order_starts(&rc.log);
	while (fe == 0 && (fe = store_put_processes(st, run->id, rc.log.p, rc.log.n)) < 0 &&
	       mono_ns() < give_up)
		poll(NULL, 0, FINISH_RETRY_MS);
	if (store_err)
		*store_err = fe;
	if (ep >= 0)
		close(ep);
	if (rc.timerfd >= 0)
		close(rc.timerfd);
	if (rc.gpufd >= 0)
		close(rc.gpufd);
	if (rc.sampler_open)
		sampler_close(&rc.sampler);
	oom_watch_close(&rc.oom);
	taskstats_close(&rc.ts);
	if (rc.set_open)
		procset_close(&rc.set, 0);
	free(rc.pending);
	free(rc.retry);
	free(rc.pkills);
	free(rc.early);
	client_page_close(rc.page);
	client_dir_watch_close(&rc.page_dir);
	proclog_release(&rc.log);
	if (rc.stop == TARGET_ENDED && target->pid > 0)
		client_page_remove_stale(target->pid);
	/* A stop signal read in the pass that found the target ended: the run is the
	 * target's end, and the stop is still to be done by the caller (record --follow
	 * and the agent would wait for the next instance, deaf to it). It is blocked and
	 * sent to this thread, so it waits on this thread's signalfd again. */
	if (rc.stop == TARGET_ENDED && rc.stop_signo)
		pthread_kill(pthread_self(), rc.stop_signo);
	return e;
}
