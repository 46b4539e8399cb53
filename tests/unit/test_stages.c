/* The memory at each mark (render/stages.c), as show and the report tabulate it: the
 * last sample at or before each mark, else the first, and the change between marks;
 * the same figures as samples_rss_at gives for each mark. */
#include "testutil.h"

#include <string.h>

#include "render/stages.h"

#define NS 1000000000LL
#define MIB (1024ULL * 1024)

static void test_marks_between_samples(void **state)
{
	(void)state;
	struct run r;
	memset(&r, 0, sizeof(r));
	r.started_at = 100 * NS;
	struct sample s[5];
	memset(s, 0, sizeof(s));
	for (int i = 0; i < 5; i++) {
		s[i].elapsed_ns = (i + 1) * NS;		/* 1 s .. 5 s */
		s[i].mem.rss = (uint64_t)(10 + 10 * i) * MIB;	/* 10 .. 50 MiB */
		s[i].gpu = (uint64_t)i * MIB;
	}
	s[3].mem.rss = 5 * MIB;	/* down at 4 s */
	/* before the first sample, at a sample, between two, at the last, after it */
	const int64_t at[] = { 0, 2 * NS, 3 * NS + 1, 4 * NS + NS / 2, 5 * NS, 9 * NS };
	struct mark m[6];
	for (size_t i = 0; i < 6; i++) {
		m[i].t = r.started_at + at[i];
		m[i].label = "m";
	}
	struct stages sg;
	stages_init(&sg, &r, m, 6);
	for (size_t i = 0; i < 5; i++)
		stages_add(&sg, &s[i]);
	stages_end(&sg);
	assert_true(sg.known);
	assert_int_equal(sg.n, 6);
	const uint64_t want[] = { 10 * MIB, 20 * MIB, 30 * MIB, 5 * MIB, 50 * MIB, 50 * MIB };
	const uint64_t want_gpu[] = { 0, MIB, 2 * MIB, 3 * MIB, 4 * MIB, 4 * MIB };
	uint64_t prev = s[0].mem.rss;
	for (size_t i = 0; i < 6; i++) {
		assert_int_equal(sg.s[i].elapsed_ns, at[i]);
		assert_int_equal(sg.s[i].rss, want[i]);
		assert_int_equal(sg.s[i].rss, samples_rss_at(s, 5, at[i]));
		assert_int_equal(sg.s[i].gpu, want_gpu[i]);
		assert_int_equal(sg.s[i].change, (int64_t)want[i] - (int64_t)prev);
		prev = want[i];
	}
	assert_true(sg.s[3].change < 0);
	stages_release(&sg);
}

static void test_no_samples(void **state)
{
	(void)state;
	struct run r;
	memset(&r, 0, sizeof(r));
	r.started_at = 100 * NS;
	struct mark m = { .t = 90 * NS, .label = "before the run" };
	struct stages sg;
	stages_init(&sg, &r, &m, 1);
	stages_end(&sg);
	assert_false(sg.known);
	assert_int_equal(sg.s[0].elapsed_ns, -10 * NS);
	assert_int_equal(sg.s[0].rss, 0);
	assert_int_equal(sg.s[0].change, 0);
	stages_release(&sg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_marks_between_samples),
		cmocka_unit_test(test_no_samples),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
