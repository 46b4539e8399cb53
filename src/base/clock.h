/* Clocks. Deadlines use CLOCK_MONOTONIC; stored timestamps use CLOCK_REALTIME. */
#ifndef RSW_BASE_CLOCK_H
#define RSW_BASE_CLOCK_H

#include <stdint.h>
#include <sys/time.h>

int64_t mono_ns(void);
int64_t real_ns(void);
/* CLOCK_BOOTTIME: the clock of a process's start time in /proc/PID/stat. */
int64_t boottime_ns(void);
/* A timeval (getrusage's, wait4's) in ns; 0 for a negative one. */
uint64_t tv_ns(const struct timeval *tv);

#endif
