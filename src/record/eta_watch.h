/* Time to exhaustion while recording: feeds each sample to the estimator
 * (record/eta.h), keeps the run's smallest projection, and for --warn-eta stores one
 * "warn_eta" event (and prints one line) the first time a projection falls under the
 * duration. The recorder calls eta_watch_sample once per sample; the live line shows
 * w->now (render/live.h: live_eta). */
#ifndef RSW_RECORD_ETA_WATCH_H
#define RSW_RECORD_ETA_WATCH_H

#include <stdio.h>
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

/* Sample s of run, taken at realtime t, of the target pid. live: where the warning line
 * goes (NULL: nowhere). */
void eta_watch_sample(struct eta_watch *w, const struct sample *s, int64_t t,
		      struct store *st, struct run *run, pid_t pid, FILE *live);

#endif
