/* A terminal chart of one series over time, drawn with block characters (eighths of a
 * cell), that fits a given width. Each column shows the largest value of the samples
 * that fall into it, so a peak is never averaged away. Pure: text into a buffer. */
#ifndef RSW_RENDER_TCHART_H
#define RSW_RENDER_TCHART_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"

struct tchart_point {
	int64_t t;	/* nanoseconds from the start */
	uint64_t v;
};

/* Draws n points (in time order) spanning [0, t_end] into width columns (axis labels
 * included) and height rows. Marks the column of the largest value with '^' under the
 * axis. Does nothing when n is 0 or width is too small. */
void tchart_render(struct buf *b, const struct tchart_point *pts, size_t n, int64_t t_end,
		   int width, int height);

/* The same with marks: a row under the time axis shows the letter of each mark
 * (tchart_mark_letter) at its column (marks at times mark_t, nanoseconds from the
 * start); a mark whose column is taken moves to the nearest free one. */
void tchart_render_marks(struct buf *b, const struct tchart_point *pts, size_t n, int64_t t_end,
			 int width, int height, const int64_t *mark_t, size_t nmarks);

/* The same, with the run's reported peak (may be NULL): when it is above every point
 * (a peak from VmHWM, an exit record or the OOM report that no sample saw) its column
 * rises to it and '^' marks it there. */
void tchart_render_peak(struct buf *b, const struct tchart_point *pts, size_t n, int64_t t_end,
			int width, int height, const int64_t *mark_t, size_t nmarks,
			const struct tchart_point *peak);

/* The letter of the i-th mark: A..Z, then a..z, then '*'. */
char tchart_mark_letter(size_t i);

/* The width of the terminal on fd, else $COLUMNS, else 80. */
int terminal_width(int fd);

#endif
