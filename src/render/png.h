/* An SVG document rasterized to PNG, through librsvg and cairo when rsswatch was built
 * with their headers (the Makefile defines HAVE_RSVG where pkg-config finds
 * librsvg-2.0 and cairo) and librsvg can be loaded at run time (dlopen, at the first
 * PNG: a recorder never maps them); without them every call says so with -ENOTSUP.
 * Pure apart from the libraries: bytes in, bytes out. */
#ifndef RSW_RENDER_PNG_H
#define RSW_RENDER_PNG_H

#include <stddef.h>

#include "base/buf.h"

/* Whether this build, on this machine, can write PNG. */
int png_available(void);

/* Draws the SVG document svg[0..len) at scale times its own size (its width and
 * height attributes) and appends the PNG file's bytes to out. Returns 0, -ENOTSUP
 * without librsvg, -EINVAL when the document cannot be read or has no size, -ENOMEM
 * when the image cannot be made; out is unchanged on failure. */
int svg_to_png(const char *svg, size_t len, double scale, struct buf *out);

/* The line a verb prints when asked for PNG where it cannot be written (why: no
 * headers at build time, or no librsvg at run time); NULL where it can. */
const char *png_unavailable(void);

#endif
