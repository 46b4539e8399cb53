/* `show`'s output of one run, as text for people or as one JSON object (the CLI
 * contract, man/rsswatch.1). Pure: text into a buffer.
 *
 * Use: show_figures_new; feed every sample (in time order) to show_add_sample and
 * every counter value to show_add_counter (store_each_sample and store_each_counter
 * callbacks: they return 0), so the samples need not be kept; then show_text or
 * show_json; show_figures_free. */
#ifndef RSW_RENDER_SHOW_H
#define RSW_RENDER_SHOW_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "render/callstacks.h"
#include "store/run.h"

/* What `show` read of a run besides its samples (borrowed). */
struct show_run {
	const struct run *run;
	const struct mark *marks;	/* in time order */
	size_t nm;
	const struct event *events;
	size_t ne;
	const struct oom_kill *kills;
	size_t nk;
	const struct proc_summary *procs;
	size_t np;
	const struct run_thinning *thinned;	/* NULL: the series as recorded */
	/* record --stacks: live bytes by stack at each moment (STACKS_AT_*) */
	struct callstacks stacks;
	int all_stacks;		/* show --stacks: every stack, whole */
};

/* What `show` gathers from the samples and counters. */
struct show_figures;

struct show_figures *show_figures_new(const struct show_run *sh);
int show_add_sample(void *figures, const struct sample *s);
int show_add_counter(void *figures, int64_t elapsed_ns, const char *name, long long value);
/* The text: summary, PSS, pressure and context lines, the marks' table (the first 52
 * marks unless all), counters, the largest processes of a set, events (a set's process
 * starts and exits only with all), and a chart width columns wide. */
void show_text(struct buf *b, const struct show_run *sh, struct show_figures *f, int all,
	       int width);
/* One run object with its marks, events, OOM kills, context and (a set) processes. */
void show_json(struct buf *b, const struct show_run *sh, const struct show_figures *f);
void show_figures_free(struct show_figures *f);

#endif
