/* Telling an OOM kill from any other SIGKILL (record/oom.h): every mix of full and
 * partial evidence, the event detail, and how the outcome reads. */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/util.h"
#include "record/oom.h"
#include "render/live.h"
#include "store/run.h"

static const char KILL_LINE[] =
	"Memory cgroup out of memory: Killed process 7457 (python3) total-vm:75160kB, "
	"anon-rss:65024kB, file-rss:6136kB, shmem-rss:0kB, UID:0 pgtables:188kB oom_score_adj:0";

static void base(struct oom_evidence *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->signal = SIGKILL;
	ev->cg_known = true;
	ev->vm_known = true;
	ev->cg_path = "/x";
}

static void test_kill_line_is_certain(void **state)
{
	(void)state;
	struct oom_evidence ev;
	struct oom_verdict v;
	base(&ev);
	assert_int_equal(kmsg_oom_parse(KILL_LINE, strlen(KILL_LINE), &ev.kill), 0);
	ev.kill_seen = true;
	ev.cg_delta = 1;
	ev.vm_delta = 1;
	strlcpy_rsw(ev.memcg, "/x", sizeof(ev.memcg));
	oom_decide(&ev, &v);
	assert_true(v.oom);
	assert_string_equal(v.event_kind, "oom_kill");
	assert_string_equal(v.detail, "anon_rss=65024kB file_rss=6136kB shmem_rss=0kB "
				      "total_vm=75160kB pgtables=188kB memcg=/x scope=cgroup comm=python3");
	assert_string_equal(v.memcg, "/x");
	assert_true(v.rss_known);
	assert_true(v.anon_rss == 65024ULL * 1024);
	assert_string_equal(v.note, "");
	/* even with counters that did not move (read too early) the line decides */
	ev.cg_delta = ev.vm_delta = 0;
	oom_decide(&ev, &v);
	assert_true(v.oom);
}

static void test_plain_sigkill(void **state)
{
	(void)state;
	struct oom_evidence ev;
	struct oom_verdict v;
	base(&ev);
	oom_decide(&ev, &v);
	assert_false(v.oom);
	assert_null(v.event_kind);
	assert_string_equal(v.note, "");
	/* the log was read and names someone else, though the counters rose */
	ev.vm_delta = 2;
	oom_decide(&ev, &v);
	assert_false(v.oom);
	assert_null(v.event_kind);
	assert_string_equal(v.note, "not the OOM killer: it killed 2 other processes meanwhile");
	/* not a SIGKILL: nothing to decide */
	ev.signal = SIGTERM;
	ev.kill_seen = true;
	oom_decide(&ev, &v);
	assert_false(v.oom);
	assert_string_equal(v.note, "");
}

static void test_cgroup_without_log(void **state)
{
	(void)state;
	struct oom_evidence ev;
	struct oom_verdict v;
	base(&ev);
	ev.kmsg_err = -EPERM;
	ev.cg_delta = 1;
	ev.vm_delta = 1;
	oom_decide(&ev, &v);
	assert_true(v.oom);
	assert_string_equal(v.event_kind, "oom_kill");
	assert_string_equal(v.memcg, "/x");
	assert_false(v.rss_known);
	assert_string_equal(v.note, "its memory cgroup counted 1 OOM kill meanwhile "
				    "(kernel log not readable)");
	assert_string_equal(v.detail, "evidence=cgroup cgroup_oom_kill=+1 memcg=/x kmsg=unreadable");
	/* records lost: the same */
	ev.kmsg_err = 0;
	ev.kmsg_lost = 1;
	oom_decide(&ev, &v);
	assert_true(v.oom);
	assert_non_null(strstr(v.note, "kernel log records were lost"));
}

static void test_host_count_only(void **state)
{
	(void)state;
	struct oom_evidence ev;
	struct oom_verdict v;
	base(&ev);
	ev.kmsg_err = -EPERM;
	ev.cg_known = false;
	ev.vm_delta = 1;
	oom_decide(&ev, &v);
	assert_false(v.oom);
	assert_string_equal(v.event_kind, "oom_suspect");
	assert_string_equal(v.note, "the host's OOM kill count rose by 1 meanwhile (kernel log "
				    "not readable): likely the OOM killer");
	/* nothing at all to go by */
	ev.vm_known = false;
	ev.vm_delta = 0;
	oom_decide(&ev, &v);
	assert_false(v.oom);
	assert_null(v.event_kind);
	assert_non_null(strstr(v.note, "not known"));
	/* counters that did not move, log unreadable: a plain SIGKILL */
	base(&ev);
	ev.kmsg_err = -EACCES;
	oom_decide(&ev, &v);
	assert_false(v.oom);
	assert_string_equal(v.note, "");
}

