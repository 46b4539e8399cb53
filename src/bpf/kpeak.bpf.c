// SPDX-License-Identifier: GPL-2.0
/* The peak engine's kernel side: every change of a tracked process's resident pages
 * (the raw tracepoint rss_stat), its fork, exec and exit. It keeps each process's
 * highest file + anon + shmem and the set's highest total, with the kernel's time of
 * each, in global data that the recorder reads at its samples: nothing is sent to
 * user space per page. A tracked process's end, and the OOM killer's choice of one
 * (oom:mark_victim), go to user space through a ring buffer.
 *
 * CO-RE: the few kernel fields read are declared here with preserve_access_index, and
 * libbpf relocates them against the running kernel's BTF. The counters are the mm's
 * percpu_counter (Linux 6.2+): their count, read without the lock, as VmRSS reads it. */
#include <linux/types.h>
#include <linux/bpf.h>
#include <asm/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "bpf/kpeak.h"

char LICENSE[] SEC("license") = "GPL";

struct percpu_counter {
	__s64 count;
} __attribute__((preserve_access_index));

struct atomic_t_ {
	int counter;
};

struct atomic_long_t_ {
	long counter;
};

struct mm_struct {
	struct percpu_counter rss_stat[4];	/* file, anon, swap, shmem */
	unsigned long total_vm;
	struct atomic_long_t_ pgtables_bytes;
} __attribute__((preserve_access_index));

struct signal_struct {
	struct atomic_t_ live;
	short oom_score_adj;
} __attribute__((preserve_access_index));

struct kernfs_node {
	__u64 id;
} __attribute__((preserve_access_index));

struct cgroup_root {
	int hierarchy_id;
} __attribute__((preserve_access_index));

struct cgroup;

struct cgroup_subsys_state {
	struct cgroup *cgroup;
	struct cgroup_subsys_state *parent;
} __attribute__((preserve_access_index));

struct cgroup {
	struct cgroup_subsys_state self;
	struct kernfs_node *kn;
	struct cgroup_root *root;
} __attribute__((preserve_access_index));

struct task_struct {
	int pid;
	int tgid;
	struct mm_struct *mm;
	struct signal_struct *signal;
	char comm[16];
} __attribute__((preserve_access_index));

enum { MM_FILE, MM_ANON, MM_SWAP, MM_SHMEM };

const volatile __u64 page_size = 4096;

struct kp_state state;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768);
	__type(key, __u32);		/* tgid */
	__type(value, struct kp_proc);
} procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768);
	__type(key, __u64);		/* mm */
	__type(value, __u32);		/* the tgid it is counted for */
} mms SEC(".maps");

/* The total's history, mapped by the recorder (kpeak.h: struct kp_span). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, KP_SPANS);
	__type(key, __u32);
	__type(value, struct kp_span);
} spans SEC(".maps");

/* The GPU probes: each block the driver handed a tracked process, and each call to it
 * under way, by thread. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct kp_gpu_key);
	__type(value, struct kp_gpu_block);
} gpu_blocks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u64);		/* pid_tgid: the calling thread */
	__type(value, struct kp_gpu_call);
} gpu_calls SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

/* The program a change of a process's pages past its fault_next goes on to, by a tail
 * call (state.rises): the stacks' faults mode (kstacks.bpf.c: on_rise), put here by its
 * loader. Its test rides on this program's lookups, so the mode adds no program of its
 * own to every page change. */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} rises SEC(".maps");

static __always_inline __u64 positive(__s64 v)
{
	return v > 0 ? (__u64)v : 0;
}

/* Constant indices: CO-RE relocates an element's offset, not a variable index's
 * stride (the kernel's percpu_counter is larger than the one declared here). */
static __always_inline __u64 resident(struct mm_struct *mm)
{
	return (positive(BPF_CORE_READ(mm, rss_stat[MM_FILE].count)) +
		positive(BPF_CORE_READ(mm, rss_stat[MM_ANON].count)) +
		positive(BPF_CORE_READ(mm, rss_stat[MM_SHMEM].count))) * page_size;
}

/* Notes that a tracked process changed: written once, so that no CPU writes a line
 * shared by all of them at every fault (a count here cost 16 faulting threads dearly). */
static __always_inline void seen_event(void)
{
	if (!state.events)
		state.events = 1;
}

