/* Each stage's peak from the engine's history of the total (record/stagepeak.c): the
 * marks split a made-up history, and each stage gets the highest total between its
 * mark and the next, with its time; lost history and late marks give "not known". */
#include "testutil.h"

#include <errno.h>
#include <string.h>

#include "record/stagepeak.h"

#define SPAN KPEAK_SPAN_NS
#define MIB (1024ULL * 1024)
#define SPANS 64

/* The made-up history: span n's state (0: no change, 1: changed, -1: lost). */
struct history {
	int state[SPANS];
	struct kpeak_span s[SPANS];
	int64_t reads;
	/* the stages handed over, in order */
	int64_t id[16];
	int known[16];
	uint64_t peak[16];
	int64_t at[16];
	size_t n;
};

static int read_span(void *ctx, int64_t n, struct kpeak_span *out)
{
	struct history *h = ctx;
	h->reads++;
	assert_true(n >= 0 && n < SPANS);
	if (h->state[n] == 1)
		*out = h->s[n];
	return h->state[n] < 0 ? -ESTALE : h->state[n];
}

static void on_stage(void *ctx, int64_t id, int known, uint64_t peak, int64_t at)
{
	struct history *h = ctx;
	assert_true(h->n < 16);
	h->id[h->n] = id;
	h->known[h->n] = known;
	h->peak[h->n] = peak;
	h->at[h->n] = at;
	h->n++;
}

/* Span n changed: its peak v MiB at offset off (ns) within it, then last MiB. */
static void change(struct history *h, int n, uint64_t v, int64_t off, uint64_t last)
{
	h->state[n] = 1;
	h->s[n].peak = v * MIB;
	h->s[n].peak_at = off < 0 ? 0 : n * SPAN + off;
	h->s[n].last = (int64_t)(last * MIB);
}

static void assert_stage(const struct history *h, size_t i, int64_t id, uint64_t mib, int64_t at)
{
	assert_true(i < h->n);
	assert_int_equal(h->id[i], id);
	assert_int_equal(h->known[i], 1);
	assert_int_equal(h->peak[i], mib * MIB);
	assert_int_equal(h->at[i], at);
}

/* Stages with their peaks at different places; one with no change at all has the total
 * it began with, at its mark. */
static void test_stages_split_the_history(void **state)
{
	(void)state;
	static struct history h;
	memset(&h, 0, sizeof(h));
	change(&h, 2, 10, 100, 10);
	change(&h, 5, 200, 500, 150);	/* stage 1's peak */
	change(&h, 6, 160, 10, 20);
	change(&h, 12, 90, 7, 90);	/* stage 2's */
	change(&h, 13, 95, 3, 5);	/* stage 2's higher one */
	/* 20..29 nothing: stage 3 stays at 5 MiB */
	change(&h, 31, 40, 9, 40);	/* stage 4 */
	struct stagepeak sp;
	stagepeak_init(&sp, 1 * SPAN, 0, read_span, on_stage, &h);
	assert_int_equal(stagepeak_mark(&sp, 1, 4 * SPAN), 0);
	assert_int_equal(stagepeak_mark(&sp, 3, 20 * SPAN), 0);	/* given out of order */
	assert_int_equal(stagepeak_mark(&sp, 2, 10 * SPAN), 0);
	assert_int_equal(stagepeak_mark(&sp, 4, 30 * SPAN), 0);
	stagepeak_advance(&sp, 15 * SPAN + 1);	/* spans 1..14 are over */
	assert_int_equal(h.n, 2);
	assert_stage(&h, 0, 0, 10, 2 * SPAN + 100);
	assert_stage(&h, 1, 1, 200, 5 * SPAN + 500);
	assert_int_equal(h.reads, 14);
	stagepeak_end(&sp, 40 * SPAN);
	assert_int_equal(h.n, 5);
	assert_stage(&h, 2, 2, 95, 13 * SPAN + 3);
	assert_stage(&h, 3, 3, 5, 20 * SPAN);
	assert_stage(&h, 4, 4, 40, 31 * SPAN + 9);
	stagepeak_release(&sp);
}

/* A mark inside a span: the span's peak goes to the side of the mark it was on, and the
 * other side has the total at the span's edge. */
static void test_the_span_of_a_mark(void **state)
{
	(void)state;
	static struct history h;
	memset(&h, 0, sizeof(h));
	change(&h, 3, 300, 100, 50);	/* peak before the mark at +200 */
	change(&h, 8, 400, 900, 400);	/* peak after the mark at +200 */
	struct stagepeak sp;
	stagepeak_init(&sp, 0, 7 * MIB, read_span, on_stage, &h);
	stagepeak_mark(&sp, 1, 3 * SPAN + 200);
	stagepeak_mark(&sp, 2, 8 * SPAN + 200);
	stagepeak_end(&sp, 10 * SPAN);
	assert_int_equal(h.n, 3);
	assert_stage(&h, 0, 0, 300, 3 * SPAN + 100);
	assert_stage(&h, 1, 1, 50, 3 * SPAN + 200);	/* the span's last total */
	assert_stage(&h, 2, 2, 400, 8 * SPAN + 900);
	stagepeak_release(&sp);
}

