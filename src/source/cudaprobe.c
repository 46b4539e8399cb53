/* The CUDA driver's entry points and their attach (source/cudaprobe.h). */
#include "source/cudaprobe.h"

#ifdef HAVE_BPF

#include <bpf/libbpf.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "source/elfsym.h"

/* The _ptsz ones are the per-thread default stream's. The legacy cuMemAlloc and
 * cuMemFree (32-bit pointers) are not used by any runtime of CUDA 3.2 or later. */
static const struct {
	const char *name;
	enum cuda_call call;
} entries[CUDA_ENTRY_POINTS] = {
	{ "cuMemAlloc_v2", CUDA_ALLOC }, { "cuMemAllocManaged", CUDA_ALLOC },
	{ "cuMemAllocAsync", CUDA_ALLOC }, { "cuMemAllocAsync_ptsz", CUDA_ALLOC },
	{ "cuMemAllocFromPoolAsync", CUDA_ALLOC },
	{ "cuMemAllocFromPoolAsync_ptsz", CUDA_ALLOC },
	{ "cuMemAllocPitch_v2", CUDA_PITCH }, { "cuMemCreate", CUDA_CREATE },
	{ "cuMemFree_v2", CUDA_FREE }, { "cuMemFreeAsync", CUDA_FREE },
	{ "cuMemFreeAsync_ptsz", CUDA_FREE }, { "cuMemRelease", CUDA_RELEASE },
};

/* The attach of one file (st its stat), its links added to links[*n..]. */
static int attach_file(int fd, const struct stat *sp, struct bpf_program *const in[CUDA_CALLS],
		       struct bpf_program *const out[CUDA_CALLS], struct bpf_link **links,
		       size_t *n, char *why, size_t whylen)
{
	/* a copy mapped private: a change to the file after this is not read half-way */
	void *elf = mmap(NULL, (size_t)sp->st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (elf == MAP_FAILED) {
		snprintf(why, whylen, "cannot map it: %s", strerror(errno));
		return -errno;
	}
	char path[32];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	size_t first = *n;
	int attached = 0, e = 0;
	for (size_t i = 0; i < CUDA_ENTRY_POINTS; i++) {
		uint64_t off;
		enum cuda_call c = entries[i].call;
		int r = elf_func_offset(elf, (size_t)sp->st_size, entries[i].name, &off);
		if (r == -ENOENT)
			continue;	/* this driver lacks it */
		if (r < 0) {
			snprintf(why, whylen, "%s is not a function in its code", entries[i].name);
			e = -EINVAL;
			break;		/* a file that lies about one lies about all */
		}
		LIBBPF_OPTS(bpf_uprobe_opts, at_in);
		LIBBPF_OPTS(bpf_uprobe_opts, at_out, .retprobe = true);
		struct bpf_link *a = bpf_program__attach_uprobe_opts(in[c], -1, path, (size_t)off,
								     &at_in);
		struct bpf_link *b = !a || !out[c] ? NULL :
			bpf_program__attach_uprobe_opts(out[c], -1, path, (size_t)off, &at_out);
		if (!a || (out[c] && !b)) {
			e = -errno;
			snprintf(why, whylen, "cannot attach uprobes: %s", strerror(errno));
			bpf_link__destroy(a);
			continue;
		}
		links[(*n)++] = a;
		if (b)
			links[(*n)++] = b;
		attached++;
	}
	munmap(elf, (size_t)sp->st_size);
	if (e == -EINVAL) {	/* none of it stays */
		while (*n > first)
			bpf_link__destroy(links[--*n]);
		return e;
	}
	if (!attached) {
		if (!e)
			snprintf(why, whylen, "it exports none of the CUDA driver's allocation functions");
		return e ? e : -ENOENT;
	}
	return attached;
}

int cuda_files_attach(struct cuda_files *cf, int fd, struct bpf_program *const in[CUDA_CALLS],
		      struct bpf_program *const out[CUDA_CALLS], char *why, size_t whylen)
{
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
		snprintf(why, whylen, "not a regular file");
		return -EINVAL;
	}
	for (int i = 0; i < cf->n; i++)
		if (cf->file[i].dev == st.st_dev && cf->file[i].ino == st.st_ino)
			return 0;
	if (cf->n == CUDA_FILES) {
		snprintf(why, whylen, "attached to %d driver files already", CUDA_FILES);
		return -ENOSPC;
	}
	int attached = attach_file(fd, &st, in, out, cf->links, &cf->nlinks, why, whylen);
	if (attached <= 0)
		return attached;
	cf->file[cf->n].dev = st.st_dev;
	cf->file[cf->n].ino = st.st_ino;
	cf->n++;
	return attached;
}

void cuda_files_close(struct cuda_files *cf)
{
	while (cf->nlinks > 0)
		bpf_link__destroy(cf->links[--cf->nlinks]);
	cf->n = 0;
}

#endif
