/* Every path under /proc, /sys and /dev that rsswatch reads goes through sysroot_path(),
 * so that tests can point the whole program at a captured fixture tree by setting
 * RSSWATCH_SYSROOT (read once, at the first call). The default root is "" (the real
 * machine). */
#ifndef RSW_BASE_SYSROOT_H
#define RSW_BASE_SYSROOT_H

#include <stddef.h>

const char *sysroot(void);
/* Replaces the root (NULL means the real machine), for tests that use several fixture
 * trees in one process. The string must outlive its use; not thread-safe. */
void sysroot_set(const char *root);
/* Writes root + the formatted path into out. Returns 0, or -ENAMETOOLONG. */
int sysroot_path(char *out, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
