/* Pure formatting: units, durations, timestamps, the live line, JSON escaping, the
 * outcome in words and the terminal chart (against a golden file). */
#include "testutil.h"

#include <string.h>
#include <time.h>

#include "base/fmt.h"
#include "base/util.h"
#include "render/json.h"
#include "render/live.h"
#include "render/tchart.h"

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

static void test_live_line(void **state)
{
	(void)state;
	struct sample s;
	memset(&s, 0, sizeof(s));
	s.rss = (uint64_t)(666.4 * GIB);
	s.anon = (uint64_t)(660.1 * GIB);
	s.file = (uint64_t)(6.3 * GIB);
	s.shmem = 0;
	s.hwm = (uint64_t)(668.0 * GIB);
	s.mem_available = (uint64_t)(80.2 * GIB);
	struct buf b = { 0 };
	live_line(&b, 1795919059LL * 1000000000, &s);
	assert_string_equal(buf_str(&b), "02:24:19 rss 666.4 GiB (anon 660.1, file 6.3, shmem 0.0) "
					 "hwm 668.0 GiB avail 80.2 GiB");
	buf_reset(&b);
	s.swap = 512 * MIB;
	s.have = SAMPLE_GPU;
	s.gpu = (uint64_t)(70.1 * GIB);
	live_line(&b, 1795919059LL * 1000000000, &s);
	assert_non_null(strstr(buf_str(&b), " swap 512.0 MiB gpu 70.1 GiB avail 80.2 GiB"));
	buf_release(&b);
}

static void test_outcome_words(void **state)
{
	(void)state;
	struct run r;
	struct buf b = { 0 };
	memset(&r, 0, sizeof(r));
	strlcpy_rsw(r.outcome, OUTCOME_EXITED, sizeof(r.outcome));
	r.exit_code = 3;
	outcome_words(&b, &r);
	assert_string_equal(buf_str(&b), "exited with 3");
	buf_reset(&b);
	strlcpy_rsw(r.outcome, OUTCOME_SIGNALED, sizeof(r.outcome));
	r.signal = 9;
	outcome_words(&b, &r);
	assert_string_equal(buf_str(&b), "killed by SIGKILL");
	buf_reset(&b);
	strlcpy_rsw(r.outcome, OUTCOME_STOPPED, sizeof(r.outcome));
	outcome_words(&b, &r);
	assert_string_equal(buf_str(&b), "still running (recording stopped)");
	buf_release(&b);
}

static void test_json_escape(void **state)
{
	(void)state;
	struct buf b = { 0 };
	json_str(&b, "<script>\"a\\b\"\n\t\x01</script>");
	assert_string_equal(buf_str(&b), "\"<script>\\\"a\\\\b\\\"\\n\\t\\u0001</script>\"");
	buf_release(&b);
}

/* Text from other users' processes: bytes that are not UTF-8 and C1 controls never
 * pass raw, valid UTF-8 does. */
static void test_untrusted_text(void **state)
{
	(void)state;
	struct buf b = { 0 };
	json_str(&b, "a\xff\xc3\xa9\xc2\x9b[2J");
	assert_string_equal(buf_str(&b), "\"a\\ufffd\xc3\xa9\xc2\x9b[2J\"");
	buf_reset(&b);
	buf_put_printable(&b, "a\xff\xc3\xa9\xc2\x9b[2J\x1b\xe2\x82");
	assert_string_equal(buf_str(&b), "a?\xc3\xa9?[2J???");
	buf_release(&b);
}

