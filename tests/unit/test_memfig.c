/* struct mem_figures and its helpers (base/memfig.h): figure by figure, every figure. */
#include "testutil.h"

#include <string.h>

#include "base/memfig.h"

/* Figures distinct per member, whatever members the struct has. */
static void fill(struct mem_figures *m, uint64_t base)
{
	uint64_t v[MEM_NFIGURES];
	for (size_t i = 0; i < MEM_NFIGURES; i++)
		v[i] = base + 100 * i;
	memcpy(m, v, sizeof(v));
}

static void test_add_sub(void **state)
{
	(void)state;
	struct mem_figures a, b, sum;
	fill(&a, 1000);
	fill(&b, 7);
	sum = a;
	mem_figures_add(&sum, &b);
	assert_true(sum.rss == a.rss + b.rss);
	assert_true(sum.hwm == a.hwm + b.hwm);
	assert_true(sum.anon == a.anon + b.anon);
	assert_true(sum.file == a.file + b.file);
	assert_true(sum.shmem == a.shmem + b.shmem);
	assert_true(sum.swap == a.swap + b.swap);
	mem_figures_sub(&sum, &b);
	assert_memory_equal(&sum, &a, sizeof(a));
	/* taking out what was added leaves 0, not a saturated figure */
	mem_figures_sub(&sum, &a);
	struct mem_figures zero;
	memset(&zero, 0, sizeof(zero));
	assert_memory_equal(&sum, &zero, sizeof(zero));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_sub),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
