/* The peak engine's loader: the skeleton of src/bpf/kpeak.bpf.c, built by clang and
 * bpftool (Makefile: HAVE_BPF), loaded with libbpf. */
#include "source/kpeak.h"
#include "base/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef HAVE_BPF

#include <bpf/bpf.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <bpf/libbpf.h>
#include <linux/types.h>

#include "bpf/kpeak.h"
#include "bpf/kpeak.skel.h"

struct kpeak {
	struct kpeak_bpf *skel;
	struct ring_buffer *exits;
	struct bpf_link *links[4];
	void (*fn)(void *ctx, const struct kpeak_exit *x);
	void *ctx;
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

/* Why the kernel would not take the program, where it can be told. */
static int refusal(int e, char *why, size_t n)
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
		snprintf(why, n, "it needs root (CAP_BPF and CAP_PERFMON)");
	else if (e == -EPERM || e == -EACCES)
		snprintf(why, n, "the kernel refused to load it: %s", strerror(-e));
	else
		snprintf(why, n, "%s%s%s", strerror(-e), last_word[0] ? ": " : "", last_word);
	return e;
}

static int on_exit_record(void *ctx, void *data, size_t len)
{
	struct kpeak *k = ctx;
	const struct kp_exit *x = data;
	if (len < sizeof(*x) || !k->fn)
		return 0;
	struct kpeak_exit e = { (pid_t)x->tgid, x->peak, (int64_t)x->peak_ns };
	k->fn(k->ctx, &e);
	return 0;
}

int kpeak_open(struct kpeak **out, char *why, size_t whylen)
{
	*out = NULL;
	if (access("/sys/kernel/btf/vmlinux", R_OK) < 0) {
		snprintf(why, whylen, "the kernel has no BTF (/sys/kernel/btf/vmlinux)");
		return -ENOENT;
	}
	if (geteuid() != 0) {
		snprintf(why, whylen, "it needs root (CAP_BPF and CAP_PERFMON)");
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
		return refusal(-errno, why, whylen);
	}
	k->skel->rodata->page_size = (uint64_t)sysconf(_SC_PAGESIZE);
	int e = kpeak_bpf__load(k->skel);
	if (e < 0) {
		kpeak_bpf__destroy(k->skel);
		free(k);
		return refusal(e, why, whylen);
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
	k->exits = ring_buffer__new(bpf_map__fd(k->skel->maps.exits), on_exit_record, k, NULL);
	if (!k->exits) {
		e = -errno;
		snprintf(why, whylen, "cannot read its ring buffer: %s", strerror(-e));
		kpeak_close(k);
		return e;
	}
	*out = k;
	return 0;
}

int kpeak_track(struct kpeak *k, pid_t pid)
{
	__u32 key = (__u32)pid;
	struct kp_proc p;
	memset(&p, 0, sizeof(p));
	if (bpf_map_update_elem(bpf_map__fd(k->skel->maps.procs), &key, &p, BPF_NOEXIST) < 0)
		return errno == EEXIST ? 0 : errno == E2BIG ? -ENOSPC : -errno;
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
}

void kpeak_take_window(struct kpeak *k, uint64_t *peak, int64_t *at)
{
	struct kp_state *s = &k->skel->bss->state;
	read_pair(&s->win_peak, &s->win_peak_ns, peak, at);
	__s64 total = __atomic_load_n(&s->total, __ATOMIC_ACQUIRE);
	__atomic_store_n(&s->win_peak, total > 0 ? (__u64)total : 0, __ATOMIC_RELEASE);
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

int kpeak_drain_exits(struct kpeak *k, void (*fn)(void *ctx, const struct kpeak_exit *x),
		      void *ctx)
{
	k->fn = fn;
	k->ctx = ctx;
	int n = ring_buffer__consume(k->exits);
	k->fn = NULL;
	return n < 0 ? 0 : n;
}

/* Deletes every key of a map; returns how many were deleted. */
static int clear_map(int fd, size_t keylen)
{
	char key[8], next[8];
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
	int procs = bpf_map__fd(k->skel->maps.procs), mms = bpf_map__fd(k->skel->maps.mms);
	int n = clear_map(procs, sizeof(__u32)) + clear_map(mms, sizeof(__u64));
	/* A program that found an entry just before it went may still add to the total:
	 * programs run under RCU, and MEMBARRIER_CMD_GLOBAL waits for a grace period
	 * (synchronize_rcu), after which none of them is left. */
	if (n > 0) {
		if (syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) < 0)
			usleep(20 * 1000);	/* no membarrier: tens of ms outlast any program */
		clear_map(procs, sizeof(__u32));
		clear_map(mms, sizeof(__u64));
	}
	ring_buffer__consume(k->exits);	/* k->fn is NULL: the last run's exits go */
	__atomic_store_n(&s->total, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&s->peak, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&s->peak_ns, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&s->win_peak, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&s->win_peak_ns, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&s->events, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&s->dropped, 0, __ATOMIC_SEQ_CST);
}

void kpeak_close(struct kpeak *k)
{
	if (!k)
		return;
	ring_buffer__free(k->exits);
	for (size_t i = 0; i < ARRAY_SIZE(k->links); i++)
		bpf_link__destroy(k->links[i]);
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

void kpeak_read(const struct kpeak *k, struct kpeak_figures *f)
{
	(void)k;
	memset(f, 0, sizeof(*f));
}

void kpeak_take_window(struct kpeak *k, uint64_t *peak, int64_t *at)
{
	(void)k;
	*peak = 0;
	*at = 0;
}

int kpeak_proc(const struct kpeak *k, pid_t pid, uint64_t *peak, int64_t *at)
{
	(void)k;
	(void)pid;
	*peak = 0;
	*at = 0;
	return -ENOENT;
}

int kpeak_drain_exits(struct kpeak *k, void (*fn)(void *ctx, const struct kpeak_exit *x),
		      void *ctx)
{
	(void)k;
	(void)fn;
	(void)ctx;
	return 0;
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
