#include "render/tchart.h"
#include "base/fmt.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* U+2581..U+2588: lower one eighth block .. full block. */
static const char *const eighths[9] = {
	" ", "\xe2\x96\x81", "\xe2\x96\x82", "\xe2\x96\x83", "\xe2\x96\x84",
	"\xe2\x96\x85", "\xe2\x96\x86", "\xe2\x96\x87", "\xe2\x96\x88",
};

int terminal_width(int fd)
{
	struct winsize ws;
	if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	const char *c = getenv("COLUMNS");
	if (c) {
		long v = strtol(c, NULL, 10);
		if (v > 0 && v < 10000)
			return (int)v;
	}
	return 80;
}

char tchart_mark_letter(size_t i)
{
	if (i < 26)
		return (char)('A' + i);
	if (i < 52)
		return (char)('a' + (i - 26));
	return '*';
}

void tchart_render(struct buf *b, const struct tchart_point *pts, size_t n, int64_t t_end,
		   int width, int height)
{
	tchart_render_marks(b, pts, n, t_end, width, height, NULL, 0);
}

void tchart_render_marks(struct buf *b, const struct tchart_point *pts, size_t n, int64_t t_end,
			 int width, int height, const int64_t *mark_t, size_t nmarks)
{
	tchart_render_peak(b, pts, n, t_end, width, height, mark_t, nmarks, NULL);
}

enum { LABEL = 10 };	/* the width of a value label: "1023.9 MiB" */

/* A chart's columns: each the highest value in it, whether it is filled (1: by a
 * sample, 2: carried forward from the column before), the highest value of all and its
 * column. */
struct tcols {
	int n;
	uint64_t *max;
	char *filled;
	uint64_t vmax;
	int peak_col;
};

static int tchart_col(int64_t t, int64_t t_end, int cols)
{
	return (int)((double)t / (double)t_end * (cols - 1) + 0.5);
}

/* Puts the points into cols columns over [0, t_end], with the reported peak (VmHWM, an
 * exit record, the OOM report) where no sample saw it. */
static void tchart_columns(struct tcols *tc, const struct tchart_point *pts, size_t n, int64_t t_end,
			   int cols, const struct tchart_point *peak)
{
	tc->n = cols;
	tc->max = xcalloc((size_t)cols, sizeof(*tc->max));
	tc->filled = xcalloc((size_t)cols, 1);
	tc->vmax = 0;
	tc->peak_col = 0;
	for (size_t i = 0; i < n; i++) {
		int c = tchart_col(pts[i].t, t_end, cols);
		if (c < 0)
			c = 0;
		if (c >= cols)
			c = cols - 1;
		if (!tc->filled[c] || pts[i].v > tc->max[c])
			tc->max[c] = pts[i].v;
		tc->filled[c] = 1;
		if (pts[i].v > tc->vmax) {
			tc->vmax = pts[i].v;
			tc->peak_col = c;
		}
	}
	/* Columns between two samples (sparse runs) carry the earlier value forward; after
	 * the last sample (a run that ended later) nothing is known and nothing is drawn. */
	int last_col = tchart_col(pts[n - 1].t, t_end, cols);
	for (int c = 1; c < cols && c <= last_col; c++)
		if (!tc->filled[c] && tc->filled[c - 1]) {
			tc->max[c] = tc->max[c - 1];
			tc->filled[c] = 2;
		}
	if (peak && peak->v > tc->vmax) {
		int c = tchart_col(peak->t, t_end, cols);
		c = c < 0 ? 0 : c >= cols ? cols - 1 : c;
		tc->max[c] = peak->v;
		tc->filled[c] = 1;
		tc->vmax = peak->v;
		tc->peak_col = c;
	}
	if (tc->vmax == 0)
		tc->vmax = 1;
}

/* The rows of bars, in eighths of a row, the top one labelled with the highest value,
 * and the line under them. */
