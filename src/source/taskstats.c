#include "source/taskstats.h"
#include "base/clock.h"
#include "base/rfile.h"
#include "base/util.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/acct.h>
#include <linux/filter.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>

/* Messages and attributes are walked with memcpy into local headers: nothing in the
 * buffer is assumed aligned, and every length is checked against what is left before
 * it is used. */

/* The next message at *off of buf[0..len). Returns 1 with *h, *msg (its first byte)
 * and *off moved past it, 0 at the end, -EINVAL when a header or length does not fit.
 * A last message may lack its padding; any other tail is an error. */
static int msg_next(const unsigned char *buf, size_t len, size_t *off, struct nlmsghdr *h,
		    const unsigned char **msg)
{
	size_t left = len - *off;
	if (left == 0)
		return 0;
	if (left < NLMSG_HDRLEN)
		return -EINVAL;
	memcpy(h, buf + *off, sizeof(*h));
	if (h->nlmsg_len < NLMSG_HDRLEN || h->nlmsg_len > left)
		return -EINVAL;
	*msg = buf + *off;
	size_t step = NLMSG_ALIGN((size_t)h->nlmsg_len);
	*off = step >= left ? len : *off + step;
	return 1;
}

struct attr {
	uint16_t type;		/* without NLA_F_NESTED and NLA_F_NET_BYTEORDER */
	const unsigned char *data;
	size_t len;
};

/* The next attribute at *off of p[0..len), as msg_next. */
static int attr_next(const unsigned char *p, size_t len, size_t *off, struct attr *a)
{
	struct nlattr na;
	size_t left = len - *off;
	if (left == 0)
		return 0;
	if (left < NLA_HDRLEN)
		return -EINVAL;
	memcpy(&na, p + *off, sizeof(na));
	if (na.nla_len < NLA_HDRLEN || na.nla_len > left)
		return -EINVAL;
	a->type = na.nla_type & NLA_TYPE_MASK;
	a->data = p + *off + NLA_HDRLEN;
	a->len = na.nla_len - NLA_HDRLEN;
	size_t step = NLA_ALIGN((size_t)na.nla_len);
	*off = step >= left ? len : *off + step;
	return 1;
}

/* An NLMSG_ERROR message: 0 with *err (0 for an ack, else a negative errno), or
 * -EINVAL when it is too short or the error is no errno. */
static int msg_error(const unsigned char *msg, size_t mlen, int *err)
{
	int32_t e;
	if (mlen < NLMSG_HDRLEN + sizeof(e))
		return -EINVAL;
	memcpy(&e, msg + NLMSG_HDRLEN, sizeof(e));
	if (e > 0 || e < -4095)
		return -EINVAL;
	*err = e;
	return 0;
}

static int get_id(const struct attr *a, pid_t *out)
{
	uint32_t v;
	if (a->len != sizeof(v))
		return -EINVAL;
	memcpy(&v, a->data, sizeof(v));
	if (v == 0 || v > INT32_MAX)
		return -EINVAL;
	*out = (pid_t)v;
	return 0;
}

#define FITS(len, field) \
	(offsetof(struct taskstats, field) + sizeof(((struct taskstats *)0)->field) <= (len))

/* Fills out from a struct taskstats of plen bytes. The kernel's struct may be shorter
 * or longer than ours: the bytes that exist are copied over a zeroed one, and a group
 * of fields counts as present only when its last field fits. */
