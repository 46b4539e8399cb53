/* Memory cgroups, v1 and v2: where a process's memory cgroup lives, pure parsers for the
 * files rsswatch reads there, and a reader that keeps those files open between samples.
 * Reading only: making, limiting, joining and removing cgroups is record/cgctl.h's.
 *
 * Figures are bytes. A limit of CG_UNLIMITED means "no limit": v2 writes "max", v1
 * writes the page-rounded LONG_MAX (9223372036854771712 with 4 KiB pages).
 *
 * Paths: cg_find() (and record/cgctl.h's cgctl_child_create()) return absolute directories that already carry
 * the sysroot prefix (see base/sysroot.h); every function that takes a cgroup directory
 * expects such a path and adds no prefix of its own. */
#ifndef RSW_SOURCE_CGROUP_H
#define RSW_SOURCE_CGROUP_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/rfile.h"

#define CG_UNLIMITED UINT64_MAX

/* ---- Locating the memory cgroup -------------------------------------------------- */

/* Where the memory controller is mounted, from /proc/self/mountinfo. Both hierarchies
 * may be present on a "hybrid" host (v1 controllers plus a cgroup2 mount that has no
 * controllers); the caller decides, see cg_find(). mnt and root are unescaped. */
struct cg_mount {
	bool has_v1;			/* a "cgroup" mount with the memory option */
	bool has_v2;			/* a "cgroup2" mount (controllers not checked) */
	char v1_mnt[PATH_MAX];		/* mount point, e.g. /sys/fs/cgroup/memory */
	char v1_root[PATH_MAX];		/* the hierarchy path mounted there, usually "/" */
	char v2_mnt[PATH_MAX];
	char v2_root[PATH_MAX];
};

/* Parses /proc/self/mountinfo. The first matching mount of each kind wins.
 * Returns 0 (even when neither is found), -EINVAL on a malformed line. */
int cg_mountinfo_parse(const char *buf, size_t len, struct cg_mount *out);

/* From the text of /proc/PID/cgroup, the path of the process in the memory hierarchy:
 * version 1 takes the line whose controller list holds "memory" ("4:memory:/a",
 * "3:cpu,memory:/a"); version 2 takes the "0::/a" line. Writes the path (starting with
 * '/') into out. Returns 0, -ENOENT when there is no such line or the cgroup was removed
 * (" (deleted)"), -EINVAL on malformed text, -ENAMETOOLONG when out is too small. */
int cg_proc_path_parse(const char *buf, size_t len, int version, char *out, size_t n);

/* Whether a space-separated controller list (cgroup.controllers,
 * cgroup.subtree_control) names "memory". */
bool cg_controllers_have_memory(const char *buf, size_t len);

/* A cgroup directory and the version of its hierarchy. */
struct cg_loc {
	int version;		/* 1 or 2 */
	char dir[PATH_MAX];	/* absolute, with the sysroot prefix */
};

/* Reads and parses /proc/self/mountinfo. 0 or -errno. */
int cg_mount_read(struct cg_mount *out);

/* loc->dir less the sysroot and mount point of its hierarchy in m ("/a/b"), as
 * /proc/PID/cgroup and the kernel log write it; loc->dir itself when it is not under
 * that mount. No I/O. */
void cg_hier_path(const struct cg_mount *m, const struct cg_loc *loc, char *out, size_t n);

/* cg_find() in the mounts m, read once by the caller (cg_mount_read). */
int cg_find_in(const struct cg_mount *m, pid_t pid, struct cg_loc *out);

/* The memory cgroup of pid (0: this process). Reads /proc/self/mountinfo and
 * /proc/PID/cgroup; v1 is used when a v1 memory mount exists and the process has a
 * memory line, else v2 when the cgroup2 root lists memory in cgroup.controllers.
 * Returns 0; -ENOENT when no memory controller is mounted; -ESRCH when the process is
 * gone; -EXDEV when the cgroup lies outside what this mount shows (another cgroup
 * namespace); other -errno from reading. */
int cg_find(pid_t pid, struct cg_loc *out);

/* ---- Pure parsers --------------------------------------------------------------- */

/* A single-number file (memory.current, memory.peak, usage_in_bytes,
 * max_usage_in_bytes): digits and an optional trailing newline. */
int cg_value_parse(const char *buf, size_t len, uint64_t *out);

/* A limit file (memory.max, memory.high, memory.swap.max, limit_in_bytes): as
 * cg_value_parse, and "max" or a v1 value at or beyond the page-rounded LONG_MAX (any
 * page size up to 64 KiB) give CG_UNLIMITED. */
int cg_limit_parse(const char *buf, size_t len, uint64_t *out);

/* v2 memory.events (and memory.events.local). Unknown keys are skipped; have tells
 * which counters the file had (oom_group_kill is 5.17+). oom and oom_kill are required.
 * oom counts the times the limit was hit and reclaim failed; oom_kill the processes
 * the OOM killer killed in this cgroup or below. */
enum {
	CG_EV_LOW = 1u << 0, CG_EV_HIGH = 1u << 1, CG_EV_MAX = 1u << 2,
	CG_EV_OOM = 1u << 3, CG_EV_OOM_KILL = 1u << 4, CG_EV_OOM_GROUP_KILL = 1u << 5,
};
struct cg_events {
	uint64_t low, high, max, oom, oom_kill, oom_group_kill;
	unsigned have;
};
int cg_events_parse(const char *buf, size_t len, struct cg_events *out);

