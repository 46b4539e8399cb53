/* Taskstats exit records: the parser on bytes captured from this kernel (a process
 * with one thread, one with three) and on every truncation and corruption of them,
 * constructed messages for what the captures lack, and the live listener (a child's
 * 100 MiB peak must arrive).
 *
 * Run with --capture DIR (as root) to capture the fixtures again, and --dump FILE
 * FAMILY to print a capture's records: see tests/fixtures/README.md. */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/acct.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>

#include "source/taskstats.h"

#define FIX "tests/fixtures/taskstats/"

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Touches n bytes of fresh anonymous memory; the mapping is kept. */
static void touch(size_t n)
{
	char *m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		_exit(100);
	for (size_t k = 0; k < n; k += 4096)
		m[k] = 1;
}

/* ---- the parser on the captures ---- */

/* The captures' family id and processes (see tests/fixtures/README.md). */
#define CAP_FAMILY 31
#define CAP_PARENT 27270
#define CAP_ONE 27272
#define CAP_MAIN 27277
#define CAP_A 27280
#define CAP_B 27281

static void test_family_capture(void **state)
{
	(void)state;
	size_t len;
	char *buf = fixture(FIX "family.bin", &len);
	uint16_t id = 0;
	assert_int_equal(taskstats_family_parse(buf, len, &id), 0);
	assert_int_equal(id, CAP_FAMILY);
	/* every shorter prefix is one message cut short, or nothing at all */
	for (size_t n = 0; n < len; n++) {
		char *cut = malloc(n ? n : 1);
		memcpy(cut, buf, n);
		id = 7;
		assert_int_equal(taskstats_family_parse(cut, n, &id), n ? -EINVAL : -ENOENT);
		assert_int_equal(id, 7);
		free(cut);
	}
	free(buf);
}

static void test_single_capture(void **state)
{
	(void)state;
	size_t len;
	char *buf = fixture(FIX "exit-single.bin", &len);
	struct taskstats_exit r[4];
	assert_int_equal(taskstats_parse(buf, len, CAP_FAMILY, r, 4), 1);
	assert_int_equal(r[0].scope, TASKSTATS_PID);
	assert_int_equal(r[0].pid, CAP_ONE);
	assert_int_equal(r[0].tgid, CAP_ONE);
	assert_int_equal(r[0].ppid, CAP_PARENT);
	assert_int_equal(r[0].uid, 0);
	assert_int_equal(r[0].version, 16);
	assert_int_equal(r[0].have, TASKSTATS_HAVE_BASIC | TASKSTATS_HAVE_XACCT | TASKSTATS_HAVE_IO |
					    TASKSTATS_HAVE_TGID | TASKSTATS_HAVE_RUN);
	assert_string_equal(r[0].comm, "rsw-ts-one");
	assert_true(WIFEXITED(r[0].exit_code) && WEXITSTATUS(r[0].exit_code) == 3);
	assert_int_equal(r[0].flags, AGROUP | AFORK);
	/* 8 MiB touched, on top of the test binary's own pages */
	assert_int_equal(r[0].hiwater_rss, 9000 * 1024);
	assert_true(r[0].hiwater_vm >= r[0].hiwater_rss);
	assert_int_equal(r[0].minflt, 2079);
	assert_int_equal(r[0].majflt, 0);
	/* it read and wrote nothing on storage */
	assert_int_equal(r[0].read_bytes, 0);
	assert_int_equal(r[0].write_bytes, 0);
	/* no tick came while it ran: the scheduler's time, all counted as user time */
	uint64_t u, k;
	assert_int_equal(r[0].utime_us + r[0].stime_us, 0);
	assert_int_equal(r[0].run_ns, 2979439);
	taskstats_cpu_ns(&r[0], &u, &k);
	assert_int_equal(u, 2979439);
	assert_int_equal(k, 0);
	/* another family's messages are not records */
	assert_int_equal(taskstats_parse(buf, len, CAP_FAMILY + 1, r, 4), 0);
	assert_int_equal(taskstats_parse(buf, len, 0, r, 4), 0);
	free(buf);
}

