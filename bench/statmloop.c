/* statmloop INTERVAL_US SECONDS PID...: the floor of any sampler. At every tick of an
 * absolute periodic timerfd it reads /proc/PID/statm of each PID once, through a file
 * kept open (pread at offset 0), sums the resident pages and keeps the highest sum. It
 * stores nothing and prints, on stdout, "samples=N peak_kib=K" at the end. A PID that
 * ends is dropped; the loop ends early when none is left. Its CPU time is what reading
 * one number per process per interval costs on this machine, wake-ups included. */
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/timerfd.h>
#include <unistd.h>

static long arg_long(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (end == s || *end || v <= 0) {
		fprintf(stderr, "statmloop: bad number '%s'\n", s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fputs("usage: statmloop INTERVAL_US SECONDS PID...\n", stderr);
		return 2;
	}
	long us = arg_long(argv[1]), secs = arg_long(argv[2]);
	int n = argc - 3, alive = 0;
	int *fds = calloc((size_t)n, sizeof(*fds));
	if (!fds)
		return 1;
	for (int i = 0; i < n; i++) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%ld/statm", arg_long(argv[3 + i]));
		fds[i] = open(path, O_RDONLY | O_CLOEXEC);
		alive += fds[i] >= 0;
	}
	long page_kib = sysconf(_SC_PAGESIZE) / 1024;
	int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	struct itimerspec its = { { us / 1000000, us % 1000000 * 1000 },
				  { us / 1000000, us % 1000000 * 1000 } };
	if (tfd < 0 || timerfd_settime(tfd, 0, &its, NULL) < 0) {
		perror("statmloop: timerfd");
		return 1;
	}
	long ticks = secs * 1000000 / us, samples = 0;
	unsigned long long peak = 0;
	char buf[256];
	for (long t = 0; t < ticks && alive > 0; t++) {
		struct pollfd p = { tfd, POLLIN, 0 };
		uint64_t x;
		if (poll(&p, 1, -1) < 0 || read(tfd, &x, sizeof(x)) < 0)
			return 1;
		unsigned long long sum = 0;
		for (int i = 0; i < n; i++) {
			if (fds[i] < 0)
				continue;
			ssize_t r = pread(fds[i], buf, sizeof(buf) - 1, 0);
			if (r <= 0) {	/* ended: ESRCH once reaped, nothing as a zombie */
				close(fds[i]);
				fds[i] = -1;
				alive--;
				continue;
			}
			buf[r] = '\0';
			char *end;
			strtoull(buf, &end, 10);		/* size */
			sum += strtoull(end, NULL, 10);	/* resident */
		}
		if (sum > peak)
			peak = sum;
		samples++;
	}
	printf("samples=%ld peak_kib=%llu\n", samples, peak * (unsigned long long)page_kib);
	return 0;
}
