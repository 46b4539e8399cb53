/* Live bytes by call stack (record --stacks): the anonymous memory each tracked process
 * holds, from the stacks program's records (source/kstacks.h), each block charged to
 * the stack that mapped it, and a snapshot of them at the set's peak.
 *
 * A block is a range a process mapped (mmap of anonymous memory, a rise of its heap's
 * end), or, with --stacks=malloc, one its allocator handed out; munmap, mremap, a lower
 * heap end, an exec or the process's end take it away, wholly or in part, and a free
 * the allocator's block that starts at its address, whole. Sizes are what was mapped, not what is resident: the peak of the
 * resident set they are held against is the engine's. A forked child starts with a
 * copy of its parent's blocks (its resident set counts those pages too).
 *
 * The snapshot at the peak is exact when fed as stacks_feed says: the records in the
 * order the program sent them, each with the set's peak time as the engine knows it
 * when the record is handed over. Not thread-safe: one recorder's loop. */
#ifndef RSSWATCH_RECORD_STACKS_H
#define RSSWATCH_RECORD_STACKS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "source/kstacks.h"

/* A frame as the walker gives it: a module of its own numbering (a file) and an offset
 * in it, or module STACKS_NO_MODULE and an address. */
#define STACKS_NO_MODULE UINT32_MAX
#define STACKS_MAX_FRAMES 64

struct stack_frame {
	uint32_t module;
	uint64_t off;
};

/* Walks a record's stack into frames (innermost first). Returns how many (0: none),
 * or -errno (-ESRCH: the process is gone). */
typedef int (*stacks_walk_fn)(void *ctx, pid_t pid, const uint64_t *regs, const void *stack,
			      size_t len, struct stack_frame *out, int max);

/* One stack's bytes in a snapshot, or live. */
struct stack_bytes {
	uint32_t stack;		/* its id: stacks_frames */
	int64_t bytes;
	uint64_t blocks;
};

struct stacks_counts {
	uint64_t records;	/* handed to stacks_feed */
	uint64_t walks_failed;	/* stacks that could not be walked (charged to the
				 * stack of no frames) */
	uint64_t blocks_dropped;	/* blocks not kept: the table was full */
	uint64_t stacks_dropped;	/* stacks not kept: charged to the stack of no frames */
};

/* The peaks the snapshots are of (CLOCK_MONOTONIC ns; 0: none yet): the set's memory
 * as the engine knows it, and its GPU memory from the driver's probes. */
struct stacks_peaks {
	int64_t host_at;
	int64_t gpu_at;
};

struct stacks;

/* The blocks kept of every process together: at most max_blocks (24 bytes each, as
 * they come); past it a block is not kept, and counted. */
#define STACKS_BLOCKS_MAPPED (1u << 20)	/* mappings: 16 processes at the kernel's
					 * default of 65,530 maps each */
#define STACKS_BLOCKS_MALLOC (1u << 24)	/* an allocator's blocks (--stacks=malloc):
					 * 16 M, 384 MiB of table at most */
int stacks_new(struct stacks **out, stacks_walk_fn walk, void *walk_ctx, size_t max_blocks);
void stacks_free(struct stacks *s);	/* accepts NULL */
/* A record, in order, with the peaks as known now. A record after a peak takes that
 * peak's snapshot first. */
void stacks_feed(struct stacks *s, const struct kstacks_record *r,
		 const struct stacks_peaks *pk);
/* The peaks' times now, with every record before them fed: a snapshot is taken where
 * it is not of its peak yet. */
void stacks_settle(struct stacks *s, const struct stacks_peaks *pk);
/* The snapshot at the peak (its time in *at; 0 when none), and the live bytes now, by
 * stack, largest first: arrays of the stacks holding bytes, valid until the next call
 * that changes s. */
const struct stack_bytes *stacks_at_peak(const struct stacks *s, size_t *n, int64_t *at);
const struct stack_bytes *stacks_live(struct stacks *s, size_t *n);
/* The snapshot of the GPU memory the driver handed out (KSTACKS_GPU_ALLOC, less
 * KSTACKS_GPU_FREE and the ends of processes) at its peak, as stacks_at_peak. */
const struct stack_bytes *stacks_at_gpu_peak(const struct stacks *s, size_t *n, int64_t *at);
/* The end: what each process of the set held at its own end, by stack, largest first
 * (stacks_live's figures, plus, for every process that exited, what it held when it
 * did: a launched command's end is its exit, whose memory the kernel then takes back
 * whole; an exec's old program is not counted). A forked child holds its copy of its
 * parent's blocks too, as each process's resident set counts them. Valid as
 * stacks_live's. */
const struct stack_bytes *stacks_at_end(struct stacks *s, size_t *n);
/* pid left the set (moved out of its cgroup): its blocks are no longer the set's, in
 * what is live now and at the end (the records before it left fed first). */
void stacks_left(struct stacks *s, pid_t pid);
/* A stack's frames, innermost first (id 0: the stack of no frames, n = 0). */
const struct stack_frame *stacks_frames(const struct stacks *s, uint32_t id, size_t *n);
void stacks_counts(const struct stacks *s, struct stacks_counts *c);
/* One more than the highest stack id. */
size_t stacks_ids(const struct stacks *s);

#endif