/* Raises *peak to v (at now) when v is higher; a lost race leaves the other CPU's. */
static __always_inline void raise(__u64 *peak, __u64 *peak_ns, __u64 v, __u64 now)
{
	__u64 old = *peak;
	if (v > old && __sync_val_compare_and_swap(peak, old, v) == old)
		*peak_ns = now;
}

/* The total is now total (at now): its span's peak and last value follow. The first
 * change in a span claims its slot; a CPU that raced the claim may leave the peak of
 * the slot's older span, which the reader tells by its time. */
static __always_inline void note_span(__s64 total, __u64 now)
{
	__u64 n = (now >> KP_SPAN_SHIFT) + 1;
	__u32 key = (__u32)((now >> KP_SPAN_SHIFT) & (KP_SPANS - 1));
	struct kp_span *s = bpf_map_lookup_elem(&spans, &key);
	if (!s)
		return;
	__u64 v = total > 0 ? (__u64)total : 0;
	__u64 old = *(volatile __u64 *)&s->n;
	if (old != n) {
		if (__sync_val_compare_and_swap(&s->n, old, n) == old) {
			s->peak = v;
			s->peak_ns = now;
		}
	} else {
		raise(&s->peak, &s->peak_ns, v, now);
	}
	s->last = total;
}

/* p's resident bytes are now bytes: its peak, the set's total and its peaks follow. */
static __always_inline void count(struct kp_proc *p, __u64 bytes)
{
	/* The counters' shared count moves only when a CPU's batch of pages is folded in
	 * (percpu_counter): most events find it as the last one left it, and change
	 * nothing. Read, not written, their line stays shared by the CPUs. */
	if (*(volatile __u64 *)&p->cur == bytes)
		return;
	__u64 now = bpf_ktime_get_ns();
	__u64 old = __sync_lock_test_and_set(&p->cur, bytes);
	__s64 total = __sync_fetch_and_add(&state.total, (__s64)(bytes - old)) +
		      (__s64)(bytes - old);
	raise(&p->peak, &p->peak_ns, bytes, now);
	if (total > 0) {
		raise(&state.peak, &state.peak_ns, (__u64)total, now);
	}
	note_span(total, now);
}

/* p no longer counts mm (it exec'd, or ended): its bytes leave the total. */
static __always_inline void retire(struct kp_proc *p, __u32 tgid)
{
	__u64 mm = p->mm;
	if (mm) {
		__u32 *owner = bpf_map_lookup_elem(&mms, &mm);
		if (owner && *owner == tgid)
			bpf_map_delete_elem(&mms, &mm);
	}
	p->mm = 0;
	__u64 old = __sync_lock_test_and_set(&p->cur, 0);
	if (old)
		note_span(__sync_fetch_and_add(&state.total, -(__s64)old) - (__s64)old,
			  bpf_ktime_get_ns());
}

/* p's device bytes change by delta (at now): the set's
 * total of them and its highs (the GPU probes, below). */
static __always_inline void gpu_count(struct kp_proc *p, __s64 delta)
{
	__u64 now = bpf_ktime_get_ns();
	__sync_fetch_and_add(&p->gpu_cur, delta);
	__s64 live = __sync_fetch_and_add(&state.gpu.live, delta) + delta;
	if (live > 0) {
		raise(&state.gpu.peak, &state.gpu.peak_ns, (__u64)live, now);
		raise(&state.gpu.win, &state.gpu.win_ns, (__u64)live, now);
	}
}

/* p's device memory is gone (its image ended: the driver frees a context's memory with
 * it), and so are its calls under way. */
static __always_inline void gpu_retire(struct kp_proc *p)
{
	p->image++;
	__s64 inflight = __sync_lock_test_and_set(&p->gpu_inflight, 0);
	if (inflight)
		__sync_fetch_and_sub(&state.gpu.inflight, inflight);
	__s64 held = *(volatile __s64 *)&p->gpu_cur;
	if (held)
		gpu_count(p, -held);
}

/* p counts mm from now on, starting from its counters as they are. */
static __always_inline void take(struct kp_proc *p, __u32 tgid, struct mm_struct *mm)
{
	__u64 key = (__u64)mm;
	if (!mm)
		return;
	if (bpf_map_update_elem(&mms, &key, &tgid, BPF_ANY) < 0) {
		__sync_fetch_and_add(&state.dropped, 1);
		return;
	}
	p->mm = key;
	count(p, resident(mm));
}

