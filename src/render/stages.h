/* The memory at each stage of a run, as `show` and the HTML report tabulate it: at
 * every mark, the RSS (and GPU figure) of the last sample at or before the mark, else
 * of the first sample, and the change since the previous mark (the first mark: since
 * the first sample). Fed the samples one at a time, in time order, so a reader that
 * streams them need not keep them; the marks must be in time order, as the store
 * gives them. */
#ifndef RSW_RENDER_STAGES_H
#define RSW_RENDER_STAGES_H

#include <stddef.h>
#include <stdint.h>

#include "store/run.h"

struct stage {
	int64_t elapsed_ns;	/* the mark's time from the run's start (may be < 0) */
	uint64_t rss, gpu;	/* 0 when the run has no samples */
	int64_t change;		/* rss minus the previous stage's (the first sample's) */
};

struct stages {
	struct stage *s;	/* one per mark */
	size_t n;
	int known;		/* a sample was fed: the figures are the samples' */
	/* while fed: marks before done are settled; the last sample fed */
	size_t done;
	uint64_t first_rss, last_rss, last_gpu;
};

void stages_init(struct stages *st, const struct run *r, const struct mark *m, size_t nm);
void stages_add(struct stages *st, const struct sample *s);
/* After the last sample: settles the remaining marks and the changes. */
void stages_end(struct stages *st);
void stages_release(struct stages *st);

/* Whether run r's peak time is the moment it was reached (the kernel's page counts, an
 * OOM report, a sample), not when a high-water figure that had been reached before it
 * was read (VmHWM, an exit record, wait4): the peak then goes among the marks at its
 * time as "reached by then" (where the source is known: a run stored before sources
 * were has none, and says nothing). */
int stages_peak_time_exact(const struct run *r);

#endif
