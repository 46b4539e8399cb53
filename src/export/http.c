#include "export/http.h"
#include "base/util.h"

#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

/* latest is written by the sampling thread and read by the server's, both under lock. */
struct exporter {
	struct MHD_Daemon *d;
	pthread_mutex_t lock;
	struct prom_snapshot latest;
};

static const char INDEX[] =
	"<!DOCTYPE html>\n<html><head><title>rsswatch</title></head><body>"
	"<p>rsswatch: <a href=\"/metrics\">/metrics</a></p></body></html>\n";

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *type,
			     const void *body, size_t len)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)body,
								 MHD_RESPMEM_MUST_COPY);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	enum MHD_Result ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **con_cls)
{
	struct exporter *x = cls;
	(void)version;
	(void)upload;
	(void)con_cls;
	if (*upload_size)	/* a body: not for us; discard it */
		*upload_size = 0;
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
		static const char m[] = "method not allowed\n";
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", m, sizeof(m) - 1);
	}
	if (strcmp(url, "/") == 0)
		return reply(c, MHD_HTTP_OK, "text/html; charset=utf-8", INDEX, sizeof(INDEX) - 1);
	if (strcmp(url, "/metrics") != 0) {
		static const char m[] = "not found: try /metrics\n";
		return reply(c, MHD_HTTP_NOT_FOUND, "text/plain", m, sizeof(m) - 1);
	}
	struct prom_snapshot *snap = malloc(sizeof(*snap));
	if (!snap)
		return MHD_NO;
	pthread_mutex_lock(&x->lock);
	memcpy(snap, &x->latest, sizeof(*snap));
	pthread_mutex_unlock(&x->lock);
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) == 0) {
		snap->recorder_user_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
		snap->recorder_sys_s = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	}
	int om = prom_wants_openmetrics(MHD_lookup_connection_value(c, MHD_HEADER_KIND,
								      MHD_HTTP_HEADER_ACCEPT));
	struct buf b = { 0 };
	prom_write(&b, snap, om);
	free(snap);
	enum MHD_Result ret = reply(c, MHD_HTTP_OK, om ? OPENMETRICS_CONTENT_TYPE : PROM_CONTENT_TYPE,
				    buf_str(&b), b.len);
	buf_release(&b);
	return ret;
}

int exporter_start(struct exporter **out, const char *addr)
{
	struct sockaddr_storage ss;
	socklen_t len;
	if (prom_parse_listen(addr, &ss, &len) < 0)
		return -EINVAL;
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss.ss_family == AF_INET6)	/* the address given, not also its IPv4 twin */
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, 64) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	struct exporter *x = xcalloc(1, sizeof(*x));
	pthread_mutex_init(&x->lock, NULL);
	x->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL, 0, NULL, NULL,
				handle, x,
				MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)HTTP_MAX_CONNECTIONS,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)HTTP_TIMEOUT_S,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(32 * 1024),
				MHD_OPTION_END);
	if (!x->d) {
		close(fd);
		pthread_mutex_destroy(&x->lock);
		free(x);
		return -EIO;
	}
	*out = x;
	return 0;
}

void exporter_update(struct exporter *x, const struct prom_snapshot *snap)
{
	if (!x)
		return;
	pthread_mutex_lock(&x->lock);
	memcpy(&x->latest, snap, sizeof(*snap));
	pthread_mutex_unlock(&x->lock);
}

void exporter_free(struct exporter *x)
{
	if (!x)
		return;
	MHD_stop_daemon(x->d);	/* also closes the listening socket */
	pthread_mutex_destroy(&x->lock);
	free(x);
}
