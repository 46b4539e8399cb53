/* compare --stacks: two runs' live bytes at the peak, matched stack by stack. */
#include "render/stackdiff.h"
#include "base/fmt.h"
#include "base/util.h"
#include "render/callstacks.h"
#include "render/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- the key --- */

static int ends_with(const char *s, size_t len, const char *tail)
{
	size_t t = strlen(tail);
	return len >= t && memcmp(s + len - t, tail, t) == 0;
}

static int all_of(const char *s, size_t len, const char *set)
{
	for (size_t i = 0; i < len; i++)
		if (!strchr(set, s[i]))
			return 0;
	return len > 0;
}

#define HEX "0123456789abcdefABCDEF"
#define DIGITS "0123456789"

/* The length of frame s[0..len) without its place " (file.c:123)": the last " (" whose
 * rest is "NAME:DIGITS)". The last, as a name may hold " (" itself (a Rust impl "for
 * (A, B)"), where a source file's name seldom does. */
static size_t without_place(const char *s, size_t len)
{
	if (!len || s[len - 1] != ')')
		return len;
	for (size_t i = len - 1; i-- > 0;) {
		if (s[i] != ' ' || s[i + 1] != '(')
			continue;
		const char *in = s + i + 2, *colon = NULL;
		for (const char *c = in; c < s + len - 1; c++)
			if (*c == ':')
				colon = c;
		if (colon && colon > in && all_of(colon + 1, (size_t)(s + len - 1 - colon - 1), DIGITS))
			return i;
		return len;	/* the last " (" is not a place: none is */
	}
	return len;
}

/* The compiler's names for the copies it makes of a function (GCC's and LLVM's): which
 * copy a build makes, and its number, changes with the code around it. */
static const char *const clone_suffixes[] = {
	".constprop", ".isra", ".part", ".cold", ".lto_priv", ".llvm", ".localalias", ".clone",
};

/* The length of the name s[0..len) without the compiler's clone suffixes. */
static size_t without_clones(const char *s, size_t len)
{
	for (size_t i = 1; i < len; i++) {
		if (s[i] == ' ' && len - i >= 8 && memcmp(s + i, " [clone ", 8) == 0)
			return i;	/* the demangler's way of saying it */
		if (s[i] != '.')
			continue;
		for (size_t k = 0; k < ARRAY_SIZE(clone_suffixes); k++) {
			size_t t = strlen(clone_suffixes[k]);
			if (len - i >= t && memcmp(s + i, clone_suffixes[k], t) == 0 &&
			    (i + t == len || s[i + t] == '.' || strchr(DIGITS, s[i + t])))
				return i;
		}
	}
	return len;
}

/* One frame's part of the key (see stackdiff.h) onto out. */
static void frame_key(const char *s, size_t len, struct buf *out)
{
	if (ends_with(s, len, " (module changed)"))
		len -= strlen(" (module changed)");
	len = without_place(s, len);
	/* a frame in no module: an address, wherever the run's layout put it */
	if (len > 2 && s[0] == '0' && s[1] == 'x' && all_of(s + 2, len - 2, HEX)) {
		buf_putc(out, '?');
		return;
	}
	/* a frame in a module without names: the module, not the offset */
	for (size_t i = len; i-- > 0;) {
		if (s[i] == '+' && len - i > 3 && s[i + 1] == '0' && s[i + 2] == 'x' &&
		    all_of(s + i + 3, len - i - 3, HEX)) {
			buf_append(out, s, i);
			buf_puts(out, "+?");
			return;
		}
	}
	/* a Rust legacy symbol's hash, where the demangler left it: "::h" and 16 hex digits */
	if (len > 19 && memcmp(s + len - 19, "::h", 3) == 0 && all_of(s + len - 16, 16, HEX))
		len -= 19;
	buf_append(out, s, without_clones(s, len));
}

void stackdiff_key(const char *frames, struct buf *out)
{
	buf_reset(out);
	for (const char *p = frames ? frames : ""; *p;) {
		size_t len = strcspn(p, "\n");
		if (out->len)
			buf_putc(out, '\n');
		frame_key(p, len, out);
		p += len;
		if (*p)
			p++;
	}
}

/* --- matching --- */

