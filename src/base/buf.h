/* A growable byte buffer, always NUL-terminated. A zeroed struct buf is an empty buffer.
 * Used to assemble output lines, JSON and SQL-free text; never on the sampling hot path
 * except through buf_reset() (which keeps the allocation). */
#ifndef RSW_BASE_BUF_H
#define RSW_BASE_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct buf {
	char *p;	/* NULL until the first append; else NUL-terminated */
	size_t len;
	size_t cap;
};

void buf_reserve(struct buf *b, size_t extra);
void buf_append(struct buf *b, const void *data, size_t n);
void buf_puts(struct buf *b, const char *s);
void buf_putc(struct buf *b, char c);
void buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void buf_vprintf(struct buf *b, const char *fmt, va_list ap);
/* Appends s for a terminal: control characters (a newline in a label, an escape
 * sequence, C1 controls) and bytes that are not UTF-8 become '?', so one value stays on
 * one line and cannot drive the terminal. */
void buf_put_printable(struct buf *b, const char *s);
/* Appends the word w as a POSIX shell would read it back: as it is when it holds none
 * of the shell's special characters, else in single quotes (a quote inside as '\'').
 * An empty word is ''. */
void buf_put_shell_word(struct buf *b, const char *w);
void buf_reset(struct buf *b);
void buf_release(struct buf *b);
/* The contents as a string ("" when empty). */
const char *buf_str(const struct buf *b);

#endif