static void test_threads_capture(void **state)
{
	(void)state;
	size_t len;
	char *buf = fixture(FIX "exit-threads.bin", &len);
	struct taskstats_exit r[4];
	assert_int_equal(taskstats_parse(buf, len, CAP_FAMILY, r, 4), 4);
	/* thread a ended on its own: no exit code, not the last */
	assert_int_equal(r[0].scope, TASKSTATS_PID);
	assert_int_equal(r[0].pid, CAP_A);
	assert_int_equal(r[0].tgid, CAP_MAIN);
	assert_string_equal(r[0].comm, "rsw-ts-a");
	assert_int_equal(r[0].exit_code, 0);
	assert_int_equal(r[0].flags & AGROUP, 0);
	/* the leader called exit(5) */
	assert_int_equal(r[1].pid, CAP_MAIN);
	assert_int_equal(r[1].tgid, CAP_MAIN);
	assert_string_equal(r[1].comm, "rsw-ts-main");
	assert_int_equal(r[1].exit_code, 5 << 8);
	assert_int_equal(r[1].flags & AGROUP, 0);
	/* thread b, taken by that exit, was the last: AGROUP, the process's status */
	assert_int_equal(r[2].pid, CAP_B);
	assert_int_equal(r[2].tgid, CAP_MAIN);
	assert_string_equal(r[2].comm, "rsw-ts-b");
	assert_int_equal(r[2].exit_code, 5 << 8);
	assert_int_equal(r[2].flags, AGROUP | AXSIG);
	/* the address space's peak is in every thread's record */
	assert_int_equal(r[0].hiwater_rss, 7616 * 1024);
	assert_int_equal(r[1].hiwater_rss, r[0].hiwater_rss);
	assert_int_equal(r[2].hiwater_rss, r[0].hiwater_rss);
	/* the group's record, in b's message: totals only, no peak, no name */
	assert_int_equal(r[3].scope, TASKSTATS_TGID);
	assert_int_equal(r[3].pid, CAP_MAIN);
	assert_int_equal(r[3].tgid, CAP_MAIN);
	assert_int_equal(r[3].version, 16);
	assert_int_equal(r[3].hiwater_rss, 0);
	assert_int_equal(r[3].exit_code, 0);
	assert_int_equal(r[3].flags, 0);
	assert_string_equal(r[3].comm, "");
	assert_int_equal(r[3].stime_us, r[0].stime_us + r[1].stime_us + r[2].stime_us);
	assert_int_equal(r[3].utime_us, r[0].utime_us + r[1].utime_us + r[2].utime_us);
	assert_true(r[3].stime_us > 0);
	/* faults are each thread's own, and none in the group's record */
	assert_int_equal(r[0].minflt, 516);
	assert_int_equal(r[1].minflt, 1068);
	assert_int_equal(r[3].minflt, 0);
	assert_int_equal(r[3].read_bytes, 0);
	/* CPU as the scheduler measured it: the main thread's and the group's all in the
	 * kernel (the only samples were), the tick-less thread's all in user mode */
	uint64_t u, k;
	assert_true(r[3].have & TASKSTATS_HAVE_RUN);
	assert_int_equal(r[3].run_ns, r[0].run_ns + r[1].run_ns + r[2].run_ns);
	taskstats_cpu_ns(&r[3], &u, &k);
	assert_int_equal(u, 0);
	assert_int_equal(k, 2084642);
	taskstats_cpu_ns(&r[1], &u, &k);
	assert_int_equal(u + k, r[1].run_ns);
	/* less room than records: the count says so, out holds the first */
	memset(r, 0, sizeof(r));
	assert_int_equal(taskstats_parse(buf, len, CAP_FAMILY, r, 2), 4);
	assert_int_equal(r[1].pid, CAP_MAIN);
	assert_int_equal(r[2].pid, 0);
	free(buf);
}

/* Every prefix of a capture: a whole number of messages parses to their records;
 * anything else is rejected. Each prefix lies in a buffer of exactly its length, so
 * that a read past it is an ASan error. */
static void check_prefixes(const char *path, const size_t *ends, const int *counts, size_t nends)
{
	size_t len;
	char *buf = fixture(path, &len);
	struct taskstats_exit r[4];
	assert_int_equal(ends[nends - 1], len);
	for (size_t n = 0; n <= len; n++) {
		char *cut = malloc(n ? n : 1);
		memcpy(cut, buf, n);
		int want = n == 0 ? 0 : -EINVAL;
		for (size_t k = 0; k < nends; k++)
			if (n == ends[k])
				want = counts[k];
		int got = taskstats_parse(cut, n, CAP_FAMILY, r, 4);
		if (got != want)
			fail_msg("%s cut at %zu: %d, expected %d", path, n, got, want);
		free(cut);
	}
	free(buf);
}

static void test_truncated(void **state)
{
	(void)state;
	static const size_t one_end[] = { 596 };
	static const int one_n[] = { 1 };
	static const size_t thr_end[] = { 596, 1192, 2364 };
	static const int thr_n[] = { 1, 2, 4 };
	check_prefixes(FIX "exit-single.bin", one_end, one_n, 1);
	check_prefixes(FIX "exit-threads.bin", thr_end, thr_n, 3);
}

/* Every byte of the captures changed in several ways: the parser must return, and
 * what it returns must be sane. */
static void test_corrupt(void **state)
{
	(void)state;
	static const char *const files[] = { FIX "exit-single.bin", FIX "exit-threads.bin" };
	static const unsigned char xors[] = { 0x01, 0x04, 0x80, 0xff };
	struct taskstats_exit r[4];
	for (size_t f = 0; f < 2; f++) {
		size_t len;
		char *buf = fixture(files[f], &len);
		unsigned char *c = malloc(len);
		for (size_t i = 0; i < len; i++) {
			for (size_t x = 0; x < sizeof(xors); x++) {
				memcpy(c, buf, len);
				c[i] ^= xors[x];
				int n = taskstats_parse(c, len, CAP_FAMILY, r, 4);
				if (n > 4)
					fail_msg("%s byte %zu ^%#x: %d records", files[f], i, xors[x], n);
				for (int k = 0; k < n; k++)
					if (r[k].pid <= 0 || strlen(r[k].comm) > TS_COMM_LEN)
						fail_msg("%s byte %zu: bad record", files[f], i);
			}
		}
		free(c);
		free(buf);
	}
}

/* ---- constructed messages, for what the captures lack ---- */

struct mb {
	unsigned char b[4096];
	size_t len;
	size_t msg;		/* where the open message starts */
	size_t nest;		/* where the open nest starts */
};

