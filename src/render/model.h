/* rsswatch model's output: a fit across runs or inside one run, as text or JSON. */
#ifndef RSW_RENDER_MODEL_H
#define RSW_RENDER_MODEL_H

#include "base/buf.h"
#include "model/model.h"

void model_runs_text(struct buf *b, const struct runs_model *m);
void model_runs_json(struct buf *b, const struct runs_model *m);
void model_counters_text(struct buf *b, const struct counter_model *m);
void model_counters_json(struct buf *b, const struct counter_model *m);

#endif
