/* render/flame.c: the report's flame graph of the stacks at the peak, from hand-made
 * stored stacks: shared first frames merged, boxes as wide as their bytes, names
 * escaped, frames narrower than a pixel and frames too deep left out. */
#include "testutil.h"

#include <string.h>

#include "base/buf.h"
#include "base/util.h"
#include "render/callstacks.h"
#include "render/flame.h"

#define MIB (1024LL * 1024)

/* The nodes named name in f. */
static size_t count_named(const struct flame *f, const char *name)
{
	size_t k = 0;
	for (size_t i = 0; i < f->n; i++)
		k += f->nodes[i].depth && strcmp(f->nodes[i].name, name) == 0;
	return k;
}

static const struct flame_node *named(const struct flame *f, const char *name)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->nodes[i].depth && strcmp(f->nodes[i].name, name) == 0)
			return &f->nodes[i];
	fail_msg("no frame %s", name);
	return NULL;
}

/* The number in attribute attr of the first box whose data-n is name (as escaped). */
static double box_attr(const char *svg, const char *name, const char *attr)
{
	char key[256], at[32];
	snprintf(key, sizeof(key), "<g data-n=\"%s\"", name);
	const char *g = strstr(svg, key);
	if (!g)
		fail_msg("no box %s", name);
	snprintf(at, sizeof(at), " %s=\"", attr);
	const char *rect = strstr(g, "<rect ");
	assert_non_null(rect);
	const char *v = strstr(rect, at);
	assert_non_null(v);
	return strtod(v + strlen(at), NULL);
}

static size_t occurrences(const char *h, const char *s)
{
	size_t k = 0;
	for (const char *p = h; (p = strstr(p, s)); p++)
		k++;
	return k;
}

static void test_merged_from_the_root(void **state)
{
	(void)state;
	struct stored_stack v[] = {
		{ 1, 300 * MIB, 1, "grab (a.c:10)\nprove (a.c:20)\nmain (a.c:30)\n_start" },
		{ 2, 100 * MIB, 2, "other (a.c:11)\nprove (a.c:20)\nmain (a.c:30)\n_start" },
		{ 3, 600 * MIB, 1, "table (b.c:5)\nmain (a.c:31)\n_start" },
		{ 4, 0, 0, "gone (a.c:1)\nmain (a.c:30)\n_start" },	/* no bytes: left out */
	};
	struct flame f;
	flame_build(&f, v, ARRAY_SIZE(v));
	assert_int_equal(f.total, 1000 * MIB);
	assert_int_equal(f.nodes[0].depth, 0);
	assert_int_equal(f.nodes[0].bytes, 1000 * MIB);
	/* one box for each shared frame, holding every stack through it */
	assert_int_equal(count_named(&f, "_start"), 1);
	assert_int_equal(count_named(&f, "main"), 1);
	assert_int_equal(count_named(&f, "prove"), 1);
	assert_int_equal(count_named(&f, "gone"), 0);
	assert_int_equal(f.n, 7);	/* root, _start, main, prove, grab, other, table */
	assert_int_equal(f.depth, 4);
	assert_int_equal(named(&f, "main")->bytes, 1000 * MIB);
	assert_int_equal(named(&f, "prove")->bytes, 400 * MIB);
	assert_int_equal(named(&f, "prove")->depth, 3);
	/* callees side by side inside their caller, in name order */
	assert_int_equal(named(&f, "grab")->offset, 0);
	assert_int_equal(named(&f, "other")->offset, 300 * MIB);
	assert_int_equal(named(&f, "table")->offset, 400 * MIB);
	/* a place kept where every merged frame had it, dropped where they differ */
	assert_string_equal(named(&f, "prove")->place, "a.c:20");
	assert_null(named(&f, "main")->place);

	struct buf b = { 0 };
	assert_int_equal(flame_svg(&b, &f, 0, FLAME_HOST), 0);
	const char *h = buf_str(&b);
	assert_true(strncmp(h, "<svg xmlns=\"http://www.w3.org/2000/svg\"", 39) == 0);
	/* widths proportional to the bytes, across the drawing's width */
	assert_float_equal(box_attr(h, "main", "width"), FLAME_WIDTH, 0.01);
	assert_float_equal(box_attr(h, "prove", "width"), 0.4 * FLAME_WIDTH, 0.01);
	assert_float_equal(box_attr(h, "table", "width"), 0.6 * FLAME_WIDTH, 0.01);
	assert_float_equal(box_attr(h, "grab", "width") / box_attr(h, "other", "width"), 3.0, 1e-3);
	assert_float_equal(box_attr(h, "table", "x"), 0.4 * FLAME_WIDTH, 0.01);
	/* an icicle: the callee a row below its caller */
	assert_true(box_attr(h, "grab", "y") > box_attr(h, "prove", "y"));
	assert_true(box_attr(h, "prove", "y") > box_attr(h, "main", "y"));
	/* the hover text: the frame in full, its bytes and its share */
	assert_non_null(strstr(h, "<title>prove (a.c:20)\n400.0 MiB, 40.0% of the stacks</title>"));
	assert_non_null(strstr(h, "<title>main\n1000.0 MiB, 100.0% of the stacks</title>"));
	assert_non_null(strstr(h, ">table</text>"));
	assert_int_equal(occurrences(h, "<g data-n="), 6);
	buf_reset(&b);
	/* shares of the peak when it is given */
	flame_svg(&b, &f, (uint64_t)(2000 * MIB), FLAME_HOST);
	assert_non_null(strstr(buf_str(&b), "<title>table (b.c:5)\n600.0 MiB, 30.0% of the peak</title>"));
	buf_release(&b);
	flame_release(&f);
}

