/* Each stage's peak, from the eBPF engine's history of the run's total
 * (record/stagepeak.h): the run's marks, read back from the store as they come, split
 * it, and each mark's row gets the peak of the stage it opens. Part of the recorder
 * (recorder_int.h).
 *
 * The marks are read from the store because that is where all of them arrive: the
 * application's from its page (stored with the recorder's next flush, every
 * FLUSH_EVERY_NS) and those of `rsswatch mark`, written by another process. The history
 * is read only as far as every mark before it must have arrived: STAGE_LAG behind now,
 * within the 34 s the engine keeps. */
#include "record/recorder_int.h"
#include "base/clock.h"
#include "store/store.h"

#include <stdlib.h>

/* How often the store is asked for new marks, at most. */
#define MARKS_READ_EVERY_NS NS_PER_S
/* How far behind now a mark may still arrive: a page's mark waits for the next sample
 * and the next flush; the writer thread's commit and a slow disk get a second more. */
#define STAGE_LAG(rc) ((rc)->opts->interval_ns + FLUSH_EVERY_NS + 2 * NS_PER_S)

static int read_span(void *ctx, int64_t n, struct kpeak_span *s)
{
	struct recorder *rc = ctx;
	return kpeak_span(rc->kpeak, n, s);
}

static void on_stage(void *ctx, int64_t id, int known, uint64_t peak, int64_t at)
{
	struct recorder *rc = ctx;
	if (id > 0)	/* 0: the time before the first mark, which no row holds */
		store_set_stage_peak(rc->st, rc->run->id, id, known, peak,
				     known ? at + rc->real_off : 0);
}

/* The stages begin at the first sample, where the processes of a set found at start
 * are tracked. */
void rec_stages_begin(struct recorder *rc)
{
	if (rc->kpeak)
		rc->stages_on = STAGES_BEFORE;
}

static void start_stages(struct recorder *rc, int64_t now)
{
	struct kpeak_figures f;
	kpeak_read(rc->kpeak, &f);
	stagepeak_init(&rc->stages, now, f.total, read_span, on_stage, rc);
	rc->stages_on = STAGES_ON;
	/* the first read a second later: not while the first sample is written (a
	 * second connection's first read then may wait on the writer's commit) */
	rc->marks_read_at = now;
}

/* The marks stored since the last read, into the stages. Without a connection of its
 * own (the file could not be opened again), a run has no stage peaks: said with -v. */
static void read_marks(struct recorder *rc)
{
	char err[256];
	if (!rc->marks_reader && store_open_reader(rc->st, &rc->marks_reader, err, sizeof(err)) < 0) {
		rec_say(rc, RECORDER_NOTE, "rsswatch: no peak for each stage: %s", err);
		stagepeak_release(&rc->stages);
		rc->stages_on = STAGES_OFF;
		return;
	}
	struct mark *m;
	size_t n;
	do {
		if (store_marks_after(rc->marks_reader, rc->run->id, rc->marks_after, &m, &n) < 0)
			return;	/* busy: the next read will do */
		for (size_t i = 0; i < n; i++) {
			stagepeak_mark(&rc->stages, m[i].id, m[i].t - rc->real_off);
			rc->marks_after = m[i].id;
		}
		store_free_marks(m, n);
	} while (n == 4096);
}

void rec_stages_tick(struct recorder *rc, int64_t now)
{
	if (rc->stages_on == STAGES_BEFORE)
		start_stages(rc, now);
	if (rc->stages_on != STAGES_ON || now - rc->marks_read_at < MARKS_READ_EVERY_NS)
		return;
	rc->marks_read_at = now;
	read_marks(rc);
	if (rc->stages_on == STAGES_ON)
		stagepeak_advance(&rc->stages, now - STAGE_LAG(rc));
}

/* At the end, with every mark stored (after store_run_finish): the rest of the history
 * and the last stage. */
void rec_stages_end(struct recorder *rc)
{
	if (rc->stages_on != STAGES_ON)
		return;
	read_marks(rc);
	if (rc->stages_on == STAGES_ON)
		stagepeak_end(&rc->stages, mono_ns());
	rec_stages_release(rc);
}

void rec_stages_release(struct recorder *rc)
{
	if (rc->stages_on == STAGES_ON)
		stagepeak_release(&rc->stages);
	rc->stages_on = STAGES_OFF;
	store_close(rc->marks_reader);
	rc->marks_reader = NULL;
}
