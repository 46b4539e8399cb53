/* Output helpers of the verbs that write files or pictures (plot, report, compare,
 * model): -o written safely, the name's ending checked against what is written, PNG
 * pictures through librsvg, and the title a picture carries. They print their errors,
 * as CLI code does. */
#ifndef RSW_CLI_OUTPUT_H
#define RSW_CLI_OUTPUT_H

#include <stddef.h>

#include "base/buf.h"
#include "store/run.h"

/* Writes b to path ("-" is standard output), replacing the file. Prints the error;
 * returns 0 or EXIT_FAIL. */
int write_output(const char *path, const struct buf *b);

/* Whether path names a PNG file (ends in ".png", any case). */
int path_is_png(const char *path);
/* A picture's title when none is given: "run 7: LABEL", or "runs 7, 8 and 9" (a PNG
 * travels alone, without the page or the command that made it). Appended to t. */
void runs_title(struct buf *t, const struct run *const *runs, size_t n);
/* Whether -o path ends in one of exts (NULL-terminated, any case) or is "-" or
 * /dev/stdout (standard output): 0, or
 * EXIT_USAGE (printed: a chart written into "x.txt" would be a silent surprise). */
int cli_output_kind(const char *verb, const char *path, const char *const *exts);
/* Writes the SVG document in svg to path as a PNG image at twice its size (sharp on
 * high-density screens). Prints the error (png_unavailable() where librsvg is
 * missing); returns 0 or EXIT_FAIL. */
int write_png(const char *path, const struct buf *svg);

#endif
