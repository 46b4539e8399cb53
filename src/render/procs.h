/* The processes of a run as people read them: where each peak came from, how each
 * process ended, the per-process table of `show`, and the OOM kills in a sentence.
 * Pure formatting; every process name goes through buf_put_printable. */
#ifndef RSW_RENDER_PROCS_H
#define RSW_RENDER_PROCS_H

#include <stddef.h>

#include "base/buf.h"
#include "store/run.h"

/* The run's figures are totals over a set of processes (--tree, or a cgroup's members). */
int run_is_set(const struct run *r);

/* "from the exit record", "from VmHWM", "from a sample", ...: the PEAK_FROM_* word in a
 * phrase; NULL for an empty or unknown source (runs recorded before schema 8). */
const char *peak_source_words(const char *peak_source);

/* Where a run's peak came from, in words ("from VmHWM", "from the OOM report", ...): its
 * peak_source, or for runs recorded before peak_source existed a guess from the run
 * (the OOM report when the peak is above every sample at the time of the OOM kill,
 * VmHWM when it is above every sample otherwise). max_sampled is the highest sampled
 * RSS (or set total). NULL when not known. Every output uses this, so show, report,
 * plot and the terminal chart say the same. */
const char *run_peak_from(const struct run *r, uint64_t max_sampled);

/* The run's peak in one phrase: "peak 773.2 MiB from VmHWM", and when the peak is
 * above every sample, "highest sample 159.9 MiB; peak 773.2 MiB from VmHWM". */
void run_peak_words(struct buf *b, const struct run *r, uint64_t max_sampled);

/* How a process ended, for a table cell: "exited 0", "killed by SIGTERM", "OOM-killed",
 * "running", "gone", "left". */
void proc_ended_words(struct buf *b, const struct proc_summary *p);

/* The processes left out of a table, p[0..n) largest first, in words: "15 more
 * processes: each peaked at 1.2 MiB or less, all together at most 9.7 MiB" then sep and
 * how they ended, "(12 exited 0, 3 gone)". */
void procs_rest_words(struct buf *b, const struct proc_summary *p, size_t n, const char *sep);

/* The per-process table of `show`: p[0..n) largest peak first (as store_processes
 * gives them), the first `top` of them a row each (pid, command, start and end on the
 * run's elapsed time, peak with '*' where it is exact, CPU seconds, major faults, how it
 * ended), the rest in one line, then a legend for '*' when any row has it and one for
 * the context columns when any row knows them. Nothing when n is 0. */
void procs_table(struct buf *b, const struct proc_summary *p, size_t n, size_t top);
/* A process's CPU time, user and system together, in seconds for a table cell
 * ("12.34", "1234.5"); "-" when not known. Returns v. */
const char *proc_cpu_words(char *v, size_t n, const struct proc_summary *p);
/* A count for a table cell: "123456", "1.2M", "3.4G"; "-" when negative (not known). */
const char *proc_count_words(char *v, size_t n, int64_t count);

/* The OOM kills of a run in words, after the outcome:
 * "1 process OOM-killed: python3 (pid 5123) at +1.2s, anon-rss 199.6 MiB", or for
 * several "3 processes OOM-killed; the largest: ..., the first at +0.8s". When the
 * target itself was killed (its outcome says so already), only the others are named:
 * "2 other processes OOM-killed; ...". Nothing when there is nothing to add. k[0..n) are
 * in time order; r->oom_kills counts kills whose kernel report could not be read too. */
void oom_kills_words(struct buf *b, const struct run *r, const struct oom_kill *k, size_t n);
/* How many kills oom_kills_words speaks of (0: it writes nothing). */
size_t oom_kills_other(const struct run *r, const struct oom_kill *k, size_t n);

#endif