SEC("raw_tracepoint/rss_stat")
int on_rss_stat(struct bpf_raw_tracepoint_args *ctx)
{
	struct mm_struct *mm = (struct mm_struct *)ctx->args[0];
	__u64 key = (__u64)mm;
	__u32 tgid;
	struct kp_proc *p;
	__u32 *owner = bpf_map_lookup_elem(&mms, &key);
	if (owner) {
		tgid = *owner;
		p = bpf_map_lookup_elem(&procs, &tgid);
		if (!p || p->mm != key)
			return 0;
		seen_event();
		count(p, resident(mm));
	} else {
		/* an mm not known yet: the current process's own, if it is tracked (its
		 * first change, as one attached or a child that shared its parent's) */
		tgid = bpf_get_current_pid_tgid() >> 32;
		p = bpf_map_lookup_elem(&procs, &tgid);
		if (!p || (p->flags & KP_WAIT_EXEC))
			return 0;
		struct task_struct *t = (struct task_struct *)bpf_get_current_task();
		if ((__u64)BPF_CORE_READ(t, mm) != key)
			return 0;	/* another mm: a child's copy being made by a fork */
		if (p->mm)
			retire(p, tgid);
		seen_event();
		take(p, tgid, mm);
	}
	if (state.rises && *(volatile __u64 *)&p->cur >= *(volatile __u64 *)&p->fault_next)
		bpf_tail_call(ctx, &rises, 0);
	return 0;
}

SEC("raw_tracepoint/sched_process_fork")
int on_fork(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *parent = (struct task_struct *)ctx->args[0];
	struct task_struct *child = (struct task_struct *)ctx->args[1];
	__u32 ptgid = BPF_CORE_READ(parent, tgid);
	__u32 tgid = BPF_CORE_READ(child, tgid);
	if (tgid != (__u32)BPF_CORE_READ(child, pid))
		return 0;	/* a thread: it shares its process's mm */
	struct kp_proc fresh = {};
	if (state.adopt_tgid && state.adopt_tgid == ptgid) {
		state.adopt_tgid = 0;
		fresh.flags = KP_WAIT_EXEC;
	} else if (!state.follow_forks || !bpf_map_lookup_elem(&procs, &ptgid)) {
		return 0;
	}
	if (bpf_map_update_elem(&procs, &tgid, &fresh, BPF_NOEXIST) < 0) {
		__sync_fetch_and_add(&state.dropped, 1);
		return 0;
	}
	if (fresh.flags & KP_WAIT_EXEC)
		return 0;
	struct kp_proc *p = bpf_map_lookup_elem(&procs, &tgid);
	struct mm_struct *mm = BPF_CORE_READ(child, mm);
	/* a vfork or CLONE_VM child shares its parent's mm: counted once, for the parent */
	if (p && mm && mm != BPF_CORE_READ(parent, mm))
		take(p, tgid, mm);
	return 0;
}

SEC("raw_tracepoint/sched_process_exec")
int on_exec(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *t = (struct task_struct *)ctx->args[0];
	__u32 tgid = BPF_CORE_READ(t, tgid);
	struct kp_proc *p = bpf_map_lookup_elem(&procs, &tgid);
	if (!p)
		return 0;
	p->flags &= ~KP_WAIT_EXEC;
	retire(p, tgid);
	gpu_retire(p);
	p->fault_next = 0;	/* a new image: its own highest */
	take(p, tgid, BPF_CORE_READ(t, mm));
	return 0;
}

SEC("raw_tracepoint/sched_process_exit")
int on_exit(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *t = (struct task_struct *)ctx->args[0];
	if (BPF_CORE_READ(t, signal, live.counter) != 0)
		return 0;	/* not the process's last thread */
	__u32 tgid = BPF_CORE_READ(t, tgid);
	struct kp_proc *p = bpf_map_lookup_elem(&procs, &tgid);
	if (!p)
		return 0;
	retire(p, tgid);
	gpu_retire(p);
	struct kp_exit *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (e) {
		e->kind = KP_EXIT;
		e->tgid = tgid;
		e->peak = p->peak;
		e->peak_ns = p->peak_ns;
		bpf_ringbuf_submit(e, 0);
	} else {
		__sync_fetch_and_add(&state.lost, 1);
	}
	bpf_map_delete_elem(&procs, &tgid);
	return 0;
}

/* The OOM killer chose a process (before its kill line is printed): a tracked one's
 * figures, as the line gives them. Its arguments are (task, uid) since Linux 6.8; the
 * loader leaves this program out where the kernel's differ (kpeak.c). */
