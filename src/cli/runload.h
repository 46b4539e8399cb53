/* Loading whole runs (the run, its samples, marks, events and OOM kills) for the verbs that draw
 * or compare them: plot, report, compare. Prints its own errors, as CLI code does. */
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
 * it is not NULL, with their counters and gauges. Defined in cmd_plot.c. Returns 0 or
 * EXIT_FAIL (printed). */
int plot_prepare(struct loaded_run *lr, size_t n, const char *align, struct chart_run *cr);

struct buf;
/* Writes b to path ("-" is standard output), replacing the file. Prints the error;
 * returns 0 or EXIT_FAIL. */
int write_output(const char *path, const struct buf *b);

/* Whether path names a PNG file (ends in ".png", any case). */
int path_is_png(const char *path);
/* A picture's title when none is given: "run 7: LABEL", or "runs 7, 8 and 9" (a PNG
 * travels alone, without the page or the command that made it). Appended to t. */
void runs_title(struct buf *t, const struct run *const *runs, size_t n);
/* Whether -o path ends in one of exts (NULL-terminated, any case) or is "-" or
 * /dev/stdout (standard output): 0, or
 * EXIT_USAGE (printed: a chart written into "x.txt" would be a silent surprise). */
int cli_output_kind(const char *verb, const char *path, const char *const *exts);
/* Writes the SVG document in svg to path as a PNG image at twice its size (sharp on
 * high-density screens). Prints the error (png_unavailable() where librsvg is
 * missing); returns 0 or EXIT_FAIL. */
int write_png(const char *path, const struct buf *svg);

#endif
