/* A stand-in for the CUDA driver, libcuda.so.1, for the GPU probes' tests: it exports
 * the allocation and free entry points the probes attach to, with the real ones'
 * signatures, and hands out addresses without any device behind them.
 *
 * Environment, read by cuInit:
 *   FAKE_CUDA_LIVE   a file the library keeps the process's live bytes in (8 bytes,
 *                    native order, written atomically at every allocation and free), for
 *                    the stand-in NVML's "cuda FILE" (tests/fake/fake_nvml.c), so that
 *                    the driver's own figure moves with the calls as a real one does
 *   FAKE_CUDA_TOTAL  the device's size (K, M, G suffixes; default 80G): an allocation
 *                    that would pass it fails with CUDA_ERROR_OUT_OF_MEMORY
 *
 * Blocks of cuMemAlloc_v2, cuMemAllocManaged, cuMemAllocAsync, cuMemAllocFromPoolAsync
 * and cuMemAllocPitch_v2 are device pointers, freed by cuMemFree_v2 or cuMemFreeAsync;
 * cuMemCreate's are handles, freed by cuMemRelease. Addresses are never reused. */
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
typedef unsigned long long CUmemGenericAllocationHandle;
typedef void *CUstream;
typedef void *CUmemoryPool;

enum { CUDA_SUCCESS = 0, CUDA_ERROR_INVALID_VALUE = 1, CUDA_ERROR_OUT_OF_MEMORY = 2,
       CUDA_ERROR_NOT_INITIALIZED = 3 };

/* The real library's names and signatures. */
CUresult cuInit(unsigned int flags);
CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t size);
CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t size, unsigned int flags);
CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t size, CUstream stream);
CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t size, CUmemoryPool pool,
				 CUstream stream);
CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pitch, size_t width, size_t height,
			    unsigned int element_size);
CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size, const void *prop,
		     unsigned long long flags);
CUresult cuMemFree_v2(CUdeviceptr dptr);
CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream stream);
CUresult cuMemRelease(CUmemGenericAllocationHandle handle);

#define MAX_BLOCKS 100000

struct block {
	uint64_t addr, size;
	int handle;		/* a cuMemCreate handle, not a pointer */
};

static struct block blocks[MAX_BLOCKS];	/* 2.4 MB */
static int nblocks;
static uint64_t next_addr = 0x7f3200000000ull, live, total = 80ull << 30;
static uint64_t *live_file;	/* FAKE_CUDA_LIVE, mapped */
static int initialised;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;	/* a driver is thread-safe */

static uint64_t parse_size(const char *s)
{
	char *end;
	uint64_t v = strtoull(s, &end, 10);
	switch (*end) {
	case 'K': return v << 10;
	case 'M': return v << 20;
	case 'G': return v << 30;
	default: return v;
	}
}

static void publish(void)
{
	if (live_file)
		__atomic_store_n(live_file, live, __ATOMIC_SEQ_CST);
}

CUresult cuInit(unsigned int flags)
{
	(void)flags;
	const char *t = getenv("FAKE_CUDA_TOTAL"), *path = getenv("FAKE_CUDA_LIVE");
	if (t && *t)
		total = parse_size(t);
	if (path && *path && !live_file) {
		int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
		if (fd >= 0 && ftruncate(fd, sizeof(uint64_t)) == 0) {
			void *p = mmap(NULL, sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED,
				       fd, 0);
			live_file = p == MAP_FAILED ? NULL : p;
		}
		if (fd >= 0)
			close(fd);
	}
	initialised = 1;
	publish();
	return CUDA_SUCCESS;
}

static CUresult give(unsigned long long *out, size_t size, int handle)
{
	if (!initialised)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!out || !size)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lock);
	if (size > total - live || nblocks == MAX_BLOCKS) {
		pthread_mutex_unlock(&lock);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	struct block *b = &blocks[nblocks++];
	b->addr = next_addr;
	b->size = size;
	b->handle = handle;
	next_addr += (size + 0xfffff) & ~0xfffffull;	/* 1 MiB apart, as a driver aligns */
	live += size;
	publish();
	*out = b->addr;
	pthread_mutex_unlock(&lock);
	return CUDA_SUCCESS;
}

static CUresult take_back(uint64_t addr, int handle)
{
	if (!initialised)
		return CUDA_ERROR_NOT_INITIALIZED;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < nblocks; i++)
		if (blocks[i].addr == addr && blocks[i].handle == handle) {
			live -= blocks[i].size;
			blocks[i] = blocks[--nblocks];
			publish();
			pthread_mutex_unlock(&lock);
			return CUDA_SUCCESS;
		}
	pthread_mutex_unlock(&lock);
	return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t size)
{
	return give(dptr, size, 0);
}

CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t size, unsigned int flags)
{
	(void)flags;
	return give(dptr, size, 0);
}

CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t size, CUstream stream)
{
	(void)stream;
	return give(dptr, size, 0);
}

CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t size, CUmemoryPool pool,
				 CUstream stream)
{
	(void)pool;
	(void)stream;
	return give(dptr, size, 0);
}

CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pitch, size_t width, size_t height,
			    unsigned int element_size)
{
	if (!pitch || !width || !height || element_size == 0 || element_size > 16)
		return CUDA_ERROR_INVALID_VALUE;
	size_t p = (width + 511) & ~(size_t)511;	/* rows 512-byte aligned */
	CUresult r = give(dptr, p * height, 0);
	if (r == CUDA_SUCCESS)
		*pitch = p;
	return r;
}

CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size, const void *prop,
		     unsigned long long flags)
{
	(void)prop;
	(void)flags;
	return give(handle, size, 1);
}

CUresult cuMemFree_v2(CUdeviceptr dptr)
{
	return take_back(dptr, 0);
}

CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream stream)
{
	(void)stream;
	return take_back(dptr, 0);
}

CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
	return take_back(handle, 1);
}
