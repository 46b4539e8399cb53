/* record --follow: waiting for the next instance of a service after the last one ended.
 *
 * The wait is driven by the proc connector's fork and exec events (source/proccn.h):
 * a new process or program is checked when the kernel announces it, so a restart is
 * found within the time it takes to read its name and command line, not at the next
 * turn of a polling loop. Where the connector cannot be opened, /proc is scanned every
 * FOLLOW_POLL_MS instead (follow->polling says so, with the reason).
 *
 * A pattern matches by the rule of record -n (record/target.h, target_matches: name or
 * command line; never rsswatch nor its ancestors). A cgroup (-g) counts as back once
 * its cgroup.procs lists a process again (a cgroup that does not exist counts as
 * empty: a service manager may remove and make it again at a restart); since a process
 * can be moved into a cgroup without a fork or an exec, the cgroup is also read once a
 * second while waiting. */
#ifndef RSW_RECORD_FOLLOW_H
#define RSW_RECORD_FOLLOW_H

#include <regex.h>
#include <stdint.h>
#include <sys/types.h>

#include "record/target.h"
#include "source/proccn.h"

struct run;
struct store;
struct follow_hub;

#define FOLLOW_POLL_MS 100

struct follow {
	regex_t re;		/* with pattern */
	int have_re;
	struct proc_filter filter;	/* a pattern's user and cgroup conditions (none: 0s) */
	const char *cgroup_dir;	/* -g: the cgroup's directory, or NULL */
	int oldest;		/* several matches at once: the oldest (else the newest) */
	struct proccn cn;	/* open during a wait only */
	int polling;		/* the connector could not be opened: poll_err says why */
	int poll_err;
	/* With a hub (follow_use_hub): its events instead of a connector of our own.
	 * wake_fd is an eventfd the hub writes; hub_pid, hub_rescan and hub_failed are the
	 * hub's to set, under its lock, while this follow waits. */
	struct follow_hub *hub;
	int wake_fd;
	pid_t hub_pid;
	int hub_rescan;
	int hub_failed;
};

/* For a pattern (an extended regular expression) or a cgroup directory (which may be
 * set later, before the first wait). Tries the connector once: f->polling says
 * whether waits will poll. Returns 0, or -EINVAL when the pattern does not compile
 * (err gets regerror's words). */
int follow_init(struct follow *f, const char *pattern, const char *cgroup_dir, int oldest,
		char *err, size_t errlen);

/* Waits for the next instance: a process that matches (the one that ended is a zombie
 * or gone, and zombies never match), or the cgroup populated. Checks what is there
 * already first: an instance that started before the wait is found at once (several:
 * the newest, or the oldest with oldest). Returns 1 (*pid is the match; 0 for a
 * cgroup), 0 when a signal is waiting on sigfd (it is left there) or the deadline
 * (CLOCK_MONOTONIC ns; 0: none) passed, or -errno. */
int follow_wait(struct follow *f, int sigfd, int64_t deadline, pid_t *pid);

void follow_release(struct follow *f);

/* One proc connector listener for many follows (the agent's targets): one socket and
 * one thread read the host's fork and exec events; each new process is read once
 * (name, command line) and tried against the pattern of every follow waiting on the
 * hub, and only a follow whose pattern matches is woken, with the pid. A follow of a
 * cgroup is woken to read its cgroup at most every FOLLOW_HUB_CGROUP_MS while
 * processes start. Without a hub, every waiting follow had a socket and was woken by
 * every fork and exec of the host, and read the process itself.
 * follow_hub_start returns 0, or -errno when the connector cannot be opened (then no
 * hub: the follows poll /proc). follow_hub_stop ends the thread; the follows that use
 * it must have been released first. NULL: nothing. */
#define FOLLOW_HUB_CGROUP_MS 100
int follow_hub_start(struct follow_hub **out);
void follow_hub_stop(struct follow_hub *h);

/* Makes f wait on h's events (after follow_init, before its first wait). Returns 0 or
 * -errno (no eventfd). */
int follow_use_hub(struct follow *f, struct follow_hub *h);

/* An instance after the first, recorded as run r: stores its "restart" event (detail
 * gap_us, after_run) at its first sample, the gap measured from prev_end (the end of
 * run prev_run, CLOCK_REALTIME ns). *gap_ns gets the gap. Returns 0, or what the store
 * said (store_errmsg). */
int follow_store_restart(struct store *st, const struct run *r, int64_t prev_end,
			 int64_t prev_run, int64_t *gap_ns);

/* The owner of a followed instance (run r of process r->pid), against the last
 * instance's (*prev_uid, when *have_prev): another user may have started a process of
 * the followed name. When they differ, stores an "owner_changed" event of r (detail
 * uid, last_uid), writes the warning line (without "rsswatch: ") into line and returns
 * 1, or -1 when the event could not be stored (line written too); else 0. Then
 * remembers this owner. */
int follow_owner_check(struct store *st, const struct run *r, uid_t *prev_uid, int *have_prev,
		       char *line, size_t n);

#endif
