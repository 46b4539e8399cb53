/* The processes of a run: the target alone, or every member a set ever had (--tree,
 * -g), each with its own peak, where that peak came from, and how it ended. The
 * recorder feeds it from every source that knows something about one process: its
 * samples (VmRSS, VmHWM), the kernel's exit record (taskstats hiwater_rss), wait4's
 * rusage, the kernel's OOM kill report. It is written to the store's process table at
 * the end of the run.
 *
 * The run's own peak. A process that existed before the recording ("old": an attached
 * target, or a member of an attached tree or cgroup present at the first sample)
 * carries a VmHWM from before; that value is kept apart as hwm_before, and a high-water
 * figure (VmHWM, the exit record's hiwater_rss) counts only once it rises above it.
 * Current figures (a sampled VmRSS, the RSS in an OOM report) always count.
 *
 * Its context totals (CPU times, faults, storage bytes: proc_summary) come from two
 * sources. Reads of /proc/PID/stat and io (proclog_read: a set's members as they
 * leave and at the end, a single target at the end) cover every thread the process
 * had, up to the read. Exit records (proclog_exit_record) come per thread: each PID
 * record holds its own thread's figures; the process's CPU times over all its threads
 * are in the TGID record the kernel adds to the last thread's message when the
 * process ever had more than one thread. So a process that ended with an AGROUP
 * record and no TGID record had one thread, and that record is exact for all six;
 * otherwise CPU comes from the TGID record, and faults and bytes are the sum of the
 * thread records seen, which misses threads that ended before the process was known.
 * Every source is a lower bound of a counter that only grows: the figure kept is the
 * largest, except that a one-thread process's own exit record is the last word.
 *
 * The set's ended part. A set's context at a sample is what its live members read
 * (procset) plus what every process that left it did (ended[]: proclog_sum). An entry
 * joins that sum once it is no longer a live member: it left at a sample, or it is
 * known only from its exit record (it lived between two samples), or its record came
 * after it left. From then on the sum holds the most any source said of it (counted[]),
 * raised as later sources say more: a member sampled and then ended adds, at its
 * record, only what it did beyond its last read, and no figure of the sum ever falls.
 *
 * Bounded. A fork loop or a long build can end hundreds of thousands of processes;
 * each entry costs about 400 bytes. proclog_fold keeps the table near a bound: entries
 * that ended long enough ago that no source will speak of them again (no exit record,
 * no kill line) and that were not OOM-killed are folded, those with the smallest peaks
 * first, into one aggregate (folded): their count, their largest peak and their
 * figures' sum. The set's ended sum already holds them; proclog_total adds the sum.
 *
 * Invariant: entries are in the order processes were first seen; index[] maps a pid to
 * its latest entry (a pid reused during the run gets a new entry); ended[k] is the sum
 * of counted[k] over the entries with in_sum, and over the folded ones. */
#ifndef RSW_RECORD_PROCLOG_H
#define RSW_RECORD_PROCLOG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "source/proc.h"
#include "source/taskstats.h"
#include "store/run.h"

struct procset;

struct proclog {
	struct proc_summary *p;		/* what is stored */
	struct proclog_extra {
		uint64_t hwm0;		/* old: VmHWM when first seen (counts only above) */
		int old;
		/* context: the last read (-1 unknown), in ns, faults and bytes */
		int64_t read[6];
		/* sums over the thread (PID) records seen; the TGID record's CPU times */
		uint64_t rec[6], group_utime_ns, group_stime_ns;
		unsigned nrec;		/* thread records seen */
		int rec_io;		/* all of them had I/O bytes */
		int ended_rec;		/* the AGROUP record was seen */
		int group;		/* the TGID record was seen */
		int in_sum;		/* in the set's ended sum, with counted[] */
		int exit_said;		/* its proc_exit event is stored */
		uint64_t counted[6];
	} *x;
	/* The set's ended sum: CPU in ns, faults, bytes (proclog_sum); ended_cpu, ended_io:
	 * an entry in it had those figures. */
	uint64_t ended[6];
	int ended_cpu, ended_io;
	/* Ended entries no longer kept one by one (proclog_fold). */
	struct proclog_folded {
		uint64_t n;		/* how many */
		uint64_t peak_max;	/* the largest of their peaks */
		uint64_t sum[6];	/* their figures (entry_figures), as in ended[] */
		int cpu, io;		/* one of them had those figures */
	} folded;
	size_t fold_at;			/* n at which proclog_fold tries again */
	size_t n, cap;
	int32_t *index;			/* open addressing: entry index + 1, 0 empty */
	size_t nindex;			/* a power of two, at least twice n */
};

