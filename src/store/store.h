/* The run database: one SQLite file holding every recording.
 *
 * Writers (one recorder per run) add samples in batches: store_add_sample() only
 * appends inside an open transaction, store_flush() commits it together with the run's
 * running totals, so a recorder killed with SIGKILL loses at most the samples since the
 * last flush and leaves an intact database whose run is later shown as "interrupted".
 * WAL mode and a busy timeout let several recorders and readers share one file.
 *
 * The schema is versioned with PRAGMA user_version; opening an older file migrates it,
 * opening a newer one or a file that is not an rsswatch database is refused.
 * All SQL goes through prepared statements with bound parameters. */
#ifndef RSW_STORE_STORE_H
#define RSW_STORE_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "store/run.h"

struct store;

enum {
	STORE_CREATE = 1 << 0,	/* create the file (and its directory) when missing */
	STORE_READONLY = 1 << 1,
	/* A long-lived writer (a recorder) that is meant to stay small: a database to
	 * create or upgrade is migrated in a short-lived child process first, so that the
	 * memory of the migration leaves with it (about 170 KiB of heap that the writer
	 * would otherwise keep touched for its whole run). Only while the caller runs one
	 * thread; with more, the migration is done in the caller. */
	STORE_SMALL = 1 << 2,
};

/* Opens the database at path. On failure returns -errno (-ENOENT: no database yet,
 * when STORE_CREATE is not given) and writes a one-line reason into err. */
int store_open(const char *path, unsigned flags, struct store **out, char *err, size_t errlen);
/* A second, read-only connection to st's file: for a writer that reads what others
 * write meanwhile (the recorder, the marks of `rsswatch mark`), without waiting on its
 * own writer thread. */
int store_open_reader(struct store *st, struct store **out, char *err, size_t errlen);
void store_close(struct store *st);
/* The last SQLite error message, for a failed call below. */
const char *store_errmsg(struct store *st);

/* --- writing a run --- */

/* Inserts the run with outcome "running" and sets r->id. */
int store_run_begin(struct store *st, struct run *r);
/* Moves writing to a thread of its own (src/store/write.c): from now on store_flush()
 * never waits on the database, and events, marks and kills wait for the next flush.
 * Until store_run_finish(), the caller makes no other call that writes or reads.
 * Returns 0 or -errno. */
int store_writer_start(struct store *st);
/* A writer thread shared by the stores of several recorders of one database (the
 * agent's targets): what they hand over is written together, in one transaction at
 * most about once a second (at once when one of them is near a memory limit), where
 * each would otherwise commit on its own. A store joins with store_use_hub() before
 * its store_writer_start(), which then starts no thread of its own; its
 * store_run_finish() leaves the hub. store_hub_close() only after every store that
 * joined has finished. */
struct store_hub;
int store_hub_open(const char *path, struct store_hub **out, char *err, size_t errlen);
void store_hub_close(struct store_hub *h);
void store_use_hub(struct store *st, struct store_hub *h);
/* The next store_flush() is written at once by a hub (memory is near a limit: the
 * machine may be about to die). No effect without one. */
void store_hurry(struct store *st);
/* Stores the run's parameters p[0..n) (record --param), in one transaction of its
 * own: call it after store_run_begin() and before store_writer_start(). */
int store_put_params(struct store *st, int64_t run_id, const struct run_param *p, size_t n);
/* Appends one sample to the open batch (starting a transaction when none is open). */
int store_add_sample(struct store *st, int64_t run_id, const struct sample *s);
/* The number of samples waiting for the next flush. */
size_t store_pending(const struct store *st);
/* 1 when some kind of row waiting (marks in a flood, members of a large set) fills a
 * quarter of the batch's bound: flush now, before rows would have to be dropped. */
int store_filling(const struct store *st);
/* An application counter's value at a sample (stored when it changes). */
int store_add_counter(struct store *st, int64_t run_id, int64_t elapsed_ns, const char *name,
		      long long value);
/* One GPU's figures at a sample. */
int store_add_gpu(struct store *st, int64_t run_id, int64_t elapsed_ns, const struct gpu_figures *g);
/* One member of a process set (--tree, -g) at a sample. */
int store_add_proc(struct store *st, int64_t run_id, int64_t elapsed_ns, const struct proc_figures *p);
int store_add_event(struct store *st, int64_t run_id, int64_t t, const char *kind, pid_t pid,
		    const char *detail);
int store_add_mark(struct store *st, int64_t run_id, int64_t t, const char *label);
/* The peak of the stage that the mark of row mark_id opens, and when (realtime ns);
 * known 0 stores none (NULL). With the rows of the next flush. */
int store_set_stage_peak(struct store *st, int64_t run_id, int64_t mark_id, int known,
			 uint64_t peak, int64_t at);
/* An OOM kill of the target or a member (written at once, like events). */
int store_add_oom_kill(struct store *st, int64_t run_id, const struct oom_kill *k);
/* Writes (or rewrites) the processes p[0..n) of the run, in one transaction (the
 * recorder writes them all when the recording ends). -EBUSY: the database is locked. */
