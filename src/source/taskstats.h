/* Taskstats exit records (generic netlink family "TASKSTATS"): when a task exits, the
 * kernel sends each registered listener one message with that task's accounting,
 * including the high-water mark of its address space's resident set. A process that
 * lived between two samples still leaves its exact peak here.
 *
 * taskstats_parse() is the pure part: the bytes of one recv() (one or more netlink
 * messages) in, records out. The reader owns the socket: it resolves the family,
 * registers for the exits of every possible CPU, and is drained by the caller without
 * blocking. Registering needs CAP_NET_ADMIN in the initial user namespace and a caller
 * in the initial pid namespace (the kernel answers EPERM, or EINVAL from another
 * namespace); a caller without it falls back to sampled figures.
 *
 * What the kernel sends (checked on 6.18, struct version 16; the fixtures under
 * tests/fixtures/taskstats show it):
 *
 * - Every exiting thread, a process's only thread included, gets one message with a
 *   TASKSTATS_PID record: its own thread id, its thread group id (ac_tgid, version 12
 *   on), its own comm (a thread's name, once set, not the process's), parent, the wait
 *   status it exits with (0 for a thread that ends on its own), its own CPU times, and
 *   hiwater_rss and hiwater_vm. Those two are the address space's, shared by all its
 *   threads and read before the thread lets go of it: each thread's record holds the
 *   peak of the whole process up to that moment, since its last execve.
 * - The thread whose exit ends the process has AGROUP in flags (version 12 on). It
 *   need not be the leader: after exit() in main, another thread is often last. If
 *   the process ever had more than one thread, the same message also carries a
 *   TASKSTATS_TGID record, after that PID record: the group's id and its totals over
 *   all its threads (elapsed and CPU times, context switches, delay accounting), and
 *   nothing else: comm empty, ppid, uid, exit code, flags, hiwater_rss and hiwater_vm
 *   all 0 although the struct is long enough for them. It is no source of a peak.
 *   Its CPU times are the only sums over every thread the process had (the kernel adds
 *   each ending thread's into them); faults and I/O bytes are 0 there, and are each
 *   PID record's own thread's: a process's are the sum over its threads' records.
 *
 * So a process's peak RSS is hiwater_rss of the PID record that has AGROUP (the last
 * word on its address space), and its name the comm of the record with pid == tgid
 * (the leader's). Before version 12 there is neither AGROUP nor ac_tgid: the leader's
 * record is the best there is, and misses growth after the leader's own exit.
 * Kernel threads have no address space and report 0; so does a kernel without
 * CONFIG_TASK_XACCT. */
#ifndef RSW_SOURCE_TASKSTATS_H
#define RSW_SOURCE_TASKSTATS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/taskstats.h>

enum taskstats_scope {
	TASKSTATS_PID = 1,	/* one thread's exit (an AGGR_PID nest) */
	TASKSTATS_TGID = 2,	/* a thread group's sums when it ended (an AGGR_TGID nest) */
};

/* Which parts of struct taskstats the kernel's record was long enough to hold (the
 * kernel's struct may be older or newer than <linux/taskstats.h>). A field outside
 * them reads 0; one inside may still be 0 where the kernel leaves it so (TGID). */
#define TASKSTATS_HAVE_BASIC	0x1	/* comm, ppid, uid, etime, utime, stime, faults */
#define TASKSTATS_HAVE_XACCT	0x2	/* hiwater_rss, hiwater_vm */
#define TASKSTATS_HAVE_TGID	0x4	/* ac_tgid: tgid of a PID record */
#define TASKSTATS_HAVE_IO	0x8	/* read_bytes, write_bytes */
#define TASKSTATS_HAVE_RUN	0x10	/* run_ns (CONFIG_TASK_DELAY_ACCT fills it) */

/* One record. pid is the nest's id: the thread's for a PID record, the group's for a
 * TGID record; ids are in the initial pid namespace. */
struct taskstats_exit {
	enum taskstats_scope scope;
	pid_t pid;
	pid_t tgid;		/* PID: ac_tgid, 0 without HAVE_TGID; TGID: == pid */
	pid_t ppid;		/* the parent process when the thread exited */
	uint32_t uid;
	unsigned version;	/* the struct's version as the kernel wrote it */
	unsigned have;		/* TASKSTATS_HAVE_* */
	uint32_t exit_code;	/* a wait status, as waitpid() gives it: 0x0300 is exit(3) */
	uint8_t flags;		/* ac_flag: AFORK, ASU, ACORE, AXSIG, AGROUP (<linux/acct.h>) */
	char comm[TS_COMM_LEN + 1];	/* NUL-terminated; may hold any other byte */
	uint64_t hiwater_rss;	/* bytes: peak resident set of the address space */
	uint64_t hiwater_vm;	/* bytes: peak virtual size */
	uint64_t etime_us;	/* how long the thread lived */
	uint64_t utime_us, stime_us;	/* as the tick sampled them (see taskstats_cpu_ns) */
	uint64_t run_ns;	/* time on a CPU, measured by the scheduler (cpu_run_virtual_total) */
	uint64_t minflt, majflt;
	/* Bytes this thread caused to be read from and written to storage (as in
	 * /proc/PID/io), rounded down to whole KiB by the kernel; 0 in a TGID record and
	 * on a kernel without CONFIG_TASK_IO_ACCOUNTING. */
	uint64_t read_bytes, write_bytes;
	/* When taskstats_drain read the record's datagram (CLOCK_MONOTONIC ns); 0 from
	 * taskstats_parse. The record holds no time of the exit, and a netlink socket
	 * gives no arrival time (SO_TIMESTAMPNS adds nothing to its messages, 6.18): a
	 * caller that reads soon after the exit learns when it was, within its delay. */
	int64_t read_ns;
};

