/* The stacks program's loader: the skeleton of src/bpf/kstacks.bpf.c (Makefile:
 * HAVE_BPF), loaded with libbpf beside the peak engine, whose table of processes it
 * takes as its own. */
#include "source/kstacks.h"
#include "source/kpeak.h"
#include "base/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef HAVE_BPF

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/types.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include "bpf/kpeak.h"
#include "bpf/kstacks.h"
#include "bpf/kstacks.skel.h"
#include "source/cudaprobe.h"
#include "source/elfsym.h"
#include "source/unwind.h"

_Static_assert(KSTACKS_NREGS == KS_NREGS, "the registers are the program's");
_Static_assert(KSTACKS_MAP == KS_MAP && KSTACKS_BRK == KS_BRK && KSTACKS_UNMAP == KS_UNMAP &&
	       KSTACKS_REMAP == KS_REMAP && KSTACKS_CODE == KS_CODE && KSTACKS_EXEC == KS_EXEC &&
	       KSTACKS_EXIT == KS_EXIT && KSTACKS_FORK == KS_FORK && KSTACKS_FAULT == KS_FAULT &&
	       KSTACKS_ALLOC == KS_ALLOC && KSTACKS_FREE == KS_FREE &&
	       KSTACKS_GPU_ALLOC == KS_GPU_ALLOC && KSTACKS_GPU_FREE == KS_GPU_FREE,
	       "the kinds are the program's");
_Static_assert(KSTACKS_MMAP == KS_MODE_MMAP && KSTACKS_FAULTS == KS_MODE_FAULTS &&
	       KSTACKS_MALLOC == KS_MODE_MALLOC, "the modes are the program's");

/* The allocator's entry points the malloc mode probes, each with the program that takes
 * its arguments; all but free with the return's program too. */
#define ALLOC_FUNCS 8

/* One file of one process with the allocator's probes (or found without them: a file
 * that does not export malloc and free is remembered, so as not to be read again). */
struct probed {
	pid_t pid;
	dev_t dev;
	ino_t ino;
	int nlinks;
	struct bpf_link *links[2 * ALLOC_FUNCS];
};

/* At most this many (process, file) pairs: a set of 1,000 processes with a C library
 * and one other allocator each. */
#define PROBED_MAX 2048

/* The allocators' files seen so far (open, by their inode), probed for each process
 * at its fork or exec before it maps them: its first calls are then seen. */
#define KNOWN_MAX 16

struct kstacks {
	struct kstacks_bpf *skel;
	struct kpeak *engine;	/* the faults mode gives it its program for rises */
	enum kstacks_mode mode;
	int known[KNOWN_MAX];
	int nknown;
	struct ring_buffer *records;
	int (*fn)(void *ctx, const struct kstacks_record *r);
	void *ctx;
	int stop;
	struct probed *probed;
	size_t nprobed, probed_cap;
	struct cuda_files gpu;	/* the GPU probes, on the driver files */
};

static int on_record(void *ctx, void *data, size_t len)
{
	struct kstacks *s = ctx;
	const struct ks_head *h = data;
	if (len < sizeof(*h) || s->stop)
		return 0;
	struct kstacks_record r = {
		.kind = h->kind, .pid = (pid_t)h->tgid, .tid = (pid_t)h->tid,
		.at = (int64_t)h->ns, .addr = h->addr, .len = h->len,
		.old = h->old, .old_len = h->old_len,
	};
	/* a record with a stack is of the larger size, whatever its stack's length */
	if (len >= sizeof(struct ks_stacked) && h->stack_len <= KS_STACK) {
		const struct ks_stacked *full = data;
		r.regs = (const uint64_t *)full->regs;
		r.stack = full->stack;
		r.stack_len = h->stack_len;
	}
	if (s->fn(s->ctx, &r))
		s->stop = 1;
	return 0;
}

