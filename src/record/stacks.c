/* Live bytes by call stack: blocks per process in address order, stacks interned in a
 * hash table, a snapshot at the peak (record/stacks.h). */
#include "record/stacks.h"
#include "base/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Bounds: the blocks of every process together, and the distinct stacks; past them a
 * block is not kept (counted), and a stack is charged to the stack of no frames. */
#define MAX_BLOCKS (1u << 20)
#define MAX_STACKS (1u << 16)

struct block {
	uint64_t start, end;
	uint32_t stack;
};

/* A process's blocks, sorted by start, not overlapping. */
struct proc {
	pid_t pid;
	struct block *b;
	size_t n, cap;
};

struct stack {
	uint64_t hash;
	uint32_t first, n;	/* its frames in frames[] */
	int64_t live;
	uint64_t blocks;
	int64_t ended;		/* held by processes of the set when they exited */
	uint64_t ended_blocks;
};

struct stacks {
	stacks_walk_fn walk;
	void *walk_ctx;
	struct proc *procs;
	size_t nprocs, procs_cap;
	size_t nblocks;
	struct stack *st;
	size_t nst, st_cap;
	struct stack_frame *frames;
	size_t nframes, frames_cap;
	uint32_t *index;	/* open addressing: stack id + 1, 0 empty */
	size_t index_cap;
	struct stack_bytes *snap;
	size_t nsnap, snap_cap;
	int64_t snap_at;
	struct stack_bytes *live;
	size_t live_cap;
	struct stacks_counts c;
};

int stacks_new(struct stacks **out, stacks_walk_fn walk, void *walk_ctx)
{
	struct stacks *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->walk = walk;
	s->walk_ctx = walk_ctx;
	s->index_cap = 1024;
	s->index = calloc(s->index_cap, sizeof(*s->index));
	s->st = calloc(1, sizeof(*s->st));	/* id 0: no frames */
	if (!s->index || !s->st) {
		stacks_free(s);
		return -ENOMEM;
	}
	s->nst = s->st_cap = 1;
	*out = s;
	return 0;
}

void stacks_free(struct stacks *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nprocs; i++)
		free(s->procs[i].b);
	free(s->procs);
	free(s->st);
	free(s->frames);
	free(s->index);
	free(s->snap);
	free(s->live);
	free(s);
}

static uint64_t hash_frames(const struct stack_frame *f, int n)
{
	uint64_t h = 1469598103934665603ull;	/* FNV-1a over the fields */
	for (int i = 0; i < n; i++) {
		h = (h ^ f[i].module) * 1099511628211ull;
		h = (h ^ f[i].off) * 1099511628211ull;
	}
	return h | 1;
}

static int same(const struct stacks *s, const struct stack *st, const struct stack_frame *f,
		int n)
{
	if (st->n != (uint32_t)n)
		return 0;
	for (int i = 0; i < n; i++) {
		const struct stack_frame *g = &s->frames[st->first + i];
		if (g->module != f[i].module || g->off != f[i].off)
			return 0;
	}
	return 1;
}

static void index_put(uint32_t *index, size_t cap, uint64_t hash, uint32_t id)
{
	size_t i = hash & (cap - 1);
	while (index[i])
		i = (i + 1) & (cap - 1);
	index[i] = id + 1;
}

/* The id of the stack of these frames, added if new; 0 past the bound. */
static uint32_t intern(struct stacks *s, const struct stack_frame *f, int n)
{
	if (n <= 0)
		return 0;
	uint64_t h = hash_frames(f, n);
	for (size_t i = h & (s->index_cap - 1); s->index[i]; i = (i + 1) & (s->index_cap - 1)) {
		const struct stack *st = &s->st[s->index[i] - 1];
		if (st->hash == h && same(s, st, f, n))
			return s->index[i] - 1;
	}
	if (s->nst >= MAX_STACKS) {
		s->c.stacks_dropped++;
		return 0;
	}
	if ((s->nst + 1) * 2 > s->index_cap) {
		size_t cap = s->index_cap * 2;
		uint32_t *index = xcalloc(cap, sizeof(*index));
		for (size_t id = 1; id < s->nst; id++)
			index_put(index, cap, s->st[id].hash, (uint32_t)id);
		free(s->index);
		s->index = index;
		s->index_cap = cap;
	}
	s->st = xgrow(s->st, s->nst, &s->st_cap, sizeof(*s->st));
	s->frames = xgrow(s->frames, s->nframes + (size_t)n - 1, &s->frames_cap,
			  sizeof(*s->frames));
	memcpy(&s->frames[s->nframes], f, (size_t)n * sizeof(*f));
	uint32_t id = (uint32_t)s->nst++;
	s->st[id] = (struct stack){ .hash = h, .first = (uint32_t)s->nframes, .n = (uint32_t)n };
	s->nframes += (size_t)n;
	index_put(s->index, s->index_cap, h, id);
	return id;
}

