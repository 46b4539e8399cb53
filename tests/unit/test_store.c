/* The run database: schema creation and checks, batched writes, reads, the
 * "interrupted" rule, deletion. Each test works on a fresh file in a temp directory. */
#include "testutil.h"

#include <errno.h>
#include <sqlite3.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/util.h"
#include "record/recorder.h"
#include "source/proc.h"
#include "store/store.h"
#include "store/store_int.h"

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
	return remove_tree(dir);
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

/* user_version indexes the migrations: a negative one (anyone who can write the file
 * can set it) is refused as corrupt, by writers and readers, never used. */
static void test_negative_schema(void **state)
{
	(void)state;
	static const char *const v[] = { "-1", "-5", "-2147483648" };
	struct store *st = NULL;
	char err[256], sql[64];
	assert_int_equal(store_open(path, STORE_CREATE, &st, err, sizeof(err)), 0);
	store_close(st);
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		sqlite3 *db;
		assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
		snprintf(sql, sizeof(sql), "PRAGMA user_version = %s", v[i]);
		assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
		sqlite3_close(db);
		assert_int_equal(store_open(path, STORE_CREATE, &st, err, sizeof(err)), -EILSEQ);
		assert_non_null(strstr(err, "corrupt"));
		assert_non_null(strstr(err, v[i]));
		assert_int_equal(store_open(path, STORE_READONLY, &st, err, sizeof(err)), -EILSEQ);
		assert_int_equal(store_open(path, STORE_CREATE | STORE_SMALL, &st, err, sizeof(err)),
				 -EILSEQ);
	}
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
		s.mem.rss = (uint64_t)(i + 1) * 4096;
		s.mem.hwm = s.mem.rss;
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
	/* no time to exhaustion projected yet */
	assert_string_equal(got.min_eta_limit, "");
	assert_int_equal(got.min_eta_ns, -1);
	run_release(&got);
	assert_int_equal(store_delete_run(reader, r.id), -EBUSY);
	r.min_eta_ns = 42LL * 1000000000LL;
	r.min_eta_at = r.started_at + 7;
	strlcpy_rsw(r.min_eta_limit, "host", sizeof(r.min_eta_limit));

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
	assert_int_equal(got.min_eta_ns, 42LL * 1000000000LL);
	assert_int_equal(got.min_eta_at, r.started_at + 7);
	assert_string_equal(got.min_eta_limit, "host");
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
	/* the store itself cannot tell: only with its caller's word is the run over */
	assert_int_equal(store_get_run(st, r.id, &got), 0);
	assert_string_equal(got.outcome, OUTCOME_RUNNING);
	run_release(&got);
	store_set_alive(st, recorder_alive);
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

/* Schema 8: the run's own peak and its source, the process rows and the OOM kills
 * come back as written, and go with the run. */
