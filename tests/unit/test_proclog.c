/* Each process's context totals in record/proclog.c, from its reads and its exit
 * records: a one-thread process's record is the last word; a process that had threads
 * takes its CPU from the group's record and its faults and bytes from the sum of its
 * threads' records; otherwise the largest source wins; what no source said stays
 * unknown (-1). The records here are built by hand with figures worked out below. */
#include "testutil.h"

#include <linux/acct.h>
#include <string.h>
#include <unistd.h>

#include "record/proclog.h"

/* A PID (thread) record of tgid's thread tid, or its group's TGID record. */
static struct taskstats_exit rec(enum taskstats_scope scope, pid_t tid, pid_t tgid, uint64_t ut_us,
				 uint64_t st_us, uint64_t minflt, uint64_t majflt, uint64_t rd,
				 uint64_t wr, int last)
{
	struct taskstats_exit x;
	memset(&x, 0, sizeof(x));
	x.scope = scope;
	x.pid = tid;
	x.tgid = tgid;
	x.have = TASKSTATS_HAVE_BASIC | TASKSTATS_HAVE_XACCT | TASKSTATS_HAVE_TGID |
		 (scope == TASKSTATS_PID ? TASKSTATS_HAVE_IO : 0);
	x.utime_us = ut_us;
	x.stime_us = st_us;
	x.minflt = minflt;
	x.majflt = majflt;
	x.read_bytes = rd;
	x.write_bytes = wr;
	x.flags = last ? AGROUP : 0;
	return x;
}

static struct proc_stat stat_of(uint64_t ut_ticks, uint64_t st_ticks, uint64_t minflt, uint64_t majflt)
{
	struct proc_stat st;
	memset(&st, 0, sizeof(st));
	st.utime = ut_ticks;
	st.stime = st_ticks;
	st.minflt = minflt;
	st.majflt = majflt;
	return st;
}

static void test_unknown_until_told(void **state)
{
	(void)state;
	struct proclog l;
	proclog_init(&l);
	size_t i = proclog_add(&l, 10, 1, "a", 0, 0, 0);
	const struct proc_summary *p = &l.p[i];
	assert_int_equal(p->cpu_user_ns, -1);
	assert_int_equal(p->majflt, -1);
	assert_int_equal(p->read_bytes, -1);
	/* stat read, io not permitted: the bytes stay unknown */
	struct proc_stat st = stat_of(5, 2, 300, 4);
	struct proc_io io = { 0, 0, 0, 0 };
	proclog_read(&l, i, &st, 1, &io, 0);
	p = &l.p[i];
	assert_int_equal(p->cpu_user_ns, (int64_t)proc_ticks_ns(5));
	assert_int_equal(p->cpu_sys_ns, (int64_t)proc_ticks_ns(2));
	assert_int_equal(p->minflt, 300);
	assert_int_equal(p->majflt, 4);
	assert_int_equal(p->read_bytes, -1);
	assert_int_equal(p->write_bytes, -1);
	proclog_release(&l);
}

static void test_one_thread_last_word(void **state)
{
	(void)state;
	struct proclog l;
	proclog_init(&l);
	size_t i = proclog_add(&l, 20, 1, "b", 0, 0, 0);
	/* a read at a sample, then the exit record: the record wins even where it is
	 * lower (the read's CPU comes from another measure) */
	struct proc_stat st = stat_of(100, 0, 5000, 0);
	struct proc_io io = { 0, 0, 8192, 4096 };
	proclog_read(&l, i, &st, 1, &io, 1);
	struct taskstats_exit x = rec(TASKSTATS_PID, 20, 20, 990000, 10000, 5100, 2, 12288, 4096, 1);
	proclog_exit_record(&l, i, &x);
	const struct proc_summary *p = &l.p[i];
	assert_int_equal(p->cpu_user_ns, 990000000);
	assert_int_equal(p->cpu_sys_ns, 10000000);
	assert_int_equal(p->minflt, 5100);
	assert_int_equal(p->majflt, 2);
	assert_int_equal(p->read_bytes, 12288);
	assert_int_equal(p->write_bytes, 4096);
	/* a read after the record (a zombie seen late) does not undo it */
	st = stat_of(101, 0, 5101, 0);
	proclog_read(&l, i, &st, 1, &io, 1);
	p = &l.p[i];
	assert_int_equal(p->cpu_user_ns, 990000000);
	assert_int_equal(p->minflt, 5100);
	proclog_release(&l);
}