/* One stack of one side, with its key. */
struct entry {
	char *key;
	const struct stored_stack *s;
	int side;	/* 0: A, 1: B */
};

static int entry_cmp(const void *x, const void *y)
{
	const struct entry *a = x, *b = y;
	int c = strcmp(a->key, b->key);
	return c ? c : a->side - b->side;
}

static int64_t change_of(const struct stackdiff_row *r)
{
	return r->b_bytes - r->a_bytes;
}

static int64_t abs64(int64_t v)
{
	return v < 0 ? -v : v;
}

/* Rows carry the key they were made from while they are sorted. */
struct keyed_row {
	struct stackdiff_row row;
	const char *key;
};

static int row_cmp(const void *x, const void *y)
{
	const struct keyed_row *a = x, *b = y;
	int64_t da = abs64(change_of(&a->row)), db = abs64(change_of(&b->row));
	if (da != db)
		return da > db ? -1 : 1;
	int64_t ma = a->row.a_bytes > a->row.b_bytes ? a->row.a_bytes : a->row.b_bytes;
	int64_t mb = b->row.a_bytes > b->row.b_bytes ? b->row.a_bytes : b->row.b_bytes;
	if (ma != mb)
		return ma > mb ? -1 : 1;
	return strcmp(a->key, b->key);
}

void stackdiff_build(const struct stored_stack *a, size_t na, const struct stored_stack *b,
		     size_t nb, struct stackdiff *d)
{
	size_t n = na + nb;
	struct entry *e = xcalloc(n ? n : 1, sizeof(*e));
	struct buf key = { 0 };
	memset(d, 0, sizeof(*d));
	for (size_t i = 0; i < n; i++) {
		e[i].side = i >= na;
		e[i].s = e[i].side ? &b[i - na] : &a[i];
		stackdiff_key(e[i].s->frames, &key);
		e[i].key = xstrdup(buf_str(&key));
	}
	buf_release(&key);
	qsort(e, n, sizeof(*e), entry_cmp);
	struct keyed_row *rows = xcalloc(n ? n : 1, sizeof(*rows));
	size_t nr = 0;
	for (size_t i = 0; i < n;) {
		struct keyed_row *r = &rows[nr++];
		const struct stored_stack *rep[2] = { NULL, NULL };	/* each side's largest */
		r->key = e[i].key;
		for (; i < n && strcmp(e[i].key, r->key) == 0; i++) {
			const struct stored_stack *s = e[i].s;
			if (e[i].side) {
				r->row.b_bytes += s->bytes;
				r->row.in_b = 1;
			} else {
				r->row.a_bytes += s->bytes;
				r->row.in_a = 1;
			}
			if (!rep[e[i].side] || s->bytes > rep[e[i].side]->bytes)
				rep[e[i].side] = s;
		}
		r->row.frames = rep[1] ? rep[1]->frames : rep[0]->frames;
		d->a_total += r->row.a_bytes;
		d->b_total += r->row.b_bytes;
	}
	qsort(rows, nr, sizeof(*rows), row_cmp);
	d->rows = xcalloc(nr ? nr : 1, sizeof(*d->rows));
	for (size_t i = 0; i < nr; i++)
		d->rows[i] = rows[i].row;
	d->n = nr;
	free(rows);
	for (size_t i = 0; i < n; i++)
		free(e[i].key);
	free(e);
}

void stackdiff_release(struct stackdiff *d)
{
	if (!d)
		return;
	free(d->rows);
	memset(d, 0, sizeof(*d));
}

/* --- text --- */

/* A byte count of one side: "-" where the side has no such stack. */
static void fmt_side(char *out, size_t n, int64_t bytes, int present)
{
	if (!present)
		snprintf(out, n, "-");
	else
		fmt_bytes(out, n, bytes > 0 ? (uint64_t)bytes : 0);
}

/* A change: "+40.0 MiB", "-2.0 MiB", "0 B". */
static void fmt_change(char *out, size_t n, int64_t d)
{
	char a[24];	/* "8388608.0 TiB" at most */
	fmt_bytes(a, sizeof(a), (uint64_t)abs64(d));
	snprintf(out, n, "%s%s", d > 0 ? "+" : d < 0 ? "-" : "", a);
}

