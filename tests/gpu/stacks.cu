// Device memory of known size from functions of known names, for record --stacks with
// the GPU probes on a real driver:
//   stacks HOLD_MS
// alloc_weights: 2048 MiB with cudaMalloc; alloc_batch: 4 blocks of 256 MiB with
// cudaMalloc; alloc_workspace: 512 MiB with cudaMallocAsync on a stream. Each block is
// written (cudaMemset), held HOLD_MS, then the batches and the workspace are freed and
// the weights held HOLD_MS more. The GPU's peak is then 3584 MiB of the driver's blocks:
// 2048 of alloc_weights, 1024 of alloc_batch in 4 blocks, 512 of alloc_workspace.
// Build: nvcc -O2 -cudart shared -o stacks stacks.cu (the runtime as a library: its
// frames are then a module's, which the recorder skips to name the caller).
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define MiB (1024ull * 1024)

/* Each function writes its blocks with a byte of its own: bodies that differ, so that
 * the compiler cannot fold two of them into one (gcc's -fipa-icf at -O2 did, and
 * alloc_batch's blocks were then alloc_weights'). */
static void *check(cudaError_t e, void *p, size_t n, int byte, const char *what)
{
	if (e != cudaSuccess) {
		fprintf(stderr, "stacks: %s: %s\n", what, cudaGetErrorString(e));
		exit(1);
	}
	cudaMemset(p, byte, n);
	return p;
}

__attribute__((noinline)) static void *alloc_weights(size_t n)
{
	void *p = NULL;
	return check(cudaMalloc(&p, n), p, n, 1, "cudaMalloc");
}

__attribute__((noinline)) static void *alloc_batch(size_t n)
{
	void *p = NULL;
	return check(cudaMalloc(&p, n), p, n, 2, "cudaMalloc");
}

__attribute__((noinline)) static void *alloc_workspace(size_t n, cudaStream_t s)
{
	void *p = NULL;
	return check(cudaMallocAsync(&p, n, s), p, n, 3, "cudaMallocAsync");
}

int main(int argc, char **argv)
{
	unsigned hold = argc > 1 ? (unsigned)atoi(argv[1]) : 300;
	cudaStream_t s;
	cudaFree(0);	/* the context first */
	cudaStreamCreate(&s);
	void *w = alloc_weights(2048 * MiB);
	void *b[4];
	for (int i = 0; i < 4; i++)
		b[i] = alloc_batch(256 * MiB);
	void *ws = alloc_workspace(512 * MiB, s);
	cudaDeviceSynchronize();
	usleep(hold * 1000);
	for (int i = 0; i < 4; i++)
		cudaFree(b[i]);
	cudaFreeAsync(ws, s);
	cudaStreamSynchronize(s);
	cudaDeviceSynchronize();
	usleep(hold * 1000);
	cudaFree(w);
	printf("stacks: done\n");
	return 0;
}