/* Names come from other users' binaries: everything written is escaped. */
static void test_names_escaped(void **state)
{
	(void)state;
	struct stored_stack v[] = {
		{ 1, 64 * MIB, 1, "evil<&\">'x (<b>.c:1)\nmain" },
		{ 2, 32 * MIB, 1, "<script>alert(1)</script>\nmain" },
	};
	struct flame f;
	flame_build(&f, v, ARRAY_SIZE(v));
	struct buf b = { 0 };
	flame_svg(&b, &f, 0, FLAME_HOST);
	const char *h = buf_str(&b);
	assert_non_null(strstr(h, "<g data-n=\"evil&lt;&amp;&quot;&gt;&#39;x\""));
	assert_non_null(strstr(h, "<title>evil&lt;&amp;&quot;&gt;&#39;x (&lt;b&gt;.c:1)\n"));
	assert_non_null(strstr(h, ">evil&lt;&amp;&quot;&gt;&#39;x</text>"));
	assert_non_null(strstr(h, "&lt;script&gt;alert(1)&lt;/script&gt;"));
	assert_null(strstr(h, "evil<"));
	assert_null(strstr(h, "<script"));
	assert_null(strstr(h, "<b>"));
	/* the widths still follow the bytes */
	assert_float_equal(box_attr(h, "evil&lt;&amp;&quot;&gt;&#39;x", "width"), 2.0 / 3 * FLAME_WIDTH,
			   0.01);
	buf_release(&b);
	flame_release(&f);
}

/* A label is cut to what fits its box, with an ellipsis; a box too narrow has none. */
static void test_labels_fit(void **state)
{
	(void)state;
	struct stored_stack v[] = {
		{ 1, 900 * MIB, 1, "wide\nmain" },
		{ 2, 40 * MIB, 1, "a_function_with_a_rather_long_name_indeed\nmain" },
		{ 3, 3 * MIB, 1, "narrow_one\nmain" },
	};
	struct flame f;
	flame_build(&f, v, ARRAY_SIZE(v));
	struct buf b = { 0 };
	flame_svg(&b, &f, 0, FLAME_HOST);
	const char *h = buf_str(&b);
	/* 40/943 of 1000 px is 42 px: a few characters and the ellipsis */
	const char *g = strstr(h, "<g data-n=\"a_function_with_a_rather_long_name_indeed\"");
	assert_non_null(g);
	const char *t = strstr(g, "<text");
	assert_non_null(t);
	const char *e = strstr(t, "</text>");
	assert_true(e < strstr(g, "</g>"));
	assert_non_null(strstr(t, "a_fu\xe2\x80\xa6</text>"));
	/* the full name is still in the hover text */
	assert_non_null(strstr(g, "<title>a_function_with_a_rather_long_name_indeed\n"));
	/* 3/943 of 1000 px: a box, no label */
	g = strstr(h, "<g data-n=\"narrow_one\"");
	assert_non_null(g);
	assert_true(strstr(g, "<text") == NULL || strstr(g, "<text") > strstr(g, "</g>"));
	buf_release(&b);
	flame_release(&f);
}

