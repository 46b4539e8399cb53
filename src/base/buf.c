#include "base/buf.h"
#include "base/utf8.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void buf_reserve(struct buf *b, size_t extra)
{
	size_t need = b->len + extra + 1;
	if (need <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap *= 2;
	b->p = xrealloc(b->p, cap);
	b->cap = cap;
}

void buf_append(struct buf *b, const void *data, size_t n)
{
	buf_reserve(b, n);
	memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void buf_puts(struct buf *b, const char *s)
{
	buf_append(b, s, strlen(s));
}

void buf_putc(struct buf *b, char c)
{
	buf_append(b, &c, 1);
}

void buf_vprintf(struct buf *b, const char *fmt, va_list ap)
{
	va_list ap2;
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n <= 0)
		return;
	buf_reserve(b, (size_t)n);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
}

void buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	buf_vprintf(b, fmt, ap);
	va_end(ap);
}

void buf_put_printable(struct buf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		size_t l = utf8_seq(p);
		/* C1 controls (U+0080..U+009F) are as dangerous as C0 ones: CSI is U+009B. */
		if (l > 1 && !(p[0] == 0xc2 && p[1] < 0xa0)) {
			buf_append(b, p, l);
			p += l;
			continue;
		}
		buf_putc(b, l == 1 && *p >= 0x20 && *p != 0x7f ? (char)*p : '?');
		p += l ? l : 1;
	}
}

void buf_put_shell_word(struct buf *b, const char *w)
{
	if (*w && !strpbrk(w, " \t\n'\"\\$`*?;&|<>()")) {
		buf_puts(b, w);
		return;
	}
	buf_putc(b, '\'');
	for (const char *c = w; *c; c++) {
		if (*c == '\'')
			buf_puts(b, "'\\''");
		else
			buf_putc(b, *c);
	}
	buf_putc(b, '\'');
}

void buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->p)
		b->p[0] = '\0';
}

void buf_release(struct buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

const char *buf_str(const struct buf *b)
{
	return b->p ? b->p : "";
}
