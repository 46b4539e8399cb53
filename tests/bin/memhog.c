/* A workload whose memory is known: runs a small script of steps given as arguments.
 *   +SIZE        map SIZE of anonymous memory and touch every page (kept)
 *   huge SIZE    as +SIZE, asking for transparent huge pages (MADV_HUGEPAGE): a large
 *                block in a few thousand faults instead of a fault per 4 KiB page, so
 *                that a loaded machine builds it in about a second (4 KiB pages where
 *                the kernel has no THP) (kept)
 *   -            unmap the most recent kept block
 *   spike SIZE   map and touch SIZE, then unmap it at once (a peak no sample may see)
 *   grow SIZE RATE  map SIZE and touch it at a steady RATE (a size per second), a
 *                page at a time every 10 ms, paced on CLOCK_MONOTONIC (kept)
 *   sleep DUR    sleep (DUR in ms, s)
 *   touch PATH   create PATH (tells a test that the steps before it are done)
 *   stamp PATH   append CLOCK_REALTIME (ns) as a line to PATH (a spike between two
 *                stamps has a known time)
 *   await PATH   wait until PATH exists (a test tells us to go on)
 *   exit N       exit with status N
 *   raise SIG    kill itself with signal number SIG
 *   fork         the rest of the script runs in a child too (both continue)
 *   cuda PATH    load a CUDA driver library (the stand-in, tests/fake/fake_cuda.c, or a
 *                real one) and call its cuInit
 *   gpu HOW SIZE allocate SIZE of device memory (kept) through the driver's entry point
 *                HOW: alloc (cuMemAlloc_v2), managed, async, pool (FromPoolAsync), pitch
 *                (SIZE as 1 MiB rows), create (cuMemCreate); a failure is reported and
 *                the script goes on
 *   gpu-         free the most recent kept device block, through the matching free
 *   gpumany N SIZE  N blocks of SIZE through cuMemAlloc_v2, kept and never freed
 *   gpuchurn SIZE   a thread allocates SIZE through cuMemAlloc_v2 and frees it again,
 *                every millisecond until the process ends: a driver never quiet
 *   husk         the main thread ends and a second one waits until killed: the process
 *                is alive and listed in its cgroup, but /proc/PID/status has no memory
 *                lines (as for a process in its exit); the rest is not run
 * Without an exit step it exits 0 at the end. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static size_t parse_size_arg(const char *s)
{
	char *end;
	double v = strtod(s, &end);
	switch (*end) {
	case 'K': case 'k': v *= 1024; break;
	case 'M': case 'm': v *= 1024 * 1024; break;
	case 'G': case 'g': v *= 1024.0 * 1024 * 1024; break;
	default: break;
	}
	return (size_t)v;
}

static void sleep_ms(double ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)((ms - (double)(long)(ms / 1000) * 1000) * 1e6) };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static double parse_ms(const char *s)
{
	char *end;
	double v = strtod(s, &end);
	return strcmp(end, "ms") == 0 ? v : v * 1000;
}

static void *wait_forever(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static double mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Maps n and touches it at rate bytes a second: at each 10 ms tick, the pages due by
 * then (from the start, so late ticks catch up and the rate holds on average). */
static void *map_grow(size_t n, double rate)
{
	char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("memhog: mmap");
		exit(100);
	}
	double start = mono_s();
	size_t done = 0;
	while (done < n) {
		double due = (mono_s() - start) * rate;
		size_t upto = due >= (double)n ? n : (size_t)due;
		for (; done < upto; done += 4096)
			p[done] = 1;
		if (done < n)
			sleep_ms(10);
	}
	return p;
}

static void *map_touch(size_t n, int huge)
{
	char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("memhog: mmap");
		exit(100);
	}
	if (huge)
		(void)madvise(p, n, MADV_HUGEPAGE);
	for (size_t i = 0; i < n; i += 4096)
		p[i] = 1;
	return p;
}

/* The CUDA driver's entry points (the "cuda" step), by their real signatures. */
typedef int (*cu_pitch_fn)(uint64_t *out, size_t *pitch, size_t width, size_t height,
			   unsigned element_size);
static const char *const gpu_how[] = { "alloc", "managed", "async", "pool", "pitch", "create" };
static const char *const gpu_alloc_name[] = {
	"cuMemAlloc_v2", "cuMemAllocManaged", "cuMemAllocAsync", "cuMemAllocFromPoolAsync",
	"cuMemAllocPitch_v2", "cuMemCreate",
};
static const char *const gpu_free_name[] = {
	"cuMemFree_v2", "cuMemFree_v2", "cuMemFreeAsync", "cuMemFreeAsync", "cuMemFree_v2",
	"cuMemRelease",
};
static void *cuda;

static void *cuda_sym(const char *name)
{
	void *f = cuda ? dlsym(cuda, name) : NULL;
	if (!f) {
		fprintf(stderr, "memhog: %s: %s\n", name, cuda ? dlerror() : "no cuda step");
		exit(100);
	}
	return f;
}

static void cuda_open(const char *path)
{
	cuda = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!cuda) {
		fprintf(stderr, "memhog: %s\n", dlerror());
		exit(100);
	}
	int (*init)(unsigned) = (int (*)(unsigned))cuda_sym("cuInit");
	if (init(0) != 0) {
		fprintf(stderr, "memhog: cuInit failed\n");
		exit(100);
	}
}

