// The cost of the GPU probes to a process that calls the driver: N pairs of
// cudaMalloc and cudaFree of SIZE bytes, timed; prints the median ns per pair of 5
// rounds. Build: nvcc -O2 -o allocloop allocloop.cu
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20000;
	size_t size = argc > 2 ? strtoull(argv[2], NULL, 10) : 1 << 20;
	double r[5];
	cudaFree(0);
	for (int k = 0; k < 5; k++) {
		double t0 = now();
		for (int i = 0; i < n; i++) {
			void *p;
			if (cudaMalloc(&p, size) != cudaSuccess || cudaFree(p) != cudaSuccess)
				return 1;
		}
		r[k] = (now() - t0) / n;
	}
	qsort(r, 5, sizeof(r[0]), cmp);
	printf("allocloop: %d pairs of %zu bytes: median %.0f ns a pair (%.0f..%.0f)\n", n, size,
	       r[2], r[0], r[4]);
	return 0;
}
