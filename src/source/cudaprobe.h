/* The CUDA driver's allocation and free entry points, probed by the peak engine (their
 * bytes) and by the stacks program (who asked for them): one table of names, and the
 * attach of a program to each, shared by both loaders. */
#ifndef RSSWATCH_SOURCE_CUDAPROBE_H
#define RSSWATCH_SOURCE_CUDAPROBE_H

#include <stddef.h>
#include <sys/types.h>

struct bpf_program;
struct bpf_link;

/* The arguments an entry point takes, which picks the program that reads them:
 * cuMemAlloc_v2 and kin (CUdeviceptr *, size_t), cuMemAllocPitch_v2, cuMemCreate
 * (a handle), cuMemFree_v2 and kin (CUdeviceptr), cuMemRelease (a handle). */
enum cuda_call { CUDA_ALLOC, CUDA_PITCH, CUDA_CREATE, CUDA_FREE, CUDA_RELEASE, CUDA_CALLS };

/* How many entry points there are, and so the most links one file takes (an entry and
 * a return each); the most driver files probed. */
#define CUDA_ENTRY_POINTS 12
#define CUDA_FILE_LINKS (2 * CUDA_ENTRY_POINTS)
#define CUDA_FILES 8

/* The driver files a loader's programs are attached to, and their links. Zeroed:
 * none. */
struct cuda_files {
	struct bpf_link *links[CUDA_FILES * CUDA_FILE_LINKS];
	size_t nlinks;
	struct { dev_t dev; ino_t ino; } file[CUDA_FILES];
	int n;
};

/* Attaches in[c] at the entry of each entry point of call c that the ELF file open at
 * fd exports, and out[c] at its return where out[c] is not NULL, for every process that
 * maps the file (the kernel takes the file's inode, whatever a path names). Checks each
 * offset (source/elfsym.h): the file is untrusted. Returns the number of entry points
 * attached, 0 when the file is one of cf's already, or -errno with a phrase in why:
 * -ENOENT when it exports none, -EINVAL when one of them is not a function in its code
 * (then none stays attached), -ENOSPC past CUDA_FILES files. */
int cuda_files_attach(struct cuda_files *cf, int fd, struct bpf_program *const in[CUDA_CALLS],
		      struct bpf_program *const out[CUDA_CALLS], char *why, size_t whylen);
/* Detaches every program cf attached. */
void cuda_files_close(struct cuda_files *cf);

#endif
