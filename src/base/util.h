/* Small helpers every part of the tool uses: allocation that dies on OOM (the tool may;
 * the client library in lib/ may not), error text, array sizes. */
#ifndef RSW_BASE_UTIL_H
#define RSW_BASE_UTIL_H

#include <stddef.h>
#include <sys/types.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
/* Room in array p (*cap elements of size bytes) for its element number n: the capacity
 * doubles (from 16) until it holds it; the result replaces p. A size that would
 * overflow ends the program as an allocation failure does. */
void *xgrow(void *p, size_t n, size_t *cap, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);

/* strerror() with a lowercase first letter, as messages are written ("no such process").
 * Takes a positive or negative errno. Returns a thread-local buffer. */
const char *errstr(int err);

/* Copy at most n-1 bytes of src into dst and terminate it. Returns strlen(src). */
size_t strlcpy_rsw(char *dst, const char *src, size_t n);

/* A user given as a uid ("1000") or a name (the password database). Returns 0, -ENOENT
 * (no such user), -ERANGE, or another -errno. */
int user_uid(const char *s, uid_t *out);

#endif
