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
 * Invariant: entries are in the order processes were first seen; index[] maps a pid to
 * its latest entry (a pid reused during the run gets a new entry). */
#ifndef RSW_RECORD_PROCLOG_H
#define RSW_RECORD_PROCLOG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "store/model.h"

struct proclog {
	struct proc_summary *p;		/* what is stored */
	struct proclog_extra {
		uint64_t hwm0;		/* old: VmHWM when first seen (counts only above) */
		int old;
	} *x;
	size_t n, cap;
	int32_t *index;			/* open addressing: entry index + 1, 0 empty */
	size_t nindex;			/* a power of two, at least twice n */
};

void proclog_init(struct proclog *l);
void proclog_release(struct proclog *l);

/* The latest entry of pid, or -1. */
long proclog_find(const struct proclog *l, pid_t pid);
/* A new entry for a process first seen at elapsed first_ns. old: it existed before the
 * recording, with VmHWM hwm then (kept as hwm_before). Returns its index. */
size_t proclog_add(struct proclog *l, pid_t pid, pid_t ppid, const char *comm, int64_t first_ns,
		   int old, uint64_t hwm);

/* Offers a figure for entry i's peak. A current figure (sample, OOM report, wait4)
 * counts as it is; a high-water figure (VmHWM, exit record) only above hwm_before for
 * an old process. Returns the entry's peak when this raised it, else 0. */
uint64_t proclog_offer(struct proclog *l, size_t i, uint64_t bytes, const char *source);

/* Entry i ended at elapsed end_ns: how (PROC_*), with its exit code or signal (-1 when
 * they do not apply). A later, better-informed end replaces "gone". */
void proclog_end(struct proclog *l, size_t i, int64_t end_ns, const char *ended, int exit_code,
		 int signal);

/* The entry with the largest peak, or -1 when there is none. */
long proclog_largest(const struct proclog *l);

#endif
