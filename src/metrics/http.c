#include "metrics/http.h"
#include "base/clock.h"
#include "base/parse.h"
#include "base/util.h"

#include <dlfcn.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* HTTP_MAX_CONNECTIONS and the ones past it that are being closed: the server's own
 * limit, so that it accepts a new connection for us to judge. */
#define HTTP_CONN_SLOTS (2 * HTTP_MAX_CONNECTIONS)

/* One open connection: its socket (the server's: shut down, never closed, here), the
 * address it came from, and when its current request began (mono ns). */
struct http_conn {
	struct MHD_Connection *c;
	int fd;
	unsigned char addr[16];	/* IPv4 address, or the first 8 bytes of an IPv6 one */
	int64_t since;
	int closing;		/* shut down by a limit: no longer counted */
};

/* Everything below d is shared by the sampling thread and the server's, under lock.
 * scrapes counts the requests of /metrics; last_scrape and gap (monotonic ns) are the
 * time of the last one and its distance from the one before (0: not known yet);
 * end_served counts the answers that held the run's end and were sent in full.
 * The agent's endpoint (metrics_server_start_set) has ntargets targets instead of latest;
 * each target's recorder holds a handle of its own (slots[i]: owner and slot set, no
 * server), whose calls go to the owner's targets[slot] under the owner's lock. */
struct metrics_server {
	struct MHD_Daemon *d;
	struct metrics_server *owner;	/* a target's handle: the endpoint; NULL for the endpoint */
	size_t slot;
	struct metrics_server *slots;
	struct prom_target *targets;
	size_t ntargets;
	pthread_mutex_t lock;
	pthread_cond_t scraped;
	struct prom_snapshot latest;
	uint64_t scrapes, end_served;
	int64_t last_scrape, gap;
	int ended;
	/* The endpoint's open connections (see http.h), under conn_lock: added when the
	 * server accepts one, removed when it closes it (before it closes the socket, so
	 * that fd is still the connection's while it is here). */
	pthread_mutex_t conn_lock;
	struct http_conn conns[HTTP_CONN_SLOTS];
	size_t nconns;
};

/* libmicrohttpd is loaded by the first metrics_server_start, not linked: linked, it and the
 * TLS stack under it (gnutls, p11-kit, nettle, gmp: nine libraries) are mapped into
 * every rsswatch process and touch about 2.3 MiB of a recorder that serves nothing.
 * The header gives the types. */
#define MHD_LIB "libmicrohttpd.so.12"

static struct {
	int tried, ok;
	__typeof__(&MHD_start_daemon) start_daemon;
	__typeof__(&MHD_stop_daemon) stop_daemon;
	__typeof__(&MHD_create_response_from_buffer) response_from_buffer;
	__typeof__(&MHD_add_response_header) add_header;
	__typeof__(&MHD_queue_response) queue_response;
	__typeof__(&MHD_destroy_response) destroy_response;
	__typeof__(&MHD_lookup_connection_value) lookup_value;
	__typeof__(&MHD_get_connection_info) conn_info;
} mhd;

#define RESOLVE(h, field, name) (*(void **)&mhd.field = dlsym(h, name)) != NULL

static int mhd_load(void)
{
	if (mhd.tried)
		return mhd.ok;
	mhd.tried = 1;
	void *h = dlopen(MHD_LIB, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return 0;
	mhd.ok = RESOLVE(h, start_daemon, "MHD_start_daemon") &&
		 RESOLVE(h, stop_daemon, "MHD_stop_daemon") &&
		 RESOLVE(h, response_from_buffer, "MHD_create_response_from_buffer") &&
		 RESOLVE(h, add_header, "MHD_add_response_header") &&
		 RESOLVE(h, queue_response, "MHD_queue_response") &&
		 RESOLVE(h, destroy_response, "MHD_destroy_response") &&
		 RESOLVE(h, lookup_value, "MHD_lookup_connection_value") &&
		 RESOLVE(h, conn_info, "MHD_get_connection_info");
	return mhd.ok;	/* never closed: its threads may outlive a stop */
}

/* A request's mark (its con_cls): an answer from /metrics that holds the run's end. */
static char END_MARK;

static const char INDEX[] =
	"<!DOCTYPE html>\n<html><head><title>rsswatch</title></head><body>"
	"<p>rsswatch: <a href=\"/metrics\">/metrics</a></p></body></html>\n";

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *type,
			     const void *body, size_t len)
{
	struct MHD_Response *r = mhd.response_from_buffer(len, (void *)body,
								 MHD_RESPMEM_MUST_COPY);
	if (!r)
		return MHD_NO;
	mhd.add_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		mhd.add_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	enum MHD_Result ret = mhd.queue_response(c, status, r);
	mhd.destroy_response(r);
	return ret;
}