int store_put_processes(struct store *st, int64_t run_id, const struct proc_summary *p, size_t n);
/* What the stacks held at one moment: n rows. */
struct stored_moment {
	const struct stored_stack *v;
	size_t n;
};

/* Writes the run's stacks and what each held at each moment (at[STACKS_AT_*]), in one
 * transaction; a stack in several lists is written once (the same id has the same
 * frames). -EBUSY: the database is locked. */
int store_put_stacks(struct store *st, int64_t run_id, const struct stored_moment *at);
/* Hands the batch over with the run's running totals (samples, peak, mean, last).
 * Without the writer thread it is written now; with it, it is written by the thread
 * unless the thread is still busy with the last one (then the rows wait, bounded:
 * see store_lost()). Returns 0, or the -errno of the last write that failed
 * (-ENOSPC: disk full; -EBUSY: another process holds the lock; -EROFS, -EIO), which
 * is retried. */
int store_flush(struct store *st, const struct run *r);
/* Writes the final state of the run (outcome, ended_at, ...) and everything waiting,
 * on the caller's thread (the writer thread ends first). Returns 0 or -errno as
 * store_flush(); what could not be written stays and a later call tries again. */
int store_run_finish(struct store *st, const struct run *r);
/* What the bounds of the waiting batch cost while writes failed or fell behind: samples
 * merged into their neighbours (the higher kept), other rows dropped. */
struct store_lost {
	uint64_t samples_merged;
	uint64_t rows_dropped;
};
struct store_lost store_lost(const struct store *st);

/* --- reading --- */

/* Resolves a RUN argument (store/run.h, run_ref_parse: "last", an id, "sID")
 * to one existing run id: 0, -EINVAL (not a run reference), -E2BIG (it
 * names several runs: "sID:N" with N > 1), -ENOENT (no such run). */
int store_resolve(struct store *st, const char *ref, int64_t *id);
/* The same for a RUN argument that may name several runs ("sID:N"): *ids (to free)
 * holds *n >= 1 run ids, oldest first. -EINVAL, -ENOENT, -EIO. */
int store_resolve_runs(struct store *st, const char *ref, int64_t **ids, size_t *n);
/* The runs of a series (record --follow), oldest first, without their parameters;
 * *n is 0 when there are none. Free with store_free_runs(). */
int store_series_runs(struct store *st, int64_t series, struct run **out, size_t *n);
/* Whether the recorder of a run marked "running" is still at work (the caller's to
 * say: the store reads no /proc; record/recorder.h has recorder_alive). */
typedef int (*store_alive_fn)(const struct run *r);
/* Given one, a run still marked "running" whose recorder is gone is read as
 * "interrupted", ending at its last sample; without one it is read as it is. */
void store_set_alive(struct store *st, store_alive_fn alive);

/* Loads one run, "interrupted" as store_set_alive() says. */
int store_get_run(struct store *st, int64_t id, struct run *out);
/* Loads up to limit runs (0 = all), newest first; *out is an array of *n runs. */
int store_list_runs(struct store *st, size_t limit, struct run **out, size_t *n);
void store_free_runs(struct run *runs, size_t n);

typedef int (*store_sample_cb)(void *ctx, const struct sample *s);
/* Calls cb for each sample of the run in time order; stops early when cb returns
 * non-zero (that value is returned). */
int store_each_sample(struct store *st, int64_t id, store_sample_cb cb, void *ctx);

typedef int (*store_counter_cb)(void *ctx, int64_t elapsed_ns, const char *name, long long value);
/* Calls cb for each stored counter value in time order (values are stored when they
 * change: a counter keeps its value until its next row). */
int store_each_counter(struct store *st, int64_t id, store_counter_cb cb, void *ctx);
typedef int (*store_gpu_cb)(void *ctx, int64_t elapsed_ns, const struct gpu_figures *g);
/* Calls cb for each stored GPU row (one per device per GPU reading), in time order. */
int store_each_gpu(struct store *st, int64_t id, store_gpu_cb cb, void *ctx);

typedef int (*store_proc_cb)(void *ctx, int64_t elapsed_ns, const struct proc_figures *p);
/* Calls cb for every member of a process set (--tree, -g) at every sample, in time
 * order and by pid within a sample: the rows of the view proc_at_sample (each member's
 * last stored figures at or before the sample; not after it left). Stops early as
 * store_each_sample does. */
int store_each_proc_at_sample(struct store *st, int64_t id, store_proc_cb cb, void *ctx);

int store_events(struct store *st, int64_t id, struct event **out, size_t *n);
void store_free_events(struct event *ev, size_t n);
int store_marks(struct store *st, int64_t id, struct mark **out, size_t *n);
/* The marks of run id whose row id is above after, in the order they were stored; at
 * most 4096 at a time. */
int store_marks_after(struct store *st, int64_t id, int64_t after, struct mark **out, size_t *n);
void store_free_marks(struct mark *m, size_t n);
/* The run's OOM kills in time order; *out is freed with free(). */
int store_oom_kills(struct store *st, int64_t id, struct oom_kill **out, size_t *n);
/* The run's stacks at a moment, most bytes first; freed with store_free_stacks. */
int store_stacks(struct store *st, int64_t id, enum stack_moment at, struct stored_stack **out,
		 size_t *n);
