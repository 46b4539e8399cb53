/* base/fmt.c: sizes, durations, offsets from the start and timestamps. */
#include "testutil.h"

#include <stdint.h>
#include <time.h>

#include "base/fmt.h"

#define GIB (1024ULL * 1024 * 1024)
#define MIB (1024ULL * 1024)

static void test_fmt_bytes(void **state)
{
	(void)state;
	char b[32];
	assert_string_equal(fmt_bytes(b, sizeof(b), 0), "0 B");
	assert_string_equal(fmt_bytes(b, sizeof(b), 1023), "1023 B");
	assert_string_equal(fmt_bytes(b, sizeof(b), 1024), "1.0 KiB");
	assert_string_equal(fmt_bytes(b, sizeof(b), 12 * MIB + MIB / 2), "12.5 MiB");
	assert_string_equal(fmt_bytes(b, sizeof(b), (uint64_t)(666.4 * GIB)), "666.4 GiB");
	assert_string_equal(fmt_bytes(b, sizeof(b), 2048 * GIB), "2.0 TiB");
}

static void test_fmt_duration(void **state)
{
	(void)state;
	char b[32];
	assert_string_equal(fmt_duration(b, sizeof(b), 850 * 1000000LL), "850ms");
	assert_string_equal(fmt_duration(b, sizeof(b), 12300 * 1000000LL), "12.3s");
	assert_string_equal(fmt_duration(b, sizeof(b), 245 * 1000000000LL), "4m05s");
	assert_string_equal(fmt_duration(b, sizeof(b), 3723 * 1000000000LL), "1h02m03s");
	assert_string_equal(fmt_duration(b, sizeof(b), (3 * 86400 + 4 * 3600) * 1000000000LL), "3d04h");
	assert_string_equal(fmt_duration(b, sizeof(b), -5), "0ms");
}

/* A moment before the run's start keeps its sign. */
static void test_fmt_offset(void **state)
{
	(void)state;
	char b[32];
	assert_string_equal(fmt_offset(b, sizeof(b), 850 * 1000000LL), "+850ms");
	assert_string_equal(fmt_offset(b, sizeof(b), 0), "+0ms");
	assert_string_equal(fmt_offset(b, sizeof(b), -1200 * 1000000LL), "-1.2s");
	assert_string_equal(fmt_offset(b, sizeof(b), -245 * 1000000000LL), "-4m05s");
	assert_string_equal(fmt_offset(b, sizeof(b), INT64_MIN), "-106751d23h");
}

static void test_fmt_time(void **state)
{
	(void)state;
	char b[40];
	/* 2026-11-29T02:24:19.123Z */
	int64_t t = 1795919059LL * 1000000000 + 123456789;
	assert_string_equal(fmt_iso8601(b, sizeof(b), t), "2026-11-29T02:24:19.123Z");
	assert_string_equal(fmt_hms(b, sizeof(b), t), "02:24:19");	/* TZ=UTC in main */
	assert_string_equal(fmt_datetime(b, sizeof(b), t), "2026-11-29 02:24");
}

int main(void)
{
	setenv("TZ", "UTC", 1);
	tzset();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fmt_bytes),
		cmocka_unit_test(test_fmt_duration),
		cmocka_unit_test(test_fmt_offset),
		cmocka_unit_test(test_fmt_time),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
