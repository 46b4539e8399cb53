/* mmaploop N KIB: maps KIB of anonymous memory, writes its first byte, unmaps it, N
 * times, and prints "ns_per_pair=N" (the mean time of one map, touch and unmap) on
 * stdout. Every pair is two of the system calls that record --stacks traces, each with
 * a copy of the caller's stack: what the mode costs a program that maps and unmaps in
 * a loop, its worst case (bench/stacks-cost.sh). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#include "base/parse.h"

static long long now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char **argv)
{
	uint64_t n, kib;
	if (argc != 3 || parse_u64(argv[1], &n) < 0 || parse_u64(argv[2], &kib) < 0 || !n ||
	    !kib) {
		fputs("usage: mmaploop N KIB\n", stderr);
		return 2;
	}
	size_t len = (size_t)kib << 10;
	long long t0 = now_ns();
	for (uint64_t i = 0; i < n; i++) {
		char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			perror("mmaploop: mmap");
			return 1;
		}
		p[0] = 1;
		munmap(p, len);
	}
	printf("ns_per_pair=%lld\n", (now_ns() - t0) / (long long)n);
	return 0;
}