static void mb_msg(struct mb *m, uint16_t type, uint8_t cmd)
{
	struct nlmsghdr h;
	struct genlmsghdr g;
	memset(&h, 0, sizeof(h));
	memset(&g, 0, sizeof(g));
	m->msg = m->len;
	h.nlmsg_type = type;
	g.cmd = cmd;
	g.version = 1;
	memcpy(m->b + m->len, &h, sizeof(h));
	memcpy(m->b + m->len + NLMSG_HDRLEN, &g, sizeof(g));
	m->len += NLMSG_HDRLEN + GENL_HDRLEN;
}

static void mb_end(struct mb *m)
{
	uint32_t l = (uint32_t)(m->len - m->msg);
	memcpy(m->b + m->msg, &l, sizeof(l));
	m->len = m->msg + NLMSG_ALIGN(l);
}

static void mb_attr(struct mb *m, uint16_t type, const void *data, size_t dlen)
{
	struct nlattr a = { (uint16_t)(NLA_HDRLEN + dlen), type };
	memcpy(m->b + m->len, &a, sizeof(a));
	if (dlen)
		memcpy(m->b + m->len + NLA_HDRLEN, data, dlen);
	memset(m->b + m->len + NLA_HDRLEN + dlen, 0, NLA_ALIGN(dlen) - dlen);
	m->len += NLA_HDRLEN + NLA_ALIGN(dlen);
}

static void mb_u32(struct mb *m, uint16_t type, uint32_t v)
{
	mb_attr(m, type, &v, sizeof(v));
}

static void mb_nest(struct mb *m, uint16_t type)
{
	m->nest = m->len;
	mb_attr(m, type, NULL, 0);
}

static void mb_nest_end(struct mb *m)
{
	uint16_t l = (uint16_t)(m->len - m->nest);
	memcpy(m->b + m->nest, &l, sizeof(l));
}

static struct taskstats stats_of(uint32_t pid, uint32_t tgid, uint64_t rss_kib)
{
	struct taskstats ts;
	memset(&ts, 0, sizeof(ts));
	ts.version = TASKSTATS_VERSION;
	ts.ac_exitcode = 9;	/* killed by SIGKILL */
	ts.ac_flag = AXSIG | AGROUP;
	memcpy(ts.ac_comm, "my) (app x", 10);
	ts.ac_pid = pid;
	ts.ac_ppid = 1;
	ts.ac_uid = 1000;
	ts.ac_utime = 11;
	ts.ac_stime = 22;
	ts.ac_minflt = 333;
	ts.ac_majflt = 44;
	ts.read_bytes = 5 << 10;
	ts.write_bytes = 3ULL << 32;
	ts.read_char = 1;	/* not storage: not kept */
	ts.hiwater_rss = rss_kib;
	ts.hiwater_vm = rss_kib * 2;
	ts.ac_tgid = tgid;
	return ts;
}

/* One exit message: an AGGR_PID nest holding the id and slen bytes of ts. */
static void mb_exit(struct mb *m, uint16_t family, uint32_t pid, const struct taskstats *ts, size_t slen)
{
	mb_msg(m, family, TASKSTATS_CMD_NEW);
	mb_nest(m, TASKSTATS_TYPE_AGGR_PID);
	mb_u32(m, TASKSTATS_TYPE_PID, pid);
	mb_attr(m, TASKSTATS_TYPE_STATS, ts, slen);
	mb_nest_end(m);
	mb_end(m);
}

static void mb_error(struct mb *m, int32_t err)
{
	struct nlmsghdr h, orig;
	memset(&h, 0, sizeof(h));
	memset(&orig, 0, sizeof(orig));
	h.nlmsg_len = NLMSG_HDRLEN + sizeof(err) + sizeof(orig);
	h.nlmsg_type = NLMSG_ERROR;
	memcpy(m->b + m->len, &h, sizeof(h));
	memcpy(m->b + m->len + NLMSG_HDRLEN, &err, sizeof(err));
	memcpy(m->b + m->len + NLMSG_HDRLEN + sizeof(err), &orig, sizeof(orig));
	m->len += h.nlmsg_len;
}

#define FAM 40

