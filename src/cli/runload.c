#include "cli/runload.h"
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

static int collect(void *ctx, const struct sample *s)
{
	struct loaded_run *lr = ctx;
	if (lr->n == lr->cap) {
		lr->cap = lr->cap ? lr->cap * 2 : 1024;
		lr->s = xrealloc(lr->s, lr->cap * sizeof(*lr->s));
	}
	lr->s[lr->n++] = *s;
	return 0;
}

static int counter_cb(void *ctx, int64_t elapsed, const char *name, long long value)
{
	struct loaded_run *lr = ctx;
	counter_series_add(&lr->counters, &lr->ncounters, name, elapsed, value);
	return 0;
}

int loaded_run_load(struct store *st, const char *ref, struct loaded_run *lr)
{
	int64_t id;
	int ret = cli_resolve_run(st, ref, &id);
	memset(lr, 0, sizeof(*lr));
	if (ret)
		return ret;
	if (store_get_run(st, id, &lr->run) < 0) {
		cli_error("cannot read run %lld: %s", (long long)id, store_errmsg(st));
		return EXIT_FAIL;
	}
	if (store_each_sample(st, id, collect, lr) < 0 ||
	    store_marks(st, id, &lr->marks, &lr->nmarks) < 0 ||
	    store_events(st, id, &lr->events, &lr->nevents) < 0 ||
	    store_oom_kills(st, id, &lr->kills, &lr->nkills) < 0 ||
	    store_each_counter(st, id, counter_cb, lr) < 0) {
		cli_error("cannot read run %lld: %s", (long long)id, store_errmsg(st));
		loaded_run_release(lr);
		return EXIT_FAIL;
	}
	return 0;
}

void loaded_run_release(struct loaded_run *lr)
{
	if (!lr)
		return;
	run_release(&lr->run);
	free(lr->s);
	store_free_marks(lr->marks, lr->nmarks);
	store_free_events(lr->events, lr->nevents);
	free(lr->kills);
	counter_series_free(lr->counters, lr->ncounters);
	memset(lr, 0, sizeof(*lr));
}

int64_t loaded_run_mark(const struct loaded_run *lr, const char *label)
{
	for (size_t i = 0; i < lr->nmarks; i++)
		if (strcmp(lr->marks[i].label, label) == 0)
			return lr->marks[i].t;
	return 0;
}

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