/* Frames narrower than a pixel are not drawn, so the page stays small however many
 * small stacks there are; their bytes still count in their callers' boxes. */
static void test_tiny_frames_folded(void **state)
{
	(void)state;
	enum { N = 5000 };
	struct stored_stack *v = xcalloc(N + 1, sizeof(*v));
	v[0] = (struct stored_stack){ 1, 1024 * MIB, 1, xstrdup("big (a.c:1)\nmain\n_start") };
	for (int i = 1; i <= N; i++) {
		char frames[96];
		snprintf(frames, sizeof(frames), "small_%d (a.c:%d)\nhelper_%d\nmain\n_start", i, i, i);
		v[i] = (struct stored_stack){ i + 1, 4096, 1, xstrdup(frames) };
	}
	struct flame f;
	flame_build(&f, v, N + 1);
	assert_int_equal(f.total, 1024 * MIB + (int64_t)N * 4096);
	assert_int_equal(f.n, 4 + 2 * N);	/* root, _start, main, big; two each */
	struct buf b = { 0 };
	assert_int_equal(flame_svg(&b, &f, 0, FLAME_HOST), 2 * N);
	const char *h = buf_str(&b);
	assert_null(strstr(h, "small_1\""));
	assert_null(strstr(h, "helper_"));
	assert_int_equal(occurrences(h, "<g data-n="), 3);	/* _start, main, big */
	assert_true(b.len < 4096);
	/* the tiny stacks' bytes are in main's box, right of big's */
	assert_float_equal(box_attr(h, "main", "width"), FLAME_WIDTH, 0.01);
	assert_true(box_attr(h, "big", "width") < FLAME_WIDTH - 10);
	buf_release(&b);
	flame_release(&f);
	for (int i = 0; i <= N; i++)
		free(v[i].frames);
	free(v);
}

/* The allocator's frames (past each stack's leaf) are told apart; a stack deeper than
 * FLAME_MAX_DEPTH is cut there, its bytes kept. */
static void test_allocator_and_depth(void **state)
{
	(void)state;
	struct buf deep = { 0 };
	for (int i = 0; i < FLAME_MAX_DEPTH + 72; i++)
		buf_printf(&deep, "%sf%d", i ? "\n" : "", i);
	struct stored_stack v[] = {
		{ 1, 100 * MIB, 1,
		  "__GI___mmap64 (mmap64.c:58)\nsysmalloc (malloc.c:2588)\n__GI___libc_malloc "
		  "(malloc.c:3315)\nalloc_table (prog.c:40)\nmain (prog.c:106)" },
		{ 2, 50 * MIB, 1, (char *)buf_str(&deep) },
	};
	struct flame f;
	flame_build(&f, v, ARRAY_SIZE(v));
	assert_true(named(&f, "sysmalloc")->alloc);
	assert_true(named(&f, "__GI___mmap64")->alloc);
	assert_false(named(&f, "alloc_table")->alloc);
	assert_false(named(&f, "main")->alloc);
	assert_int_equal(named(&f, "alloc_table")->depth, 2);
	assert_int_equal(named(&f, "__GI___mmap64")->depth, 5);
	assert_int_equal(f.depth, FLAME_MAX_DEPTH);
	assert_int_equal(f.cut, 72);
	/* the outermost frame (the last line) at the top; the innermost kept holds it all */
	char kept[16];
	snprintf(kept, sizeof(kept), "f%d", 72);
	assert_int_equal(named(&f, "f199")->depth, 1);
	assert_int_equal(named(&f, kept)->depth, FLAME_MAX_DEPTH);
	assert_int_equal(named(&f, kept)->bytes, 50 * MIB);
	assert_int_equal(count_named(&f, "f71"), 0);
	flame_release(&f);
	buf_release(&deep);
}

/* The report's section: none for a run without stacks; a note for a run whose stacks
 * held nothing at the peak; else the graph with its search box hidden until the
 * script shows it. */
