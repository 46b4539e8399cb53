/* Finding the process to record: by pid, by a pattern over names and command lines, or
 * by launching a command. Also the pidfd helpers that tell when and how it ended. */
#ifndef RSW_RECORD_TARGET_H
#define RSW_RECORD_TARGET_H

#include <regex.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "source/proc.h"

struct proc_match {
	pid_t pid;
	uint64_t starttime;
	char name[PROC_NAME_MAX];
	char cmdline[256];
};

/* A process, told apart from a later one that reuses its pid by its start time. */
struct proc_id {
	pid_t pid;
	uint64_t starttime;
};

/* The most steps target_ancestry() takes: far deeper than real process trees, and a
 * bound on a walk through a fixture tree whose parent links form a loop. */
#define ANCESTRY_MAX 4096

/* pid and its ancestors, nearest first, through the ppid field of each /proc/PID/stat
 * (under the sysroot). The walk ends after pid 1, at a process whose parent is not
 * visible (ppid 0: the parent is outside this pid namespace), at a parent that cannot
 * be read (hidden; one that has gone is passed over when its child, read again, names
 * a new parent), or after ANCESTRY_MAX steps. Sets *out (to free) and *n; *n is 0 when
 * pid itself cannot be read. */
void target_ancestry(pid_t pid, struct proc_id **out, size_t *n);

/* All processes whose name or full command line matches re (like pgrep and pgrep -f
 * together), except rsswatch itself, its ancestors (the shell, timeout, sudo or sh -c
 * that started it carry the pattern in their own command lines) and processes without
 * a command line (kernel threads, zombies). Sorted by start time, oldest first. */
int target_find_matches(const regex_t *re, struct proc_match **out, size_t *n);
/* The rule of target_find_matches() for one process: whether pid (not rsswatch, not one of
 * anc[0..nanc), the caller's ancestry from target_ancestry(), with a command line, not a
 * zombie) has a name or command line that matches re; fills *pm either way. */
int target_matches(const regex_t *re, pid_t pid, const struct proc_id *anc, size_t nanc,
		   struct proc_match *pm);
/* target_matches() in two steps, for one process checked against several patterns (the
 * agent reads a new process once, then tries every target's pattern): whether pid may
 * match at all (the rule above, without the pattern), with *pm filled; and whether
 * a candidate's name or command line matches re. */
int target_candidate(pid_t pid, const struct proc_id *anc, size_t nanc, struct proc_match *pm);
int target_match_re(const regex_t *re, const struct proc_match *pm);

/* Conditions on a match besides its pattern: its owner (the real uid) and its cgroup
 * (the process in that cgroup or below it, in any hierarchy; the path as
 * /proc/PID/cgroup writes it). Any user can start a process of any name; only root can
 * start one as another user or in a cgroup it does not own. */
struct proc_filter {
	int have_uid;
	uid_t uid;
	const char *cgroup;	/* NULL: any */
};
/* Whether pid passes f (NULL f, or no condition: 1). A process that cannot be read
 * does not pass. */
int target_filter_ok(const struct proc_filter *f, pid_t pid);

/* Starts argv as a child. The child gets orig_mask as its signal mask (the recorder
 * blocks signals for its signalfd) and default dispositions. pre_exec, when not NULL,
 * runs in the child after fork and before exec (e.g. to join a memory cgroup, so that
 * not one page of the command is charged elsewhere); it must return 0 or -errno, and
 * only call what is safe after fork in a single-threaded program. Returns the child's
 * pid, or -errno of the failed step: *setup_failed is then 1 when pre_exec failed, 0
 * when exec did (-ENOENT: not found; -EACCES, -ENOEXEC: cannot run). A child whose
 * setup or exec failed has been reaped already.
 * The child's figures just before its exec go in *facts (struct launch_facts).
 * With hold, the parent calls hold->fn with the child's pid after the fork, and the
 * child waits for it to return before its exec (record --stacks=malloc attaches its
 * probes to the child then, so that the command's first call is seen). */
struct launch_hold {
	void (*fn)(void *ctx, pid_t child);
	void *ctx;
};

/* A launched command's child just before its exec, as it measured itself then. */
struct launch_facts {
	/* its own peak RSS, in bytes (a copy of the recorder: the kernel keeps it in the
	 * child's ru_maxrss, so a wait4 peak not above it may not be the command's), or
	 * UINT64_MAX when unknown */
	uint64_t pre_exec_rss;
	/* the wall-clock (real) and monotonic times (ns): the command's start, before
	 * anything the command does (a mark it makes as it starts cannot precede it,
	 * however late the parent runs again); exec_mono 0 when unknown */
	int64_t exec_at;
	int64_t exec_mono;
	/* the CPU it had used (ns): the launch's (the fork's copies of pages, joining a
	 * cgroup), not the command's, though the kernel counts it in the process's */
	uint64_t pre_exec_user_ns;
	uint64_t pre_exec_sys_ns;
};

pid_t target_launch(char *const argv[], const sigset_t *orig_mask,
		    int (*pre_exec)(void *ctx), void *ctx, const struct launch_hold *hold,
		    int *setup_failed, struct launch_facts *facts);

/* pidfd_open(2). Returns the fd or -errno. */
int target_pidfd_open(pid_t pid);

/* The wait status of an exited process through its pidfd: for a child, reaps it with
 * waitid(P_PIDFD); for another process, asks PIDFD_GET_INFO (Linux 6.15+), which knows
 * the status only once the process's parent has reaped it. Returns 0 and *wstatus, or
 * -EAGAIN (not known yet), -ESRCH, -EOPNOTSUPP (kernel cannot tell), other -errno.
 * -ESRCH comes at the moment the parent reaps it (the kernel found the task, then its
 * pids gone: 6 of 300 first asks right after the pidfd turned readable, here), and
 * for good from a kernel that has PIDFD_GET_INFO but no exit information (6.13, 6.14):
 * ask again a few times (target_exit_ask_again).
 * For a child, *ru (when not NULL) is its rusage, as wait4 gives it: ru_maxrss the
 * largest peak RSS (KiB) of the child and of every descendant it (or they) reaped, and
 * CPU times and faults summed over them, as time -v reports them; all 0 for another
 * process. */
int target_exit_status(int pidfd, int is_child, int *wstatus, struct rusage *ru);
/* What PIDFD_GET_INFO's answer says (err: its errno, 0 when it succeeded): as above. Pure. */
int target_info_status(int err, uint64_t mask, int32_t exit_code, int *wstatus);

/* The bounded wait for a status (docs/dev/ARCHITECTURE.md): after answer e of target_exit_status
 * and tries asks, whether to ask again EXIT_STATUS_POLL_MS later. -EAGAIN: until
 * EXIT_STATUS_TRIES (2 s); -ESRCH: EXIT_STATUS_ESRCH_TRIES (100 ms: a kernel without
 * exit information answers so for ever). Pure. */
#define EXIT_STATUS_POLL_MS 10
#define EXIT_STATUS_TRIES 200
#define EXIT_STATUS_ESRCH_TRIES 10
int target_exit_ask_again(int e, int tries);

#endif
