/* A set of processes sampled together: a process and all its descendants (--tree), or
 * the members of a cgroup (-g, or the cgroup rsswatch made for --memory-limit with
 * --tree). Each sample refreshes the membership, reads every member's status through
 * its kept-open file, and sums the figures.
 *
 * Membership, cheapest first: a cgroup's cgroup.procs (opened at each read: on cgroup v1
 * a kept-open cgroup.procs keeps returning the pid list of its first read); or, for a
 * tree, the proc connector's fork events (source/proccn.h), drained at each sample: a
 * new process (child pid == child tgid) whose parent process is a member joins, even
 * when its parent has exited since (the events are applied in order). The
 * first sample, a sample after events were lost (ENOBUFS), and every sample where the
 * connector cannot be had, walk instead: from the root and from every member through
 * /proc/PID/task/PID/children (kept open per member). Children forked by a thread other
 * than the main one are listed in that thread's own children file: those are read
 * (open+read) only for members with more than one thread.
 *
 * A tree's member leaves when it dies (its reads fail: a zombie or reaped), not when it
 * is re-parented: a daemon that a member started and orphaned stays in the set. With
 * the connector it joins even when orphaned before any sample saw it; a walk finds it
 * only if a sample saw it while its parent lived.
 *
 * With the connector, members' readers leave the thread count out of their change key
 * (proc_reader_use_thread_events): a thread's start or exit event for a member, or a
 * loss of events, invalidates that member's (or every member's) cached status.
 *
 * A member that has left (dead) stays in m[] until the next read, so that the caller
 * can store that it left. A member that shares another member's address space (a vfork
 * child before its exec) reads as 0: the totals count those pages once.
 *
 * Context counters (CPU time, page faults, I/O bytes) are cumulative, and the totals
 * here are the sum of the live members' own (not their children's: a reaped child's
 * time is also in its parent's cutime, and would count twice). What members did before
 * they left is the caller's to add (record/proclog.h: the set's ended sum), since only
 * the caller hears the exit records that say what a process did after its last read,
 * and what processes that lived between two samples did. A member seen as a zombie has
 * its stat read once more as it leaves: its final counters, in the dead member for the
 * caller to take until the next read drops it. stat is read when the caller sets
 * read_stat (and for a new member), io when it sets read_io; other reads reuse the
 * last figures.
 *
 * Invariant: members[] is sorted by pid, and pids[] holds their pids in the same order
 * (a binary search over it stays in a few cache lines: a member is about 1 KiB);
 * every member has its status file open. */
#ifndef RSW_RECORD_PROCSET_H
#define RSW_RECORD_PROCSET_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/rfile.h"
#include "source/proc.h"
#include "store/run.h"
#include "source/proccn.h"
#include "source/smaps.h"

struct procset_member {
	pid_t pid;
	struct proc_reader proc;
	struct rfile children;		/* tree walk only; fd -1 otherwise */
	struct proc_status st;		/* the last read */
	unsigned gen;			/* the sample that last saw it */
	int dead;			/* still listed (a zombie) but gone: reported */
	struct smaps_reader smaps;	/* --pss: opened at the first PSS read; fd -1 before */
	int smaps_err;			/* it could not be opened (-EACCES, ...): not tried again */
	/* The member's row last stored in proc_sample (the recorder stores a row only when
	 * the figures change, and a row of zeros when the member leaves). */
	enum { ROW_NONE, ROW_LIVE, ROW_GONE } row;
	struct proc_figures row_figs;
	/* Whether it shares its parent's address space, asked while it ran the program
	 * named mm_name (see dedupe_shared_mm). */
	int mm_asked, mm_shared;
	char mm_name[PROC_NAME_MAX];
	/* Its last context counters (have_stat, have_io: read at least once); a dead
	 * member's are its last (a zombie's: its final ones). */
	struct proc_stat stat;
	struct proc_io io;
	int have_stat, have_io;
};

enum procset_kind { PROCSET_TREE, PROCSET_CGROUP };

/* Called for processes that join or leave the set (start: 1 joined, 0 left). */
typedef void (*procset_cb)(void *ctx, pid_t pid, int start, const struct proc_status *st);

/* A set of pids: open addressing, 0 free, at most half full. */
struct pidset {
	pid_t *slot;
	size_t n, cap;
};