static struct proc *proc_of(struct stacks *s, pid_t pid, int add)
{
	for (size_t i = 0; i < s->nprocs; i++)
		if (s->procs[i].pid == pid)
			return &s->procs[i];
	if (!add)
		return NULL;
	s->procs = xgrow(s->procs, s->nprocs, &s->procs_cap, sizeof(*s->procs));
	struct proc *p = &s->procs[s->nprocs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	return p;
}

static void charge(struct stacks *s, uint32_t stack, int64_t bytes, int64_t blocks)
{
	s->st[stack].live += bytes;
	s->st[stack].blocks += (uint64_t)blocks;
}

/* The first block of p that ends after a. */
static size_t first_after(const struct proc *p, uint64_t a)
{
	size_t lo = 0, hi = p->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->b[mid].end <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void insert_at(struct stacks *s, struct proc *p, size_t i, struct block b)
{
	p->b = xgrow(p->b, p->n, &p->cap, sizeof(*p->b));
	memmove(&p->b[i + 1], &p->b[i], (p->n - i) * sizeof(*p->b));
	p->b[i] = b;
	p->n++;
	s->nblocks++;
}

static void remove_at(struct stacks *s, struct proc *p, size_t i)
{
	memmove(&p->b[i], &p->b[i + 1], (p->n - i - 1) * sizeof(*p->b));
	p->n--;
	s->nblocks--;
}

/* Takes [a, e) out of p's blocks: whole blocks go, a block across an end is cut, one
 * around the range is split in two. */
static void unmap(struct stacks *s, struct proc *p, uint64_t a, uint64_t e)
{
	for (size_t i = first_after(p, a); i < p->n && p->b[i].start < e;) {
		struct block *b = &p->b[i];
		uint64_t lo = b->start > a ? b->start : a, hi = b->end < e ? b->end : e;
		charge(s, b->stack, -(int64_t)(hi - lo), 0);
		if (b->start < a && b->end > e) {
			struct block tail = { e, b->end, b->stack };
			b->end = a;
			charge(s, b->stack, 0, 1);
			if (s->nblocks >= MAX_BLOCKS) {	/* the tail is not kept */
				charge(s, tail.stack, -(int64_t)(tail.end - tail.start), -1);
				s->c.blocks_dropped++;
				return;
			}
			insert_at(s, p, i + 1, tail);
			return;
		}
		if (b->start < a) {
			b->end = a;
			i++;
		} else if (b->end > e) {
			b->start = e;
			i++;
		} else {
			charge(s, b->stack, 0, -1);
			remove_at(s, p, i);
		}
	}
}

static void map(struct stacks *s, struct proc *p, uint64_t a, uint64_t e, uint32_t stack)
{
	if (e <= a)
		return;
	unmap(s, p, a, e);	/* MAP_FIXED replaces what was there */
	if (s->nblocks >= MAX_BLOCKS) {
		s->c.blocks_dropped++;
		return;
	}
	insert_at(s, p, first_after(p, a), (struct block){ a, e, stack });
	charge(s, stack, (int64_t)(e - a), 1);
}

/* The malloc mode's free: the block that starts at a, whole (a pointer inside a block,
 * or one the recorder never saw handed out, frees nothing of ours). */
static void free_at(struct stacks *s, struct proc *p, uint64_t a)
{
	size_t i = first_after(p, a);
	if (i >= p->n || p->b[i].start != a)
		return;
	charge(s, p->b[i].stack, -(int64_t)(p->b[i].end - p->b[i].start), -1);
	remove_at(s, p, i);
}

static void forget(struct stacks *s, pid_t pid)
{
	struct proc *p = proc_of(s, pid, 0);
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		charge(s, p->b[i].stack, -(int64_t)(p->b[i].end - p->b[i].start), -1);
	s->nblocks -= p->n;
	free(p->b);
	*p = s->procs[--s->nprocs];
}

/* pid exits: what it still held is what it held at its end (stacks_at_end). */
static void ended(struct stacks *s, pid_t pid)
{
	struct proc *p = proc_of(s, pid, 0);
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++) {
		s->st[p->b[i].stack].ended += (int64_t)(p->b[i].end - p->b[i].start);
		s->st[p->b[i].stack].ended_blocks++;
	}
	forget(s, pid);
}

static void copy_of(struct stacks *s, pid_t child, pid_t parent)
{
	forget(s, child);
	struct proc *from = proc_of(s, parent, 0);
	if (!from || !from->n)
		return;
	size_t keep = from->n;
	if (s->nblocks + keep > MAX_BLOCKS) {
		s->c.blocks_dropped += keep;
		return;
	}
	struct proc *to = proc_of(s, child, 1);
	from = proc_of(s, parent, 0);	/* the array may have moved */
	to->b = xmalloc(keep * sizeof(*to->b));
	to->cap = to->n = keep;
	memcpy(to->b, from->b, keep * sizeof(*to->b));
	s->nblocks += keep;
	for (size_t i = 0; i < keep; i++)
		charge(s, to->b[i].stack, (int64_t)(to->b[i].end - to->b[i].start), 1);
}

static uint32_t stack_of(struct stacks *s, const struct kstacks_record *r)
{
	struct stack_frame f[STACKS_MAX_FRAMES];
	int n = r->regs ? s->walk(s->walk_ctx, r->pid, r->regs, r->stack, r->stack_len, f,
				  STACKS_MAX_FRAMES) : -ENODATA;
	if (n <= 0) {
		s->c.walks_failed++;
		return 0;
	}
	return intern(s, f, n);
}

static int by_bytes(const void *a, const void *b)
{
	const struct stack_bytes *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

static void snapshot(struct stacks *s, int64_t at)
{
	s->nsnap = 0;
	for (size_t id = 0; id < s->nst; id++) {
		if (s->st[id].live <= 0 && !s->st[id].blocks)
			continue;
		s->snap = xgrow(s->snap, s->nsnap, &s->snap_cap, sizeof(*s->snap));
		s->snap[s->nsnap++] = (struct stack_bytes){ (uint32_t)id, s->st[id].live,
							    s->st[id].blocks };
	}
	if (s->nsnap)
		qsort(s->snap, s->nsnap, sizeof(*s->snap), by_bytes);
	s->snap_at = at;
}

void stacks_settle(struct stacks *s, int64_t peak_at)
{
	if (peak_at && peak_at != s->snap_at)
		snapshot(s, peak_at);
}

void stacks_feed(struct stacks *s, const struct kstacks_record *r, int64_t peak_at)
{
	s->c.records++;
	if (peak_at && r->at > peak_at)
		stacks_settle(s, peak_at);
	struct proc *p;
	uint64_t a = r->addr;
	switch (r->kind) {
	case KSTACKS_MAP:
		if (r->len > 0)
			map(s, proc_of(s, r->pid, 1), a, a + (uint64_t)r->len, stack_of(s, r));
		break;
	case KSTACKS_FAULT:	/* a rise of its highest: a span of its own, never unmapped */
	case KSTACKS_BRK:
		if (r->len > 0)
			map(s, proc_of(s, r->pid, 1), a, a + (uint64_t)r->len, stack_of(s, r));
		else if ((p = proc_of(s, r->pid, 0)))
			unmap(s, p, a - (uint64_t)-r->len, a);
		break;
	case KSTACKS_ALLOC:	/* a block from the allocator: a realloc's replaces its old */
		p = proc_of(s, r->pid, 1);
		if (r->old)
			free_at(s, p, r->old);
		if (r->len > 0)
			map(s, p, a, a + (uint64_t)r->len, stack_of(s, r));
		break;
	case KSTACKS_FREE:
		if ((p = proc_of(s, r->pid, 0)))
			free_at(s, p, a);
		break;
	case KSTACKS_UNMAP:
		if ((p = proc_of(s, r->pid, 0)) && r->len > 0)
			unmap(s, p, a, a + (uint64_t)r->len);
		break;
	case KSTACKS_REMAP:
		if ((p = proc_of(s, r->pid, 0))) {
			size_t i = first_after(p, r->old);
			if (i >= p->n || p->b[i].start > r->old)
				break;	/* not a block of ours: a file's mapping */
			uint32_t stack = p->b[i].stack;
			unmap(s, p, r->old, r->old + r->old_len);
			if (r->len > 0)
				map(s, p, a, a + (uint64_t)r->len, stack);
		}
		break;
	case KSTACKS_EXEC:	/* the old program's memory is gone, not held to its end */
		forget(s, r->pid);
		break;
	case KSTACKS_EXIT:
		ended(s, r->pid);
		break;
	case KSTACKS_FORK:
		copy_of(s, r->pid, (pid_t)r->addr);
		break;
	default:
		break;
	}
}

const struct stack_bytes *stacks_at_peak(const struct stacks *s, size_t *n, int64_t *at)
{
	*n = s->nsnap;
	*at = s->snap_at;
	return s->snap;
}

/* The stacks' live bytes, with what ended processes held at their exit (with_ended). */
static const struct stack_bytes *tally(struct stacks *s, size_t *n, int with_ended)
{
	size_t k = 0;
	for (size_t id = 0; id < s->nst; id++) {
		const struct stack *st = &s->st[id];
		int64_t bytes = st->live + (with_ended ? st->ended : 0);
		uint64_t blocks = st->blocks + (with_ended ? st->ended_blocks : 0);
		if (bytes <= 0 && !blocks)
			continue;
		s->live = xgrow(s->live, k, &s->live_cap, sizeof(*s->live));
		s->live[k++] = (struct stack_bytes){ (uint32_t)id, bytes, blocks };
	}
	if (k)
		qsort(s->live, k, sizeof(*s->live), by_bytes);
	*n = k;
	return s->live;
}

const struct stack_bytes *stacks_live(struct stacks *s, size_t *n)
{
	return tally(s, n, 0);
}

const struct stack_bytes *stacks_at_end(struct stacks *s, size_t *n)
{
	return tally(s, n, 1);
}

const struct stack_frame *stacks_frames(const struct stacks *s, uint32_t id, size_t *n)
{
	if (id >= s->nst || !s->st[id].n) {
		*n = 0;
		return NULL;
	}
	*n = s->st[id].n;
	return &s->frames[s->st[id].first];
}

void stacks_counts(const struct stacks *s, struct stacks_counts *c)
{
	*c = s->c;
}

size_t stacks_ids(const struct stacks *s)
{
	return s->nst;
}