/* A span whose peak's time a race lost counts as its last total at its end. */
static void test_a_span_without_its_time(void **state)
{
	(void)state;
	static struct history h;
	memset(&h, 0, sizeof(h));
	change(&h, 4, 60, -1, 60);
	struct stagepeak sp;
	stagepeak_init(&sp, 0, 0, read_span, on_stage, &h);
	stagepeak_end(&sp, 6 * SPAN);
	assert_int_equal(h.n, 1);
	assert_stage(&h, 0, 0, 60, 5 * SPAN - 1);
	stagepeak_release(&sp);
}

/* History lost (not read within the 34 s kept): the stage that had it is not known,
 * nor the one after it, which began with a total not known; the next change is. */
static void test_lost_history(void **state)
{
	(void)state;
	static struct history h;
	memset(&h, 0, sizeof(h));
	change(&h, 1, 20, 0, 20);
	h.state[5] = -1;
	change(&h, 12, 30, 0, 30);
	struct stagepeak sp;
	stagepeak_init(&sp, 0, 0, read_span, on_stage, &h);
	stagepeak_mark(&sp, 1, 3 * SPAN);
	stagepeak_mark(&sp, 2, 8 * SPAN);
	stagepeak_mark(&sp, 3, 20 * SPAN);
	stagepeak_end(&sp, 25 * SPAN);
	assert_int_equal(h.n, 4);
	assert_stage(&h, 0, 0, 20, 1 * SPAN);
	assert_int_equal(h.id[1], 1);
	assert_false(h.known[1]);
	assert_int_equal(h.id[2], 2);
	assert_false(h.known[2]);
	assert_stage(&h, 3, 3, 30, 20 * SPAN);
	stagepeak_release(&sp);
}

/* A mark given after its time was read: the stages it splits are not known, and one
 * handed over already is handed over again as not known. */
static void test_late_marks(void **state)
{
	(void)state;
	static struct history h;
	memset(&h, 0, sizeof(h));
	change(&h, 2, 20, 0, 20);
	change(&h, 6, 60, 0, 60);
	struct stagepeak sp;
	stagepeak_init(&sp, 0, 0, read_span, on_stage, &h);
	stagepeak_mark(&sp, 1, 4 * SPAN);
	stagepeak_advance(&sp, 10 * SPAN);
	assert_int_equal(h.n, 1);
	assert_stage(&h, 0, 0, 20, 2 * SPAN);
	stagepeak_mark(&sp, 2, 8 * SPAN);	/* late, inside the open stage */
	assert_int_equal(h.n, 2);
	assert_int_equal(h.id[1], 1);
	assert_false(h.known[1]);
	stagepeak_mark(&sp, 3, 3 * SPAN);	/* late, inside stage 0, handed over */
	assert_int_equal(h.n, 4);
	assert_int_equal(h.id[2], 0);
	assert_false(h.known[2]);
	assert_int_equal(h.id[3], 3);
	assert_false(h.known[3]);
	stagepeak_end(&sp, 12 * SPAN);
	assert_int_equal(h.n, 5);
	assert_int_equal(h.id[4], 2);
	assert_false(h.known[4]);
	stagepeak_release(&sp);
}

/* Marks made before the stages began (between the recorder's start and its first
 * sample): their stage holds the total at the start and what came after, not "not
 * known". */
static void test_marks_before_the_start(void **state)
{
	(void)state;
	static struct history h;
	memset(&h, 0, sizeof(h));
	change(&h, 7, 90, 100, 10);
	struct stagepeak sp;
	stagepeak_init(&sp, 5 * SPAN + 10, 48 * MIB, read_span, on_stage, &h);
	stagepeak_mark(&sp, 1, 3 * SPAN);
	stagepeak_mark(&sp, 2, 6 * SPAN);
	stagepeak_end(&sp, 9 * SPAN);
	assert_int_equal(h.n, 3);
	assert_stage(&h, 0, 0, 48, 5 * SPAN + 10);
	assert_stage(&h, 1, 1, 48, 5 * SPAN + 10);
	assert_stage(&h, 2, 2, 90, 7 * SPAN + 100);
	stagepeak_release(&sp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stages_split_the_history),
		cmocka_unit_test(test_the_span_of_a_mark),
		cmocka_unit_test(test_a_span_without_its_time),
		cmocka_unit_test(test_lost_history),
		cmocka_unit_test(test_late_marks),
		cmocka_unit_test(test_marks_before_the_start),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