static void line(struct buf *b, const char *x, const char *y, const char *z)
{
	buf_printf(b, "  %11s %11s %11s  ", x, y, z);
}

void stackdiff_text(struct buf *b, const struct stackdiff *d, int64_t a_id, int64_t b_id,
		    size_t top)
{
	char x[32], y[32], z[32], leaf[512];
	size_t changed = 0;
	while (changed < d->n && change_of(&d->rows[changed]) != 0)
		changed++;	/* the rows are ordered by |change|: the unchanged ones last */
	size_t shown = top && top < changed ? top : changed;
	buf_printf(b, "live bytes by stack at the peak: run %lld against run %lld, %zu stack%s, "
		      "%zu changed\n", (long long)b_id, (long long)a_id, d->n, d->n == 1 ? "" : "s",
		   changed);
	snprintf(x, sizeof(x), "run %lld", (long long)a_id);
	snprintf(y, sizeof(y), "run %lld", (long long)b_id);
	line(b, x, y, "change");
	buf_puts(b, "allocated in\n");
	for (size_t i = 0; i < shown; i++) {
		const struct stackdiff_row *r = &d->rows[i];
		fmt_side(x, sizeof(x), r->a_bytes, r->in_a);
		fmt_side(y, sizeof(y), r->b_bytes, r->in_b);
		fmt_change(z, sizeof(z), change_of(r));
		line(b, x, y, z);
		callstacks_leaf(r->frames, leaf, sizeof(leaf));
		buf_put_printable(b, leaf);
		if (!r->in_a || !r->in_b)
			buf_printf(b, " (only in run %lld)", (long long)(r->in_a ? a_id : b_id));
		buf_putc(b, '\n');
	}
	if (shown < d->n) {
		int64_t ra = 0, rb = 0;
		for (size_t i = shown; i < d->n; i++) {
			ra += d->rows[i].a_bytes;
			rb += d->rows[i].b_bytes;
		}
		size_t rest = d->n - shown, same = d->n - changed;
		fmt_side(x, sizeof(x), ra, 1);
		fmt_side(y, sizeof(y), rb, 1);
		fmt_change(z, sizeof(z), rb - ra);
		line(b, x, y, z);
		if (same == rest)
			buf_printf(b, "%zu other stack%s, unchanged\n", rest, rest == 1 ? "" : "s");
		else if (same)
			buf_printf(b, "%zu other stacks, %zu of them unchanged\n", rest, same);
		else
			buf_printf(b, "%zu other stack%s\n", rest, rest == 1 ? "" : "s");
	}
	fmt_side(x, sizeof(x), d->a_total, 1);
	fmt_side(y, sizeof(y), d->b_total, 1);
	fmt_change(z, sizeof(z), d->b_total - d->a_total);
	line(b, x, y, z);
	buf_puts(b, "total\n");
}

/* --- JSON --- */

static void json_side(struct buf *b, int64_t bytes, int present)
{
	if (present)
		buf_printf(b, "%lld", (long long)bytes);
	else
		buf_puts(b, "null");
}

void stackdiff_json(struct buf *b, const struct stackdiff *d)
{
	char leaf[512];
	struct buf frame = { 0 };
	buf_putc(b, '[');
	for (size_t i = 0; i < d->n; i++) {
		const struct stackdiff_row *r = &d->rows[i];
		buf_puts(b, i ? ",{\"a_bytes\":" : "{\"a_bytes\":");
		json_side(b, r->a_bytes, r->in_a);
		buf_puts(b, ",\"b_bytes\":");
		json_side(b, r->b_bytes, r->in_b);
		buf_printf(b, ",\"change_bytes\":%lld,\"leaf\":", (long long)change_of(r));
		callstacks_leaf(r->frames, leaf, sizeof(leaf));
		json_str(b, leaf);
		buf_puts(b, ",\"frames\":[");
		for (const char *p = r->frames ? r->frames : ""; *p;) {
			size_t len = strcspn(p, "\n");
			buf_reset(&frame);
			buf_append(&frame, p, len);
			if (p != r->frames)
				buf_putc(b, ',');
			json_str(b, buf_str(&frame));
			p += len;
			if (*p)
				p++;
		}
		buf_puts(b, "]}");
	}
	buf_puts(b, "]\n");
	buf_release(&frame);
}
