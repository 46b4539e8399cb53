/* A minimal JSON writer for --json output: strings are escaped per RFC 8259, and bytes
 * that are not UTF-8 become U+FFFD, so the output is always valid JSON. */
#ifndef RSW_RENDER_JSON_H
#define RSW_RENDER_JSON_H

#include <stdint.h>

#include "base/buf.h"
#include "store/model.h"

void json_str(struct buf *b, const char *s);
/* An ISO 8601 UTC time string, or null when t is 0. */
void json_time(struct buf *b, int64_t realtime_ns);
/* One run object with the fields of the CLI contract (DESIGN.md). */
void json_run(struct buf *b, const struct run *r);
/* The same fields without the enclosing braces, for objects that add more. */
void json_run_fields(struct buf *b, const struct run *r);

#endif
