/* kmsg record and OOM line parsers on real captures (v1, v2, this VM) and constructed
 * records; the reader in stream mode on the saved logs and a pipe; vmstat oom_kill. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "source/kmsg.h"

#define FIX "tests/fixtures"

static struct kmsg_record rec;
static struct kmsg_oom oom;

static int parse_rec(const char *s)
{
	return kmsg_record_parse(s, strlen(s), &rec);
}

static int parse_oom(const char *s)
{
	return kmsg_oom_parse(s, strlen(s), &oom);
}

static void test_record(void **state)
{
	(void)state;
	assert_int_equal(parse_rec("3,422,112178276,-;Memory cgroup out of memory: Killed\n"), 0);
	assert_int_equal(rec.prio, 3);
	assert_true(rec.seq == 422 && rec.usec == 112178276 && !rec.cont);
	assert_string_equal(rec.text, "Memory cgroup out of memory: Killed");
	assert_int_equal(rec.text_len, strlen(rec.text));
	assert_string_equal(rec.dict, "");
	/* continuation lines and escapes */
	assert_int_equal(parse_rec("6,1006,90001000,-;usb: \\x5cx41\\x09tab\n SUBSYSTEM=usb\n DEVICE=c189:1\n"), 0);
	assert_string_equal(rec.text, "usb: \\x41\ttab");
	assert_string_equal(rec.dict, "SUBSYSTEM=usb\nDEVICE=c189:1");
	/* flags 'c', extra header fields, no trailing newline */
	assert_int_equal(parse_rec("4,7,9,c,caller=T1;x"), 0);
	assert_true(rec.cont);
	assert_string_equal(rec.text, "x");
	/* an empty text is a record */
	assert_int_equal(parse_rec("6,8,9,-;\n"), 0);
	assert_int_equal(rec.text_len, 0);
	/* a NUL escaped in the text is kept, text_len counts it */
	assert_int_equal(parse_rec("6,8,9,-;a\\x00b\n"), 0);
	assert_int_equal(rec.text_len, 3);
}

static void test_record_bad(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"", "\n", "no header at all\n", "6,1,2;text\n", "6,1,2,-\n", "x,1,2,-;t\n",
		"6,,2,-;t\n", "6,1,2,--;t\n", "6,1,2,z;t\n", "6,1,99999999999999999999,-;t\n",
		"4294967296,1,2,-;t\n", "6,1,2,-;t\nNOTSPACE=1\n", "6,1,2,-;t\n\n SUB=x\n",
	};
	assert_int_equal(parse_rec("6,99,5,-;keep\n"), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (parse_rec(bad[i]) != -EINVAL)
			fail_msg("case %zu accepted", i);
	assert_string_equal(rec.text, "keep");
	assert_true(rec.seq == 99);
}

static void test_record_truncated(void **state)
{
	(void)state;
	size_t n = 6000;
	char *big = malloc(n + 16);
	memcpy(big, "6,1,2,-;", 8);
	memset(big + 8, 'a', n);
	assert_int_equal(kmsg_record_parse(big, n + 8, &rec), 0);
	assert_true(rec.truncated);
	assert_int_equal(rec.text_len, KMSG_TEXT_MAX - 1);
	assert_int_equal(strlen(rec.text), KMSG_TEXT_MAX - 1);
	free(big);
}

static void test_unescape(void **state)
{
	(void)state;
	char out[8];
	assert_int_equal(kmsg_unescape("a\\x41", 5, out, sizeof(out)), 2);
	assert_string_equal(out, "aA");
	assert_int_equal(kmsg_unescape("\\x4", 3, out, sizeof(out)), 3);	/* incomplete */
	assert_string_equal(out, "\\x4");
	assert_int_equal(kmsg_unescape("\\xzz", 4, out, sizeof(out)), 4);
	assert_int_equal(kmsg_unescape("0123456789", 10, out, sizeof(out)), 10);
	assert_string_equal(out, "0123456");
}