/* The agent's /metrics: every target's latest, copied under the lock. */
static enum MHD_Result serve_set(struct metrics_server *x, struct MHD_Connection *c)
{
	struct prom_target *t = malloc(x->ntargets * sizeof(*t));
	if (!t)
		return MHD_NO;
	int64_t now = mono_ns();
	pthread_mutex_lock(&x->lock);
	memcpy(t, x->targets, x->ntargets * sizeof(*t));
	if (x->scrapes++)
		x->gap = now - x->last_scrape;
	x->last_scrape = now;
	pthread_mutex_unlock(&x->lock);
	struct prom_agent a = { 0, 0 };
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) == 0) {
		a.user_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
		a.sys_s = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	}
	int om = prom_wants_openmetrics(mhd.lookup_value(c, MHD_HEADER_KIND,
								      MHD_HTTP_HEADER_ACCEPT));
	struct buf b = { 0 };
	prom_write_agent(&b, t, x->ntargets, &a, om);
	free(t);
	enum MHD_Result ret = reply(c, MHD_HTTP_OK, om ? OPENMETRICS_CONTENT_TYPE : PROM_CONTENT_TYPE,
				    buf_str(&b), b.len);
	buf_release(&b);
	return ret;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **con_cls)
{
	struct metrics_server *x = cls;
	(void)version;
	(void)upload;
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
	if (x->ntargets)
		return serve_set(x, c);
	struct prom_snapshot *snap = malloc(sizeof(*snap));
	if (!snap)
		return MHD_NO;
	int64_t now = mono_ns();
	pthread_mutex_lock(&x->lock);
	memcpy(snap, &x->latest, sizeof(*snap));
	if (x->scrapes++)
		x->gap = now - x->last_scrape;
	x->last_scrape = now;
	pthread_mutex_unlock(&x->lock);
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) == 0) {
		snap->recorder_user_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
		snap->recorder_sys_s = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	}
	if (snap->outcome[0])
		*con_cls = &END_MARK;
	int om = prom_wants_openmetrics(mhd.lookup_value(c, MHD_HEADER_KIND,
								      MHD_HTTP_HEADER_ACCEPT));
	struct buf b = { 0 };
	prom_write(&b, snap, om);
	free(snap);
	enum MHD_Result ret = reply(c, MHD_HTTP_OK, om ? OPENMETRICS_CONTENT_TYPE : PROM_CONTENT_TYPE,
				    buf_str(&b), b.len);
	buf_release(&b);
	return ret;
}

static void conn_answered(struct metrics_server *x, struct MHD_Connection *c);

/* A request is done: an answer with the run's end that was sent in full ends
 * metrics_server_free's wait. */
static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	struct metrics_server *x = cls;
	conn_answered(x, c);
	if (*con_cls != &END_MARK || toe != MHD_REQUEST_TERMINATED_COMPLETED_OK)
		return;
	pthread_mutex_lock(&x->lock);
	x->end_served++;
	pthread_cond_broadcast(&x->scraped);
	pthread_mutex_unlock(&x->lock);
}

/* Under conn_lock: closes conns[i] (its socket shut down: the server sees the end of
 * it and closes it). */
static void conn_close(struct metrics_server *x, size_t i)
{
	struct http_conn *k = &x->conns[i];
	if (k->closing)
		return;
	shutdown(k->fd, SHUT_RDWR);
	k->closing = 1;
}

/* Under conn_lock: closes every request older than HTTP_REQUEST_S. */
static void conn_reap(struct metrics_server *x, int64_t now)
{
	for (size_t i = 0; i < x->nconns; i++)
		if (!x->conns[i].closing && now - x->conns[i].since > HTTP_REQUEST_S * NS_PER_S)
			conn_close(x, i);
}

/* Under conn_lock: the new connection conns[nw] is over a limit, among those of its
 * address (same) or all: closes the one of them whose request has waited longest
 * (never the new one: a scrape is answered within milliseconds of its connection, so
 * only a burst of connections in that time can push it out). */
static void conn_evict(struct metrics_server *x, size_t nw, int same)
{
	size_t victim = nw;
	for (size_t i = 0; i < x->nconns; i++) {
		const struct http_conn *k = &x->conns[i];
		if (i == nw || k->closing ||
		    (same && memcmp(k->addr, x->conns[nw].addr, sizeof(k->addr)) != 0))
			continue;
		if (victim == nw || k->since < x->conns[victim].since)
			victim = i;
	}
	conn_close(x, victim);
}