static void test_threads_and_group(void **state)
{
	(void)state;
	struct proclog l;
	proclog_init(&l);
	size_t i = proclog_add(&l, 30, 1, "c", 0, 0, 0);
	/* two threads end: each record has its own figures */
	struct taskstats_exit a = rec(TASKSTATS_PID, 31, 30, 200000, 0, 100, 1, 4096, 0, 0);
	struct taskstats_exit b = rec(TASKSTATS_PID, 30, 30, 300000, 50000, 400, 2, 0, 8192, 1);
	/* the group's record: CPU over every thread it had, one that ended before the
	 * recording knew the process included; no faults, no bytes */
	struct taskstats_exit g = rec(TASKSTATS_TGID, 30, 30, 700000, 60000, 0, 0, 0, 0, 0);
	proclog_exit_record(&l, i, &a);
	proclog_exit_record(&l, i, &b);
	const struct proc_summary *p = &l.p[i];
	/* before the group's record: the sums */
	assert_int_equal(p->cpu_user_ns, 500000000);
	assert_int_equal(p->cpu_sys_ns, 50000000);
	proclog_exit_record(&l, i, &g);
	p = &l.p[i];
	assert_int_equal(p->cpu_user_ns, 700000000);
	assert_int_equal(p->cpu_sys_ns, 60000000);
	assert_int_equal(p->minflt, 500);
	assert_int_equal(p->majflt, 3);
	assert_int_equal(p->read_bytes, 4096);
	assert_int_equal(p->write_bytes, 8192);
	/* a read that saw more faults than the records (a thread that ended before the
	 * recording): the larger figure, as neither adds work that was not done */
	struct proc_stat st = stat_of(1, 1, 900, 3);
	struct proc_io io = { 0, 0, 4096, 16384 };
	proclog_read(&l, i, &st, 1, &io, 1);
	p = &l.p[i];
	assert_int_equal(p->minflt, 900);
	assert_int_equal(p->majflt, 3);
	assert_int_equal(p->write_bytes, 16384);
	assert_int_equal(p->read_bytes, 4096);
	assert_int_equal(p->cpu_user_ns, 700000000);
	proclog_release(&l);
}

static void test_record_without_io(void **state)
{
	(void)state;
	struct proclog l;
	proclog_init(&l);
	size_t i = proclog_add(&l, 40, 1, "d", 0, 0, 0);
	/* an older kernel's record, too short for the bytes */
	struct taskstats_exit x = rec(TASKSTATS_PID, 40, 40, 1000, 0, 7, 0, 0, 0, 1);
	x.have &= ~(unsigned)TASKSTATS_HAVE_IO;
	proclog_exit_record(&l, i, &x);
	const struct proc_summary *p = &l.p[i];
	assert_int_equal(p->minflt, 7);
	assert_int_equal(p->read_bytes, -1);
	assert_int_equal(p->write_bytes, -1);
	/* a record without even the basic part says nothing */
	size_t k = proclog_add(&l, 41, 1, "e", 0, 0, 0);
	x.have = 0;
	proclog_exit_record(&l, k, &x);
	assert_int_equal(l.p[k].cpu_user_ns, -1);
	assert_int_equal(l.p[k].minflt, -1);
	proclog_release(&l);
}

/* Peak offers: a higher figure raises the peak; the kernel's own figure equal to a
 * peak from a sample confirms it (the source becomes exact, the figure stays; a peak
 * from VmHWM keeps its word); a lower or equal sampled figure changes nothing; an old
 * process's high-water figures count only above its VmHWM at the attach. */
