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
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include "bpf/kpeak.h"
#include "bpf/kstacks.h"
#include "bpf/kstacks.skel.h"

_Static_assert(KSTACKS_NREGS == KS_NREGS, "the registers are the program's");
_Static_assert(KSTACKS_MAP == KS_MAP && KSTACKS_BRK == KS_BRK && KSTACKS_UNMAP == KS_UNMAP &&
	       KSTACKS_REMAP == KS_REMAP && KSTACKS_CODE == KS_CODE && KSTACKS_EXEC == KS_EXEC &&
	       KSTACKS_EXIT == KS_EXIT && KSTACKS_FORK == KS_FORK && KSTACKS_FAULT == KS_FAULT,
	       "the kinds are the program's");
_Static_assert(KSTACKS_MMAP == KS_MODE_MMAP && KSTACKS_FAULTS == KS_MODE_FAULTS,
	       "the modes are the program's");

struct kstacks {
	struct kstacks_bpf *skel;
	struct ring_buffer *records;
	int (*fn)(void *ctx, const struct kstacks_record *r);
	void *ctx;
	int stop;
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
	int faults = mode == KSTACKS_FAULTS;
	struct bpf_program *calls[] = {
		b->progs.enter_munmap, b->progs.exit_munmap, b->progs.enter_mremap,
		b->progs.exit_mremap, b->progs.enter_brk, b->progs.exit_brk,
	};
	for (size_t i = 0; i < ARRAY_SIZE(calls); i++)
		bpf_program__set_autoload(calls[i], !faults);
	bpf_program__set_autoload(b->progs.on_rss_stat, faults);
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
}

int kstacks_fd(const struct kstacks *s)
{
	return ring_buffer__epoll_fd(s->records);
}

void kstacks_close(struct kstacks *s)
{
	if (!s)
		return;
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