static int fill_stats(const unsigned char *p, size_t plen, struct taskstats_exit *out)
{
	struct taskstats ts;
	if (!FITS(plen, ac_flag))
		return -EINVAL;
	memset(&ts, 0, sizeof(ts));
	memcpy(&ts, p, plen < sizeof(ts) ? plen : sizeof(ts));
	out->version = ts.version;
	out->exit_code = ts.ac_exitcode;
	out->flags = ts.ac_flag;
	if (FITS(plen, ac_majflt)) {
		out->have |= TASKSTATS_HAVE_BASIC;
		memcpy(out->comm, ts.ac_comm, sizeof(ts.ac_comm));
		out->comm[sizeof(ts.ac_comm)] = '\0';
		if (ts.ac_ppid > INT32_MAX)
			return -EINVAL;
		out->ppid = (pid_t)ts.ac_ppid;
		out->uid = ts.ac_uid;
		out->etime_us = ts.ac_etime;
		out->utime_us = ts.ac_utime;
		out->stime_us = ts.ac_stime;
		out->minflt = ts.ac_minflt;
		out->majflt = ts.ac_majflt;
		/* the delay accounting part: all 0 without CONFIG_TASK_DELAY_ACCT; a task
		 * that ran was scheduled at least once */
		if (ts.cpu_count || ts.cpu_run_virtual_total) {
			out->have |= TASKSTATS_HAVE_RUN;
			out->run_ns = ts.cpu_run_virtual_total;
		}
	}
	if (FITS(plen, hiwater_vm)) {
		/* KiB in the struct; a value that overflows in bytes is not a kernel's */
		if (ts.hiwater_rss > UINT64_MAX / 1024 || ts.hiwater_vm > UINT64_MAX / 1024)
			return -EINVAL;
		out->have |= TASKSTATS_HAVE_XACCT;
		out->hiwater_rss = ts.hiwater_rss * 1024;
		out->hiwater_vm = ts.hiwater_vm * 1024;
	}
	if (FITS(plen, write_bytes)) {
		out->have |= TASKSTATS_HAVE_IO;
		out->read_bytes = ts.read_bytes;
		out->write_bytes = ts.write_bytes;
	}
	if (FITS(plen, ac_tgid)) {
		if (ts.ac_tgid > INT32_MAX)
			return -EINVAL;
		out->have |= TASKSTATS_HAVE_TGID;
		out->tgid = (pid_t)ts.ac_tgid;
	}
	return 0;
}

void taskstats_cpu_ns(const struct taskstats_exit *x, uint64_t *user_ns, uint64_t *sys_ns)
{
	uint64_t u = x->utime_us > UINT64_MAX / 1000 ? UINT64_MAX : x->utime_us * 1000;
	uint64_t s = x->stime_us > UINT64_MAX / 1000 ? UINT64_MAX : x->stime_us * 1000;
	if (!(x->have & TASKSTATS_HAVE_RUN)) {
		*user_ns = u;
		*sys_ns = s;
		return;
	}
	/* the kernel's cputime_adjust(): no kernel sample, all user; no user sample, all
	 * kernel; else the kernel's share of run_ns in the ratio of the samples */
	uint64_t rt = x->run_ns;
	if (s == 0) {
		*user_ns = rt;
		*sys_ns = 0;
		return;
	}
	if (u == 0) {
		*user_ns = 0;
		*sys_ns = rt;
		return;
	}
	unsigned __int128 k = (unsigned __int128)rt * s / ((unsigned __int128)u + s);
	*sys_ns = (uint64_t)k;
	*user_ns = rt - (uint64_t)k;
}

/* One AGGR_PID or AGGR_TGID nest: exactly one id and one struct, in any order; pad
 * attributes (TASKSTATS_TYPE_NULL, put before the struct to align it) and unknown
 * ones skipped. */
static int parse_nest(const struct attr *nest, struct taskstats_exit *out)
{
	const int group = nest->type == TASKSTATS_TYPE_AGGR_TGID;
	const uint16_t id_type = group ? TASKSTATS_TYPE_TGID : TASKSTATS_TYPE_PID;
	struct attr a, stats = { 0, NULL, 0 };
	size_t off = 0;
	pid_t id = 0;
	int r;
	while ((r = attr_next(nest->data, nest->len, &off, &a)) > 0) {
		if (a.type == id_type) {
			if (id != 0 || get_id(&a, &id) < 0)
				return -EINVAL;
		} else if (a.type == TASKSTATS_TYPE_STATS) {
			if (stats.data)
				return -EINVAL;
			stats = a;
		}
	}
	if (r < 0 || id == 0 || !stats.data)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->scope = group ? TASKSTATS_TGID : TASKSTATS_PID;
	out->pid = id;
	r = fill_stats(stats.data, stats.len, out);
	if (r < 0)
		return r;
	if (group)
		out->tgid = id;
	return 0;
}