/* Allocates n through entry point how; returns 0 with *addr, or the driver's error. */
static int gpu_alloc(int how, size_t n, uint64_t *addr)
{
	void *f = cuda_sym(gpu_alloc_name[how]);
	int r;
	if (how == 4) {		/* pitch: rows of 1 MiB */
		size_t pitch;
		r = ((cu_pitch_fn)f)(addr, &pitch, 1 << 20, n >> 20, 4);
	} else if (how == 5) {	/* create: (handle, size, prop, flags) */
		static const char prop[64];
		r = ((int (*)(uint64_t *, size_t, const void *, unsigned long long))f)(addr, n, prop, 0);
	} else {		/* (dptr, size[, flags | stream | pool, stream]) */
		r = ((int (*)(uint64_t *, size_t, void *, void *))f)(addr, n, NULL, NULL);
	}
	if (r != 0)
		fprintf(stderr, "memhog: %s: error %d\n", gpu_alloc_name[how], r);
	return r;
}

static void gpu_free(int how, uint64_t addr)
{
	void *f = cuda_sym(gpu_free_name[how]);
	int r = ((int (*)(uint64_t, void *))f)(addr, NULL);
	if (r != 0)
		fprintf(stderr, "memhog: %s: error %d\n", gpu_free_name[how], r);
}

static void *churn(void *arg)
{
	size_t n = *(size_t *)arg;
	for (;;) {
		uint64_t addr;
		if (gpu_alloc(0, n, &addr) == 0)
			gpu_free(0, addr);
		sleep_ms(1);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	void *blocks[256];
	size_t sizes[256];
	int nb = 0;
	uint64_t gpu_blocks[256];
	int gpu_kinds[256], ng = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *arg = i + 1 < argc ? argv[i + 1] : "";
		if (a[0] == '+' && nb < 256) {
			sizes[nb] = parse_size_arg(a + 1);
			blocks[nb] = map_touch(sizes[nb], 0);
			nb++;
		} else if (strcmp(a, "huge") == 0 && nb < 256) {
			sizes[nb] = parse_size_arg(arg);
			blocks[nb] = map_touch(sizes[nb], 1);
			nb++;
			i++;
		} else if (strcmp(a, "-") == 0 && nb > 0) {
			nb--;
			munmap(blocks[nb], sizes[nb]);
		} else if (strcmp(a, "spike") == 0) {
			size_t n = parse_size_arg(arg);
			munmap(map_touch(n, 0), n);
			i++;
		} else if (strcmp(a, "grow") == 0 && nb < 256 && i + 2 < argc) {
			sizes[nb] = parse_size_arg(arg);
			blocks[nb] = map_grow(sizes[nb], (double)parse_size_arg(argv[i + 2]));
			nb++;
			i += 2;
		} else if (strcmp(a, "sleep") == 0) {
			sleep_ms(parse_ms(arg));
			i++;
		} else if (strcmp(a, "touch") == 0) {
			int fd = open(arg, O_WRONLY | O_CREAT, 0644);
			if (fd >= 0)
				close(fd);
			i++;
		} else if (strcmp(a, "stamp") == 0) {
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			FILE *f = fopen(arg, "a");
			if (f) {
				fprintf(f, "%lld\n", (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
				fclose(f);
			}
			i++;
		} else if (strcmp(a, "await") == 0) {
			struct stat sb;
			while (stat(arg, &sb) < 0)
				sleep_ms(5);
			i++;
		} else if (strcmp(a, "exit") == 0) {
			exit((int)strtol(arg, NULL, 10));
		} else if (strcmp(a, "raise") == 0) {
			raise((int)strtol(arg, NULL, 10));
			i++;
		} else if (strcmp(a, "husk") == 0) {
			pthread_t t;
			if (pthread_create(&t, NULL, wait_forever, NULL) != 0)
				return 98;
			pthread_exit(NULL);
		} else if (strcmp(a, "fork") == 0) {
			if (fork() < 0)
				perror("memhog: fork");
		} else if (strcmp(a, "cuda") == 0) {
			cuda_open(arg);
			i++;
		} else if (strcmp(a, "gpu") == 0 && i + 2 < argc && ng < 256) {
			int how = -1;
			for (int k = 0; k < 6; k++)
				if (strcmp(arg, gpu_how[k]) == 0)
					how = k;
			if (how < 0) {
				fprintf(stderr, "memhog: unknown gpu allocation '%s'\n", arg);
				return 99;
			}
			if (gpu_alloc(how, parse_size_arg(argv[i + 2]), &gpu_blocks[ng]) == 0)
				gpu_kinds[ng++] = how;
			i += 2;
		} else if (strcmp(a, "gpumany") == 0 && i + 2 < argc) {
			long many = strtol(arg, NULL, 10);
			uint64_t addr;
			for (long k = 0; k < many; k++)
				if (gpu_alloc(0, parse_size_arg(argv[i + 2]), &addr) != 0)
					break;
			i += 2;
		} else if (strcmp(a, "gpuchurn") == 0 && i + 1 < argc) {
			static size_t churn_size;
			pthread_t t;
			churn_size = parse_size_arg(arg);
			if (pthread_create(&t, NULL, churn, &churn_size) != 0)
				return 99;
			i++;
		} else if (strcmp(a, "gpu-") == 0 && ng > 0) {
			ng--;
			gpu_free(gpu_kinds[ng], gpu_blocks[ng]);
		} else {
			fprintf(stderr, "memhog: unknown step '%s'\n", a);
			return 99;
		}
	}
	return 0;
}
