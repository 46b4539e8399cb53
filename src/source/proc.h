/* /proc/PID files: pure parsers (bytes in, struct out, no I/O) and the per-process
 * reader that keeps /proc/PID/status open between samples. */
#ifndef RSW_SOURCE_PROC_H
#define RSW_SOURCE_PROC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/buf.h"
#include "base/memfig.h"
#include "base/rfile.h"

#define PROC_NAME_MAX 64

/* From /proc/PID/status. Memory figures in bytes. */
struct proc_status {
	char name[PROC_NAME_MAX];	/* as the kernel escapes it ("\n" for a newline) */
	pid_t ppid;
	struct mem_figures mem;
	uint32_t threads;
};

/* Returns 0; -ENODATA when the text has no memory lines (a zombie or a kernel thread);
 * -EINVAL when a required line is missing or malformed. */
int proc_status_parse(const char *buf, size_t len, struct proc_status *out);

/* From /proc/PID/stat. comm may contain spaces and ')': it runs to the last ')'.
 * The counters are the whole thread group's, cumulative since the process started
 * (minflt, majflt: page faults that did not and did need I/O; utime, stime: CPU time
 * in user and kernel mode, in clock ticks). Children's counters (cutime, ...) are left
 * out: a set sums its members' own counters, and a reaped child's would count twice. */
struct proc_stat {
	char comm[PROC_NAME_MAX];
	char state;
	pid_t ppid;
	unsigned flags;		/* the kernel's PF_* flags of its main thread (field 9) */
	uint64_t minflt, majflt;
	uint64_t utime, stime;	/* clock ticks (proc_ticks_ns) */
	uint64_t starttime;	/* clock ticks after boot */
};

int proc_stat_parse(const char *buf, size_t len, struct proc_stat *out);

/* Whether the process is in its exit: a zombie, dead, or its main thread past the
 * start of its exit (PF_EXITING). Such a process's /proc/PID/cgroup names the root of a
 * cgroup v1 hierarchy, whatever cgroup it was in. */
int proc_stat_exiting(const struct proc_stat *st);

/* Clock ticks (sysconf(_SC_CLK_TCK)) to nanoseconds. */
uint64_t proc_ticks_ns(uint64_t ticks);

/* From /proc/PID/io: bytes the process (all its threads, living and ended) caused to
 * be read from and written to storage (read_bytes, write_bytes), and passed through
 * read and write calls of any kind (rchar, wchar). Returns 0 or -EINVAL when
 * read_bytes or write_bytes is missing or malformed. */
struct proc_io {
	uint64_t rchar, wchar, read_bytes, write_bytes;
};

int proc_io_parse(const char *buf, size_t len, struct proc_io *out);

/* /proc/PID/cmdline (NUL-separated) to one line: arguments joined by spaces, control
 * characters replaced by '?'. A trailing NUL is optional. Writes a terminated string
 * into out (truncated to n-1 bytes); returns the number of arguments. */
int proc_cmdline_join(const char *buf, size_t len, char *out, size_t n);

/* /proc/PID/cmdline (NUL-separated) as a shell command line: each argument as
 * buf_put_shell_word writes it, control characters replaced by '?'. One long argument
 * must not hide those after it: each keeps at most max / 8 bytes (64 at least), and
 * one cut says "[+N bytes]" after it. Stops before the argument that would take the
 * text past max bytes, and then ends with " ... (N more arguments)". Returns the
 * number of arguments written. */
int proc_cmdline_quote(const char *buf, size_t len, struct buf *out, size_t max);

/* From /proc/meminfo. */
struct meminfo {
	uint64_t total;
	uint64_t available;
};

int meminfo_parse(const char *buf, size_t len, struct meminfo *out);

/* Keeps /proc/PID/status open. After the process is reaped a read fails with ESRCH;
 * while it is a zombie the text has no memory lines: both mean "gone". */
/* Reading status costs the kernel about ten times what statm costs (it formats some
 * fifty lines), and an idle process's figures do not change between samples. So each
 * read first looks at statm (sizes and resident pages) and at the thread count (the
 * link count of /proc/PID/task), and re-reads status only when one of them changed
 * since the status now cached. Every change of the status figures recorded here moves
 * one of them: RSS and its parts change resident or shared pages, swap-out lowers
 * resident, freeing swapped memory lowers the size. All but VmHWM: it rises with RSS,
 * and RSS can rise and fall back to the same page count between two reads (a spike
 * mapped and unmapped). So a cached status is reused at most reuse_max times in a row
 * (proc_reader_max_reuse; the recorder bounds it to about a second).
 * The key is kept only when it read the same before and after the status read, so a
 * process changing meanwhile is never cached under a stale key.
 *
 * The fstat of /proc/PID/task costs about as much as the statm read. A caller that
 * learns of every thread's start and exit another way (the proc connector's fork and
 * exit events, see record/procset.c) turns it off with proc_reader_use_thread_events()
 * and must then call proc_reader_invalidate() whenever the process may have started or
 * ended a thread, and whenever it may have missed such news (lost events). The thread
 * count is then stale for at most the time between the event and the next sample's
 * read after the caller drained it: one sample. A thread started or ended while status
 * is read leaves its event for the next drain, so it is not cached for longer. */
