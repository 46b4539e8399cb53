/* The HTML report of one run: a single self-contained page (inline CSS, inline SVG and
 * small inline scripts for hover read-outs and the flame graph's search; nothing is
 * fetched from anywhere) with the summary, the chart, the marks with RSS at each and its
 * change since the previous one, a flame graph of the stacks at the peak (a run recorded
 * with --stacks), the processes of a set, the OOM kills, the events and the run's
 * metadata. Pure: text into a buffer. Every string that came from the run (label,
 * command line, marks, event details, host, process names, frames) is escaped. */
#ifndef RSW_RENDER_HTML_H
#define RSW_RENDER_HTML_H

#include "base/buf.h"
#include "render/svg.h"

/* The processes of a run (largest peak first, as store_processes gives them) and its
 * OOM kills (in time order); either may be none. */
struct html_procs {
	const struct proc_summary *procs;
	size_t nprocs;
	const struct oom_kill *kills;
	size_t nkills;
	/* The run's memory against each of its counters and gauges (render/fit_view.h's text
	 * of model/model.h's fits), shown as it is; NULL: none. */
	const char *counter_models;
	/* A set's memory by process, drawn next to its process table; NULL: none. */
	const struct proc_stack *stack;
	/* A run recorded with --stacks: its stacks at the peak (store_stacks), drawn as a
	 * flame graph (render/flame.h); none for a run without. */
	const struct stored_stack *stacks;
	size_t nstacks;
	/* and its device memory from the CUDA driver at that memory's peak (none: 0) */
	const struct stored_stack *gpu_stacks;
	size_t ngpu_stacks;
};

/* r is one run with its samples, marks and events; o the chart's options (its title is
 * ignored: the page has its own); hp its processes and OOM kills (NULL: none). A set
 * gets a table of its processes, the largest HTML_TOP_PROCS shown and the rest folded
 * under a summary line. generator names the program in the footer ("rsswatch 0.1.0");
 * NULL for none. */
#define HTML_TOP_PROCS 20
void html_report(struct buf *b, const struct chart_run *r, const struct chart_opts *o,
		 const struct html_procs *hp, const char *generator);

#endif
