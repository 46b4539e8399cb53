/* What the stacks program (kstacks.bpf.c) and its loader (source/kstacks.c) share: the
 * record of each change of a tracked process's mappings that the recorder attributes to
 * a call stack. Sizes are fixed-width: the same layout on both sides. */
#ifndef RSSWATCH_BPF_KSTACKS_H
#define RSSWATCH_BPF_KSTACKS_H

/* What a record says (its first word). */
#define KS_MAP 1u	/* anonymous memory mapped: [addr, addr + len), with the stack */
#define KS_BRK 2u	/* the heap's end moved from addr to addr + len (len < 0: down);
			 * with the stack when it grew */
#define KS_UNMAP 3u	/* [addr, addr + len) unmapped */
#define KS_REMAP 4u	/* [old, old + old_len) now at [addr, addr + len) */
#define KS_CODE 5u	/* a file mapped executable (a library loaded): the process's
			 * map of its code changed */
#define KS_EXEC 6u	/* the process exec'd: its mappings are gone */
#define KS_EXIT 7u	/* the process ended: its mappings are gone */
#define KS_FORK 8u	/* the process was forked from the one at addr: a copy of its
			 * mappings */
#define KS_FAULT 9u	/* record --stacks=faults: the process's resident bytes rose from
			 * addr to addr + len, past its highest so far, with the stack of
			 * the fault that took it there (addr is a count, not an address) */
#define KS_ALLOC 10u	/* record --stacks=malloc: [addr, addr + len) handed out by an
			 * allocator's call (malloc, calloc, realloc, ...), with the stack of its
			 * caller; old: the block a realloc moved or resized (0: none) */
#define KS_FREE 11u	/* the block at addr given back (free, or realloc to 0 bytes) */
#define KS_GPU_ALLOC 12u	/* [addr, addr + len) of device memory handed out by the
				 * CUDA driver (where the loader attached its probes), with
				 * the stack of its caller; old: KP_GPU_PTR (a device
				 * pointer) or KP_GPU_HANDLE (cuMemCreate's handle) */
#define KS_GPU_FREE 13u	/* the driver's block at addr given back; old: its kind */

/* What the program follows (its constant mode, set before it loads). */
#define KS_MODE_MMAP 1u	/* mmap, munmap, mremap and brk, each with its stack */
#define KS_MODE_FAULTS 2u	/* a fault's stack at each rise of a process's highest
				 * resident bytes by a step (below) */
#define KS_MODE_MALLOC 3u	/* the mmap mode's calls, and each call of an allocator's
				 * entry points (uprobes, per process): the calls these make
				 * to the kernel are not followed apart */

/* The step of KS_MODE_FAULTS: a record each time a process's resident bytes pass its
 * highest so far by 1/256 of it, and by 1 MiB at least: a process that grows to 600
 * GiB sends about 2,300. */
#define KS_FAULT_SHIFT 8
#define KS_FAULT_MIN (1ull << 20)

/* The user registers, in DWARF's order for x86-64: rax rdx rcx rbx rsi rdi rbp rsp
 * r8-r15, and the return address column (rip). */
#define KS_NREGS 17

/* How much of the user stack is copied from its pointer up, at most (perf's default
 * for --call-graph dwarf is 8 KiB), and in pieces of KS_PIECE: the copy ends at the
 * first piece the process has not mapped (the stack's top). */
#define KS_STACK 16384
#define KS_PIECE 512

struct ks_head {
	__u32 kind;
	__u32 tgid;
	__u32 tid;
	__u32 stack_len;	/* bytes of stack that follow the record (0: none) */
	__u64 ns;		/* CLOCK_MONOTONIC */
	__u64 addr;
	__s64 len;
	__u64 old;		/* KS_REMAP: where it was */
	__u64 old_len;
};

/* A record with the stack: the head, the registers, and stack_len bytes from rsp. */
struct ks_stacked {
	struct ks_head h;
	__u64 regs[KS_NREGS];
	__u8 stack[KS_STACK];
};

struct ks_state {
	__u64 lost;		/* records the ring buffer had no room for */
	__u64 calls_lost;	/* calls not followed: the table of calls under way was full */
	__u64 allocs_lost;	/* allocator calls not followed: their table was full */
	__u64 gpu_lost;		/* the driver's calls not followed: their table was full */
	__u64 records;		/* records sent */
};

#endif
