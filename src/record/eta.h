/* Time to exhaustion: how long until memory reaches the nearest limit, if it goes on
 * rising as it has lately. Pure: samples in, a projection out; no I/O, no allocation.
 *
 * The method (docs/guide/models.md, "Time to exhaustion"):
 * - Samples are averaged into points, one per ETA_WINDOW_NS / ETA_POINTS (470 ms) or
 *   per sampling interval when that is longer; the last ETA_POINTS points make the
 *   window: the last 30 s, or the last 64 samples when sampling is slower than 470 ms.
 * - The trend is the Theil slope of those points: the median of the slopes of the pairs
 *   at least half the points apart (Theil's own pairs; the Theil–Sen estimator takes
 *   every pair, four times as many to select from, for little gain in precision). One
 *   sample, even one far off, moves at most one point, which takes part in at most
 *   2 / (n - n/2 + 1) of those pairs (2 in 5 at 8 points, 1 in 16.5 at 64), so it
 *   cannot flip the median's sign nor move it past the clean slopes around it.
 * - Memory counts as rising only when the Mann–Kendall statistic of the same pairs says
 *   so with z >= ETA_MIN_Z (a one-sided test at about 0.1%: it is repeated at every
 *   point, and a flat process must not get projections), over at least ETA_MIN_POINTS
 *   points; S (all pairs) is kept up to date as points come and go. A new trend is
 *   computed when a point is completed, not at every sample.
 * - The headroom is the median of the last three samples' (one sample cannot flip it
 *   either), and the projection is headroom / slope.
 * - A projection is made only while the trend still holds at the end of the window (the
 *   Theil slope of its last quarter at least half the window's: a rise that stopped,
 *   a plateau after one step, is no longer projected although the window as a whole
 *   still rises) and only as far ahead as ETA_HORIZON times how long the rise has held:
 *   a process that grew for a few seconds and has 23 GiB to go gets no "full in 31m".
 * Two limits are watched: the memory cgroup's limit (--memory-limit, or the limit of a
 * cgroup recorded with -g), against the slope of the cgroup's usage; and the host's
 * MemAvailable, against the slope of the target's own RSS (the target using up what is
 * available now; the rest of the host's churn is not the target's trend). The nearest
 * one is the projection. */
#ifndef RSW_RECORD_ETA_H
#define RSW_RECORD_ETA_H

#include <stddef.h>
#include <stdint.h>

#include "store/run.h"
#include "base/parse.h"

#define ETA_WINDOW_NS (30 * NS_PER_S)
#define ETA_POINTS 64
#define ETA_MIN_POINTS 8
#define ETA_MIN_Z 3.0
/* A projection reaches at most ETA_HORIZON times as far ahead as the trend has held
 * (from the first point of the window in which it was first seen, to the latest
 * point): a rise seen for 10 s says little about the next hour. */
#define ETA_HORIZON 4.0

/* The trend of n points (t in seconds, increasing; y in bytes). */
struct eta_trend {
	double slope;		/* Theil: bytes per second */
	double z;		/* Mann–Kendall: (S - 1) / sd(S) when S > 0, (S + 1) / sd(S)
				   when S < 0, else 0 */
	size_t n;
	int rising;		/* n >= ETA_MIN_POINTS, z >= ETA_MIN_Z and slope > 0 */
};

/* Fits the trend of t[0..n), y[0..n); n at most ETA_POINTS. Returns 0, or -EINVAL
 * when n < 2, n > ETA_POINTS or a value is not finite (out untouched then). */
int eta_trend_fit(const double *t, const double *y, size_t n, struct eta_trend *out);

/* The median of three. */
double eta_median3(double a, double b, double c);

/* One figure's recent points: the complete ones in t, y (time order), the one being
 * filled apart. Invariant: mk_s is Mann-Kendall's S of the n points and trend their
 * fit as eta_trend_fit would give it, except that the slope is fitted only when the
 * points rise (0 otherwise: nothing is projected then). */
struct eta_series {
	int64_t spacing_ns;
	int64_t bucket;		/* index (elapsed / spacing) of the point being filled */
	double sum_t, sum_y;
	unsigned count;		/* samples in the point being filled */
	double t[ETA_POINTS], y[ETA_POINTS];
	unsigned n;
	long mk_s;
	struct eta_trend trend;
	double last[3];		/* the last three headrooms, oldest first */
	unsigned nlast;
	/* While trend.rising: since when (s) the rise has held without a break, and
	 * whether the most recent quarter of the points (at least ETA_MIN_POINTS)
	 * still rises at half the window's slope or more. rising_since < 0 otherwise. */
	double rising_since;
	int recent_holds;
};

enum eta_limit { ETA_NONE, ETA_CGROUP, ETA_HOST };

/* A projection. have is 0 when memory is not rising toward any limit (or too few
 * points are in yet); the rest is then meaningless. */
struct eta_projection {
	int have;
	enum eta_limit limit;
	double eta_s;		/* seconds from the sample until the limit, >= 0 */
	double rate;		/* bytes per second */
	uint64_t headroom;	/* bytes left under the limit */
	uint64_t limit_bytes;	/* the cgroup limit, or MemAvailable + the usage counted */
};

struct eta_state {
	struct eta_series cg;	/* the cgroup's usage; headroom: limit - usage */
	struct eta_series host;	/* the target's RSS; headroom: MemAvailable */
};

/* interval_ns: the sampling interval (the points are never closer than it). */
void eta_init(struct eta_state *e, int64_t interval_ns);

/* Feeds one sample (elapsed_ns increasing) and writes the projection after it. The
 * cgroup is watched while s has SAMPLE_CGROUP with a limit (cgroup_limit not 0 nor
 * UINT64_MAX), the host while mem_available is not 0. */
void eta_add(struct eta_state *e, const struct sample *s, struct eta_projection *out);

/* "cgroup limit", "MemAvailable"; "" for ETA_NONE. */
const char *eta_limit_name(enum eta_limit l);
/* As stored and in JSON: "cgroup", "host"; "" for ETA_NONE. */
const char *eta_limit_key(enum eta_limit l);

#endif
