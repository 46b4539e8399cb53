/* What held the memory: live bytes by call stack, as text, JSON and folded stacks. */
#include "render/callstacks.h"
#include "base/fmt.h"
#include "base/util.h"
#include "render/json.h"

#include <stdio.h>
#include <string.h>

/* Functions of the allocator itself, and the standard libraries' containers around it
 * (a std::vector's storage, a Rust Vec's): a frame whose name starts with one of these
 * is not the leaf a reader wants. */
static const char *const allocator[] = {
	"__mmap", "mmap", "__GI___mmap", "__munmap", "__brk", "brk", "__sbrk", "sbrk",
	"__GI___sbrk", "__mremap", "mremap", "__glibc_morecore", "__default_morecore",
	"sysmalloc", "_int_malloc", "_int_realloc", "_int_memalign", "_mid_memalign",
	"tcache_init", "new_heap", "alloc_new_heap", "malloc", "__libc_malloc", "__GI___libc_malloc",
	"calloc", "__libc_calloc", "realloc", "__libc_realloc", "memalign", "__libc_memalign",
	"aligned_alloc", "posix_memalign", "__posix_memalign", "valloc", "pvalloc",
	"operator new", "std::", "__gnu_cxx::",
	"__rust_alloc", "__rust_realloc", "__rdl_alloc", "__rdl_realloc", "__rg_alloc",
	"alloc::", "<alloc::", "core::", "<core::",
	/* where a fault lands (--stacks=faults): the C library's fill and copy */
	"__memset", "memset", "__memcpy", "memcpy", "__memmove", "memmove", "__GI_mem",
	/* the GPU's: the CUDA runtime over the driver; PyTorch's caching allocator and the
	 * tensor library under every operator (ATen's at::, c10::), so that the leaf is who
	 * called the operator: its Python binding (torch::autograd::THPVariable_ones for
	 * torch.ones) or a libtorch program's own function */
	"cudaMalloc", "cudaFree", "cudart::", "libcudart", "c10::", "at::",
};

/* The words of a mode: the mmap mode's blocks are mapped, the faults mode's rises of a
 * process's highest are touched, the malloc mode's blocks allocated. */
struct words {
	const char *bytes, *blocks, *leaf, *verb;
	const char *none;	/* what no stack means */
};

static const struct words *words_of(const struct run *r)
{
	static const struct words mapped = {
		"mapped", "blocks", "allocated in", "mapped",
		"no anonymous memory mapped by the recorded processes while recording" };
	static const struct words touched = {
		"touched", "faults", "touched in", "touched",
		"no recorded process rose past its first figure by a step while recording" };
	static const struct words allocated = {
		"allocated", "blocks", "allocated in", "allocated",
		"no block allocated by the recorded processes while recording" };
	if (r->stacks && strcmp(r->stacks, STACKS_MODE_FAULTS) == 0)
		return &touched;
	return r->stacks && strcmp(r->stacks, STACKS_MODE_MALLOC) == 0 ? &allocated : &mapped;
}

/* Line i of frames (its name: up to " (" where a place follows) into out; 0 when
 * there is no such line. */
static int frame_name(const char *frames, size_t i, char *out, size_t n)
{
	const char *p = frames;
	for (; i && p; i--) {
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	if (!p || !*p)
		return 0;
	size_t len = strcspn(p, "\n");
	const char *place = strstr(p, " (");
	if (place && (size_t)(place - p) < len)
		len = (size_t)(place - p);
	snprintf(out, n, "%.*s", (int)len, p);
	return 1;
}

static int in_allocator(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(allocator); i++)
		if (strncmp(name, allocator[i], strlen(allocator[i])) == 0)
			return 1;
	return 0;
}

void callstacks_leaf(const char *frames, char *out, size_t n)
{
	char name[512];
	out[0] = 0;
	for (size_t i = 0; frame_name(frames, i, name, sizeof(name)); i++) {
		if (!out[0])
			snprintf(out, n, "%s", name);	/* all allocator: its innermost */
		if (!in_allocator(name)) {
			snprintf(out, n, "%s", name);
			return;
		}
	}
}

static size_t frames_count(const char *frames)
{
	size_t k = frames && *frames ? 1 : 0;
	for (const char *p = frames; p && (p = strchr(p, '\n')); p++)
		k++;
	return k;
}

