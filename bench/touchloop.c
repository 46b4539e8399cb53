/* touchloop SKIP_MS MEASURE_MS MIB: a target that works its memory as hard as it can.
 * In a loop it maps MIB MiB of anonymous memory, writes one byte to every page (a page
 * fault each) and unmaps it. After SKIP_MS (time for a watcher to attach) it counts the
 * pages touched during MEASURE_MS and prints "pages_per_s=N" on stdout, then exits.
 * A watcher that slows it (CPU taken from it, locks its page faults or mmap calls wait
 * behind, caches it evicts) lowers the rate. For the slowdown part of bench/run.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long long touch_until(double deadline, size_t len)
{
	long long pages = 0;
	while (now_s() < deadline) {
		volatile char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			perror("touchloop: mmap");
			exit(1);
		}
		for (size_t i = 0; i < len; i += 4096)
			p[i] = 1;
		munmap((void *)p, len);
		pages += (long long)(len / 4096);
	}
	return pages;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fputs("usage: touchloop SKIP_MS MEASURE_MS MIB\n", stderr);
		return 2;
	}
	double skip = strtod(argv[1], NULL) / 1000, measure = strtod(argv[2], NULL) / 1000;
	size_t len = (size_t)strtoul(argv[3], NULL, 10) << 20;
	if (measure <= 0 || len == 0)
		return 2;
	double t0 = now_s();
	touch_until(t0 + skip, len);
	double t1 = now_s();
	long long pages = touch_until(t1 + measure, len);
	printf("pages_per_s=%.0f\n", (double)pages / (now_s() - t1));
	return 0;
}
