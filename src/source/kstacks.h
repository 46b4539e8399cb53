/* The stacks program's loader (src/bpf/kstacks.bpf.c): each change of a tracked
 * process's anonymous memory, with the caller's registers and user stack where it
 * maps some, handed over in order. It shares the peak engine's tracked processes:
 * open the engine first, and track through it. */
#ifndef RSSWATCH_SOURCE_KSTACKS_H
#define RSSWATCH_SOURCE_KSTACKS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct kpeak;
struct kstacks;

/* What a record says (bpf/kstacks.h has each one's meaning). */
enum kstacks_kind {
	KSTACKS_MAP = 1, KSTACKS_BRK, KSTACKS_UNMAP, KSTACKS_REMAP, KSTACKS_CODE,
	KSTACKS_EXEC, KSTACKS_EXIT, KSTACKS_FORK, KSTACKS_FAULT, KSTACKS_ALLOC, KSTACKS_FREE,
	KSTACKS_GPU_ALLOC, KSTACKS_GPU_FREE,
};

/* What the program follows: the calls that map memory, the faults that raise a
 * process's highest resident bytes, or the calls that map memory and those of the
 * processes' allocators (bpf/kstacks.h: KS_MODE_*). */
enum kstacks_mode { KSTACKS_MMAP = 1, KSTACKS_FAULTS, KSTACKS_MALLOC };

/* One record. regs and stack are set for a record with a stack (KSTACKS_MAP,
 * KSTACKS_FAULT, KSTACKS_ALLOC, KSTACKS_GPU_ALLOC, and KSTACKS_BRK when the heap grew),
 * else NULL. A KSTACKS_FAULT's [addr, addr + len) is the rise of the process's highest
 * resident bytes it covers. A KSTACKS_ALLOC's old is the block a realloc replaced (0:
 * none). A KSTACKS_GPU_ALLOC's and KSTACKS_GPU_FREE's old is the block's kind: 0 a
 * device pointer, 1 a cuMemCreate handle (their values may coincide). */
struct kstacks_record {
	uint32_t kind;
	pid_t pid;		/* the process (its tgid) */
	pid_t tid;		/* the thread that made the call */
	int64_t at;		/* CLOCK_MONOTONIC ns */
	uint64_t addr;
	int64_t len;
	uint64_t old, old_len;	/* KSTACKS_REMAP: where it was, and its length;
				 * KSTACKS_ALLOC: the block replaced */
	const uint64_t *regs;	/* KSTACKS_NREGS, in DWARF's order */
	const void *stack;	/* stack_len bytes from regs' stack pointer up */
	size_t stack_len;
};

#define KSTACKS_NREGS 17

struct kstacks_counts {
	uint64_t records;	/* sent by the program */
	uint64_t lost;		/* not sent: the ring buffer was full */
	uint64_t calls_lost;	/* calls not followed: its table of calls was full */
	uint64_t allocs_lost;	/* allocator calls not followed: their table was full */
	uint64_t gpu_lost;	/* the CUDA driver's calls not followed: their table was full */
};

/* Loads and attaches the program on the engine k's processes, in mode. Mounts tracefs
 * for the attach where the system has not (and unmounts it after). 0 and *out, or
 * -errno with a phrase in why. */
int kstacks_open(struct kstacks **out, struct kpeak *k, enum kstacks_mode mode, char *why,
		 size_t whylen);
/* The malloc mode: attaches the allocator's probes for the process pid to each file it
 * maps with code that exports malloc and free (its C library; a jemalloc, tcmalloc or
 * mimalloc it loaded), and to the allocators' files other processes were seen with
 * (a fork's child or an exec'd image that has not mapped them yet). The kernel places
 * them in that process alone, and in a file it maps later. A file read once for pid is
 * not read again; a process's probes stay through its execs. Returns how
 * many files were probed now, 0 in the other modes, or -errno with a phrase in why.
 * The files are opened through /proc/PID/map_files: the process's own mappings,
 * whatever their paths name by then. */
int kstacks_probe(struct kstacks *s, pid_t pid, char *why, size_t whylen);
/* The GPU probes, in every mode: the CUDA driver library open at fd (as
 * kpeak_gpu_attach takes it) sends each block of device memory a tracked process
 * allocates, with its caller's stack, and each free. Returns the number of entry
 * points attached, 0 when this file is attached already, or -errno with a phrase in
 * why. */
int kstacks_gpu_attach(struct kstacks *s, int fd, char *why, size_t whylen);
/* Whether kstacks_probe read pid's files (1) or not (0). */
int kstacks_probed(const struct kstacks *s, pid_t pid);
/* Takes pid's probes away (at its end). */
void kstacks_unprobe(struct kstacks *s, pid_t pid);
/* Hands each record sent since the last call to fn, in order (fn's non-zero return
 * stops it). Returns how many, or -errno. No system call: the ring buffer is mapped. */
int kstacks_drain(struct kstacks *s, int (*fn)(void *ctx, const struct kstacks_record *r),
		  void *ctx);
void kstacks_counts(const struct kstacks *s, struct kstacks_counts *c);
/* A descriptor that turns readable when records wait (for epoll). */
int kstacks_fd(const struct kstacks *s);
/* Detaches and frees. Accepts NULL. */
void kstacks_close(struct kstacks *s);

#endif
