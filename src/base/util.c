#include "base/util.h"
#include "base/parse.h"

#include <errno.h>
#include <pwd.h>

#include <ctype.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void oom(size_t n)
{
	static const char msg[] = "rsswatch: out of memory\n";
	(void)n;
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0) {
		/* nothing more can be said */
	}
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

void *xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);
	if (!p)
		oom(nmemb * size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom(n);
	return q;
}

void *xgrow(void *p, size_t n, size_t *cap, size_t size)
{
	if (n < *cap)
		return p;
	size_t c = *cap ? *cap : 16;
	while (c <= n) {
		if (c > SIZE_MAX / 2)
			oom(SIZE_MAX);
		c *= 2;
	}
	if (size && c > SIZE_MAX / size)
		oom(SIZE_MAX);
	p = xrealloc(p, c * size);
	*cap = c;
	return p;
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

const char *errstr(int err)
{
	static __thread char buf[128];
	if (err < 0)
		err = -err;
	strlcpy_rsw(buf, strerror(err), sizeof(buf));
	buf[0] = (char)tolower((unsigned char)buf[0]);
	return buf;
}

size_t strlcpy_rsw(char *dst, const char *src, size_t n)
{
	size_t len = strlen(src);
	if (n) {
		size_t c = len < n - 1 ? len : n - 1;
		memcpy(dst, src, c);
		dst[c] = '\0';
	}
	return len;
}

int user_uid(const char *s, uid_t *out)
{
	uint64_t v;
	if (parse_u64(s, &v) == 0) {
		if (v >= UINT32_MAX)
			return -ERANGE;
		*out = (uid_t)v;
		return 0;
	}
	struct passwd pw, *res = NULL;
	char buf[4096];
	int e = getpwnam_r(s, &pw, buf, sizeof(buf), &res);
	if (e != 0)
		return -e;
	if (!res)
		return -ENOENT;
	*out = pw.pw_uid;
	return 0;
}
