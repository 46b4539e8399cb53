/* render/stackdiff.c: two runs' stacks matched by their functions across a rebuild
 * (lines, offsets, addresses and clone suffixes changed), merged within a run, ordered
 * by the size of their change, and shown as a table and JSON with hostile names
 * escaped. */
#include "testutil.h"

#include <string.h>

#include "render/stackdiff.h"

#define MIB (1024LL * 1024)
/* what glibc maps for a malloc of n MiB: one page more, its header */
#define BLOCK(n) ((n) * MIB + 4096)

/* The frames of t85's program: each function of its own name, called from main. */
#define ALLOC(fn, l1, l2)                                                                  \
	"__GI___mmap64 (mmap64.c:58)\nsysmalloc (malloc.c:2435)\n__GI___libc_malloc "      \
	"(malloc.c:3315)\n" fn " (prog.c:" #l1 ")\nmain (prog.c:" #l2 ")\n_start"

static char *key_of(const char *frames)
{
	struct buf b = { 0 };
	stackdiff_key(frames, &b);
	char *k = strdup(buf_str(&b));
	buf_release(&b);
	return k;
}

static void assert_key(const char *frames, const char *want)
{
	char *k = key_of(frames);
	if (strcmp(k, want) != 0)
		fail_msg("key of \"%s\": \"%s\", want \"%s\"", frames, k, want);
	free(k);
}

static void assert_same_key(const char *x, const char *y, int same)
{
	char *a = key_of(x), *b = key_of(y);
	if ((strcmp(a, b) == 0) != same)
		fail_msg("\"%s\" and \"%s\" should %smatch (keys \"%s\", \"%s\")", x, y,
			 same ? "" : "not ", a, b);
	free(a);
	free(b);
}

static void test_key(void **state)
{
	(void)state;
	/* a rebuild that moved the lines: the same stack */
	assert_same_key(ALLOC("alloc_table", 40, 106), ALLOC("alloc_table", 44, 131), 1);
	assert_key(ALLOC("alloc_table", 40, 106),
		   "__GI___mmap64\nsysmalloc\n__GI___libc_malloc\nalloc_table\nmain\n_start");
	/* other functions, or the same ones in another order: another stack */
	assert_same_key(ALLOC("alloc_table", 40, 106), ALLOC("alloc_buffers", 40, 106), 0);
	assert_same_key("f (a.c:1)\ng (a.c:2)", "g (a.c:2)\nf (a.c:1)", 0);
	assert_same_key("f (a.c:1)\ng (a.c:2)", "f (a.c:1)", 0);
	/* a frame without a name keeps its module, not its offset */
	assert_key("prog+0x1a2b\nmain (prog.c:9)", "prog+?\nmain");
	assert_same_key("prog+0x1a2b", "prog+0x1c40", 1);
	assert_same_key("prog+0x1a2b", "libfoo.so.1+0x1a2b", 0);
	assert_key("prog+0x10 (module changed)", "prog+?");
	/* a frame in no module: any address is the same unknown */
	assert_key("0x7f3c12345678\nmain", "?\nmain");
	assert_same_key("0x7f3c12345678", "0x55aa00001000", 1);
	/* the compiler's clones, in the symbol table and as the demangler says them */
	assert_key("alloc_table.constprop.0", "alloc_table");
	assert_key("grow.isra.0.part.3 (g.c:3)", "grow");
	assert_key("grow.cold", "grow");
	assert_key("pipeline::build(unsigned long) [clone .constprop.0] (p.cc:7)",
		   "pipeline::build(unsigned long)");
	assert_key("h.lto_priv.0\nk.llvm.1234567", "h\nk");
	/* a dot that is not a clone's stays */
	assert_key("std::vector<int>::push_back.partial", "std::vector<int>::push_back.partial");
	/* a Rust legacy hash left by the demangler */
	assert_key("buffers::alloc::h0123456789abcdef", "buffers::alloc");
	/* a name with " (" of its own loses only its place */
	assert_key("<impl Fill for (A, B)>::fill (lib.rs:12)", "<impl Fill for (A, B)>::fill");
	assert_key("f (not a place)", "f (not a place)");
	assert_key("f (x.c:)", "f (x.c:)");
	assert_key("[not walked]", "[not walked]");
	assert_key("", "");
}

static struct stored_stack st(int64_t bytes, const char *frames)
{
	return (struct stored_stack){ .bytes = bytes, .blocks = 1, .frames = (char *)frames };
}

static const struct stackdiff_row *row_of(const struct stackdiff *d, const char *fn)
{
	char leafy[128];
	snprintf(leafy, sizeof(leafy), "\n%s (", fn);
	for (size_t i = 0; i < d->n; i++)
		if (strstr(d->rows[i].frames, leafy))
			return &d->rows[i];
	fail_msg("no row for %s", fn);
	return NULL;
}

