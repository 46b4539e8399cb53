/* record --stacks in the recorder: the stacks program's records drained as they come
 * (a walk needs the process's maps, and a short-lived process's go with it), fed to
 * the live bytes by stack with the engine's peak time, and the snapshot at the peak and
 * the live bytes at the end stored with the run, each stack's frames named. */
#include "record/recorder_int.h"
#include "base/buf.h"
#include "base/clock.h"
#include "base/util.h"
#include "record/stacks.h"
#include "source/kstacks.h"
#include "source/unwind.h"
#include "store/store.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(struct stack_frame) == sizeof(struct uw_frame),
	       "a stack's frames are the walker's");

static int walk(void *ctx, pid_t pid, const uint64_t *regs, const void *stack, size_t len,
		struct stack_frame *out, int max)
{
	return unwinder_walk(ctx, pid, regs, stack, len, (struct uw_frame *)out, max);
}

/* Records of a run's processes left after its end (record --follow) belong to no run. */
static int discard(void *ctx, const struct kstacks_record *r)
{
	unwinder_forget(ctx, r->pid);
	return 0;
}

/* The malloc mode's probes for pid (once a failure is said). */
static void probe(struct recorder *rc, pid_t pid)
{
	char why[160];
	int n = pid > 0 ? kstacks_probe(rc->opts->kstacks, pid, why, sizeof(why)) : 0;
	if (n > 0 && rc->opts->verbose)
		rec_say(rc, RECORDER_NOTE, "rsswatch: stacks: the allocator's probes on pid %d "
			"(%d file%s)", (int)pid, n, n == 1 ? "" : "s");
	if (n >= 0 || rc->probe_said)
		return;
	rc->probe_said = 1;
	rec_say(rc, RECORDER_NOTE, "rsswatch: stacks: cannot probe the allocator of pid %d: %s",
		(int)pid, why);
}

/* The malloc mode follows each process's allocators by its records: a process not seen
 * before, a fork's child (the copy of its parent's probes is not its own: the kernel
 * takes them out of it at their first hit), a library loaded or an exec; its probes go
 * at its end. A block's record comes from a process probed already. */
static void follow_allocators(struct recorder *rc, const struct kstacks_record *r)
{
	struct kstacks *k = rc->opts->kstacks;
	switch (r->kind) {
	case KSTACKS_ALLOC:
	case KSTACKS_FREE:
	case KSTACKS_GPU_ALLOC:
	case KSTACKS_GPU_FREE:
		return;
	case KSTACKS_EXIT:
		kstacks_unprobe(k, r->pid);
		return;
	case KSTACKS_FORK:
	case KSTACKS_CODE:
	case KSTACKS_EXEC:
		probe(rc, r->pid);
		return;
	default:
		if (!kstacks_probed(k, r->pid))
			probe(rc, r->pid);
	}
}

/* The records sent before the run began are its own: a launched command runs before
 * the recorder's loop starts, and its first blocks are often its largest. */
void rec_stacks_begin(struct recorder *rc)
{
	const struct record_opts *o = rc->opts;
	if (!o->kstacks || !rc->kpeak)
		return;
	kstacks_counts(o->kstacks, &rc->kstacks_base);
	int malloc_mode = rc->run->stacks && strcmp(rc->run->stacks, STACKS_MODE_MALLOC) == 0;
	if (stacks_new(&rc->stacks, walk, o->unwinder,
		       malloc_mode ? STACKS_BLOCKS_MALLOC : STACKS_BLOCKS_MAPPED) < 0)
		rc->stacks = NULL;
	probe(rc, rc->target->pid);	/* -p, -n: a launched command's were held for */
}

/* The peaks as the engine knows them now: the set's, and its GPU memory's from the
 * driver's probes. */
static struct stacks_peaks peaks_now(const struct recorder *rc)
{
	struct kpeak_figures f;
	struct kpeak_gpu g;
	kpeak_read(rc->kpeak, &f);
	kpeak_gpu_read(rc->kpeak, &g);
	return (struct stacks_peaks){ f.peak_at, g.peak ? g.peak_at : 0 };
}

static int on_record(void *ctx, const struct kstacks_record *r)
{
	struct recorder *rc = ctx;
	if (r->kind == KSTACKS_EXEC)
		unwinder_forget(rc->opts->unwinder, r->pid);	/* its code is another's */
	else if (r->kind == KSTACKS_CODE)
		unwinder_stale(rc->opts->unwinder, r->pid);	/* more code */
	follow_allocators(rc, r);
	struct stacks_peaks pk = peaks_now(rc);
	stacks_feed(rc->stacks, r, &pk);
	if (r->kind == KSTACKS_EXIT)
		unwinder_forget(rc->opts->unwinder, r->pid);
	return 0;
}

void rec_drain_stacks(struct recorder *rc)
{
	if (!rc->stacks)
		return;
	kstacks_drain(rc->opts->kstacks, on_record, rc);
	struct stacks_peaks pk = peaks_now(rc);
	stacks_settle(rc->stacks, &pk);
}

