/* Small helpers every part of the tool uses: allocation that dies on OOM (the tool may;
 * the client library in lib/ may not), error text, array sizes. */
#ifndef RSW_BASE_UTIL_H
#define RSW_BASE_UTIL_H

#include <stddef.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);

/* strerror() with a lowercase first letter, as messages are written ("no such process").
 * Takes a positive or negative errno. Returns a thread-local buffer. */
const char *errstr(int err);

/* Copy at most n-1 bytes of src into dst and terminate it. Returns strlen(src). */
size_t strlcpy_rsw(char *dst, const char *src, size_t n);

#endif
