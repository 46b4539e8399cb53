/* PSI parser on captured files and malformed input; readers on fixture files. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "base/sysroot.h"
#include "source/psi.h"

#define FIX "tests/fixtures"

static void test_parse_capture(void **state)
{
	(void)state;
	static const char txt[] = "some avg10=0.00 avg60=0.00 avg300=0.00 total=2140\n"
				  "full avg10=0.00 avg60=0.00 avg300=0.00 total=2140\n";
	struct psi p;
	assert_int_equal(psi_parse(txt, strlen(txt), &p), 0);
	assert_true(p.some.total_us == 2140 && p.full.total_us == 2140 && p.has_full);
	assert_int_equal(p.some.avg10, 0);
}

static void test_parse_values(void **state)
{
	(void)state;
	static const char txt[] = "some avg10=12.34 avg60=100.00 avg300=0.07 total=18446744073709551615\n";
	struct psi p;
	assert_int_equal(psi_parse(txt, strlen(txt), &p), 0);
	assert_int_equal(p.some.avg10, 1234);
	assert_int_equal(p.some.avg60, 10000);
	assert_int_equal(p.some.avg300, 7);
	assert_true(p.some.total_us == UINT64_MAX);
	assert_false(p.has_full);
	assert_true(psi_avg_pct(p.some.avg10) > 12.33 && psi_avg_pct(p.some.avg10) < 12.35);
}

static void test_parse_bad(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"",
		"full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",		/* no some */
		"some avg10=0.00 avg60=0.00 avg300=0.00\n",			/* no total */
		"some avg10=0.00 avg60=0.00 avg300=0.00 total=",		/* truncated */
		"some avg10=0.0 avg60=0.00 avg300=0.00 total=0\n",		/* one decimal */
		"some avg10=1 avg60=0.00 avg300=0.00 total=0\n",
		"some avg10=100.01 avg60=0.00 avg300=0.00 total=0\n",		/* > 100 % */
		"some avg60=0.00 avg10=0.00 avg300=0.00 total=0\n",		/* order */
		"some avg10=0.00 avg60=0.00 avg300=0.00 total=1 extra=2\n",
		"some avg10=0.00 avg60=0.00 avg300=0.00 total=-1\n",
		"some avg10=0.00 avg60=0.00 avg300=0.00 total=18446744073709551616\n",
		"some avg10=0.00  avg60=0.00 avg300=0.00 total=0\n",
		"some avg10=0.00 avg60=0.00 avg300=0.00 total=0\ngarbage\n",
		"somex avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct psi p;
		memset(&p, 0x33, sizeof(p));
		struct psi keep = p;
		int e = psi_parse(bad[i], strlen(bad[i]), &p);
		if (e != -EINVAL && e != -ERANGE)
			fail_msg("case %zu: %d", i, e);
		assert_memory_equal(&p, &keep, sizeof(p));
	}
}

static void test_reader_system(void **state)
{
	(void)state;
	struct psi_reader r;
	struct psi p;
	/* the fixture tree of this test has the capture at proc/pressure-memory, not at
	 * proc/pressure/memory: a tree without PSI */
	sysroot_set(FIX);
	assert_int_equal(psi_reader_open_system(&r), -ENOENT);
	psi_reader_close(&r);
	sysroot_set(NULL);
	assert_int_equal(psi_reader_open_cgroup(&r, FIX "/cgroup-v2-oom/sys/fs/cgroup/system.slice/prover.service/rsw-oom"), 0);
	assert_int_equal(psi_reader_read(&r, &p), 0);
	assert_true(p.some.total_us == 2140 && p.has_full && p.full.total_us == 2140);
	psi_reader_close(&r);
	assert_int_equal(psi_reader_open_cgroup(&r, FIX "/cgroup-v1"), -ENOENT);
	psi_reader_close(&r);
}

static void test_capture_vm(void **state)
{
	(void)state;
	struct psi_reader r;
	struct psi p;
	sysroot_set(NULL);
	r.f = (struct rfile)RFILE_INIT;
	assert_int_equal(rfile_open_abs(&r.f, FIX "/proc/pressure-memory"), 0);
	assert_int_equal(psi_reader_read(&r, &p), 0);
	assert_true(p.some.total_us == 2378 && p.full.total_us == 2165);
	psi_reader_close(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_capture),
		cmocka_unit_test(test_parse_values),
		cmocka_unit_test(test_parse_bad),
		cmocka_unit_test(test_reader_system),
		cmocka_unit_test(test_capture_vm),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