static void test_peak_offers(void **state)
{
	(void)state;
	struct proclog l;
	proclog_init(&l);
	size_t i = proclog_add(&l, 50, 1, "f", 0, 0, 0);
	assert_int_equal(proclog_offer(&l, i, 4096 * 100, PEAK_FROM_SAMPLE), 4096 * 100);
	assert_int_equal(proclog_offer(&l, i, 4096 * 100, PEAK_FROM_SAMPLE), 0);
	assert_int_equal(proclog_offer(&l, i, 4096 * 99, PEAK_FROM_EXIT), 0);
	assert_string_equal(l.p[i].peak_source, PEAK_FROM_SAMPLE);
	assert_int_equal(proclog_offer(&l, i, 4096 * 100, PEAK_FROM_EXIT), 4096 * 100);
	assert_string_equal(l.p[i].peak_source, PEAK_FROM_EXIT);
	/* confirmed once; a second exact figure or a sample equal to it changes nothing */
	assert_int_equal(proclog_offer(&l, i, 4096 * 100, PEAK_FROM_WAIT), 0);
	assert_int_equal(proclog_offer(&l, i, 4096 * 100, PEAK_FROM_SAMPLE), 0);
	assert_string_equal(l.p[i].peak_source, PEAK_FROM_EXIT);
	assert_int_equal(proclog_offer(&l, i, 4096 * 101, PEAK_FROM_SAMPLE), 4096 * 101);
	assert_string_equal(l.p[i].peak_source, PEAK_FROM_SAMPLE);
	/* a peak from VmHWM keeps its word */
	assert_int_equal(proclog_offer(&l, i, 4096 * 102, PEAK_FROM_HWM), 4096 * 102);
	assert_int_equal(proclog_offer(&l, i, 4096 * 102, PEAK_FROM_EXIT), 0);
	assert_string_equal(l.p[i].peak_source, PEAK_FROM_HWM);

	/* attached after a peak of 1000 pages: its exit record of 1000 pages is history,
	 * even where a sample saw as much */
	size_t k = proclog_add(&l, 51, 1, "g", 0, 1, 4096 * 1000);
	assert_int_equal(proclog_offer(&l, k, 4096 * 1000, PEAK_FROM_SAMPLE), 4096 * 1000);
	assert_int_equal(proclog_offer(&l, k, 4096 * 1000, PEAK_FROM_EXIT), 0);
	assert_string_equal(l.p[k].peak_source, PEAK_FROM_SAMPLE);
	assert_int_equal(proclog_offer(&l, k, 4096 * 1001, PEAK_FROM_EXIT), 4096 * 1001);
	assert_string_equal(l.p[k].peak_source, PEAK_FROM_EXIT);
	proclog_release(&l);
}

/* The set's ended sum: an entry counts there only once it left (proclog_sum); a
 * member sampled and then ended adds, at its exit record, only what the record says
 * beyond its last read; a lower figure later never takes the sum down; a process known
 * only from its record counts in full; and the run's total at the end sums every
 * entry, the ones still alive with their last read. */
static void test_ended_sum(void **state)
{
	(void)state;
	struct proclog l;
	struct sample s;
	proclog_init(&l);
	size_t a = proclog_add(&l, 60, 1, "a", 0, 0, 0);
	struct proc_stat st = stat_of(10, 2, 100, 1);
	struct proc_io io = { 0, 0, 4096, 0 };
	proclog_read(&l, a, &st, 1, &io, 1);
	/* its record came while it was still a live member: not in the sum yet */
	struct taskstats_exit x = rec(TASKSTATS_PID, 60, 60, 300000, 20000, 150, 1, 8192, 0, 1);
	proclog_exit_record(&l, a, &x);
	memset(&s, 0, sizeof(s));
	proclog_add_ended(&l, &s);
	assert_false(s.have & SAMPLE_CPU);
	/* it left: its record's figures (above its read) */
	proclog_sum(&l, a);
	proclog_sum(&l, a);	/* idempotent */
	memset(&s, 0, sizeof(s));
	proclog_add_ended(&l, &s);
	assert_true(s.have & SAMPLE_CPU);
	assert_true(s.have & SAMPLE_IO);
	assert_int_equal(s.cpu_user_ns, 300000000);
	assert_int_equal(s.cpu_sys_ns, (int64_t)proc_ticks_ns(2));	/* the read's, above */
	assert_int_equal(s.minflt, 150);
	assert_int_equal(s.read_bytes, 8192);
	/* one known only from its record, with less than a read said of another: in full */
	size_t b = proclog_add(&l, 61, 60, "b", 0, 0, 0);
	struct taskstats_exit y = rec(TASKSTATS_PID, 61, 61, 5000, 0, 7, 0, 0, 0, 1);
	proclog_sum(&l, b);
	proclog_exit_record(&l, b, &y);
	memset(&s, 0, sizeof(s));
	s.have = SAMPLE_CPU;
	s.cpu_user_ns = 1000;	/* the live members' part */
	proclog_add_ended(&l, &s);
	assert_int_equal(s.cpu_user_ns, 1000 + 300000000 + 5000000);
	assert_int_equal(s.minflt, 157);
	/* a later, lower read of a is no loss */
	struct proc_stat low = stat_of(1, 0, 1, 0);
	proclog_read(&l, a, &low, 1, &io, 0);
	memset(&s, 0, sizeof(s));
	proclog_add_ended(&l, &s);
	assert_int_equal(s.cpu_user_ns, 300000000 + 5000000);
	/* a third, alive at the end: in the total, not in the ended sum */
	size_t c = proclog_add(&l, 62, 1, "c", 0, 0, 0);
	struct proc_stat st3 = stat_of(100, 0, 0, 0);
	proclog_read(&l, c, &st3, 1, &io, 0);
	memset(&s, 0, sizeof(s));
	proclog_add_ended(&l, &s);
	assert_int_equal(s.cpu_user_ns, 300000000 + 5000000);
	memset(&s, 0, sizeof(s));
	proclog_total(&l, &s);
	assert_int_equal(s.cpu_user_ns, 300000000 + 5000000 + (int64_t)proc_ticks_ns(100));
	proclog_release(&l);
}

