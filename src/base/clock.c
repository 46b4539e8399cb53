#include "base/clock.h"
#include "base/parse.h"

#include <time.h>

static int64_t read_clock(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

int64_t mono_ns(void)
{
	return read_clock(CLOCK_MONOTONIC);
}

int64_t real_ns(void)
{
	return read_clock(CLOCK_REALTIME);
}

int64_t boottime_ns(void)
{
	return read_clock(CLOCK_BOOTTIME);
}

uint64_t tv_ns(const struct timeval *tv)
{
	if (tv->tv_sec < 0 || tv->tv_usec < 0)
		return 0;
	return (uint64_t)tv->tv_sec * NS_PER_S + (uint64_t)tv->tv_usec * 1000;
}
