/* pagetouch SECONDS MIB: maps MIB of anonymous memory, writes one byte of every page,
 * unmaps it, and again, for SECONDS; then prints "pages_per_s=N" (pages faulted in per
 * second of its own run) on stdout. A workload whose every fault changes the kernel's
 * page counts: what the eBPF engine's program on rss_stat costs it shows here
 * (bench/kpeak-cost.sh). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "base/parse.h"

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	uint64_t secs, mib;
	if (argc != 3 || parse_u64(argv[1], &secs) < 0 || parse_u64(argv[2], &mib) < 0 ||
	    !secs || !mib || mib > 65536) {
		fputs("usage: pagetouch SECONDS MIB\n", stderr);
		return 2;
	}
	size_t len = (size_t)mib << 20, page = (size_t)sysconf(_SC_PAGESIZE);
	double t0 = now_s(), t = t0;
	unsigned long long pages = 0;
	while (t - t0 < (double)secs) {
		char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);
		if (p == MAP_FAILED) {
			perror("pagetouch: mmap");
			return 1;
		}
		for (size_t off = 0; off < len; off += page)
			p[off] = 1;
		munmap(p, len);
		pages += len / page;
		t = now_s();
	}
	printf("pages_per_s=%.0f\n", (double)pages / (t - t0));
	return 0;
}
