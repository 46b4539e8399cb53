/* smaps_rollup parser on a capture (tests/fixtures/proc/smaps_rollup-memhog.txt: a
 * memhog holding 8 MiB, kernel 6.18) and on malformed text; the reader on this very
 * process. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "source/smaps.h"

#define FIX "tests/fixtures/proc/"

static char *slurp(const char *path, size_t *len)
{
	char *buf = NULL;
	size_t cap = 0;
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	ssize_t n = getdelim(&buf, &cap, '\0', f);
	fclose(f);
	assert_true(n > 0);
	*len = (size_t)n;
	return buf;
}

static void test_capture(void **state)
{
	(void)state;
	size_t len;
	char *buf = slurp(FIX "smaps_rollup-memhog.txt", &len);
	struct smaps_rollup r;
	assert_int_equal(smaps_rollup_parse(buf, len, &r), 0);
	assert_true(r.rss == 9544 * 1024ULL);
	assert_true(r.pss == 8429 * 1024ULL);
	assert_true(r.pss_anon == 8288 * 1024ULL && r.pss_file == 141 * 1024ULL);
	assert_true(r.shared_clean == 1244 * 1024ULL);
	assert_true(smaps_uss(&r) == (12 + 8288) * 1024ULL);
	assert_true(r.have_swap_pss && r.swap_pss == 0);
	free(buf);
}

static void test_values(void **state)
{
	(void)state;
	static const char txt[] = "Rss: 10 kB\nPss: 5 kB\nPrivate_Clean: 1 kB\nPrivate_Dirty: 2 kB\n"
				  "Unknown_New_Key: 7 kB\nSwapPss: 3 kB";	/* no final newline */
	struct smaps_rollup r;
	assert_int_equal(smaps_rollup_parse(txt, strlen(txt), &r), 0);
	assert_true(r.pss == 5120 && smaps_uss(&r) == 3072 && r.swap_pss == 3072);
	static const char old[] = "Rss: 10 kB\nPss: 5 kB\nPrivate_Clean: 1 kB\nPrivate_Dirty: 2 kB\n";
	assert_int_equal(smaps_rollup_parse(old, strlen(old), &r), 0);
	assert_false(r.have_swap_pss);
}

static void test_bad(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"Rss: 10 kB\nPrivate_Clean: 1 kB\nPrivate_Dirty: 2 kB\n",		/* no Pss */
		"Rss: 10 kB\nPss: 5 kB\nPrivate_Clean: 1 kB\n",				/* no Private_Dirty */
		"Rss: 10 kB\nPss: 5x kB\nPrivate_Clean: 1 kB\nPrivate_Dirty: 2 kB\n",
		"Rss: 10 kB\nPss: 5 MB\nPrivate_Clean: 1 kB\nPrivate_Dirty: 2 kB\n",
		"Rss: 10 kB\nPss: -5 kB\nPrivate_Clean: 1 kB\nPrivate_Dirty: 2 kB\n",
		"Rss: 10 kB\nPss: kB\nPrivate_Clean: 1 kB\nPrivate_Dirty: 2 kB\n",
		"Rss: 10 kB\nPss: 5 kB\nPss: 5 kB\nPrivate_Clean: 1 kB\nPrivate_Dirty: 2 kB\n",
		"Rss: 99999999999999999999 kB\nPss: 5 kB\nPrivate_Clean: 1 kB\nPrivate_Dirty: 2 kB\n",
		"Rss: 18014398509481984 kB\nPss: 5 kB\nPrivate_Clean: 1 kB\nPrivate_Dirty: 2 kB\n",
		"garbage",
	};
	struct smaps_rollup r;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int e = smaps_rollup_parse(bad[i], strlen(bad[i]), &r);
		if (e != -EINVAL && e != -ERANGE)
			fail_msg("accepted bad input %zu: %d", i, e);
	}
	assert_int_equal(smaps_rollup_parse("", 0, &r), -ENODATA);
}

static void test_reader_self(void **state)
{
	(void)state;
	struct smaps_reader rd;
	struct smaps_rollup r1, r2;
	assert_int_equal(smaps_reader_open(&rd, getpid()), 0);
	assert_int_equal(smaps_reader_read(&rd, &r1), 0);
	assert_true(r1.pss > 0 && r1.pss <= r1.rss && smaps_uss(&r1) <= r1.pss);
	/* Kept open: the next read sees new memory. */
	size_t n = 16 << 20;
	char *p = malloc(n);
	assert_non_null(p);
	memset(p, 1, n);
	assert_int_equal(smaps_reader_read(&rd, &r2), 0);
	assert_true(r2.pss >= r1.pss + (n * 9) / 10);
	free(p);
	smaps_reader_close(&rd);
	assert_true(smaps_reader_open(&rd, 0x7ffffff0) < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_capture),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_reader_self),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
