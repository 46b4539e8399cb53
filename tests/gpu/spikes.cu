// GPU spikes of known length between two samples, for the GPU probes on a real driver:
//   spikes STAMPS KIND:GIB:HOLD_MS ...
// KIND is malloc (cudaMalloc), async (cudaMallocAsync on a stream), managed
// (cudaMallocManaged, then touched on the device) or vmm (cuMemCreate and
// cuMemRelease, the virtual memory management API). Each spike starts 0.4 s after a
// whole second of this process's life (a recorder at -i 1s samples at whole seconds
// from about its start), is written (cudaMemset), held HOLD_MS and freed; the
// CLOCK_REALTIME ns just before the allocation and just after the free are appended to
// STAMPS as "KIND GIB HOLD_MS T0 T1". Build: nvcc -O2 -o spikes spikes.cu -lcuda
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double mono(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static long long real_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void sleep_s(double s)
{
	struct timespec t = { (time_t)s, (long)((s - (time_t)s) * 1e9) };
	nanosleep(&t, NULL);
}

#define CK(x) do { int e_ = (int)(x); if (e_) { fprintf(stderr, "%s: %d\n", #x, e_); exit(1); } } while (0)

int main(int argc, char **argv)
{
	double start = mono();
	FILE *out = fopen(argv[1], "a");
	CK(cudaFree(0));	// the context
	cudaStream_t st;
	CK(cudaStreamCreate(&st));
	for (int i = 2; i < argc; i++) {
		char kind[16];
		double gib, hold;
		if (sscanf(argv[i], "%15[a-z]:%lf:%lf", kind, &gib, &hold) != 3)
			return 2;
		size_t n = (size_t)(gib * (1 << 30));
		double t = mono() - start, at = (long)t + 0.4;
		while (at < t + 0.2)
			at += 1;
		sleep_s(at - t);
		long long t0 = real_ns();
		void *p = NULL;
		CUmemGenericAllocationHandle h = 0;
		if (!strcmp(kind, "malloc")) {
			CK(cudaMalloc(&p, n));
			CK(cudaMemset(p, 1, n));
		} else if (!strcmp(kind, "async")) {
			CK(cudaMallocAsync(&p, n, st));
			CK(cudaMemsetAsync(p, 1, n, st));
		} else if (!strcmp(kind, "managed")) {
			CK(cudaMallocManaged(&p, n));
			CK(cudaMemset(p, 1, n));
		} else if (!strcmp(kind, "vmm")) {
			CUmemAllocationProp prop;
			memset(&prop, 0, sizeof(prop));
			prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
			prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
			prop.location.id = 0;
			size_t g = 0;
			CK(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
			n = (n + g - 1) / g * g;
			CK(cuMemCreate(&h, n, &prop, 0));
		} else {
			return 2;
		}
		CK(cudaDeviceSynchronize());
		sleep_s(hold / 1000);
		if (!strcmp(kind, "async")) {
			CK(cudaFreeAsync(p, st));
			CK(cudaStreamSynchronize(st));
			CK(cudaDeviceGraphMemTrim(0));
			cudaMemPool_t pool;
			CK(cudaDeviceGetDefaultMemPool(&pool, 0));
			CK(cudaMemPoolTrimTo(pool, 0));
		} else if (!strcmp(kind, "vmm")) {
			CK(cuMemRelease(h));
		} else {
			CK(cudaFree(p));
		}
		CK(cudaDeviceSynchronize());
		long long t1 = real_ns();
		fprintf(out, "%s %g %g %lld %lld\n", kind, gib, hold, t0, t1);
		fflush(out);
	}
	sleep_s(1.5);
	return 0;
}
