#include "render/xml.h"

#include <stdint.h>

#define REPLACEMENT "\xef\xbf\xbd"	/* U+FFFD */

/* The length of the valid UTF-8 sequence at p (1..4), or 0 when it is not one:
 * overlong forms, surrogates and code points beyond U+10FFFF are invalid. */
static size_t utf8_seq(const unsigned char *p)
{
	uint32_t cp;
	size_t len;
	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		len = 2;
		cp = p[0] & 0x1f;
	} else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		len = 3;
		cp = p[0] & 0x0f;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		len = 4;
		cp = p[0] & 0x07;
	} else {
		return 0;
	}
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff)
		return 0;
	return len;
}

size_t utf8_chars(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = 0;
	while (*p) {
		size_t l = utf8_seq(p);
		p += l ? l : 1;
		n++;
	}
	return n;
}

static void escape(struct buf *b, const char *s, size_t max_chars)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = 0;
	while (*p) {
		if (n == max_chars) {
			buf_puts(b, "\xe2\x80\xa6");	/* U+2026 */
			return;
		}
		size_t l = utf8_seq(p);
		n++;
		if (l == 0) {
			buf_puts(b, REPLACEMENT);
			p++;
			continue;
		}
		if (l > 1) {
			buf_append(b, p, l);
			p += l;
			continue;
		}
		switch (*p) {
		case '&': buf_puts(b, "&amp;"); break;
		case '<': buf_puts(b, "&lt;"); break;
		case '>': buf_puts(b, "&gt;"); break;
		case '"': buf_puts(b, "&quot;"); break;
		case '\'': buf_puts(b, "&#39;"); break;
		case '\t': case '\n': case '\r': buf_putc(b, (char)*p); break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				buf_puts(b, REPLACEMENT);
			else
				buf_putc(b, (char)*p);
		}
		p++;
	}
}

void xml_text(struct buf *b, const char *s)
{
	escape(b, s ? s : "", SIZE_MAX);
}

void xml_text_trunc(struct buf *b, const char *s, size_t max_chars)
{
	if (!s)
		return;
	/* Cut one character earlier so that the ellipsis fits within max_chars. */
	if (max_chars > 1 && utf8_chars(s) > max_chars)
		max_chars--;
	escape(b, s, max_chars);
}
