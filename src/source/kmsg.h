/* The kernel log (/dev/kmsg) as evidence of OOM kills, and /proc/vmstat's oom_kill.
 *
 * /dev/kmsg gives one record per read():
 *     prio,seq,usec,flags[,more...];text\n
 *      KEY=value\n                 (optional continuation lines, each starting with ' ')
 * prio is facility * 8 + level; seq numbers records (a gap means records were lost);
 * usec is CLOCK_MONOTONIC in microseconds at logging time; flags is '-' or 'c' (a
 * continued line). The kernel writes bytes that are not printable, and '\', as \xNN.
 *
 * The OOM lines this understands (mm/oom_kill.c):
 *   "python3 invoked oom-killer: gfp_mask=..., order=0, oom_score_adj=0"
 *   "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,
 *    oom_memcg=/x,task_memcg=/x/y,task=python3,pid=2148,uid=0"        (one line)
 *   "Memory cgroup out of memory: Killed process 2148 (python3) total-vm:75160kB,
 *    anon-rss:65024kB, file-rss:6136kB, shmem-rss:0kB, UID:0 pgtables:188kB
 *    oom_score_adj:0"  (or "Out of memory: Killed process ..." for a global OOM)
 *   "oom_reaper: reaped process 2148 (python3), now anon-rss:0kB, file-rss:0kB,
 *    shmem-rss:0kB"
 * A comm may hold spaces, ')' and ','; the parsers anchor on the fixed text after it. */
#ifndef RSW_SOURCE_KMSG_H
#define RSW_SOURCE_KMSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define KMSG_TEXT_MAX 4096
#define KMSG_DICT_MAX 512
#define KMSG_COMM_MAX 64
#define KMSG_PATH_MAX 1024
#define KMSG_READ_MAX 8192

struct kmsg_record {
	unsigned prio;		/* facility * 8 + level */
	uint64_t seq;
	uint64_t usec;		/* CLOCK_MONOTONIC, microseconds */
	bool cont;		/* flags held 'c' */
	char text[KMSG_TEXT_MAX];	/* unescaped, NUL-terminated (may hold other NULs) */
	size_t text_len;
	bool truncated;		/* text did not fit */
	char dict[KMSG_DICT_MAX];	/* continuation lines "KEY=value", '\n'-separated,
					   leading space removed, unescaped; "" if none */
};

/* Parses one record (the bytes of one read(), or one record cut from a saved log).
 * The trailing newline is optional. Returns 0 or -EINVAL. */
int kmsg_record_parse(const char *buf, size_t len, struct kmsg_record *out);

/* Copies src to dst undoing \xNN escapes (an incomplete escape stays as is). Writes at
 * most n-1 bytes and a NUL; returns the number of bytes the whole result needs. */
size_t kmsg_unescape(const char *src, size_t len, char *dst, size_t n);

enum kmsg_oom_kind {
	KMSG_OOM_INVOKED,	/* "<comm> invoked oom-killer:": an OOM report begins */
	KMSG_OOM_CONTEXT,	/* "oom-kill:constraint=...": which cgroup, which task */
	KMSG_OOM_KILLED,	/* "...: Killed process PID (COMM) total-vm:..." */
	KMSG_OOM_REAPED,	/* "oom_reaper: reaped process PID (COMM), now ..." */
};

/* KMSG_OOM_KILLED fields (bytes); have bits say which were present (older kernels lack
 * shmem-rss, UID, pgtables and oom_score_adj). */
enum {
	KMSG_F_TOTAL_VM = 1u << 0, KMSG_F_ANON_RSS = 1u << 1, KMSG_F_FILE_RSS = 1u << 2,
	KMSG_F_SHMEM_RSS = 1u << 3, KMSG_F_UID = 1u << 4, KMSG_F_PGTABLES = 1u << 5,
	KMSG_F_OOM_SCORE_ADJ = 1u << 6, KMSG_F_OOM_MEMCG = 1u << 7,
	/* KILLED: memcg says whether a cgroup's limit or the host ran out (a kill line
	 * always does; the engine's record of a kill does not know) */
	KMSG_F_SCOPE = 1u << 8,
};

