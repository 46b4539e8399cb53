/* Retention (src/store/retention.c): thinning keeps every bucket's maximum, the first and
 * last samples and the run's summary; only finished runs older than the age bound are
 * thinned; a run being recorded is never touched; a dry run changes nothing; the size
 * bound empties series only as a last resort. Each test works on a fresh file. */
#include "testutil.h"

#include <errno.h>
#include <sqlite3.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/parse.h"
#include "base/util.h"
#include "source/proc.h"
#include "store/store.h"

static char dir[64];
static char path[128];

#define MS 1000000LL
#define DAY (86400LL * 1000000000LL)

static int setup(void **state)
{
	(void)state;
	strlcpy_rsw(dir, "/tmp/rsswatch-retention-XXXXXX", sizeof(dir));
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/runs.db", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return remove_tree(dir);
}

static uint64_t lcg(uint64_t *x)
{
	*x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
	return *x >> 33;
}

/* A run of n samples every 10 ms that started age_ns before now (this process as its
 * recorder), with a spike at sample spike_at, a PSS figure every 7th sample and a gauge
 * counter at every sample; finished (exited) unless running. Returns its id. */
static int64_t add_run(struct store *st, int n, int spike_at, int64_t age_ns, int running,
		       uint64_t seed)
{
	static char boot[64];
	struct proc_stat ps;
	struct run r;
	memset(&r, 0, sizeof(r));
	r.label = "lbl";
	r.host = "host";
	r.kernel = "6.18";
	r.target = "memhog";
	r.mode = "command";
	r.pid = 4242;
	r.interval_ns = 10 * MS;
	r.started_at = real_ns() - age_ns;
	strlcpy_rsw(r.outcome, OUTCOME_RUNNING, sizeof(r.outcome));
	r.exit_code = r.signal = -1;
	r.peak_gpu = -1;
	assert_int_equal(proc_read_stat(getpid(), &ps), 0);
	assert_int_equal(proc_read_boot_id(boot, sizeof(boot)), 0);
	r.recorder_pid = getpid();
	r.recorder_start = ps.starttime;
	r.boot_id = boot;
	assert_int_equal(store_run_begin(st, &r), 0);

	struct sample s;
	for (int i = 0; i < n; i++) {
		memset(&s, 0, sizeof(s));
		s.elapsed_ns = (int64_t)i * 10 * MS;
		s.mem.rss = (8u << 20) + (lcg(&seed) % 4096) * 4096;
		if (i == spike_at)
			s.mem.rss = 512u << 20;
		s.mem.hwm = s.mem.rss > r.peak_rss ? s.mem.rss : r.peak_rss;
		s.mem.anon = s.mem.rss / 2;
		s.mem_available = (10ULL << 30) - s.mem.rss - (lcg(&seed) % 1024) * 4096;
		s.threads = 1 + (uint32_t)(lcg(&seed) % 8);
		if (i % 7 == 0) {
			s.have |= SAMPLE_PSS;
			s.pss = s.mem.rss - (lcg(&seed) % 256) * 4096;
			s.uss = s.pss / 2;
		}
		assert_int_equal(store_add_sample(st, r.id, &s), 0);
		assert_int_equal(store_add_counter(st, r.id, s.elapsed_ns, "in_flight",
						   (long long)(lcg(&seed) % 100)), 0);
		if (s.mem.rss > r.peak_rss) {
			r.peak_rss = s.mem.rss;
			r.peak_rss_at = r.started_at + s.elapsed_ns;
		}
		r.samples++;
		r.sum_rss += (double)s.mem.rss;
		r.last_rss = s.mem.rss;
		r.last_at = r.started_at + s.elapsed_ns;
		if (i % 256 == 255)
			assert_int_equal(store_flush(st, &r), 0);
	}
	assert_int_equal(store_add_mark(st, r.id, r.started_at + 5 * MS, "stage"), 0);
	if (running) {
		assert_int_equal(store_flush(st, &r), 0);
		return r.id;
	}
	strlcpy_rsw(r.outcome, OUTCOME_EXITED, sizeof(r.outcome));
	r.exit_code = 0;
	r.ended_at = r.last_at;
	assert_int_equal(store_add_event(st, r.id, r.ended_at, "exit", r.pid, "exited with 0"), 0);
	assert_int_equal(store_run_finish(st, &r), 0);
	return r.id;
}

struct series {
	struct sample *s;
	size_t n, cap;
};

