/* Strict parsing of numbers, pids, durations and sizes. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "base/parse.h"

static void test_u64(void **state)
{
	(void)state;
	uint64_t v = 7;
	assert_int_equal(parse_u64("0", &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(parse_u64("18446744073709551615", &v), 0);
	assert_true(v == UINT64_MAX);
	v = 7;
	assert_int_equal(parse_u64("18446744073709551616", &v), -ERANGE);
	assert_int_equal(parse_u64("", &v), -EINVAL);
	assert_int_equal(parse_u64("12a", &v), -EINVAL);
	assert_int_equal(parse_u64(" 12", &v), -EINVAL);
	assert_int_equal(parse_u64("-1", &v), -EINVAL);
	assert_int_equal(v, 7);	/* untouched on failure */
}

static void test_i64(void **state)
{
	(void)state;
	int64_t v;
	assert_int_equal(parse_i64("-9223372036854775808", &v), 0);
	assert_true(v == INT64_MIN);
	assert_int_equal(parse_i64("9223372036854775808", &v), -ERANGE);
	assert_int_equal(parse_i64("-", &v), -EINVAL);
}

static void test_pid(void **state)
{
	(void)state;
	pid_t p = 0;
	assert_int_equal(parse_pid("4242", &p), 0);
	assert_int_equal(p, 4242);
	assert_int_equal(parse_pid("0", &p), -EINVAL);
	assert_int_equal(parse_pid("-5", &p), -EINVAL);
	assert_int_equal(parse_pid("abc", &p), -EINVAL);
	assert_int_equal(parse_pid("", &p), -EINVAL);
	assert_int_equal(parse_pid("2147483648", &p), -ERANGE);
	assert_int_equal(parse_pid("99999999999999999999999", &p), -ERANGE);
}

static void test_duration(void **state)
{
	(void)state;
	int64_t ns = 0;
	assert_int_equal(parse_duration_ns("1ms", &ns), 0);
	assert_int_equal(ns, NS_PER_MS);
	assert_int_equal(parse_duration_ns("1.5s", &ns), 0);
	assert_int_equal(ns, 1500 * NS_PER_MS);
	assert_int_equal(parse_duration_ns("2", &ns), 0);
	assert_int_equal(ns, 2 * NS_PER_S);
	assert_int_equal(parse_duration_ns("3m", &ns), 0);
	assert_int_equal(ns, 180 * NS_PER_S);
	assert_int_equal(parse_duration_ns("1h", &ns), 0);
	assert_int_equal(ns, 3600 * NS_PER_S);
	assert_int_equal(parse_duration_ns("250us", &ns), 0);
	assert_int_equal(ns, 250 * NS_PER_US);
	assert_int_equal(parse_duration_ns("0", &ns), 0);
	assert_int_equal(ns, 0);
	assert_int_equal(parse_duration_ns("-1s", &ns), -EINVAL);
	assert_int_equal(parse_duration_ns("1x", &ns), -EINVAL);
	assert_int_equal(parse_duration_ns("s", &ns), -EINVAL);
	assert_int_equal(parse_duration_ns("1e3s", &ns), -EINVAL);
	assert_int_equal(parse_duration_ns("1..2s", &ns), -EINVAL);
	assert_int_equal(parse_duration_ns("nan", &ns), -EINVAL);
	assert_int_equal(parse_duration_ns("99999999h", &ns), -ERANGE);
}

static void test_size(void **state)
{
	(void)state;
	uint64_t b = 0;
	assert_int_equal(parse_size("64M", &b), 0);
	assert_true(b == 64ULL << 20);
	assert_int_equal(parse_size("2G", &b), 0);
	assert_true(b == 2ULL << 30);
	assert_int_equal(parse_size("1.5GiB", &b), 0);
	assert_true(b == 3ULL << 29);
	assert_int_equal(parse_size("4096", &b), 0);
	assert_true(b == 4096);
	assert_int_equal(parse_size("1kB", &b), 0);
	assert_true(b == 1024);
	assert_int_equal(parse_size("1T", &b), 0);
	assert_true(b == 1ULL << 40);
	assert_int_equal(parse_size("12Q", &b), -EINVAL);
	assert_int_equal(parse_size("M", &b), -EINVAL);
	assert_int_equal(parse_size("-1M", &b), -EINVAL);
	assert_int_equal(parse_size("99999999T", &b), -ERANGE);
}

static void test_kv(void **state)
{
	(void)state;
	static const char text[] = "MemTotal:       24522232 kB\nMemFree:  100 kB\nHugePages_Total:       0\n";
	uint64_t v;
	assert_int_equal(kv_find_u64(text, strlen(text), "MemFree:", &v), 0);
	assert_true(v == 100 * 1024);
	assert_int_equal(kv_find_u64(text, strlen(text), "HugePages_Total:", &v), 0);
	assert_true(v == 0);
	assert_int_equal(kv_find_u64(text, strlen(text), "Nope:", &v), -ENOENT);
	static const char bad[] = "X: 12 MB\n";
	assert_int_equal(kv_find_u64(bad, strlen(bad), "X:", &v), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_u64),
		cmocka_unit_test(test_i64),
		cmocka_unit_test(test_pid),
		cmocka_unit_test(test_duration),
		cmocka_unit_test(test_size),
		cmocka_unit_test(test_kv),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
