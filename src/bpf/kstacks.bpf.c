// SPDX-License-Identifier: GPL-2.0
/* The stacks program: the system calls that change a tracked process's anonymous
 * memory (mmap, munmap, mremap, brk), each sent to user space at its return with the
 * caller's registers and a copy of its user stack, which the recorder unwinds with
 * DWARF (source/unwind.c): glibc has no frame pointers, so the kernel's own stack walk
 * stops inside it. The processes are the peak engine's (its procs map, shared with
 * this program by the loader), so forks, execs and cgroup moves follow as there.
 *
 * Only these four calls enter the programs (syscall tracepoints, not the raw
 * sys_enter that every system call on the machine would run).
 *
 * In the faults mode (KS_MODE_FAULTS) the calls that map memory are not followed;
 * instead, each time a process's resident bytes pass its highest so far by a step, the
 * stack of the fault that took them there is sent with the rise (KS_FAULT), from the
 * engine's own program for page changes (on_rise, below). Mappings of code are followed in both modes: the recorder's walks need them.
 *
 * The malloc mode (KS_MODE_MALLOC) follows the mmap mode's calls and, through uprobes
 * the loader attaches to each tracked process's allocator, every call of malloc,
 * calloc, realloc, posix_memalign, aligned_alloc, memalign, valloc and free: a block
 * at the call's return with its caller's stack (KS_ALLOC), a free at its entry
 * (KS_FREE). The system calls an allocator makes on its own account (the arena's brk,
 * the mmap of a large chunk) are not sent: the blocks it hands out stand for them.
 *
 * In every mode, where the loader attached them to a CUDA driver, the driver's
 * allocation calls (cuMemAlloc_v2 and its kin, cuMemCreate) send the device block at
 * their return with the caller's stack (KS_GPU_ALLOC), and its frees their block at
 * entry (KS_GPU_FREE): the peak engine counts the same calls' bytes, this program
 * names who asked for them. */
#include <linux/types.h>
#include <linux/bpf.h>
#include <asm/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "bpf/kpeak.h"
#include "bpf/kstacks.h"

char LICENSE[] SEC("license") = "GPL";

struct mm_struct {
	unsigned long brk;
} __attribute__((preserve_access_index));

struct signal_struct {
	struct { int counter; } live;
} __attribute__((preserve_access_index));

struct task_struct {
	int pid;
	int tgid;
	struct mm_struct *mm;
	struct signal_struct *signal;
} __attribute__((preserve_access_index));

/* The syscall tracepoints' records (events/syscalls/sys_{enter,exit}_* /format). */
struct sys_enter {
	__u64 common;
	__s32 nr;
	__u32 pad;
	__u64 args[6];
};

struct sys_exit {
	__u64 common;
	__s32 nr;
	__u32 pad;
	__s64 ret;
};

#define PROT_WRITE 0x2
#define PROT_EXEC 0x4
#define MAP_ANONYMOUS 0x20

struct ks_state kstate;

const volatile __u32 mode = KS_MODE_MMAP;
const volatile __u64 page_size = 4096;

/* The peak engine's table of tracked processes (the loader gives this program its
 * fd): its definition must stay the engine's. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768);
	__type(key, __u32);
	__type(value, struct kp_proc);
} procs SEC(".maps");

/* A call between its entry and its return, by thread. */
struct ks_call {
	__u32 kind;
	__u32 pad;
	__u64 addr;
	__u64 len;
	__u64 old;
	__u64 old_len;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u64);
	__type(value, struct ks_call);
} calls SEC(".maps");

/* The malloc mode: an allocator's call under way, by thread: how deep (glibc's realloc
 * of nothing calls malloc), and the outermost call's arguments. */
enum { AC_PLAIN, AC_REALLOC, AC_OUT };

struct ks_alloc_call {
	__u32 depth;
	__u32 kind;	/* AC_*: AC_OUT writes the block's address to out */
	__u64 size;
	__u64 old;	/* AC_REALLOC: the block resized */
	__u64 out;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct ks_alloc_call);
} in_alloc SEC(".maps");

