/* The Prometheus text exposition format (version 0.0.4) and OpenMetrics 1.0 text, for
 * `record --listen`: one snapshot of the recording in, text out. Pure: no I/O, no
 * clock; the HTTP endpoint (metrics/http.h) takes the snapshot under its lock and calls
 * prom_write on its own thread. Every metric is documented in docs/guide/metrics.md. */
#ifndef RSW_METRICS_PROM_H
#define RSW_METRICS_PROM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "base/buf.h"
#include "base/parse.h"
#include "store/run.h"

#define PROM_COUNTERS_MAX 64

struct prom_counter {
	char name[COUNTER_NAME_SIZE];
	long long value;
	int is_gauge;
};

/* What the sampling thread hands over once per sample (a memcpy). have_sample is 0
 * before the first sample: only the recorder's own metrics are written then. */
struct prom_snapshot {
	int have_sample;
	int64_t run;
	pid_t pid;
	/* As /proc/PID/status shows it: the kernel wrote a backslash as \\ and a newline
	 * as \n (prom_comm_label undoes that before escaping it for a label). */
	char comm[64];
	struct sample s;
	uint64_t high_water;	/* the run's peak so far */
	/* The run's cgroup peak so far (struct run's peak_cgroup: never lowered, though
	 * the sample's own cgroup_peak covers only the interval before it where rsswatch
	 * resets the cgroup's peak); served only while the sample has SAMPLE_CGROUP_PEAK
	 * (a peak that covers the run alone). */
	uint64_t cgroup_peak;
	int64_t samples;
	int64_t samples_dropped;	/* merged into their neighbours by the store */
	double sample_cost_s;	/* the last sample: from its first read to its hand-over */
	int64_t oom_kills;
	/* The live time to exhaustion (record/eta.h), when memory rises toward a limit:
	 * eta_limit "cgroup" or "host"; "" when there is no projection. */
	char eta_limit[16];
	double eta_s;
	struct prom_counter counters[PROM_COUNTERS_MAX];
	size_t ncounters;
	/* How the run ended (metrics_server_end): outcome "" while recording. */
	char outcome[16];
	int64_t ended_at;	/* ns since the epoch */
	int exit_code, signal;	/* as in struct run */
	/* Filled at scrape time by the endpoint: the recorder's own CPU time. */
	double recorder_user_s, recorder_sys_s;
};

#define PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define OPENMETRICS_CONTENT_TYPE "application/openmetrics-text; version=1.0.0; charset=utf-8"

/* Appends s as a label value: backslash, double quote and newline escaped (\\, \", \n),
 * as both formats require; other bytes as they are. */
void prom_escape_label(struct buf *b, const char *s);

/* Appends a process name as /proc/PID/status shows it (\\ and \n escaped by the
 * kernel) as a label value: the kernel's escapes undone, then prom_escape_label, so
 * that each byte of the name is escaped exactly once. */
void prom_comm_label(struct buf *b, const char *status_name);

/* Does an Accept header ask for OpenMetrics? (NULL: no.) */
int prom_wants_openmetrics(const char *accept);

/* Appends the whole exposition of snap; openmetrics: OpenMetrics text (counter families
 * named without _total, a final "# EOF"). */
void prom_write(struct buf *b, const struct prom_snapshot *snap, int openmetrics);

/* One target of `rsswatch agent`: its name (the label value; record/agentconf.h says
 * which bytes it may hold), whether an instance is being recorded, how many there have
 * been, and the snapshot of the current or last one (have_sample 0 while waiting). */
#define PROM_TARGET_NAME_SIZE 64

struct prom_target {
	char name[PROM_TARGET_NAME_SIZE];
	int up;
	uint64_t instances, restarts;
	struct prom_snapshot snap;
};

/* The agent's own figures, filled at scrape time. */
struct prom_agent {
	double user_s, sys_s;
};

/* Appends the agent's exposition: every family of prom_write, its series labelled
 * target="NAME" only (no run, pid or comm: one series per target and family), a
 * target's run families once it has had an instance, then the agent's own families
 * (targets, per target up/run/instances/restarts, its CPU time). */
void prom_write_agent(struct buf *b, const struct prom_target *t, size_t n,
		      const struct prom_agent *a, int om);

/* Parses --listen HOST:PORT strictly: HOST a numeric IPv4 address, [IPv6] in brackets,
 * or "localhost" (127.0.0.1); PORT 1..65535. Returns 0 or -EINVAL; out is written only
 * on success. */
int prom_parse_listen(const char *s, struct sockaddr_storage *out, socklen_t *len);

#endif
