/* The summary of a run as people read it: at the end of `record` and in `show`. */
#ifndef RSW_RENDER_SUMMARY_H
#define RSW_RENDER_SUMMARY_H

#include "base/buf.h"
#include "store/model.h"

/* Several "key   value" lines: run, target, when, duration and samples, peak (and when),
 * mean, last, outcome. max_sampled_rss is the highest VmRSS any sample saw; when the
 * peak is higher, it came from VmHWM (a spike between samples, or before the recording
 * began) and the summary says so. */
void summary_text(struct buf *b, const struct run *r, uint64_t max_sampled_rss);

#endif
