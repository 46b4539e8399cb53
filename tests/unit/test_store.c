/* The run database: schema creation and checks, batched writes, reads, the
 * "interrupted" rule, deletion. Each test works on a fresh file in a temp directory. */
#include "testutil.h"

#include <errno.h>
#include <sqlite3.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "source/proc.h"
#include "store/store.h"

static char dir[64];
static char path[128];

static int setup(void **state)
{
	(void)state;
	strlcpy_rsw(dir, "/tmp/rsswatch-store-XXXXXX", sizeof(dir));
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/sub/dir/runs.db", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[160];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void new_run(struct run *r)
{
	memset(r, 0, sizeof(*r));
	r->label = "lbl";
	r->host = "host";
	r->kernel = "6.18";
	r->target = "memhog +1M";
	r->mode = "command";
	r->pid = 4242;
	r->started_at = 1795919059LL * 1000000000;
	r->interval_ns = 100000000;
	strlcpy_rsw(r->outcome, OUTCOME_RUNNING, sizeof(r->outcome));
	r->exit_code = -1;
	r->signal = -1;
	r->peak_gpu = -1;
	/* this process is the recorder: alive */
	struct proc_stat ps;
	assert_int_equal(proc_read_stat(getpid(), &ps), 0);
	r->recorder_pid = getpid();
	r->recorder_start = ps.starttime;
	static char boot[64];
	assert_int_equal(proc_read_boot_id(boot, sizeof(boot)), 0);
	r->boot_id = boot;
}

static void test_open_missing(void **state)
{
	(void)state;
	struct store *st = NULL;
	char err[256];
	assert_int_equal(store_open(path, 0, &st, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "no runs recorded yet"));
	assert_int_equal(store_open(path, STORE_CREATE, &st, err, sizeof(err)), 0);
	store_close(st);
	/* the nested directory was created */
	struct stat sb;
	assert_int_equal(stat(path, &sb), 0);
}

static void test_not_ours(void **state)
{
	(void)state;
	struct store *st = NULL;
	char err[256];
	snprintf(path, sizeof(path), "%s/text.db", dir);
	FILE *f = fopen(path, "w");
	fputs("this is not a database, just some text that is long enough to look like a header\n", f);
	fclose(f);
	assert_int_equal(store_open(path, STORE_CREATE, &st, err, sizeof(err)), -EILSEQ);
	assert_non_null(strstr(err, "not an rsswatch database"));

	snprintf(path, sizeof(path), "%s/other.db", dir);
	sqlite3 *db;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "CREATE TABLE t (x)", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(store_open(path, STORE_CREATE, &st, err, sizeof(err)), -EILSEQ);
}

static void test_newer_schema(void **state)
{
	(void)state;
	struct store *st = NULL;
	char err[256];
	assert_int_equal(store_open(path, STORE_CREATE, &st, err, sizeof(err)), 0);
	store_close(st);
	sqlite3 *db;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "PRAGMA user_version = 99", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(store_open(path, STORE_CREATE, &st, err, sizeof(err)), -EPROTONOSUPPORT);
	assert_non_null(strstr(err, "99"));
}

static int count_cb(void *ctx, const struct sample *s)
{
	int64_t *last = ctx;
	assert_true(s->elapsed_ns > last[0] || last[1] == 0);	/* time order */
	last[0] = s->elapsed_ns;
	last[1]++;
	return 0;
}

static void test_write_read(void **state)
{
	(void)state;
	struct store *st = NULL;
	char err[256];
	struct run r, got;
	assert_int_equal(store_open(path, STORE_CREATE, &st, err, sizeof(err)), 0);
	new_run(&r);
	assert_int_equal(store_run_begin(st, &r), 0);
	assert_true(r.id > 0);

	struct sample s;
	memset(&s, 0, sizeof(s));
	for (int i = 0; i < 1000; i++) {
		s.elapsed_ns = (int64_t)i * 1000000;
		s.rss = (uint64_t)(i + 1) * 4096;
		s.hwm = s.rss;
		assert_int_equal(store_add_sample(st, r.id, &s), 0);
		r.samples++;
	}
	r.peak_rss = 1000 * 4096;
	/* not flushed: another connection sees no samples yet */
	int64_t cnt[2] = { 0, 0 };
	struct store *reader = NULL;
	assert_int_equal(store_open(path, 0, &reader, err, sizeof(err)), 0);
	assert_int_equal(store_each_sample(reader, r.id, count_cb, cnt), 0);
	assert_int_equal(cnt[1], 0);
	assert_int_equal(store_flush(st, &r), 0);
	assert_int_equal(store_each_sample(reader, r.id, count_cb, cnt), 0);
	assert_int_equal(cnt[1], 1000);

	/* still recording (this process is alive): "running" */
	assert_int_equal(store_get_run(reader, r.id, &got), 0);
	assert_string_equal(got.outcome, OUTCOME_RUNNING);
	assert_int_equal(got.samples, 1000);
	assert_string_equal(got.label, "lbl");
	run_release(&got);
	assert_int_equal(store_delete_run(reader, r.id), -EBUSY);

	strlcpy_rsw(r.outcome, OUTCOME_EXITED, sizeof(r.outcome));
	r.exit_code = 3;
	r.ended_at = r.started_at + 1000000000;
	assert_int_equal(store_add_event(st, r.id, r.ended_at, "exit", r.pid, "exited with 3"), 0);
	assert_int_equal(store_add_mark(st, r.id, r.started_at + 5, "stage <1>"), 0);
	assert_int_equal(store_run_finish(st, &r), 0);
	assert_int_equal(store_get_run(reader, r.id, &got), 0);
	assert_string_equal(got.outcome, OUTCOME_EXITED);
	assert_int_equal(got.exit_code, 3);
	assert_int_equal(got.signal, -1);
	assert_int_equal(got.peak_gpu, -1);
	run_release(&got);

	struct event *ev;
	struct mark *mk;
	size_t ne, nm;
	assert_int_equal(store_events(reader, r.id, &ev, &ne), 0);
	assert_int_equal(ne, 1);
	assert_string_equal(ev[0].kind, "exit");
	store_free_events(ev, ne);
	assert_int_equal(store_marks(reader, r.id, &mk, &nm), 0);
	assert_int_equal(nm, 1);
	assert_string_equal(mk[0].label, "stage <1>");
	store_free_marks(mk, nm);

	int64_t id;
	assert_int_equal(store_resolve(reader, "last", &id), 0);
	assert_int_equal(id, r.id);
	assert_int_equal(store_resolve(reader, "999", &id), -ENOENT);
	assert_int_equal(store_resolve(reader, "abc", &id), -EINVAL);
	assert_int_equal(store_resolve(reader, "0", &id), -EINVAL);
	assert_int_equal(store_resolve(reader, "", &id), -EINVAL);

	assert_int_equal(store_delete_run(reader, r.id), 0);
	assert_int_equal(store_get_run(reader, r.id, &got), -ENOENT);
	cnt[1] = 0;
	assert_int_equal(store_each_sample(reader, r.id, count_cb, cnt), 0);
	assert_int_equal(cnt[1], 0);
	assert_int_equal(store_resolve(reader, "last", &id), -ENOENT);
	store_close(reader);
	store_close(st);
}

static void test_interrupted(void **state)
{
	(void)state;
	struct store *st = NULL;
	char err[256];
	struct run r, got;
	assert_int_equal(store_open(path, STORE_CREATE, &st, err, sizeof(err)), 0);
	new_run(&r);
	r.recorder_start += 1;	/* the pid now belongs to another process: recorder gone */
	assert_int_equal(store_run_begin(st, &r), 0);
	r.last_at = r.started_at + 2000000000;
	assert_int_equal(store_flush(st, &r), 0);
	assert_int_equal(store_get_run(st, r.id, &got), 0);
	assert_string_equal(got.outcome, OUTCOME_INTERRUPTED);
	assert_true(got.ended_at == r.last_at);
	run_release(&got);

	struct run *list;
	size_t n;
	new_run(&r);
	r.boot_id = "another-boot";
	assert_int_equal(store_run_begin(st, &r), 0);
	assert_int_equal(store_list_runs(st, 0, &list, &n), 0);
	assert_int_equal(n, 2);
	assert_true(list[0].id > list[1].id);	/* newest first */
	assert_string_equal(list[0].outcome, OUTCOME_INTERRUPTED);
	store_free_runs(list, n);
	assert_int_equal(store_list_runs(st, 1, &list, &n), 0);
	assert_int_equal(n, 1);
	store_free_runs(list, n);
	store_close(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_open_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_ours, setup, teardown),
		cmocka_unit_test_setup_teardown(test_newer_schema, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_interrupted, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
