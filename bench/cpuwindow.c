/* cpuwindow PID START_MS LENGTH_MS: the CPU time, in nanoseconds, that process PID (all
 * its threads, those that end meanwhile included) takes from START_MS to START_MS +
 * LENGTH_MS from now. It reads the process's CPU-time clock (clock_getcpuclockid), which
 * any process may read, at both ends; says why and exits 1 when PID was not running
 * at both ends. bench/run.sh measures a tool's cost per sample over such a
 * window of a long run, which leaves its start-up out. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int cpu_ns(clockid_t clk, long pid, long long *out)
{
	struct timespec ts;
	if (clock_gettime(clk, &ts) < 0) {
		fprintf(stderr, "cpuwindow: cannot read the CPU clock of pid %ld: %s\n", pid,
			strerror(errno));
		return -1;
	}
	*out = (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
	return 0;
}

static void sleep_until(struct timespec *t, long ms)
{
	t->tv_sec += ms / 1000;
	t->tv_nsec += ms % 1000 * 1000000L;
	if (t->tv_nsec >= 1000000000L) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000L;
	}
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, t, NULL) != 0)
		;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fputs("usage: cpuwindow PID START_MS LENGTH_MS\n", stderr);
		return 2;
	}
	char *e1, *e2, *e3;
	long pid = strtol(argv[1], &e1, 10), start = strtol(argv[2], &e2, 10),
	     len = strtol(argv[3], &e3, 10);
	clockid_t clk;
	if (*e1 || *e2 || *e3 || pid <= 0 || start < 0 || len <= 0)
		return 2;
	int e = clock_getcpuclockid((pid_t)pid, &clk);
	if (e != 0) {
		fprintf(stderr, "cpuwindow: no CPU clock for pid %ld: %s\n", pid, strerror(e));
		return 1;
	}
	struct timespec t;
	long long a, b;
	clock_gettime(CLOCK_MONOTONIC, &t);
	sleep_until(&t, start);
	if (cpu_ns(clk, pid, &a) < 0)
		return 1;
	sleep_until(&t, len);
	if (cpu_ns(clk, pid, &b) < 0)
		return 1;
	printf("%lld\n", b - a);
	return 0;
}