/* v1 memory.oom_control. oom_kill (4.13+) is optional: has_oom_kill says if present. */
struct cg_oom_control {
	bool oom_kill_disable;
	bool under_oom;
	bool has_oom_kill;
	uint64_t oom_kill;
};
int cg_oom_control_parse(const char *buf, size_t len, struct cg_oom_control *out);

/* memory.stat of either version, in v2 terms. v1 names map to them (rss -> anon,
 * cache -> file, mapped_file -> file_mapped, dirty -> file_dirty, writeback ->
 * file_writeback); v1's hierarchical total_* lines win over the local ones, so that
 * both versions describe the cgroup and everything below it. anon and file are
 * required; have holds a CG_ST_* bit for each field found. */
enum {
	CG_ST_ANON = 1u << 0, CG_ST_FILE = 1u << 1, CG_ST_SHMEM = 1u << 2,
	CG_ST_FILE_MAPPED = 1u << 3, CG_ST_FILE_DIRTY = 1u << 4,
	CG_ST_FILE_WRITEBACK = 1u << 5, CG_ST_KERNEL = 1u << 6, CG_ST_SLAB = 1u << 7,
	CG_ST_SOCK = 1u << 8, CG_ST_SWAP = 1u << 9, CG_ST_ACTIVE_ANON = 1u << 10,
	CG_ST_INACTIVE_ANON = 1u << 11, CG_ST_ACTIVE_FILE = 1u << 12,
	CG_ST_INACTIVE_FILE = 1u << 13, CG_ST_UNEVICTABLE = 1u << 14,
	CG_ST_PGFAULT = 1u << 15, CG_ST_PGMAJFAULT = 1u << 16,
};
struct cg_stat {
	uint64_t anon, file, shmem, file_mapped, file_dirty, file_writeback;
	uint64_t kernel, slab, sock;	/* v2 only */
	uint64_t swap;			/* v1 only (v2 has memory.swap.current) */
	uint64_t active_anon, inactive_anon, active_file, inactive_file, unevictable;
	uint64_t pgfault, pgmajfault;	/* event counts, not bytes */
	unsigned have;
};
int cg_stat_parse(const char *buf, size_t len, struct cg_stat *out);

/* cgroup.procs (or v1 tasks): one pid a line. Stores the first cap pids into pids and
 * the number of pids in the file into *count, which may exceed cap (grow and call
 * again). An empty file gives 0 pids. */
int cg_procs_parse(const char *buf, size_t len, pid_t *pids, size_t cap, size_t *count);

/* ---- Reader ---------------------------------------------------------------------- */

enum cg_peak_reset {
	CG_PEAK_RESET_NONE,	/* not possible: v2 before 6.12, or v1 and not ours */
	CG_PEAK_RESET_FD,	/* v2: a write to our memory.peak fd restarts its peak */
	CG_PEAK_RESET_V1,	/* v1: writing 0 to max_usage_in_bytes (owned cgroups) */
};

/* Keeps a cgroup's files open; every read is one pread per file.
 * v2: memory.current, memory.max, memory.peak, memory.events, memory.stat.
 * v1: memory.usage_in_bytes, memory.limit_in_bytes, memory.max_usage_in_bytes,
 *     memory.oom_control, memory.stat.
 * Only usage is required; a missing optional file (memory.peak before 5.19) leaves its
 * rfile closed and its CG_S_* bit clear in every sample. */
struct cg_reader {
	int version;
	bool owned;		/* created by rsswatch: v1 peak reset allowed */
	enum cg_peak_reset peak_reset;
	char dir[PATH_MAX];
	struct rfile usage, limit, peak, events, stat;
};

enum {
	CG_S_USAGE = 1u << 0, CG_S_LIMIT = 1u << 1, CG_S_PEAK = 1u << 2,
	CG_S_OOM = 1u << 3, CG_S_OOM_KILL = 1u << 4, CG_S_UNDER_OOM = 1u << 5,
};
struct cg_sample {
	uint64_t usage;
	uint64_t limit;		/* CG_UNLIMITED when none */
	uint64_t peak;		/* since creation, or since the last reset */
	uint64_t oom;		/* v2 memory.events oom (times the limit was hit) */
	uint64_t oom_kill;	/* v2 memory.events or v1 memory.oom_control oom_kill */
	bool under_oom;		/* v1 only */
	unsigned have;		/* CG_S_* bits */
};

/* Opens the files of dir (as from cg_find/cgctl_child_create). owned marks a cgroup this
 * program created. Returns 0, or -errno when the usage file cannot be opened (ENOENT: no
 * such cgroup or not a memory cgroup). On failure nothing stays open. */
int cg_reader_open(struct cg_reader *r, int version, const char *dir, bool owned);
/* Reads usage, limit, peak and the OOM counters. Returns 0, -ENODEV when the cgroup was
 * removed, -EINVAL on unexpected contents, or another -errno. */
int cg_reader_read(struct cg_reader *r, struct cg_sample *out);
/* Reads memory.stat. */
int cg_reader_read_stat(struct cg_reader *r, struct cg_stat *out);
/* Restarts the peak: v2 through the kept fd (6.12+; on EINVAL, EACCES or a read-only fd
 * the reader falls back to CG_PEAK_RESET_NONE), v1 by writing 0 to max_usage_in_bytes
 * when owned. Returns 0, or -EOPNOTSUPP when this cgroup's peak cannot be reset. */
int cg_reader_reset_peak(struct cg_reader *r);
/* Closes every file. Accepts a reader that failed to open or was closed already. */
void cg_reader_close(struct cg_reader *r);

/* Reads dir/cgroup.procs once into a malloc'ed array. Returns 0 or -errno. */
int cg_read_procs(const char *dir, pid_t **pids, size_t *count);

#endif