static void conn_key(const struct sockaddr *sa, unsigned char key[16])
{
	memset(key, 0, 16);
	if (!sa)
		return;
	if (sa->sa_family == AF_INET)
		memcpy(key, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
	else if (sa->sa_family == AF_INET6)
		memcpy(key, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, 8);
}

static void conn_notify(void *cls, struct MHD_Connection *c, void **socket_context,
			enum MHD_ConnectionNotificationCode code)
{
	struct metrics_server *x = cls;
	(void)socket_context;
	int64_t now = mono_ns();
	pthread_mutex_lock(&x->conn_lock);
	if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		for (size_t i = 0; i < x->nconns; i++)
			if (x->conns[i].c == c) {
				x->conns[i] = x->conns[--x->nconns];
				break;
			}
		pthread_mutex_unlock(&x->conn_lock);
		return;
	}
	const union MHD_ConnectionInfo *fi = mhd.conn_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	const union MHD_ConnectionInfo *ai = mhd.conn_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (!fi || x->nconns == HTTP_CONN_SLOTS) {
		pthread_mutex_unlock(&x->conn_lock);
		return;	/* cannot happen: the server's own limit is HTTP_CONN_SLOTS */
	}
	size_t nw = x->nconns++;
	struct http_conn *k = &x->conns[nw];
	memset(k, 0, sizeof(*k));
	k->c = c;
	k->fd = fi->connect_fd;
	k->since = now;
	conn_key(ai ? ai->client_addr : NULL, k->addr);
	conn_reap(x, now);
	size_t all = 0, same = 0;
	for (size_t i = 0; i < x->nconns; i++) {
		if (x->conns[i].closing)
			continue;
		all++;
		same += memcmp(x->conns[i].addr, k->addr, sizeof(k->addr)) == 0;
	}
	if (same > HTTP_MAX_PER_ADDR)
		conn_evict(x, nw, 1);
	else if (all > HTTP_MAX_CONNECTIONS)
		conn_evict(x, nw, 0);
	pthread_mutex_unlock(&x->conn_lock);
}

/* An answer was sent: the connection's next request starts its own time. */
static void conn_answered(struct metrics_server *x, struct MHD_Connection *c)
{
	pthread_mutex_lock(&x->conn_lock);
	for (size_t i = 0; i < x->nconns; i++)
		if (x->conns[i].c == c)
			x->conns[i].since = mono_ns();
	pthread_mutex_unlock(&x->conn_lock);
}

static int start(struct metrics_server **out, const char *addr, const char *const *names, size_t n)
{
	struct sockaddr_storage ss;
	socklen_t len;
	if (prom_parse_listen(addr, &ss, &len) < 0)
		return -EINVAL;
	if (!mhd_load())
		return -ELIBACC;
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
	struct metrics_server *x = xcalloc(1, sizeof(*x));
	if (n) {
		x->ntargets = n;
		x->targets = xcalloc(n, sizeof(*x->targets));
		x->slots = xcalloc(n, sizeof(*x->slots));
		for (size_t i = 0; i < n; i++) {
			strlcpy_rsw(x->targets[i].name, names[i], sizeof(x->targets[i].name));
			x->slots[i].owner = x;
			x->slots[i].slot = i;
		}
	}
	pthread_mutex_init(&x->lock, NULL);
	pthread_mutex_init(&x->conn_lock, NULL);
	pthread_cond_init(&x->scraped, NULL);
	/* The server's thread takes no signals: SIGINT and SIGTERM are for the sampling
	 * thread (its signalfd), and a thread that let them through would die of them. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	x->d = mhd.start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL, 0, NULL, NULL,
				handle, x,
				MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)HTTP_CONN_SLOTS,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)HTTP_TIMEOUT_S,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTP_MEMORY_LIMIT,
				MHD_OPTION_NOTIFY_COMPLETED, completed, x,
				MHD_OPTION_NOTIFY_CONNECTION, conn_notify, x,
				MHD_OPTION_END);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!x->d) {
		close(fd);
		pthread_cond_destroy(&x->scraped);
		pthread_mutex_destroy(&x->conn_lock);
		pthread_mutex_destroy(&x->lock);
		free(x->targets);
		free(x->slots);
		free(x);
		return -EIO;
	}
	*out = x;
	return 0;
}

int metrics_server_start(struct metrics_server **out, const char *addr)
{
	return start(out, addr, NULL, 0);
}

int metrics_server_start_set(struct metrics_server **out, const char *addr, const char *const *names,
		       size_t n)
{
	if (n == 0)
		return -EINVAL;
	return start(out, addr, names, n);
}

struct metrics_server *metrics_server_slot(struct metrics_server *x, size_t i)
{
	return x && i < x->ntargets ? &x->slots[i] : NULL;
}

void metrics_server_target(struct metrics_server *x, int up, int64_t run, pid_t pid, uint64_t instances,
		     uint64_t restarts)
{
	if (!x || !x->owner)
		return;
	pthread_mutex_lock(&x->owner->lock);
	struct prom_target *t = &x->owner->targets[x->slot];
	if (up && !t->up) {	/* a new instance: nothing of the last one's is left */
		memset(&t->snap, 0, sizeof(t->snap));
		t->snap.run = run;
		t->snap.pid = pid;
	}
	if (!up)
		t->snap.have_sample = 0;	/* no figures of a process that has gone */
	t->up = up;
	t->instances = instances;
	t->restarts = restarts;
	pthread_mutex_unlock(&x->owner->lock);
}

