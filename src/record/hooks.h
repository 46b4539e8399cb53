/* --on-warn CMD and --on-oom CMD: a command of the user's, run when the recording sees
 * danger. The command runs through /bin/sh -c CMD (it is the user's own argument); the
 * event's facts reach it only as RSSWATCH_* environment variables, never inside the
 * command string, because a process name is untrusted input.
 *
 * Each event starts at most one command, in its own process group, with stdin from
 * /dev/null and the recorder's signal mask cleared. Nothing here blocks sampling: a
 * running command is looked at (waitpid WNOHANG) at each sample, sent SIGTERM when its
 * timeout passes and SIGKILL HOOK_KILL_GRACE later. When it ends, a "hook" event is
 * stored: "on=oom event=oom_kill status=0 ms=12", with status=timeout (and the signal
 * that ended it) or status=signal when it died of a signal. ms is measured to when its
 * end was seen: at a sample, so within one sampling interval (exact at the end of the
 * run, when hooks_finish waits for the commands still running). */
#ifndef RSW_RECORD_HOOKS_H
#define RSW_RECORD_HOOKS_H

#include <stdint.h>
#include <sys/types.h>

#include "base/parse.h"
#include "store/store.h"

#define HOOKS_MAX_RUNNING 8
#define HOOK_KILL_GRACE_NS (2 * NS_PER_S)
#define HOOK_TIMEOUT_DEFAULT_NS (30 * NS_PER_S)
/* --on-warn runs at most once every HOOK_MIN_INTERVAL_NS: a target that oscillates
 * around the threshold (warn re-arms only below WARN_REARM_PCT of it, recorder.c)
 * cannot make root run the command many times a second. The runs left out are
 * counted, and said in one "hook" event (status=suppressed count=N) when the next one
 * runs or the recording ends. */
#define HOOK_MIN_INTERVAL_NS (10 * NS_PER_S)

struct hook_job {
	pid_t pid;		/* 0: the slot is free */
	const char *on;		/* "warn" or "oom" */
	char event[16];
	int64_t started, deadline;	/* CLOCK_MONOTONIC ns */
	int termed;		/* SIGTERM sent at the deadline */
};

/* Filled by the CLI; the recorder only calls the functions below. A NULL struct hooks
 * (or one with no command) does nothing. */
struct hooks {
	const char *on_warn;	/* for the events "warn" and "warn_eta", or NULL */
	const char *on_oom;	/* for "oom_kill", or NULL */
	int64_t timeout_ns;
	const char *db_path;	/* RSSWATCH_DB */
	struct hook_job jobs[HOOKS_MAX_RUNNING];
	int64_t last_warn;	/* CLOCK_MONOTONIC ns of the last --on-warn start; 0: none */
	uint64_t suppressed;	/* --on-warn runs left out since then */
};

/* What is known about an event. limit 0: none known; comm NULL: none known. */
struct hook_facts {
	int64_t run;
	pid_t pid;
	uint64_t rss;
	uint64_t limit;
	const char *comm;
};

void hooks_init(struct hooks *h);

/* Builds the environment for a command: environ without any RSSWATCH_* variable, then
 * the event's. Returns a NULL-terminated array (free with hooks_env_free), or NULL
 * when out of memory. Pure apart from allocation: unit-tested. */
char **hooks_env(char *const *base, const char *event, const struct hook_facts *f,
		 const char *db_path);
void hooks_env_free(char **env);

/* Starts the command for event ("warn", "warn_eta" or "oom_kill"), if one is set.
 * When it cannot start (too many running, fork failed), a "hook" event says why. */
void hooks_fire(struct hooks *h, struct store *st, const char *event,
		const struct hook_facts *f);

/* At each sample: stores the status of commands that ended, and enforces timeouts. */
void hooks_poll(struct hooks *h, struct store *st, int64_t run_id);

/* At the end of the run: waits for the commands still running (each at most until its
 * timeout and the grace after it), storing their status. */
void hooks_finish(struct hooks *h, struct store *st, int64_t run_id);

#endif