static void test_processes_and_kills(void **state)
{
	(void)state;
	struct store *st = NULL;
	char err[256];
	struct run r, got;
	assert_int_equal(store_open(path, STORE_CREATE, &st, err, sizeof(err)), 0);
	new_run(&r);
	r.tree = 1;
	assert_int_equal(store_run_begin(st, &r), 0);

	struct proc_summary p[3];
	memset(p, 0, sizeof(p));
	p[0].pid = 100;
	p[0].ppid = 1;
	strlcpy_rsw(p[0].comm, "sh", sizeof(p[0].comm));
	p[0].first_ns = 0;
	p[0].end_ns = -1;
	p[0].peak_rss = 2 << 20;
	strlcpy_rsw(p[0].peak_source, PEAK_FROM_HWM, sizeof(p[0].peak_source));
	p[0].hwm_before = 3 << 20;
	strlcpy_rsw(p[0].ended, PROC_RUNNING, sizeof(p[0].ended));
	p[0].exit_code = -1;
	p[0].signal = -1;
	/* a shell alive at the end: its last read, io not permitted */
	p[0].cpu_user_ns = 30000000;
	p[0].cpu_sys_ns = 0;
	p[0].minflt = 120;
	p[0].majflt = 0;
	p[0].read_bytes = -1;
	p[0].write_bytes = -1;
	p[1] = p[0];
	p[1].pid = 101;
	p[1].ppid = 100;
	strlcpy_rsw(p[1].comm, "cc1 \"x\",\t", sizeof(p[1].comm));
	p[1].first_ns = 5000000;
	p[1].peak_rss = 50 << 20;
	p[1].hwm_before = -1;
	strlcpy_rsw(p[1].peak_source, PEAK_FROM_SAMPLE, sizeof(p[1].peak_source));
	p[1].cpu_user_ns = p[1].cpu_sys_ns = p[1].minflt = p[1].majflt = -1;
	p[2] = p[1];
	p[2].pid = 102;
	p[2].first_ns = 6000000;
	p[2].peak_rss = 9 << 20;
	assert_int_equal(store_put_processes(st, r.id, p, 3), 0);
	/* p[1] ends: its row is rewritten with the exact peak of its exit record */
	p[1].end_ns = 900000000;
	p[1].peak_rss = 60 << 20;
	strlcpy_rsw(p[1].peak_source, PEAK_FROM_EXIT, sizeof(p[1].peak_source));
	strlcpy_rsw(p[1].ended, PROC_EXITED, sizeof(p[1].ended));
	p[1].exit_code = 0;
	p[1].cpu_user_ns = 7000000000LL;	/* past 32 bits */
	p[1].cpu_sys_ns = 250000000;
	p[1].minflt = 51234;
	p[1].majflt = 17;
	p[1].read_bytes = 5LL << 32;
	p[1].write_bytes = 0;
	p[2].end_ns = 700000000;
	strlcpy_rsw(p[2].ended, PROC_OOM_KILLED, sizeof(p[2].ended));
	p[2].signal = 9;
	assert_int_equal(store_put_processes(st, r.id, p + 1, 2), 0);

	struct oom_kill k[2];
	memset(k, 0, sizeof(k));
	k[0].t = r.started_at + 800000000;
	k[0].pid = 103;
	strlcpy_rsw(k[0].comm, "late", sizeof(k[0].comm));
	k[1].t = r.started_at + 700000000;
	k[1].pid = 102;
	strlcpy_rsw(k[1].comm, "cc1 \"x\",\t", sizeof(k[1].comm));
	k[1].anon_rss = 8 << 20;
	k[1].file_rss = 1 << 20;
	k[1].shmem_rss = 4096;
	k[1].total_vm = 100 << 20;
	strlcpy_rsw(k[1].memcg, "/rsswatch-1", sizeof(k[1].memcg));
	assert_int_equal(store_add_oom_kill(st, r.id, &k[0]), 0);
	assert_int_equal(store_add_oom_kill(st, r.id, &k[1]), 0);

	r.hwm_before = 3 << 20;
	r.peak_source = PEAK_FROM_EXIT;
	r.oom_kills = 2;
	r.peak_process_rss = 60 << 20;
	r.peak_process_pid = 101;
	r.peak_process_comm = "cc1";
	r.exit_records = 1;
	r.peak_cgroup = 70 << 20;
	r.peak_cgroup_exact = 1;
	strlcpy_rsw(r.outcome, OUTCOME_EXITED, sizeof(r.outcome));
	r.exit_code = 0;
	r.ended_at = r.started_at + 1000000000;
	assert_int_equal(store_run_finish(st, &r), 0);

	assert_int_equal(store_get_run(st, r.id, &got), 0);
	assert_int_equal(got.hwm_before, 3 << 20);
	assert_string_equal(got.peak_source, PEAK_FROM_EXIT);
	assert_int_equal(got.oom_kills, 2);
	assert_int_equal(got.peak_process_rss, 60 << 20);
	assert_int_equal(got.peak_process_pid, 101);
	assert_string_equal(got.peak_process_comm, "cc1");
	assert_int_equal(got.exit_records, 1);
	assert_int_equal(got.peak_cgroup_exact, 1);
	run_release(&got);

	struct proc_summary *ps;
	size_t n;
	assert_int_equal(store_processes(st, r.id, &ps, &n), 0);
	assert_int_equal(n, 3);
	/* largest peak first */
	assert_int_equal(ps[0].pid, 101);
	assert_int_equal(ps[1].pid, 102);
	assert_int_equal(ps[2].pid, 100);
	assert_string_equal(ps[0].comm, "cc1 \"x\",\t");
	assert_int_equal(ps[0].ppid, 100);
	assert_int_equal(ps[0].first_ns, 5000000);
	assert_int_equal(ps[0].end_ns, 900000000);
	assert_int_equal(ps[0].peak_rss, 60 << 20);
	assert_string_equal(ps[0].peak_source, PEAK_FROM_EXIT);
	assert_int_equal(ps[0].hwm_before, -1);
	assert_string_equal(ps[0].ended, PROC_EXITED);
	assert_int_equal(ps[0].exit_code, 0);
	assert_int_equal(ps[0].signal, -1);
	assert_int_equal(ps[0].cpu_user_ns, 7000000000LL);
	assert_int_equal(ps[0].cpu_sys_ns, 250000000);
	assert_int_equal(ps[0].minflt, 51234);
	assert_int_equal(ps[0].majflt, 17);
	assert_int_equal(ps[0].read_bytes, 5LL << 32);
	assert_int_equal(ps[0].write_bytes, 0);	/* known to be none, not unknown */
	/* unknown: stored as NULL, loaded as -1 */
	assert_int_equal(ps[1].cpu_user_ns, -1);
	assert_int_equal(ps[1].majflt, -1);
	assert_int_equal(ps[1].read_bytes, -1);
	assert_int_equal(ps[2].cpu_user_ns, 30000000);
	assert_int_equal(ps[2].cpu_sys_ns, 0);
	assert_int_equal(ps[2].minflt, 120);
	assert_int_equal(ps[2].majflt, 0);
	assert_int_equal(ps[2].read_bytes, -1);
	assert_int_equal(ps[2].write_bytes, -1);
	assert_string_equal(ps[1].ended, PROC_OOM_KILLED);
	assert_int_equal(ps[1].exit_code, -1);
	assert_int_equal(ps[1].signal, 9);
	assert_int_equal(ps[2].end_ns, -1);
	assert_int_equal(ps[2].hwm_before, 3 << 20);
	assert_string_equal(ps[2].ended, PROC_RUNNING);
	free(ps);

	struct oom_kill *ks;
	assert_int_equal(store_oom_kills(st, r.id, &ks, &n), 0);
	assert_int_equal(n, 2);
	/* time order, not the order written */
	assert_int_equal(ks[0].pid, 102);
	assert_true(ks[0].t == k[1].t);
	assert_string_equal(ks[0].comm, "cc1 \"x\",\t");
	assert_int_equal(ks[0].anon_rss, 8 << 20);
	assert_int_equal(ks[0].file_rss, 1 << 20);
	assert_int_equal(ks[0].shmem_rss, 4096);
	assert_int_equal(ks[0].total_vm, 100 << 20);
	assert_string_equal(ks[0].memcg, "/rsswatch-1");
	assert_int_equal(ks[1].pid, 103);
	assert_string_equal(ks[1].memcg, "");
	free(ks);

	assert_int_equal(store_delete_run(st, r.id), 0);
	assert_int_equal(store_processes(st, r.id, &ps, &n), 0);
	assert_int_equal(n, 0);
	free(ps);
	assert_int_equal(store_oom_kills(st, r.id, &ks, &n), 0);
	assert_int_equal(n, 0);
	free(ks);
	store_close(st);
}