static void test_constructed(void **state)
{
	(void)state;
	struct mb m = { .len = 0 };
	struct taskstats_exit r[4];
	struct taskstats ts = stats_of(500, 500, 1ULL << 20);
	struct nlmsghdr done = { NLMSG_HDRLEN, NLMSG_DONE, 0, 0, 0 };

	/* an ack, NLMSG_DONE, another family and another command are skipped */
	mb_error(&m, 0);
	memcpy(m.b + m.len, &done, sizeof(done));
	m.len += NLMSG_HDRLEN;
	mb_exit(&m, FAM + 1, 77, &ts, sizeof(ts));
	mb_msg(&m, FAM, TASKSTATS_CMD_GET);
	mb_end(&m);
	mb_exit(&m, FAM, 500, &ts, sizeof(ts));
	assert_int_equal(taskstats_parse(m.b, m.len, FAM, r, 4), 1);
	assert_int_equal(r[0].pid, 500);
	assert_int_equal(r[0].tgid, 500);
	assert_int_equal(r[0].uid, 1000);
	assert_string_equal(r[0].comm, "my) (app x");
	assert_int_equal(r[0].hiwater_rss, 1ULL << 30);
	assert_int_equal(r[0].hiwater_vm, 2ULL << 30);
	assert_true(WIFSIGNALED(r[0].exit_code) && WTERMSIG(r[0].exit_code) == SIGKILL);
	assert_int_equal(r[0].have, TASKSTATS_HAVE_BASIC | TASKSTATS_HAVE_XACCT | TASKSTATS_HAVE_IO |
				    TASKSTATS_HAVE_TGID);
	assert_int_equal(r[0].utime_us, 11);
	assert_int_equal(r[0].stime_us, 22);
	assert_int_equal(r[0].minflt, 333);
	assert_int_equal(r[0].majflt, 44);
	assert_int_equal(r[0].read_bytes, 5 << 10);
	assert_int_equal(r[0].write_bytes, 3ULL << 32);
	/* without delay accounting: the samples as they are */
	uint64_t u, k;
	assert_false(r[0].have & TASKSTATS_HAVE_RUN);
	taskstats_cpu_ns(&r[0], &u, &k);
	assert_int_equal(u, 11000);
	assert_int_equal(k, 22000);
	/* with it: 3 us on a CPU, split 1:2 as the samples were */
	m.len = 0;
	struct taskstats run = ts;
	run.cpu_count = 4;
	run.cpu_run_virtual_total = 3000;
	mb_exit(&m, FAM, 500, &run, sizeof(run));
	assert_int_equal(taskstats_parse(m.b, m.len, FAM, r, 4), 1);
	assert_true(r[0].have & TASKSTATS_HAVE_RUN);
	taskstats_cpu_ns(&r[0], &u, &k);
	assert_int_equal(u, 1000);
	assert_int_equal(k, 2000);
	/* no kernel sample: all user; no user sample: all kernel */
	r[0].stime_us = 0;
	taskstats_cpu_ns(&r[0], &u, &k);
	assert_true(u == 3000 && k == 0);
	r[0].stime_us = 5;
	r[0].utime_us = 0;
	taskstats_cpu_ns(&r[0], &u, &k);
	assert_true(u == 0 && k == 3000);
	/* large figures do not overflow */
	r[0].utime_us = r[0].stime_us = UINT64_MAX / 1000;
	r[0].run_ns = UINT64_MAX;
	taskstats_cpu_ns(&r[0], &u, &k);
	assert_int_equal(u + k, UINT64_MAX);

	/* an older kernel's shorter struct: what fits is read, the rest is absent */
	m.len = 0;
	mb_exit(&m, FAM, 500, &ts, offsetof(struct taskstats, cancelled_write_bytes));
	assert_int_equal(taskstats_parse(m.b, m.len, FAM, r, 4), 1);
	assert_int_equal(r[0].have, TASKSTATS_HAVE_BASIC | TASKSTATS_HAVE_XACCT | TASKSTATS_HAVE_IO);
	assert_int_equal(r[0].write_bytes, 3ULL << 32);
	m.len = 0;
	mb_exit(&m, FAM, 500, &ts, offsetof(struct taskstats, write_bytes));
	assert_int_equal(taskstats_parse(m.b, m.len, FAM, r, 4), 1);
	assert_int_equal(r[0].have, TASKSTATS_HAVE_BASIC | TASKSTATS_HAVE_XACCT);
	assert_int_equal(r[0].read_bytes, 0);
	assert_int_equal(r[0].write_bytes, 0);
	m.len = 0;
	mb_exit(&m, FAM, 500, &ts, offsetof(struct taskstats, read_char));
	assert_int_equal(taskstats_parse(m.b, m.len, FAM, r, 4), 1);
	assert_int_equal(r[0].have, TASKSTATS_HAVE_BASIC | TASKSTATS_HAVE_XACCT);
	assert_int_equal(r[0].tgid, 0);
	assert_int_equal(r[0].hiwater_rss, 1ULL << 30);
	m.len = 0;
	mb_exit(&m, FAM, 500, &ts, offsetof(struct taskstats, ac_comm));
	assert_int_equal(taskstats_parse(m.b, m.len, FAM, r, 4), 1);
	assert_int_equal(r[0].have, 0);
	assert_int_equal(r[0].flags, AXSIG | AGROUP);
	assert_string_equal(r[0].comm, "");
	/* too short for the flags: not a record */
	m.len = 0;
	mb_exit(&m, FAM, 500, &ts, offsetof(struct taskstats, ac_flag));
	assert_int_equal(taskstats_parse(m.b, m.len, FAM, r, 4), -EINVAL);

	/* a pad attribute before the struct, NLA_F_NESTED on the nest, the struct
	 * before the id: all as good */
	m.len = 0;
	mb_msg(&m, FAM, TASKSTATS_CMD_NEW);
	mb_nest(&m, TASKSTATS_TYPE_AGGR_TGID | NLA_F_NESTED);
	mb_attr(&m, TASKSTATS_TYPE_NULL, NULL, 0);
	mb_attr(&m, TASKSTATS_TYPE_STATS, &ts, sizeof(ts));
	mb_u32(&m, TASKSTATS_TYPE_TGID, 600);
	mb_nest_end(&m);
	mb_end(&m);
	assert_int_equal(taskstats_parse(m.b, m.len, FAM, r, 4), 1);
	assert_int_equal(r[0].scope, TASKSTATS_TGID);
	assert_int_equal(r[0].pid, 600);
	assert_int_equal(r[0].tgid, 600);

	/* the kernel's error: returned, with the records before it */
	m.len = 0;
	mb_exit(&m, FAM, 500, &ts, sizeof(ts));
	mb_error(&m, -EPERM);
	assert_int_equal(taskstats_parse(m.b, m.len, FAM, r, 4), -EPERM);
	assert_int_equal(r[0].pid, 500);
	m.len = 0;
	mb_error(&m, 5);	/* no errno */
	assert_int_equal(taskstats_parse(m.b, m.len, FAM, r, 4), -EINVAL);
}