void proclog_init(struct proclog *l);
void proclog_release(struct proclog *l);

/* The latest entry of pid, or -1. */
long proclog_find(const struct proclog *l, pid_t pid);
/* The entry of pid that was alive at elapsed at: the latest one first seen no later
 * than at + early (a process is first seen after it started: at a sample, or from an
 * exit record read after it ended) and not ended before at - late. pids are reused:
 * an OOM kill read late, or a crash loop that wraps pid_max, is matched to the process
 * it was of, not to the pid's latest. -1 when none. */
long proclog_find_at(const struct proclog *l, pid_t pid, int64_t at, int64_t early, int64_t late);
/* A new entry for a process first seen at elapsed first_ns. old: it existed before the
 * recording, with VmHWM hwm then (kept as hwm_before). Returns its index. */
size_t proclog_add(struct proclog *l, pid_t pid, pid_t ppid, const char *comm, int64_t first_ns,
		   int old, uint64_t hwm);

/* Offers a figure for entry i's peak. A current figure (sample, OOM report, wait4)
 * counts as it is; a high-water figure (VmHWM, exit record) only above hwm_before for
 * an old process. Returns the entry's peak when this raised it, or when an exact
 * figure (peak_is_exact) equal to a peak from a sample confirmed it, else 0. */
uint64_t proclog_offer(struct proclog *l, size_t i, uint64_t bytes, const char *source);

/* Entry i ended at elapsed end_ns: how (PROC_*), with its exit code or signal (-1 when
 * they do not apply). A later, better-informed end replaces "gone". */
void proclog_end(struct proclog *l, size_t i, int64_t end_ns, const char *ended, int exit_code,
		 int signal);

/* The last /proc/PID/stat (have_stat) and io (have_io) read of entry i: the figures of
 * every thread of the process up to the read. */
void proclog_read(struct proclog *l, size_t i, const struct proc_stat *st, int have_stat,
		  const struct proc_io *io, int have_io);
/* An exit record of entry i's process: one of its threads' (TASKSTATS_PID), or its
 * threads' CPU sums (TASKSTATS_TGID). */
void proclog_exit_record(struct proclog *l, size_t i, const struct taskstats_exit *x);
/* Hands each member's last read of a set to its entry: those that left at the last
 * read (the final figures of one seen as a zombie), or with all, every member (at the
 * end of the run, for those still alive). */
void proclog_read_set(struct proclog *l, const struct procset *ps, int all);

/* Entry i is no longer a live member of the set (or never was one): its figures join
 * the set's ended sum, now and as its sources say more. Idempotent. */
void proclog_sum(struct proclog *l, size_t i);
/* Keeps the table near keep entries: when it holds more, folds entries that ended
 * before now_ns - settled_ns, except OOM kills and entry *root, smallest peaks first,
 * until at most keep / 2 are left or none can go; *root (-1: none) is renumbered.
 * Entry numbers change: call it where no other index is held. Cheap when it has
 * nothing to do; a try that cannot go below keep waits for keep / 4 more entries.
 * Returns how many were folded. */
size_t proclog_fold(struct proclog *l, int64_t now_ns, int64_t settled_ns, size_t keep,
		    long *root);

/* Adds the ended sum to a sample's context figures (SAMPLE_CPU, SAMPLE_IO). */
void proclog_add_ended(const struct proclog *l, struct sample *s);
/* The context of the whole run, at its end: the most each entry's sources said, summed
 * over every entry, ended or not (for the one at the end of a set, after each live
 * member's last read was handed over). Figures no entry had are left as they are. */
void proclog_total(const struct proclog *l, struct sample *s);

/* The entry with the largest peak, or -1 when there is none. */
long proclog_largest(const struct proclog *l);

/* No process starts before its parent: a start known only from an exit record (its
 * end, read late, less how long it lived) is never early, so where a child's start is
 * before its parent's, the parent's is the child's. The parent of entry i is the last
 * entry before it with its ppid's pid (a parent is always logged before its child).
 * Called once, at the end. */
void proclog_order_starts(struct proclog *l);

#endif
