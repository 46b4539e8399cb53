/* /proc/PID files: pure parsers (bytes in, struct out, no I/O) and the per-process
 * reader that keeps /proc/PID/status open between samples. */
#ifndef RSW_SOURCE_PROC_H
#define RSW_SOURCE_PROC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/rfile.h"

#define PROC_NAME_MAX 64

/* From /proc/PID/status. Memory figures in bytes. */
struct proc_status {
	char name[PROC_NAME_MAX];	/* as the kernel escapes it ("\n" for a newline) */
	pid_t ppid;
	uint64_t rss, hwm, anon, file, shmem, swap;
	uint32_t threads;
};

/* Returns 0; -ENODATA when the text has no memory lines (a zombie or a kernel thread);
 * -EINVAL when a required line is missing or malformed. */
int proc_status_parse(const char *buf, size_t len, struct proc_status *out);

/* From /proc/PID/stat. comm may contain spaces and ')': it runs to the last ')'. */
struct proc_stat {
	char comm[PROC_NAME_MAX];
	char state;
	pid_t ppid;
	uint64_t starttime;	/* clock ticks after boot */
};

int proc_stat_parse(const char *buf, size_t len, struct proc_stat *out);

/* /proc/PID/cmdline (NUL-separated) to one line: arguments joined by spaces, control
 * characters replaced by '?'. A trailing NUL is optional. Writes a terminated string
 * into out (truncated to n-1 bytes); returns the number of arguments. */
int proc_cmdline_join(const char *buf, size_t len, char *out, size_t n);

/* From /proc/meminfo. */
struct meminfo {
	uint64_t total;
	uint64_t available;
};

int meminfo_parse(const char *buf, size_t len, struct meminfo *out);

/* Keeps /proc/PID/status open. After the process is reaped a read fails with ESRCH;
 * while it is a zombie the text has no memory lines: both mean "gone". */
struct proc_reader {
	pid_t pid;
	struct rfile status;
};

int proc_reader_open(struct proc_reader *r, pid_t pid);
/* Returns 0, -ESRCH when the process is gone (reaped or zombie), or another -errno. */
int proc_reader_read(struct proc_reader *r, struct proc_status *out);
void proc_reader_close(struct proc_reader *r);

/* Reads /proc/PID/stat once. */
int proc_read_stat(pid_t pid, struct proc_stat *out);
/* Reads /proc/PID/cmdline once into out, joined (see proc_cmdline_join). A process
 * without a command line (kernel thread, zombie) gives an empty string. */
int proc_read_cmdline(pid_t pid, char *out, size_t n);
/* /proc/sys/kernel/random/boot_id, to tell one boot from the next. */
int proc_read_boot_id(char *out, size_t n);

#endif
