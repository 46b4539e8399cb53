/* record --follow: waiting for the next instance of a service after the last one ended.
 *
 * The wait is driven by the proc connector's fork and exec events (source/proccn.h):
 * a new process or program is checked when the kernel announces it, so a restart is
 * found within the time it takes to read its name and command line, not at the next
 * turn of a polling loop. Where the connector cannot be opened, /proc is scanned every
 * FOLLOW_POLL_MS instead (follow->polling says so, with the reason).
 *
 * A pattern matches by the rule of record -n (record/target.h, proc_matches: name or
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

#include "source/proccn.h"

struct run;
struct store;

#define FOLLOW_POLL_MS 100

struct follow {
	regex_t re;		/* with pattern */
	int have_re;
	const char *cgroup_dir;	/* -g: the cgroup's directory, or NULL */
	int oldest;		/* several matches at once: the oldest (else the newest) */
	struct proccn cn;	/* open during a wait only */
	int polling;		/* the connector could not be opened: poll_err says why */
	int poll_err;
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

/* An instance after the first, recorded as run r: stores its "restart" event (detail
 * gap_us, after_run) at its first sample, the gap measured from prev_end (the end of
 * run prev_run, CLOCK_REALTIME ns). *gap_ns gets the gap. Returns 0, or what the store
 * said (store_errmsg). */
int follow_store_restart(struct store *st, const struct run *r, int64_t prev_end,
			 int64_t prev_run, int64_t *gap_ns);

#endif