int taskstats_parse(const void *buf, size_t len, uint16_t family,
		    struct taskstats_exit *out, size_t max)
{
	const unsigned char *p = buf;
	const size_t head = NLMSG_HDRLEN + GENL_HDRLEN;
	const unsigned char *msg;
	struct nlmsghdr h;
	size_t off = 0;
	int n = 0, r;
	while ((r = msg_next(p, len, &off, &h, &msg)) > 0) {
		if (h.nlmsg_type == NLMSG_ERROR) {
			int err = 0;
			if (msg_error(msg, h.nlmsg_len, &err) < 0)
				return -EINVAL;
			if (err < 0)
				return err;
			continue;
		}
		if (h.nlmsg_type != family || family < NLMSG_MIN_TYPE)
			continue;
		if (h.nlmsg_len < head)
			return -EINVAL;
		struct genlmsghdr g;
		memcpy(&g, msg + NLMSG_HDRLEN, sizeof(g));
		if (g.cmd != TASKSTATS_CMD_NEW)
			continue;
		const unsigned char *attrs = msg + head;
		size_t alen = h.nlmsg_len - head, aoff = 0;
		struct attr a;
		while ((r = attr_next(attrs, alen, &aoff, &a)) > 0) {
			if (a.type != TASKSTATS_TYPE_AGGR_PID && a.type != TASKSTATS_TYPE_AGGR_TGID)
				continue;
			struct taskstats_exit rec;
			int e = parse_nest(&a, &rec);
			if (e < 0)
				return e;
			if ((size_t)n < max)
				out[n] = rec;
			if (n < INT_MAX)
				n++;
		}
		if (r < 0)
			return r;
	}
	return r < 0 ? r : n;
}

int taskstats_family_parse(const void *buf, size_t len, uint16_t *id)
{
	const unsigned char *p = buf;
	const size_t head = NLMSG_HDRLEN + GENL_HDRLEN;
	static const char name[] = TASKSTATS_GENL_NAME;
	const unsigned char *msg;
	struct nlmsghdr h;
	size_t off = 0;
	int r;
	while ((r = msg_next(p, len, &off, &h, &msg)) > 0) {
		if (h.nlmsg_type == NLMSG_ERROR) {
			int err = 0;
			if (msg_error(msg, h.nlmsg_len, &err) < 0)
				return -EINVAL;
			if (err < 0)
				return err;
			continue;
		}
		if (h.nlmsg_type != GENL_ID_CTRL)
			continue;
		if (h.nlmsg_len < head)
			return -EINVAL;
		struct genlmsghdr g;
		memcpy(&g, msg + NLMSG_HDRLEN, sizeof(g));
		if (g.cmd != CTRL_CMD_NEWFAMILY)
			continue;
		const unsigned char *attrs = msg + head;
		size_t alen = h.nlmsg_len - head, aoff = 0;
		struct attr a;
		uint16_t fid = 0;
		int named = 0;
		while ((r = attr_next(attrs, alen, &aoff, &a)) > 0) {
			if (a.type == CTRL_ATTR_FAMILY_ID) {
				if (a.len != sizeof(fid))
					return -EINVAL;
				memcpy(&fid, a.data, sizeof(fid));
			} else if (a.type == CTRL_ATTR_FAMILY_NAME) {
				/* a NUL-terminated string; padding is not part of it */
				named = a.len == sizeof(name) && memcmp(a.data, name, sizeof(name)) == 0;
			}
		}
		if (r < 0)
			return r;
		if (named && fid >= NLMSG_MIN_TYPE) {
			*id = fid;
			return 0;
		}
	}
	return r < 0 ? r : -ENOENT;
}

/* ---- the reader ---- */

/* Room for the largest datagram: one exit is at most two nests of a struct of 560
 * bytes (6.18); a later kernel's longer struct still fits many times over. */
#define TS_BUFSIZE (64 * 1024)
/* The buffer as slots of one datagram each: an exit's datagram (two records) is about
 * 1 KiB. */
#define TS_SLOT (4 * 1024)
#define TS_SLOTS (TS_BUFSIZE / TS_SLOT)
/* The receive buffer: a queued exit of a one-thread process costs 1,280 bytes of it
 * (measured on 6.18, overhead included) and the kernel doubles the size asked for, so
 * 8 MiB holds some 13,000 exits between drains. Unprivileged callers never get here
 * (registration needs CAP_NET_ADMIN), so SO_RCVBUFFORCE normally works; SO_RCVBUF,
 * capped by net.core.rmem_max, is the fallback. */
#define TS_RCVBUF (8 << 20)
/* How long open waits for the kernel's answer. The kernel answers a request before
 * sendto returns; the wait only bounds a kernel that would not. */
#define TS_REPLY_MS 1000

static void listener_reset(struct taskstats_listener *l)
{
	const struct taskstats_listener init = TASKSTATS_LISTENER_INIT;
	*l = init;
}

