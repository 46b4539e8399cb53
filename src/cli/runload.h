/* Loading whole runs (the run, its samples, marks, events and OOM kills) for the verbs
 * that draw or compare them: plot, report, compare, model; and the charts' view of them.
 * Prints its own errors, as CLI code does. Writing what they draw is output.h's. */
#ifndef RSW_CLI_RUNLOAD_H
#define RSW_CLI_RUNLOAD_H

#include <stddef.h>

#include "render/counters.h"
#include "store/run.h"
#include "store/store.h"

struct loaded_run {
	struct run run;
	struct sample *s;
	size_t n, cap;
	struct mark *marks;
	size_t nmarks;
	struct event *events;
	size_t nevents;
	struct oom_kill *kills;	/* the kernel's OOM reports */
	size_t nkills;
	struct counter_series *counters;	/* application counters and gauges */
	size_t ncounters;
};

/* Resolves ref and loads everything about it. Returns 0, EXIT_USAGE or EXIT_FAIL
 * (the error printed); on failure *lr holds nothing to free. */
int loaded_run_load(struct store *st, const char *ref, struct loaded_run *lr);
void loaded_run_release(struct loaded_run *lr);
/* The realtime of the first mark called label, or 0 when the run has none. */
int64_t loaded_run_mark(const struct loaded_run *lr, const char *label);

struct chart_run;
/* The chart runs (render/svg.h) for n loaded runs, aligned at the mark called align when
 * it is not NULL, with their counters and gauges (plot, report, compare). Returns 0
 * or EXIT_FAIL (printed). */
int plot_prepare(struct loaded_run *lr, size_t n, const char *align, struct chart_run *cr);

#endif
