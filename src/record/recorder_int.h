/* The recorder's insides, shared by its files and by no one else (record/recorder.h
 * is the interface): its knobs, its state, and the functions one of its files offers
 * the others, each prefixed rec_.
 *
 *   recorder.c        the loop: set-up, samples, thresholds, signals, record()'s steps
 *   recorder_procs.c  every process of the run: exit records, members joining and
 *                     leaving, processes vanished, folding past PROCLOG_KEEP
 *   recorder_end.c    OOM kills and who was killed, how the target ended, the closing
 *                     sample, and the run's end settled and written
 *   recorder_page.c   the application's shared page: finding it, marks and counters
 *   recorder_stacks.c record --stacks: live bytes by call stack, at the peak and end */
#ifndef RSW_RECORD_RECORDER_INT_H
#define RSW_RECORD_RECORDER_INT_H

#include "record/recorder.h"
#include "record/eta_watch.h"
#include "record/oom.h"
#include "record/proclog.h"
#include "record/procset.h"
#include "record/sampler.h"
#include "record/stagepeak.h"
#include "source/client.h"
#include "source/kmsg.h"
#include "source/kpeak.h"
#include "source/kstacks.h"
#include "source/taskstats.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

struct stacks;

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
 * counted (exits_dropped). Other processes' come here only where the set cannot tell
 * them (no connector, or a fork event lost): on this 2-core machine with other builds
 * running, about 200 a second. */
#define PENDING_EXITS 256
#define PENDING_EXITS_MAX 2048
/* A set's exit records read between samples (struct recorder's early[]): EARLY_EXITS
 * kept at first, doubled as a busy tree needs, up to EARLY_EXITS_MAX (1.25 MiB); a
 * read at most every EARLY_EVERY_NS, so that a busy host's exits cost at most 10
 * wake-ups a second (every 10 ms: 100, and 8 ms of CPU a second against 1 without,
 * for a tree on a host with about 80 exits a second). Every exit on the host comes:
 * a record of a process the set does not hold (procset_may_hold) waits in doubt[]
 * (DOUBT_EXITS at a time) until the connector is drained after it, then is kept or
 * known to be another process's, and counted in exits_others. */
#define EARLY_EXITS 512
#define EARLY_EXITS_MAX 8192
#define DOUBT_EXITS 256
#define EARLY_EVERY_NS (100 * NS_PER_MS)

/* How long the recorder waits for what comes a moment later, and why. */

/* The kernel logs an OOM kill before the victim exits; the line is normally read by
 * then. When the counters rec_say there was one but no line came, give the log this long
 * (looking every KILL_LINE_POLL_MS), then decide from the counters alone. */
#define KILL_LINE_WAIT_NS (500 * NS_PER_MS)
#define KILL_LINE_POLL_MS 50
/* A kill line read before its process is known to be the run's (it lived between two
 * samples, and its exit record makes it known at the next sample's drain) waits in
 * pkills[] for it: at most PENDING_KILLS lines, each for PENDING_KILL_INTERVALS
 * intervals and RECENT_NS more, then it was some other process's. */
#define PENDING_KILLS 64
/* How many counted kills are remembered against their second report: the kernel
 * log's line comes within milliseconds of the engine's record, and a crash loop kills
 * a few hundred a second. */
#define KILLS_SEEN 64
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
 * EXIT_STATUS_POLL_MS for at most 2 s (record/target.h: target_exit_ask_again), then
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
 * member, and at least every second (rec_set_status_bound). */
#define SET_STATUS_NS_PER_MEMBER (2 * NS_PER_MS)

/* The application's marks: stored at most MARKS_PER_S a second on average (a token
 * bucket of MARKS_BURST); losses are said at most every LOST_SAY_NS. */
#define LOST_SAY_NS (10 * NS_PER_S)
#define MARKS_PER_S 2000	/* stored at most, on average */
#define MARKS_BURST 2000	/* stored at once, at most (below the batch's bound) */

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
	/* A launched command's identity and owner, read while it lives (rec_page_init):
	 * its page, left at exit for us (RSW_PAGE_KEEP_ENV), is still looked for after
	 * it is gone. page_owner is updated at each look (it may change its user). */
	struct client_ident page_who;
	int page_who_ok;
	uid_t page_owner;
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
	int64_t real_off;	/* CLOCK_REALTIME - CLOCK_MONOTONIC: the engine's times */
	struct kpeak *kpeak;	/* opts->kpeak, or NULL where this run cannot use it */
	struct stacks *stacks;	/* record --stacks: live bytes by stack (recorder_stacks.c) */
	struct kstacks_counts kstacks_base;	/* the program's counts when the run began */
	int probe_said;		/* a failed probe of an allocator was said */
	int gpu_own_probed;	/* the libcuda the target maps was found (probe_own_driver) */
	int64_t gpu_own_next;	/* until then, when to look again (CLOCK_MONOTONIC) */
	/* Each stage's peak from the engine's history (recorder_stages.c): the marks are
	 * read back from the store (a mark of `rsswatch mark` is written there by another
	 * process) through a read-only connection of its own. */
	struct stagepeak stages;
	int stages_on;		/* STAGES_OFF, _BEFORE (the first sample) or _ON */
	struct store *marks_reader;
	int64_t marks_after;	/* the row id of the last mark read */
	int64_t marks_read_at;	/* mono ns of the last read */
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
	/* The last KILLS_SEEN kills counted, by pid and time: the same kill comes from
	 * the engine (oom:mark_victim) and later from the kernel log, and is counted
	 * once (count_kill). */
	struct kill_seen {
		pid_t pid;
		int64_t t;	/* CLOCK_REALTIME */
	} kills_seen[KILLS_SEEN];
	size_t nkills_seen;
	/* The engine's kills waiting for their line, to be stored with the cgroup it
	 * names (KILLS_SEEN, allocated at the first): rec_store_waiting_kills. */
	struct kill_wait {
		struct kmsg_oom kill;
		int64_t t;	/* CLOCK_REALTIME */
		int64_t due;	/* CLOCK_MONOTONIC: stored without the line from then */
	} *kwait;
	size_t nkwait;
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
	uint64_t exits_others;	/* records known to be other processes' (settle_doubt) */
	/* A set's records read as they come between samples, only to learn when each
	 * process ended (the time of the read: taskstats.h); they are applied at the next
	 * sample's drain, first and in order, as if read then. The socket is in the
	 * loop's epoll set one-shot, armed again EARLY_EVERY_NS after a read while early[]
	 * has room for another datagram; when it has none, the rest wait for the sample. */
	struct taskstats_exit *early, *doubt;
	size_t nearly, capearly, ndoubt;
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

