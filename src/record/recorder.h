/* The recording loop: one thread polling a timerfd (absolute, drift-free deadlines on
 * CLOCK_MONOTONIC), the target's pidfd (its exit is seen at once, not at the next
 * sample) and a signalfd (SIGINT, SIGTERM, SIGHUP end the recording cleanly, or are
 * passed on to a launched command); with NVML, a second timerfd for GPU reads between
 * samples when they are due more often than samples.
 *
 * Each tick assembles one sample from kept-open files, folds it into the run's running
 * totals and appends it to the store's batch; the batch is committed at least once a
 * second, so a recorder killed with SIGKILL loses at most about a second. */
#ifndef RSW_RECORD_RECORDER_H
#define RSW_RECORD_RECORDER_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "metrics/http.h"
#include "record/hooks.h"
#include "record/target.h"
#include "source/cgroup.h"
#include "source/client.h"
#include "source/nvml.h"
#include "source/taskstats.h"
#include "store/store.h"

struct oom_watch;
struct kpeak;
struct kstacks;
struct unwinder;

/* What the recorder has to say while it records. It prints nothing itself (only the
 * CLI prints): it hands each line to a sink the caller supplies, which decides where
 * and how it is shown. */
enum recorder_note {
	RECORDER_NOTE,		/* a line of its own ("rsswatch: ...") */
	RECORDER_ALERT,		/* a threshold crossed: to be highlighted on a terminal */
};

/* The figures of one live line: the sample taken at CLOCK_REALTIME t, the projected
 * time to exhaustion (eta_s < 0: memory is not rising toward a limit) and the
 * application's counters as it named them. Valid during the call only. */
struct recorder_live {
	int64_t t;
	const struct sample *s;
	double eta_s;
	const char *eta_limit;
	const struct client_counter *counters;
	size_t ncounters;
};

/* Either callback may be NULL. text is one line without its newline. */
struct recorder_sink {
	void (*live)(void *ctx, const struct recorder_live *l);
	void (*note)(void *ctx, enum recorder_note kind, const char *text);
	void *ctx;
};

struct record_opts {
	int64_t interval_ns;
	int64_t duration_ns;	/* 0: until the target ends or a signal */
	unsigned every;		/* a live line every N samples; 0: about one a second */
	int quiet;		/* no live lines, no threshold lines (other notes still go) */
	int verbose;		/* notes on what is followed how (record -v) */
	const struct recorder_sink *sink;	/* where lines go; NULL: nowhere */
	struct nvml *nvml;	/* GPU figures from here, or NULL */
	int64_t gpu_interval_ns;	/* read GPU figures this often; samples keep the highest */
	/* --warn: a "warn" event and a highlighted line when memory reaches warn_bytes,
	 * or warn_pct percent of the cgroup's limit (where one is sampled: the cgroup's
	 * usage is compared then) else of MemTotal; "warn_clear" when it falls back. */
	uint64_t warn_bytes;
	double warn_pct;
	/* --warn-eta: a "warn_eta" event and a line, once, when the projected time to
	 * exhaustion (record/eta.h) falls under this; 0: none. */
	int64_t warn_eta_ns;
	/* --pss: read PSS/USS/SwapPss from smaps_rollup at most this often (0: never).
	 * Before the first read of a target (or set) above PSS_WARN_RSS resident, one
	 * note says what each read costs it. */
	int64_t pss_interval_ns;
	/* --tree: walk the children files at every sample instead of following fork
	 * events through the proc connector (tests; RSSWATCH_NO_PROCCN=1). */
	int no_proccn;
	/* Do not read the kernel's exit records (benchmarks; RSSWATCH_NO_TASKSTATS=1). */
	int no_exit_records;
	/* Do not read the kernel log, as where it is not readable (tests;
	 * RSSWATCH_NO_KMSG=1). */
	int no_kmsg;
	/* A listener for exit records registered (taskstats_open) before the command was
	 * launched, or NULL: a command that ends while the recording starts (/bin/true
	 * does, in about a millisecond) still leaves its record. record() takes it over
	 * and leaves it closed; without one it opens its own. */
	struct taskstats_listener *exit_listener;
	/* The OOM evidence (record/oom.h) opened before the command was launched, or NULL:
	 * a command killed while its exec loads (a limit below what it needs, killed in 3
	 * ms) was killed before the recording began, and the kill line and the cgroup's
	 * count must be read from before. Taken over as exit_listener is. */
	struct oom_watch *oom_watch;
	/* The eBPF peak engine (source/kpeak.h), loaded by the caller, or NULL. record()
	 * tracks the target in it (a launched command the caller had it adopt at the
	 * fork), and with a tree every member; it reads the exact peak at each sample.
	 * The caller closes it. */
	struct kpeak *kpeak;
	/* record --stacks: the stacks program on the engine's processes and the walker of
	 * the stacks it sends (source/kstacks.h, source/unwind.h), loaded by the caller
	 * with kpeak, or NULL. The caller closes them. */
	struct kstacks *kstacks;
	struct unwinder *unwinder;
	/* --reset-peak: restart an attached target's VmHWM at the start (clear_refs 5). */
	int reset_peak;
	/* --on-warn, --on-oom: commands run at "warn", "warn_eta" and "oom_kill" events
	 * (record/hooks.h), or NULL. */
	struct hooks *hooks;
	/* --listen: each sample is handed to this endpoint (metrics/http.h), or NULL. */
	struct metrics_server *metrics;
};