static void test_oom_killed_memcg(void **state)
{
	(void)state;
	assert_int_equal(parse_oom("Memory cgroup out of memory: Killed process 7457 (python3) "
		"total-vm:75160kB, anon-rss:65024kB, file-rss:6136kB, shmem-rss:0kB, UID:0 "
		"pgtables:188kB oom_score_adj:0"), 0);
	assert_int_equal(oom.kind, KMSG_OOM_KILLED);
	assert_true(oom.memcg);
	assert_int_equal(oom.pid, 7457);
	assert_string_equal(oom.comm, "python3");
	assert_true(oom.total_vm == 75160ULL * 1024 && oom.anon_rss == 65024ULL * 1024);
	assert_true(oom.file_rss == 6136ULL * 1024 && oom.shmem_rss == 0);
	assert_true(oom.pgtables == 188ULL * 1024 && oom.uid == 0 && oom.oom_score_adj == 0);
	assert_int_equal(oom.have, KMSG_F_TOTAL_VM | KMSG_F_ANON_RSS | KMSG_F_FILE_RSS |
				   KMSG_F_SHMEM_RSS | KMSG_F_UID | KMSG_F_PGTABLES |
				   KMSG_F_OOM_SCORE_ADJ | KMSG_F_SCOPE);
}

static void test_oom_killed_global_odd_comm(void **state)
{
	(void)state;
	assert_int_equal(parse_oom("Out of memory: Killed process 31337 (my) (app x) "
		"total-vm:8388608kB, anon-rss:7340032kB, file-rss:1024kB, shmem-rss:512kB, "
		"UID:1000 pgtables:14400kB oom_score_adj:-200\n"), 0);
	assert_int_equal(oom.kind, KMSG_OOM_KILLED);
	assert_false(oom.memcg);
	assert_int_equal(oom.pid, 31337);
	assert_string_equal(oom.comm, "my) (app x");
	assert_true(oom.uid == 1000 && oom.oom_score_adj == -200);
	assert_true(oom.shmem_rss == 512 * 1024);
	/* an old kernel's line: no shmem-rss, UID, pgtables or oom_score_adj */
	assert_int_equal(parse_oom("Out of memory: Killed process 12 (a) b) total-vm:100kB, "
				   "anon-rss:50kB, file-rss:0kB"), 0);
	assert_string_equal(oom.comm, "a) b");
	assert_false(oom.have & (KMSG_F_UID | KMSG_F_SHMEM_RSS));
}

static void test_oom_context(void **state)
{
	(void)state;
	assert_int_equal(parse_oom("oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),"
		"cpuset=/,mems_allowed=0,oom_memcg=/system.slice/prover.service/probe,"
		"task_memcg=/system.slice/prover.service/probe,task=python3,pid=2148,uid=0"), 0);
	assert_int_equal(oom.kind, KMSG_OOM_CONTEXT);
	assert_true(oom.memcg);
	assert_string_equal(oom.constraint, "CONSTRAINT_MEMCG");
	assert_string_equal(oom.oom_memcg, "/system.slice/prover.service/probe");
	assert_string_equal(oom.task_memcg, "/system.slice/prover.service/probe");
	assert_string_equal(oom.comm, "python3");
	assert_int_equal(oom.pid, 2148);
	/* commas inside the node lists, the comm and no oom_memcg (global) */
	assert_int_equal(parse_oom("oom-kill:constraint=CONSTRAINT_NONE,nodemask=0-1,3,"
		"cpuset=/,mems_allowed=0-1,3,global_oom,task_memcg=/u/s.scope,task=a,b c),"
		"pid=77,uid=1000"), 0);
	assert_false(oom.memcg);
	assert_false(oom.have & KMSG_F_OOM_MEMCG);
	assert_string_equal(oom.oom_memcg, "");
	assert_string_equal(oom.task_memcg, "/u/s.scope");
	assert_string_equal(oom.comm, "a,b c)");
	assert_true(oom.pid == 77 && oom.uid == 1000);
}

static void test_oom_reaped_invoked(void **state)
{
	(void)state;
	assert_int_equal(parse_oom("oom_reaper: reaped process 2148 (python3), now anon-rss:0kB, "
				   "file-rss:4kB, shmem-rss:0kB"), 0);
	assert_int_equal(oom.kind, KMSG_OOM_REAPED);
	assert_int_equal(oom.pid, 2148);
	assert_string_equal(oom.comm, "python3");
	assert_true(oom.anon_rss == 0 && oom.file_rss == 4096);
	assert_int_equal(parse_oom("oom_reaper: reaped process 9 (x), now y), now anon-rss:1kB, "
				   "file-rss:0kB, shmem-rss:0kB"), 0);
	assert_string_equal(oom.comm, "x), now y");
	assert_int_equal(parse_oom("python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), "
				   "order=0, oom_score_adj=0"), 0);
	assert_int_equal(oom.kind, KMSG_OOM_INVOKED);
	assert_string_equal(oom.comm, "python3");
}

