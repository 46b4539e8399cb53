/* Comparing runs: did memory change between them? Pure: runs and samples in, a table (or
 * JSON) and a verdict in plain words into a buffer.
 *
 * Each run is reduced to figures: peak (the run's peak, VmHWM included), time to peak,
 * mean, last, growth (the least-squares slope of RSS over time) and RSS at each mark
 * label every run shares. Runs are compared against the first; groups of repeated runs
 * are compared by their means, and the difference is weighed against the spread of the
 * runs within each group. */
#ifndef RSW_RENDER_COMPARE_H
#define RSW_RENDER_COMPARE_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "store/run.h"

struct cmp_run {
	const struct run *run;
	const struct sample *s;	/* in time order */
	size_t n;
	const struct mark *marks;
	size_t nmarks;
};

/* Repeated runs under the same conditions. Groups are named A, B, C... */
struct cmp_group {
	const struct cmp_run *runs;
	size_t n;
};

/* The least-squares slope of RSS over elapsed time, in bytes per second; 0 with fewer
 * than two samples or no time between them. */
double cmp_slope(const struct sample *s, size_t n);


/* How a difference relates to the spread of repeated runs. */
enum cmp_verdict {
	CMP_UNKNOWN_SPREAD,	/* one run per side: the spread is not known */
	CMP_NO_EVIDENCE,	/* within the spread */
	CMP_UNCLEAR,		/* outside the spread, but less than twice it */
	CMP_CLEAR,		/* more than twice the spread */
};

/* Classifies a difference of diff_pct percent against a spread of spread_pct percent
 * (half the range of the runs within a group, the larger over both groups; negative
 * when unknown). */
enum cmp_verdict cmp_classify(double diff_pct, double spread_pct);

/* The comparison as text: one column per run (groups: per group, mean and range), each
 * column after the first with its difference and percentage against the first, then
 * one sentence per group (or run) after the first about the peak. With grouped unset,
 * every group must hold one run. */
void compare_text(struct buf *b, const struct cmp_group *g, size_t ng, int grouped);
/* The same as one JSON object: "runs", "groups" (grouped only), "differences",
 * "verdicts". */
void compare_json(struct buf *b, const struct cmp_group *g, size_t ng, int grouped);

#endif