static void test_json_run(void **state)
{
	(void)state;
	struct run r;
	memset(&r, 0, sizeof(r));
	r.id = 7;
	r.label = "l";
	r.host = "h";
	r.kernel = "k";
	r.target = "t";
	r.mode = "pid";
	r.pid = 42;
	r.started_at = 1795919059LL * 1000000000;
	r.interval_ns = 100000000;
	r.samples = 2;
	strlcpy_rsw(r.outcome, OUTCOME_EXITED, sizeof(r.outcome));
	r.exit_code = 0;
	r.signal = -1;
	r.peak_gpu = -1;
	r.peak_rss = 1024;
	struct buf b = { 0 };
	json_run(&b, &r);
	const char *j = buf_str(&b);
	assert_non_null(strstr(j, "\"id\":7,"));
	assert_non_null(strstr(j, "\"started_at\":\"2026-11-29T02:24:19.000Z\""));
	assert_non_null(strstr(j, "\"ended_at\":null"));
	assert_non_null(strstr(j, "\"interval_s\":0.1,"));
	assert_non_null(strstr(j, "\"exit_code\":0,\"signal\":null"));
	assert_non_null(strstr(j, "\"peak_rss_bytes\":1024,"));
	assert_non_null(strstr(j, "\"peak_gpu_bytes\":null"));
	assert_true(j[0] == '{' && j[strlen(j) - 1] == '}');
	buf_release(&b);
}

/* A ramp up to a peak at 60% of the time, then down: the golden chart shows the ramp,
 * the peak column marked '^' and the axes. */
static void test_tchart_golden(void **state)
{
	(void)state;
	struct tchart_point pts[50];
	for (int i = 0; i < 50; i++) {
		pts[i].t = (int64_t)i * 1000000000LL;
		pts[i].v = (uint64_t)(i <= 30 ? i : 60 - i) * 64 * MIB;
	}
	struct buf b = { 0 };
	tchart_render(&b, pts, 50, 49 * 1000000000LL, 52, 4);
	size_t len;
	char *golden = fixture("tests/fixtures/golden/tchart-ramp.txt", &len);
	assert_string_equal(buf_str(&b), golden);
	free(golden);
	buf_release(&b);
	/* nothing to draw: nothing drawn */
	tchart_render(&b, pts, 0, 0, 80, 4);
	assert_int_equal(b.len, 0);
	tchart_render(&b, pts, 50, 49, 5, 4);
	assert_int_equal(b.len, 0);
}

/* The same ramp with three marks, two of them close together: each letter lands in its
 * column or the nearest free one, in a row under the time axis. */
static void test_tchart_marks_golden(void **state)
{
	(void)state;
	struct tchart_point pts[50];
	for (int i = 0; i < 50; i++) {
		pts[i].t = (int64_t)i * 1000000000LL;
		pts[i].v = (uint64_t)(i <= 30 ? i : 60 - i) * 64 * MIB;
	}
	int64_t marks[] = { 0, 10 * 1000000000LL, 10 * 1000000000LL + 1, 49 * 1000000000LL };
	struct buf b = { 0 };
	tchart_render_marks(&b, pts, 50, 49 * 1000000000LL, 52, 4, marks, 4);
	assert_golden("tests/fixtures/golden/tchart-marks.txt", buf_str(&b));
	/* without marks: exactly the chart of tchart_render */
	struct buf plain = { 0 };
	buf_reset(&b);
	tchart_render_marks(&b, pts, 50, 49 * 1000000000LL, 52, 4, NULL, 0);
	tchart_render(&plain, pts, 50, 49 * 1000000000LL, 52, 4);
	assert_string_equal(buf_str(&b), buf_str(&plain));
	assert_int_equal(tchart_mark_letter(0), 'A');
	assert_int_equal(tchart_mark_letter(26), 'a');
	assert_int_equal(tchart_mark_letter(60), '*');
	buf_release(&b);
	buf_release(&plain);
}

int main(void)
{
	setenv("TZ", "UTC", 1);
	tzset();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fmt_bytes),
		cmocka_unit_test(test_fmt_duration),
		cmocka_unit_test(test_fmt_time),
		cmocka_unit_test(test_live_line),
		cmocka_unit_test(test_outcome_words),
		cmocka_unit_test(test_json_escape),
		cmocka_unit_test(test_untrusted_text),
		cmocka_unit_test(test_json_run),
		cmocka_unit_test(test_tchart_golden),
		cmocka_unit_test(test_tchart_marks_golden),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