/* Sends one generic netlink request with one attribute, built in l->buf. */
static int send_request(struct taskstats_listener *l, uint16_t type, uint8_t cmd,
			uint8_t version, uint16_t flags, uint16_t atype,
			const void *data, size_t dlen)
{
	size_t alen = NLA_HDRLEN + dlen;
	size_t total = NLMSG_HDRLEN + GENL_HDRLEN + NLA_ALIGN(alen);
	struct nlmsghdr h;
	struct genlmsghdr g;
	struct nlattr na;
	struct sockaddr_nl sa;
	if (total > l->cap || alen > UINT16_MAX)
		return -E2BIG;
	memset(l->buf, 0, total);
	memset(&h, 0, sizeof(h));
	h.nlmsg_len = (uint32_t)total;
	h.nlmsg_type = type;
	h.nlmsg_flags = NLM_F_REQUEST | flags;
	h.nlmsg_seq = ++l->seq;
	memset(&g, 0, sizeof(g));
	g.cmd = cmd;
	g.version = version;
	na.nla_len = (uint16_t)alen;
	na.nla_type = atype;
	memcpy(l->buf, &h, sizeof(h));
	memcpy(l->buf + NLMSG_HDRLEN, &g, sizeof(g));
	memcpy(l->buf + NLMSG_HDRLEN + GENL_HDRLEN, &na, sizeof(na));
	memcpy(l->buf + NLMSG_HDRLEN + GENL_HDRLEN + NLA_HDRLEN, data, dlen);
	memset(&sa, 0, sizeof(sa));
	sa.nl_family = AF_NETLINK;
	for (;;) {
		ssize_t w = sendto(l->fd, l->buf, total, 0, (struct sockaddr *)&sa, sizeof(sa));
		if (w >= 0)
			return (size_t)w == total ? 0 : -EIO;
		if (errno != EINTR)
			return -errno;
	}
}

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Receives one datagram into l->buf, waiting until deadline (CLOCK_MONOTONIC ms).
 * Returns its length or -errno (ETIMEDOUT). */
static ssize_t recv_until(struct taskstats_listener *l, int64_t deadline)
{
	for (;;) {
		ssize_t m = recv(l->fd, l->buf, l->cap, 0);
		if (m >= 0)
			return m;
		if (errno == EINTR || errno == ENOBUFS)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		int64_t left = deadline - mono_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		struct pollfd pfd = { l->fd, POLLIN, 0 };
		if (poll(&pfd, 1, (int)left) < 0 && errno != EINTR)
			return -errno;
	}
}

/* Our request's answer among the datagrams of buf: 1 with *err (0 for an ack) when
 * buf holds the NLMSG_ERROR for seq, 0 when it is something else (an exit record that
 * arrived first), -EINVAL when malformed. */
static int find_ack(const unsigned char *buf, size_t len, uint32_t seq, int *err)
{
	const unsigned char *msg;
	struct nlmsghdr h;
	size_t off = 0;
	int r;
	while ((r = msg_next(buf, len, &off, &h, &msg)) > 0) {
		if (h.nlmsg_type != NLMSG_ERROR || h.nlmsg_seq != seq)
			continue;
		return msg_error(msg, h.nlmsg_len, err) < 0 ? -EINVAL : 1;
	}
	return r;
}

/* The cpu list of every possible CPU, as the kernel parses it ("0-63"), malloc'ed.
 * Falls back on 0..N-1 from sysconf when /sys cannot be read. */
static char *possible_cpus(void)
{
	char *s = NULL;
	size_t len = 0;
	if (read_file("/sys/devices/system/cpu/possible", &s, &len) == 0) {
		while (len > 0 && (s[len - 1] == '\n' || s[len - 1] == ' '))
			s[--len] = '\0';
		if (len > 0)
			return s;
		free(s);
	}
	long n = sysconf(_SC_NPROCESSORS_CONF);
	char tmp[32];
	snprintf(tmp, sizeof(tmp), "0-%ld", n > 1 ? n - 1 : 0);
	return xstrdup(tmp);
}

/* The socket's count of messages dropped for want of room (SO_MEMINFO, Linux 4.12). */
static int read_drops(int fd, uint32_t *drops)
{
	uint32_t mi[SK_MEMINFO_VARS];
	socklen_t sl = sizeof(mi);
	if (getsockopt(fd, SOL_SOCKET, SO_MEMINFO, mi, &sl) < 0)
		return -errno;
	if (sl < (SK_MEMINFO_DROPS + 1) * sizeof(uint32_t))
		return -EINVAL;
	*drops = mi[SK_MEMINFO_DROPS];
	return 0;
}

