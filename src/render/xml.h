/* Escaping of text for XML, SVG and HTML. Every string that did not come from the
 * renderer itself (labels, marks, command lines, event details, host names) goes through
 * xml_text() before it reaches a document, so that `<script>` in a label shows as text. */
#ifndef RSW_RENDER_XML_H
#define RSW_RENDER_XML_H

#include <stddef.h>

#include "base/buf.h"

/* Appends s with & < > " ' replaced by entities, usable both in element content and in
 * quoted attribute values. Bytes that XML 1.0 forbids (control characters other than
 * tab, newline and carriage return) and invalid UTF-8 sequences are replaced by U+FFFD,
 * so the output is always well-formed. */
void xml_text(struct buf *b, const char *s);

/* The same for at most max_chars characters (code points) of s; when s is longer, the
 * text is cut at a character boundary and ends with an ellipsis. */
void xml_text_trunc(struct buf *b, const char *s, size_t max_chars);

/* The number of characters (code points; invalid bytes count one each) in s. */
size_t utf8_chars(const char *s);

#endif
