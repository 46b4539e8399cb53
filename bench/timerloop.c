/* timerloop INTERVAL_US SECONDS: wakes on an absolute periodic timerfd and does nothing
 * else. Its CPU time is what any recorder pays just to wake up that often on this
 * machine, the floor under rsswatch's own cost per sample. */
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/timerfd.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	long us = strtol(argv[1], NULL, 10), secs = strtol(argv[2], NULL, 10);
	int fd = timerfd_create(CLOCK_MONOTONIC, 0);
	struct itimerspec its = { { us / 1000000, us % 1000000 * 1000 }, { us / 1000000, us % 1000000 * 1000 } };
	timerfd_settime(fd, 0, &its, NULL);
	long n = secs * 1000000 / us;
	for (long i = 0; i < n; i++) {
		struct pollfd p = { fd, POLLIN, 0 };
		uint64_t x;
		poll(&p, 1, -1);
		if (read(fd, &x, sizeof(x)) < 0)
			return 1;
	}
	return 0;
}