/* The snapshot x writes to, with its endpoint locked. */
static struct prom_snapshot *lock_snap(struct metrics_server *x)
{
	if (!x->owner) {
		pthread_mutex_lock(&x->lock);
		return &x->latest;
	}
	pthread_mutex_lock(&x->owner->lock);
	return &x->owner->targets[x->slot].snap;
}

static void unlock_snap(struct metrics_server *x)
{
	pthread_mutex_unlock(x->owner ? &x->owner->lock : &x->lock);
}

void metrics_server_update(struct metrics_server *x, const struct prom_snapshot *snap)
{
	if (!x)
		return;
	/* a request that takes too long is closed even when no new connection comes */
	struct metrics_server *e = x->owner ? x->owner : x;
	pthread_mutex_lock(&e->conn_lock);
	conn_reap(e, mono_ns());
	pthread_mutex_unlock(&e->conn_lock);
	struct prom_snapshot *p = lock_snap(x);
	memcpy(p, snap, sizeof(*snap));
	unlock_snap(x);
}

void metrics_server_end(struct metrics_server *x, const struct run *r)
{
	if (!x)
		return;
	struct prom_snapshot *p = lock_snap(x);
	p->run = r->id;
	p->samples = r->samples;
	p->oom_kills = r->oom_kills;
	if (r->peak_rss > p->high_water)
		p->high_water = r->peak_rss;
	if (r->peak_cgroup > p->cgroup_peak)
		p->cgroup_peak = r->peak_cgroup;
	strlcpy_rsw(p->outcome, r->outcome, sizeof(p->outcome));
	p->ended_at = r->ended_at;
	p->exit_code = r->exit_code;
	p->signal = r->signal;
	if (!x->owner)
		x->ended = 1;	/* the agent's endpoint outlives its runs: no linger */
	unlock_snap(x);
}

/* Is SIGINT or SIGTERM waiting (the recorder blocks them and reads a signalfd)? */
static int stop_pending(void)
{
	sigset_t p;
	return sigpending(&p) == 0 && (sigismember(&p, SIGINT) == 1 || sigismember(&p, SIGTERM) == 1);
}

/* metrics_server_free's wait for the scrape that sees the end. */
static void linger(struct metrics_server *x)
{
	pthread_mutex_lock(&x->lock);
	if (x->ended && x->gap > 0) {
		int64_t wait = x->gap + x->gap / 2 + NS_PER_S;
		if (wait > HTTP_LINGER_MAX_S * NS_PER_S)
			wait = HTTP_LINGER_MAX_S * NS_PER_S;
		int64_t deadline = mono_ns() + wait;
		/* in slices, to see a signal that asks us to stop */
		while (!x->end_served && mono_ns() < deadline && !stop_pending()) {
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 100 * NS_PER_MS;
			if (ts.tv_nsec >= NS_PER_S) {
				ts.tv_sec++;
				ts.tv_nsec -= NS_PER_S;
			}
			pthread_cond_timedwait(&x->scraped, &x->lock, &ts);
		}
	}
	pthread_mutex_unlock(&x->lock);
}

void metrics_server_free(struct metrics_server *x)
{
	if (!x || x->owner)
		return;
	linger(x);
	mhd.stop_daemon(x->d);	/* also closes the listening socket */
	pthread_cond_destroy(&x->scraped);
	pthread_mutex_destroy(&x->conn_lock);
	pthread_mutex_destroy(&x->lock);
	free(x->targets);
	free(x->slots);
	free(x);
}
