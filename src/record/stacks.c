/* Live bytes by call stack: blocks per process in address order, stacks interned in a
 * hash table, a snapshot at the peak (record/stacks.h). */
#include "record/stacks.h"
#include "base/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Bound: the distinct stacks; past it a stack is charged to the stack of no frames
 * (counted). The blocks' bound is the caller's (stacks_new). */
#define MAX_STACKS (1u << 16)

struct block {
	uint64_t start, end;
	uint32_t stack;
};

/* Where a block lies: the process's address space, or the GPU's, where device
 * pointers and cuMemCreate's handles are two spaces of numbers that may coincide. Each
 * space counts to a ledger: host memory or GPU memory. */
enum space { HOST, GPU_PTR, GPU_HANDLE, SPACES };
enum ledger { ON_HOST, ON_GPU, LEDGERS };

static enum ledger ledger_of(enum space sp)
{
	return sp == HOST ? ON_HOST : ON_GPU;
}

/* A process's blocks in one space, sorted by start, not overlapping. */
struct proc {
	pid_t pid;
	enum space space;
	struct block *b;
	size_t n, cap;
};

struct stack {
	uint64_t hash;
	uint32_t first, n;	/* its frames in frames[] */
	int64_t live[LEDGERS];
	uint64_t blocks[LEDGERS];
	int64_t ended;		/* host memory held by processes of the set when they exited */
	uint64_t ended_blocks;
};

/* A ledger's snapshot at its peak. */
struct snap {
	struct stack_bytes *v;
	size_t n, cap;
	int64_t at;
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
	size_t max_blocks;	/* past it a block is not kept (counted) */
	uint32_t *index;	/* open addressing: stack id + 1, 0 empty */
	size_t index_cap;
	struct snap snap[LEDGERS];
	struct stack_bytes *live;
	size_t live_cap;
	struct stacks_counts c;
};

