/* The HTML report of one run: a single self-contained page (inline CSS, inline SVG and
 * a small inline script for hover read-outs; nothing is fetched from anywhere) with the
 * summary, the chart, the marks with RSS at each and its change since the previous
 * one, the events and the run's metadata. Pure: text into a buffer. Every string that
 * came from the run (label, command line, marks, event details, host) is escaped. */
#ifndef RSW_RENDER_HTML_H
#define RSW_RENDER_HTML_H

#include "base/buf.h"
#include "render/svg.h"

/* r is one run with its samples, marks and events; o the chart's options (its title is
 * ignored: the page has its own). generator names the program in the footer ("rsswatch
 * 0.1.0"); NULL for none. */
void html_report(struct buf *b, const struct chart_run *r, const struct chart_opts *o,
		 const char *generator);

#endif