struct proc_reader {
	pid_t pid;
	struct rfile status;
	int statm_fd;			/* -1: always read status */
	int task_fd;			/* /proc/PID/task, for its link count; -1: none */
	int thread_events;		/* the caller invalidates on thread changes: no fstat */
	char key[96];			/* statm bytes and thread count of the cached status */
	size_t key_len;
	int cached;
	unsigned reuses, reuse_max;	/* times the cached status was reused in a row */
	struct proc_status last;
	unsigned long reads, status_reads;	/* for benchmarks: how often status was read */
	/* The context counters (proc_reader_read_stat/_io): stat opened with status; io
	 * opened at its first read, io_err its error when it could not be (-EACCES for
	 * another user's process: not tried again). */
	struct rfile stat, io;
	int io_err;
};

/* A closed reader, safe to close (what proc_reader_open starts from). */
void proc_reader_init(struct proc_reader *r);
int proc_reader_open(struct proc_reader *r, pid_t pid);
/* Returns 0, -ESRCH when the process is gone (reaped or zombie), or another -errno. */
int proc_reader_read(struct proc_reader *r, struct proc_status *out);
/* on: the key leaves out the thread count; the caller promises proc_reader_invalidate()
 * (see above). off: back to the fstat of /proc/PID/task. */
void proc_reader_use_thread_events(struct proc_reader *r, int on);
/* A cached status is reused at most n times in a row (default: no bound). */
void proc_reader_max_reuse(struct proc_reader *r, unsigned n);
/* The next read re-reads status. */
void proc_reader_invalidate(struct proc_reader *r);
void proc_reader_close(struct proc_reader *r);
/* Re-reads /proc/PID/stat (kept open; about three times the cost of a statm read, see
 * docs/dev/BENCHMARKS.md). Returns 0, -ESRCH when the process is reaped, or -errno. A
 * zombie's stat still reads: its final counters. */
int proc_reader_read_stat(struct proc_reader *r, struct proc_stat *out);
/* Re-reads /proc/PID/io, opened at the first call. Returns 0, -ESRCH, or the -errno
 * (-EACCES: not permitted, as for other users' processes) that keeps it unread. */
int proc_reader_read_io(struct proc_reader *r, struct proc_io *out);

/* Reads /proc/PID/stat once. */
int proc_read_stat(pid_t pid, struct proc_stat *out);
/* Reads /proc/PID/cmdline once into out, joined (see proc_cmdline_join). A process
 * without a command line (kernel thread, zombie) gives an empty string. */
int proc_read_cmdline(pid_t pid, char *out, size_t n);

/* The real uid of /proc/PID/status (its "Uid:" line, first field): the owner of the
 * process, which the process cannot hide (the owner of /proc/PID is root for a process
 * that made itself non-dumpable). Returns 0, or -EINVAL for no such line. Pure. */
int proc_status_uid_parse(const char *buf, size_t len, uid_t *out);
/* Whether /proc/PID/cgroup text puts the process in cgroup path or below it, in any
 * hierarchy (path as the file writes it, from the hierarchy's root: "/system.slice/x";
 * "/" holds every process). 1 or 0. Pure. */
int proc_cgroup_within(const char *buf, size_t len, const char *path);
/* The readers of the two (under the sysroot): 0/1, or -errno (-ENOENT: gone). */
int proc_read_uid(pid_t pid, uid_t *out);
int proc_in_cgroup(pid_t pid, const char *cgroup);
/* The same, quoted (see proc_cmdline_quote) into out. */
int proc_read_cmdline_quoted(pid_t pid, struct buf *out, size_t max);
/* /proc/sys/kernel/random/boot_id, to tell one boot from the next. */
int proc_read_boot_id(char *out, size_t n);
/* A line of /proc/PID/maps whose file's name (after the last '/') starts with prefix,
 * and is mapped executable: its range "START-END" in range (the name under
 * /proc/PID/map_files). 1 when it is such a line, 0 when not, -EINVAL when malformed.
 * Pure: no I/O. */
int proc_maps_line_match(const char *line, size_t len, const char *prefix, char *range,
			 size_t n);
/* Opens, read-only, the file of pid's first executable mapping whose name starts with
 * prefix, through /proc/PID/map_files: the file mapped, whatever its path names now
 * (needs CAP_SYS_ADMIN). Returns a descriptor, -ENOENT when pid maps none, or -errno. */
int proc_open_mapped(pid_t pid, const char *prefix);

#endif
