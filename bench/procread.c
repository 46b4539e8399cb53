/* procread [PID]: the cost of one pread at offset 0 of a kept-open /proc/PID/stat,
 * status, statm and io (default: this process), averaged over 20,000 reads after 1,000
 * to warm up. Prints one line per file: "stat 6.11 us/pread". The recorder's choice of
 * how often to read each file rests on these figures (docs/dev/BENCHMARKS.md). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
	static const char *const files[] = { "stat", "status", "statm", "io" };
	const char *pid = argc > 1 ? argv[1] : "self";
	static char buf[8192];
	const int n = 20000;
	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%s/%s", pid, files[f]);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			perror(path);
			continue;
		}
		for (int i = 0; i < 1000; i++)
			if (pread(fd, buf, sizeof(buf), 0) < 0)
				return 1;
		double t0 = now_ns();
		for (int i = 0; i < n; i++)
			if (pread(fd, buf, sizeof(buf), 0) < 0)
				return 1;
		printf("%-7s %.2f us/pread\n", files[f], (now_ns() - t0) / n / 1000);
		close(fd);
	}
	return 0;
}