struct proc_rows {
	struct buf b;
	size_t n;
};

static int proc_row_cb(void *ctx, int64_t elapsed_ns, const struct proc_figures *p)
{
	struct proc_rows *pr = ctx;
	buf_printf(&pr->b, "%lld|%d|%d|%s|%llu|%llu|%llu|%llu|%llu\n", (long long)elapsed_ns,
		   (int)p->pid, (int)p->ppid, p->comm, (unsigned long long)p->mem.rss,
		   (unsigned long long)p->mem.anon, (unsigned long long)p->mem.file,
		   (unsigned long long)p->mem.shmem, (unsigned long long)p->mem.swap);
	pr->n++;
	return 0;
}

static int view_row_cb(void *ctx, int ncols, char **vals, char **names)
{
	struct proc_rows *pr = ctx;
	(void)names;
	for (int i = 0; i < ncols; i++)
		buf_printf(&pr->b, "%s%s", i ? "|" : "", vals[i] ? vals[i] : "NULL");
	buf_putc(&pr->b, '\n');
	pr->n++;
	return 0;
}

/* store_each_proc_at_sample gives exactly the rows of the view proc_at_sample: members
 * that come, change, leave, and a pid that comes back after leaving. */
static void test_proc_at_sample(void **state)
{
	(void)state;
	struct store *st = NULL;
	char err[256];
	struct run r;
	assert_int_equal(store_open(path, STORE_CREATE, &st, err, sizeof(err)), 0);
	new_run(&r);
	r.tree = 1;
	assert_int_equal(store_run_begin(st, &r), 0);
	struct sample s;
	memset(&s, 0, sizeof(s));
	struct proc_figures f;
	for (int i = 0; i < 12; i++) {
		s.elapsed_ns = (int64_t)i * 1000;
		assert_int_equal(store_add_sample(st, r.id, &s), 0);
		r.samples++;
		for (int pid = 10; pid < 14; pid++) {
			memset(&f, 0, sizeof(f));
			f.pid = pid;
			f.ppid = 10;
			snprintf(f.comm, sizeof(f.comm), "p%d", pid);
			f.mem.rss = (uint64_t)(pid * 100 + i);
			f.mem.anon = 1;
			f.mem.file = 2;
			f.mem.shmem = 3;
			f.mem.swap = 4;
			if (pid == 10 && i > 0)
				continue;	/* pid 10 never changes: its first row stands */
			if (pid == 11 && i % 3)
				continue;	/* stored every third sample */
			if (pid == 12 && i >= 4 && i < 8) {
				f.gone = i == 4;	/* leaves at 4, back at 8 */
				if (!f.gone)
					continue;
			}
			if (pid == 13 && i < 6)
				continue;	/* comes at 6 */
			assert_int_equal(store_add_proc(st, r.id, s.elapsed_ns, &f), 0);
		}
	}
	assert_int_equal(store_flush(st, &r), 0);

	struct proc_rows got = { { 0 }, 0 }, want = { { 0 }, 0 };
	assert_int_equal(store_each_proc_at_sample(st, r.id, proc_row_cb, &got), 0);
	sqlite3 *db;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	char sql[256];
	snprintf(sql, sizeof(sql), "SELECT elapsed_ns, pid, ppid, comm, rss, anon, file, shmem, swap"
		 " FROM proc_at_sample WHERE run_id = %lld ORDER BY elapsed_ns, pid", (long long)r.id);
	assert_int_equal(sqlite3_exec(db, sql, view_row_cb, &want, NULL), SQLITE_OK);
	sqlite3_close(db);
	/* 12 samples of pid 10 and 11, 8 of 12, 6 of 13 */
	assert_int_equal(want.n, 12 + 12 + 8 + 6);
	assert_string_equal(buf_str(&got.b), buf_str(&want.b));
	assert_non_null(strstr(buf_str(&got.b), "\n5000|11|10|p11|1103|1|2|3|4\n"));
	buf_release(&got.b);
	buf_release(&want.b);
	store_close(st);
}