static int collect(void *ctx, const struct sample *s)
{
	struct series *v = ctx;
	v->s = xgrow(v->s, v->n, &v->cap, sizeof(*v->s));
	v->s[v->n++] = *s;
	return 0;
}

static struct series load(struct store *st, int64_t id)
{
	struct series v = { 0 };
	assert_int_equal(store_each_sample(st, id, collect, &v), 0);
	return v;
}

struct counters {
	int64_t t[200000];
	long long v[200000];
	size_t n;
};

static int collect_counter(void *ctx, int64_t t, const char *name, long long value)
{
	struct counters *c = ctx;
	assert_string_equal(name, "in_flight");
	assert_true(c->n < 200000);
	c->t[c->n] = t;
	c->v[c->n++] = value;
	return 0;
}

static struct store *open_db(void)
{
	struct store *st = NULL;
	char err[256];
	assert_int_equal(store_open(path, STORE_CREATE, &st, err, sizeof(err)), 0);
	return st;
}

static void test_bucket_ns(void **state)
{
	(void)state;
	/* points - 2 buckets between the first and the last sample, rounded up */
	assert_int_equal(store_gc_bucket_ns(980, 1, 100), 10);
	assert_int_equal(store_gc_bucket_ns(981, 1, 100), 11);
	/* never under the interval */
	assert_int_equal(store_gc_bucket_ns(980, 50, 100), 50);
	/* degenerate spans and levels */
	assert_int_equal(store_gc_bucket_ns(0, 7, 100), 7);
	assert_int_equal(store_gc_bucket_ns(100, 0, 2), 1);
	assert_int_equal(store_gc_bucket_ns(5, 0, 1000), 1);
}

static void test_parse_age(void **state)
{
	(void)state;
	int64_t ns = 0;
	assert_int_equal(parse_age_ns("30d", &ns), 0);
	assert_int_equal(ns, 30 * DAY);
	assert_int_equal(parse_age_ns("2w", &ns), 0);
	assert_int_equal(ns, 14 * DAY);
	assert_int_equal(parse_age_ns("1.5h", &ns), 0);
	assert_int_equal(ns, 5400LL * 1000000000LL);
	assert_int_equal(parse_age_ns("90m", &ns), 0);
	assert_int_equal(ns, 5400LL * 1000000000LL);
	assert_int_equal(parse_age_ns("0s", &ns), 0);
	assert_int_equal(ns, 0);
	ns = 42;
	assert_int_equal(parse_age_ns("30", &ns), -EINVAL);	/* a unit is required */
	assert_int_equal(parse_age_ns("30ms", &ns), -EINVAL);
	assert_int_equal(parse_age_ns("-1d", &ns), -EINVAL);
	assert_int_equal(parse_age_ns("d", &ns), -EINVAL);
	assert_int_equal(parse_age_ns("1dd", &ns), -EINVAL);
	assert_int_equal(parse_age_ns("", &ns), -EINVAL);
	assert_int_equal(parse_age_ns("6000w", &ns), -ERANGE);
	assert_int_equal(ns, 42);	/* untouched on failure */
}

/* Thinning by age: every bucket's maximum survives at the time it was reached, the
 * first and last samples stay, the summary, marks and events stay. */
