/* The /metrics endpoint of `record --listen`: libmicrohttpd on a thread of its own,
 * serving the latest snapshot (export/prom.h). The sampling thread only calls
 * exporter_update, once per sample: a lock and a memcpy, never a wait on a scrape (a
 * scrape holds the lock only for the same memcpy). Only GET and HEAD of /metrics and /
 * are served (others: 404, 405); connections, their memory and their idle time are
 * bounded (HTTP_MAX_CONNECTIONS, HTTP_TIMEOUT_S). */
#ifndef RSW_EXPORT_HTTP_H
#define RSW_EXPORT_HTTP_H

#include <stddef.h>

#include "export/prom.h"

#define HTTP_MAX_CONNECTIONS 32
#define HTTP_TIMEOUT_S 10

struct exporter;

/* Binds addr (HOST:PORT, see prom_parse_listen) and starts serving. Returns 0, or
 * -EINVAL for an address that does not parse, or -errno from socket/bind/listen, with
 * *x unchanged. */
int exporter_start(struct exporter **x, const char *addr);

/* Hands over the latest snapshot (NULL x: nothing). */
void exporter_update(struct exporter *x, const struct prom_snapshot *snap);

/* Stops serving and frees x (NULL: nothing). */
void exporter_free(struct exporter *x);

#endif
