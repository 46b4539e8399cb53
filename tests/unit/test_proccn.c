/* The proc connector: the parser on constructed netlink messages, and the live socket
 * (a fork and an exit of our own child must arrive). */
#include "testutil.h"

#include <errno.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>

#include "source/proccn.h"

/* Appends one connector message carrying a proc_event to buf at *off. */
static void put_msg(unsigned char *buf, size_t *off, uint32_t what, const void *data,
		    size_t dlen, uint32_t idx)
{
	struct nlmsghdr h;
	struct cn_msg cn;
	struct proc_event ev;
	size_t evlen = offsetof(struct proc_event, event_data) + dlen;
	memset(&h, 0, sizeof(h));
	memset(&cn, 0, sizeof(cn));
	memset(&ev, 0, sizeof(ev));
	h.nlmsg_type = NLMSG_DONE;
	h.nlmsg_len = (uint32_t)(NLMSG_HDRLEN + sizeof(cn) + evlen);
	cn.id.idx = idx;
	cn.id.val = CN_VAL_PROC;
	cn.len = (uint16_t)evlen;
	ev.what = what;
	memcpy(buf + *off, &h, sizeof(h));
	memcpy(buf + *off + NLMSG_HDRLEN, &cn, sizeof(cn));
	memcpy(buf + *off + NLMSG_HDRLEN + sizeof(cn), &ev, offsetof(struct proc_event, event_data));
	memcpy(buf + *off + NLMSG_HDRLEN + sizeof(cn) + offsetof(struct proc_event, event_data), data, dlen);
	*off += NLMSG_ALIGN(h.nlmsg_len);
}

static void put_fork(unsigned char *buf, size_t *off, int ppid, int ptgid, int pid, int tgid)
{
	struct fork_proc_event f = { ppid, ptgid, pid, tgid };
	put_msg(buf, off, PROC_EVENT_FORK, &f, sizeof(f), CN_IDX_PROC);
}

static void put_exit(unsigned char *buf, size_t *off, int pid, int tgid)
{
	struct exit_proc_event x;
	memset(&x, 0, sizeof(x));
	x.process_pid = pid;
	x.process_tgid = tgid;
	x.exit_code = 9;
	put_msg(buf, off, PROC_EVENT_EXIT, &x, sizeof(x), CN_IDX_PROC);
}

static void test_parse_fork_exit(void **state)
{
	(void)state;
	unsigned char buf[1024];
	size_t off = 0;
	struct proccn_event ev[8];
	memset(buf, 0, sizeof(buf));
	put_fork(buf, &off, 100, 100, 200, 200);	/* a process */
	put_fork(buf, &off, 200, 200, 201, 200);	/* a thread of it */
	struct exec_proc_event x = { 200, 200 };
	put_msg(buf, &off, PROC_EVENT_EXEC, &x, sizeof(x), CN_IDX_PROC);
	struct id_proc_event u = { 200, 200, { 0 }, { 0 } };
	put_msg(buf, &off, PROC_EVENT_UID, &u, sizeof(u), CN_IDX_PROC);	/* skipped */
	put_exit(buf, &off, 201, 200);
	assert_int_equal(proccn_parse(buf, off, ev, 8), 4);
	assert_int_equal(ev[0].kind, PROCCN_FORK);
	assert_int_equal(ev[0].ptgid, 100);
	assert_int_equal(ev[0].pid, 200);
	assert_int_equal(ev[0].tgid, 200);
	assert_int_equal(ev[1].kind, PROCCN_FORK);
	assert_int_equal(ev[1].pid, 201);
	assert_int_equal(ev[1].tgid, 200);
	assert_int_equal(ev[1].ptgid, 200);
	assert_int_equal(ev[2].kind, PROCCN_EXEC);
	assert_int_equal(ev[2].pid, 200);
	assert_int_equal(ev[2].tgid, 200);
	assert_int_equal(ev[3].kind, PROCCN_EXIT);
	assert_int_equal(ev[3].pid, 201);
	assert_int_equal(ev[3].tgid, 200);
	/* more events than room: the count says so, out holds the first */
	assert_int_equal(proccn_parse(buf, off, ev, 1), 4);
	assert_int_equal(ev[0].pid, 200);
	/* nothing at all */
	assert_int_equal(proccn_parse(buf, 0, ev, 8), 0);
}

