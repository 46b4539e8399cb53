/* A flame graph of a run's live bytes by call stack (record --stacks), for the report:
 * an icicle, the root (every stack) at the top and each callee below its caller, each
 * frame as wide as the bytes held under it. Pure: stored stacks in, SVG and HTML out.
 *
 * Stacks are merged from the root down: two stacks that start with the same frames
 * share those frames' boxes, as flamegraph.pl merges the folded lines of export
 * --stacks. Frames are compared by their name (the line up to " (file:line)"), so the
 * graph is the one the folded export draws. Every name came from some binary the
 * recorder did not choose: it is escaped wherever it is written.
 *
 * The work is bounded by the drawing, not by the input: a frame narrower than a pixel
 * is not drawn, nor are its callees (narrower still), so a row holds at most as many
 * boxes as it has pixels, and a stack deeper than FLAME_MAX_DEPTH is cut there, its
 * deeper frames' bytes charged to its frame at that depth. */
#ifndef RSW_RENDER_FLAME_H
#define RSW_RENDER_FLAME_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "store/run.h"

#define FLAME_WIDTH 1000	/* the drawing's width, in its own pixels */
#define FLAME_MAX_DEPTH 128	/* frames of a stack below the root that are kept */

/* One box: a frame of one or more stacks, merged. */
struct flame_node {
	const char *name;	/* the function ("[not walked]", "file+0xOFF"): untrusted */
	const char *place;	/* "file:line" when every merged frame had the same; else NULL */
	int64_t bytes;		/* held by the stacks through it (its callees' included) */
	int64_t offset;		/* bytes of its row left of it: where it starts */
	unsigned depth;		/* 0: the root, every stack; 1: the outermost frames */
	int alloc;		/* a frame of the allocator (beyond each stack's leaf) */
};

/* The merged frames, in preorder: a node's callees follow it, one deeper, left to
 * right, and every node lies within its caller (offset and bytes). */
struct flame {
	struct flame_node *nodes;
	size_t n, cap;
	int64_t total;		/* the root's bytes: of every stack with bytes > 0 */
	unsigned depth;		/* the deepest node's */
	size_t cut;		/* frames left out below FLAME_MAX_DEPTH */
	char **text;		/* copies of the stacks' frames that the names point into */
	size_t ntext;
};

/* Merges v[0..n) (as store_stacks gives them; stacks with no bytes are left out) into
 * *f, which holds its own copy of every name. Release it with flame_release. */
void flame_build(struct flame *f, const struct stored_stack *v, size_t n);
void flame_release(struct flame *f);

/* The graph as an <svg> element, FLAME_WIDTH wide. Each box is a <g> with the frame's
 * name (data-n), its start and its bytes (data-o, data-b), a <title> (the frame in
 * full, its bytes and its share of base) and its label where it fits, cut short with an
 * ellipsis where only part fits. base is what shares are of (the run's peak; 0: the
 * root's bytes). Returns the number of frames not drawn, narrower than a pixel. */
/* key names the graph's elements (key-svg, and the section's key-find, key-q, key-m):
 * one of the two below. */
#define FLAME_HOST "flame"
#define FLAME_GPU "flame-gpu"
size_t flame_svg(struct buf *b, const struct flame *f, uint64_t base, const char *key);

/* The report's section for run r with v[0..n), its stacks at moment m (STACKS_AT_PEAK,
 * or STACKS_AT_GPU_PEAK: the device memory from the CUDA driver at its peak): a
 * heading, a line on what the graph shows, the graph, and a search box (hidden until
 * flame_script shows it) that marks the matching frames and says what share of the
 * peak they hold. Nothing for a run without stacks, nor for the GPU without any. */
void flame_section(struct buf *b, const struct run *r, const struct stored_stack *v, size_t n,
		   enum stack_moment m);

/* What the page adds for the section: its style (to the page's <style>) and the
 * search's script (to a <script> after it). Both are constant text. */
extern const char flame_css[];
extern const char flame_script[];

#endif