/* Run A: "table 100 buffers 3 20" and more; run B, rebuilt with its lines moved:
 * "table 60 buffers 5 20". */
static void two_runs(struct stored_stack *a, size_t *na, struct stored_stack *b, size_t *nb)
{
	size_t i = 0;
	a[i++] = st(BLOCK(100), ALLOC("alloc_table", 40, 106));
	a[i++] = st(3 * BLOCK(20), ALLOC("alloc_buffers", 48, 111));
	a[i++] = st(BLOCK(8), ALLOC("old_cache", 70, 120));		/* only in A */
	a[i++] = st(132 * 1024, "__brk (brk.c:36)\nsbrk\nmain (prog.c:106)");	/* same */
	*na = i;
	i = 0;
	b[i++] = st(5 * BLOCK(20), ALLOC("alloc_buffers", 52, 117));
	b[i++] = st(BLOCK(50), ALLOC("alloc_table", 41, 113));
	b[i++] = st(BLOCK(10), ALLOC("alloc_table", 41, 140));		/* a second call */
	b[i++] = st(BLOCK(2), ALLOC("new_index", 90, 150));		/* only in B */
	b[i++] = st(132 * 1024, "__brk (brk.c:36)\nsbrk\nmain (prog.c:113)");
	*nb = i;
}

static void test_match(void **state)
{
	(void)state;
	struct stored_stack a[8], b[8];
	size_t na, nb;
	two_runs(a, &na, b, &nb);
	struct stackdiff d;
	stackdiff_build(a, na, b, nb, &d);
	assert_int_equal(d.n, 5);	/* table's two calls in B are one row */
	const struct stackdiff_row *t = row_of(&d, "alloc_table");
	assert_int_equal(t->a_bytes, BLOCK(100));
	assert_int_equal(t->b_bytes, BLOCK(50) + BLOCK(10));
	assert_true(t->in_a && t->in_b);
	/* the frames shown are B's largest stack of the key, lines and all */
	assert_ptr_equal(t->frames, b[1].frames);
	const struct stackdiff_row *u = row_of(&d, "alloc_buffers");
	assert_int_equal(u->b_bytes - u->a_bytes, 2 * BLOCK(20));
	const struct stackdiff_row *o = row_of(&d, "old_cache");
	assert_true(o->in_a && !o->in_b);
	assert_int_equal(o->b_bytes, 0);
	assert_ptr_equal(o->frames, a[2].frames);
	const struct stackdiff_row *n = row_of(&d, "new_index");
	assert_true(!n->in_a && n->in_b);
	assert_int_equal(n->a_bytes, 0);

	/* by |change|, most first: table -40 MiB, buffers +40 MiB (+8 KiB), old_cache -8
	 * MiB, new_index +2 MiB, the heap unchanged */
	assert_ptr_equal(&d.rows[0], u);	/* +40 MiB + 8 KiB beats -40 MiB + 4 KiB */
	assert_ptr_equal(&d.rows[1], t);
	assert_ptr_equal(&d.rows[2], o);
	assert_ptr_equal(&d.rows[3], n);
	assert_int_equal(d.rows[4].a_bytes, 132 * 1024);
	assert_int_equal(d.rows[4].b_bytes, 132 * 1024);
	for (size_t i = 1; i < d.n; i++) {
		int64_t p = d.rows[i - 1].b_bytes - d.rows[i - 1].a_bytes;
		int64_t q = d.rows[i].b_bytes - d.rows[i].a_bytes;
		assert_true((p < 0 ? -p : p) >= (q < 0 ? -q : q));
	}

	/* the totals are the sides' sums */
	int64_t ta = 0, tb = 0;
	for (size_t i = 0; i < na; i++)
		ta += a[i].bytes;
	for (size_t i = 0; i < nb; i++)
		tb += b[i].bytes;
	assert_int_equal(d.a_total, ta);
	assert_int_equal(d.b_total, tb);
	assert_int_equal(d.b_total - d.a_total,
			 2 * BLOCK(20) - 40 * MIB + 4096 - BLOCK(8) + BLOCK(2));
	stackdiff_release(&d);

	/* the same order whichever order the stacks come in */
	struct stored_stack ra[8], rb[8];
	for (size_t i = 0; i < na; i++)
		ra[i] = a[na - 1 - i];
	for (size_t i = 0; i < nb; i++)
		rb[i] = b[nb - 1 - i];
	struct stackdiff e;
	stackdiff_build(ra, na, rb, nb, &e);
	assert_int_equal(e.n, 5);
	stackdiff_build(a, na, b, nb, &d);
	for (size_t i = 0; i < d.n; i++) {
		assert_int_equal(e.rows[i].a_bytes, d.rows[i].a_bytes);
		assert_int_equal(e.rows[i].b_bytes, d.rows[i].b_bytes);
	}
	stackdiff_release(&d);
	stackdiff_release(&e);

	/* nothing on either side */
	stackdiff_build(NULL, 0, NULL, 0, &d);
	assert_int_equal(d.n, 0);
	assert_int_equal(d.a_total, 0);
	stackdiff_release(&d);
	stackdiff_release(NULL);
}

