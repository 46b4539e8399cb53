/* pssread PID K: reads /proc/PID/smaps_rollup K times through one kept-open fd (as
 * record --pss does) and prints "rss_kib pss_kib median_ms min_ms max_ms". For
 * bench/pss-cost.sh. */
#include <stdio.h>
#include <stdlib.h>

#include "base/clock.h"
#include "source/smaps.h"

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fputs("usage: pssread PID K\n", stderr);
		return 2;
	}
	int pid = (int)strtol(argv[1], NULL, 10);
	long k = strtol(argv[2], NULL, 10);
	struct smaps_reader r;
	struct smaps_rollup s;
	if (k < 1 || smaps_reader_open(&r, pid) < 0)
		return 1;
	double *ms = calloc((size_t)k, sizeof(*ms));
	if (!ms)
		return 1;
	for (long i = 0; i < k; i++) {
		int64_t t0 = mono_ns();
		if (smaps_reader_read(&r, &s) < 0)
			return 1;
		ms[i] = (double)(mono_ns() - t0) / 1e6;
	}
	qsort(ms, (size_t)k, sizeof(*ms), cmp);
	printf("%llu %llu %.2f %.2f %.2f\n", (unsigned long long)(s.rss / 1024),
	       (unsigned long long)(s.pss / 1024), ms[k / 2], ms[0], ms[k - 1]);
	smaps_reader_close(&r);
	free(ms);
	return 0;
}
