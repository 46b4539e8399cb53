/* Memory over time as an SVG document. Pure: runs and samples in, text into a buffer.
 *
 * One run: RSS as a line over its anon/file/shmem parts stacked as areas, VmHWM as a
 * dashed line, PSS, cgroup and GPU usage as lines when the samples have them, the peak
 * marked, marks as labelled vertical lines and events (exit, oom_kill, warn) as
 * symbols. A run with a memory cgroup also gets its limit as a labelled line (when
 * memory came near it: half of it or an OOM kill) and the cgroup's charged peak as a
 * labelled dot, so that the picture alone explains an OOM kill; each OOM kill is drawn
 * at its victim's own RSS at the kill and names it. Several runs: one RSS line per run, each in its own colour with its name in
 * the legend, placed on a common time axis (each run shifted by its shift_ns).
 *
 * Long runs are reduced per pixel column to the samples with the smallest and largest
 * value (chart_downsample), so a peak is never averaged away and a day at 1 s still
 * makes a small document. */
#ifndef RSW_RENDER_SVG_H
#define RSW_RENDER_SVG_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "render/counters.h"
#include "render/stack.h"
#include "store/run.h"
#include "base/fmt.h"	/* enum unit */

/* One run to draw. The arrays are borrowed; samples in time order. */
struct chart_run {
	const struct run *run;
	const struct sample *s;
	size_t n;
	const struct mark *marks;
	size_t nmarks;
	const struct event *events;
	size_t nevents;
	int64_t shift_ns;	/* subtracted from every elapsed time (alignment at a mark) */
	const char *name;	/* legend text for overlays; NULL: the label, else "run N" */
	/* Application counters and gauges, drawn (one run only) in a panel under the
	 * chart on the same time axis, one strip each, in their units. */
	const struct counter_series *counters;
	size_t ncounters;
	/* A set's memory by process (one run only): drawn as stacked areas, a layer per
	 * member named in the legend, in place of the anon/file/shmem areas. NULL: none. */
	const struct proc_stack *stack;
	/* The kernel's OOM reports of the run (store_oom_kills): an oom_kill event is drawn
	 * at its victim's own RSS at the kill (anon + file + shmem), named. NULL: none. */
	const struct oom_kill *kills;
	size_t nkills;
};

enum chart_time { CHART_ELAPSED, CHART_WALL };

struct chart_opts {
	int width, height;	/* pixels; 0 takes 960 x 440 */
	enum chart_time time;	/* elapsed time (default) or local wall-clock time */
	const char *title;	/* drawn above the chart; NULL for none (escaped here) */
	const char *x_title;	/* axis title; NULL: "elapsed time" or "local time" */
	int max_points;		/* per series at most about this many points; 0: 1500 */
	int no_context;		/* leave out the context panel (CPU, major faults) */
};

/* Where the plot area ended up, for callers that add interaction (the HTML report):
 * x pixel = x0 + (t - t0) * (x1 - x0) / (t1 - t0); t in the axis's own nanoseconds
 * (elapsed minus shift, or realtime in wall mode). y pixel = y1 - v * (y1 - y0) / vmax. */
struct chart_geom {
	double x0, x1, y0, y1;	/* y0 top, y1 bottom */
	int64_t t0, t1;
	double vmax;
	int width, height;
};

/* Draws the chart as a complete <svg> element. Draws an empty frame with a note when
 * there are no samples. g may be NULL. */
void svg_chart(struct buf *b, const struct chart_run *runs, size_t nruns,
	       const struct chart_opts *o, struct chart_geom *g);

/* Rates from a run's context counters (SAMPLE_CPU), as the panel under the chart draws
 * them: CPU use in percent of one CPU (user + system time), major page faults per
 * second. */
enum chart_rate { RATE_CPU, RATE_MAJFLT };

/* The rate of one context counter over consecutive windows of the samples s[0..n) that
 * have it, each window at least min_dt long (the counters are re-read at most once a
 * clock tick, so shorter windows would read 0% then 200%) and ending at a sample:
 * window k runs from t[k-1] (t[-1] is *start, the first such sample) to t[k] (elapsed
 * ns) at rate v[k]. A counter that went down (a member left a set) reads 0 for that
 * window. t and v have room for n. Returns the number of windows; 0 when fewer than
 * two samples have the counter. */
size_t chart_rates(const struct sample *s, size_t n, enum chart_rate which, int64_t min_dt,
		   int64_t *start, int64_t *t, double *v);

typedef uint64_t (*sample_get)(const struct sample *s);
uint64_t sample_rss(const struct sample *s);

/* Picks the samples to draw for one series: per column of [t0, t1) (cols columns, by
 * elapsed_ns) the one with the smallest and the one with the largest get() value, plus
 * the first and the last sample, in time order. Writes indices into idx (room for
 * 2 * cols + 2) and returns their count. */
size_t chart_downsample(const struct sample *s, size_t n, int64_t t0, int64_t t1, size_t cols,
			sample_get get, size_t *idx);

/* A nice step for about target ticks over [0, span]: 1, 2, 2.5 or 5 times a power of 10. */
double nice_step(double span, int target);

/* A size at a tick, in the axis's unit u with as many decimals as the step needs:
 * "0", "2.5 GiB", "512 MiB". */
void svg_tick_bytes(char *out, size_t n, double v, enum unit u, double step);

/* The charts' font, and the average advance of one of its 11px characters (for
 * placing text without measuring it). */
#define SVG_FONT "system-ui,-apple-system,'Segoe UI',Roboto,'Helvetica Neue',Arial,sans-serif"
#define SVG_CHAR_W 6.4

#endif
