/* eta-cost [SAMPLES]: what the time-to-exhaustion projection (record/eta.c) costs the
 * recorder per sample. Feeds synthetic samples (a cgroup with a limit, RSS growing with
 * noise, MemAvailable) to eta_add, as the recorder does at every sample, and times each
 * call with CLOCK_MONOTONIC. Three cases:
 *   1ms-rising: most samples only add to the point being filled; one in 470 closes a
 *     point and refits both trends (64 points: 528 slopes each);
 *   1s-rising: every sample closes a point and refits both: the worst case per sample;
 *   1s-flat: every sample closes a point; the trend test says "not rising" and no
 *     slope is fitted (the usual case of a steady process).
 * Prints, per case: the mean per sample, the median, the 99th percentile and the
 * largest single call, in ns. A benchmark, not a test: figures in docs/dev/BENCHMARKS.md. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "record/eta.h"

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static volatile double sink;

static void run(const char *name, int64_t interval_ns, size_t n, uint64_t growth)
{
	int64_t *d = malloc(n * sizeof(*d));
	struct eta_state e;
	struct eta_projection p;
	unsigned seed = 1;
	if (!d) {
		perror("eta-cost");
		exit(1);
	}
	eta_init(&e, interval_ns);
	int64_t total = 0;
	for (size_t i = 0; i < n; i++) {
		struct sample s;
		memset(&s, 0, sizeof(s));
		seed = seed * 1103515245 + 12345;
		s.elapsed_ns = (int64_t)i * interval_ns;
		s.mem.rss = (uint64_t)(1 << 30) + i * growth + (seed >> 16) * 64;
		s.cgroup = s.mem.rss + (1 << 20);
		s.cgroup_limit = 64ULL << 30;
		s.have = SAMPLE_CGROUP;
		s.mem_available = (20ULL << 30) - i * 4096;
		int64_t t0 = now_ns();
		eta_add(&e, &s, &p);
		int64_t t1 = now_ns();
		d[i] = t1 - t0;
		total += d[i];
		sink += p.eta_s;
	}
	qsort(d, n, sizeof(*d), cmp_i64);
	printf("%-12s samples=%zu mean_ns=%.0f median_ns=%lld p99_ns=%lld max_ns=%lld\n", name, n,
	       (double)total / (double)n, (long long)d[n / 2], (long long)d[n * 99 / 100],
	       (long long)d[n - 1]);
	free(d);
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 200000;
	if (n < 1000)
		n = 1000;
	run("1ms-rising", 1000000, n, 4096);
	run("1s-rising", 1000000000, n / 10, 4096 * 1024);
	run("1s-flat", 1000000000, n / 10, 0);
	return 0;
}
