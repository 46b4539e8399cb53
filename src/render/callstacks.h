/* What held the memory (record --stacks): a run's live bytes by call stack at its peak,
 * at its end, and of its GPU memory at that peak, as show's table, every stack whole, JSON, and the folded-stack text
 * that flamegraph.pl, inferno and speedscope read. Pure: rows in, text out.
 *
 * A stack's frames are stored innermost first, one a line ("name (file:line)", "name",
 * or "module+0xOFF" where nothing names it). Its leaf, the function a reader wants, is
 * its innermost frame outside the allocator: the C library's mmap, brk and malloc
 * family, C++'s operator new, Rust's alloc crate, the CUDA runtime and PyTorch's
 * caching allocator. */
#ifndef RSW_RENDER_CALLSTACKS_H
#define RSW_RENDER_CALLSTACKS_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "store/run.h"

/* A run's stacks at each moment (v[STACKS_AT_*], n of them). */
struct callstacks {
	const struct stored_stack *v[STACK_MOMENTS];
	size_t n[STACK_MOMENTS];
};

/* show's tables: the top stacks at each moment (all: every one, with every frame). */
#define CALLSTACKS_TOP 15
void callstacks_text(struct buf *b, const struct run *r, const struct callstacks *cs, int all);
/* ,"stacks":{...} for a run object (nothing when the run has no stacks). */
void callstacks_json(struct buf *b, const struct run *r, const struct callstacks *cs);
/* One line per stack, root first: "main;prove;grab BYTES". */
void callstacks_folded(struct buf *b, const struct stored_stack *v, size_t n);
/* The peak a moment's bytes are a share of: the run's, or the GPU's for its snapshot
 * (0: none). */
uint64_t callstacks_peak_of(const struct run *r, enum stack_moment m);
/* The leaf's name (see above) into out. */
void callstacks_leaf(const char *frames, char *out, size_t n);

#endif