/* --- the column tables against the schema --- */

/* The columns of table name in db (PRAGMA table_info): "name TYPE" each, sorted, one
 * per line. */
static void schema_columns(sqlite3 *db, const char *name, struct buf *out)
{
	char sql[96];
	sqlite3_stmt *s;
	snprintf(sql, sizeof(sql), "SELECT name, type FROM pragma_table_info('%s') ORDER BY name",
		 name);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK);
	while (sqlite3_step(s) == SQLITE_ROW)
		buf_printf(out, "%s %s\n", sqlite3_column_text(s, 0), sqlite3_column_text(s, 1));
	sqlite3_finalize(s);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The same lines from a column table: its keys (INTEGER) and its columns. */
static void table_columns(const struct store_table *t, struct buf *out)
{
	char *lines[64];
	size_t n = 0;
	for (size_t k = 0; t->keys[k]; k++)
		lines[n++] = xstrdup(t->keys[k]);
	for (size_t i = 0; i < t->ncols; i++) {
		struct buf b = { 0 };
		buf_printf(&b, "%s", t->cols[i].name);
		lines[n++] = b.p;
		assert_true(n < ARRAY_SIZE(lines));
	}
	qsort(lines, n, sizeof(*lines), cmp_str);
	for (size_t i = 0; i < n; i++) {
		const char *type = "INTEGER";
		for (size_t j = 0; j < t->ncols; j++)
			if (strcmp(t->cols[j].name, lines[i]) == 0)
				type = t->cols[j].sql_type;
		buf_printf(out, "%s %s\n", lines[i], type);
		free(lines[i]);
	}
}

