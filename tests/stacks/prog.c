/* The program t85-stacks records with --stacks: its allocations are known, each made in
 * a function of its own name, so the live bytes by stack can be held against them.
 * Built by the test with -O2 -fomit-frame-pointer (no frame pointers to walk). Steps,
 * in order, from the command line:
 *   table N          alloc_table: N MiB, touched, kept
 *   buffers K N      alloc_buffers: K blocks of N MiB, touched, kept
 *   small N          alloc_small: N MiB in pieces of 64 bytes (malloc's arena), each
 *                    touched, kept
 *   free-buffers     frees them
 *   zeroed N         alloc_zeroed: calloc(N, 1 MiB), kept
 *   grown N          alloc_grown: 1 MiB malloc'ed, then realloc'ed to N MiB, kept
 *   aligned N        alloc_aligned: N MiB from posix_memalign and N from aligned_alloc
 *   pieces K B       alloc_pieces: K blocks of B bytes from malloc, kept
 *   free-pieces      frees them
 *   child N MS       a forked child's child_work: N MiB, touched, held MS ms before
 *                    it exits; the parent waits for it
 *   child-after F N MS  the same, the child waiting for the file F first
 *   dlopen LIB N     LIB's lib_alloc(N MiB), kept
 *   garbage N        an N MiB mmap made with the stack pointer on a page of garbage
 *   odd-libc PATH    maps the file PATH (a libc) executable at an odd address
 *   cuda LIB         loads LIB, a CUDA driver (the stand-in of tests/fake), and cuInit
 *   gpu-model N      gpu_model: N MiB of device memory from cuMemAlloc_v2, kept
 *   gpu-batches K N  gpu_batch: K blocks of N MiB from cuMemAllocAsync, kept
 *   gpu-free-batches frees them (cuMemFree_v2)
 *   gpu-pool N       gpu_pool: N MiB from cuMemCreate (a handle), kept
 *   touch FILE / await FILE / sleep MS / exec PROG ARGS...
 * Every block but the small ones is malloc'ed at 1 MiB or more, so that glibc maps
 * each with mmap. */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MiB (1024UL * 1024)

static char *buffers[64];
static int nbuffers;

static void keep(void *p)
{
	__asm__ volatile("" : : "r"(p) : "memory");
}

__attribute__((noinline)) static char *alloc_table(size_t n)
{
	char *p = malloc(n);
	if (p)
		memset(p, 1, n);
	return p;
}

__attribute__((noinline)) static char *alloc_buffers(size_t n)
{
	char *p = malloc(n);
	if (p)
		memset(p, 2, n);
	return p;
}

__attribute__((noinline)) static void alloc_small(size_t n)
{
	for (size_t i = 0; i < n / 64; i++) {
		char *p = malloc(48);	/* 64 bytes with the chunk's header */
		if (!p)
			return;
		memset(p, 5, 48);
		keep(p);
	}
}

__attribute__((noinline)) static char *alloc_zeroed(size_t n)
{
	char *p = calloc(n / MiB, MiB);
	if (p)
		memset(p, 6, n);
	return p;
}

__attribute__((noinline)) static char *alloc_grown(size_t n)
{
	char *p = malloc(MiB), *q;
	if (!p)
		return NULL;
	memset(p, 7, MiB);
	q = realloc(p, n);
	if (!q) {
		free(p);
		return NULL;
	}
	memset(q, 7, n);
	return q;
}

__attribute__((noinline)) static void alloc_aligned(size_t n)
{
	void *p = NULL, *q;
	if (posix_memalign(&p, 4096, n) == 0)
		memset(p, 8, n);
	q = aligned_alloc(4096, n);
	if (q)
		memset(q, 8, n);
	keep(p);
	keep(q);
}

#define PIECES 100000
static char *pieces[PIECES];
static int npieces;

__attribute__((noinline)) static void alloc_pieces(int k, size_t b)
{
	for (int i = 0; i < k && npieces < PIECES; i++) {
		char *p = malloc(b);
		if (!p)
			return;
		memset(p, 9, b);
		pieces[npieces++] = p;
	}
}