int taskstats_open(struct taskstats_listener *l)
{
	static const char name[] = TASKSTATS_GENL_NAME;
	struct sockaddr_nl sa;
	ssize_t m;
	int e, err = 0;
	listener_reset(l);
	l->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_GENERIC);
	if (l->fd < 0) {
		e = -errno;
		goto fail;
	}
	memset(&sa, 0, sizeof(sa));
	sa.nl_family = AF_NETLINK;	/* nl_pid 0: the kernel picks our port id */
	if (bind(l->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		e = -errno;
		goto fail;
	}
	l->cap = TS_BUFSIZE;
	l->buf = xmalloc(l->cap);

	/* Nothing else reaches the socket before registration: the first datagram is
	 * the answer. */
	e = send_request(l, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1, 0, CTRL_ATTR_FAMILY_NAME,
			 name, sizeof(name));
	if (e < 0)
		goto fail;
	m = recv_until(l, mono_ms() + TS_REPLY_MS);
	if (m < 0) {
		e = (int)m;
		goto fail;
	}
	e = taskstats_family_parse(l->buf, (size_t)m, &l->family);
	if (e < 0)
		goto fail;

	int rcv = TS_RCVBUF;
	if (setsockopt(l->fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcv, sizeof(rcv)) < 0)
		(void)setsockopt(l->fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));

	/* Registration per CPU: an exit is sent to the listeners of the CPU it happens
	 * on. Records of exits on CPUs already registered may come before the ack; they
	 * are dropped (see taskstats_open in the header). */
	l->cpus = possible_cpus();
	e = send_request(l, l->family, TASKSTATS_CMD_GET, TASKSTATS_GENL_VERSION, NLM_F_ACK,
			 TASKSTATS_CMD_ATTR_REGISTER_CPUMASK, l->cpus, strlen(l->cpus) + 1);
	if (e < 0)
		goto fail;
	int64_t deadline = mono_ms() + TS_REPLY_MS;
	for (;;) {
		m = recv_until(l, deadline);
		if (m < 0) {
			e = (int)m;
			goto fail;
		}
		e = find_ack(l->buf, (size_t)m, l->seq, &err);
		if (e < 0)
			goto fail;
		if (e > 0)
			break;
	}
	if (err < 0) {
		e = err;
		free(l->cpus);	/* not registered: nothing to deregister */
		l->cpus = NULL;
		goto fail;
	}
	l->have_drops = read_drops(l->fd, &l->drops) == 0;
	return 0;
fail:
	taskstats_close(l);
	return e;
}

int taskstats_fd(const struct taskstats_listener *l)
{
	return l ? l->fd : -1;
}

int taskstats_drain(struct taskstats_listener *l,
		    void (*cb)(void *ctx, const struct taskstats_exit *rec), void *ctx)
{
	return taskstats_drain_some(l, 0, cb, ctx);
}

int taskstats_drain_some(struct taskstats_listener *l, size_t max,
			 void (*cb)(void *ctx, const struct taskstats_exit *rec), void *ctx)
{
	struct taskstats_exit rec[TASKSTATS_DGRAM_RECS];
	uint64_t lost = 0;
	int overflow = 0;
	if (!l || l->fd < 0)
		return -EBADF;
	/* Up to TS_SLOTS datagrams a call (on a busy host every exit comes here: one
	 * system call each would cost several times the copy). */
	struct mmsghdr mm[TS_SLOTS];
	struct iovec iov[TS_SLOTS];
	size_t left = max ? max : SIZE_MAX;
	while (left > 0) {
		size_t want = left < TS_SLOTS ? left : TS_SLOTS;
		memset(mm, 0, sizeof(mm));
		for (size_t k = 0; k < TS_SLOTS; k++) {
			iov[k].iov_base = l->buf + k * TS_SLOT;
			iov[k].iov_len = TS_SLOT;
			mm[k].msg_hdr.msg_iov = &iov[k];
			mm[k].msg_hdr.msg_iovlen = 1;
		}
		int got = recvmmsg(l->fd, mm, (unsigned)want, MSG_DONTWAIT, NULL);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			if (errno == ENOBUFS) {
				overflow = 1;
				continue;
			}
			return -errno;
		}
		int64_t at = mono_ns();
		left -= (size_t)got;
		for (int k = 0; k < got; k++) {
			if (mm[k].msg_hdr.msg_flags & MSG_TRUNC) {	/* larger than a slot */
				lost++;
				continue;
			}
			/* The kernel sends one exit per datagram (two records at most). One that
			 * cannot be parsed, or holds more than rec[] can, counts as one lost. */
			int n = taskstats_parse(l->buf + (size_t)k * TS_SLOT, mm[k].msg_len,
						l->family, rec, ARRAY_SIZE(rec));
			if (n < 0 || n > (int)ARRAY_SIZE(rec)) {
				lost++;
				n = n < 0 ? 0 : (int)ARRAY_SIZE(rec);
			}
			for (int i = 0; i < n; i++) {
				rec[i].read_ns = at;
				cb(ctx, &rec[i]);
			}
		}
		if (got < (int)want)
			break;	/* the queue is empty now */
	}
	/* The drop counter counts every exit the kernel could not queue; ENOBUFS only
	 * says that some were, and comes with every overflow: the counter is read then. */
	uint32_t d;
	if (overflow && l->have_drops && read_drops(l->fd, &d) == 0) {
		lost += (uint32_t)(d - l->drops);
		l->drops = d;
	} else if (overflow) {
		lost++;
	}
	l->lost += lost;
	return lost > INT_MAX ? INT_MAX : (int)lost;
}

