/* An SVG document rasterized to PNG, through librsvg and cairo when rsswatch was built
 * with them (the Makefile defines HAVE_RSVG where pkg-config finds librsvg-2.0 and
 * cairo); without them every call says so with -ENOTSUP. Pure apart from the
 * libraries: bytes in, bytes out. */
#ifndef RSW_RENDER_PNG_H
#define RSW_RENDER_PNG_H

#include <stddef.h>

#include "base/buf.h"

/* Whether this build can write PNG. */
int png_available(void);

/* Draws the SVG document svg[0..len) at scale times its own size (its width and
 * height attributes) and appends the PNG file's bytes to out. Returns 0, -ENOTSUP
 * without librsvg, -EINVAL when the document cannot be read or has no size, -ENOMEM
 * when the image cannot be made; out is unchanged on failure. */
int svg_to_png(const char *svg, size_t len, double scale, struct buf *out);

/* The line a verb prints when asked for PNG by a build without it. */
#define PNG_UNAVAILABLE "PNG output needs librsvg at build time (Debian: librsvg2-dev, then rebuild)"

#endif