static const struct store_table *const tables[] = {
	&store_run_table, &store_sample_table, &store_proc_sample_table, &store_process_table,
};

/* Every column a table names exists, with its type, in a freshly migrated database,
 * and the database has no column the table lacks. */
static void test_tables_match_schema(void **state)
{
	(void)state;
	struct store *st = NULL;
	char err[256];
	assert_int_equal(store_open(path, STORE_CREATE, &st, err, sizeof(err)), 0);
	store_close(st);
	sqlite3 *db;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	for (size_t i = 0; i < ARRAY_SIZE(tables); i++) {
		struct buf want = { 0 }, got = { 0 };
		table_columns(tables[i], &want);
		schema_columns(db, tables[i]->name, &got);
		assert_true(got.len > 0);
		assert_string_equal(buf_str(&got), buf_str(&want));
		buf_release(&want);
		buf_release(&got);
	}
	sqlite3_close(db);
}

/* --- a database at every old schema version --- */

/* The value the migration test stores in column i of a table: distinct per column,
 * positive (so no NULL rule applies), and fitting every kind of field. */
static int64_t test_int(size_t i)
{
	return 1000 + 13 * (int64_t)i;
}

static double test_real(size_t i)
{
	return 0.25 + (double)i;
}

/* Text: the column's name, cut to fit a char[size] field. */
static void test_text(const struct store_column *c, char *out, size_t n)
{
	strlcpy_rsw(out, c->name, c->kind == COL_CHARS && c->size < n ? c->size : n);
}

static size_t col_index(const struct store_table *t, const char *name)
{
	for (size_t i = 0; i < t->ncols; i++)
		if (strcmp(t->cols[i].name, name) == 0)
			return i;
	fail_msg("no column %s in %s", name, t->name);
	return 0;
}

static int has_column(sqlite3 *db, const char *table, const char *col)
{
	struct buf b = { 0 };
	schema_columns(db, table, &b);
	char want[80];
	snprintf(want, sizeof(want), "%s ", col);
	int found = 0;
	for (const char *p = buf_str(&b); *p; p = strchr(p, '\n') + 1)
		if (strncmp(p, want, strlen(want)) == 0)
			found = 1;
	buf_release(&b);
	return found;
}

/* Inserts one row of t into db with the columns db has (the schema of an old version):
 * keys run_id (and elapsed_ns), the others test values; the column gone (a member
 * that left) stays 0, so the member is seen. */
static void insert_old_row(sqlite3 *db, const struct store_table *t, int64_t run_id,
			   int64_t elapsed_ns)
{
	struct buf cols = { 0 }, vals = { 0 };
	size_t n = 0;
	for (size_t k = 0; t->keys[k]; k++, n++) {
		buf_printf(&cols, "%s%s", n ? ", " : "", t->keys[k]);
		buf_printf(&vals, "%s%lld", n ? ", " : "",
			   (long long)(strcmp(t->keys[k], "run_id") == 0 ? run_id : elapsed_ns));
	}
	for (size_t i = 0; i < t->ncols; i++) {
		const struct store_column *c = &t->cols[i];
		if (!has_column(db, t->name, c->name))
			continue;
		buf_printf(&cols, "%s%s", n ? ", " : "", c->name);
		if (n)
			buf_puts(&vals, ", ");
		n++;
		char text[64];
		if (strcmp(c->name, "gone") == 0)
			buf_puts(&vals, "0");
		else if (t == &store_run_table && strcmp(c->name, "id") == 0)
			buf_printf(&vals, "%lld", (long long)run_id);
		else if (t == &store_sample_table && strcmp(c->name, "elapsed_ns") == 0)
			buf_printf(&vals, "%lld", (long long)elapsed_ns);
		else if (c->kind == COL_F64)
			buf_printf(&vals, "%.2f", test_real(i));
		else if (c->kind == COL_TEXT || c->kind == COL_CHARS) {
			test_text(c, text, sizeof(text));
			buf_printf(&vals, "'%s'", text);
		} else
			buf_printf(&vals, "%lld", (long long)test_int(i));
	}
	struct buf sql = { 0 };
	buf_printf(&sql, "INSERT INTO %s (%s) VALUES (%s)", t->name, buf_str(&cols), buf_str(&vals));
	assert_int_equal(sqlite3_exec(db, buf_str(&sql), NULL, NULL, NULL), SQLITE_OK);
	buf_release(&sql);
	buf_release(&cols);
	buf_release(&vals);
}

