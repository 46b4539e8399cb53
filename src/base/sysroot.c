#include "base/sysroot.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *cur_root;

void sysroot_set(const char *r)
{
	cur_root = r ? r : "";
}

const char *sysroot(void)
{
	if (!cur_root) {
		const char *env = secure_getenv("RSSWATCH_SYSROOT");	/* never in a setuid program */
		cur_root = env ? env : "";
	}
	return cur_root;
}

int sysroot_path(char *out, size_t n, const char *fmt, ...)
{
	const char *root = sysroot();
	size_t rl = strlen(root);
	if (rl >= n)
		return -ENAMETOOLONG;
	memcpy(out, root, rl);
	va_list ap;
	va_start(ap, fmt);
	int w = vsnprintf(out + rl, n - rl, fmt, ap);
	va_end(ap);
	if (w < 0 || (size_t)w >= n - rl)
		return -ENAMETOOLONG;
	return 0;
}