/* A process ended less than this before some news of it is still the one the news
 * is about (entry_at). */
#define RECENT_NS (2 * NS_PER_S)


/* recorder.c */
void rec_say(const struct recorder *rc, enum recorder_note kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void rec_fire_hook(struct recorder *rc, const char *event, pid_t pid, const char *comm,
		   uint64_t rss);
void rec_run_peak(struct recorder *rc, uint64_t bytes, int64_t t, const char *source);
/* The eBPF engine's peak (opts->kpeak), offered for the run's: at or above every other
 * figure of the same processes, it takes an equal one's place with its own time. */
void rec_kernel_peak(struct recorder *rc);
void rec_proc_peak(struct recorder *rc, size_t i, uint64_t bytes, int64_t t, const char *source);
void rec_hand_over(struct recorder *rc, struct sample *s, int64_t t);
/* A launched command's CPU counts from its exec: what its process had used before (the
 * recorder's copy after the fork: its faults, joining the run's cgroup) is the
 * launch's, though the kernel's counters hold it. Takes it out of s's. */
void rec_cpu_from_exec(const struct recorder *rc, struct sample *s);
/* The same for the command's own figures in the process table, once they are final. */
void rec_root_cpu_from_exec(struct recorder *rc);

/* recorder_procs.c */
size_t rec_proc_seen(struct recorder *rc, pid_t pid, const struct proc_status *st,
		     int64_t elapsed);
void rec_drain_exits(struct recorder *rc);
void rec_collect_exits(struct recorder *rc);
void rec_store_members(struct recorder *rc, int64_t elapsed, int64_t t);
void rec_note_untracked(struct recorder *rc, int at_end);
unsigned rec_status_reuse_for(int64_t interval_ns, int64_t bound_ns);
void rec_set_status_bound(struct recorder *rc);
void rec_fold_processes(struct recorder *rc, int64_t t, int64_t elapsed);
void rec_on_proc(void *ctx, pid_t pid, int start, const struct proc_status *st);
void rec_end_vanished(struct recorder *rc);
void rec_note_lost_exits(struct recorder *rc);

/* recorder_end.c */
void rec_settle_kills(struct recorder *rc, int at_end);
/* The engine's OOM victims (no system call), then the kernel log's kill lines: every
 * OOM kill reported so far handed to the run. */
void rec_drain_victims(struct recorder *rc);
/* Is memcg (a path in the memory hierarchy, as the kernel log and /proc/PID/cgroup
 * name it) the cgroup that holds only the set, or below it? */
int rec_in_set_cgroup(const struct recorder *rc, const char *memcg);
/* Stores the engine's kills whose line did not come in time (all of them at_end). */
void rec_store_waiting_kills(struct recorder *rc, int at_end);
void rec_drain_kills(struct recorder *rc);
void rec_on_oom_kill(void *ctx, const struct kmsg_oom *kill, const char *memcg,
		     int64_t realtime_ns);
void rec_cgroup_kills(struct recorder *rc, int at_end);
void rec_target_ended(struct recorder *rc);
void rec_cgroup_ended(struct recorder *rc);
void rec_settle_end(struct recorder *rc, int e);
int rec_write_end(struct recorder *rc);

/* recorder_stages.c */
enum { STAGES_OFF, STAGES_BEFORE, STAGES_ON };
void rec_stages_begin(struct recorder *rc);
void rec_stages_tick(struct recorder *rc, int64_t now);
void rec_stages_end(struct recorder *rc);
void rec_stages_release(struct recorder *rc);

/* recorder_page.c */
void rec_page_init(struct recorder *rc);
void rec_find_page(struct recorder *rc);
void rec_poll_client(struct recorder *rc, int64_t elapsed, int final);
void rec_page_finish(struct recorder *rc);

/* recorder_stacks.c */
void rec_stacks_begin(struct recorder *rc);
/* The stacks program's records so far, fed in order, and the snapshot at the peak. */
void rec_drain_stacks(struct recorder *rc);
/* The last records; the snapshot's time in the run; what was lost, said and stored. */
void rec_stacks_end(struct recorder *rc);
/* pid left the set (moved out of its cgroup): its blocks leave the live bytes. */
void rec_stacks_left(struct recorder *rc, pid_t pid);
/* The run's stacks into the store (after its row). 0 or -errno. */
int rec_stacks_write(struct recorder *rc);
void rec_stacks_release(struct recorder *rc);

#endif
