/* UTF-8 checking for text that came from elsewhere (labels, command lines, process
 * names): the escapers for terminals, JSON and HTML decide byte by byte with it. */
#ifndef RSW_BASE_UTF8_H
#define RSW_BASE_UTF8_H

#include <stddef.h>

/* The length (1..4) of the valid UTF-8 sequence that starts at p, or 0 when p does not
 * start one: overlong forms, surrogates, U+FFFE, U+FFFF and code points beyond U+10FFFF
 * are invalid. p is NUL-terminated; nothing past the NUL is read. */
size_t utf8_seq(const unsigned char *p);

#endif
