/* pagetouch SECONDS MIB [THREADS]: each of THREADS threads (1) maps MIB of anonymous
 * memory, writes one byte of every page, unmaps it, and again, for SECONDS; then it
 * prints "pages_per_s=N" (pages faulted in per second of the run, all threads
 * together) on stdout. A workload whose every fault changes the kernel's page counts:
 * what the eBPF engine's program on rss_stat costs it shows here (bench/kpeak-cost.sh);
 * with threads on many CPUs, also what the program's shared counters cost when they
 * are updated from all of them at once. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "base/parse.h"

struct toucher {
	pthread_t t;
	size_t len;
	double secs;
	unsigned long long pages;
	int failed;
};

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void *touch_loop(void *arg)
{
	struct toucher *w = arg;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	double t0 = now_s();
	while (now_s() - t0 < w->secs) {
		char *p = mmap(NULL, w->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);
		if (p == MAP_FAILED) {
			w->failed = 1;
			return NULL;
		}
		for (size_t off = 0; off < w->len; off += page)
			p[off] = 1;
		munmap(p, w->len);
		w->pages += w->len / page;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	uint64_t secs, mib, threads = 1;
	if ((argc != 3 && argc != 4) || parse_u64(argv[1], &secs) < 0 ||
	    parse_u64(argv[2], &mib) < 0 || (argc == 4 && parse_u64(argv[3], &threads) < 0) ||
	    !secs || !mib || mib > 65536 || !threads || threads > 256) {
		fputs("usage: pagetouch SECONDS MIB [THREADS]\n", stderr);
		return 2;
	}
	struct toucher *w = calloc(threads, sizeof(*w));
	if (!w)
		return 1;
	double t0 = now_s();
	for (uint64_t i = 0; i < threads; i++) {
		w[i].len = (size_t)mib << 20;
		w[i].secs = (double)secs;
		if (pthread_create(&w[i].t, NULL, touch_loop, &w[i]) != 0) {
			perror("pagetouch: pthread_create");
			return 1;
		}
	}
	unsigned long long pages = 0;
	int failed = 0;
	for (uint64_t i = 0; i < threads; i++) {
		pthread_join(w[i].t, NULL);
		pages += w[i].pages;
		failed |= w[i].failed;
	}
	double t = now_s();
	free(w);
	if (failed) {
		fputs("pagetouch: mmap failed\n", stderr);
		return 1;
	}
	printf("pages_per_s=%.0f\n", (double)pages / (t - t0));
	return 0;
}
