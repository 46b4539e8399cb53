/* The peak engine's loader: the skeleton of src/bpf/kpeak.bpf.c, built by clang and
 * bpftool (Makefile: HAVE_BPF), loaded with libbpf. */
#include "source/kpeak.h"
#include "base/parse.h"
#include "base/util.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifdef HAVE_BPF

#include <bpf/bpf.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/types.h>

#include "bpf/kpeak.h"
#include "bpf/kpeak.skel.h"
#include "source/cudaprobe.h"

_Static_assert(KPEAK_SPAN_SHIFT == KP_SPAN_SHIFT && KPEAK_SPANS == KP_SPANS,
	       "the span history's layout is the program's");


struct kpeak {
	struct kpeak_bpf *skel;
	struct ring_buffer *events;
	struct bpf_link *links[6];
	struct cuda_files gpu;	/* the GPU probes, on the driver files */
	struct kp_span *spans;		/* the total's history, mapped */
	int victims;			/* on_victim is attached */
	const struct kpeak_handlers *h;	/* while draining */
};

/* libbpf's last word, for why the load failed (libbpf speaks in lines). */
static char last_word[160];

static int quiet_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	char line[sizeof(last_word)];
	int n = vsnprintf(line, sizeof(line), fmt, ap);
	if (n > 1) {
		line[strcspn(line, "\n")] = 0;
		if (line[0])
			memcpy(last_word, line, sizeof(line));
	}
	return 0;
}

int kpeak_built(void)
{
	return 1;
}

int kpeak_refusal(int e, char *why, size_t n)
{
	char lock[128] = "";
	FILE *f = fopen("/sys/kernel/security/lockdown", "re");
	if (f) {
		if (!fgets(lock, sizeof(lock), f))
			lock[0] = 0;
		fclose(f);
	}
	if ((e == -EPERM || e == -EACCES) && strstr(lock, "[confidentiality]"))
		snprintf(why, n, "the kernel is locked down (confidentiality)");
	else if ((e == -EPERM || e == -EACCES) && geteuid() != 0)
		snprintf(why, n, "it needs root");
	else if (e == -EPERM || e == -EACCES)
		snprintf(why, n, "the kernel refused to load it: %s", strerror(-e));
	else
		snprintf(why, n, "%s%s%s", strerror(-e), last_word[0] ? ": " : "", last_word);
	return e;
}

/* Deletes the GPU probes' blocks of a process gone (tgid): its bytes left the totals
 * when it went (the program's gpu_retire), and the map must not fill with them. */
static void forget_gpu_blocks(struct kpeak *k, __u32 tgid)
{
	int fd = bpf_map__fd(k->skel->maps.gpu_blocks);
	struct kp_gpu_key key, next;
	int have = 0;
	while (bpf_map_get_next_key(fd, have ? &key : NULL, &next) == 0) {
		if (next.tgid == tgid && bpf_map_delete_elem(fd, &next) == 0)
			continue;	/* deleted: the walk goes on from the key before */
		key = next;
		have = 1;
	}
}

static int on_event(void *ctx, void *data, size_t len)
{
	struct kpeak *k = ctx;
	const __u32 *kind = data;
	const struct kpeak_handlers *h = k->h;
	if (len >= sizeof(struct kp_exit) && (*kind == KP_EXIT || *kind == KP_LEFT) &&
	    k->gpu.n)
		forget_gpu_blocks(k, ((const struct kp_exit *)data)->tgid);
	if (!h || len < sizeof(*kind))
		return 0;
	if (*kind == KP_EXIT && len >= sizeof(struct kp_exit) && h->exit) {
		const struct kp_exit *x = data;
		struct kpeak_exit e = { (pid_t)x->tgid, x->peak, (int64_t)x->peak_ns };
		h->exit(h->ctx, &e);
	} else if (*kind == KP_LEFT && len >= sizeof(struct kp_exit) && h->left) {
		const struct kp_exit *x = data;
		h->left(h->ctx, (pid_t)x->tgid, (int64_t)x->peak_ns);
	} else if (*kind == KP_VICTIM && len >= sizeof(struct kp_victim) && h->victim) {
		const struct kp_victim *x = data;
		uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
		struct kpeak_victim v;
		memset(&v, 0, sizeof(v));
		v.pid = (pid_t)x->tgid;
		v.uid = x->uid;
		v.at = (int64_t)x->at_ns;
		memcpy(v.comm, x->comm, sizeof(x->comm));
		v.comm[sizeof(v.comm) - 1] = 0;
		v.total_vm = x->total_vm * page;
		v.anon_rss = x->anon * page;
		v.file_rss = x->file * page;
		v.shmem_rss = x->shmem * page;
		v.pgtables = x->pgtables;
		v.oom_score_adj = x->oom_score_adj;
		h->victim(h->ctx, &v);
	}
	return 0;
}