static void test_text(void **state)
{
	(void)state;
	struct stored_stack a[8], b[8];
	size_t na, nb;
	two_runs(a, &na, b, &nb);
	struct stackdiff d;
	stackdiff_build(a, na, b, nb, &d);
	struct buf out = { 0 };
	stackdiff_text(&out, &d, 41, 42, STACKDIFF_TOP);
	const char *want =
		"live bytes by stack at the peak: run 42 against run 41, 5 stacks, 4 changed\n"
		"       run 41      run 42      change  allocated in\n"
		"     60.0 MiB   100.0 MiB   +40.0 MiB  alloc_buffers\n"
		"    100.0 MiB    60.0 MiB   -40.0 MiB  alloc_table\n"
		"      8.0 MiB           -    -8.0 MiB  old_cache (only in run 41)\n"
		"            -     2.0 MiB    +2.0 MiB  new_index (only in run 42)\n"
		"    132.0 KiB   132.0 KiB         0 B  1 other stack, unchanged\n"
		"    168.1 MiB   162.2 MiB    -6.0 MiB  total\n";
	assert_string_equal(buf_str(&out), want);

	/* --top 2: the two largest changes, the rest in one line */
	buf_reset(&out);
	stackdiff_text(&out, &d, 41, 42, 2);
	assert_non_null(strstr(buf_str(&out), "  -40.0 MiB  alloc_table\n"));
	assert_null(strstr(buf_str(&out), "old_cache"));
	assert_non_null(strstr(buf_str(&out),
		"\n      8.1 MiB     2.1 MiB    -6.0 MiB  3 other stacks, 1 of them unchanged\n"));
	assert_non_null(strstr(buf_str(&out), "    -6.0 MiB  total\n"));
	stackdiff_release(&d);

	/* a name that would drive the terminal is shown escaped, on one line */
	struct stored_stack h = st(BLOCK(1), "ev\x1b]0;owned\a\xc2\x9b" "il (x.c:1)\nmain");
	stackdiff_build(NULL, 0, &h, 1, &d);
	buf_reset(&out);
	stackdiff_text(&out, &d, 1, 2, STACKDIFF_TOP);
	assert_non_null(strstr(buf_str(&out), "  ev?]0;owned??il (only in run 2)\n"));
	for (const char *p = buf_str(&out); *p; p++)
		assert_true((unsigned char)*p >= 0x20 || *p == '\n');
	stackdiff_release(&d);
	buf_release(&out);
}

static void test_json(void **state)
{
	(void)state;
	struct stored_stack a[2], b[2];
	a[0] = st(BLOCK(100), "sysmalloc (malloc.c:2435)\nalloc_table (prog.c:40)\nmain (prog.c:106)");
	a[1] = st(4096, "gone (g.c:1)");
	b[0] = st(BLOCK(60), "sysmalloc (malloc.c:2435)\nalloc_table (prog.c:44)\nmain (prog.c:110)");
	b[1] = st(8192, "n\"e\\w\x01 (n.c:2)");
	struct stackdiff d;
	stackdiff_build(a, 2, b, 2, &d);
	struct buf out = { 0 };
	stackdiff_json(&out, &d);
	const char *want =
		"[{\"a_bytes\":104861696,\"b_bytes\":62918656,\"change_bytes\":-41943040,"
		"\"leaf\":\"alloc_table\",\"frames\":[\"sysmalloc (malloc.c:2435)\","
		"\"alloc_table (prog.c:44)\",\"main (prog.c:110)\"]},"
		"{\"a_bytes\":null,\"b_bytes\":8192,\"change_bytes\":8192,"
		"\"leaf\":\"n\\\"e\\\\w\\u0001\",\"frames\":[\"n\\\"e\\\\w\\u0001 (n.c:2)\"]},"
		"{\"a_bytes\":4096,\"b_bytes\":null,\"change_bytes\":-4096,"
		"\"leaf\":\"gone\",\"frames\":[\"gone (g.c:1)\"]}]\n";
	assert_string_equal(buf_str(&out), want);
	stackdiff_release(&d);

	buf_reset(&out);
	stackdiff_build(NULL, 0, NULL, 0, &d);
	stackdiff_json(&out, &d);
	assert_string_equal(buf_str(&out), "[]\n");
	stackdiff_release(&d);
	buf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key),
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_json),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