/* The processes that sent a record: the ones whose exit, exec and forks matter to the
 * recorder (the engine forgets an ended process before this program sees its end). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 32768);
	__type(key, __u32);
	__type(value, __u8);
} senders SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 * 1024 * 1024);
} records SEC(".maps");

static __always_inline int tracked(__u32 tgid)
{
	struct kp_proc *p = bpf_map_lookup_elem(&procs, &tgid);
	return p && !(p->flags & KP_WAIT_EXEC);
}

/* A system call of an allocator's own, in the malloc mode. */
static __always_inline int allocator_call(__u64 id)
{
	return mode == KS_MODE_MALLOC && bpf_map_lookup_elem(&in_alloc, &id);
}

static __always_inline void begin(__u32 kind, __u64 addr, __u64 len, __u64 old, __u64 old_len)
{
	__u64 id = bpf_get_current_pid_tgid();
	if (!tracked(id >> 32) || allocator_call(id))
		return;
	struct ks_call c = { .kind = kind, .addr = addr, .len = len, .old = old,
			     .old_len = old_len };
	if (bpf_map_update_elem(&calls, &id, &c, BPF_ANY) < 0)
		__sync_fetch_and_add(&kstate.calls_lost, 1);
}

static __always_inline void head(struct ks_head *h, __u32 kind, __u64 id)
{
	__u32 tgid = id >> 32;
	__u8 one = 1;
	if (kind != KS_EXIT)
		bpf_map_update_elem(&senders, &tgid, &one, BPF_ANY);
	h->kind = kind;
	h->tgid = id >> 32;
	h->tid = (__u32)id;
	h->stack_len = 0;
	h->ns = bpf_ktime_get_ns();
	h->old = h->old_len = 0;
}

/* A record without a stack. */
static __always_inline void send(__u32 kind, __u64 id, __u64 addr, __s64 len, __u64 old,
				 __u64 old_len)
{
	struct ks_head *h = bpf_ringbuf_reserve(&records, sizeof(*h), 0);
	if (!h) {
		__sync_fetch_and_add(&kstate.lost, 1);
		return;
	}
	head(h, kind, id);
	h->addr = addr;
	h->len = len;
	h->old = old;
	h->old_len = old_len;
	bpf_ringbuf_submit(h, 0);
	__sync_fetch_and_add(&kstate.records, 1);
}

/* A record with the caller's registers and stack: at a system call's return they are
 * as they were at its entry, in the C library's wrapper. */
static __always_inline void send_stacked(__u32 kind, __u64 id, __u64 addr, __s64 len,
					 __u64 old)
{
	struct ks_stacked *r = bpf_ringbuf_reserve(&records, sizeof(*r), 0);
	if (!r) {
		__sync_fetch_and_add(&kstate.lost, 1);
		return;
	}
	head(&r->h, kind, id);
	r->h.addr = addr;
	r->h.len = len;
	r->h.old = old;
	struct pt_regs regs;
	struct task_struct *t = bpf_get_current_task_btf();
	if (bpf_probe_read_kernel(&regs, sizeof(regs), (void *)bpf_task_pt_regs(t)) != 0) {
		bpf_ringbuf_discard(r, 0);
		__sync_fetch_and_add(&kstate.lost, 1);
		return;
	}
	__u64 *g = r->regs;
	g[0] = regs.rax; g[1] = regs.rdx; g[2] = regs.rcx; g[3] = regs.rbx;
	g[4] = regs.rsi; g[5] = regs.rdi; g[6] = regs.rbp; g[7] = regs.rsp;
	g[8] = regs.r8; g[9] = regs.r9; g[10] = regs.r10; g[11] = regs.r11;
	g[12] = regs.r12; g[13] = regs.r13; g[14] = regs.r14; g[15] = regs.r15;
	g[16] = regs.rip;
	__u32 n;
	for (n = 0; n < KS_STACK / KS_PIECE; n++)
		if (bpf_probe_read_user(r->stack + n * KS_PIECE, KS_PIECE,
					(void *)(regs.rsp + n * KS_PIECE)) != 0)
			break;
	r->h.stack_len = n * KS_PIECE;
	bpf_ringbuf_submit(r, 0);
	__sync_fetch_and_add(&kstate.records, 1);
}

/* The call this thread began, taken from the table; 0 when none. */
static __always_inline int end(__u64 id, struct ks_call *c)
{
	struct ks_call *p = bpf_map_lookup_elem(&calls, &id);
	if (!p)
		return 0;
	*c = *p;
	bpf_map_delete_elem(&calls, &id);
	return 1;
}