__attribute__((noinline)) static void child_work(size_t n, unsigned ms)
{
	char *p = malloc(n);
	if (p)
		memset(p, 3, n);
	usleep(ms * 1000);
	keep(p);
}

/* mmap with the stack pointer on a page of random bytes: the copy the recorder gets
 * is garbage from its first word. */
__attribute__((noinline)) static void garbage_mmap(size_t n)
{
	static uint64_t junk[1024];
	for (size_t i = 0; i < 1024; i++)
		junk[i] = ((uint64_t)rand() << 33) ^ ((uint64_t)rand() << 3) ^ (uint64_t)rand();
	long ret;
	register long r10 __asm__("r10") = MAP_PRIVATE | MAP_ANONYMOUS;
	register long r8 __asm__("r8") = -1;
	register long r9 __asm__("r9") = 0;
	__asm__ volatile("mov %%rsp, %%r12\n\t"
			 "mov %[sp], %%rsp\n\t"
			 "syscall\n\t"
			 "mov %%r12, %%rsp"
			 : "=a"(ret)
			 : "0"((long)SYS_mmap), "D"(0L), "S"((long)n), "d"((long)(PROT_READ | PROT_WRITE)),
			   "r"(r10), "r"(r8), "r"(r9), [sp] "r"(junk + 512)
			 : "rcx", "r11", "r12", "memory");
	if (ret > 0)
		memset((void *)ret, 4, n);
}