/* Checks a row loaded from the store against what insert_old_row stored: each column
 * that existed at the old version holds its value, each added since its NULL or
 * default value (dflt, ""); have is the set of optional figures the old columns
 * stored. skip: the key columns set apart. */
static void check_loaded_row(const struct store_table *t, const void *row, const char *present,
			     const char *skip)
{
	for (size_t i = 0; i < t->ncols; i++) {
		const struct store_column *c = &t->cols[i];
		char want[64], name[80];
		if (strstr(skip, c->name))
			continue;
		snprintf(name, sizeof(name), "|%s|", c->name);
		int had = strstr(present, name) != NULL;
		if (c->kind == COL_TEXT || c->kind == COL_CHARS) {
			if (had)
				test_text(c, want, sizeof(want));
			else
				want[0] = '\0';
			assert_string_equal(store_column_text(c, row), want);
		} else if (c->kind == COL_F64) {
			assert_true(store_column_f64(c, row) == (had ? test_real(i) : (double)c->dflt));
		} else if (strcmp(c->name, "gone") == 0) {
			assert_int_equal(store_column_i64(c, row), 0);
		} else {
			assert_int_equal(store_column_i64(c, row), had ? test_int(i) : c->dflt);
		}
	}
}

/* "|a|b|...|": the columns of table t that db has. */
static void present_columns(sqlite3 *db, const struct store_table *t, struct buf *out)
{
	buf_putc(out, '|');
	for (size_t i = 0; i < t->ncols; i++)
		if (has_column(db, t->name, t->cols[i].name))
			buf_printf(out, "%s|", t->cols[i].name);
}

struct loaded {
	struct sample s;
	size_t n;
	struct proc_figures p;
	int64_t p_elapsed;
	size_t np;
};

static int keep_sample(void *ctx, const struct sample *s)
{
	struct loaded *l = ctx;
	l->s = *s;
	l->n++;
	return 0;
}

static int keep_proc(void *ctx, int64_t elapsed_ns, const struct proc_figures *p)
{
	struct loaded *l = ctx;
	l->p = *p;
	l->p_elapsed = elapsed_ns;
	l->np++;
	return 0;
}

/* A database left at each old schema version 1 .. current - 1, with a run, a sample,
 * a member of a set and a process stored as that version had them, opens at the
 * current version, and every old row loads with its values. */
