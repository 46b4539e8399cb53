/* readfloor INTERVAL_US SECONDS PID MASK: the reads of one rsswatch sample and nothing
 * else. At every tick of an absolute periodic timerfd (waited for in epoll, read, as
 * the recorder does) it preads, through files kept open, what MASK names:
 *   1 /proc/PID/status   2 /proc/PID/stat   4 /proc/PID/io   8 /proc/meminfo
 *   16 /proc/pressure/memory   32 an fstat of a directory (the shared page's)
 *   64 /proc/PID/statm
 * MASK 0 is the wake-up alone; 63 is what `rsswatch record -i 1s -p PID` reads at each
 * sample. Parses nothing, stores nothing. bench/cost-breakdown.sh runs it beside the
 * recorder to split the recorder's cost per sample into the kernel's (these reads) and
 * its own. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <unistd.h>

enum { NFILES = 7, DIR_BIT = 5 };

static long arg_long(const char *s, long min)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (end == s || *end || v < min) {
		fprintf(stderr, "readfloor: bad number '%s'\n", s);
		exit(2);
	}
	return v;
}

static int open_file(const char *fmt, long pid)
{
	char path[64];
	snprintf(path, sizeof(path), fmt, pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		perror(path);
	return fd;
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fputs("usage: readfloor INTERVAL_US SECONDS PID MASK\n", stderr);
		return 2;
	}
	long us = arg_long(argv[1], 1), secs = arg_long(argv[2], 1);
	long pid = arg_long(argv[3], 1), mask = arg_long(argv[4], 0);
	static const char *const files[NFILES] = {
		"/proc/%ld/status", "/proc/%ld/stat", "/proc/%ld/io", "/proc/meminfo",
		"/proc/pressure/memory", NULL, "/proc/%ld/statm",
	};
	int fds[NFILES];
	for (int i = 0; i < NFILES; i++)
		fds[i] = files[i] && (mask >> i & 1) ? open_file(files[i], pid) : -1;
	int dir = open("/dev/shm", O_PATH | O_DIRECTORY | O_CLOEXEC);
	int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLIN };
	struct itimerspec its = { { us / 1000000, us % 1000000 * 1000 },
				  { us / 1000000, us % 1000000 * 1000 } };
	if (tfd < 0 || ep < 0 || timerfd_settime(tfd, 0, &its, NULL) < 0 ||
	    epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev) < 0) {
		perror("readfloor: timer");
		return 1;
	}
	static char buf[8192];
	long n = secs * 1000000 / us;
	for (long i = 0; i < n; i++) {
		uint64_t ticks;
		if (epoll_wait(ep, &ev, 1, -1) < 0 || read(tfd, &ticks, sizeof(ticks)) < 0)
			continue;
		for (int k = 0; k < NFILES; k++)
			if (fds[k] >= 0 && pread(fds[k], buf, sizeof(buf), 0) < 0)
				fds[k] = -1;
		struct stat st;
		if ((mask >> DIR_BIT & 1) && dir >= 0)
			fstat(dir, &st);
	}
	printf("samples=%ld\n", n);
	return 0;
}