static void test_oom_bad(void **state)
{
	(void)state;
	static const char *const notoom[] = {
		"", "Call Trace:", "memory: usage 65536kB, limit 65536kB, failcnt 3622",
		"Memory cgroup stats for /system.slice/prover.service/probe:",
		"Tasks state (memory values in pages):",
		"Something else: Killed process 1 (x) total-vm:1kB, anon-rss:1kB",
	};
	static const char *const bad[] = {
		"Memory cgroup out of memory: Killed process 7457 (python3)",
		"Memory cgroup out of memory: Killed process x (python3) total-vm:1kB, anon-rss:1kB",
		"Memory cgroup out of memory: Killed process 0 (python3) total-vm:1kB, anon-rss:1kB",
		"Memory cgroup out of memory: Killed process 7457 python3 total-vm:1kB, anon-rss:1kB",
		"Memory cgroup out of memory: Killed process 7457 (p) total-vm:1MB, anon-rss:1kB",
		"Memory cgroup out of memory: Killed process 7457 (p) total-vm:kB, anon-rss:1kB",
		"Memory cgroup out of memory: Killed process 7457 (p) total-vm:1kB, file-rss:1kB",
		"Memory cgroup out of memory: Killed process 7457 (p) total-vm:99999999999999999999kB, anon-rss:1kB",
		"Memory cgroup out of memory: Killed process 7457 (p) total-vm:18014398509481984kB, anon-rss:1kB",
		"Out of memory: Killed process 1 (p) total-vm:1kB, anon-rss:1kB, UID:x",
		"Out of memory: Killed process 1 (p) total-vm:1kB, anon-rss:1kB, oom_score_adj:1001",
		"Out of memory: Killed process 1 (p) total-vm:1kB, anon-rss:1kB, junk",
		"oom-kill:constraint=CONSTRAINT_MEMCG",
		"oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),task=python3,pid=2148,uid=0",
		"oom-kill:constraint=CONSTRAINT_MEMCG,task_memcg=/x,task=p,pid=,uid=0",
		"oom-kill:constraint=CONSTRAINT_MEMCG,task_memcg=/x,task=p,pid=1,uid=-1",
		"oom_reaper: reaped process 2148 (python3) now anon-rss:0kB",
		"oom_reaper: reaped process (python3), now anon-rss:0kB",
	};
	memset(&oom, 0, sizeof(oom));
	oom.pid = 4242;
	for (size_t i = 0; i < sizeof(notoom) / sizeof(notoom[0]); i++)
		if (parse_oom(notoom[i]) != -ENOENT)
			fail_msg("not-OOM case %zu", i);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int e = parse_oom(bad[i]);
		if (e != -EINVAL && e != -ERANGE)
			fail_msg("bad case %zu gave %d", i, e);
	}
	assert_int_equal(oom.pid, 4242);	/* untouched */
}

/* Reads a saved log through the stream reader and tallies what the OOM parser finds. */
struct tally {
	size_t records, with_dict, killed, killed_memcg, context, reaped, invoked;
	pid_t last_killed;
	char last_comm[KMSG_COMM_MAX];
	char last_task_memcg[KMSG_PATH_MAX];
	uint64_t last_seq;
};

static void read_log(const char *path, struct tally *t)
{
	struct kmsg_reader *r = malloc(sizeof(*r));
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	kmsg_reader_open_fd(r, fd);
	memset(t, 0, sizeof(*t));
	int e;
	while ((e = kmsg_reader_next(r, &rec)) == 0) {
		t->records++;
		if (rec.seq <= t->last_seq && t->records > 1)
			fail_msg("seq went back at %llu", (unsigned long long)rec.seq);
		t->last_seq = rec.seq;
		if (rec.dict[0])
			t->with_dict++;
		if (kmsg_oom_parse(rec.text, rec.text_len, &oom) != 0)
			continue;
		switch (oom.kind) {
		case KMSG_OOM_KILLED:
			t->killed++;
			t->killed_memcg += oom.memcg;
			t->last_killed = oom.pid;
			memcpy(t->last_comm, oom.comm, sizeof(oom.comm));
			break;
		case KMSG_OOM_CONTEXT:
			t->context++;
			memcpy(t->last_task_memcg, oom.task_memcg, sizeof(oom.task_memcg));
			break;
		case KMSG_OOM_REAPED: t->reaped++; break;
		case KMSG_OOM_INVOKED: t->invoked++; break;
		}
	}
	assert_int_equal(e, -EAGAIN);
	assert_int_equal(kmsg_reader_next(r, &rec), -EAGAIN);
	kmsg_reader_close(r);
	kmsg_reader_close(r);
	free(r);
}