static void test_global_oom(void **state)
{
	(void)state;
	static const char line[] = "Out of memory: Killed process 12 (db) total-vm:8kB, "
				   "anon-rss:4kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:4kB "
				   "oom_score_adj:0";
	struct oom_evidence ev;
	struct oom_verdict v;
	base(&ev);
	assert_int_equal(kmsg_oom_parse(line, strlen(line), &ev.kill), 0);
	ev.kill_seen = true;
	oom_decide(&ev, &v);
	assert_true(v.oom);
	assert_string_equal(v.memcg, "");
	assert_string_equal(v.note, "the host ran out of memory");
	assert_non_null(strstr(v.detail, "memcg=- scope=host"));
}

static void test_outcome_words_oom(void **state)
{
	(void)state;
	struct run r;
	struct buf b = { 0 };
	memset(&r, 0, sizeof(r));
	strlcpy_rsw(r.outcome, OUTCOME_OOM_KILLED, sizeof(r.outcome));
	r.signal = 9;
	r.oom_memcg = "/x";
	r.oom_at = 1795919107LL * 1000000000;	/* 02:25:07 in the tests' TZ */
	r.oom_rss_known = 1;
	r.oom_anon_rss = (uint64_t)(629.6 * 1073741824.0);
	r.samples = 10;
	r.peak_rss = (uint64_t)(666.4 * 1073741824.0);
	r.peak_rss_at = 1795919059LL * 1000000000;
	outcome_words(&b, &r);
	assert_string_equal(buf_str(&b), "killed by the OOM killer (memory cgroup /x) at 02:25:07, "
					 "anon-rss 629.6 GiB; peak 666.4 GiB at 02:24:19");
	buf_reset(&b);
	strlcpy_rsw(r.outcome, OUTCOME_SIGNALED, sizeof(r.outcome));
	r.outcome_note = "the host's OOM kill count rose by 1 meanwhile (kernel log not "
			 "readable): likely the OOM killer";
	outcome_words(&b, &r);
	assert_string_equal(buf_str(&b), "killed by SIGKILL; the host's OOM kill count rose by 1 "
					 "meanwhile (kernel log not readable): likely the OOM killer");
	buf_release(&b);
}

struct kills_seen {
	size_t n, named;
	pid_t last;
	int64_t last_t;
	int went_back;
};

static void on_kill(void *ctx, const struct kmsg_oom *kill, const char *memcg, int64_t t)
{
	struct kills_seen *k = ctx;
	k->n++;
	k->named += memcg[0] != '\0';
	if (memcg[0] && strstr(memcg, "/rsswatch-14840") == NULL)
		fail_msg("kill of pid %d given another cgroup: %s", (int)kill->pid, memcg);
	k->went_back |= kill->pid <= k->last || t < k->last_t;
	k->last = kill->pid;
	k->last_t = t;
}

/* A crash loop's kernel log (stress-ng restarting its worker under a 256 MiB limit,
 * 54 kills in 6 s): the kernel rate-limits the report that holds the context line
 * (ten in five seconds), not the kill lines. Every kill line is handed on, in order;
 * only the ten that follow a context line of their own pid name the cgroup. */
static void test_crash_loop_log(void **state)
{
	(void)state;
	struct oom_watch *w = calloc(1, sizeof(*w));
	struct kills_seen k = { 0 };
	int fd = open("tests/fixtures/kmsg/kmsg-oom-crash-loop-v1.txt", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	kmsg_reader_open_fd(&w->kmsg, fd);
	oom_watch_drain(w, on_kill, &k);
	assert_int_equal(w->kmsg_err, 0);
	assert_int_equal(k.n, 54);
	assert_int_equal(k.named, 10);
	assert_false(k.went_back);
	oom_watch_close(w);
	free(w);
}

int main(void)
{
	setenv("TZ", "UTC", 1);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kill_line_is_certain),
		cmocka_unit_test(test_plain_sigkill),
		cmocka_unit_test(test_cgroup_without_log),
		cmocka_unit_test(test_host_count_only),
		cmocka_unit_test(test_global_oom),
		cmocka_unit_test(test_outcome_words_oom),
		cmocka_unit_test(test_crash_loop_log),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
