/* rsswatch agent: several targets watched at once by one process, for a fleet host.
 *
 * One thread per target, each with its own store connection to the same database (WAL)
 * and its own signalfd, looping: wait for an instance (record/follow.h: the proc
 * connector's exec and fork events) -> record it with record() as an ordinary run of
 * the target's series (the first run's id) -> wait again. A pid target is recorded
 * once. The runs of a target carry its name as their label.
 *
 * Stopping: SIGINT, SIGTERM and SIGHUP belong to the caller's thread (it blocks them
 * everywhere before agent_start and waits for them itself). agent_stop sends
 * AGENT_STOP_SIGNAL to each target's thread (pthread_kill: pending on that thread
 * alone, where only its signalfd sees it): a recording ends "stopped" with all its
 * samples stored, a wait ends, and the thread returns. */
#ifndef RSW_RECORD_AGENT_H
#define RSW_RECORD_AGENT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "metrics/http.h"
#include "record/agentconf.h"

#define AGENT_STOP_SIGNAL SIGUSR1

struct agent_opts {
	const char *db_path;
	int64_t interval_ns;
	int oldest;		/* several matches at once: the oldest (else the newest) */
	int no_proccn;		/* wait by polling /proc (tests; RSSWATCH_NO_PROCCN=1) */
	int no_gpu;		/* no GPU figures even where NVML is present */
	struct metrics_server *metrics;	/* metrics_server_start_set's, targets in config order; or NULL */
	/* Every line the agent and its recorders have to say, with the target's name
	 * (text as a recorder note: one line, no newline, "rsswatch: ..." or not). Called
	 * from the targets' threads. */
	void (*note)(void *ctx, const char *target, const char *text);
	void *note_ctx;
};

struct agent;

/* Opens one store connection per target (so that a database that cannot be opened is
 * refused before anything starts: err says why) and starts the threads. The caller has
 * blocked recorder_signals() and AGENT_STOP_SIGNAL (the threads inherit its mask).
 * c and o must outlive the agent. Returns 0 or -errno. */
int agent_start(struct agent **out, const struct agentconf *c, const struct agent_opts *o,
		char *err, size_t errlen);

/* Targets whose thread still runs (a pid target's ends with its process; any target's
 * on a failure it has noted). */
size_t agent_running(struct agent *a);

/* Stops every target (see above), waits for the threads, and frees a. Returns the
 * number of targets that failed (noted each). NULL: 0. */
int agent_stop(struct agent *a);

#endif
