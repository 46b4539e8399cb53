/* Shared by the unit tests: cmocka headers in the order they need, fixture loading,
 * golden files and removing temporary trees. Fixtures are read relative to the
 * repository root (tests run from there). */
#ifndef RSW_TESTUTIL_H
#define RSW_TESTUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>

/* Reads a whole fixture file; fails the test when it is missing. */
/* Removes a test's temporary directory and all under it. Returns 0 or -1. */
static inline int remove_tree(const char *dir)
{
	char cmd[4200];
	if (snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir) >= (int)sizeof(cmd))
		return -1;
	return system(cmd) == 0 ? 0 : -1;
}

static inline char *fixture(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		fail_msg("missing fixture %s", path);
	char *buf = NULL;
	size_t cap = 0, n = 0, r;
	do {
		if (n + 4096 > cap) {
			cap = cap ? cap * 2 : 8192;
			buf = realloc(buf, cap + 1);
		}
		r = fread(buf + n, 1, cap - n, f);
		n += r;
	} while (r > 0);
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* Compares text against a golden file. With RSW_UPDATE_GOLDEN=1 in the environment the
 * file is rewritten instead (review the diff before committing it). */
static inline void assert_golden(const char *path, const char *text)
{
	const char *up = getenv("RSW_UPDATE_GOLDEN");
	if (up && up[0] == '1') {
		FILE *f = fopen(path, "wb");
		if (!f)
			fail_msg("cannot write %s", path);
		fputs(text, f);
		fclose(f);
		return;
	}
	size_t len;
	char *golden = fixture(path, &len);
	assert_string_equal(text, golden);
	free(golden);
}

#endif
