/* Each stage's exact peak: the marks split the engine's history of the tracked
 * processes' total (source/kpeak.h: spans of 1.05 ms, each with its highest total and
 * the time of it) into stages, and a stage's peak is the highest total from its mark
 * to the next, with the kernel's time of it. Pure: spans are read through a function,
 * stages handed over through another; no I/O.
 *
 * The rules:
 * - A stage begins at its mark with the total of that moment, and is fed every span
 *   up to the next mark. The span a mark falls in goes to the side of the mark its peak
 *   is on; the other side has that span's total at the mark's edge (the total before
 *   the span for the earlier stage, the span's last total for the later one). So a
 *   stage's peak is exact but for the millisecond around each of its marks.
 * - The history is read only as far as the marks are known: the caller advances to a
 *   time by which every mark before it has been given (stagepeak_mark).
 * - A stage of which part of the history was lost (not read within the 34 s kept), or
 *   that a mark given too late split after it was read, has no peak (handed over again if it was
 *   already): it is handed over
 *   as not known, rather than with a figure that may be another stage's. */
#ifndef RSW_RECORD_STAGEPEAK_H
#define RSW_RECORD_STAGEPEAK_H

#include <stddef.h>
#include <stdint.h>

#include "source/kpeak.h"

/* Reads span n: as kpeak_span (1, 0 or -ESTALE). */
typedef int (*stagepeak_span_fn)(void *ctx, int64_t n, struct kpeak_span *s);
/* A stage ended: the one opened by mark id (0: the one before the first mark), its
 * highest total and when (CLOCK_MONOTONIC); known 0: not known (peak and at are 0). */
typedef void (*stagepeak_stage_fn)(void *ctx, int64_t id, int known, uint64_t peak, int64_t at);

struct stagepeak_mark {
	int64_t id;
	int64_t at;		/* CLOCK_MONOTONIC */
};

struct stagepeak {
	stagepeak_span_fn span;
	stagepeak_stage_fn stage;
	void *ctx;
	int64_t start;			/* where the stages began */
	int64_t next;			/* the first span not read yet */
	struct stagepeak_mark *m;	/* marks given and not reached yet, by time */
	size_t n, cap;
	/* the open stage */
	int64_t id, began;
	int known;
	uint64_t peak;
	int64_t peak_at;
	/* the stages handed over, by time, for a late mark to spoil */
	struct stagepeak_done {
		int64_t id, began;
		int known;
	} *done;
	size_t ndone, capdone;
	int64_t total;		/* the total at the end of the last span read */
	int total_known;
};

/* Begins at CLOCK_MONOTONIC start, where the total is total. */
void stagepeak_init(struct stagepeak *sp, int64_t start, int64_t total, stagepeak_span_fn span,
		    stagepeak_stage_fn stage, void *ctx);
/* A mark (id > 0) made at CLOCK_MONOTONIC at. One made before the start opens its
 * stage at the start: nothing before it was seen. 0, or -ENOMEM. */
int stagepeak_mark(struct stagepeak *sp, int64_t id, int64_t at);
/* Reads the spans that ended by CLOCK_MONOTONIC upto, ending the stages whose next
 * mark they reach. */
void stagepeak_advance(struct stagepeak *sp, int64_t upto);
/* Reads up to end and ends the stages left, the open one included. */
void stagepeak_end(struct stagepeak *sp, int64_t end);
void stagepeak_release(struct stagepeak *sp);

#endif
