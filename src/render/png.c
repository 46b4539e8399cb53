#include "render/png.h"

#include <errno.h>

#ifdef HAVE_RSVG
#include <cairo.h>
#include <dlfcn.h>
#include <librsvg/rsvg.h>
#include <math.h>

/* librsvg and cairo are loaded when a PNG is first asked for, not linked: linked, their
 * sixty libraries (glib, pango, X11, gnutls through them) are mapped and relocated in
 * every rsswatch process, a recorder included, and touch about 11 MiB of its memory.
 * The headers give the types; the symbols come from librsvg's handle, whose
 * dependencies (cairo, glib, gobject) are searched with it. */
#define RSVG_LIB "librsvg-2.so.2"

static struct {
	int tried, ok;
	__typeof__(&rsvg_handle_new_from_data) new_from_data;
	__typeof__(&rsvg_handle_get_intrinsic_size_in_pixels) size_in_pixels;
	__typeof__(&rsvg_handle_render_document) render_document;
	__typeof__(&g_error_free) error_free;
	__typeof__(&g_object_unref) object_unref;
	__typeof__(&cairo_image_surface_create) surface_create;
	__typeof__(&cairo_surface_status) surface_status;
	__typeof__(&cairo_surface_destroy) surface_destroy;
	__typeof__(&cairo_surface_write_to_png_stream) write_png;
	__typeof__(&cairo_create) create;
	__typeof__(&cairo_scale) scale;
	__typeof__(&cairo_destroy) destroy;
} lib;

#define RESOLVE(h, field, name) (*(void **)&lib.field = dlsym(h, name)) != NULL

static int load(void)
{
	if (lib.tried)
		return lib.ok;
	lib.tried = 1;
	void *h = dlopen(RSVG_LIB, RTLD_LAZY | RTLD_LOCAL);
	if (!h)
		return 0;
	lib.ok = RESOLVE(h, new_from_data, "rsvg_handle_new_from_data") &&
		 RESOLVE(h, size_in_pixels, "rsvg_handle_get_intrinsic_size_in_pixels") &&
		 RESOLVE(h, render_document, "rsvg_handle_render_document") &&
		 RESOLVE(h, error_free, "g_error_free") &&
		 RESOLVE(h, object_unref, "g_object_unref") &&
		 RESOLVE(h, surface_create, "cairo_image_surface_create") &&
		 RESOLVE(h, surface_status, "cairo_surface_status") &&
		 RESOLVE(h, surface_destroy, "cairo_surface_destroy") &&
		 RESOLVE(h, write_png, "cairo_surface_write_to_png_stream") &&
		 RESOLVE(h, create, "cairo_create") && RESOLVE(h, scale, "cairo_scale") &&
		 RESOLVE(h, destroy, "cairo_destroy");
	/* never closed: glib's types cannot be unloaded */
	return lib.ok;
}

int png_available(void) { return load(); }

const char *png_unavailable(void)
{
	return load() ? NULL : "PNG output needs librsvg at run time (" RSVG_LIB
		" with cairo; Debian: librsvg2-2)";
}

static cairo_status_t append_png(void *closure, const unsigned char *data, unsigned int n)
{
	buf_append(closure, data, n);
	return CAIRO_STATUS_SUCCESS;
}

static void drop_error(GError *err)
{
	if (err)
		lib.error_free(err);
}

int svg_to_png(const char *svg, size_t len, double scale, struct buf *out)
{
	if (!load())
		return -ENOTSUP;
	GError *err = NULL;
	RsvgHandle *h = lib.new_from_data((const guint8 *)svg, len, &err);
	if (!h) {
		drop_error(err);
		return -EINVAL;
	}
	int ret = -EINVAL;
	gdouble w = 0, ht = 0;
	cairo_surface_t *s = NULL;
	if (!lib.size_in_pixels(h, &w, &ht) || w < 1 || ht < 1 || scale <= 0 ||
	    w * scale > 32767 || ht * scale > 32767)
		goto out;
	s = lib.surface_create(CAIRO_FORMAT_ARGB32, (int)ceil(w * scale), (int)ceil(ht * scale));
	if (lib.surface_status(s) != CAIRO_STATUS_SUCCESS) {
		ret = -ENOMEM;
		goto out;
	}
	cairo_t *cr = lib.create(s);
	lib.scale(cr, scale, scale);
	RsvgRectangle vp = { 0, 0, w, ht };
	int drawn = lib.render_document(h, cr, &vp, &err);
	lib.destroy(cr);
	if (!drawn) {
		drop_error(err);
		goto out;
	}
	struct buf png = { 0 };
	if (lib.write_png(s, append_png, &png) != CAIRO_STATUS_SUCCESS) {
		buf_release(&png);
		ret = -ENOMEM;
		goto out;
	}
	buf_append(out, png.p, png.len);
	buf_release(&png);
	ret = 0;
out:
	if (s)
		lib.surface_destroy(s);
	lib.object_unref(h);
	return ret;
}

#else

int png_available(void) { return 0; }

const char *png_unavailable(void)
{
	return "PNG output needs librsvg at build time (Debian: librsvg2-dev, then rebuild)";
}

int svg_to_png(const char *svg, size_t len, double scale, struct buf *out)
{
	(void)svg;
	(void)len;
	(void)scale;
	(void)out;
	return -ENOTSUP;
}

#endif