/* A chain known from exit records read late (make 100, gcc 101, cc1 102): cc1's start
 * came out 40 ms before gcc's, gcc's 10 ms before make's. Each parent takes its child's
 * start where that is earlier; an unrelated process and a later use of the parent's
 * pid are left alone. */
static void test_order_starts(void **state)
{
	(void)state;
	struct proclog l;
	proclog_init(&l);
	const int64_t ms = 1000000;
	size_t mk = proclog_add(&l, 100, 1, "make", 50 * ms, 0, 0);
	size_t old101 = proclog_add(&l, 101, 1, "sh", 5 * ms, 0, 0);	/* an earlier 101 */
	size_t other = proclog_add(&l, 200, 1, "other", 70 * ms, 0, 0);
	size_t gcc = proclog_add(&l, 101, 100, "gcc", 80 * ms, 0, 0);
	size_t cc1 = proclog_add(&l, 102, 101, "cc1", 40 * ms, 0, 0);
	size_t as = proclog_add(&l, 103, 101, "as", 90 * ms, 0, 0);
	proclog_order_starts(&l);
	assert_int_equal(l.p[cc1].first_ns, 40 * ms);
	assert_int_equal(l.p[gcc].first_ns, 40 * ms);	/* its child cc1's */
	assert_int_equal(l.p[mk].first_ns, 40 * ms);	/* then its own child's */
	assert_int_equal(l.p[old101].first_ns, 5 * ms);	/* not the parent: gcc is */
	assert_int_equal(l.p[other].first_ns, 70 * ms);
	assert_int_equal(l.p[as].first_ns, 90 * ms);
	proclog_release(&l);
}

/* A pid used three times in a run: each time is matched to the use alive then. An
 * entry is found up to `early` before it was first seen, and up to `late` after its
 * end; an unended entry is alive from then on. */
static void test_find_at(void **state)
{
	(void)state;
	struct proclog l;
	proclog_init(&l);
	const int64_t ms = 1000000;
	size_t a = proclog_add(&l, 70, 1, "a", 100 * ms, 0, 0);
	proclog_end(&l, a, 200 * ms, PROC_SIGNALED, -1, 9);
	proclog_add(&l, 71, 1, "other", 150 * ms, 0, 0);
	size_t b = proclog_add(&l, 70, 1, "b", 1000 * ms, 0, 0);
	proclog_end(&l, b, 1100 * ms, PROC_EXITED, 0, -1);
	size_t c = proclog_add(&l, 70, 1, "c", 5000 * ms, 0, 0);
	assert_int_equal(proclog_find(&l, 70), (long)c);
	assert_int_equal(proclog_find_at(&l, 70, 150 * ms, 50 * ms, 10 * ms), (long)a);
	assert_int_equal(proclog_find_at(&l, 70, 60 * ms, 50 * ms, 10 * ms), (long)a);
	assert_int_equal(proclog_find_at(&l, 70, 40 * ms, 50 * ms, 10 * ms), -1);
	assert_int_equal(proclog_find_at(&l, 70, 205 * ms, 50 * ms, 10 * ms), (long)a);
	assert_int_equal(proclog_find_at(&l, 70, 500 * ms, 50 * ms, 10 * ms), -1);
	assert_int_equal(proclog_find_at(&l, 70, 1050 * ms, 50 * ms, 10 * ms), (long)b);
	assert_int_equal(proclog_find_at(&l, 70, 3000 * ms, 50 * ms, 10 * ms), -1);
	assert_int_equal(proclog_find_at(&l, 70, 9000 * ms, 50 * ms, 10 * ms), (long)c);
	assert_int_equal(proclog_find_at(&l, 71, 9000 * ms, 50 * ms, 10 * ms), 1);
	assert_int_equal(proclog_find_at(&l, 72, 150 * ms, 50 * ms, 10 * ms), -1);
	proclog_release(&l);
}

/* A fork loop's table stays bounded: 1,000 processes, a bound of 100. Those ended
 * long enough ago fold, smallest peaks first; the root, an OOM kill, the recently
 * ended and the living stay; the index finds every kept entry; the folded ones'
 * figures stay in the run's total and in the set's ended sum. */