int stacks_new(struct stacks **out, stacks_walk_fn walk, void *walk_ctx, size_t max_blocks)
{
	struct stacks *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->max_blocks = max_blocks;
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
	for (int l = 0; l < LEDGERS; l++)
		free(s->snap[l].v);
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

static struct proc *proc_of(struct stacks *s, pid_t pid, enum space sp, int add)
{
	for (size_t i = 0; i < s->nprocs; i++)
		if (s->procs[i].pid == pid && s->procs[i].space == sp)
			return &s->procs[i];
	if (!add)
		return NULL;
	s->procs = xgrow(s->procs, s->nprocs, &s->procs_cap, sizeof(*s->procs));
	struct proc *p = &s->procs[s->nprocs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->space = sp;
	return p;
}

/* Bytes and blocks to a stack, in the ledger of p's space. */
static void charge(struct stacks *s, const struct proc *p, uint32_t stack, int64_t bytes,
		   int64_t blocks)
{
	enum ledger l = ledger_of(p->space);
	s->st[stack].live[l] += bytes;
	s->st[stack].blocks[l] += (uint64_t)blocks;
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
		charge(s, p, b->stack, -(int64_t)(hi - lo), 0);
		if (b->start < a && b->end > e) {
			struct block tail = { e, b->end, b->stack };
			b->end = a;
			charge(s, p, b->stack, 0, 1);
			if (s->nblocks >= s->max_blocks) {	/* the tail is not kept */
				charge(s, p, tail.stack, -(int64_t)(tail.end - tail.start), -1);
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
			charge(s, p, b->stack, 0, -1);
			remove_at(s, p, i);
		}
	}
}

static void map(struct stacks *s, struct proc *p, uint64_t a, uint64_t e, uint32_t stack)
{
	if (e <= a)
		return;
	unmap(s, p, a, e);	/* MAP_FIXED replaces what was there */
	if (s->nblocks >= s->max_blocks) {
		s->c.blocks_dropped++;
		return;
	}
	insert_at(s, p, first_after(p, a), (struct block){ a, e, stack });
	charge(s, p, stack, (int64_t)(e - a), 1);
}

/* The malloc mode's free: the block that starts at a, whole (a pointer inside a block,
 * or one the recorder never saw handed out, frees nothing of ours). */
static void free_at(struct stacks *s, struct proc *p, uint64_t a)
{
	size_t i = first_after(p, a);
	if (i >= p->n || p->b[i].start != a)
		return;
	charge(s, p, p->b[i].stack, -(int64_t)(p->b[i].end - p->b[i].start), -1);
	remove_at(s, p, i);
}

static void forget_space(struct stacks *s, pid_t pid, enum space sp)
{
	struct proc *p = proc_of(s, pid, sp, 0);
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		charge(s, p, p->b[i].stack, -(int64_t)(p->b[i].end - p->b[i].start), -1);
	s->nblocks -= p->n;
	free(p->b);
	*p = s->procs[--s->nprocs];
}

static void forget(struct stacks *s, pid_t pid)
{
	for (enum space sp = HOST; sp < SPACES; sp++)
		forget_space(s, pid, sp);
}

/* pid exits: what it still held of its own memory is what it held at its end
 * (stacks_at_end); its device memory the driver takes back. */
static void ended(struct stacks *s, pid_t pid)
{
	struct proc *p = proc_of(s, pid, HOST, 0);
	for (size_t i = 0; p && i < p->n; i++) {
		s->st[p->b[i].stack].ended += (int64_t)(p->b[i].end - p->b[i].start);
		s->st[p->b[i].stack].ended_blocks++;
	}
	forget(s, pid);
}

/* A fork's child: a copy of its parent's memory (not of its device memory, which a
 * CUDA context does not hand down). */
static void copy_of(struct stacks *s, pid_t child, pid_t parent)
{
	forget(s, child);
	struct proc *from = proc_of(s, parent, HOST, 0);
	if (!from || !from->n)
		return;
	size_t keep = from->n;
	if (s->nblocks + keep > s->max_blocks) {
		s->c.blocks_dropped += keep;
		return;
	}
	struct proc *to = proc_of(s, child, HOST, 1);
	from = proc_of(s, parent, HOST, 0);	/* the array may have moved */
	to->b = xmalloc(keep * sizeof(*to->b));
	to->cap = to->n = keep;
	memcpy(to->b, from->b, keep * sizeof(*to->b));
	s->nblocks += keep;
	for (size_t i = 0; i < keep; i++)
		charge(s, to, to->b[i].stack, (int64_t)(to->b[i].end - to->b[i].start), 1);
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

static void snapshot(struct stacks *s, enum ledger l, int64_t at)
{
	struct snap *sn = &s->snap[l];
	sn->n = 0;
	for (size_t id = 0; id < s->nst; id++) {
		if (s->st[id].live[l] <= 0 && !s->st[id].blocks[l])
			continue;
		sn->v = xgrow(sn->v, sn->n, &sn->cap, sizeof(*sn->v));
		sn->v[sn->n++] = (struct stack_bytes){ (uint32_t)id, s->st[id].live[l],
						      s->st[id].blocks[l] };
	}
	if (sn->n)
		qsort(sn->v, sn->n, sizeof(*sn->v), by_bytes);
	sn->at = at;
}

void stacks_settle(struct stacks *s, const struct stacks_peaks *pk)
{
	if (pk->host_at && pk->host_at != s->snap[ON_HOST].at)
		snapshot(s, ON_HOST, pk->host_at);
	if (pk->gpu_at && pk->gpu_at != s->snap[ON_GPU].at)
		snapshot(s, ON_GPU, pk->gpu_at);
}

/* The GPU's space of a block of that kind (bpf/kstacks.h: KP_GPU_PTR or _HANDLE). */
static enum space gpu_space(uint64_t kind)
{
	return kind ? GPU_HANDLE : GPU_PTR;
}

void stacks_feed(struct stacks *s, const struct kstacks_record *r, const struct stacks_peaks *pk)
{
	s->c.records++;
	/* a record after a peak: the snapshot of that peak first */
	struct stacks_peaks before = {
		pk->host_at && r->at > pk->host_at ? pk->host_at : 0,
		pk->gpu_at && r->at > pk->gpu_at ? pk->gpu_at : 0,
	};
	stacks_settle(s, &before);
	struct proc *p;
	uint64_t a = r->addr;
	switch (r->kind) {
	case KSTACKS_MAP:
		if (r->len > 0)
			map(s, proc_of(s, r->pid, HOST, 1), a, a + (uint64_t)r->len, stack_of(s, r));
		break;
	case KSTACKS_FAULT:	/* a rise of its highest: a span of its own, never unmapped */
	case KSTACKS_BRK:
		if (r->len > 0)
			map(s, proc_of(s, r->pid, HOST, 1), a, a + (uint64_t)r->len, stack_of(s, r));
		else if ((p = proc_of(s, r->pid, HOST, 0)))
			unmap(s, p, a - (uint64_t)-r->len, a);
		break;
	case KSTACKS_ALLOC:	/* a block from the allocator: a realloc's replaces its old */
		p = proc_of(s, r->pid, HOST, 1);
		if (r->old)
			free_at(s, p, r->old);
		if (r->len > 0)
			map(s, p, a, a + (uint64_t)r->len, stack_of(s, r));
		break;
	case KSTACKS_FREE:
		if ((p = proc_of(s, r->pid, HOST, 0)))
			free_at(s, p, a);
		break;
	case KSTACKS_GPU_ALLOC:	/* an address handed out again replaces what was there */
		if (r->len > 0)
			map(s, proc_of(s, r->pid, gpu_space(r->old), 1), a, a + (uint64_t)r->len,
			    stack_of(s, r));
		break;
	case KSTACKS_GPU_FREE:
		if ((p = proc_of(s, r->pid, gpu_space(r->old), 0)))
			free_at(s, p, a);
		break;
	case KSTACKS_UNMAP:
		if ((p = proc_of(s, r->pid, HOST, 0)) && r->len > 0)
			unmap(s, p, a, a + (uint64_t)r->len);
		break;
	case KSTACKS_REMAP:
		if ((p = proc_of(s, r->pid, HOST, 0))) {
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

void stacks_left(struct stacks *s, pid_t pid)
{
	forget(s, pid);
}

const struct stack_bytes *stacks_at_peak(const struct stacks *s, size_t *n, int64_t *at)
{
	*n = s->snap[ON_HOST].n;
	*at = s->snap[ON_HOST].at;
	return s->snap[ON_HOST].v;
}

const struct stack_bytes *stacks_at_gpu_peak(const struct stacks *s, size_t *n, int64_t *at)
{
	*n = s->snap[ON_GPU].n;
	*at = s->snap[ON_GPU].at;
	return s->snap[ON_GPU].v;
}

/* The stacks' live bytes, with what ended processes held at their exit (with_ended). */
static const struct stack_bytes *tally(struct stacks *s, size_t *n, int with_ended)
{
	size_t k = 0;
	for (size_t id = 0; id < s->nst; id++) {
		const struct stack *st = &s->st[id];
		int64_t bytes = st->live[ON_HOST] + (with_ended ? st->ended : 0);
		uint64_t blocks = st->blocks[ON_HOST] + (with_ended ? st->ended_blocks : 0);
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
