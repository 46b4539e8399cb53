/* Each stage's exact peak from the engine's history of the total (stagepeak.h). */
#include "record/stagepeak.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void stagepeak_init(struct stagepeak *sp, int64_t start, int64_t total, stagepeak_span_fn span,
		    stagepeak_stage_fn stage, void *ctx)
{
	memset(sp, 0, sizeof(*sp));
	sp->span = span;
	sp->stage = stage;
	sp->ctx = ctx;
	sp->start = start;
	sp->next = start >> KPEAK_SPAN_SHIFT;
	sp->began = start;
	sp->known = 1;
	sp->peak = total > 0 ? (uint64_t)total : 0;
	sp->peak_at = start;
	sp->total = total;
	sp->total_known = 1;
}

static void hand_over(struct stagepeak *sp, int64_t id, int known, uint64_t peak, int64_t at)
{
	if (known)
		sp->stage(sp->ctx, id, 1, peak, at);
	else
		sp->stage(sp->ctx, id, 0, 0, 0);
}

static void raise_to(struct stagepeak *sp, uint64_t v, int64_t at)
{
	if (v > sp->peak) {
		sp->peak = v;
		sp->peak_at = at;
	}
}

/* Room for one more of n elements of size in *p (of *cap). 0 or -ENOMEM. */
static int room_for_one(void **p, size_t n, size_t *cap, size_t size)
{
	if (n < *cap)
		return 0;
	size_t c = *cap ? *cap * 2 : 8;
	void *q = realloc(*p, c * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

/* Keeps the open stage among those handed over (without room, a late mark cannot
 * spoil it: it is handed over as not known). */
static int keep_done(struct stagepeak *sp)
{
	if (room_for_one((void **)&sp->done, sp->ndone, &sp->capdone, sizeof(*sp->done)) < 0)
		return -ENOMEM;
	sp->done[sp->ndone].id = sp->id;
	sp->done[sp->ndone].began = sp->began;
	sp->done[sp->ndone].known = sp->known;
	sp->ndone++;
	return 0;
}

/* The open stage ends at mark m, which opens the next with the total there (value,
 * known or not). */
static void next_stage(struct stagepeak *sp, const struct stagepeak_mark *m, int64_t value,
		       int known)
{
	if (keep_done(sp) < 0)
		sp->known = 0;
	hand_over(sp, sp->id, sp->known, sp->peak, sp->peak_at);
	sp->id = m->id;
	sp->began = m->at;
	sp->known = known;
	sp->peak = value > 0 ? (uint64_t)value : 0;
	sp->peak_at = m->at;
}

/* A mark for a time already read past: the stages it splits cannot be told apart. */
static void late_mark(struct stagepeak *sp, int64_t id, int64_t at)
{
	if (at >= sp->began) {
		struct stagepeak_mark m = { id, at };
		sp->known = 0;
		next_stage(sp, &m, 0, 0);
		return;
	}
	/* the stage handed over that held it: the last that began at or before it */
	size_t i = sp->ndone;
	while (i > 0 && sp->done[i - 1].began > at)
		i--;
	if (i > 0 && sp->done[i - 1].known) {
		hand_over(sp, sp->done[i - 1].id, 0, 0, 0);
		sp->done[i - 1].known = 0;
	}
	hand_over(sp, id, 0, 0, 0);
}

int stagepeak_mark(struct stagepeak *sp, int64_t id, int64_t at)
{
	/* made between the recorder's start and its first sample (a `rsswatch mark` as
	 * soon as the socket is up): its stage holds what was there at the start */
	if (at < sp->start)
		at = sp->start;
	if (at < sp->next << KPEAK_SPAN_SHIFT) {
		late_mark(sp, id, at);
		return 0;
	}
	if (room_for_one((void **)&sp->m, sp->n, &sp->cap, sizeof(*sp->m)) < 0)
		return -ENOMEM;
	size_t i = sp->n;
	while (i > 0 && sp->m[i - 1].at > at) {
		sp->m[i] = sp->m[i - 1];
		i--;
	}
	sp->m[i].id = id;
	sp->m[i].at = at;
	sp->n++;
	return 0;
}

static void drop_first_mark(struct stagepeak *sp)
{
	memmove(sp->m, sp->m + 1, (sp->n - 1) * sizeof(*sp->m));
	sp->n--;
}

/* Span n: to the open stage, split at the marks that fall in it. */
static void read_span(struct stagepeak *sp, int64_t n)
{
	int64_t start = n << KPEAK_SPAN_SHIFT, end = start + KPEAK_SPAN_NS;
	struct kpeak_span d;
	int r = sp->span(sp->ctx, n, &d);
	if (r < 0) {		/* lost: what happened in it is not known */
		sp->known = 0;
		sp->total_known = 0;
		for (; sp->n && sp->m[0].at < end; drop_first_mark(sp))
			next_stage(sp, &sp->m[0], 0, 0);
		return;
	}
	if (r == 0) {		/* no change: the total stayed where it was */
		for (; sp->n && sp->m[0].at < end; drop_first_mark(sp))
			next_stage(sp, &sp->m[0], sp->total, sp->total_known);
		return;
	}
	if (!d.peak_at)		/* the moment of the span's peak is not known: its end */
		d.peak_at = end - 1;
	int peak_taken = 0;
	for (; sp->n && sp->m[0].at < end; drop_first_mark(sp)) {
		if (!peak_taken && d.peak_at < sp->m[0].at) {
			/* the span's peak came before the mark: the earlier stage's */
			raise_to(sp, d.peak, d.peak_at);
			peak_taken = 1;
		}
		/* the total at the mark: before the span's peak, the one it began with;
		 * after it, the one it ended with (the moment between is not kept) */
		next_stage(sp, &sp->m[0], peak_taken ? d.last : sp->total,
			   peak_taken || sp->total_known);
	}
	if (!peak_taken)
		raise_to(sp, d.peak, d.peak_at);
	sp->total = d.last;
	sp->total_known = 1;
}

void stagepeak_advance(struct stagepeak *sp, int64_t upto)
{
	/* only spans that are over: a later change may still come in the current one */
	for (int64_t last = (upto >> KPEAK_SPAN_SHIFT) - 1; sp->next <= last; sp->next++)
		read_span(sp, sp->next);
}

void stagepeak_end(struct stagepeak *sp, int64_t end)
{
	stagepeak_advance(sp, end + KPEAK_SPAN_NS);
	/* marks past the end (none should be): their stages are empty */
	for (; sp->n; drop_first_mark(sp))
		next_stage(sp, &sp->m[0], sp->total, sp->total_known);
	hand_over(sp, sp->id, sp->known, sp->peak, sp->peak_at);
	sp->known = 0;
}

void stagepeak_release(struct stagepeak *sp)
{
	free(sp->m);
	free(sp->done);
	sp->m = NULL;
	sp->done = NULL;
	sp->n = sp->cap = sp->ndone = sp->capdone = 0;
}