void store_free_stacks(struct stored_stack *s, size_t n);
/* The run's processes, largest peak first; *out is freed with free(). */
int store_processes(struct store *st, int64_t id, struct proc_summary **out, size_t *n);

/* Deletes a run with its samples, events and marks. -ENOENT when there is none;
 * -EBUSY when its recorder is still running. */
int store_delete_run(struct store *st, int64_t id);

/* --- retention (src/store/retention.c) ---
 *
 * Keeps the database bounded by age and by size without losing what a run is: its row
 * (peak, outcome, times, ...), parameters, processes, marks, events and OOM kills are
 * never touched, and a run still being recorded (running, its recorder alive) is never
 * touched at all. What shrinks is a finished run's series:
 *   thinned   each table of rows over time keeps one row per bucket of time, the
 *             bucket's maximum: a sample row holds each column's maximum over its
 *             bucket (MemAvailable its minimum, the worst moment), at the time of the
 *             bucket's highest RSS; counters keep each bucket's highest and last value,
 *             GPU rows the highest, members of a set their highest, last and first rows
 *             and the rows where they left. The run's first and last samples stay as
 *             they were. So the largest RSS of the series, and every bucket's, survive.
 *             Two levels: at most STORE_GC_FINE rows per run, then STORE_GC_COARSE.
 *   emptied   the series removed (only to meet a size bound that thinning could not).
 * Each changed run has a row in run_gc (docs/guide/storage.md). */
#define STORE_GC_FINE 1000u
#define STORE_GC_COARSE 100u

struct store_gc_opts {
	int64_t keep_ns;	/* thin runs that ended longer ago (STORE_GC_FINE); < 0: none */
	uint64_t max_bytes;	/* 0: no size bound */
	int dry_run;		/* do it all in one transaction, then roll it back */
	int64_t now_ns;		/* CLOCK_REALTIME "now", against which ages count */
};

/* One run that gc changed, for a caller that reports them as they happen. */
struct store_gc_run {
	int64_t id;
	unsigned points;	/* the level reached: STORE_GC_FINE, STORE_GC_COARSE, or 0 */
	int64_t bucket_ns;	/* 0 when emptied */
	uint64_t rows_before;	/* sample rows before, and after */
	uint64_t rows_after;
	uint64_t rows_removed;	/* rows removed from every table of the run */
};
typedef void (*store_gc_cb)(void *ctx, const struct store_gc_run *r);

struct store_gc_result {
	uint64_t runs_seen, runs_running;	/* runs looked at; of them, still recorded */
	uint64_t runs_thinned, runs_emptied;
	uint64_t rows_removed;
	uint64_t bytes_before, bytes_after;	/* the file and its WAL, as they are on disk
						 * (a dry run: the pages the changes leave used) */
	uint64_t bytes_used;	/* pages in use after the changes (before reclaiming) */
	int reclaimed;		/* 0: nothing to give back; 1: incremental_vacuum; 2: VACUUM */
	int checkpoint_busy;	/* a reader kept the WAL from being emptied: it shrinks later */
	int over_bound;		/* still above max_bytes with every finished run emptied */
	uint64_t disk_free, disk_needed;	/* with -ENOSPC from reclaiming */
};

/* The width of the buckets that thin a series spanning span_ns, sampled every
 * interval_ns, to at most points rows: its first and last samples, kept as they are,
 * and points - 2 buckets between them (a bucket is (elapsed - first) / width). That is
 * span / (points - 2) rounded up, never under the interval, at least 1 ns. Pure. */
int64_t store_gc_bucket_ns(int64_t span_ns, int64_t interval_ns, unsigned points);

/* Applies retention: first thins the finished runs that ended more than keep_ns ago,
 * then, while the pages in use exceed max_bytes, thins finished runs oldest first to
 * STORE_GC_FINE, then all of them to STORE_GC_COARSE, then empties their series oldest
 * first. Each run is changed in a transaction of its own (a recorder writing meanwhile
 * waits for one run, not for all). Then gives the freed pages back to the file system
 * (incremental_vacuum where the file has it, else one VACUUM that also turns it on)
 * and empties the WAL. cb (may be NULL) hears of each run changed. *res is filled also
 * on failure, with what was done up to then.
 * Returns 0; -EBUSY: another process held the database past the busy timeout;
 * -ENOSPC: the disk is full, or has too little free space to VACUUM (res->disk_*;
 * the rows are gone and their pages are reused by later recordings); -EIO. */
int store_gc(struct store *st, const struct store_gc_opts *o, store_gc_cb cb, void *ctx,
	     struct store_gc_result *res);

/* What retention did to run id's series (struct run_thinning, store/run.h): 1 with
 * *out filled, 0 when its series is as recorded, or -errno. */
int store_run_thinning(struct store *st, int64_t id, struct run_thinning *out);

#endif
