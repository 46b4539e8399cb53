/* Why did it die? Telling an OOM kill from any other SIGKILL.
 *
 * The recorder opens an oom_watch when it starts: /dev/kmsg positioned at its end, the
 * host's /proc/vmstat oom_kill count and the target's cgroup oom_kill count as they are
 * then. While recording it drains the kernel log (its fd is in the poll set) and keeps
 * the OOM kill lines it sees; when the target dies of SIGKILL, oom_decide() weighs
 * what was collected. The decision is a pure function, so every mix of partial
 * evidence is unit-tested (tests/unit/test_oom.c). The rule (docs/guide/cgroups.md):
 *
 *   - a kernel "Killed process PID" line for the target: the OOM killer, certain;
 *   - no such line, but the kernel log was not readable (or lost records) and the
 *     target's own cgroup counted an OOM kill: the OOM killer, attributed by cgroup;
 *   - only the host's count rose: killed by SIGKILL, with a note that says so
 *     ("likely the OOM killer" when the kernel log could not be read);
 *   - nothing rose, or the log names other processes: a plain SIGKILL. */
#ifndef RSW_RECORD_OOM_H
#define RSW_RECORD_OOM_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "source/cgroup.h"
#include "source/kmsg.h"

/* What was known when the target died. */
struct oom_evidence {
	int signal;			/* the signal that ended the target (0: it exited) */
	int kmsg_err;			/* 0: /dev/kmsg was read throughout; else -errno */
	uint64_t kmsg_lost;		/* times records were overwritten unread */
	bool kill_seen;			/* a kill line for the target's pid */
	struct kmsg_oom kill;		/* that line */
	int64_t kill_at;		/* its time, CLOCK_REALTIME ns */
	char memcg[KMSG_PATH_MAX];	/* oom_memcg of its context line; "" none/global */
	bool cg_known;			/* the target's cgroup oom_kill counter was read */
	uint64_t cg_delta;		/* its rise over the run */
	bool vm_known;			/* /proc/vmstat oom_kill was read */
	uint64_t vm_delta;
	const char *cg_path;		/* the target's cgroup path (for words), or NULL */
};

struct oom_verdict {
	bool oom;			/* outcome oom_killed */
	const char *event_kind;		/* "oom_kill", "oom_suspect" or NULL: no event */
	char detail[600];		/* the event's detail, key=value words */
	char note[256];			/* words for the outcome ("" none) */
	char memcg[KMSG_PATH_MAX];	/* for the run's oom_memcg */
	bool rss_known;
	uint64_t anon_rss;
};

/* Decides from ev. Pure. */
void oom_decide(const struct oom_evidence *ev, struct oom_verdict *out);

/* The detail of an oom_kill event from a kernel kill line:
 * "anon_rss=65024kB file_rss=6136kB shmem_rss=0kB total_vm=75160kB memcg=/x comm=..."
 * (fields the line lacked are left out). Pure. */
void oom_kill_detail(const struct kmsg_oom *kill, const char *memcg, char *out, size_t n);

typedef void (*oom_kill_cb)(void *ctx, const struct kmsg_oom *kill, const char *memcg,
			    int64_t realtime_ns);

/* Collects evidence while recording. */
struct oom_watch {
	bool open;			/* oom_watch_open was called, oom_watch_close not yet */
	struct kmsg_reader kmsg;
	int kmsg_err;			/* 0 while kmsg is open */
	bool vm_known;
	uint64_t vm_start;
	struct cg_reader *cg;		/* the target's cgroup (borrowed), or NULL */
	bool cg_known;
	uint64_t cg_start;
	/* The last context line: its pid and oom_memcg. The kernel rate-limits the report
	 * a context line is part of (ten in five seconds), not the kill lines: in a crash
	 * loop most kill lines come without one, and name no cgroup. */
	pid_t ctx_pid;
	char ctx_memcg[KMSG_PATH_MAX];
	struct kmsg_clock clock;	/* the log's clock against CLOCK_MONOTONIC */
	struct kmsg_record rec;		/* scratch */
};

/* Opens /dev/kmsg (at its end; not with read_log 0, which stands for a log that cannot
 * be read) and reads the starting counters; cg may be NULL. Never fails: what cannot
 * be read is missing evidence (kmsg_err, vm_known, cg_known). */
void oom_watch_open(struct oom_watch *w, struct cg_reader *cg, int read_log);
/* The fd to poll for new kernel log records, or -1. */
int oom_watch_fd(const struct oom_watch *w);
/* Reads every new record; calls cb for each OOM kill line (any pid) with the oom_memcg
 * of its context line ("" for a global OOM, or when the kernel left the context line
 * out) and its time. */
void oom_watch_drain(struct oom_watch *w, oom_kill_cb cb, void *ctx);
/* Fills the counter parts of ev (kmsg_err, kmsg_lost, cg_*, vm_*) as of now. */
void oom_watch_counters(struct oom_watch *w, struct oom_evidence *ev);
void oom_watch_close(struct oom_watch *w);

#endif