/* A last message without its padding is whole; bytes after the last are not. */
static void test_padding(void **state)
{
	(void)state;
	struct mb m = { .len = 0 };
	struct taskstats_exit r[2];
	struct taskstats ts = stats_of(500, 500, 4);
	/* a struct 2 bytes short of alignment, its nest and message lengths unpadded */
	mb_exit(&m, FAM, 500, &ts, sizeof(ts) - 2);
	const size_t nest_at = NLMSG_HDRLEN + GENL_HDRLEN;
	uint32_t ml = (uint32_t)m.len - 2;
	uint16_t nl = (uint16_t)(m.len - nest_at - 2);
	memcpy(m.b, &ml, sizeof(ml));
	memcpy(m.b + nest_at, &nl, sizeof(nl));
	assert_int_equal(taskstats_parse(m.b, m.len, FAM, r, 2), 1);
	assert_int_equal(taskstats_parse(m.b, m.len - 2, FAM, r, 2), 1);
	assert_int_equal(taskstats_parse(m.b, m.len - 3, FAM, r, 2), -EINVAL);
	memset(m.b + m.len, 0, 8);
	assert_int_equal(taskstats_parse(m.b, m.len + 4, FAM, r, 2), -EINVAL);
}

static void test_malformed(void **state)
{
	(void)state;
	struct mb m;
	struct taskstats_exit r[2];
	struct taskstats ts = stats_of(500, 500, 4);
	uint64_t id8 = 500;

	/* a nest without its id, without its struct, with two of either, with an id of
	 * the wrong size, of 0 or past INT32_MAX */
	for (int c = 0; c < 7; c++) {
		m.len = 0;
		mb_msg(&m, FAM, TASKSTATS_CMD_NEW);
		mb_nest(&m, TASKSTATS_TYPE_AGGR_PID);
		if (c != 0 && c != 3 && c != 4 && c != 5 && c != 6)
			mb_u32(&m, TASKSTATS_TYPE_PID, 500);
		if (c == 3)
			mb_attr(&m, TASKSTATS_TYPE_PID, &id8, sizeof(id8));
		if (c == 4)
			mb_u32(&m, TASKSTATS_TYPE_PID, 0);
		if (c == 5)
			mb_u32(&m, TASKSTATS_TYPE_PID, 0x80000000u);
		if (c == 6) {	/* a TGID nest takes a TGID id, not a PID one */
			m.len = 0;
			mb_msg(&m, FAM, TASKSTATS_CMD_NEW);
			mb_nest(&m, TASKSTATS_TYPE_AGGR_TGID);
			mb_u32(&m, TASKSTATS_TYPE_PID, 500);
		}
		if (c != 1)
			mb_attr(&m, TASKSTATS_TYPE_STATS, &ts, sizeof(ts));
		if (c == 2)
			mb_attr(&m, TASKSTATS_TYPE_STATS, &ts, sizeof(ts));
		mb_nest_end(&m);
		mb_end(&m);
		if (taskstats_parse(m.b, m.len, FAM, r, 2) != -EINVAL)
			fail_msg("case %d accepted", c);
	}

	/* an attribute shorter than its header, or longer than its message */
	m.len = 0;
	mb_exit(&m, FAM, 500, &ts, sizeof(ts));
	const size_t nest_at = NLMSG_HDRLEN + GENL_HDRLEN;
	uint16_t bad[] = { 0, 3, (uint16_t)(m.len - nest_at + 4) };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct mb c = m;
		memcpy(c.b + nest_at, &bad[i], sizeof(bad[i]));
		assert_int_equal(taskstats_parse(c.b, c.len, FAM, r, 2), -EINVAL);
	}
	/* nlmsg_len shorter than the headers of a family message, or than a header */
	uint32_t mlen[] = { NLMSG_HDRLEN + 2, 8 };
	for (size_t i = 0; i < 2; i++) {
		struct mb c = m;
		memcpy(c.b, &mlen[i], sizeof(mlen[i]));
		assert_int_equal(taskstats_parse(c.b, c.len, FAM, r, 2), -EINVAL);
	}
	/* figures that cannot be a kernel's */
	ts.hiwater_rss = UINT64_MAX / 512;
	m.len = 0;
	mb_exit(&m, FAM, 500, &ts, sizeof(ts));
	assert_int_equal(taskstats_parse(m.b, m.len, FAM, r, 2), -EINVAL);
	ts = stats_of(500, 0x90000000u, 4);
	m.len = 0;
	mb_exit(&m, FAM, 500, &ts, sizeof(ts));
	assert_int_equal(taskstats_parse(m.b, m.len, FAM, r, 2), -EINVAL);
}