static void test_thin_keeps_bucket_max(void **state)
{
	(void)state;
	struct store *st = open_db();
	const int n = 20000;
	int64_t id = add_run(st, n, 12345, 2 * DAY, 0, 7);
	struct series before = load(st, id);
	assert_int_equal(before.n, (size_t)n);
	struct counters *cb = calloc(1, sizeof(*cb)), *ca = calloc(1, sizeof(*ca));
	assert_int_equal(store_each_counter(st, id, collect_counter, cb), 0);
	struct run r0, r1;
	assert_int_equal(store_get_run(st, id, &r0), 0);

	struct store_gc_opts o = { .keep_ns = DAY, .now_ns = real_ns() };
	struct store_gc_result res;
	assert_int_equal(store_gc(st, &o, NULL, NULL, &res), 0);
	assert_int_equal(res.runs_thinned, 1);
	assert_int_equal(res.runs_emptied, 0);
	assert_true(res.bytes_after < res.bytes_before);

	struct series after = load(st, id);
	assert_true(after.n <= STORE_GC_FINE);
	assert_true(after.n > STORE_GC_FINE / 2);
	assert_true(res.rows_removed >= (uint64_t)(n - (int)after.n));
	/* the ends as they were */
	assert_memory_equal(&after.s[0], &before.s[0], sizeof(struct sample));
	assert_memory_equal(&after.s[after.n - 1], &before.s[n - 1], sizeof(struct sample));

	const struct sample *b = before.s, *a = after.s;
	int64_t first = b[0].elapsed_ns, last = b[n - 1].elapsed_ns;
	int64_t w = store_gc_bucket_ns(last - first, 10 * MS, STORE_GC_FINE);
	size_t j = 1, nb = 0;
	for (int i = 1; i < n - 1;) {
		int64_t k = (b[i].elapsed_ns - first) / w;
		uint64_t rss = 0, hwm = 0, pss = 0, avail = UINT64_MAX;
		int64_t at = 0;
		uint32_t threads = 0;
		for (; i < n - 1 && (b[i].elapsed_ns - first) / w == k; i++) {
			if (b[i].mem.rss > rss) {
				rss = b[i].mem.rss;
				at = b[i].elapsed_ns;
			}
			hwm = b[i].mem.hwm > hwm ? b[i].mem.hwm : hwm;
			avail = b[i].mem_available < avail ? b[i].mem_available : avail;
			threads = b[i].threads > threads ? b[i].threads : threads;
			if ((b[i].have & SAMPLE_PSS) && b[i].pss > pss)
				pss = b[i].pss;
		}
		/* one row for the bucket: its maximum, at the time it was reached */
		assert_true(j < after.n - 1);
		assert_int_equal((a[j].elapsed_ns - first) / w, k);
		assert_int_equal(a[j].elapsed_ns, at);
		assert_int_equal(a[j].mem.rss, rss);
		assert_int_equal(a[j].mem.hwm, hwm);
		assert_int_equal(a[j].mem_available, avail);
		assert_int_equal(a[j].threads, threads);
		if (pss)
			assert_int_equal(a[j].pss, pss);
		j++;
		nb++;
	}
	assert_int_equal(j, after.n - 1);
	assert_true(nb <= STORE_GC_FINE - 2);

	/* the spike is a row of its own, and the run's summary is untouched */
	int spike = 0;
	for (size_t i = 0; i < after.n; i++)
		spike |= a[i].mem.rss == 512u << 20 && a[i].elapsed_ns == 12345 * 10 * MS;
	assert_true(spike);
	assert_int_equal(store_get_run(st, id, &r1), 0);
	assert_int_equal(r1.peak_rss, r0.peak_rss);
	assert_int_equal(r1.peak_rss_at, r0.peak_rss_at);
	assert_int_equal(r1.samples, n);
	assert_string_equal(r1.outcome, OUTCOME_EXITED);
	run_release(&r0);
	run_release(&r1);
	struct mark *m;
	struct event *ev;
	size_t nm, ne;
	assert_int_equal(store_marks(st, id, &m, &nm), 0);
	assert_int_equal(store_events(st, id, &ev, &ne), 0);
	assert_int_equal(nm, 1);
	assert_int_equal(ne, 1);
	store_free_marks(m, nm);
	store_free_events(ev, ne);

	/* a gauge: each bucket's highest value and its last value are still there (the
	 * run's first and last rows belong to the buckets they fall in) */
	assert_int_equal(store_each_counter(st, id, collect_counter, ca), 0);
	assert_true(ca->n < cb->n);
	for (size_t i = 0; i < cb->n;) {
		int64_t k = (cb->t[i] - first) / w;
		long long hi = -1, lastv = 0;
		int64_t last_t = 0;
		for (; i < cb->n && (cb->t[i] - first) / w == k; i++) {
			hi = cb->v[i] > hi ? cb->v[i] : hi;
			lastv = cb->v[i];
			last_t = cb->t[i];
		}
		int seen_hi = 0, seen_last = 0;
		for (size_t q = 0; q < ca->n; q++) {
			if ((ca->t[q] - first) / w != k)
				continue;
			seen_hi |= ca->v[q] == hi;
			seen_last |= ca->t[q] == last_t && ca->v[q] == lastv;
		}
		assert_true(seen_hi);
		assert_true(seen_last);
	}

	/* again: nothing more to do at this level */
	assert_int_equal(store_gc(st, &o, NULL, NULL, &res), 0);
	assert_int_equal(res.runs_thinned, 0);
	assert_int_equal(res.rows_removed, 0);
	free(cb);
	free(ca);
	free(before.s);
	free(after.s);
	store_close(st);
}

