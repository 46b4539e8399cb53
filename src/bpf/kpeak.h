/* What the kernel side of the peak engine (kpeak.bpf.c) and its loader (source/kpeak.c)
 * share: the state in the program's global data, read by the recorder at each sample
 * without a system call, and the record each tracked process leaves when it ends.
 * Sizes are fixed-width: the same layout on both sides. */
#ifndef RSSWATCH_BPF_KPEAK_H
#define RSSWATCH_BPF_KPEAK_H

/* A tracked process that starts counting only at its next exec: a launched command,
 * whose image before the exec is a copy of the recorder. */
#define KP_WAIT_EXEC 1u

struct kp_proc {
	__u64 mm;		/* the mm counted for it (0: none yet, or shared with its parent) */
	__u64 cur;		/* file + anon + shmem bytes at its last change */
	__u64 peak;		/* its highest, over every image it had */
	__u64 peak_ns;		/* CLOCK_MONOTONIC when it was reached */
	__u32 flags;
	__u32 image;		/* its images before this one (execs): see kp_gpu_key */
	/* device bytes it holds from the CUDA driver (the GPU probes), and its calls to
	 * the driver's allocation entry points begun and not ended */
	__s64 gpu_cur;
	__s64 gpu_inflight;
	/* record --stacks=faults (kstacks.bpf.c: on_rise): the highest resident bytes of
	 * this image a record covers, and the bytes from which the engine passes a change
	 * on to that program (0: none yet; an exec starts again) */
	__u64 fault_high;
	__u64 fault_next;
};

/* What the ring buffer carries: a record's first word says which it is. */
#define KP_EXIT 1u	/* a tracked process ended (its last thread's exit) */
#define KP_VICTIM 2u	/* the OOM killer chose a tracked process (oom:mark_victim) */
#define KP_LEFT 3u	/* a tracked process was moved out of the watched cgroup */

struct kp_exit {
	__u32 kind;		/* KP_EXIT */
	__u32 tgid;
	__u64 peak;
	__u64 peak_ns;
};

/* KP_EXIT's layout serves KP_LEFT: the peak it had while tracked, and when it left
 * (peak_ns holds that time). */

/* The victim's figures as the kernel's kill line gives them, read when it was chosen
 * (before the line is printed and before it dies). Sizes in pages (total_vm and the
 * counters) and bytes (pgtables). */
struct kp_victim {
	__u32 kind;		/* KP_VICTIM */
	__u32 tgid;
	__u64 at_ns;		/* CLOCK_MONOTONIC */
	__u64 total_vm;
	__u64 anon, file, shmem;
	__u64 pgtables;
	__u32 uid;
	__s32 oom_score_adj;
	char comm[16];
};

/* The set's total over time, for the peak of each stage between two marks: slot i of
 * the history holds the span of 2^KP_SPAN_SHIFT ns (1.05 ms) whose number n (the
 * CLOCK_MONOTONIC time >> KP_SPAN_SHIFT) has n % KP_SPANS == i, while it is the
 * latest such span with a change of the total; the recorder reads it within the
 * history's 34 s. A span with no change has no slot of its own: the total stayed at
 * the last one's 'last'. */
#define KP_SPAN_SHIFT 20
#define KP_SPANS 32768u

struct kp_span {
	__u64 n;		/* the span's number + 1 (0: never written) */
	__u64 peak;		/* the highest total within it */
	__u64 peak_ns;		/* when (a peak_ns of another span: a race lost; use last) */
	__s64 last;		/* the total after its last change */
};

/* Device memory the tracked processes hold from the CUDA driver, from uprobes on its
 * allocation and free entry points (the GPU probes): live is their total now, peak its
 * highest and when. win and win_ns: the highest since the recorder last took it (it
 * swaps in live). calls counts every call begun or ended, inflight those begun and not
 * ended: a driver's figure read while either moved may count a block the probes have
 * not (or no longer). */
struct kp_gpu {
	__s64 live;
	__u64 peak;
	__u64 peak_ns;
	__u64 win;
	__u64 win_ns;
	__u64 calls;
	__s64 inflight;
	__u64 blocks;		/* allocations seen */
	__u64 dropped;		/* allocations not kept: the table of blocks was full */
};

/* A block the driver handed out: a device pointer, or a handle of cuMemCreate. */
#define KP_GPU_PTR 0u
#define KP_GPU_HANDLE 1u

struct kp_gpu_key {
	__u32 tgid;
	__u16 kind;		/* KP_GPU_PTR or KP_GPU_HANDLE */
	__u16 image;		/* the process's image that got it: an exec ends its blocks,
				 * and a block of an image before is never matched again */
	__u64 addr;
};

struct kp_gpu_block {
	__u64 size;
};

/* A call to the driver between its entry and its return: where the driver writes the
 * new block's address or handle (0: a free), the size asked for (a pitched one's
 * height, and where its row pitch is written), and the block's kind. */
struct kp_gpu_call {
	__u64 out;
	__u64 size;
	__u64 pitch;
	__u32 kind;
	__u32 pad;
};

/* The set: every tracked process together. */
struct kp_state {
	__s64 total;		/* sum of cur over the tracked processes */
	__u64 peak;		/* the highest total */
	__u64 peak_ns;
	__u64 events;		/* 1 once a tracked process's pages changed */
	__u64 dropped;		/* processes not tracked: the table was full */
	__u64 lost;		/* records the ring buffer had no room for */
	__u32 adopt_tgid;	/* track the next child forked by this process, from its exec */
	__u32 follow_forks;	/* track every child of a tracked process */
	/* A cgroup's members (-g): the cgroup's kernfs id (its directory's inode; 0:
	 * none) and its hierarchy's id. A process moved into it or below is tracked, one
	 * moved out is no longer. */
	__u64 cg_id;
	__u32 cg_hierarchy;
	__u32 rises;		/* 1: a change past a process's fault_next goes on to the
				 * program in the engine's rises (record --stacks=faults) */
	struct kp_gpu gpu;
};

#endif
