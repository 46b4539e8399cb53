#include "render/png.h"

#include <errno.h>

#ifdef HAVE_RSVG
#include <cairo.h>
#include <librsvg/rsvg.h>
#include <math.h>

int png_available(void) { return 1; }

static cairo_status_t append_png(void *closure, const unsigned char *data, unsigned int n)
{
	buf_append(closure, data, n);
	return CAIRO_STATUS_SUCCESS;
}

int svg_to_png(const char *svg, size_t len, double scale, struct buf *out)
{
	GError *err = NULL;
	RsvgHandle *h = rsvg_handle_new_from_data((const guint8 *)svg, len, &err);
	if (!h) {
		if (err)
			g_error_free(err);
		return -EINVAL;
	}
	int ret = -EINVAL;
	gdouble w = 0, ht = 0;
	cairo_surface_t *s = NULL;
	if (!rsvg_handle_get_intrinsic_size_in_pixels(h, &w, &ht) || w < 1 || ht < 1 || scale <= 0 ||
	    w * scale > 32767 || ht * scale > 32767)
		goto out;
	s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, (int)ceil(w * scale), (int)ceil(ht * scale));
	if (cairo_surface_status(s) != CAIRO_STATUS_SUCCESS) {
		ret = -ENOMEM;
		goto out;
	}
	cairo_t *cr = cairo_create(s);
	cairo_scale(cr, scale, scale);
	RsvgRectangle vp = { 0, 0, w, ht };
	int drawn = rsvg_handle_render_document(h, cr, &vp, &err);
	cairo_destroy(cr);
	if (!drawn) {
		if (err)
			g_error_free(err);
		goto out;
	}
	struct buf png = { 0 };
	if (cairo_surface_write_to_png_stream(s, append_png, &png) != CAIRO_STATUS_SUCCESS) {
		buf_release(&png);
		ret = -ENOMEM;
		goto out;
	}
	buf_append(out, png.p, png.len);
	buf_release(&png);
	ret = 0;
out:
	if (s)
		cairo_surface_destroy(s);
	g_object_unref(h);
	return ret;
}

#else

int png_available(void) { return 0; }

int svg_to_png(const char *svg, size_t len, double scale, struct buf *out)
{
	(void)svg;
	(void)len;
	(void)scale;
	(void)out;
	return -ENOTSUP;
}

#endif