/* Only runs that ended before the age bound; never one being recorded. */
static void test_keep_and_running(void **state)
{
	(void)state;
	struct store *st = open_db();
	int64_t old = add_run(st, 3000, 100, 10 * DAY, 0, 1);
	int64_t young = add_run(st, 3000, 100, 3600LL * 1000000000LL, 0, 2);
	int64_t live = add_run(st, 3000, 100, 20 * DAY, 1, 3);
	struct store_gc_opts o = { .keep_ns = DAY, .now_ns = real_ns() };
	struct store_gc_result res;
	assert_int_equal(store_gc(st, &o, NULL, NULL, &res), 0);
	assert_int_equal(res.runs_thinned, 1);
	assert_int_equal(res.runs_running, 1);
	struct series v = load(st, old);
	assert_true(v.n <= STORE_GC_FINE);
	free(v.s);
	v = load(st, young);
	assert_int_equal(v.n, 3000);
	free(v.s);
	v = load(st, live);
	assert_int_equal(v.n, 3000);
	free(v.s);

	/* a bound no finished run can meet: every finished series goes, the live one
	 * stays, and the result says the bound was not met */
	o.keep_ns = -1;
	o.max_bytes = 4096;
	assert_int_equal(store_gc(st, &o, NULL, NULL, &res), 0);
	assert_int_equal(res.runs_emptied, 2);
	assert_true(res.over_bound);
	v = load(st, old);
	assert_int_equal(v.n, 0);
	free(v.s);
	v = load(st, live);
	assert_int_equal(v.n, 3000);
	free(v.s);
	struct run r;
	assert_int_equal(store_get_run(st, old, &r), 0);
	assert_int_equal(r.peak_rss, 512u << 20);
	assert_int_equal(r.samples, 3000);
	run_release(&r);
	/* deleting an emptied run still works, and takes its retention row along */
	assert_int_equal(store_delete_run(st, old), 0);
	store_close(st);
}

/* --max-db: thinning first, oldest first; emptying only when thinning is not enough. */
static void test_size_bound(void **state)
{
	(void)state;
	struct store *st = open_db();
	int64_t a = add_run(st, 20000, 500, 3 * DAY, 0, 4);
	int64_t b = add_run(st, 20000, 500, 2 * DAY, 0, 5);
	struct store_gc_opts o = { .keep_ns = -1, .now_ns = real_ns(), .dry_run = 1 };
	struct store_gc_result res, dry;
	/* first a dry run: figures, and nothing changed */
	o.max_bytes = 1u << 20;
	assert_int_equal(store_gc(st, &o, NULL, NULL, &dry), 0);
	assert_true(dry.runs_thinned >= 1);
	assert_true(dry.rows_removed > 0);
	struct series v = load(st, a);
	assert_int_equal(v.n, 20000);
	free(v.s);
	o.dry_run = 0;
	assert_int_equal(store_gc(st, &o, NULL, NULL, &res), 0);
	assert_int_equal(res.runs_thinned, dry.runs_thinned);
	assert_int_equal(res.rows_removed, dry.rows_removed);
	assert_false(res.over_bound);
	assert_int_equal(res.runs_emptied, 0);
	assert_true(res.bytes_after <= o.max_bytes);
	v = load(st, a);
	assert_true(v.n <= STORE_GC_FINE && v.n > 0);
	free(v.s);
	v = load(st, b);
	assert_true(v.n > 0);
	free(v.s);
	store_close(st);
}

/* A query's single text result (group_concat), for comparing tables before and after. */
static char *query_text(const char *sql)
{
	sqlite3 *db;
	sqlite3_stmt *s;
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	const unsigned char *t = sqlite3_column_text(s, 0);
	char *out = xstrdup(t ? (const char *)t : "");
	sqlite3_finalize(s);
	sqlite3_close(db);
	return out;
}

/* Members of a set and GPU readings: each member keeps its highest row, its first row
 * and the rows where it left; each GPU its highest readings. */