/* The classic BPF program of taskstats_only(). An exit's datagram is a netlink header
 * (16 bytes), a generic netlink header (4), the nested TASKSTATS_TYPE_AGGR_PID (4) and
 * in it TASKSTATS_TYPE_PID (4, then the thread's id at offset 28) and
 * TASKSTATS_TYPE_STATS (its header at 32, or at 36 after a TASKSTATS_TYPE_NULL pad on
 * architectures that align it to 8), then struct taskstats. BPF loads words in network
 * order: the little or big-endian fields are compared with the pid as the same bytes.
 * A load past the datagram's end (an older kernel's shorter struct, without ac_tgid)
 * ends the program with 0: dropped, unless the thread id matched first. */
#define TS_PID_OFF 28
#define TS_STATS_HDR_OFF 32
#define TS_STATS_OFF 36

static uint32_t as_loaded(uint32_t host)
{
	union { uint32_t u; unsigned char b[4]; } v = { host };
	return (uint32_t)v.b[0] << 24 | (uint32_t)v.b[1] << 16 | (uint32_t)v.b[2] << 8 | v.b[3];
}

int taskstats_only(struct taskstats_listener *l, pid_t pid)
{
	if (!l || l->fd < 0)
		return -EBADF;
	if (pid <= 0)
		return -EINVAL;
	uint32_t want = as_loaded((uint32_t)pid);
	union { uint16_t u; unsigned char b[2]; } pad = { TASKSTATS_TYPE_NULL };
	uint32_t pad_type = (uint32_t)pad.b[0] << 8 | pad.b[1];
	struct sock_filter prog[] = {
		/* 0 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, TS_PID_OFF),
		/* 1 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, want, 7, 0),
		/* 2 */ BPF_STMT(BPF_LD | BPF_H | BPF_ABS, TS_STATS_HDR_OFF + 2),
		/* 3 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, pad_type, 0, 2),
		/* 4 */ BPF_STMT(BPF_LDX | BPF_W | BPF_IMM, 4),
		/* 5 */ BPF_JUMP(BPF_JMP | BPF_JA, 1, 0, 0),
		/* 6 */ BPF_STMT(BPF_LDX | BPF_W | BPF_IMM, 0),
		/* 7 */ BPF_STMT(BPF_LD | BPF_W | BPF_IND,
				 TS_STATS_OFF + offsetof(struct taskstats, ac_tgid)),
		/* 8 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, want, 0, 1),
		/* 9 */ BPF_STMT(BPF_RET | BPF_K, 0xffffffff),
		/* 10 */ BPF_STMT(BPF_RET | BPF_K, 0),
	};
	struct sock_fprog fp = { ARRAY_SIZE(prog), prog };
	return setsockopt(l->fd, SOL_SOCKET, SO_ATTACH_FILTER, &fp, sizeof(fp)) < 0 ? -errno : 0;
}

void taskstats_close(struct taskstats_listener *l)
{
	if (!l)
		return;
	if (l->fd >= 0) {
		/* The kernel would drop a listener whose socket is gone at its next send;
		 * deregistering is the tidy way. Handled before sendto returns, so no ack
		 * is awaited. */
		if (l->cpus && l->buf)
			(void)send_request(l, l->family, TASKSTATS_CMD_GET, TASKSTATS_GENL_VERSION,
					   0, TASKSTATS_CMD_ATTR_DEREGISTER_CPUMASK,
					   l->cpus, strlen(l->cpus) + 1);
		close(l->fd);
	}
	free(l->buf);
	free(l->cpus);
	listener_reset(l);
}