static void test_parse_other_and_bad(void **state)
{
	(void)state;
	unsigned char buf[512];
	size_t off = 0;
	struct proccn_event ev[4];
	struct fork_proc_event f = { 1, 1, 2, 2 };
	memset(buf, 0, sizeof(buf));
	/* another connector index (not proc events): skipped */
	put_msg(buf, &off, PROC_EVENT_FORK, &f, sizeof(f), CN_IDX_PROC + 1);
	assert_int_equal(proccn_parse(buf, off, ev, 4), 0);
	/* a fork event cut short: cn.len covers less than the fork data */
	off = 0;
	put_msg(buf, &off, PROC_EVENT_FORK, &f, 8, CN_IDX_PROC);
	assert_int_equal(proccn_parse(buf, off, ev, 4), -EINVAL);
	/* nlmsg_len past the end of the buffer */
	off = 0;
	put_fork(buf, &off, 1, 1, 2, 2);
	assert_int_equal(proccn_parse(buf, off - 4, ev, 4), -EINVAL);
	/* nlmsg_len smaller than a header */
	struct nlmsghdr h = { 4, NLMSG_DONE, 0, 0, 0 };
	memcpy(buf, &h, sizeof(h));
	assert_int_equal(proccn_parse(buf, sizeof(h), ev, 4), -EINVAL);
	/* cn.len past the message */
	off = 0;
	put_fork(buf, &off, 1, 1, 2, 2);
	struct cn_msg cn;
	memcpy(&cn, buf + NLMSG_HDRLEN, sizeof(cn));
	cn.len = 200;
	memcpy(buf + NLMSG_HDRLEN, &cn, sizeof(cn));
	assert_int_equal(proccn_parse(buf, off, ev, 4), -EINVAL);
	/* a tail shorter than a header after a good message is ignored */
	off = 0;
	put_fork(buf, &off, 1, 1, 2, 2);
	assert_int_equal(proccn_parse(buf, off + 3, ev, 4), 1);
	assert_int_equal(ev[0].pid, 2);
}

struct seen { pid_t child; int fork, exec, exit; };

static void on_event(void *ctx, const struct proccn_event *ev)
{
	struct seen *s = ctx;
	if (ev->kind == PROCCN_FORK && ev->pid == s->child && ev->tgid == s->child &&
	    ev->ptgid == getpid())
		s->fork = 1;
	if (ev->kind == PROCCN_EXEC && ev->pid == s->child && ev->tgid == s->child)
		s->exec = 1;
	if (ev->kind == PROCCN_EXIT && ev->pid == s->child && ev->tgid == s->child)
		s->exit = 1;
}

static void test_live(void **state)
{
	(void)state;
	struct proccn c;
	int e = proccn_open(&c);
	if (e < 0)
		skip();	/* no connector on this kernel */
	struct seen s = { 0, 0, 0, 0 };
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	s.child = pid;
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	/* the events are queued before waitpid returns; drain with a bounded deadline */
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		e = proccn_drain(&c, on_event, &s);
		assert_true(e == 0 || e == -ENOBUFS);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (!(s.fork && s.exec && s.exit) && t.tv_sec - t0.tv_sec < 5);
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_true(s.fork);
	assert_true(s.exec);
	assert_true(s.exit);
	proccn_close(&c);
	proccn_close(&c);	/* twice is harmless */
}

/* proccn_forks_only: a child's fork comes, and its exec and exit do not (they were
 * queued before waitpid returned, so a drain after the fork finds them or none). */
static void test_forks_only(void **state)
{
	(void)state;
	struct proccn c;
	if (proccn_open(&c) < 0)
		skip();
	assert_int_equal(proccn_forks_only(&c), 0);
	struct seen s = { 0, 0, 0, 0 };
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	s.child = pid;
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		int e = proccn_drain(&c, on_event, &s);
		assert_true(e == 0 || e == -ENOBUFS);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (!s.fork && t.tv_sec - t0.tv_sec < 5);
	assert_true(proccn_drain(&c, on_event, &s) >= -ENOBUFS);
	assert_true(s.fork);
	assert_false(s.exec);
	assert_false(s.exit);
	proccn_close(&c);
	struct proccn closed = { .fd = -1 };
	assert_int_equal(proccn_forks_only(&closed), -EBADF);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_fork_exit),
		cmocka_unit_test(test_parse_other_and_bad),
		cmocka_unit_test(test_live),
		cmocka_unit_test(test_forks_only),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