static void odd_libc(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	void *p = mmap((void *)0x7e0000123000UL, 64 * 1024, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	keep(p);
	close(fd);
}

/* The CUDA driver's calls, from the library the step "cuda" loaded. */
typedef int (*cu_alloc_fn)(unsigned long long *out, size_t size);
typedef int (*cu_alloc_async_fn)(unsigned long long *out, size_t size, void *stream);
typedef int (*cu_create_fn)(unsigned long long *out, size_t size, const void *prop,
			    unsigned long long flags);
typedef int (*cu_free_fn)(unsigned long long block);
static cu_alloc_fn cu_alloc;
static cu_alloc_async_fn cu_alloc_async;
static cu_create_fn cu_create;
static cu_free_fn cu_free;
static unsigned long long batches[64];
static int nbatches;

static int load_cuda(const char *lib)
{
	void *h = dlopen(lib, RTLD_NOW);
	int (*init)(unsigned) = h ? (int (*)(unsigned))dlsym(h, "cuInit") : NULL;
	if (!init || init(0) != 0) {
		fprintf(stderr, "prog: no CUDA driver in %s\n", lib);
		return -1;
	}
	cu_alloc = (cu_alloc_fn)dlsym(h, "cuMemAlloc_v2");
	cu_alloc_async = (cu_alloc_async_fn)dlsym(h, "cuMemAllocAsync");
	cu_create = (cu_create_fn)dlsym(h, "cuMemCreate");
	cu_free = (cu_free_fn)dlsym(h, "cuMemFree_v2");
	return cu_alloc && cu_alloc_async && cu_create && cu_free ? 0 : -1;
}

__attribute__((noinline)) static unsigned long long gpu_model(size_t n)
{
	unsigned long long p = 0;
	return cu_alloc(&p, n) == 0 ? p : 0;
}

__attribute__((noinline)) static unsigned long long gpu_batch(size_t n)
{
	unsigned long long p = 0;
	return cu_alloc_async(&p, n, NULL) == 0 ? p : 0;
}

__attribute__((noinline)) static unsigned long long gpu_pool(size_t n)
{
	unsigned long long h = 0;
	return cu_create(&h, n, NULL, 0) == 0 ? h : 0;
}

static size_t mib(const char *s)
{
	return (size_t)strtoul(s, NULL, 10) * MiB;
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *c = argv[i];
		if (!strcmp(c, "table") && i + 1 < argc) {
			keep(alloc_table(mib(argv[++i])));
		} else if (!strcmp(c, "buffers") && i + 2 < argc) {
			int k = (int)strtol(argv[++i], NULL, 10);
			size_t n = mib(argv[++i]);
			for (int j = 0; j < k && nbuffers < 64; j++)
				buffers[nbuffers++] = alloc_buffers(n);
		} else if (!strcmp(c, "small") && i + 1 < argc) {
			alloc_small(mib(argv[++i]));
		} else if (!strcmp(c, "free-buffers")) {
			while (nbuffers)
				free(buffers[--nbuffers]);
		} else if (!strcmp(c, "zeroed") && i + 1 < argc) {
			keep(alloc_zeroed(mib(argv[++i])));
		} else if (!strcmp(c, "grown") && i + 1 < argc) {
			keep(alloc_grown(mib(argv[++i])));
		} else if (!strcmp(c, "aligned") && i + 1 < argc) {
			alloc_aligned(mib(argv[++i]));
		} else if (!strcmp(c, "pieces") && i + 2 < argc) {
			int k = (int)strtol(argv[++i], NULL, 10);
			alloc_pieces(k, (size_t)strtoul(argv[++i], NULL, 10));
		} else if (!strcmp(c, "free-pieces")) {
			while (npieces)
				free(pieces[--npieces]);
		} else if ((!strcmp(c, "child") && i + 2 < argc) ||
			   (!strcmp(c, "child-after") && i + 3 < argc)) {
			const char *after = !strcmp(c, "child-after") ? argv[++i] : NULL;
			size_t n = mib(argv[++i]);
			unsigned ms = (unsigned)strtoul(argv[++i], NULL, 10);
			pid_t pid = fork();
			if (pid == 0) {
				while (after && access(after, F_OK) != 0)
					usleep(1000);
				child_work(n, ms);
				_exit(0);
			}
			if (pid > 0)
				waitpid(pid, NULL, 0);
		} else if (!strcmp(c, "dlopen") && i + 2 < argc) {
			void *h = dlopen(argv[++i], RTLD_NOW);
			char *(*f)(size_t) = h ? (char *(*)(size_t))dlsym(h, "lib_alloc") : NULL;
			size_t n = mib(argv[++i]);
			if (!f) {
				fprintf(stderr, "prog: %s\n", dlerror());
				return 1;
			}
			keep(f(n));
		} else if (!strcmp(c, "garbage") && i + 1 < argc) {
			garbage_mmap(mib(argv[++i]));
		} else if (!strcmp(c, "odd-libc") && i + 1 < argc) {
			odd_libc(argv[++i]);
		} else if (!strcmp(c, "cuda") && i + 1 < argc) {
			if (load_cuda(argv[++i]) < 0)
				return 1;
		} else if (!strcmp(c, "gpu-model") && i + 1 < argc && cu_alloc) {
			keep((void *)(uintptr_t)gpu_model(mib(argv[++i])));
		} else if (!strcmp(c, "gpu-batches") && i + 2 < argc && cu_alloc) {
			int k = (int)strtol(argv[++i], NULL, 10);
			size_t n = mib(argv[++i]);
			for (int j = 0; j < k && nbatches < 64; j++)
				batches[nbatches++] = gpu_batch(n);
		} else if (!strcmp(c, "gpu-free-batches") && cu_alloc) {
			while (nbatches)
				cu_free(batches[--nbatches]);
		} else if (!strcmp(c, "gpu-pool") && i + 1 < argc && cu_alloc) {
			keep((void *)(uintptr_t)gpu_pool(mib(argv[++i])));
		} else if (!strcmp(c, "touch") && i + 1 < argc) {
			int fd = open(argv[++i], O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
			if (fd >= 0)
				close(fd);
		} else if (!strcmp(c, "await") && i + 1 < argc) {
			const char *f = argv[++i];
			while (access(f, F_OK) != 0)
				usleep(1000);
		} else if (!strcmp(c, "sleep") && i + 1 < argc) {
			usleep((useconds_t)strtoul(argv[++i], NULL, 10) * 1000);
		} else if (!strcmp(c, "exec") && i + 1 < argc) {
			execv(argv[i + 1], argv + i + 1);
			perror("prog: exec");
			return 1;
		} else {
			fprintf(stderr, "prog: bad step %s\n", c);
			return 2;
		}
	}
	return 0;
}