static void test_fold(void **state)
{
	(void)state;
	struct proclog l;
	struct sample s;
	proclog_init(&l);
	const int64_t ms = 1000000;
	long root = (long)proclog_add(&l, 10, 1, "root", 0, 0, 0);
	proclog_offer(&l, (size_t)root, 1, PEAK_FROM_SAMPLE);	/* the smallest of all */
	struct proc_stat st = stat_of(1, 0, 2, 0);
	uint64_t all_minflt = 0;
	for (int k = 0; k < 1000; k++) {
		size_t i = proclog_add(&l, 1000 + k, 10, "child", k * ms, 0, 0);
		proclog_offer(&l, i, 4096 * (uint64_t)(k + 1), PEAK_FROM_SAMPLE);
		proclog_read(&l, i, &st, 1, NULL, 0);
		all_minflt += 2;
		if (k == 7)
			proclog_end(&l, i, k * ms + 1, PROC_OOM_KILLED, -1, 9);
		else if (k < 990)
			proclog_end(&l, i, k * ms + 1, PROC_EXITED, 0, -1);
		if (k < 990)
			proclog_sum(&l, i);
	}
	memset(&s, 0, sizeof(s));
	proclog_add_ended(&l, &s);
	uint64_t ended_before = s.minflt;
	/* at 2 s, settled after 1 s: the 990 ended (by 990 ms) but the OOM kill, 989,
	 * may go; 1001 - 100 / 2 = 951 do, the smallest peaks (k = 0..951 but 7) */
	size_t n = proclog_fold(&l, 2000 * ms, 1000 * ms, 100, &root);
	assert_int_equal(n, 951);
	assert_int_equal(l.n, 50);
	assert_int_equal(l.folded.n, 951);
	assert_int_equal(l.folded.peak_max, 4096 * 952);	/* k = 951 */
	assert_int_equal(root, 0);
	assert_int_equal(l.p[root].pid, 10);
	assert_int_equal(proclog_find(&l, 1007), 1);		/* the kill: kept, renumbered */
	assert_string_equal(l.p[1].ended, PROC_OOM_KILLED);
	assert_int_equal(proclog_find(&l, 1000), -1);		/* folded */
	assert_int_equal(proclog_find(&l, 1951), -1);
	for (int k = 952; k < 1000; k++) {
		long i = proclog_find(&l, 1000 + k);
		assert_true(i >= 0);
		assert_int_equal(l.p[i].pid, 1000 + k);
	}
	assert_int_equal(proclog_largest(&l), proclog_find(&l, 1999));
	/* the sums keep what went */
	memset(&s, 0, sizeof(s));
	proclog_add_ended(&l, &s);
	assert_int_equal(s.minflt, ended_before);
	memset(&s, 0, sizeof(s));
	proclog_total(&l, &s);
	assert_int_equal(s.minflt, all_minflt);
	/* below the bound: nothing to do; and new entries are found */
	assert_int_equal(proclog_fold(&l, 3000 * ms, 1000 * ms, 100, &root), 0);
	size_t z = proclog_add(&l, 5000, 10, "late", 3000 * ms, 0, 0);
	assert_int_equal(proclog_find(&l, 5000), (long)z);
	proclog_release(&l);
}

/* Nothing can go (all alive): the table stays as it is, and the next try waits for a
 * quarter of the bound more. */
static void test_fold_nothing_settled(void **state)
{
	(void)state;
	struct proclog l;
	proclog_init(&l);
	long root = -1;
	for (int k = 0; k < 120; k++)
		proclog_add(&l, 100 + k, 1, "alive", 0, 0, 0);
	assert_int_equal(proclog_fold(&l, 0, 0, 100, &root), 0);
	assert_int_equal(l.n, 120);
	assert_int_equal(root, -1);
	for (int k = 0; k < 120; k++)
		proclog_end(&l, (size_t)k, 0, PROC_EXITED, 0, -1);
	assert_int_equal(proclog_fold(&l, 0, 0, 100, &root), 0);	/* waits until 145 */
	for (int k = 0; k < 25; k++)
		proclog_add(&l, 300 + k, 1, "more", 0, 0, 0);
	assert_int_equal(proclog_fold(&l, 0, 0, 100, &root), 95);
	assert_int_equal(l.n, 50);
	proclog_release(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unknown_until_told),
		cmocka_unit_test(test_one_thread_last_word),
		cmocka_unit_test(test_threads_and_group),
		cmocka_unit_test(test_record_without_io),
		cmocka_unit_test(test_peak_offers),
		cmocka_unit_test(test_ended_sum),
		cmocka_unit_test(test_order_starts),
		cmocka_unit_test(test_find_at),
		cmocka_unit_test(test_fold),
		cmocka_unit_test(test_fold_nothing_settled),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
