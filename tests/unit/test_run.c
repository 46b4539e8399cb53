/* RUN arguments: the syntax (run_ref_parse: "last", an id, "sID", "sID:N")
 * and its resolution against a database with a series of runs and a run of none. */
#include "testutil.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "store/run.h"
#include "store/store.h"

static void test_parse_good(void **state)
{
	(void)state;
	struct run_ref r;
	assert_int_equal(run_ref_parse("last", &r), 0);
	assert_false(r.series);
	assert_int_equal(r.id, 0);
	assert_int_equal(r.count, 1);

	assert_int_equal(run_ref_parse("42", &r), 0);
	assert_false(r.series);
	assert_int_equal(r.id, 42);

	assert_int_equal(run_ref_parse("s12", &r), 0);
	assert_true(r.series);
	assert_int_equal(r.id, 12);
	assert_int_equal(r.count, 1);

	assert_int_equal(run_ref_parse("s7:3", &r), 0);
	assert_true(r.series);
	assert_int_equal(r.id, 7);
	assert_int_equal(r.count, 3);
}

static void test_parse_bad(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"", "s", "s0", "0", "-1", "+3", "12a", "s12~1", "s12~0", "s12:", "s12:0", "s12~-1",
		"12~1", "12:2", "s12~1:2", "s12:2~1", "S12", "s 12", "s12 ", " 12", "lastx",
		"s1234567890123456789", "1234567890123456789", "s12~x", "s12:3x", "s12,s13", "s12:2,3", "s-1",
		"series12", "s12~1~1", "s0x10",
	};
	struct run_ref r = { .id = 99 };
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		if (run_ref_parse(bad[i], &r) != -EINVAL)
			fail_msg("'%s' was accepted", bad[i]);
		assert_int_equal(r.id, 99);	/* untouched */
	}
}

static void new_run(struct run *r, int64_t series)
{
	memset(r, 0, sizeof(*r));
	r->label = "";
	r->host = "host";
	r->kernel = "6.18";
	r->target = "svc";
	r->mode = "name";
	r->started_at = 1795919059LL * 1000000000;
	r->interval_ns = 100000000;
	strlcpy_rsw(r->outcome, OUTCOME_EXITED, sizeof(r->outcome));
	r->exit_code = 0;
	r->signal = -1;
	r->peak_gpu = -1;
	r->hwm_before = -1;
	r->min_eta_ns = -1;
	r->boot_id = "";
	r->series = series;
}

/* Runs 1 (no series), 2, 3 (series 2), 4 (no series), 5 (series 2): "s2" is run 5. */
static void test_resolve(void **state)
{
	(void)state;
	char dir[] = "/tmp/rsswatch-runref-XXXXXX", path[64], err[256];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/runs.db", dir);
	struct store *st;
	assert_int_equal(store_open(path, STORE_CREATE, &st, err, sizeof(err)), 0);
	static const int series_of[] = { 0, -1, 2, 0, 2 };	/* -1: its own id */
	for (size_t i = 0; i < ARRAY_SIZE(series_of); i++) {
		struct run r;
		new_run(&r, series_of[i] > 0 ? series_of[i] : 0);
		assert_int_equal(store_run_begin(st, &r), 0);
		assert_int_equal(r.id, (int64_t)i + 1);
		if (series_of[i] < 0)
			r.series = r.id;	/* the first run of a series: known after its INSERT */
		r.ended_at = r.started_at + 1;
		assert_int_equal(store_run_finish(st, &r), 0);
	}
	int64_t id, *ids;
	size_t n;
	assert_int_equal(store_resolve(st, "last", &id), 0);
	assert_int_equal(id, 5);
	assert_int_equal(store_resolve(st, "3", &id), 0);
	assert_int_equal(id, 3);
	assert_int_equal(store_resolve(st, "s2", &id), 0);
	assert_int_equal(id, 5);
	assert_int_equal(store_resolve(st, "s1", &id), -ENOENT);	/* run 1: no series */
	assert_int_equal(store_resolve(st, "s9", &id), -ENOENT);
	assert_int_equal(store_resolve(st, "s2:1", &id), 0);
	assert_int_equal(id, 5);
	assert_int_equal(store_resolve(st, "s2:2", &id), -E2BIG);
	assert_int_equal(store_resolve(st, "s2x", &id), -EINVAL);

	assert_int_equal(store_resolve_runs(st, "s2:2", &ids, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(ids[0], 3);	/* oldest first */
	assert_int_equal(ids[1], 5);
	free(ids);
	assert_int_equal(store_resolve_runs(st, "s2:10", &ids, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(ids[0], 2);
	assert_int_equal(ids[2], 5);
	free(ids);
	assert_int_equal(store_resolve_runs(st, "4", &ids, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(ids[0], 4);
	free(ids);

	/* the series column round-trips: NULL for run 1, 2 for runs 2, 3 and 5 */
	struct run got;
	assert_int_equal(store_get_run(st, 1, &got), 0);
	assert_int_equal(got.series, 0);
	run_release(&got);
	assert_int_equal(store_get_run(st, 2, &got), 0);
	assert_int_equal(got.series, 2);
	run_release(&got);
	struct run *runs;
	assert_int_equal(store_series_runs(st, 2, &runs, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(runs[0].id, 2);
	assert_int_equal(runs[1].id, 3);
	assert_int_equal(runs[2].id, 5);
	store_free_runs(runs, n);
	store_close(st);
	assert_int_equal(remove_tree(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_good),
		cmocka_unit_test(test_parse_bad),
		cmocka_unit_test(test_resolve),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