struct kmsg_oom {
	enum kmsg_oom_kind kind;
	bool memcg;		/* KILLED: "Memory cgroup out of memory" (else global);
				   CONTEXT: constraint is CONSTRAINT_MEMCG */
	pid_t pid;		/* 0 for INVOKED */
	char comm[KMSG_COMM_MAX];
	uint32_t uid;
	uint64_t total_vm, anon_rss, file_rss, shmem_rss, pgtables;
	int oom_score_adj;
	char constraint[32];		/* CONTEXT: "CONSTRAINT_MEMCG", "CONSTRAINT_NONE", ... */
	char oom_memcg[KMSG_PATH_MAX];	/* CONTEXT: the cgroup whose limit was hit ("") */
	char task_memcg[KMSG_PATH_MAX];	/* CONTEXT: the victim's cgroup */
	unsigned have;
};

/* Parses the (unescaped) text of one record. Returns 0; -ENOENT when it is not one of
 * the OOM lines above; -EINVAL when it starts like one but is malformed. */
int kmsg_oom_parse(const char *text, size_t len, struct kmsg_oom *out);

/* The kernel log's clock against CLOCK_MONOTONIC. A record's usec is printk's clock
 * (local_clock), which is not CLOCK_MONOTONIC: the two differ by an offset that grows
 * with the uptime (measured here: 1.5 ms after 10 minutes; NTP slews only the
 * monotonic clock). Every record is read after it was logged, so mono_at_read -
 * usec is the offset plus the read's delay: the smallest seen is the best estimate.
 * It may rise by KMSG_CLOCK_DRIFT_PPM of the time since (a faster slew than NTP makes),
 * so that a drift the other way is followed too. Pure. */
#define KMSG_CLOCK_DRIFT_PPM 1000
struct kmsg_clock {
	int have;
	int64_t offset_ns;	/* CLOCK_MONOTONIC - printk's clock */
	int64_t at_ns;		/* CLOCK_MONOTONIC of the last note */
};
/* A record of time usec read at CLOCK_MONOTONIC mono_ns. */
void kmsg_clock_note(struct kmsg_clock *c, uint64_t usec, int64_t mono_ns);
/* When a record of time usec was logged, on CLOCK_MONOTONIC (ns). */
int64_t kmsg_clock_mono(const struct kmsg_clock *c, uint64_t usec);

/* Reads records from /dev/kmsg (or, for tests, any fd holding records). */
struct kmsg_reader {
	int fd;			/* -1 when closed */
	bool stream;		/* not a character device: records are cut from a byte
				   stream (a saved log, a pipe), not one per read() */
	uint64_t lost;		/* times records were overwritten before we read them */
	size_t len;		/* stream mode: buffered bytes */
	char buf[KMSG_READ_MAX];
};

enum { KMSG_FROM_START = 1u << 0 };

/* Opens /dev/kmsg (under the sysroot) O_RDONLY|O_NONBLOCK, and seeks to the end so
 * that only new records are read, unless flags has KMSG_FROM_START. Returns 0, -EPERM
 * or -EACCES when the kernel log is not readable (dmesg_restrict, no CAP_SYSLOG):
 * report "kmsg not readable" and go on without it; or another -errno. */
int kmsg_reader_open(struct kmsg_reader *r, unsigned flags);
/* Takes over fd (a pipe or a saved log) in stream mode. fd should be non-blocking. */
void kmsg_reader_open_fd(struct kmsg_reader *r, int fd);
/* The next record. Returns 0; -EAGAIN when there is nothing new (also at the end of a
 * stream); -EINVAL for a malformed record (skipped; call again); or -errno. EPIPE
 * (records overwritten) is counted in r->lost and reading goes on. */
int kmsg_reader_next(struct kmsg_reader *r, struct kmsg_record *out);
/* Closes the fd. Accepts a closed reader. */
void kmsg_reader_close(struct kmsg_reader *r);

/* The oom_kill line of /proc/vmstat: OOM kills since boot, system-wide (4.13+).
 * Returns 0, -ENOENT when the kernel has no such counter, -EINVAL. */
int vmstat_oom_kill_parse(const char *buf, size_t len, uint64_t *out);
/* Reads /proc/vmstat once (under the sysroot). */
int vmstat_read_oom_kill(uint64_t *out);

#endif