static void test_family_constructed(void **state)
{
	(void)state;
	struct mb m = { .len = 0 };
	uint16_t id = 0, fid = 33, big[2] = { 33, 0 };
	/* the kernel's answer for a family it does not have */
	mb_error(&m, -ENOENT);
	assert_int_equal(taskstats_family_parse(m.b, m.len, &id), -ENOENT);
	/* another family's reply */
	m.len = 0;
	mb_msg(&m, GENL_ID_CTRL, CTRL_CMD_NEWFAMILY);
	mb_attr(&m, CTRL_ATTR_FAMILY_NAME, "nlctrl", 7);
	mb_attr(&m, CTRL_ATTR_FAMILY_ID, &fid, sizeof(fid));
	mb_end(&m);
	assert_int_equal(taskstats_family_parse(m.b, m.len, &id), -ENOENT);
	/* ours, with the id in the wrong size */
	m.len = 0;
	mb_msg(&m, GENL_ID_CTRL, CTRL_CMD_NEWFAMILY);
	mb_attr(&m, CTRL_ATTR_FAMILY_NAME, TASKSTATS_GENL_NAME, sizeof(TASKSTATS_GENL_NAME));
	mb_attr(&m, CTRL_ATTR_FAMILY_ID, big, sizeof(big));
	mb_end(&m);
	assert_int_equal(taskstats_family_parse(m.b, m.len, &id), -EINVAL);
	/* ours, well formed */
	m.len = 0;
	mb_msg(&m, GENL_ID_CTRL, CTRL_CMD_NEWFAMILY);
	mb_attr(&m, CTRL_ATTR_FAMILY_ID, &fid, sizeof(fid));
	mb_attr(&m, CTRL_ATTR_FAMILY_NAME, TASKSTATS_GENL_NAME, sizeof(TASKSTATS_GENL_NAME));
	mb_end(&m);
	assert_int_equal(taskstats_family_parse(m.b, m.len, &id), 0);
	assert_int_equal(id, 33);
}

/* ---- the live listener ---- */

/* Opens l, or skips the test where this process may not listen. */
static void open_or_skip(struct taskstats_listener *l)
{
	int e = taskstats_open(l);
	if (e == -EPERM || e == -EACCES || e == -ENOENT || e == -EINVAL ||
	    e == -EPROTONOSUPPORT)
		skip();
	assert_int_equal(e, 0);
	assert_true(taskstats_fd(l) >= 0);
}

struct seen {
	pid_t pid;
	int found;
	struct taskstats_exit rec;
	int children;	/* records of the test's children with AGROUP */
};

static void on_rec(void *ctx, const struct taskstats_exit *r)
{
	struct seen *s = ctx;
	if (r->scope == TASKSTATS_PID && r->pid == s->pid) {
		s->rec = *r;
		s->found = 1;
	}
	if (r->scope == TASKSTATS_PID && r->ppid == getpid() && (r->flags & AGROUP))
		s->children++;
}

/* Drains until cond holds or ms pass, waking on the socket only. */
static void drain_until(struct taskstats_listener *l, struct seen *s, const int *cond, int ms)
{
	int64_t deadline = now_ms() + ms;
	while (!*cond) {
		int64_t left = deadline - now_ms();
		if (left <= 0)
			break;
		struct pollfd pfd = { taskstats_fd(l), POLLIN, 0 };
		assert_true(poll(&pfd, 1, (int)left) >= 0);
		assert_true(taskstats_drain(l, on_rec, s) >= 0);
	}
}

struct only_seen {
	pid_t pid;
	int others, thread, group;	/* records of other processes, of a thread, its end */
};

static void on_only(void *ctx, const struct taskstats_exit *r)
{
	struct only_seen *os = ctx;
	pid_t tgid = r->tgid ? r->tgid : r->pid;
	if (tgid != os->pid)
		os->others++;
	else if (r->scope == TASKSTATS_PID && r->pid != os->pid)
		os->thread++;
	else if (r->flags & AGROUP)
		os->group = 1;
}