/* tracefs, where libbpf looks for a tracepoint's id: mounted for the attach when it is
 * not (a mount of one's own is undone after). 1 when this call mounted it, 0 when it
 * was there, -errno. */
static int tracefs_up(void)
{
	struct statfs st;
	if (statfs("/sys/kernel/tracing/events", &st) == 0 ||
	    statfs("/sys/kernel/debug/tracing/events", &st) == 0)
		return 0;
	if (mount("nodev", "/sys/kernel/tracing", "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  NULL) < 0)
		return -errno;
	return 1;
}

/* The programs of a mode: the faults mode follows no call that maps or unmaps anonymous
 * memory (mmap's program stays, for the mappings of code), the mmap mode no fault. */
static void choose_programs(struct kstacks_bpf *b, enum kstacks_mode mode)
{
	int faults = mode == KSTACKS_FAULTS, malloc_mode = mode == KSTACKS_MALLOC;
	struct bpf_program *calls[] = {
		b->progs.enter_munmap, b->progs.exit_munmap, b->progs.enter_mremap,
		b->progs.exit_mremap, b->progs.enter_brk, b->progs.exit_brk,
	};
	struct bpf_program *allocs[] = {
		b->progs.malloc_in, b->progs.calloc_in, b->progs.realloc_in, b->progs.memalign_in,
		b->progs.posix_memalign_in, b->progs.alloc_out, b->progs.free_in,
	};
	for (size_t i = 0; i < ARRAY_SIZE(calls); i++)
		bpf_program__set_autoload(calls[i], !faults);
	for (size_t i = 0; i < ARRAY_SIZE(allocs); i++)
		bpf_program__set_autoload(allocs[i], malloc_mode);
	bpf_program__set_autoload(b->progs.on_rise, faults);
	bpf_program__set_autoattach(b->progs.on_rise, false);	/* the engine calls it */
	b->rodata->mode = (__u32)mode;
	long page = sysconf(_SC_PAGESIZE);
	b->rodata->page_size = page > 0 ? (__u64)page : 4096;
}

int kstacks_open(struct kstacks **out, struct kpeak *k, enum kstacks_mode mode, char *why,
		 size_t whylen)
{
	*out = NULL;
	if (!k) {
		snprintf(why, whylen, "it needs the eBPF engine");
		return -ENOSYS;
	}
	struct kstacks *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	int e;
	s->skel = kstacks_bpf__open();
	if (!s->skel) {
		e = kpeak_refusal(-errno, why, whylen);
		free(s);
		return e;
	}
	choose_programs(s->skel, mode);
	s->mode = mode;
	s->engine = k;
	if ((e = bpf_map__reuse_fd(s->skel->maps.procs, kpeak_procs_fd(k))) < 0 ||
	    (e = kstacks_bpf__load(s->skel)) < 0) {
		kstacks_close(s);
		return kpeak_refusal(e, why, whylen);
	}
	int mounted = tracefs_up();
	if (mounted < 0) {
		e = mounted;
		snprintf(why, whylen, "cannot mount tracefs for the system calls' tracepoints: %s",
			 strerror(-e));
		kstacks_close(s);
		return e;
	}
	e = kstacks_bpf__attach(s->skel);
	if (e < 0)
		snprintf(why, whylen, "cannot attach to the system calls' tracepoints: %s",
			 strerror(-e));
	else if (mode == KSTACKS_FAULTS &&
		 (e = kpeak_rises_to(k, bpf_program__fd(s->skel->progs.on_rise))) < 0)
		snprintf(why, whylen, "cannot give the engine its program for rises: %s",
			 strerror(-e));
	if (mounted)
		umount2("/sys/kernel/tracing", MNT_DETACH);
	if (e < 0) {
		kstacks_close(s);
		return e;
	}
	s->records = ring_buffer__new(bpf_map__fd(s->skel->maps.records), on_record, s, NULL);
	if (!s->records) {
		e = -errno;
		snprintf(why, whylen, "cannot read its ring buffer: %s", strerror(-e));
		kstacks_close(s);
		return e;
	}
	*out = s;
	return 0;
}

/* The entry point name of the file image elf: its offset, 0 when the file lacks it or
 * it shares the offset of one attached already (glibc's aligned_alloc is memalign). */
static uint64_t entry_offset(const void *elf, size_t len, const char *name,
			     const uint64_t *done, int ndone)
{
	uint64_t off;
	if (elf_func_offset(elf, len, name, &off) < 0)
		return 0;
	for (int i = 0; i < ndone; i++)
		if (done[i] == off)
			return 0;
	return off;
}

/* Attaches the allocator's probes to the file fd for pid (the kernel puts them in that
 * process alone). 1 when attached, 0 when the file does not export malloc and free,
 * -errno with why. */
static int probe_file(struct kstacks *s, struct probed *pr, int fd, off_t size, char *why,
		      size_t whylen)
{
	struct kstacks_bpf *b = s->skel;
	const struct {
		const char *name;
		struct bpf_program *in;
	} funcs[ALLOC_FUNCS] = {
		{ "malloc", b->progs.malloc_in }, { "free", b->progs.free_in },
		{ "calloc", b->progs.calloc_in }, { "realloc", b->progs.realloc_in },
		{ "posix_memalign", b->progs.posix_memalign_in },
		{ "memalign", b->progs.memalign_in }, { "aligned_alloc", b->progs.memalign_in },
		{ "valloc", b->progs.malloc_in },
	};
	void *elf = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (elf == MAP_FAILED) {
		snprintf(why, whylen, "cannot map an allocator's file: %s", strerror(errno));
		return -errno;
	}
	uint64_t offs[ALLOC_FUNCS];
	int n = 0, e = 0;
	uint64_t m = entry_offset(elf, (size_t)size, "malloc", offs, 0);
	uint64_t f = m ? entry_offset(elf, (size_t)size, "free", offs, 0) : 0;
	if (!m || !f) {
		munmap(elf, (size_t)size);
		return 0;
	}
	char path[32];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	for (size_t i = 0; i < ALLOC_FUNCS && !e; i++) {
		uint64_t off = entry_offset(elf, (size_t)size, funcs[i].name, offs, n);
		if (!off)
			continue;
		offs[n++] = off;
		LIBBPF_OPTS(bpf_uprobe_opts, in);
		LIBBPF_OPTS(bpf_uprobe_opts, out, .retprobe = true);
		struct bpf_link *l = bpf_program__attach_uprobe_opts(funcs[i].in, pr->pid, path,
								     (size_t)off, &in);
		if (!l) {
			e = -errno;
			break;
		}
		pr->links[pr->nlinks++] = l;
		if (funcs[i].in == b->progs.free_in)
			continue;
		l = bpf_program__attach_uprobe_opts(b->progs.alloc_out, pr->pid, path, (size_t)off,
						    &out);
		if (!l) {
			e = -errno;
			break;
		}
		pr->links[pr->nlinks++] = l;
	}
	munmap(elf, (size_t)size);
	if (e < 0) {
		snprintf(why, whylen, "cannot attach uprobes to the allocator: %s", strerror(-e));
		while (pr->nlinks > 0)
			bpf_link__destroy(pr->links[--pr->nlinks]);
		return e;
	}
	return 1;
}

static struct probed *probed_find(struct kstacks *s, pid_t pid, dev_t dev, ino_t ino)
{
	for (size_t i = 0; i < s->nprobed; i++)
		if (s->probed[i].pid == pid && s->probed[i].dev == dev && s->probed[i].ino == ino)
			return &s->probed[i];
	return NULL;
}

/* The file fd (its stat st) for pid: probed, or remembered as one without an allocator.
 * 1 when probed now, 0 when not (seen before, or no allocator), -errno with why. */
static int probe_one(struct kstacks *s, pid_t pid, int fd, const struct stat *st, char *why,
		     size_t whylen)
{
	if (probed_find(s, pid, st->st_dev, st->st_ino))
		return 0;
	if (s->nprobed == PROBED_MAX) {
		snprintf(why, whylen, "probes on %d processes' files already", PROBED_MAX);
		return -ENOSPC;
	}
	s->probed = xgrow(s->probed, s->nprobed, &s->probed_cap, sizeof(*s->probed));
	struct probed *pr = &s->probed[s->nprobed];
	memset(pr, 0, sizeof(*pr));
	pr->pid = pid;
	pr->dev = st->st_dev;
	pr->ino = st->st_ino;
	int r = probe_file(s, pr, fd, st->st_size, why, whylen);
	if (r < 0)
		return r;
	s->nprobed++;	/* a file without the allocator is remembered too */
	if (r > 0 && s->nknown < KNOWN_MAX) {
		int i;
		struct stat k;
		for (i = 0; i < s->nknown; i++)
			if (fstat(s->known[i], &k) == 0 && k.st_dev == st->st_dev &&
			    k.st_ino == st->st_ino)
				break;
		if (i == s->nknown) {
			int keep = fcntl(fd, F_DUPFD_CLOEXEC, 3);
			if (keep >= 0)
				s->known[s->nknown++] = keep;
		}
	}
	return r;
}

int kstacks_probe(struct kstacks *s, pid_t pid, char *why, size_t whylen)
{
	if (s->mode != KSTACKS_MALLOC)
		return 0;
	int attached = 0, e = 0, r;
	struct stat st;
	/* the allocators other processes had: before this one maps them (an exec) */
	for (int i = 0; i < s->nknown && e >= 0; i++)
		if (fstat(s->known[i], &st) == 0) {
			if ((r = probe_one(s, pid, s->known[i], &st, why, whylen)) < 0)
				e = r;
			attached += r > 0;
		}
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	FILE *maps = e < 0 ? NULL : fopen(path, "re");
	if (!maps && e >= 0) {
		snprintf(why, whylen, "cannot read its maps: %s", strerror(errno));
		return -errno;
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	while (e >= 0 && (len = getline(&line, &cap, maps)) > 0) {
		if (line[len - 1] == '\n')
			len--;
		struct uw_map m;
		if (uw_maps_line_parse(line, (size_t)len, &m) < 0 || !m.exec || !m.path)
			continue;
		/* the file itself, whatever its path names now: the process's own mapping */
		snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", (int)pid,
			 (unsigned long long)m.start, (unsigned long long)m.end);
		int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (fd < 0)
			continue;	/* gone since, or not ours to read */
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
		    (uint64_t)st.st_ino == m.inode) {
			if ((r = probe_one(s, pid, fd, &st, why, whylen)) < 0)
				e = r;
			attached += r > 0;
		}
		close(fd);
	}
	free(line);
	if (maps)
		fclose(maps);
	return e < 0 ? e : attached;
}

int kstacks_gpu_attach(struct kstacks *s, int fd, char *why, size_t whylen)
{
	/* a block's stack at its allocation's return; a free's at its entry alone */
	struct kstacks_bpf *b = s->skel;
	struct bpf_program *const in[CUDA_CALLS] = {
		[CUDA_ALLOC] = b->progs.gpu_alloc_in, [CUDA_PITCH] = b->progs.gpu_pitch_in,
		[CUDA_CREATE] = b->progs.gpu_create_in, [CUDA_FREE] = b->progs.gpu_free_in,
		[CUDA_RELEASE] = b->progs.gpu_release_in,
	};
	struct bpf_program *const out[CUDA_CALLS] = {
		[CUDA_ALLOC] = b->progs.gpu_out, [CUDA_PITCH] = b->progs.gpu_out,
		[CUDA_CREATE] = b->progs.gpu_out,
	};
	return cuda_files_attach(&s->gpu, fd, in, out, why, whylen);
}

int kstacks_probed(const struct kstacks *s, pid_t pid)
{
	for (size_t i = 0; i < s->nprobed; i++)
		if (s->probed[i].pid == pid)
			return 1;
	return 0;
}

void kstacks_unprobe(struct kstacks *s, pid_t pid)
{
	for (size_t i = 0; i < s->nprobed;) {
		struct probed *pr = &s->probed[i];
		if (pr->pid != pid) {
			i++;
			continue;
		}
		while (pr->nlinks > 0)
			bpf_link__destroy(pr->links[--pr->nlinks]);
		*pr = s->probed[--s->nprobed];
	}
}

int kstacks_drain(struct kstacks *s, int (*fn)(void *ctx, const struct kstacks_record *r),
		  void *ctx)
{
	s->fn = fn;
	s->ctx = ctx;
	s->stop = 0;
	int n = ring_buffer__consume(s->records);
	s->fn = NULL;
	return n;
}

void kstacks_counts(const struct kstacks *s, struct kstacks_counts *c)
{
	const struct ks_state *st = &s->skel->bss->kstate;
	c->records = __atomic_load_n(&st->records, __ATOMIC_RELAXED);
	c->lost = __atomic_load_n(&st->lost, __ATOMIC_RELAXED);
	c->calls_lost = __atomic_load_n(&st->calls_lost, __ATOMIC_RELAXED);
	c->allocs_lost = __atomic_load_n(&st->allocs_lost, __ATOMIC_RELAXED);
	c->gpu_lost = __atomic_load_n(&st->gpu_lost, __ATOMIC_RELAXED);
}

int kstacks_fd(const struct kstacks *s)
{
	return ring_buffer__epoll_fd(s->records);
}

void kstacks_close(struct kstacks *s)
{
	if (!s)
		return;
	if (s->mode == KSTACKS_FAULTS)
		kpeak_rises_to(s->engine, -1);	/* also where it was not given yet */
	while (s->nprobed > 0)
		kstacks_unprobe(s, s->probed[0].pid);
	free(s->probed);
	cuda_files_close(&s->gpu);
	for (int i = 0; i < s->nknown; i++)
		close(s->known[i]);
	ring_buffer__free(s->records);
	kstacks_bpf__destroy(s->skel);
	free(s);
}

#else /* !HAVE_BPF */

struct kstacks {
	int unused;
};

int kstacks_open(struct kstacks **out, struct kpeak *k, enum kstacks_mode mode, char *why,
		 size_t whylen)
{
	(void)k;
	(void)mode;
	*out = NULL;
	snprintf(why, whylen, "this rsswatch was built without the eBPF engine");
	return -ENOSYS;
}

int kstacks_probe(struct kstacks *s, pid_t pid, char *why, size_t whylen)
{
	(void)s;
	(void)pid;
	(void)why;
	(void)whylen;
	return 0;
}

int kstacks_gpu_attach(struct kstacks *s, int fd, char *why, size_t whylen)
{
	(void)s;
	(void)fd;
	snprintf(why, whylen, "this rsswatch was built without the eBPF engine");
	return -ENOSYS;
}

int kstacks_probed(const struct kstacks *s, pid_t pid)
{
	(void)s;
	(void)pid;
	return 0;
}

void kstacks_unprobe(struct kstacks *s, pid_t pid)
{
	(void)s;
	(void)pid;
}

int kstacks_drain(struct kstacks *s, int (*fn)(void *ctx, const struct kstacks_record *r),
		  void *ctx)
{
	(void)s;
	(void)fn;
	(void)ctx;
	return 0;
}

void kstacks_counts(const struct kstacks *s, struct kstacks_counts *c)
{
	(void)s;
	memset(c, 0, sizeof(*c));
}

int kstacks_fd(const struct kstacks *s)
{
	(void)s;
	return -1;
}

void kstacks_close(struct kstacks *s)
{
	(void)s;
}

#endif