static void test_log_v1(void **state)
{
	(void)state;
	struct tally t;
	read_log(FIX "/kmsg/kmsg-oom-memcg-v1.txt", &t);
	assert_int_equal(t.records, 81);
	assert_int_equal(t.invoked, 2);	/* the second report is cut off */
	assert_int_equal(t.context, 1);
	assert_int_equal(t.killed, 1);
	assert_int_equal(t.killed_memcg, 1);
	assert_int_equal(t.last_killed, 2148);
	assert_string_equal(t.last_task_memcg, "/system.slice/prover.service/probe");
}

static void test_log_v2(void **state)
{
	(void)state;
	struct tally t;
	read_log(FIX "/kmsg/kmsg-oom-memcg-v2.txt", &t);
	assert_int_equal(t.records, 108);
	assert_int_equal(t.killed, 1);
	assert_int_equal(t.last_killed, 499);
	assert_string_equal(t.last_comm, "python3");
	assert_string_equal(t.last_task_memcg, "/system.slice/prover.service/rsw-oom");
}

static void test_log_local_and_constructed(void **state)
{
	(void)state;
	struct tally t;
	read_log(FIX "/kmsg/kmsg-oom-memcg-v1-local.txt", &t);
	assert_int_equal(t.with_dict, 3);
	assert_int_equal(t.killed, 1);
	assert_int_equal(t.last_killed, 4300);
	read_log(FIX "/kmsg/kmsg-constructed.txt", &t);
	assert_int_equal(t.records, 7);
	assert_int_equal(t.with_dict, 1);
	assert_true(t.killed == 1 && t.killed_memcg == 0 && t.reaped == 1 && t.context == 1);
	assert_string_equal(t.last_comm, "my) (app x");
}

/* A pipe delivers a record and its continuation lines in pieces; the reader must not
 * cut the record before it knows the next line is not a continuation. */
static void test_pipe(void **state)
{
	(void)state;
	int p[2];
	assert_int_equal(pipe2(p, O_NONBLOCK | O_CLOEXEC), 0);
	struct kmsg_reader *r = malloc(sizeof(*r));
	kmsg_reader_open_fd(r, p[0]);
	assert_int_equal(kmsg_reader_next(r, &rec), -EAGAIN);
	assert_int_equal(write(p[1], "6,1,5,-;first\n", 14), 14);
	assert_int_equal(kmsg_reader_next(r, &rec), -EAGAIN);	/* a continuation may follow */
	assert_int_equal(write(p[1], " SUBSYSTEM=x\n6,2,6,-;sec", 24), 24);
	assert_int_equal(kmsg_reader_next(r, &rec), 0);
	assert_string_equal(rec.text, "first");
	assert_string_equal(rec.dict, "SUBSYSTEM=x");
	assert_int_equal(kmsg_reader_next(r, &rec), -EAGAIN);
	assert_int_equal(write(p[1], "ond\ngarbage\n", 12), 12);
	assert_int_equal(kmsg_reader_next(r, &rec), 0);
	assert_string_equal(rec.text, "second");
	close(p[1]);
	assert_int_equal(kmsg_reader_next(r, &rec), -EINVAL);	/* "garbage", skipped */
	assert_int_equal(kmsg_reader_next(r, &rec), -EAGAIN);	/* end of stream */
	kmsg_reader_close(r);
	free(r);
}