/* Parses the netlink messages in buf as they come from the listener socket; family is
 * the TASKSTATS family id (taskstats_family_parse). Messages of other types, acks and
 * NLMSG_DONE are skipped. Writes at most max records to out, in the order of the
 * message, and returns how many there were (more than max: the rest were dropped).
 * Returns -EINVAL when a message, attribute or record is truncated or malformed, or
 * the error an NLMSG_ERROR message carries (-EPERM, ...); the records before it are
 * in out. Every length is checked against len; nothing past buf + len is read. */
int taskstats_parse(const void *buf, size_t len, uint16_t family,
		    struct taskstats_exit *out, size_t max);

/* The record's CPU time in user and kernel mode, in ns, as getrusage() and
 * /proc/PID/stat give it: utime_us and stime_us are samples at the timer tick (a 1 s
 * busy loop may read 10% off), so where the record has the scheduler's own measure
 * (run_ns) that total is split between user and kernel mode in the ratio of the
 * samples, as the kernel does for those interfaces. Pure. */
void taskstats_cpu_ns(const struct taskstats_exit *x, uint64_t *user_ns, uint64_t *sys_ns);

/* Parses the reply to CTRL_CMD_GETFAMILY for "TASKSTATS". Returns 0 with *id set;
 * -ENOENT when the reply does not name that family (or the kernel answered ENOENT:
 * no CONFIG_TASKSTATS); another -errno the kernel answered; -EINVAL when malformed. */
int taskstats_family_parse(const void *buf, size_t len, uint16_t *id);

/* A listener. Invariant: fd == -1 exactly when closed; then buf and cpus are NULL. */
struct taskstats_listener {
	int fd;
	uint16_t family;	/* TASKSTATS family id */
	uint32_t seq;		/* of the last request sent */
	char *cpus;		/* the cpu list registered ("0-63"), sent again to deregister */
	unsigned char *buf;	/* requests and replies; in a drain, slots of one datagram */
	size_t cap;
	uint32_t drops;		/* the socket's drop counter at the last drain */
	int have_drops;		/* whether SO_MEMINFO gives that counter */
	uint64_t lost;		/* exits lost since open */
};

#define TASKSTATS_LISTENER_INIT { -1, 0, 0, NULL, NULL, 0, 0, 0, 0 }

/* Opens a socket, resolves the family and registers for the exits of every possible
 * CPU (/sys/devices/system/cpu/possible under the sysroot). Returns 0 or -errno: EPERM
 * without CAP_NET_ADMIN, EINVAL outside the initial pid or user namespace, ENOENT
 * without CONFIG_TASKSTATS. Records arrive for exits after this returns; one during
 * the call may be missed. On failure *l is closed (taskstats_close is harmless). */
int taskstats_open(struct taskstats_listener *l);

/* Lets through only the exits of process pid (its threads' too): a socket filter drops
 * every other exit of the host in the kernel, before it is queued, so that a listener
 * watching one process costs nothing when others end. Returns 0 or -errno. */
int taskstats_only(struct taskstats_listener *l, pid_t pid);

/* The socket to poll for POLLIN; -1 when closed or l is NULL. */
int taskstats_fd(const struct taskstats_listener *l);

/* Reads every datagram waiting, without blocking, and calls cb for each record, in
 * the order the kernel sent them. Returns how many exits were lost since the last
 * drain (the socket buffer overflowed, or a datagram could not be parsed), 0 when
 * none; l->lost keeps the running total. Returns -errno only when the socket fails
 * (EBADF when closed). A loss does not say whose exits they were: the caller keeps its
 * sampled figures for processes whose record never came. */
int taskstats_drain(struct taskstats_listener *l,
		    void (*cb)(void *ctx, const struct taskstats_exit *rec), void *ctx);
/* The same, reading at most max datagrams (0: every one waiting), so that a caller
 * that keeps the records knows how many may come: at most TASKSTATS_DGRAM_RECS per
 * datagram (more count as lost). */
#define TASKSTATS_DGRAM_RECS 8
int taskstats_drain_some(struct taskstats_listener *l, size_t max,
			 void (*cb)(void *ctx, const struct taskstats_exit *rec), void *ctx);

/* Deregisters and closes. Accepts NULL and a closed listener. */
void taskstats_close(struct taskstats_listener *l);

#endif