SEC("tracepoint/syscalls/sys_enter_mmap")
int enter_mmap(struct sys_enter *ctx)
{
	__u64 prot = ctx->args[2], flags = ctx->args[3];
	if (flags & MAP_ANONYMOUS) {
		/* a reservation (PROT_NONE) holds nothing: a guard, an arena's reserve */
		if ((prot & PROT_WRITE) && mode == KS_MODE_MMAP)
			begin(KS_MAP, 0, ctx->args[1], 0, 0);
	} else if (prot & PROT_EXEC) {
		begin(KS_CODE, 0, ctx->args[1], 0, 0);
	}
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_mmap")
int exit_mmap(struct sys_exit *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct ks_call c;
	if (!end(id, &c) || ctx->ret < 0 && ctx->ret > -4096)
		return 0;
	if (c.kind == KS_MAP)
		send_stacked(KS_MAP, id, (__u64)ctx->ret, (__s64)c.len, 0);
	else
		send(KS_CODE, id, (__u64)ctx->ret, (__s64)c.len, 0, 0);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_munmap")
int enter_munmap(struct sys_enter *ctx)
{
	begin(KS_UNMAP, ctx->args[0], ctx->args[1], 0, 0);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_munmap")
int exit_munmap(struct sys_exit *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct ks_call c;
	if (end(id, &c) && ctx->ret == 0)
		send(KS_UNMAP, id, c.addr, (__s64)c.len, 0, 0);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_mremap")
int enter_mremap(struct sys_enter *ctx)
{
	begin(KS_REMAP, 0, ctx->args[2], ctx->args[0], ctx->args[1]);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_mremap")
int exit_mremap(struct sys_exit *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct ks_call c;
	if (end(id, &c) && !(ctx->ret < 0 && ctx->ret > -4096))
		send(KS_REMAP, id, (__u64)ctx->ret, (__s64)c.len, c.old, c.old_len);
	return 0;
}

/* brk's argument is the end asked for: the end before is read from the mm. */
SEC("tracepoint/syscalls/sys_enter_brk")
int enter_brk(struct sys_enter *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	if (!tracked(id >> 32) || allocator_call(id))
		return 0;
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();
	begin(KS_BRK, BPF_CORE_READ(t, mm, brk), 0, 0, 0);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_brk")
int exit_brk(struct sys_exit *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct ks_call c;
	if (!end(id, &c) || !c.addr)
		return 0;
	__s64 moved = ctx->ret - (__s64)c.addr;
	if (moved > 0)
		send_stacked(KS_BRK, id, c.addr, moved, 0);
	else if (moved < 0)
		send(KS_BRK, id, c.addr, moved, 0, 0);
	return 0;
}

SEC("raw_tracepoint/sched_process_exec")
int on_exec(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *t = (struct task_struct *)ctx->args[0];
	__u32 tgid = BPF_CORE_READ(t, tgid);
	if (bpf_map_lookup_elem(&senders, &tgid))
		send(KS_EXEC, (__u64)tgid << 32 | tgid, 0, 0, 0, 0);
	return 0;
}

/* A sender's child, tracked by the engine (whose program ran first): it starts with a
 * copy of its parent's mappings. */
SEC("raw_tracepoint/sched_process_fork")
int on_fork(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *parent = (struct task_struct *)ctx->args[0];
	struct task_struct *child = (struct task_struct *)ctx->args[1];
	__u32 ptgid = BPF_CORE_READ(parent, tgid), tgid = BPF_CORE_READ(child, tgid);
	if (tgid != (__u32)BPF_CORE_READ(child, pid) || !bpf_map_lookup_elem(&senders, &ptgid))
		return 0;	/* a thread, or the child of a process that sent nothing */
	if (BPF_CORE_READ(child, mm) != BPF_CORE_READ(parent, mm) && tracked(tgid))
		send(KS_FORK, (__u64)tgid << 32 | tgid, ptgid, 0, 0, 0);
	return 0;
}

SEC("raw_tracepoint/sched_process_exit")
int on_exit(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *t = (struct task_struct *)ctx->args[0];
	if (BPF_CORE_READ(t, signal, live.counter) != 0)
		return 0;	/* not the process's last thread */
	__u32 tgid = BPF_CORE_READ(t, tgid);
	if (!bpf_map_lookup_elem(&senders, &tgid))
		return 0;
	send(KS_EXIT, (__u64)tgid << 32 | tgid, 0, 0, 0, 0);
	bpf_map_delete_elem(&senders, &tgid);
	return 0;
}

/* The faults mode: a change of a tracked process's resident pages that reached its
 * fault_next, passed on by the engine's rss_stat program (a tail call: loaded as a
 * raw tracepoint's, attached to none). In the process whose mm it is, the first change
 * of an image sets its highest; a rise past it by a step is sent with the stack of the
 * fault (the task's user registers: where it touched the page, or the system call
 * that did). One CPU of a process's threads takes each rise. */
SEC("raw_tracepoint")
int on_rise(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;
	struct kp_proc *p = bpf_map_lookup_elem(&procs, &tgid);
	if (!p || p->mm != ctx->args[0])
		return 0;	/* another process's pages: a fork's copy, a remote access */
	__u64 now = *(volatile __u64 *)&p->cur;
	__u64 step = now >> KS_FAULT_SHIFT;
	if (step < KS_FAULT_MIN)
		step = KS_FAULT_MIN;
	__u64 next = *(volatile __u64 *)&p->fault_next;
	if (!next) {
		p->fault_high = now;
		p->fault_next = now + step;
		return 0;
	}
	__u64 high = *(volatile __u64 *)&p->fault_high;
	if (now < next || now <= high ||
	    __sync_val_compare_and_swap(&p->fault_high, high, now) != high)
		return 0;
	p->fault_next = now + step;
	send_stacked(KS_FAULT, id, high, (__s64)(now - high), 0);
	return 0;
}

/* The malloc mode's allocator calls. The entry keeps the outermost call's arguments;
 * calls within it (an allocator calling its own entry points) only count deeper. */
static __always_inline int alloc_begin(__u32 kind, __u64 size, __u64 old, __u64 out)
{
	__u64 id = bpf_get_current_pid_tgid();
	if (!tracked(id >> 32))
		return 0;
	struct ks_alloc_call *c = bpf_map_lookup_elem(&in_alloc, &id);
	if (c) {
		c->depth++;
		return 0;
	}
	struct ks_alloc_call n = { .depth = 1, .kind = kind, .size = size, .old = old, .out = out };
	if (bpf_map_update_elem(&in_alloc, &id, &n, BPF_ANY) < 0)
		__sync_fetch_and_add(&kstate.allocs_lost, 1);
	return 0;
}

/* malloc(size), valloc(size) */
SEC("uprobe")
int BPF_KPROBE(malloc_in, __u64 size)
{
	return alloc_begin(AC_PLAIN, size, 0, 0);
}

/* calloc(n, size): a product that overflows fails the call. In halves of 32 bits:
 * clang would make the plain test a 128-bit multiply, which BPF has not. */
SEC("uprobe")
int BPF_KPROBE(calloc_in, __u64 n, __u64 size)
{
	__u64 big = n > size ? n : size, small = n > size ? size : n;
	__u64 hi = (big >> 32) * small, lo = (big & 0xffffffffull) * small;
	if ((small >> 32) || (hi >> 32) || (hi << 32) + lo < lo)
		return alloc_begin(AC_PLAIN, 0, 0, 0);
	return alloc_begin(AC_PLAIN, (hi << 32) + lo, 0, 0);
}

/* realloc(ptr, size) */
SEC("uprobe")
int BPF_KPROBE(realloc_in, __u64 ptr, __u64 size)
{
	return alloc_begin(AC_REALLOC, size, ptr, 0);
}

/* memalign(alignment, size), aligned_alloc(alignment, size) */
SEC("uprobe")
int BPF_KPROBE(memalign_in, __u64 alignment, __u64 size)
{
	(void)alignment;
	return alloc_begin(AC_PLAIN, size, 0, 0);
}

/* posix_memalign(void **out, alignment, size): 0 and the block in *out */
SEC("uprobe")
int BPF_KPROBE(posix_memalign_in, __u64 out, __u64 alignment, __u64 size)
{
	(void)alignment;
	return alloc_begin(AC_OUT, size, 0, out);
}

/* The return of each of them: at the outermost, the block handed out, with the stack
 * of the caller it returns to (the registers are the caller's again). */
SEC("uretprobe")
int BPF_KRETPROBE(alloc_out, __u64 ret)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct ks_alloc_call *cp = bpf_map_lookup_elem(&in_alloc, &id);
	if (!cp)
		return 0;
	if (cp->depth > 1) {
		cp->depth--;
		return 0;
	}
	struct ks_alloc_call c = *cp;
	bpf_map_delete_elem(&in_alloc, &id);
	__u64 block = ret;
	if (c.kind == AC_OUT &&
	    (ret != 0 || bpf_probe_read_user(&block, sizeof(block), (void *)c.out) != 0))
		return 0;	/* posix_memalign failed */
	if (block)
		send_stacked(KS_ALLOC, id, block, (__s64)c.size, c.old);
	else if (c.kind == AC_REALLOC && c.old && !c.size)
		send(KS_FREE, id, c.old, 0, 0, 0);	/* realloc(p, 0) frees p */
	return 0;
}

/* free(ptr): the block goes at the call's entry, before any unmap the call makes. */
SEC("uprobe")
int BPF_KPROBE(free_in, __u64 ptr)
{
	__u64 id = bpf_get_current_pid_tgid();
	if (ptr && tracked(id >> 32) && !bpf_map_lookup_elem(&in_alloc, &id))
		send(KS_FREE, id, ptr, 0, 0, 0);
	return 0;
}

/* The CUDA driver's allocation calls under way, by thread: the outermost call's
 * arguments, and how deep (a driver entry point may call another). */
struct ks_gpu_call {
	__u32 depth;
	__u32 kind;	/* KP_GPU_PTR or KP_GPU_HANDLE */
	__u64 out;	/* where the call writes the block's address or handle */
	__u64 size;	/* bytes; with pitch, rows */
	__u64 pitch;	/* cuMemAllocPitch_v2: where it writes the row's bytes (0: none) */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u64);
	__type(value, struct ks_gpu_call);
} gpu_calls SEC(".maps");

static __always_inline int gpu_begin(__u64 out, __u64 size, __u64 pitch, __u32 kind)
{
	__u64 id = bpf_get_current_pid_tgid();
	if (!tracked(id >> 32))
		return 0;
	struct ks_gpu_call *c = bpf_map_lookup_elem(&gpu_calls, &id);
	if (c) {
		c->depth++;
		return 0;
	}
	struct ks_gpu_call n = { .depth = 1, .kind = kind, .out = out, .size = size,
				 .pitch = pitch };
	if (bpf_map_update_elem(&gpu_calls, &id, &n, BPF_ANY) < 0)
		__sync_fetch_and_add(&kstate.gpu_lost, 1);
	return 0;
}

/* The return of an allocation call: at the outermost, the block with its caller's
 * stack (the registers are the caller's again). */
SEC("uretprobe")
int BPF_KRETPROBE(gpu_out, int ret)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct ks_gpu_call *cp = bpf_map_lookup_elem(&gpu_calls, &id);
	if (!cp)
		return 0;
	if (cp->depth > 1) {
		cp->depth--;
		return 0;
	}
	struct ks_gpu_call c = *cp;
	bpf_map_delete_elem(&gpu_calls, &id);
	__u64 block = 0, pitch = 0, size = c.size;
	if (ret != 0 || !c.out || bpf_probe_read_user(&block, sizeof(block), (void *)c.out) != 0)
		return 0;
	if (c.pitch) {
		if (bpf_probe_read_user(&pitch, sizeof(pitch), (void *)c.pitch) != 0)
			return 0;
		size *= pitch;
	}
	if (block && size)
		send_stacked(KS_GPU_ALLOC, id, block, (__s64)size, c.kind);
	return 0;
}

static __always_inline int gpu_drop(__u64 block, __u32 kind)
{
	__u64 id = bpf_get_current_pid_tgid();
	if (block && tracked(id >> 32))
		send(KS_GPU_FREE, id, block, 0, kind, 0);
	return 0;
}

#include "bpf/cuda_entries.h"
