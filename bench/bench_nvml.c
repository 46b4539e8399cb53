/* Per-call cost of the NVML queries rsswatch makes: device memory (nvml_read_devices)
 * and per-process memory (nvml_read_usage), as the median, 10th and 90th percentile of
 * N timed calls after a warm-up.
 *
 *   bench_nvml [-n CALLS] [PID...]
 *
 * Uses the real libnvidia-ml.so.1 unless RSSWATCH_NVML_LIB names another (the fake in
 * BUILD/fake/, with FAKE_NVML_SCRIPT, measures rsswatch's own overhead). Figures are
 * per call over all devices, and also divided by the device count. */
#include "base/clock.h"
#include "base/parse.h"
#include "source/nvml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static void report(const char *what, int64_t *ns, size_t n, int ndev)
{
	qsort(ns, n, sizeof(*ns), cmp_i64);
	double med = (double)ns[n / 2] / 1e3;
	printf("%-28s median %8.2f us  p10 %8.2f us  p90 %8.2f us  per device %8.2f us\n",
	       what, med, (double)ns[n / 10] / 1e3, (double)ns[n * 9 / 10] / 1e3,
	       ndev > 0 ? med / ndev : med);
}

int main(int argc, char **argv)
{
	uint64_t calls = 2000;
	int a = 1;
	if (a + 1 < argc && strcmp(argv[a], "-n") == 0) {
		if (parse_u64(argv[a + 1], &calls) < 0 || calls < 10 || calls > 10000000) {
			fprintf(stderr, "bench_nvml: bad -n %s\n", argv[a + 1]);
			return 2;
		}
		a += 2;
	}
	size_t npids = (size_t)(argc - a);
	pid_t *pids = calloc(npids ? npids : 1, sizeof(*pids));
	if (!pids)
		return 1;
	for (size_t i = 0; i < npids; i++) {
		if (parse_pid(argv[a + (int)i], &pids[i]) < 0) {
			fprintf(stderr, "bench_nvml: bad pid %s\n", argv[a + (int)i]);
			return 2;
		}
	}
	if (npids == 0) {
		pids[0] = getpid();
		npids = 1;
	}

	struct nvml *n;
	char why[512];
	int64_t t = mono_ns();
	int r = nvml_open(&n, why, sizeof(why));
	int64_t open_ns = mono_ns() - t;
	if (r < 0) {
		fprintf(stderr, "bench_nvml: %s\n", why);
		return 1;
	}
	int ndev = nvml_device_count(n);
	printf("devices: %d, process query: %s, calls: %llu, nvml_open: %.1f ms\n", ndev,
	       nvml_has_process_query(n) ? "yes" : "no", (unsigned long long)calls,
	       (double)open_ns / 1e6);

	int64_t *ns = calloc(calls, sizeof(*ns));
	struct gpu_device g[NVML_MAX_DEVICES];
	struct gpu_usage u;
	if (!ns)
		return 1;
	for (int i = 0; i < 20; i++)
		nvml_read_devices(n, g, NVML_MAX_DEVICES);
	for (uint64_t i = 0; i < calls; i++) {
		t = mono_ns();
		nvml_read_devices(n, g, NVML_MAX_DEVICES);
		ns[i] = mono_ns() - t;
	}
	report("device memory (all GPUs)", ns, calls, ndev);

	for (int i = 0; i < 20; i++)
		nvml_read_usage(n, pids, npids, &u);
	for (uint64_t i = 0; i < calls; i++) {
		t = mono_ns();
		nvml_read_usage(n, pids, npids, &u);
		ns[i] = mono_ns() - t;
	}
	report("process usage (all GPUs)", ns, calls, ndev);
	printf("usage of %zu pid(s): %llu bytes, known=%d\n", npids, u.bytes, u.known);
	for (int i = 0; i < ndev; i++)
		printf("  gpu %d %s: used %llu of %llu bytes%s\n", i, g[i].name, g[i].used,
		       g[i].total, g[i].present ? "" : " (lost)");
	free(ns);
	free(pids);
	nvml_close(n);
	return 0;
}