static void test_live(void **state)
{
	(void)state;
	struct taskstats_listener l = TASKSTATS_LISTENER_INIT;
	open_or_skip(&l);
	struct seen s;
	memset(&s, 0, sizeof(s));
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_NAME, "rsw-ts-live");
		touch(100 << 20);
		struct timespec ts = { 0, 5000000 };	/* live ~5 ms, then go */
		nanosleep(&ts, NULL);
		_exit(7);
	}
	s.pid = pid;
	int st;
	struct rusage ru;
	assert_int_equal(wait4(pid, &st, 0, &ru), pid);
	drain_until(&l, &s, &s.found, 10000);
	assert_true(s.found);
	/* a one-thread process without children: its faults are wait4's, exactly */
	assert_int_equal(s.rec.minflt, (uint64_t)ru.ru_minflt);
	assert_int_equal(s.rec.majflt, (uint64_t)ru.ru_majflt);
	assert_true(s.rec.minflt > 0);
	/* its CPU time is wait4's but for the end of its exit after the record: freeing
	 * its 100 MiB (about 8 ms here) */
	uint64_t u, k;
	taskstats_cpu_ns(&s.rec, &u, &k);
	uint64_t ru_ns = (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ULL +
			 (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
	assert_true(s.rec.have & TASKSTATS_HAVE_RUN);
	assert_true(u + k > 0);
	assert_true(u + k <= ru_ns + 2000);
	assert_true(u + k >= ru_ns / 2);
	assert_int_equal(s.rec.tgid, pid);
	assert_int_equal(s.rec.ppid, getpid());
	assert_string_equal(s.rec.comm, "rsw-ts-live");
	assert_true(s.rec.hiwater_rss >= 100ULL << 20);
	assert_true(s.rec.flags & AGROUP);
	assert_int_equal(s.rec.exit_code, (unsigned)st);
	assert_true(WEXITSTATUS(s.rec.exit_code) == 7);
	taskstats_close(&l);
	taskstats_close(&l);	/* twice is harmless */
	taskstats_close(NULL);
	assert_int_equal(taskstats_fd(&l), -1);
	assert_int_equal(taskstats_fd(NULL), -1);
	assert_int_equal(taskstats_drain(&l, on_rec, &s), -EBADF);
	assert_int_equal(taskstats_drain(NULL, on_rec, &s), -EBADF);
}

static void *thread_exit_now(void *arg)
{
	(void)arg;
	return NULL;
}

/* taskstats_only(): the exits of other processes never reach the socket; those of the
 * chosen one do, from a thread of it (matched by its thread group) and at its end. */
static void test_only(void **state)
{
	(void)state;
	struct taskstats_listener l = TASKSTATS_LISTENER_INIT;
	open_or_skip(&l);
	int go[2];
	assert_int_equal(pipe(go), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {	/* waits, starts and joins a thread, then exits 5 */
		char c;
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		pthread_t t;
		if (pthread_create(&t, NULL, thread_exit_now, NULL) != 0 || pthread_join(t, NULL) != 0)
			_exit(1);
		_exit(5);
	}
	close(go[0]);
	assert_int_equal(taskstats_only(&l, pid), 0);
	/* what the host's processes sent before the filter (the child has not begun) */
	struct only_seen before = { pid, 0, 0, 0 };
	assert_true(taskstats_drain(&l, on_only, &before) >= 0);
	/* 20 other processes end: none of them is to be read */
	for (int i = 0; i < 20; i++) {
		pid_t o = fork();
		assert_true(o >= 0);
		if (o == 0)
			_exit(0);
		assert_int_equal(waitpid(o, NULL, 0), o);
	}
	struct only_seen os = { pid, 0, 0, 0 };
	assert_int_equal(write(go[1], "g", 1), 1);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	int64_t deadline = now_ms() + 5000;
	while (!os.group && now_ms() < deadline) {
		struct pollfd pfd = { taskstats_fd(&l), POLLIN, 0 };
		assert_true(poll(&pfd, 1, 100) >= 0);
		assert_true(taskstats_drain(&l, on_only, &os) >= 0);
	}
	close(go[1]);
	assert_int_equal(os.others, 0);
	assert_true(os.thread >= 1);
	assert_true(os.group);
	taskstats_close(&l);
	assert_int_equal(taskstats_only(&l, pid), -EBADF);
}

/* With a receive buffer too small for them, exits are lost, and every one of the
 * children's exits is either seen or counted as lost. */
static void test_lost(void **state)
{
	(void)state;
	enum { N = 64 };
	struct taskstats_listener l = TASKSTATS_LISTENER_INIT;
	open_or_skip(&l);
	int small = 4096;
	assert_int_equal(setsockopt(taskstats_fd(&l), SOL_SOCKET, SO_RCVBUFFORCE, &small,
				    sizeof(small)), 0);
	struct seen s;
	memset(&s, 0, sizeof(s));
	for (int i = 0; i < N; i++) {
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0)
			_exit(0);
	}
	for (int i = 0; i < N; i++)
		assert_true(wait(NULL) > 0);
	int lost = taskstats_drain(&l, on_rec, &s);
	assert_true(lost > 0);
	assert_int_equal(l.lost, (uint64_t)lost);
	assert_true(s.children + lost >= N);
	/* the listener still works afterwards */
	s.pid = fork();
	assert_true(s.pid >= 0);
	if (s.pid == 0)
		_exit(0);
	assert_int_equal(waitpid(s.pid, NULL, 0), s.pid);
	drain_until(&l, &s, &s.found, 10000);
	assert_true(s.found);
	taskstats_close(&l);
}

/* Without CAP_NET_ADMIN the kernel refuses: EPERM. As root, a child drops to nobody. */
static void test_unprivileged(void **state)
{
	(void)state;
	struct taskstats_listener l = TASKSTATS_LISTENER_INIT;
	if (geteuid() != 0) {
		int e = taskstats_open(&l);
		if (e == -ENOENT)
			skip();
		assert_true(e == -EPERM || e == -EACCES);
		assert_int_equal(taskstats_fd(&l), -1);
		return;
	}
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
			_exit(2);
		int e = taskstats_open(&l);
		_exit(e == -EPERM || e == -EACCES ? 0 : e == -ENOENT ? 3 : 1);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	if (WEXITSTATUS(st) == 3)
		skip();
	assert_int_equal(WEXITSTATUS(st), 0);
}

/* ---- capture mode: not a test, writes the fixtures ---- */

static void put_file(const char *dir, const char *name, const void *buf, size_t len)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f) != 0) {
		fprintf(stderr, "capture: cannot write %s\n", path);
		exit(1);
	}
	fprintf(stderr, "capture: %s (%zu bytes)\n", path, len);
}

