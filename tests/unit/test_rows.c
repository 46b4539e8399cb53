/* render/rows.c: export's rows in CSV and JSON lines; hostile names stay one cell. */
#include "testutil.h"

#include <string.h>

#include "base/util.h"
#include "render/rows.h"

#define GIB (1024ULL * 1024 * 1024)
#define MIB (1024ULL * 1024)

/* export --procs: one process at one sample, in CSV and JSON lines; a process name with
 * a comma, a quote and an escape byte stays one field and never reaches a terminal raw. */
static void test_proc_rows(void **state)
{
	(void)state;
	struct proc_figures f;
	memset(&f, 0, sizeof(f));
	f.pid = 5123;
	f.ppid = 5100;
	strlcpy_rsw(f.comm, "py,\"3\"\x1b", sizeof(f.comm));
	f.mem.rss = 3 * MIB;
	f.mem.anon = 2 * MIB;
	f.mem.file = MIB;
	f.mem.shmem = 4096;
	f.mem.swap = 8192;
	struct buf b = { 0 };
	proc_rows_header(&b, FORMAT_CSV);
	proc_row(&b, FORMAT_CSV, 1795919059LL * 1000000000, 1250000000, &f);
	assert_string_equal(buf_str(&b),
		"time,elapsed_s,pid,ppid,comm,rss_bytes,anon_bytes,file_bytes,shmem_bytes,swap_bytes\n"
		"2026-11-29T02:24:20.250Z,1.250,5123,5100,\"py,\"\"3\"\"?\",3145728,2097152,1048576,4096,8192\n");
	buf_reset(&b);
	proc_row(&b, FORMAT_JSONL, 1795919059LL * 1000000000, 1250000000, &f);
	assert_string_equal(buf_str(&b),
		"{\"time\":\"2026-11-29T02:24:20.250Z\",\"elapsed_s\":1.250,\"pid\":5123,\"ppid\":5100,"
		"\"comm\":\"py,\\\"3\\\"\\u001b\",\"rss_bytes\":3145728,\"anon_bytes\":2097152,"
		"\"file_bytes\":1048576,\"shmem_bytes\":4096,\"swap_bytes\":8192}\n");
	/* a missing value, and a key chosen by an application */
	buf_reset(&b);
	struct row w;
	row_begin(&w, &b, FORMAT_JSONL);
	row_null(&w, "counter.a\"b");
	row_end(&w);
	row_begin(&w, &b, FORMAT_CSV);
	row_null(&w, "x");
	row_u64(&w, "y", 7);
	row_end(&w);
	assert_string_equal(buf_str(&b), "{\"counter.a\\\"b\":null}\n,7\n");
	buf_release(&b);
}

/* CSV injection: a text cell that begins with = + - @ (a tab or CR become '?' first)
 * is quoted with a single quote before it; numbers, negative ones included, and plain
 * text stay as they are; JSON lines are untouched. */
static void test_csv_formula(void **state)
{
	(void)state;
	static const struct { const char *in, *csv; } c[] = {
		{ "=cmd|'/c calc'!", "\"'=cmd|'/c calc'!\"" },
		{ "+SUM(1+1)", "\"'+SUM(1+1)\"" },
		{ "-2+3", "\"'-2+3\"" },
		{ "@SUM(A1)", "\"'@SUM(A1)\"" },
		{ "=a,\"b\"", "\"'=a,\"\"b\"\"\"" },
		{ "a=b", "a=b" },
		{ " =x", " =x" },
		{ "", "" },
	};
	struct buf b = { 0 };
	struct row w;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		buf_reset(&b);
		row_begin(&w, &b, FORMAT_CSV);
		row_str(&w, "comm", c[i].in);
		row_raw(&w, "n", "-12");
		row_end(&w);
		char want[96];
		snprintf(want, sizeof(want), "%s,-12\n", c[i].csv);
		assert_string_equal(buf_str(&b), want);
	}
	buf_reset(&b);
	row_begin(&w, &b, FORMAT_JSONL);
	row_str(&w, "comm", "=x");
	row_end(&w);
	assert_string_equal(buf_str(&b), "{\"comm\":\"=x\"}\n");
	buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_proc_rows),
		cmocka_unit_test(test_csv_formula),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