void rec_stacks_left(struct recorder *rc, pid_t pid)
{
	if (!rc->stacks)
		return;
	rec_drain_stacks(rc);	/* what it did while it was ours, the peak's snapshot */
	stacks_left(rc->stacks, pid);
}

/* A stack's frames, named, one a line (innermost first). */
static char *frames_text(struct recorder *rc, uint32_t id)
{
	size_t n;
	const struct stack_frame *f = stacks_frames(rc->stacks, id, &n);
	struct buf b = { 0 };
	char name[1024];
	for (size_t i = 0; i < n; i++) {
		if (unwinder_symbolize(rc->opts->unwinder, (const struct uw_frame *)&f[i], name,
				       sizeof(name)) < 0)
			snprintf(name, sizeof(name), "0x%llx", (unsigned long long)f[i].off);
		buf_printf(&b, "%s%s", i ? "\n" : "", name);
	}
	if (!n)
		buf_puts(&b, "[not walked]");
	char *text = xstrdup(buf_str(&b));
	buf_release(&b);
	return text;
}

/* The rows of one moment, each stack's frames named once (texts[id], made as needed). */
static struct stored_stack *rows_of(struct recorder *rc, const struct stack_bytes *v, size_t n,
				    char **texts)
{
	struct stored_stack *out = xcalloc(n ? n : 1, sizeof(*out));
	for (size_t i = 0; i < n; i++) {
		if (!texts[v[i].stack])
			texts[v[i].stack] = frames_text(rc, v[i].stack);
		out[i] = (struct stored_stack){ v[i].stack, v[i].bytes, v[i].blocks,
						texts[v[i].stack] };
	}
	return out;
}

void rec_stacks_end(struct recorder *rc)
{
	if (!rc->stacks)
		return;
	rec_drain_stacks(rc);
	size_t n;
	int64_t at;
	stacks_at_peak(rc->stacks, &n, &at);
	if (at)
		rc->run->stacks_peak_at = at + rc->real_off;
	stacks_at_gpu_peak(rc->stacks, &n, &at);
	if (at && n)
		rc->run->stacks_gpu_peak_at = at + rc->real_off;
	struct stacks_counts c;
	struct kstacks_counts k;
	stacks_counts(rc->stacks, &c);
	kstacks_counts(rc->opts->kstacks, &k);
	uint64_t lost = k.lost - rc->kstacks_base.lost + k.calls_lost - rc->kstacks_base.calls_lost +
			k.allocs_lost - rc->kstacks_base.allocs_lost + k.gpu_lost -
			rc->kstacks_base.gpu_lost + c.blocks_dropped +
			c.stacks_dropped;
	if (!lost && !c.walks_failed)
		return;
	char detail[128];
	snprintf(detail, sizeof(detail), "lost=%llu unwalked=%llu", (unsigned long long)lost,
		 (unsigned long long)c.walks_failed);
	store_add_event(rc->st, rc->run->id, real_ns(), "stacks_incomplete", rc->target->pid,
			detail);
	rec_say(rc, RECORDER_NOTE, "rsswatch: stacks: %llu records, blocks or stacks lost, %llu "
		"stacks not walked (their bytes are under [not walked])", (unsigned long long)lost,
		(unsigned long long)c.walks_failed);
}

int rec_stacks_write(struct recorder *rc)
{
	if (!rc->stacks)
		return 0;
	size_t n[STACK_MOMENTS], ids = stacks_ids(rc->stacks);
	int64_t at;
	const struct stack_bytes *v[STACK_MOMENTS] = {
		[STACKS_AT_PEAK] = stacks_at_peak(rc->stacks, &n[STACKS_AT_PEAK], &at),
		[STACKS_AT_END] = stacks_at_end(rc->stacks, &n[STACKS_AT_END]),
		[STACKS_AT_GPU_PEAK] = stacks_at_gpu_peak(rc->stacks, &n[STACKS_AT_GPU_PEAK], &at),
	};
	char **texts = xcalloc(ids, sizeof(*texts));
	struct stored_moment rows[STACK_MOMENTS];
	for (int m = 0; m < STACK_MOMENTS; m++)
		rows[m] = (struct stored_moment){ rows_of(rc, v[m], n[m], texts), n[m] };
	int err = store_put_stacks(rc->st, rc->run->id, rows);
	for (size_t i = 0; i < ids; i++)
		free(texts[i]);
	free(texts);
	for (int m = 0; m < STACK_MOMENTS; m++)
		free((void *)rows[m].v);
	return err;
}

void rec_stacks_release(struct recorder *rc)
{
	if (rc->stacks)
		kstacks_drain(rc->opts->kstacks, discard, rc->opts->unwinder);
	stacks_free(rc->stacks);
	rc->stacks = NULL;
}
