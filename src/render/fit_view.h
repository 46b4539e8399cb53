/* rsswatch model's output: a fit across runs or inside one run, as text or JSON. */
#ifndef RSW_RENDER_FIT_VIEW_H
#define RSW_RENDER_FIT_VIEW_H

#include "base/buf.h"
#include "model/model.h"

void fit_view_runs_text(struct buf *b, const struct runs_model *m);
void fit_view_runs_json(struct buf *b, const struct runs_model *m);
/* The fit across runs as an SVG document (W x H pixels; 0 for 960 x 560): the runs as
 * points along the first term (with more terms, moved to the newest run's values of the
 * others), the fitted line, its 95% band and the band where one new run would fall, the
 * budget line and the largest value that fits. Every label is escaped. */
void fit_view_runs_svg(struct buf *b, const struct runs_model *m, int width, int height);
void fit_view_counters_text(struct buf *b, const struct counter_model *m);
void fit_view_counters_json(struct buf *b, const struct counter_model *m);

#endif