static void tchart_bars(struct buf *b, const struct tcols *tc, int height)
{
	char lab[32];
	for (int row = height - 1; row >= 0; row--) {
		if (row == height - 1)
			fmt_bytes(lab, sizeof(lab), tc->vmax);
		else if (row == 0)
			strlcpy_rsw(lab, "0", sizeof(lab));
		else
			lab[0] = '\0';
		buf_printf(b, "%*s %s", LABEL, lab,
			   row == height - 1 || row == 0 ? "\xe2\x94\xa4" : "\xe2\x94\x82");
		for (int c = 0; c < tc->n; c++) {
			if (!tc->filled[c]) {
				buf_putc(b, ' ');
				continue;
			}
			/* Height of this column in eighths of a row, at least one when non-zero. */
			uint64_t h8 = (uint64_t)((double)tc->max[c] / (double)tc->vmax * height * 8 + 0.5);
			if (h8 == 0 && tc->max[c] > 0)
				h8 = 1;
			int64_t in_row = (int64_t)h8 - (int64_t)row * 8;
			buf_puts(b, eighths[in_row <= 0 ? 0 : in_row >= 8 ? 8 : in_row]);
		}
		buf_putc(b, '\n');
	}
	buf_printf(b, "%*s \xe2\x94\x94", LABEL, "");
	for (int c = 0; c < tc->n; c++)
		buf_puts(b, "\xe2\x94\x80");
	buf_putc(b, '\n');
}

/* The time axis: start, end, and the peak's column marked with '^'. axis has room for
 * cols + 1 bytes. */
static void tchart_time_axis(struct buf *b, char *axis, int cols, int64_t t_end, int peak_col)
{
	char end[32];
	fmt_duration(end, sizeof(end), t_end);
	int endlen = (int)strlen(end);
	memset(axis, ' ', (size_t)cols);
	axis[cols] = '\0';
	axis[peak_col] = '^';
	memcpy(axis, "0s", 2 <= cols ? 2 : 0);
	if (endlen < cols - 3 && peak_col < cols - endlen - 1)
		memcpy(axis + cols - endlen, end, (size_t)endlen);
	else if (peak_col == cols - 1 && endlen < cols - 4)	/* a peak at the very end: "117ms^" */
		memcpy(axis + cols - 1 - endlen, end, (size_t)endlen);
	if (peak_col < 2 && cols >= 4) {	/* a peak at the start: "^0s", " ^0s" */
		memset(axis, ' ', 2);
		axis[peak_col] = '^';
		memcpy(axis + peak_col + 1, "0s", 2);
	}
	buf_printf(b, "%*s  %s\n", LABEL, "", axis);
}

/* One letter per mark at its column, or the nearest free one. axis has room for
 * cols + 1 bytes. */
static void tchart_mark_row(struct buf *b, char *axis, int cols, int64_t t_end, const int64_t *mark_t,
			    size_t nmarks)
{
	memset(axis, ' ', (size_t)cols);
	for (size_t i = 0; i < nmarks; i++) {
		int64_t t = mark_t[i] < 0 ? 0 : mark_t[i] > t_end ? t_end : mark_t[i];
		int mc = tchart_col(t, t_end, cols);
		for (int d = 0; d < cols; d++) {
			if (mc + d < cols && axis[mc + d] == ' ') {
				axis[mc + d] = tchart_mark_letter(i);
				break;
			}
			if (mc - d >= 0 && axis[mc - d] == ' ') {
				axis[mc - d] = tchart_mark_letter(i);
				break;
			}
		}
	}
	int last = cols;
	while (last > 0 && axis[last - 1] == ' ')
		last--;
	axis[last] = '\0';
	buf_printf(b, "%*s  %s\n", LABEL, "marks", axis);
}

void tchart_render_peak(struct buf *b, const struct tchart_point *pts, size_t n, int64_t t_end,
			int width, int height, const int64_t *mark_t, size_t nmarks,
			const struct tchart_point *peak)
{
	int cols = width - LABEL - 2;
	if (n == 0 || cols < 10 || height < 2)
		return;
	if (t_end <= 0)
		t_end = 1;
	struct tcols tc;
	tchart_columns(&tc, pts, n, t_end, cols, peak);
	tchart_bars(b, &tc, height);
	char *axis = xmalloc((size_t)cols + 1);
	tchart_time_axis(b, axis, cols, t_end, tc.peak_col);
	if (nmarks)
		tchart_mark_row(b, axis, cols, t_end, mark_t, nmarks);
	free(axis);
	free(tc.max);
	free(tc.filled);
}
