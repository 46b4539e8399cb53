/* compare --stacks: where the live bytes at the peak changed between two runs recorded
 * with --stacks. Pure: two runs' stored stacks in, matched rows and their text or JSON
 * out.
 *
 * Two runs are usually two builds, so a stack is matched by what stays the same across
 * a rebuild: its functions, innermost first (stackdiff_key). Each frame loses its place
 * (" (file.c:123)"), what it says about a module that changed under the recorder, and
 * the suffixes of the compiler's clones (".constprop.0", ".isra.0", ".part.0", ".cold",
 * ".lto_priv.0", ".llvm.123", " [clone .constprop.0]"); a frame without a name keeps
 * its module ("prog+0x1a2b" is "prog+?") and a frame in no module is "?". Stacks of one
 * run with the same key (one function that allocates at two lines) are one row, their
 * bytes summed. */
#ifndef RSW_RENDER_STACKDIFF_H
#define RSW_RENDER_STACKDIFF_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "store/run.h"

/* One matched stack. A side that has no stack of this key has in_* 0 and bytes 0.
 * frames is the frames as stored of B's largest stack of the key (A's when B has
 * none): borrowed from the arrays given to stackdiff_build. */
struct stackdiff_row {
	int64_t a_bytes, b_bytes;
	int in_a, in_b;
	const char *frames;
};

/* Rows by how much they changed, most first (|b - a|; then the larger side, then the
 * key, so the order is the same for the same input); totals of each side. */
struct stackdiff {
	struct stackdiff_row *rows;
	size_t n;
	int64_t a_total, b_total;
};

/* The key a stack is matched by (see above) into out (reset first). */
void stackdiff_key(const char *frames, struct buf *out);
/* Matches a[0..na) against b[0..nb) into *d (released with stackdiff_release). */
void stackdiff_build(const struct stored_stack *a, size_t na, const struct stored_stack *b,
		     size_t nb, struct stackdiff *d);
void stackdiff_release(struct stackdiff *d);

/* The table: the top stacks that changed (top 0: every one that changed), one line for
 * the others, and the totals; a_id and b_id name the runs. */
#define STACKDIFF_TOP 15
void stackdiff_text(struct buf *b, const struct stackdiff *d, int64_t a_id, int64_t b_id,
		    size_t top);
/* A JSON array of every row, in order: {"a_bytes", "b_bytes" (null on the side without
 * the stack), "change_bytes", "leaf", "frames" (an array of strings)}. */
void stackdiff_json(struct buf *b, const struct stackdiff *d);

#endif