/* Whether the kernel's oom:mark_victim has the arguments on_victim reads (task, uid):
 * Linux 6.8 and later. Before, it passed the pid alone. */
static int victim_args_known(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	if (!btf)
		return 0;
	int ok = 0;
	int id = btf__find_by_name_kind(btf, "btf_trace_mark_victim", BTF_KIND_TYPEDEF);
	const struct btf_type *t = id > 0 ? btf__type_by_id(btf, btf__resolve_type(btf, id)) : NULL;
	if (t && btf_is_ptr(t))
		t = btf__type_by_id(btf, t->type);
	if (t && btf_is_func_proto(t) && btf_vlen(t) == 3) {
		/* (void *ctx, struct task_struct *task, uid_t uid) */
		const struct btf_param *p = btf_params(t);
		const struct btf_type *a = btf__type_by_id(btf, btf__resolve_type(btf, p[1].type));
		if (a && btf_is_ptr(a)) {
			const struct btf_type *task = btf__type_by_id(btf, a->type);
			const char *name = task ? btf__name_by_offset(btf, task->name_off) : NULL;
			ok = name && strcmp(name, "task_struct") == 0;
		}
	}
	btf__free(btf);
	return ok;
}

int kpeak_open(struct kpeak **out, char *why, size_t whylen)
{
	*out = NULL;
	if (access("/sys/kernel/btf/vmlinux", R_OK) < 0) {
		snprintf(why, whylen, "the kernel has no BTF (/sys/kernel/btf/vmlinux)");
		return -ENOENT;
	}
	if (geteuid() != 0) {
		snprintf(why, whylen, "it needs root");
		return -EPERM;
	}
	libbpf_set_print(quiet_print);
	last_word[0] = 0;
	struct kpeak *k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	k->skel = kpeak_bpf__open();
	if (!k->skel) {
		free(k);
		return kpeak_refusal(-errno, why, whylen);
	}
	k->skel->rodata->page_size = (uint64_t)sysconf(_SC_PAGESIZE);
	k->victims = victim_args_known();
	bpf_program__set_autoload(k->skel->progs.on_victim, k->victims);
	int e = kpeak_bpf__load(k->skel);
	if (e < 0) {
		kpeak_bpf__destroy(k->skel);
		free(k);
		return kpeak_refusal(e, why, whylen);
	}
	/* Attached by name, so that a test can stand for a kernel without rss_stat. */
	const char *rss = getenv("RSSWATCH_TEST_KPEAK_TRACEPOINT");
	struct {
		struct bpf_program *prog;
		const char *tp;
	} at[] = {
		{ k->skel->progs.on_rss_stat, rss && *rss ? rss : "rss_stat" },
		{ k->skel->progs.on_fork, "sched_process_fork" },
		{ k->skel->progs.on_exec, "sched_process_exec" },
		{ k->skel->progs.on_exit, "sched_process_exit" },
		{ k->skel->progs.on_attach, "cgroup_attach_task" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(at); i++) {
		k->links[i] = bpf_program__attach_raw_tracepoint(at[i].prog, at[i].tp);
		if (!k->links[i]) {
			e = -errno;
			snprintf(why, whylen, "cannot attach to the tracepoint %s: %s", at[i].tp,
				 strerror(-e));
			kpeak_close(k);
			return e;
		}
	}
	/* The OOM killer's choices: without them, OOM kills are told from the kernel log
	 * alone, as without the engine. */
	if (k->victims) {
		const char *vt = getenv("RSSWATCH_TEST_KPEAK_VICTIM");	/* as rss above */
		k->links[5] = bpf_program__attach_raw_tracepoint(k->skel->progs.on_victim,
								 vt && *vt ? vt : "mark_victim");
		k->victims = k->links[5] != NULL;
	}
	void *m = mmap(NULL, sizeof(struct kp_span) * KP_SPANS, PROT_READ | PROT_WRITE,
		       MAP_SHARED, bpf_map__fd(k->skel->maps.spans), 0);
	if (m == MAP_FAILED) {
		e = -errno;
		snprintf(why, whylen, "cannot map its history: %s", strerror(-e));
		kpeak_close(k);
		return e;
	}
	k->spans = m;
	k->events = ring_buffer__new(bpf_map__fd(k->skel->maps.events), on_event, k, NULL);
	if (!k->events) {
		e = -errno;
		snprintf(why, whylen, "cannot read its ring buffer: %s", strerror(-e));
		kpeak_close(k);
		return e;
	}
	*out = k;
	return 0;
}

/* pid's file + anon + shmem bytes as its counters hold them now: statm's resident
 * field, the sum the program reads. */
static int resident_of(pid_t pid, uint64_t *bytes)
{
	char path[48], line[256];
	snprintf(path, sizeof(path), "/proc/%d/statm", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	int ok = fgets(line, sizeof(line), f) != NULL;
	fclose(f);
	char *sp = ok ? strchr(line, ' ') : NULL;
	uint64_t pages;
	if (!sp || parse_u64_n(sp + 1, strcspn(sp + 1, " \n"), &pages) < 0)
		return -ESRCH;	/* no memory lines: in its exit */
	*bytes = pages * (uint64_t)sysconf(_SC_PAGESIZE);
	return 0;
}

/* Adds v to the set's total (atomically, beside the programs), and raises its peak. */
static void add_to_total(struct kpeak *k, int64_t v)
{
	struct kp_state *s = &k->skel->bss->state;
	int64_t total = __atomic_add_fetch(&s->total, v, __ATOMIC_SEQ_CST);
	uint64_t old = __atomic_load_n(&s->peak, __ATOMIC_ACQUIRE);
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	while (total > 0 && (uint64_t)total > old)
		if (__atomic_compare_exchange_n(&s->peak, &old, (uint64_t)total, 0, __ATOMIC_SEQ_CST,
						__ATOMIC_ACQUIRE)) {
			__atomic_store_n(&s->peak_ns, (uint64_t)now.tv_sec * 1000000000u +
					 (uint64_t)now.tv_nsec, __ATOMIC_SEQ_CST);
			break;
		}
}

/* The process enters with its resident bytes now, counted in the total: the program
 * knows it from its next page change only (its mm is not known before), and a process
 * that changes none in a stage must count there too. Its first change then counts
 * the difference from this figure, and its exit takes the figure out.
 * The figure is in the total before the entry is made, so that an exit after the entry
 * takes out what was put in; an entry made for a process that had ended already (its
 * exit found no entry) is taken out again. */
int kpeak_track(struct kpeak *k, pid_t pid)
{
	__u32 key = (__u32)pid;
	int fd = bpf_map__fd(k->skel->maps.procs);
	struct kp_proc p;
	memset(&p, 0, sizeof(p));
	if (bpf_map_lookup_elem(fd, &key, &p) == 0)
		return 0;	/* tracked already (followed from its fork) */
	uint64_t bytes = 0;
	int e = resident_of(pid, &bytes);
	if (e == -ENOENT)
		return -ESRCH;
	if (e == 0) {
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		p.cur = p.peak = bytes;
		p.peak_ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
	}
	add_to_total(k, (int64_t)p.cur);
	if (bpf_map_update_elem(fd, &key, &p, BPF_NOEXIST) < 0) {
		e = errno == EEXIST ? 0 : errno == E2BIG ? -ENOSPC : -errno;
		add_to_total(k, -(int64_t)p.cur);
		return e;
	}
	if (kill(pid, 0) < 0 && errno == ESRCH && bpf_map_delete_elem(fd, &key) == 0)
		add_to_total(k, -(int64_t)p.cur);	/* it ended before the entry */
	return 0;
}

void kpeak_adopt_next_child(struct kpeak *k)
{
	__atomic_store_n(&k->skel->bss->state.adopt_tgid, (__u32)getpid(), __ATOMIC_SEQ_CST);
}

void kpeak_follow_forks(struct kpeak *k, int on)
{
	__atomic_store_n(&k->skel->bss->state.follow_forks, on ? 1u : 0u, __ATOMIC_SEQ_CST);
}

int kpeak_procs_fd(const struct kpeak *k)
{
	return bpf_map__fd(k->skel->maps.procs);
}

int kpeak_rises_to(struct kpeak *k, int prog_fd)
{
	__u32 slot = 0;
	int fd = bpf_map__fd(k->skel->maps.rises);
	__atomic_store_n(&k->skel->bss->state.rises, 0u, __ATOMIC_SEQ_CST);
	if (prog_fd < 0)
		return bpf_map_delete_elem(fd, &slot) < 0 && errno != ENOENT ? -errno : 0;
	if (bpf_map_update_elem(fd, &slot, &prog_fd, BPF_ANY) < 0)
		return -errno;
	__atomic_store_n(&k->skel->bss->state.rises, 1u, __ATOMIC_SEQ_CST);
	return 0;
}

/* The id of the hierarchy of this cgroup version, as /proc/self/cgroup numbers them: 0
 * for cgroup v2; for v1 the memory controller's. -1 when not found. */
static int hierarchy_of(int version)
{
	if (version == 2)
		return 0;
	FILE *f = fopen("/proc/self/cgroup", "re");
	if (!f)
		return -1;
	char line[512];
	int id = -1;
	while (id < 0 && fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':'), *e = c ? strchr(c + 1, ':') : NULL;
		if (!e)
			continue;
		*e = 0;
		char *save = NULL;
		uint64_t v;
		for (char *tok = strtok_r(c + 1, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
			if (strcmp(tok, "memory") == 0 && parse_u64_n(line, (size_t)(c - line), &v) == 0 &&
			    v <= INT32_MAX)
				id = (int)v;
	}
	fclose(f);
	return id;
}

int kpeak_watch_cgroup(struct kpeak *k, const char *dir, int version)
{
	struct stat st;
	if (stat(dir, &st) < 0)
		return -errno;
	int h = hierarchy_of(version);
	if (h < 0)
		return -ENOENT;
	struct kp_state *s = &k->skel->bss->state;
	__atomic_store_n(&s->cg_hierarchy, (__u32)h, __ATOMIC_SEQ_CST);
	__atomic_store_n(&s->cg_id, (__u64)st.st_ino, __ATOMIC_SEQ_CST);
	return 0;
}

/* The peak and its time are written one after the other by the kernel: read until
 * both stay the same across a read. */
static void read_pair(const __u64 *v, const __u64 *at, uint64_t *peak, int64_t *peak_at)
{
	__u64 a, b, t;
	for (int tries = 0; tries < 8; tries++) {
		a = __atomic_load_n(v, __ATOMIC_ACQUIRE);
		t = __atomic_load_n(at, __ATOMIC_ACQUIRE);
		b = __atomic_load_n(v, __ATOMIC_ACQUIRE);
		if (a == b)
			break;
	}
	*peak = b;
	*peak_at = (int64_t)t;
}

void kpeak_read(const struct kpeak *k, struct kpeak_figures *f)
{
	const struct kp_state *s = &k->skel->bss->state;
	read_pair(&s->peak, &s->peak_ns, &f->peak, &f->peak_at);
	f->total = __atomic_load_n(&s->total, __ATOMIC_ACQUIRE);
	f->events = __atomic_load_n(&s->events, __ATOMIC_RELAXED);
	f->dropped = __atomic_load_n(&s->dropped, __ATOMIC_RELAXED);
	f->lost = __atomic_load_n(&s->lost, __ATOMIC_RELAXED);
}

int kpeak_proc(const struct kpeak *k, pid_t pid, uint64_t *peak, int64_t *at)
{
	__u32 key = (__u32)pid;
	struct kp_proc p;
	if (bpf_map_lookup_elem(bpf_map__fd(k->skel->maps.procs), &key, &p) < 0)
		return -ENOENT;
	*peak = p.peak;
	*at = (int64_t)p.peak_ns;
	return 0;
}

int kpeak_drain(struct kpeak *k, const struct kpeak_handlers *h)
{
	k->h = h;
	int n = ring_buffer__consume(k->events);
	k->h = NULL;
	return n < 0 ? 0 : n;
}

int kpeak_span(const struct kpeak *k, int64_t n, struct kpeak_span *out)
{
	const struct kp_span *s = &k->spans[(uint64_t)n & (KP_SPANS - 1)];
	__u64 want = (__u64)n + 1, had = __atomic_load_n(&s->n, __ATOMIC_ACQUIRE);
	if (had < want)
		return 0;	/* the slot still holds an older span: none changed in n */
	if (had > want)
		return -ESTALE;
	uint64_t peak = __atomic_load_n(&s->peak, __ATOMIC_ACQUIRE);
	__u64 at = __atomic_load_n(&s->peak_ns, __ATOMIC_ACQUIRE);
	int64_t last = __atomic_load_n(&s->last, __ATOMIC_ACQUIRE);
	if (__atomic_load_n(&s->n, __ATOMIC_ACQUIRE) != want)
		return -ESTALE;	/* a newer span took the slot while it was read */
	out->last = last;
	if ((int64_t)(at >> KP_SPAN_SHIFT) == n && peak >= (uint64_t)(last > 0 ? last : 0)) {
		out->peak = peak;
		out->peak_at = (int64_t)at;
	} else {	/* the claim raced: the older span's peak was left */
		out->peak = last > 0 ? (uint64_t)last : 0;
		out->peak_at = 0;
	}
	return 1;
}

int kpeak_sees_victims(const struct kpeak *k)
{
	return k->victims;
}

int kpeak_gpu_attach(struct kpeak *k, int fd, char *why, size_t whylen)
{
	/* the return of every entry point: an allocation's block counts, a call ends */
	struct kpeak_bpf *b = k->skel;
	struct bpf_program *const in[CUDA_CALLS] = {
		[CUDA_ALLOC] = b->progs.gpu_alloc_in, [CUDA_PITCH] = b->progs.gpu_pitch_in,
		[CUDA_CREATE] = b->progs.gpu_create_in, [CUDA_FREE] = b->progs.gpu_free_in,
		[CUDA_RELEASE] = b->progs.gpu_release_in,
	};
	struct bpf_program *const out[CUDA_CALLS] = {
		b->progs.gpu_out, b->progs.gpu_out, b->progs.gpu_out, b->progs.gpu_out,
		b->progs.gpu_out,
	};
	return cuda_files_attach(&k->gpu, fd, in, out, why, whylen);
}

int kpeak_gpu_files(const struct kpeak *k)
{
	return k->gpu.n;
}

void kpeak_gpu_read(const struct kpeak *k, struct kpeak_gpu *g)
{
	const struct kp_gpu *s = &k->skel->bss->state.gpu;
	/* calls first and inflight after: a call begun between them shows in either */
	g->calls = __atomic_load_n(&s->calls, __ATOMIC_SEQ_CST);
	g->inflight = __atomic_load_n(&s->inflight, __ATOMIC_SEQ_CST);
	g->live = __atomic_load_n(&s->live, __ATOMIC_SEQ_CST);
	read_pair(&s->peak, &s->peak_ns, &g->peak, &g->peak_at);
	g->blocks = __atomic_load_n(&s->blocks, __ATOMIC_RELAXED);
	g->dropped = __atomic_load_n(&s->dropped, __ATOMIC_RELAXED);
}

void kpeak_gpu_window(struct kpeak *k, uint64_t *high, int64_t *at)
{
	struct kp_gpu *s = &k->skel->bss->state.gpu;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	__u64 now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	int64_t live = __atomic_load_n(&s->live, __ATOMIC_SEQ_CST);
	__u64 level = live > 0 ? (__u64)live : 0;
	__u64 t = __atomic_load_n(&s->win_ns, __ATOMIC_SEQ_CST);
	__u64 h = __atomic_exchange_n(&s->win, level, __ATOMIC_SEQ_CST);
	__atomic_store_n(&s->win_ns, now, __ATOMIC_SEQ_CST);
	if (h < level) {	/* it rose after the live total was read */
		h = level;
		t = now;
	}
	*high = h;
	*at = (int64_t)t;
}

/* Deletes every key of a map; returns how many were deleted. */
static int clear_map(int fd, size_t keylen)
{
	char key[sizeof(struct kp_gpu_key)], next[sizeof(struct kp_gpu_key)];
	int n = 0;
	while (bpf_map_get_next_key(fd, NULL, next) == 0) {
		memcpy(key, next, keylen);
		if (bpf_map_delete_elem(fd, key) == 0)
			n++;
		else if (errno != ENOENT)	/* ENOENT: it ended meanwhile */
			break;
	}
	return n;
}

void kpeak_reset(struct kpeak *k)
{
	struct kp_state *s = &k->skel->bss->state;
	__atomic_store_n(&s->follow_forks, 0u, __ATOMIC_SEQ_CST);
	__atomic_store_n(&s->adopt_tgid, 0u, __ATOMIC_SEQ_CST);
	__atomic_store_n(&s->cg_id, 0, __ATOMIC_SEQ_CST);
	int procs = bpf_map__fd(k->skel->maps.procs), mms = bpf_map__fd(k->skel->maps.mms);
	int blocks = bpf_map__fd(k->skel->maps.gpu_blocks);
	int calls = bpf_map__fd(k->skel->maps.gpu_calls);
	int n = clear_map(procs, sizeof(__u32)) + clear_map(mms, sizeof(__u64)) +
		clear_map(blocks, sizeof(struct kp_gpu_key)) + clear_map(calls, sizeof(__u64));
	/* A program that found an entry just before it went may still add to the total:
	 * programs run under RCU, and MEMBARRIER_CMD_GLOBAL waits for a grace period
	 * (synchronize_rcu), after which none of them is left. */
	if (n > 0) {
		if (syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) < 0)
			usleep(20 * 1000);	/* no membarrier: tens of ms outlast any program */
		clear_map(procs, sizeof(__u32));
		clear_map(mms, sizeof(__u64));
		clear_map(blocks, sizeof(struct kp_gpu_key));
		clear_map(calls, sizeof(__u64));
	}
	ring_buffer__consume(k->events);	/* k->h is NULL: the last run's records go */
	memset(k->spans, 0, sizeof(struct kp_span) * KP_SPANS);
	__atomic_store_n(&s->total, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&s->peak, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&s->peak_ns, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&s->events, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&s->dropped, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&s->lost, 0, __ATOMIC_SEQ_CST);
	memset(&s->gpu, 0, sizeof(s->gpu));
}

void kpeak_close(struct kpeak *k)
{
	if (!k)
		return;
	ring_buffer__free(k->events);
	if (k->spans)
		munmap(k->spans, sizeof(struct kp_span) * KP_SPANS);
	for (size_t i = 0; i < ARRAY_SIZE(k->links); i++)
		bpf_link__destroy(k->links[i]);
	cuda_files_close(&k->gpu);
	kpeak_bpf__destroy(k->skel);
	free(k);
}

#else /* !HAVE_BPF */

struct kpeak {
	int unused;
};

int kpeak_built(void)
{
	return 0;
}

int kpeak_open(struct kpeak **out, char *why, size_t whylen)
{
	*out = NULL;
	snprintf(why, whylen, "this rsswatch was built without it (no clang, bpftool or "
		 "libbpf at build time)");
	return -ENOSYS;
}

int kpeak_track(struct kpeak *k, pid_t pid)
{
	(void)k;
	(void)pid;
	return -ENOSYS;
}

void kpeak_adopt_next_child(struct kpeak *k)
{
	(void)k;
}

void kpeak_follow_forks(struct kpeak *k, int on)
{
	(void)k;
	(void)on;
}

int kpeak_procs_fd(const struct kpeak *k)
{
	(void)k;
	return -ENOSYS;
}

int kpeak_rises_to(struct kpeak *k, int prog_fd)
{
	(void)k;
	(void)prog_fd;
	return -ENOSYS;
}

int kpeak_watch_cgroup(struct kpeak *k, const char *dir, int version)
{
	(void)k;
	(void)dir;
	(void)version;
	return -ENOSYS;
}

void kpeak_read(const struct kpeak *k, struct kpeak_figures *f)
{
	(void)k;
	memset(f, 0, sizeof(*f));
}

int kpeak_proc(const struct kpeak *k, pid_t pid, uint64_t *peak, int64_t *at)
{
	(void)k;
	(void)pid;
	*peak = 0;
	*at = 0;
	return -ENOENT;
}

int kpeak_drain(struct kpeak *k, const struct kpeak_handlers *h)
{
	(void)k;
	(void)h;
	return 0;
}

int kpeak_span(const struct kpeak *k, int64_t n, struct kpeak_span *s)
{
	(void)k;
	(void)n;
	(void)s;
	return -ESTALE;
}

int kpeak_sees_victims(const struct kpeak *k)
{
	(void)k;
	return 0;
}

int kpeak_gpu_attach(struct kpeak *k, int fd, char *why, size_t whylen)
{
	(void)k;
	(void)fd;
	snprintf(why, whylen, "this rsswatch was built without the eBPF engine");
	return -ENOSYS;
}

int kpeak_gpu_files(const struct kpeak *k)
{
	(void)k;
	return 0;
}

void kpeak_gpu_read(const struct kpeak *k, struct kpeak_gpu *g)
{
	(void)k;
	memset(g, 0, sizeof(*g));
}

void kpeak_gpu_window(struct kpeak *k, uint64_t *high, int64_t *at)
{
	(void)k;
	*high = 0;
	*at = 0;
}

void kpeak_reset(struct kpeak *k)
{
	(void)k;
}

void kpeak_close(struct kpeak *k)
{
	(void)k;
}

#endif