/* The raw reply to CTRL_CMD_GETFAMILY "TASKSTATS", on a socket of its own. */
static void capture_family(const char *dir)
{
	struct {
		struct nlmsghdr h;
		struct genlmsghdr g;
		struct nlattr a;
		char name[12];
	} req;
	unsigned char buf[8192];
	struct sockaddr_nl sa;
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	memset(&req, 0, sizeof(req));
	req.h.nlmsg_len = sizeof(req);
	req.h.nlmsg_type = GENL_ID_CTRL;
	req.h.nlmsg_flags = NLM_F_REQUEST;
	req.h.nlmsg_seq = 1;
	req.g.cmd = CTRL_CMD_GETFAMILY;
	req.g.version = 1;
	req.a.nla_len = NLA_HDRLEN + sizeof(TASKSTATS_GENL_NAME);
	req.a.nla_type = CTRL_ATTR_FAMILY_NAME;
	memcpy(req.name, TASKSTATS_GENL_NAME, sizeof(TASKSTATS_GENL_NAME));
	memset(&sa, 0, sizeof(sa));
	sa.nl_family = AF_NETLINK;
	if (fd < 0 || sendto(fd, &req, sizeof(req), 0, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("capture: getfamily");
		exit(1);
	}
	ssize_t m = recv(fd, buf, sizeof(buf), 0);
	if (m <= 0) {
		perror("capture: getfamily reply");
		exit(1);
	}
	put_file(dir, "family.bin", buf, (size_t)m);
	close(fd);
}

static void *thread_a(void *arg)
{
	(void)arg;
	touch(2 << 20);
	return NULL;	/* ends this thread alone */
}

static void *thread_b(void *arg)
{
	(void)arg;
	for (;;)
		pause();	/* until the process's exit takes it */
	return NULL;
}

/* The child of the multi-threaded capture: thread a exits on its own; then the main
 * thread calls exit(5) while b still runs, so main and b die together. */
static void threads_child(void)
{
	pthread_t a, b;
	prctl(PR_SET_NAME, "rsw-ts-main");
	touch(4 << 20);
	if (pthread_create(&a, NULL, thread_a, NULL) != 0)
		_exit(101);
	pthread_setname_np(a, "rsw-ts-a");
	pthread_join(a, NULL);
	if (pthread_create(&b, NULL, thread_b, NULL) != 0)
		_exit(101);
	pthread_setname_np(b, "rsw-ts-b");
	exit(5);
}

/* Saves every datagram whose records belong to process pid, until the one that
 * ends it (AGROUP), concatenated into DIR/name. */
static void capture_exit(const char *dir, const char *name, struct taskstats_listener *l, pid_t pid)
{
	static unsigned char out[1 << 16], buf[1 << 16];
	struct taskstats_exit rec[4];
	size_t olen = 0;
	int done = 0;
	int64_t deadline = now_ms() + 5000;
	while (!done && now_ms() < deadline) {
		struct pollfd pfd = { taskstats_fd(l), POLLIN, 0 };
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		ssize_t m = recv(pfd.fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (m <= 0)
			continue;
		int n = taskstats_parse(buf, (size_t)m, l->family, rec, 4);
		int ours = 0;
		for (int i = 0; i < n && i < 4; i++) {
			if (rec[i].tgid == pid) {
				ours = 1;
				if (rec[i].flags & AGROUP)
					done = 1;
			}
		}
		if (ours && olen + (size_t)m <= sizeof(out)) {
			memcpy(out + olen, buf, (size_t)m);
			olen += (size_t)m;
		}
	}
	if (!done) {
		fprintf(stderr, "capture: no exit record of %d\n", (int)pid);
		exit(1);
	}
	put_file(dir, name, out, olen);
}

static int capture(const char *dir)
{
	struct taskstats_listener l = TASKSTATS_LISTENER_INIT;
	int e = taskstats_open(&l);
	if (e < 0) {
		fprintf(stderr, "capture: taskstats_open: %s\n", strerror(-e));
		return 1;
	}
	capture_family(dir);
	pid_t pid = fork();
	if (pid == 0) {
		prctl(PR_SET_NAME, "rsw-ts-one");
		touch(8 << 20);
		exit(3);
	}
	waitpid(pid, NULL, 0);
	capture_exit(dir, "exit-single.bin", &l, pid);
	fprintf(stderr, "capture: single-threaded child %d\n", (int)pid);
	pid = fork();
	if (pid == 0)
		threads_child();
	waitpid(pid, NULL, 0);
	capture_exit(dir, "exit-threads.bin", &l, pid);
	fprintf(stderr, "capture: multi-threaded child %d\n", (int)pid);
	taskstats_close(&l);
	return 0;
}

/* Prints the records of a captured file (--dump FILE FAMILY), to read a capture. */
static int dump(const char *path, const char *fam)
{
	size_t len;
	char *buf = fixture(path, &len);
	struct taskstats_exit rec[16];
	int n = taskstats_parse(buf, len, (uint16_t)strtoul(fam, NULL, 0), rec, 16);
	printf("%d records\n", n);
	for (int i = 0; i < n && i < 16; i++)
		printf("%s pid=%d tgid=%d ppid=%d v=%u have=%#x exit=%#x flags=%#x comm='%s' "
		       "hiwater_rss=%llu hiwater_vm=%llu etime=%llu utime=%llu stime=%llu min=%llu\n",
		       rec[i].scope == TASKSTATS_PID ? "PID" : "TGID", (int)rec[i].pid,
		       (int)rec[i].tgid, (int)rec[i].ppid, rec[i].version, rec[i].have,
		       rec[i].exit_code, rec[i].flags, rec[i].comm,
		       (unsigned long long)rec[i].hiwater_rss, (unsigned long long)rec[i].hiwater_vm,
		       (unsigned long long)rec[i].etime_us, (unsigned long long)rec[i].utime_us,
		       (unsigned long long)rec[i].stime_us, (unsigned long long)rec[i].minflt);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--capture") == 0)
		return capture(argv[2]);
	if (argc == 4 && strcmp(argv[1], "--dump") == 0)
		return dump(argv[2], argv[3]);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_family_capture),
		cmocka_unit_test(test_single_capture),
		cmocka_unit_test(test_threads_capture),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_corrupt),
		cmocka_unit_test(test_constructed),
		cmocka_unit_test(test_padding),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_family_constructed),
		cmocka_unit_test(test_live),
		cmocka_unit_test(test_only),
		cmocka_unit_test(test_lost),
		cmocka_unit_test(test_unprivileged),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
