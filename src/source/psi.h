/* Pressure stall information for memory: /proc/pressure/memory (system) and a v2
 * cgroup's memory.pressure. Both read
 *     some avg10=0.12 avg60=0.00 avg300=0.00 total=2140
 *     full avg10=0.00 avg60=0.00 avg300=0.00 total=2140
 * "some": the share of time at least one task stalled on memory; "full": all non-idle
 * tasks stalled at once. avg* are percentages over 10 s, 60 s and 300 s windows, kept
 * here as fixed-point hundredths (12 means 0.12 %); total is the stall time in
 * microseconds since boot (or since the cgroup was made), the figure to take deltas of.
 *
 * A kernel without PSI (or booted with psi=0) has no such file: readers return -ENOENT,
 * which callers treat as "not available", not as an error. */
#ifndef RSW_SOURCE_PSI_H
#define RSW_SOURCE_PSI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/rfile.h"

struct psi_line {
	uint32_t avg10, avg60, avg300;	/* hundredths of a percent, 0..10000 */
	uint64_t total_us;
};

struct psi {
	struct psi_line some;
	struct psi_line full;
	bool has_full;		/* the "full" line was present */
};

/* Parses the text. "some" is required, "full" optional; unknown lines and fields are
 * rejected (the format has been stable since 4.20). Returns 0 or -EINVAL / -ERANGE. */
int psi_parse(const char *buf, size_t len, struct psi *out);

/* An avg field as a percentage. */
static inline double psi_avg_pct(uint32_t hundredths)
{
	return hundredths / 100.0;
}

/* Keeps a pressure file open. */
struct psi_reader {
	struct rfile f;
};

/* /proc/pressure/memory (under the sysroot). Returns 0, -ENOENT without PSI. */
int psi_reader_open_system(struct psi_reader *r);
/* cgdir/memory.pressure; cgdir is absolute (as from cg_find()). -ENOENT without PSI
 * or on cgroup v1. */
int psi_reader_open_cgroup(struct psi_reader *r, const char *cgdir);
/* Returns 0, -ENOENT when PSI is off (EOPNOTSUPP from the kernel), or -errno. */
int psi_reader_read(struct psi_reader *r, struct psi *out);
void psi_reader_close(struct psi_reader *r);

#endif
