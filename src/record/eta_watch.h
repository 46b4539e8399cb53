/* Time to exhaustion while recording: feeds each sample to the estimator
 * (record/eta.h), keeps the run's smallest projection, and for --warn-eta stores one
 * "warn_eta" event the first time a projection falls under the
 * duration. The recorder calls eta_watch_sample once per sample; the live line shows
 * w->now (render/live.h: live_eta). */
#ifndef RSW_RECORD_ETA_WATCH_H
#define RSW_RECORD_ETA_WATCH_H

#include <stddef.h>
#include <sys/types.h>

#include "record/eta.h"
#include "store/store.h"

struct eta_watch {
	struct eta_state est;
	struct eta_projection now;	/* after the last sample */
	int64_t warn_ns;		/* --warn-eta; 0: none */
	int warned;			/* the event was stored */
};

void eta_watch_init(struct eta_watch *w, int64_t interval_ns, int64_t warn_ns);

/* Sample s of run, taken at realtime t, of the target pid. w->warned becomes 1 when
 * the "warn_eta" event is stored. */
void eta_watch_sample(struct eta_watch *w, const struct sample *s, int64_t t,
		      struct store *st, struct run *run, pid_t pid);

/* The warning in words for a line, after the sample at t that stored the event:
 * "02:24:19 WARNING memory full in ~4m10s at this rate: 1.2 GiB left under ...". */
void eta_watch_words(const struct eta_watch *w, int64_t t, char *out, size_t n);

#endif