#define PSS_WARN_RSS (2ULL << 30)

/* Whether the recorder of run r (marked "running") is still alive: this boot, and the
 * process with its pid has its start time (pids are reused) and is no zombie. Reads
 * /proc; for store_set_alive(). */
int recorder_alive(const struct run *r);

/* The signals the recorder takes through its signalfd. Block them (and remember the
 * previous mask for a launched command) before starting anything. */
void recorder_signals(sigset_t *set);

struct record_target {
	pid_t pid;
	int pidfd;
	int is_child;		/* launched by us: we reap it and pass signals on */
	/* a launched command's child at its exec (target_launch()): wait4's peak counts
	 * only above its footprint then, its CPU from then, and the run's clock starts
	 * at its exec */
	struct launch_facts launch;
	/* The target's memory cgroup, or NULL: its oom_kill counter is evidence when the
	 * target dies of SIGKILL. With cg_sample its usage, limit and peak go into every
	 * sample (and with cg_reset_peak the peak is restarted after each read). cg_path
	 * is its path in the hierarchy ("/a/b"), as the kernel log names cgroups. */
	struct cg_reader *cg;
	int cg_sample;
	int cg_reset_peak;
	const char *cg_path;
	/* A set of processes instead of one: with set_cgroup_dir the members of that
	 * cgroup (pid 0 and pidfd -1 for -g: the run ends when the cgroup is empty or
	 * removed), else with tree pid and all its descendants. Members that come and go
	 * are "proc_start"/"proc_exit" events, an OOM kill of one an "oom_kill" event;
	 * each member's figures are stored per sample beside the totals. */
	int tree;
	const char *set_cgroup_dir;
	/* A v2 cgroup directory whose memory.pressure is sampled beside the host's
	 * /proc/pressure/memory (the target's cgroup, -g, or the one made for
	 * --memory-limit), or NULL. */
	const char *psi_cgroup_dir;
};

/* Records target into run. When the target dies of SIGKILL, the kernel log, its
 * cgroup's and the host's OOM kill counts decide whether the OOM killer did it (see
 * record/oom.h): run->outcome becomes "oom_killed" and an "oom_kill" event is stored,
 * or run->outcome_note says what partial evidence there was.
 * Records target into run (already begun in st) until it ends, the duration passes or a
 * signal stops it. On return run holds the final outcome and totals, written to the
 * store unless *store_err (when not NULL) says why not (-ENOSPC, -EBUSY, ...: the run
 * then stays in the store as far as it got, and reads as interrupted). sigfd is a
 * signalfd for recorder_signals(). Writes go through the store's writer thread, so
 * sampling never waits on the database. Returns 0, or -errno when the recording could
 * not be carried out (what was recorded is still stored). */
int record(const struct record_opts *opts, const struct record_target *target, int sigfd,
	   struct store *st, struct run *run, int *store_err);

#endif