SEC("raw_tracepoint/mark_victim")
int on_victim(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *t = (struct task_struct *)ctx->args[0];
	__u32 tgid = BPF_CORE_READ(t, tgid);
	if (!bpf_map_lookup_elem(&procs, &tgid))
		return 0;
	struct kp_victim *v = bpf_ringbuf_reserve(&events, sizeof(*v), 0);
	if (!v) {
		__sync_fetch_and_add(&state.lost, 1);
		return 0;
	}
	v->kind = KP_VICTIM;
	v->tgid = tgid;
	v->at_ns = bpf_ktime_get_ns();
	v->uid = (__u32)ctx->args[1];
	v->oom_score_adj = BPF_CORE_READ(t, signal, oom_score_adj);
	BPF_CORE_READ_STR_INTO(&v->comm, t, comm);
	struct mm_struct *mm = BPF_CORE_READ(t, mm);
	v->total_vm = 0;
	v->anon = v->file = v->shmem = v->pgtables = 0;
	if (mm) {
		v->total_vm = BPF_CORE_READ(mm, total_vm);
		v->file = positive(BPF_CORE_READ(mm, rss_stat[MM_FILE].count));
		v->anon = positive(BPF_CORE_READ(mm, rss_stat[MM_ANON].count));
		v->shmem = positive(BPF_CORE_READ(mm, rss_stat[MM_SHMEM].count));
		v->pgtables = positive(BPF_CORE_READ(mm, pgtables_bytes.counter));
	}
	bpf_ringbuf_submit(v, 0);
	return 0;
}

/* Whether cgroup c is the watched cgroup or below it: 1 or 0; -1 when c is of another
 * hierarchy (a cgroup v1 controller other than the watched one's). */
static __always_inline int in_watched(struct cgroup *c)
{
	if (BPF_CORE_READ(c, root, hierarchy_id) != (int)state.cg_hierarchy)
		return -1;
	for (int i = 0; i < 32 && c; i++) {
		if (BPF_CORE_READ(c, kn, id) == state.cg_id)
			return 1;
		c = BPF_CORE_READ(c, self.parent, cgroup);
	}
	return 0;
}

/* A task moved to cgroup dst (cgroup.procs written): a process moved into the watched
 * cgroup is tracked from now, with its counters as they are; one moved out leaves the
 * total. Arguments: (dst_cgrp, path, task, threadgroup). */
SEC("raw_tracepoint/cgroup_attach_task")
int on_attach(struct bpf_raw_tracepoint_args *ctx)
{
	if (!state.cg_id)
		return 0;
	struct cgroup *dst = (struct cgroup *)ctx->args[0];
	struct task_struct *t = (struct task_struct *)ctx->args[2];
	int in = in_watched(dst);
	if (in < 0)
		return 0;
	__u32 tgid = BPF_CORE_READ(t, tgid);
	struct kp_proc *p = bpf_map_lookup_elem(&procs, &tgid);
	if (in && !p) {
		struct kp_proc fresh = {};
		if (bpf_map_update_elem(&procs, &tgid, &fresh, BPF_NOEXIST) < 0) {
			__sync_fetch_and_add(&state.dropped, 1);
			return 0;
		}
		p = bpf_map_lookup_elem(&procs, &tgid);
		if (p)
			take(p, tgid, BPF_CORE_READ(t, mm));
	} else if (!in && p) {
		retire(p, tgid);
		gpu_retire(p);
		struct kp_exit *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
		if (e) {
			e->kind = KP_LEFT;
			e->tgid = tgid;
			e->peak = p->peak;
			e->peak_ns = bpf_ktime_get_ns();
			bpf_ringbuf_submit(e, 0);
		} else {
			__sync_fetch_and_add(&state.lost, 1);
		}
		bpf_map_delete_elem(&procs, &tgid);
	}
	return 0;
}

/* The GPU probes: uprobes on the CUDA driver's allocation entry points (attached by
 * source/kpeak.c to the libcuda.so the targets map), for the device bytes each tracked
 * process holds from it. An allocation counts at its return, when the driver has
 * written the new block's address (or handle) and said CUDA_SUCCESS (0); a free at its
 * entry. Every call of a tracked process is counted in gpu.calls at its entry and its
 * return, and in gpu.inflight between them, for the recorder's reads of the driver's
 * own figure (NVML): one read while a call was under way is not used to anchor the
 * probes' figure. */

