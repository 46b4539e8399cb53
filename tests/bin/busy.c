/* busy MS: spins on the CPU until it has used MS milliseconds of CPU time (its own,
 * CLOCK_PROCESS_CPUTIME_ID), then exits 0. Its CPU time is the same however loaded the
 * machine is; only how long it takes changes. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	char *end;
	long ms = argc == 2 ? strtol(argv[1], &end, 10) : -1;
	if (argc != 2 || *end || ms < 0 || ms > 3600000) {
		fprintf(stderr, "usage: busy MS\n");
		return 2;
	}
	long long want = (long long)ms * 1000000;
	volatile unsigned long sink = 0;
	for (;;) {
		struct timespec ts;
		for (int i = 0; i < 100000; i++)
			sink += (unsigned long)i;
		if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) < 0)
			return 1;
		if ((long long)ts.tv_sec * 1000000000 + ts.tv_nsec >= want)
			return 0;
	}
}