static int64_t total_of(const struct stored_stack *v, size_t n)
{
	int64_t t = 0;
	for (size_t i = 0; i < n; i++)
		t += v[i].bytes;
	return t;
}

/* The words of the GPU's snapshot, whatever the mode: the driver's blocks. */
static const struct words gpu_words = {
	"allocated", "blocks", "allocated in", "allocated from the CUDA driver", "" };

uint64_t callstacks_peak_of(const struct run *r, enum stack_moment m)
{
	if (m == STACKS_AT_GPU_PEAK)
		return r->peak_gpu > 0 ? (uint64_t)r->peak_gpu : 0;
	return r->peak_rss;
}

static void table(struct buf *b, const struct run *r, enum stack_moment m,
		  const struct stored_stack *v, size_t n, int all)
{
	char by[32], leaf[256];
	size_t shown = all || n <= CALLSTACKS_TOP ? n : CALLSTACKS_TOP;
	const struct words *w = m == STACKS_AT_GPU_PEAK ? &gpu_words : words_of(r);
	uint64_t peak = callstacks_peak_of(r, m);
	buf_printf(b, "  %12s %7s %7s  %s\n", w->bytes, "of peak", w->blocks,
		   all ? "stack (innermost first)" : w->leaf);
	for (size_t i = 0; i < shown; i++) {
		fmt_bytes(by, sizeof(by), v[i].bytes > 0 ? (uint64_t)v[i].bytes : 0);
		char share[16] = "-";
		if (peak)
			snprintf(share, sizeof(share), "%.1f%%",
				 100.0 * (double)v[i].bytes / (double)peak);
		callstacks_leaf(v[i].frames, leaf, sizeof(leaf));
		buf_printf(b, "  %12s %7s %7llu  ", by, share, (unsigned long long)v[i].blocks);
		buf_put_printable(b, leaf);
		buf_putc(b, '\n');
		if (!all)
			continue;
		char name[512];
		for (size_t k = 0; frame_name(v[i].frames, k, name, sizeof(name)); k++) {
			const char *p = v[i].frames;
			for (size_t j = 0; j < k; j++)
				p = strchr(p, '\n') + 1;
			buf_printf(b, "  %29s ", "");
			struct buf line = { 0 };
			buf_append(&line, p, strcspn(p, "\n"));
			buf_put_printable(b, buf_str(&line));
			buf_release(&line);
			buf_putc(b, '\n');
		}
	}
	if (shown < n) {
		int64_t rest = 0;
		for (size_t i = shown; i < n; i++)
			rest += v[i].bytes;
		fmt_bytes(by, sizeof(by), rest > 0 ? (uint64_t)rest : 0);
		buf_printf(b, "  %12s %7s %7s  %zu other stacks: rsswatch show %lld --stacks\n", by,
			   "", "", n - shown, (long long)r->id);
	}
}

/* "TOTAL VERB by N stacks" of a moment's rows. */
static void tally(struct buf *b, const struct stored_stack *v, size_t n, const char *verb)
{
	char by[32];
	int64_t total = total_of(v, n);
	fmt_bytes(by, sizeof(by), total > 0 ? (uint64_t)total : 0);
	buf_printf(b, "%s %s by %zu stack%s\n", by, verb, n, n == 1 ? "" : "s");
}

