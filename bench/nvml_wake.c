/* nvml_wake MODE N INTERVAL_US: where the CPU of a periodic GPU poll goes. Wakes N
 * times on a periodic timerfd, INTERVAL_US apart, and at each wake-up makes MODE's NVML
 * queries of device 0, as rsswatch's GPU poll does: MODE is a sum of 1 (memory info),
 * 2 (compute processes) and 4 (graphics processes); 0 wakes up only. Prints the
 * process's CPU time per wake-up, and the part spent inside the queries.
 *
 * Stand-alone (libnvidia-ml.so.1 through dlopen, no project code), so that it builds
 * on the GPU machine with `cc -O2 -o nvml_wake bench/nvml_wake.c -ldl`. */
#include <dlfcn.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

typedef void *nv_device;
struct nv_memory {
	unsigned long long total, free, used;
};
struct nv_process {		/* nvmlProcessInfo_t (v3 queries) */
	unsigned pid;
	unsigned long long used;
	unsigned gi, ci;
};

static double cpu_us(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: nvml_wake MODE N INTERVAL_US\n");
		return 2;
	}
	char *e1, *e2, *e3;
	long mode = strtol(argv[1], &e1, 10), n = strtol(argv[2], &e2, 10),
	     us = strtol(argv[3], &e3, 10);
	if (*e1 || *e2 || *e3 || mode < 0 || mode > 7 || n < 1 || us < 1) {
		fprintf(stderr, "nvml_wake: MODE 0..7, N and INTERVAL_US at least 1\n");
		return 2;
	}
	void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW);
	if (!h) {
		fprintf(stderr, "nvml_wake: no libnvidia-ml.so.1: %s\n", dlerror());
		return 1;
	}
	int (*init)(void);
	int (*by_index)(unsigned, nv_device *);
	int (*memory)(nv_device, struct nv_memory *);
	int (*compute)(nv_device, unsigned *, struct nv_process *);
	int (*graphics)(nv_device, unsigned *, struct nv_process *);
	*(void **)&init = dlsym(h, "nvmlInit_v2");
	*(void **)&by_index = dlsym(h, "nvmlDeviceGetHandleByIndex_v2");
	*(void **)&memory = dlsym(h, "nvmlDeviceGetMemoryInfo");
	*(void **)&compute = dlsym(h, "nvmlDeviceGetComputeRunningProcesses_v3");
	*(void **)&graphics = dlsym(h, "nvmlDeviceGetGraphicsRunningProcesses_v3");
	nv_device dev;
	if (!init || !by_index || !memory || !compute || !graphics || init() != 0 ||
	    by_index(0, &dev) != 0) {
		fprintf(stderr, "nvml_wake: NVML did not start, or has no device 0\n");
		return 1;
	}
	int fd = timerfd_create(CLOCK_MONOTONIC, 0);
	struct itimerspec its = { { us / 1000000, us % 1000000 * 1000 },
				  { us / 1000000, us % 1000000 * 1000 } };
	if (fd < 0 || timerfd_settime(fd, 0, &its, NULL) < 0) {
		perror("nvml_wake: timerfd");
		return 1;
	}
	struct nv_process procs[64];
	struct nv_memory mem;
	double in_queries = 0, start = cpu_us(CLOCK_PROCESS_CPUTIME_ID);
	for (long i = 0; i < n; i++) {
		struct pollfd p = { fd, POLLIN, 0 };
		uint64_t ticks;
		if (poll(&p, 1, -1) < 0 || read(fd, &ticks, sizeof(ticks)) < 0)
			return 1;
		double a = cpu_us(CLOCK_THREAD_CPUTIME_ID);
		unsigned count;
		if (mode & 1)
			memory(dev, &mem);
		if (mode & 2) {
			count = 64;
			compute(dev, &count, procs);
		}
		if (mode & 4) {
			count = 64;
			graphics(dev, &count, procs);
		}
		in_queries += cpu_us(CLOCK_THREAD_CPUTIME_ID) - a;
	}
	double total = cpu_us(CLOCK_PROCESS_CPUTIME_ID) - start;
	printf("mode %ld every %ld us: %.1f us of CPU per wake-up, %.1f us in the queries\n", mode,
	       us, total / (double)n, in_queries / (double)n);
	return 0;
}
