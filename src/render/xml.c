#include "render/xml.h"
#include "base/utf8.h"

#include <stdint.h>

#define REPLACEMENT "\xef\xbf\xbd"	/* U+FFFD */

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