void callstacks_text(struct buf *b, const struct run *r, const struct callstacks *cs, int all)
{
	char at[40], off[32];
	if (!RUN_HAS_STACKS(r))
		return;
	const struct words *w = words_of(r);
	size_t npeak = cs->n[STACKS_AT_PEAK], nend = cs->n[STACKS_AT_END],
	       ngpu = cs->n[STACKS_AT_GPU_PEAK];
	if (!npeak && !nend && !ngpu) {
		buf_printf(b, "\nstacks    none seen: %s\n", w->none);
		return;
	}
	if (npeak) {
		buf_printf(b, "\nat the peak (%s, %s): ",
			   fmt_hms_ms(at, sizeof(at), r->stacks_peak_at),
			   fmt_offset(off, sizeof(off), r->stacks_peak_at - r->started_at));
		tally(b, cs->v[STACKS_AT_PEAK], npeak, w->verb);
		table(b, r, STACKS_AT_PEAK, cs->v[STACKS_AT_PEAK], npeak, all);
	}
	if (nend) {
		char still[64];
		snprintf(still, sizeof(still), "still %s", w->verb);
		buf_puts(b, "\nat the end: ");
		tally(b, cs->v[STACKS_AT_END], nend, still);
		table(b, r, STACKS_AT_END, cs->v[STACKS_AT_END], nend, all);
	}
	if (ngpu) {
		buf_printf(b, "\non the GPU at its peak (%s, %s): ",
			   fmt_hms_ms(at, sizeof(at), r->stacks_gpu_peak_at),
			   fmt_offset(off, sizeof(off), r->stacks_gpu_peak_at - r->started_at));
		tally(b, cs->v[STACKS_AT_GPU_PEAK], ngpu, gpu_words.verb);
		table(b, r, STACKS_AT_GPU_PEAK, cs->v[STACKS_AT_GPU_PEAK], ngpu, all);
	}
}

static void rows_json(struct buf *b, const struct run *r, const struct callstacks *cs,
		      enum stack_moment m)
{
	char leaf[256], name[512];
	const struct stored_stack *v = cs->v[m];
	size_t n = cs->n[m];
	uint64_t peak = callstacks_peak_of(r, m);
	buf_putc(b, '[');
	for (size_t i = 0; i < n; i++) {
		callstacks_leaf(v[i].frames, leaf, sizeof(leaf));
		buf_printf(b, "%s{\"bytes\":%lld,\"blocks\":%llu,\"share_of_peak\":", i ? "," : "",
			   (long long)v[i].bytes, (unsigned long long)v[i].blocks);
		if (peak)
			buf_printf(b, "%.4f", (double)v[i].bytes / (double)peak);
		else
			buf_puts(b, "null");
		buf_puts(b, ",\"leaf\":");
		json_str(b, leaf);
		buf_puts(b, ",\"frames\":[");
		const char *p = v[i].frames;
		for (size_t k = 0; p && *p; k++) {
			size_t len = strcspn(p, "\n");
			snprintf(name, sizeof(name), "%.*s", (int)len, p);
			if (k)
				buf_putc(b, ',');
			json_str(b, name);
			p += len;
			if (*p)
				p++;
		}
		buf_puts(b, "]}");
	}
	buf_putc(b, ']');
}

static void time_json(struct buf *b, int64_t t)
{
	char at[40];
	if (t)
		json_str(b, fmt_iso8601_us(at, sizeof(at), t));
	else
		buf_puts(b, "null");
}

void callstacks_json(struct buf *b, const struct run *r, const struct callstacks *cs)
{
	if (!RUN_HAS_STACKS(r))
		return;
	buf_puts(b, ",\"stacks\":{\"mode\":");
	json_str(b, r->stacks);
	buf_puts(b, ",\"peak_time\":");
	time_json(b, r->stacks_peak_at);
	buf_puts(b, ",\"at_peak\":");
	rows_json(b, r, cs, STACKS_AT_PEAK);
	buf_puts(b, ",\"at_end\":");
	rows_json(b, r, cs, STACKS_AT_END);
	buf_puts(b, ",\"gpu_peak_time\":");
	time_json(b, r->stacks_gpu_peak_at);
	buf_puts(b, ",\"at_gpu_peak\":");
	rows_json(b, r, cs, STACKS_AT_GPU_PEAK);
	buf_putc(b, '}');
}

void callstacks_folded(struct buf *b, const struct stored_stack *v, size_t n)
{
	char name[512];
	for (size_t i = 0; i < n; i++) {
		size_t k = frames_count(v[i].frames);
		if (v[i].bytes <= 0)
			continue;
		for (size_t j = k; j-- > 0;) {
			if (!frame_name(v[i].frames, j, name, sizeof(name)))
				continue;
			for (char *c = name; *c; c++)
				if (*c == ';' || (unsigned char)*c < 0x20)
					*c = '_';	/* the format's separators */
			buf_puts(b, name);
			buf_putc(b, j ? ';' : ' ');
		}
		buf_printf(b, "%lld\n", (long long)v[i].bytes);
	}
}
