#include "source/proccn.h"
#include "base/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/filter.h>
#include <linux/netlink.h>

/* A drain reads PROCCN_BATCH datagrams a recvmmsg, into slots of c->buf: an event is
 * about 100 bytes, and on a busy host a few thousand come a second (one by one, a
 * recv each cost about as much as the rest of the recording). */
#define PROCCN_BATCH 32
#define PROCCN_SLOT 2048

/* Offsets into one message: nlmsghdr, then cn_msg, then proc_event. Read with memcpy:
 * the proc_event after the 20-byte cn_msg is not 8-byte aligned in the buffer. */
#define CN_OFF NLMSG_HDRLEN
#define EV_OFF (CN_OFF + sizeof(struct cn_msg))
#define EV_DATA_OFF (EV_OFF + offsetof(struct proc_event, event_data))

static uint32_t get_u32(const unsigned char *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static pid_t get_pid(const unsigned char *p)
{
	int32_t v;
	memcpy(&v, p, sizeof(v));
	return (pid_t)v;
}

/* One proc_event of dlen bytes at ev. Returns 1 with *out written, 0 for an event of
 * another kind, -EINVAL when too short for its kind. */
static int parse_event(const unsigned char *ev, size_t dlen, struct proccn_event *out)
{
	const size_t head = offsetof(struct proc_event, event_data);
	if (dlen < head)
		return -EINVAL;
	uint32_t what = get_u32(ev + offsetof(struct proc_event, what));
	const unsigned char *d = ev + head;
	memset(out, 0, sizeof(*out));
	if (what == PROC_EVENT_FORK) {
		if (dlen < head + sizeof(struct fork_proc_event))
			return -EINVAL;
		out->kind = PROCCN_FORK;
		out->ppid = get_pid(d + offsetof(struct fork_proc_event, parent_pid));
		out->ptgid = get_pid(d + offsetof(struct fork_proc_event, parent_tgid));
		out->pid = get_pid(d + offsetof(struct fork_proc_event, child_pid));
		out->tgid = get_pid(d + offsetof(struct fork_proc_event, child_tgid));
		return 1;
	}
	if (what == PROC_EVENT_EXEC) {
		if (dlen < head + sizeof(struct exec_proc_event))
			return -EINVAL;
		out->kind = PROCCN_EXEC;
		out->pid = get_pid(d + offsetof(struct exec_proc_event, process_pid));
		out->tgid = get_pid(d + offsetof(struct exec_proc_event, process_tgid));
		return 1;
	}
	if (what == PROC_EVENT_EXIT) {
		/* process_pid and process_tgid lead; older kernels had no parent fields */
		if (dlen < head + offsetof(struct exit_proc_event, exit_code))
			return -EINVAL;
		out->kind = PROCCN_EXIT;
		out->pid = get_pid(d + offsetof(struct exit_proc_event, process_pid));
		out->tgid = get_pid(d + offsetof(struct exit_proc_event, process_tgid));
		return 1;
	}
	return 0;
}

int proccn_parse(const void *buf, size_t len, struct proccn_event *out, size_t max)
{
	const unsigned char *p = buf;
	size_t off = 0;
	int n = 0;
	while (len - off >= NLMSG_HDRLEN) {
		struct nlmsghdr h;
		memcpy(&h, p + off, sizeof(h));
		if (h.nlmsg_len < NLMSG_HDRLEN || h.nlmsg_len > len - off)
			return -EINVAL;
		const unsigned char *msg = p + off;
		size_t mlen = h.nlmsg_len;
		/* the connector sends each event as one NLMSG_DONE message */
		if (h.nlmsg_type == NLMSG_DONE && mlen >= EV_OFF) {
			struct cn_msg cn;
			memcpy(&cn, msg + CN_OFF, sizeof(cn));
			if (cn.id.idx == CN_IDX_PROC && cn.id.val == CN_VAL_PROC) {
				if (cn.len > mlen - EV_OFF)
					return -EINVAL;
				struct proccn_event ev;
				int e = parse_event(msg + EV_OFF, cn.len, &ev);
				if (e < 0)
					return e;
				if (e > 0) {
					if ((size_t)n < max)
						out[n] = ev;
					if (n < INT32_MAX)
						n++;
				}
			}
		} else if (h.nlmsg_type == NLMSG_DONE) {
			return -EINVAL;
		}
		size_t step = NLMSG_ALIGN(mlen);
		off = step > len - off ? len : off + step;	/* the last may be unpadded */
	}
	if (off != len && len - off >= NLMSG_HDRLEN)
		return -EINVAL;
	return n;
}

int proccn_open(struct proccn *c)
{
	struct {
		struct nlmsghdr h;
		struct cn_msg cn;
		enum proc_cn_mcast_op op;
	} __attribute__((packed)) req;
	struct sockaddr_nl sa;
	c->fd = -1;
	c->buf = NULL;
	c->cap = 0;
	int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_CONNECTOR);
	if (fd < 0)
		return -errno;
	memset(&sa, 0, sizeof(sa));
	sa.nl_family = AF_NETLINK;
	sa.nl_groups = CN_IDX_PROC;
	sa.nl_pid = 0;	/* the kernel picks a port id */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		goto fail;
	/* A larger buffer loses fewer events on a busy host; unprivileged processes get
	 * what net.core.rmem_max allows. Not fatal: a loss only costs a walk. */
	int rcv = 4 << 20;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcv, sizeof(rcv)) < 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	memset(&req, 0, sizeof(req));
	req.h.nlmsg_len = sizeof(req);
	req.h.nlmsg_type = NLMSG_DONE;
	req.h.nlmsg_pid = 0;
	req.cn.id.idx = CN_IDX_PROC;
	req.cn.id.val = CN_VAL_PROC;
	req.cn.len = sizeof(req.op);
	req.op = PROC_CN_MCAST_LISTEN;
	memset(&sa, 0, sizeof(sa));
	sa.nl_family = AF_NETLINK;
	if (sendto(fd, &req, sizeof(req), 0, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		goto fail;
	c->cap = PROCCN_BATCH * PROCCN_SLOT;
	c->buf = xmalloc(c->cap);
	c->fd = fd;
	return 0;
fail:;
	int e = -errno;
	close(fd);
	return e;
}

int proccn_drain(struct proccn *c, void (*cb)(void *ctx, const struct proccn_event *ev), void *ctx)
{
	struct proccn_event ev[64];
	struct mmsghdr mm[PROCCN_BATCH];
	struct iovec iov[PROCCN_BATCH];
	int lost = 0;
	if (c->fd < 0)
		return -EBADF;
	for (;;) {
		memset(mm, 0, sizeof(mm));
		for (int k = 0; k < PROCCN_BATCH; k++) {
			iov[k].iov_base = c->buf + (size_t)k * PROCCN_SLOT;
			iov[k].iov_len = PROCCN_SLOT;
			mm[k].msg_hdr.msg_iov = &iov[k];
			mm[k].msg_hdr.msg_iovlen = 1;
		}
		int got = recvmmsg(c->fd, mm, PROCCN_BATCH, MSG_DONTWAIT, NULL);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return lost ? -ENOBUFS : 0;
			if (errno == ENOBUFS) {
				lost = 1;
				continue;
			}
			return -errno;
		}
		for (int k = 0; k < got; k++) {
			/* One datagram holds one message (the kernel sends each event alone);
			 * a batch of several is parsed the same way. One cut short, one that
			 * cannot be parsed, or one that holds more than ev[] can, counts as a
			 * loss: the caller then walks. */
			int n = proccn_parse(c->buf + (size_t)k * PROCCN_SLOT, mm[k].msg_len, ev,
					     ARRAY_SIZE(ev));
			if (n < 0 || n > (int)ARRAY_SIZE(ev) || (mm[k].msg_hdr.msg_flags & MSG_TRUNC)) {
				lost = 1;
				n = n < 0 ? 0 : n > (int)ARRAY_SIZE(ev) ? (int)ARRAY_SIZE(ev) : n;
			}
			for (int i = 0; i < n; i++)
				cb(ctx, &ev[i]);
		}
	}
}

int proccn_forks_only(struct proccn *c)
{
	if (c->fd < 0)
		return -EBADF;
	/* an absolute load reads the word in network order */
	struct sock_filter prog[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, EV_OFF + offsetof(struct proc_event, what)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ntohl(PROC_EVENT_FORK), 0, 1),
		BPF_STMT(BPF_RET | BPF_K, 0xffffffff),
		BPF_STMT(BPF_RET | BPF_K, 0),
	};
	struct sock_fprog fp = { .len = ARRAY_SIZE(prog), .filter = prog };
	return setsockopt(c->fd, SOL_SOCKET, SO_ATTACH_FILTER, &fp, sizeof(fp)) < 0 ? -errno : 0;
}

void proccn_close(struct proccn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->buf);
	c->fd = -1;
	c->buf = NULL;
	c->cap = 0;
}
