/* What a recording states about its host, its own process and its target, read where
 * the kernel keeps it (uname, /proc): the CLI asks here rather than read /proc. */
#ifndef RSW_RECORD_FACTS_H
#define RSW_RECORD_FACTS_H

#include <stddef.h>
#include <sys/types.h>

#include "store/run.h"

/* Fills r's host, kernel, mem_total (MemTotal), recorder_pid, recorder_start and
 * boot_id (strings malloc'ed; a figure that cannot be read stays 0 or ""). The last
 * three let a later reader tell whether the recorder lives (recorder_alive). */
void facts_host(struct run *r);

/* pid's command line as a shell would take it back (proc_cmdline_quote), at most
 * FACTS_CMDLINE_MAX bytes; "" when it cannot be read. Malloc'ed. */
#define FACTS_CMDLINE_MAX 4096
char *facts_cmdline(pid_t pid);

/* pid's command name as the kernel gives it (the process chose it: escape it before
 * it reaches a terminal), or "?" when it cannot be read. */
void facts_comm(pid_t pid, char *out, size_t n);

/* Whether pid's memory figures can be read: 0; -ESRCH when it has exited or has no
 * memory of its own (zombie, kernel thread); -ENOENT, -EACCES or -EPERM when /proc/PID
 * is hidden or not readable by this user; other -errno. */
int facts_memory_readable(pid_t pid);

#endif
