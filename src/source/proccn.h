/* The proc connector (NETLINK_CONNECTOR, CN_IDX_PROC): the kernel's fork and exit
 * events for every process and thread of the host, used to follow a tree of processes
 * without reading every member's children file at every sample.
 *
 * proccn_parse() is the pure part: the bytes of one recv() (one or more netlink
 * messages) in, events out. The reader owns the socket: subscribed with
 * PROC_CN_MCAST_LISTEN, non-blocking, drained by the caller at each sample. Events are
 * delivered in the order the kernel sent them; when the socket buffer overflowed,
 * recv() fails with ENOBUFS and some events are lost: the caller must then rebuild what
 * it derived from them another way (a walk of the children files). Works unprivileged
 * on the kernels of this project (6.18: root and another user alike). */
#ifndef RSW_SOURCE_PROCCN_H
#define RSW_SOURCE_PROCCN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum proccn_kind {
	PROCCN_FORK = 1,	/* a new process (pid == tgid) or thread (pid != tgid) */
	PROCCN_EXIT = 2,	/* a process's or thread's exit */
	PROCCN_EXEC = 3,	/* a process replaced its program (execve) */
};

/* FORK: pid/tgid are the child's, ppid/ptgid its parent's (the parent task and its
 * process). EXIT: pid/tgid the task that exited; ppid/ptgid 0. EXEC: pid/tgid the
 * process that ran a new program (its name and command line are new: read them now). */
struct proccn_event {
	enum proccn_kind kind;
	pid_t pid, tgid;
	pid_t ppid, ptgid;
};

/* Parses the netlink messages in buf. Events other than fork, exec and exit (uid,
 * comm, ...), and messages not from the proc connector, are skipped. Writes at most
 * max events to out and returns how many there were (more than max: the rest were
 * dropped), or -EINVAL when a message is truncated or malformed (the events before it
 * are in out). */
int proccn_parse(const void *buf, size_t len, struct proccn_event *out, size_t max);

struct proccn {
	int fd;			/* -1: closed */
	unsigned char *buf;	/* one recv's bytes */
	size_t cap;
};

/* Opens and subscribes. Returns 0 or -errno (EPROTONOSUPPORT where the kernel has no
 * connector). Events start to arrive after this returns. */
int proccn_open(struct proccn *c);
/* Reads the events that are waiting, without blocking: calls cb for each, in order,
 * until none is left. Returns 0; -ENOBUFS when some were lost meanwhile (those that
 * could be read were still passed to cb); or another -errno. */
int proccn_drain(struct proccn *c, void (*cb)(void *ctx, const struct proccn_event *ev), void *ctx);
/* Lets only fork events reach the socket (a classic BPF filter on the event's type):
 * for a caller that needs no other, on a busy host a third of the events. Returns 0
 * or -errno. */
int proccn_forks_only(struct proccn *c);
void proccn_close(struct proccn *c);

#endif