struct procset {
	enum procset_kind kind;
	pid_t root;			/* PROCSET_TREE: the root process */
	struct rfile procs;		/* PROCSET_CGROUP: cgroup.procs, opened anew per read */
	char *procs_path;
	struct procset_member *m;
	pid_t *pids;			/* pids[i] == m[i].pid: searched without touching m */
	size_t n, cap;
	pid_t *list;			/* scratch: this sample's pids */
	size_t nlist, caplist;
	unsigned gen;
	struct proccn cn;		/* fd -1 when unavailable or not asked for */
	struct { pid_t parent, child; } *forks;	/* new processes since the last read */
	size_t nforks, capforks;
	pid_t *recent;			/* the children the last fork pass listed */
	size_t nrecent;
	/* The new processes whose parent the set held (procset_may_hold), in two
	 * generations: [0] since the last read, [1] the interval before it. */
	struct pidset forked[2];
	int clean_reads;		/* reads since an event was lost, up to 2 */
	int note_all;			/* before the first read: every fork is noted */
	int filtering;			/* procset_may_hold may deny */
	int walk;			/* the next read walks the children files */
	int walking;			/* this read does */
	unsigned long walks, cn_lost;	/* for tests and benchmarks */
	procset_cb cb;
	void *ctx;
	unsigned status_reuse;		/* each member's proc_reader_max_reuse (default: none) */
	int no_kcmp;			/* kcmp is not available: shared address spaces count twice */
	int read_stat, read_io;		/* set by the caller: the next read re-reads them */
};

/* A tree from root. Subscribes to the proc connector when it can (use_cn), before the
 * first walk, so no fork between the two is missed. Returns 0. */
int procset_open_tree(struct procset *ps, pid_t root, int use_cn, procset_cb cb, void *ctx);
/* The members of the cgroup directory cgdir (absolute, with the sysroot). With use_cn,
 * the connector's forks only tell which exit records may be the set's (a cgroup that
 * holds one command's tree). Returns 0, or -errno when cgroup.procs cannot be opened. */
int procset_open_cgroup(struct procset *ps, const char *cgdir, int use_cn, procset_cb cb,
			void *ctx);

/* Totals over the set. */
struct procset_totals {
	struct mem_figures mem;
	uint32_t threads;
	size_t nprocs;
	/* Context counters of the live members (see above); have_stat, have_io: any
	 * member's were read. CPU times in clock ticks. */
	uint64_t minflt, majflt, utime, stime, read_bytes, write_bytes;
	int have_stat, have_io;
};

/* Refreshes the membership and reads every member. Returns 0; -ENODEV when the cgroup
 * was removed; -ESRCH when the set is empty (the tree's root is gone, or the cgroup
 * holds no process). Members that vanished are reported through cb. */
int procset_read(struct procset *ps, struct procset_totals *out);
/* PSS over the set: the sum of each member's smaps_rollup. Unlike summed RSS this
 * counts a page shared by k members as k shares of 1/k: the set's true total. */
struct procset_pss {
	uint64_t pss, uss, swap_pss;
	size_t nread;		/* members read */
	size_t nfailed;		/* members that could not be read (not counting vanished) */
	int err;		/* the error of the last of those */
};

/* Reads smaps_rollup of every member seen by the last procset_read() (expensive: see
 * source/smaps.h), but for one that shares its parent's address space (counted once,
 * with the parent). Each member's file is opened at its first read and kept. Returns 0
 * (check nread and nfailed). */
int procset_read_pss(struct procset *ps, struct procset_pss *out);
/* Whether pid is (or was, until the last read) a member. */
int procset_has(const struct procset *ps, pid_t pid);
/* A member's start (clock ticks after boot, /proc/PID/stat), known from its first
 * read on: as the callback sees it join. Returns 0 or -ENOENT. */
int procset_starttime(const struct procset *ps, pid_t pid, uint64_t *ticks);
/* Whether pid is a member that was alive at the last read. */
int procset_live(const struct procset *ps, pid_t pid);

/* Between two reads: drains the connector now, so that its buffer never overflows
 * on a busy host; while the set filters, the other processes' forks are dropped as
 * they come, and what is kept stays the set's size. */
void procset_take_events(struct procset *ps);
/* Whether the process tgid is or may be the set's: a member, or a process forked by
 * one since the read before last (its exit record may come after the process is
 * gone). 1 wherever the set cannot tell (no connector, or an event lost since the
 * read before last): a caller drops only what this denies. Current up to the last
 * procset_take_events or read. */
int procset_may_hold(const struct procset *ps, pid_t tgid);
/* The descendants of root, found through the children files (not root itself): how
 * many there are and their summed RSS. For a single-process recording, to say what it
 * leaves out. Returns 0, or -errno when root's children cannot be read. */
int procset_descendants(pid_t root, size_t *nprocs, uint64_t *rss);
/* Reports every remaining member as gone (cb), then closes everything. */
void procset_close(struct procset *ps, int report);

#endif