/* The real /dev/kmsg: as root, a record written to it is read back as one record. */
static void test_dev_kmsg(void **state)
{
	(void)state;
	struct kmsg_reader *r = malloc(sizeof(*r));
	int e = kmsg_reader_open(r, 0);
	if (e == -EPERM || e == -EACCES || e == -ENOENT) {
		free(r);
		skip();
	}
	assert_int_equal(e, 0);
	assert_false(r->stream);
	assert_int_equal(kmsg_reader_next(r, &rec), -EAGAIN);	/* history skipped */
	int w = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
	if (w < 0) {
		kmsg_reader_close(r);
		free(r);
		skip();
	}
	char msg[64];
	int n = snprintf(msg, sizeof(msg), "<6>rsswatch-test: pid %d\n", (int)getpid());
	assert_int_equal(write(w, msg, (size_t)n), n);
	close(w);
	char want[64];
	snprintf(want, sizeof(want), "rsswatch-test: pid %d", (int)getpid());
	int found = 0;
	while ((e = kmsg_reader_next(r, &rec)) == 0)
		found += strcmp(rec.text, want) == 0 && (rec.prio & 7) == 6;
	assert_int_equal(e, -EAGAIN);
	assert_int_equal(found, 1);
	kmsg_reader_close(r);
	free(r);
}

static void test_vmstat(void **state)
{
	(void)state;
	uint64_t v = 9;
	int fd = open(FIX "/proc/vmstat", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	char *buf = malloc(65536);
	ssize_t n = read(fd, buf, 65536);
	close(fd);
	assert_true(n > 0);
	assert_int_equal(vmstat_oom_kill_parse(buf, (size_t)n, &v), 0);
	assert_true(v == 1);
	free(buf);
	static const char nokey[] = "nr_free_pages 1\noom_kill_x 4\n";
	v = 9;
	assert_int_equal(vmstat_oom_kill_parse(nokey, strlen(nokey), &v), -ENOENT);
	static const char bad[] = "oom_kill 4x\n";
	assert_int_equal(vmstat_oom_kill_parse(bad, strlen(bad), &v), -EINVAL);
	static const char last[] = "a 1\noom_kill 12";
	assert_int_equal(vmstat_oom_kill_parse(last, strlen(last), &v), 0);
	assert_true(v == 12);
	assert_int_equal(vmstat_read_oom_kill(&v), 0);	/* this machine's counter */
}

/* The log's clock carried over to CLOCK_MONOTONIC: the smallest read delay seen wins;
 * the estimate may rise only as fast as KMSG_CLOCK_DRIFT_PPM allows. */
static void test_clock(void **state)
{
	(void)state;
	struct kmsg_clock c = { 0 };
	assert_true(kmsg_clock_mono(&c, 5) == 5000);	/* nothing seen: as it is */
	/* printk's clock 1.5 ms behind; read 300 us after logging */
	kmsg_clock_note(&c, 1000000, 1000000000LL + 1500000 + 300000);
	assert_true(kmsg_clock_mono(&c, 1000000) == 1000000000LL + 1800000);
	/* a record read at once: the offset is 1.5 ms */
	kmsg_clock_note(&c, 1000100, 1000100000LL + 1500000);
	assert_true(kmsg_clock_mono(&c, 2000000) == 2000000000LL + 1500000);
	/* one read late by 40 ms, 50 ms after the last read: it may raise the estimate
	 * by 50 us only */
	kmsg_clock_note(&c, 1010100, 1010100000LL + 1500000 + 40000000);
	assert_true(c.offset_ns == 1500000 + 50000);
	/* the clocks drift apart the other way: followed at once */
	kmsg_clock_note(&c, 1020000, 1020000000LL + 1000000);
	assert_true(c.offset_ns == 1000000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_record),
		cmocka_unit_test(test_record_bad),
		cmocka_unit_test(test_record_truncated),
		cmocka_unit_test(test_unescape),
		cmocka_unit_test(test_oom_killed_memcg),
		cmocka_unit_test(test_oom_killed_global_odd_comm),
		cmocka_unit_test(test_oom_context),
		cmocka_unit_test(test_oom_reaped_invoked),
		cmocka_unit_test(test_oom_bad),
		cmocka_unit_test(test_log_v1),
		cmocka_unit_test(test_log_v2),
		cmocka_unit_test(test_log_local_and_constructed),
		cmocka_unit_test(test_pipe),
		cmocka_unit_test(test_dev_kmsg),
		cmocka_unit_test(test_vmstat),
		cmocka_unit_test(test_clock),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