static void test_section(void **state)
{
	(void)state;
	struct run r;
	memset(&r, 0, sizeof(r));
	struct stored_stack v[] = { { 1, 100 * MIB, 1, "alloc_table (prog.c:40)\nmain" } };
	struct buf b = { 0 };
	flame_section(&b, &r, v, 1, STACKS_AT_PEAK);
	assert_int_equal(b.len, 0);
	r.stacks = (char *)"mmap";
	r.peak_rss = 200 * MIB;
	r.started_at = 1000000000;
	r.stacks_peak_at = r.started_at + 845000000;
	flame_section(&b, &r, NULL, 0, STACKS_AT_PEAK);
	assert_non_null(strstr(buf_str(&b), "No stack held"));
	assert_null(strstr(buf_str(&b), "<svg"));
	buf_reset(&b);
	flame_section(&b, &r, v, 1, STACKS_AT_PEAK);
	const char *h = buf_str(&b);
	assert_non_null(strstr(h, "100.0 MiB mapped by 1 stack at the peak (+845ms, 50.0% of the peak)"));
	assert_non_null(strstr(h, "<div id=\"flame-find\" class=\"flame-find\" hidden>"));
	assert_non_null(strstr(h, "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"flame-svg\""));
	assert_non_null(strstr(h, "<title>alloc_table (prog.c:40)\n100.0 MiB, 50.0% of the peak</title>"));
	assert_null(strstr(h, "<script"));
	assert_null(strstr(h, "src="));
	assert_null(strstr(h, "href="));
	/* the GPU's graph: its own ids and words, and none where the run has no GPU stacks */
	buf_reset(&b);
	flame_section(&b, &r, NULL, 0, STACKS_AT_GPU_PEAK);
	assert_int_equal(b.len, 0);
	r.peak_gpu = 400 * MIB;
	r.stacks_gpu_peak_at = r.started_at + 500000000;
	flame_section(&b, &r, v, 1, STACKS_AT_GPU_PEAK);
	const char *g = buf_str(&b);
	assert_non_null(strstr(g, "100.0 MiB allocated by 1 stack at the GPU's peak (+500ms, 25.0% of "
				  "the peak)"));
	assert_non_null(strstr(g, "<div id=\"flame-gpu-find\" class=\"flame-find\" hidden>"));
	assert_non_null(strstr(g, "id=\"flame-gpu-svg\""));
	assert_non_null(strstr(g, "rsswatch export --stacks=gpu"));
	buf_release(&b);
	/* the script reads the attributes the drawing writes */
	assert_non_null(strstr(flame_script, "getElementById(k+'-svg')"));
	assert_non_null(strstr(flame_script, "g[data-n]"));
	assert_non_null(strstr(flame_script, "'data-base'"));
}

/* A stack of PyTorch's from the real driver (an H100, torch.ones on the GPU): the leaf
 * is the operator's Python binding, past the runtime, the caching allocator and ATen. */
static void test_torch_leaf(void **state)
{
	(void)state;
	const char *frames =
		"libcudart.so.13+0x41b5e\n"
		"cudaMalloc\n"
		"c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::alloc_block("
		"c10::cuda::CUDACachingAllocator::Native::(anonymous namespace)::AllocParams&)\n"
		"c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::allocate("
		"unsigned long)\n"
		"at::detail::empty_generic(c10::ArrayRef<long>, c10::Allocator*)\n"
		"at::native::empty_cuda(c10::ArrayRef<long>)\n"
		"c10::impl::wrap_kernel_functor_unboxed_<at::Tensor>::call()\n"
		"at::_ops::empty_memory_format::call(c10::ArrayRef<c10::SymInt>)\n"
		"at::native::full(c10::ArrayRef<long>, c10::Scalar const&)\n"
		"at::_ops::ones::call(c10::ArrayRef<c10::SymInt>)\n"
		"torch::autograd::THPVariable_ones(_object*, _object*, _object*)\n"
		"_PyObject_MakeTpCall\n"
		"main";
	char leaf[256];
	callstacks_leaf(frames, leaf, sizeof(leaf));
	assert_string_equal(leaf, "torch::autograd::THPVariable_ones(_object*, _object*, _object*)");
	/* a program's own function that calls ATen */
	callstacks_leaf("at::empty(c10::ArrayRef<long>)\nbuild_model()\nmain", leaf,
			sizeof(leaf));
	assert_string_equal(leaf, "build_model()");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merged_from_the_root),
		cmocka_unit_test(test_names_escaped),
		cmocka_unit_test(test_labels_fit),
		cmocka_unit_test(test_tiny_frames_folded),
		cmocka_unit_test(test_allocator_and_depth),
		cmocka_unit_test(test_section),
		cmocka_unit_test(test_torch_leaf),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
