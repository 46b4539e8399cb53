/* What the verbs that write files share (output.h): writing -o, what its name says,
 * PNG pictures, a picture's title. */
#include "cli/output.h"
#include "base/buf.h"
#include "base/safefile.h"
#include "base/util.h"
#include "cli/cli.h"
#include "render/png.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int write_output(const char *path, const struct buf *b)
{
	struct safefile sf;
	FILE *f = safefile_open(&sf, path, 0600);	/* as the database: command lines */
	if (!f) {
		cli_error("cannot write %s: %s", path, sf.why);
		return EXIT_FAIL;
	}
	size_t w = fwrite(buf_str(b), 1, b->len, f);
	if (safefile_close(&sf, w == b->len) < 0 || w != b->len) {
		cli_error("cannot write %s: %s", strcmp(path, "-") ? path : "to standard output",
			  w == b->len ? sf.why : "write error");
		return EXIT_FAIL;
	}
	return 0;
}

static int path_has_ext(const char *path, const char *ext)
{
	size_t n = strlen(path), k = strlen(ext);
	return n > k && strcasecmp(path + n - k, ext) == 0;
}

int path_is_png(const char *path)
{
	return path_has_ext(path, ".png");
}

void runs_title(struct buf *t, const struct run *const *runs, size_t n)
{
	if (n == 1) {
		buf_printf(t, "run %lld", (long long)runs[0]->id);
		if (runs[0]->label && runs[0]->label[0])
			buf_printf(t, ": %s", runs[0]->label);
		return;
	}
	buf_puts(t, "runs ");
	for (size_t i = 0; i < n; i++)
		buf_printf(t, "%s%lld", i == 0 ? "" : i + 1 == n ? " and " : ", ",
			   (long long)runs[i]->id);
}

int cli_output_kind(const char *verb, const char *path, const char *const *exts)
{
	if (strcmp(path, "-") == 0 || strcmp(path, "/dev/stdout") == 0)	/* as safefile */
		return 0;
	for (size_t i = 0; exts[i]; i++)
		if (path_has_ext(path, exts[i]))
			return 0;
	struct buf want = { 0 }, shown = { 0 };
	for (size_t i = 0; exts[i]; i++)
		buf_printf(&want, "%s%s", i ? (exts[i + 1] ? ", " : " or ") : "", exts[i]);
	buf_put_printable(&shown, path);
	int ret = cli_usage(verb, "-o %s: the file's name says what it holds: end it in %s, "
			    "or give - for standard output", buf_str(&shown), buf_str(&want));
	buf_release(&want);
	buf_release(&shown);
	return ret;
}

int write_png(const char *path, const struct buf *svg)
{
	struct buf png = { 0 };
	int r = svg_to_png(buf_str(svg), svg->len, 2.0, &png);
	if (r == -ENOTSUP) {
		cli_error("%s", png_unavailable());
		return EXIT_FAIL;
	}
	if (r < 0) {
		cli_error("cannot draw %s: %s", path, errstr(-r));
		return EXIT_FAIL;
	}
	r = write_output(path, &png);
	buf_release(&png);
	return r;
}
