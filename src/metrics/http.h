/* The /metrics endpoint of `record --listen`: libmicrohttpd on a thread of its own,
 * serving the latest snapshot (metrics/prom.h). The sampling thread only calls
 * metrics_server_update, once per sample: a lock and a memcpy, never a wait on a scrape (a
 * scrape holds the lock only for the same memcpy). Only GET and HEAD of /metrics and /
 * are served (others: 404, 405); connections, their memory and their idle time are
 * bounded (HTTP_MAX_CONNECTIONS, HTTP_TIMEOUT_S), and so is the header of a request
 * (HTTP_MEMORY_LIMIT: a larger one gets 431 and the connection is closed). */
#ifndef RSW_METRICS_HTTP_H
#define RSW_METRICS_HTTP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "metrics/prom.h"
#include "store/run.h"

/* What one client can hold (docs/guide/metrics.md): connections in all and from one address
 * (an IPv6 /64 counts as one), the time a request may take from its connection (or the
 * end of the one before on it) to its answer, however it trickles in, and the idle time
 * of a connection. A connection beyond a limit closes the one whose request has waited
 * longest (of the same address when that address is over its limit): a scrape sends
 * its request at once and is answered within milliseconds, so slow clients cannot
 * keep it out. HTTP_LINGER_MAX_S bounds metrics_server_free's wait. */
#define HTTP_MAX_CONNECTIONS 32
#define HTTP_MAX_PER_ADDR 8
#define HTTP_REQUEST_S 5
#define HTTP_TIMEOUT_S 10
#define HTTP_LINGER_MAX_S 2
#define HTTP_MEMORY_LIMIT (32 * 1024)

struct metrics_server;

/* Binds addr (HOST:PORT, see prom_parse_listen) and starts serving. Returns 0, or
 * -EINVAL for an address that does not parse, -ELIBACC when libmicrohttpd cannot be
 * loaded (it is opened at run time), or -errno from socket/bind/listen, with *x
 * unchanged. */
int metrics_server_start(struct metrics_server **x, const char *addr);

/* The agent's endpoint: one /metrics for n targets named names[0..n) (each name a
 * label value, copied), served by prom_write_agent. Each target's recorder is given its
 * own handle, metrics_server_slot(x, i), for metrics_server_update and metrics_server_end (which then
 * never linger); metrics_server_free(x) frees the handles with the endpoint (freeing a handle
 * does nothing). Returns as metrics_server_start, and -EINVAL for n == 0. */
int metrics_server_start_set(struct metrics_server **x, const char *addr, const char *const *names,
		       size_t n);
struct metrics_server *metrics_server_slot(struct metrics_server *x, size_t i);

/* A target's state for the agent's metrics (NULL x or the endpoint itself: nothing):
 * up 1 when an instance (run, pid) starts to be recorded, which clears the last one's
 * snapshot; up 0 while waiting, which drops the sample's gauges and keeps how the last
 * run ended. */
void metrics_server_target(struct metrics_server *x, int up, int64_t run, pid_t pid, uint64_t instances,
		     uint64_t restarts);

/* Hands over the latest snapshot (NULL x: nothing). */
void metrics_server_update(struct metrics_server *x, const struct prom_snapshot *snap);

/* The run has ended: its last totals (samples, peak, OOM kills) and how it ended
 * (outcome, time, exit status or signal) join the last snapshot (NULL x: nothing). */
void metrics_server_end(struct metrics_server *x, const struct run *r);

/* Stops serving and frees x (NULL: nothing). After metrics_server_end, when /metrics was
 * being scraped (two scrapes or more), it first waits for one more scrape, so that
 * the scraper sees how the run ended: at most one and a half of the last gap between
 * scrapes plus a second, never over HTTP_LINGER_MAX_S (a fixed bound: scrapes can end
 * the wait early, never make it longer), and not once SIGINT or SIGTERM is pending
 * (blocked) in the process. */
void metrics_server_free(struct metrics_server *x);

#endif