static void test_thin_set_and_gpu(void **state)
{
	(void)state;
	struct store *st = open_db();
	int64_t id = add_run(st, 10, 5, 5 * DAY, 1, 9);	/* the run row; samples below */
	struct run r;
	assert_int_equal(store_get_run(st, id, &r), 0);
	uint64_t seed = 11;
	struct sample sm;
	struct proc_figures f;
	struct gpu_figures gf;
	for (int i = 10; i < 6000; i++) {
		memset(&sm, 0, sizeof(sm));
		sm.elapsed_ns = (int64_t)i * 10 * MS;
		sm.mem.rss = (8u << 20) + (lcg(&seed) % 1000) * 4096;
		assert_int_equal(store_add_sample(st, id, &sm), 0);
		for (pid_t pid = 100; pid <= 300; pid += 100) {
			memset(&f, 0, sizeof(f));
			f.pid = pid;
			f.ppid = 100;
			snprintf(f.comm, sizeof(f.comm), "p%d", (int)pid);
			f.mem.rss = (1u << 20) + (lcg(&seed) % 1000) * 4096;
			if (pid == 200 && (i < 1000 || (i > 3000 && i < 4000)))
				continue;	/* comes at 1000, leaves at 3000, back at 4000 */
			f.gone = pid == 200 && i == 3000;
			if (f.gone)
				f.mem.rss = 0;
			if (pid == 300 && i < 2500)
				continue;
			if (pid == 300 && i == 4321)
				f.mem.rss = 300u << 20;	/* its peak */
			assert_int_equal(store_add_proc(st, id, sm.elapsed_ns, &f), 0);
		}
		memset(&gf, 0, sizeof(gf));
		gf.target_known = 1;
		gf.target_bytes = (lcg(&seed) % 1000) << 20;
		gf.used_bytes = gf.target_bytes + ((lcg(&seed) % 1000) << 20);
		gf.total_bytes = 141ULL << 30;
		assert_int_equal(store_add_gpu(st, id, sm.elapsed_ns, &gf), 0);
		r.samples++;
		if (i % 256 == 0)
			assert_int_equal(store_flush(st, &r), 0);
	}
	strlcpy_rsw(r.outcome, OUTCOME_EXITED, sizeof(r.outcome));
	r.ended_at = r.started_at + 60 * NS_PER_S;
	assert_int_equal(store_run_finish(st, &r), 0);
	run_release(&r);

	static const char *const facts[] = {
		/* each member's highest figure, first row and the rows where it left */
		"SELECT group_concat(pid || ':' || m || ':' || f, ' ') FROM (SELECT pid,"
		" max(rss) m, min(elapsed_ns) f FROM proc_sample GROUP BY pid ORDER BY pid)",
		"SELECT group_concat(pid || '@' || elapsed_ns, ' ') FROM (SELECT pid, elapsed_ns"
		" FROM proc_sample WHERE gone = 1 ORDER BY pid, elapsed_ns)",
		/* the first row after it came back */
		"SELECT min(elapsed_ns) FROM proc_sample WHERE pid = 200 AND elapsed_ns > 30000000000",
		/* each GPU's highest figures */
		"SELECT group_concat(device || ':' || t || ':' || u, ' ') FROM (SELECT device,"
		" max(target_bytes) t, max(used_bytes) u FROM gpu GROUP BY device)",
	};
	char *before[ARRAY_SIZE(facts)];
	for (size_t i = 0; i < ARRAY_SIZE(facts); i++)
		before[i] = query_text(facts[i]);
	char *rows0 = query_text("SELECT count(*) FROM proc_sample");
	char *gpu0 = query_text("SELECT count(*) FROM gpu");

	struct store_gc_opts o = { .keep_ns = DAY, .now_ns = real_ns() };
	struct store_gc_result res;
	assert_int_equal(store_gc(st, &o, NULL, NULL, &res), 0);
	assert_int_equal(res.runs_thinned, 1);
	for (size_t i = 0; i < ARRAY_SIZE(facts); i++) {
		char *after = query_text(facts[i]);
		assert_string_equal(after, before[i]);
		free(after);
		free(before[i]);
	}
	char *rows1 = query_text("SELECT count(*) FROM proc_sample");
	char *gpu1 = query_text("SELECT count(*) FROM gpu");
	assert_true(strtoll(rows1, NULL, 10) < strtoll(rows0, NULL, 10) / 2);
	assert_true(strtoll(gpu1, NULL, 10) <= 2 * STORE_GC_FINE);
	free(rows0);
	free(rows1);
	free(gpu0);
	free(gpu1);
	store_close(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bucket_ns),
		cmocka_unit_test(test_parse_age),
		cmocka_unit_test_setup_teardown(test_thin_keeps_bucket_max, setup, teardown),
		cmocka_unit_test_setup_teardown(test_keep_and_running, setup, teardown),
		cmocka_unit_test_setup_teardown(test_size_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_thin_set_and_gpu, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