/* The calling process, where it is tracked (and not waiting for its exec). */
static __always_inline struct kp_proc *gpu_caller(__u32 *tgid)
{
	*tgid = bpf_get_current_pid_tgid() >> 32;
	struct kp_proc *p = bpf_map_lookup_elem(&procs, tgid);
	return p && !(p->flags & KP_WAIT_EXEC) ? p : NULL;
}

/* A call of tracked process p begins: noted, for its return. */
static __always_inline void gpu_note_call(struct kp_proc *p, __u64 out, __u64 size, __u64 pitch,
					  __u32 kind)
{
	__u64 thread = bpf_get_current_pid_tgid();
	struct kp_gpu_call c = { out, size, pitch, kind, 0 };
	if (bpf_map_update_elem(&gpu_calls, &thread, &c, BPF_ANY) < 0)
		return;
	__sync_fetch_and_add(&p->gpu_inflight, 1);
	__sync_fetch_and_add(&state.gpu.inflight, 1);
	__sync_fetch_and_add(&state.gpu.calls, 1);
}

/* An allocation of a tracked process begins. */
static __always_inline int gpu_begin(__u64 out, __u64 size, __u64 pitch, __u32 kind)
{
	__u32 tgid;
	struct kp_proc *p = gpu_caller(&tgid);
	if (p)
		gpu_note_call(p, out, size, pitch, kind);
	return 0;
}

/* A block goes: its bytes leave the totals at once (the driver's figure drops during
 * the call, which stays under way until its return). */
static __always_inline int gpu_drop(__u64 addr, __u32 kind)
{
	__u32 tgid;
	struct kp_proc *p = gpu_caller(&tgid);
	if (!p)
		return 0;
	gpu_note_call(p, 0, 0, 0, kind);
	struct kp_gpu_key key = { tgid, (__u16)kind, (__u16)p->image, addr };
	struct kp_gpu_block *b = bpf_map_lookup_elem(&gpu_blocks, &key);
	if (!b)
		return 0;	/* not seen allocated: before the probes, or not a block */
	__u64 size = b->size;
	if (bpf_map_delete_elem(&gpu_blocks, &key) == 0)
		gpu_count(p, -(__s64)size);
	return 0;
}

#include "bpf/cuda_entries.h"

/* The return of every probed entry point (CUresult): an allocation's block counts. */
SEC("uretprobe")
int BPF_KRETPROBE(gpu_out, int ret)
{
	__u64 thread = bpf_get_current_pid_tgid();
	struct kp_gpu_call *cp = bpf_map_lookup_elem(&gpu_calls, &thread);
	if (!cp)
		return 0;
	struct kp_gpu_call c = *cp;
	bpf_map_delete_elem(&gpu_calls, &thread);
	__u32 tgid = thread >> 32;
	struct kp_proc *p = bpf_map_lookup_elem(&procs, &tgid);
	__u64 addr = 0, size = c.size, pitch = 0;
	if (p && ret == 0 && c.out && bpf_probe_read_user(&addr, sizeof(addr), (void *)c.out) == 0) {
		if (c.pitch && bpf_probe_read_user(&pitch, sizeof(pitch), (void *)c.pitch) == 0)
			size *= pitch;
		else if (c.pitch)
			size = 0;
		struct kp_gpu_key key = { tgid, (__u16)c.kind, (__u16)p->image, addr };
		struct kp_gpu_block b = { size };
		struct kp_gpu_block *had = bpf_map_lookup_elem(&gpu_blocks, &key);
		if (!size || !addr) {
			/* nothing handed out */
		} else if (had) {	/* an address whose free was not seen */
			__s64 delta = (__s64)size - (__s64)had->size;
			had->size = size;
			gpu_count(p, delta);
		} else if (bpf_map_update_elem(&gpu_blocks, &key, &b, BPF_NOEXIST) == 0) {
			gpu_count(p, (__s64)size);
			__sync_fetch_and_add(&state.gpu.blocks, 1);
		} else {
			__sync_fetch_and_add(&state.gpu.dropped, 1);
		}
	}
	if (p && *(volatile __s64 *)&p->gpu_inflight > 0) {
		__sync_fetch_and_sub(&p->gpu_inflight, 1);
		__sync_fetch_and_sub(&state.gpu.inflight, 1);
	}
	__sync_fetch_and_add(&state.gpu.calls, 1);
	return 0;
}
