/* The summary of a run as people read it: at the end of `record` and in `show`. */
#ifndef RSW_RENDER_SUMMARY_H
#define RSW_RENDER_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "store/run.h"

/* Several "key   value" lines: run, target, when, duration and samples, peak (when, and
 * where the figure came from: PEAK_FROM_* in words), the target's peak from before the
 * recording (hwm_before, apart), the largest process of a set, mean, last, and the
 * outcome with the OOM kills of the run (kills[0..nkills) in time order; may be none).
 * max_sampled_rss is the highest RSS (or set total) any sample saw; when the peak is
 * higher, the summary gives both. */
void summary_text(struct buf *b, const struct run *r, uint64_t max_sampled_rss,
		  const struct oom_kill *kills, size_t nkills);
/* Parameters p[0..n) as " key=value" each (values made printable). */
void params_text(struct buf *b, const struct run_param *p, size_t n);

#endif