static void test_every_old_schema(void **state)
{
	(void)state;
	const int64_t run_id = 7, elapsed = 5000000;
	assert_true(store_schema_version > 1);
	for (int v = 1; v < store_schema_version; v++) {
		char p[160], sql[96];
		snprintf(p, sizeof(p), "%s/v%d.db", dir, v);
		sqlite3 *db;
		assert_int_equal(sqlite3_open(p, &db), SQLITE_OK);
		for (int k = 0; k < v; k++)
			assert_int_equal(sqlite3_exec(db, store_migrations[k], NULL, NULL, NULL), SQLITE_OK);
		snprintf(sql, sizeof(sql), "PRAGMA application_id = %d; PRAGMA user_version = %d",
			 STORE_APPLICATION_ID, v);
		assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
		insert_old_row(db, &store_run_table, run_id, 0);
		insert_old_row(db, &store_sample_table, run_id, elapsed);
		int sets = has_column(db, "proc_sample", "pid"), procs = has_column(db, "process", "pid");
		if (sets)
			insert_old_row(db, &store_proc_sample_table, run_id, elapsed);
		if (procs)
			insert_old_row(db, &store_process_table, run_id, 0);
		struct buf run_had = { 0 }, sample_had = { 0 }, ps_had = { 0 }, pr_had = { 0 };
		present_columns(db, &store_run_table, &run_had);
		present_columns(db, &store_sample_table, &sample_had);
		present_columns(db, &store_proc_sample_table, &ps_had);
		present_columns(db, &store_process_table, &pr_had);
		sqlite3_close(db);

		struct store *st = NULL;
		char err[256];
		assert_int_equal(store_open(p, 0, &st, err, sizeof(err)), 0);
		int now = 0;
		assert_int_equal(sqlite3_open(p, &db), SQLITE_OK);
		sqlite3_stmt *s;
		assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &s, NULL), SQLITE_OK);
		assert_int_equal(sqlite3_step(s), SQLITE_ROW);
		now = sqlite3_column_int(s, 0);
		sqlite3_finalize(s);
		sqlite3_close(db);
		assert_int_equal(now, store_schema_version);

		struct run got;
		assert_int_equal(store_get_run(st, run_id, &got), 0);
		assert_int_equal(got.id, run_id);
		assert_string_equal(got.label, "label");	/* schema 1 */
		assert_string_equal(got.outcome, "outcome");
		check_loaded_row(&store_run_table, &got, buf_str(&run_had), "|id|");
		assert_int_equal(got.oom_rss_known, strstr(buf_str(&run_had), "|oom_anon_rss|") != NULL);
		/* what a run of an older rsswatch says about what it did not know yet */
		if (v < 10) {
			assert_int_equal(got.min_eta_ns, -1);
			assert_string_equal(got.min_eta_limit, "");
		}
		if (v < 8) {
			assert_int_equal(got.hwm_before, -1);
			assert_int_equal(got.peak_process_pid, 0);
			assert_string_equal(got.peak_source, "");
		}
		if (v < 3) {
			assert_int_equal(got.oom_at, 0);
			assert_int_equal(got.cgroup_limit, 0);
			assert_string_equal(got.cgroup, "");
		}
		assert_int_equal(got.exit_code, test_int(col_index(&store_run_table, "exit_code")));
		run_release(&got);

		struct loaded l;
		memset(&l, 0, sizeof(l));
		assert_int_equal(store_each_sample(st, run_id, keep_sample, &l), 0);
		assert_int_equal(l.n, 1);
		assert_int_equal(l.s.elapsed_ns, elapsed);
		assert_true(l.s.mem.rss > 0);
		check_loaded_row(&store_sample_table, &l.s, buf_str(&sample_had), "|elapsed_ns|");
		unsigned have = 0;
		for (size_t i = 0; i < store_sample_table.ncols; i++) {
			const struct store_column *c = &store_sample_table.cols[i];
			char name[80];
			snprintf(name, sizeof(name), "|%s|", c->name);
			if (c->null == COL_NULL_UNLESS_FLAG && strstr(buf_str(&sample_had), name))
				have |= c->flag;
		}
		assert_int_equal(l.s.have, have);
		assert_true((have & SAMPLE_PSS) && (have & SAMPLE_GPU));	/* schema 1 had them */

		assert_int_equal(store_each_proc_at_sample(st, run_id, keep_proc, &l), 0);
		assert_int_equal(l.np, sets ? 1 : 0);
		if (sets) {
			assert_int_equal(l.p_elapsed, elapsed);
			check_loaded_row(&store_proc_sample_table, &l.p, buf_str(&ps_had), "");
		}
		struct proc_summary *ps;
		size_t np;
		assert_int_equal(store_processes(st, run_id, &ps, &np), 0);
		assert_int_equal(np, procs ? 1 : 0);
		if (procs)
			check_loaded_row(&store_process_table, ps, buf_str(&pr_had), "");
		if (procs && v < 12) {
			/* an older rsswatch kept no process's context: unknown, not zero */
			assert_int_equal(ps[0].cpu_user_ns, -1);
			assert_int_equal(ps[0].cpu_sys_ns, -1);
			assert_int_equal(ps[0].minflt, -1);
			assert_int_equal(ps[0].majflt, -1);
			assert_int_equal(ps[0].read_bytes, -1);
			assert_int_equal(ps[0].write_bytes, -1);
		}
		free(ps);
		buf_release(&run_had);
		buf_release(&sample_had);
		buf_release(&ps_had);
		buf_release(&pr_had);
		store_close(st);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_open_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_ours, setup, teardown),
		cmocka_unit_test_setup_teardown(test_newer_schema, setup, teardown),
		cmocka_unit_test_setup_teardown(test_negative_schema, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_interrupted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_processes_and_kills, setup, teardown),
		cmocka_unit_test_setup_teardown(test_proc_at_sample, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tables_match_schema, setup, teardown),
		cmocka_unit_test_setup_teardown(test_every_old_schema, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
