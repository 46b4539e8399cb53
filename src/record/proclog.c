#include "record/proclog.h"
#include "base/util.h"
#include "record/procset.h"

#include <linux/acct.h>

#include <stdlib.h>
#include <string.h>

void proclog_init(struct proclog *l)
{
	memset(l, 0, sizeof(*l));
}

void proclog_release(struct proclog *l)
{
	free(l->p);
	free(l->x);
	free(l->index);
	memset(l, 0, sizeof(*l));
}

static size_t slot_of(pid_t pid, size_t nindex)
{
	/* Fibonacci hashing: consecutive pids spread over the table. */
	return (size_t)(((uint64_t)(uint32_t)pid * 0x9E3779B97F4A7C15ULL) >> 20) & (nindex - 1);
}

long proclog_find(const struct proclog *l, pid_t pid)
{
	if (!l->nindex)
		return -1;
	for (size_t k = slot_of(pid, l->nindex);; k = (k + 1) & (l->nindex - 1)) {
		int32_t v = l->index[k];
		if (v == 0)
			return -1;
		if (l->p[v - 1].pid == pid)
			return v - 1;
	}
}

static int alive_at(const struct proc_summary *p, int64_t at, int64_t early, int64_t late)
{
	return p->first_ns <= at + early && (p->end_ns < 0 || p->end_ns + late >= at);
}

long proclog_find_at(const struct proclog *l, pid_t pid, int64_t at, int64_t early, int64_t late)
{
	long i = proclog_find(l, pid);
	if (i < 0 || alive_at(&l->p[i], at, early, late))
		return i;
	if (l->p[i].first_ns <= at + early)
		return -1;	/* it ended before at, and every earlier use before it */
	/* an earlier use of the pid: rare, so a walk back rather than an index */
	while (i-- > 0)
		if (l->p[i].pid == pid && alive_at(&l->p[i], at, early, late))
			return i;
	return -1;
}

/* Points pid's slot at entry i (its latest). */
static void index_put(struct proclog *l, size_t i)
{
	pid_t pid = l->p[i].pid;
	for (size_t k = slot_of(pid, l->nindex);; k = (k + 1) & (l->nindex - 1)) {
		int32_t v = l->index[k];
		if (v == 0 || l->p[v - 1].pid == pid) {
			l->index[k] = (int32_t)(i + 1);
			return;
		}
	}
}

static void index_grow(struct proclog *l)
{
	size_t want = l->nindex ? l->nindex * 2 : 64;
	free(l->index);
	l->index = xcalloc(want, sizeof(*l->index));
	l->nindex = want;
	for (size_t i = 0; i < l->n; i++)
		index_put(l, i);	/* later entries of a pid overwrite earlier ones */
}

size_t proclog_add(struct proclog *l, pid_t pid, pid_t ppid, const char *comm, int64_t first_ns,
		   int old, uint64_t hwm)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 16;
		l->p = xrealloc(l->p, l->cap * sizeof(*l->p));
		l->x = xrealloc(l->x, l->cap * sizeof(*l->x));
	}
	size_t i = l->n++;
	struct proc_summary *p = &l->p[i];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->ppid = ppid;
	strlcpy_rsw(p->comm, comm ? comm : "", sizeof(p->comm));
	p->first_ns = first_ns;
	p->end_ns = -1;
	p->hwm_before = old ? (int64_t)hwm : -1;
	strlcpy_rsw(p->ended, PROC_RUNNING, sizeof(p->ended));
	p->exit_code = -1;
	p->signal = -1;
	memset(&l->x[i], 0, sizeof(l->x[i]));
	l->x[i].old = old;
	l->x[i].hwm0 = old ? hwm : 0;
	for (size_t k = 0; k < 6; k++)
		l->x[i].read[k] = -1;
	p->cpu_user_ns = p->cpu_sys_ns = p->minflt = p->majflt = -1;
	p->read_bytes = p->write_bytes = -1;
	if (l->n * 2 > l->nindex)
		index_grow(l);
	else
		index_put(l, i);
	return i;
}

static int is_high_water(const char *source)
{
	return strcmp(source, PEAK_FROM_HWM) == 0 || strcmp(source, PEAK_FROM_EXIT) == 0 ||
	       strcmp(source, PEAK_FROM_WAIT) == 0;
}

uint64_t proclog_offer(struct proclog *l, size_t i, uint64_t bytes, const char *source)
{
	struct proc_summary *p = &l->p[i];
	if (l->x[i].old && is_high_water(source) && bytes <= l->x[i].hwm0)
		return 0;
	int confirms = peak_confirms(p->peak_rss, p->peak_source, bytes, source);
	if (bytes <= p->peak_rss && !confirms)
		return 0;
	p->peak_rss = bytes;
	strlcpy_rsw(p->peak_source, source, sizeof(p->peak_source));
	return bytes;
}

void proclog_end(struct proclog *l, size_t i, int64_t end_ns, const char *ended, int exit_code,
		 int signal)
{
	struct proc_summary *p = &l->p[i];
	if (strcmp(p->ended, PROC_LEFT) == 0)
		return;	/* its exit, later, is another story than the run's */
	int known = strcmp(p->ended, PROC_RUNNING) != 0 && strcmp(p->ended, PROC_GONE) != 0;
	/* An OOM kill is the most specific word; "gone" the least. */
	if (known && (strcmp(ended, PROC_GONE) == 0 || strcmp(p->ended, PROC_OOM_KILLED) == 0))
		return;
	if (p->end_ns < 0 || end_ns < p->end_ns)
		p->end_ns = end_ns;
	strlcpy_rsw(p->ended, ended, sizeof(p->ended));
	p->exit_code = exit_code;
	p->signal = signal;
}

/* The order of the context figures in proclog_extra's arrays. */
enum { CX_UTIME, CX_STIME, CX_MINFLT, CX_MAJFLT, CX_READ, CX_WRITE, CX_N };

static int64_t as_i64(uint64_t v)
{
	return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

/* Entry i's context totals from what its sources said so far (proclog.h). */
static void settle_context(struct proclog *l, size_t i)
{
	struct proclog_extra *x = &l->x[i];
	int64_t v[CX_N], rec[CX_N];
	int have_rec[CX_N];
	for (size_t k = 0; k < CX_N; k++) {
		rec[k] = as_i64(x->rec[k]);
		have_rec[k] = x->nrec > 0 && (k < CX_READ || x->rec_io);
	}
	if (x->group) {
		rec[CX_UTIME] = as_i64(x->group_utime_ns);
		rec[CX_STIME] = as_i64(x->group_stime_ns);
		have_rec[CX_UTIME] = have_rec[CX_STIME] = 1;
	}
	int last_word = x->ended_rec && !x->group && x->nrec == 1;
	for (size_t k = 0; k < CX_N; k++) {
		v[k] = x->read[k];
		if (have_rec[k] && (last_word || rec[k] > v[k]))
			v[k] = rec[k];
	}
	struct proc_summary *p = &l->p[i];
	p->cpu_user_ns = v[CX_UTIME];
	p->cpu_sys_ns = v[CX_STIME];
	p->minflt = v[CX_MINFLT];
	p->majflt = v[CX_MAJFLT];
	p->read_bytes = v[CX_READ];
	p->write_bytes = v[CX_WRITE];
	if (x->in_sum)
		proclog_sum(l, i);
}

/* Entry i's figures for a sum: the most its sources said (its settled figures, or a
 * last read above them: a one-thread record that is the last word may stand a tick
 * below a read), -1 where none said anything. CPU time is taken as a pair, user and
 * kernel from the source with the larger total: the two split it in different
 * ratios, and the larger of each would count up to a tick twice. */
static void entry_figures(const struct proclog *l, size_t i, int64_t v[CX_N])
{
	const struct proc_summary *p = &l->p[i];
	const int64_t *r = l->x[i].read;
	const int64_t set[CX_N] = { p->cpu_user_ns, p->cpu_sys_ns, p->minflt, p->majflt,
				    p->read_bytes, p->write_bytes };
	for (size_t k = 0; k < CX_N; k++)
		v[k] = set[k] > r[k] ? set[k] : r[k];
	int64_t ts = (set[CX_UTIME] > 0 ? set[CX_UTIME] : 0) + (set[CX_STIME] > 0 ? set[CX_STIME] : 0);
	int64_t tr = (r[CX_UTIME] > 0 ? r[CX_UTIME] : 0) + (r[CX_STIME] > 0 ? r[CX_STIME] : 0);
	const int64_t *w = ts >= tr ? set : r;
	if (w[CX_UTIME] >= 0 && w[CX_STIME] >= 0) {
		v[CX_UTIME] = w[CX_UTIME];
		v[CX_STIME] = w[CX_STIME];
	}
}

void proclog_sum(struct proclog *l, size_t i)
{
	struct proclog_extra *x = &l->x[i];
	int64_t v[CX_N];
	x->in_sum = 1;
	entry_figures(l, i, v);
	for (size_t k = 0; k < CX_N; k++) {
		if (v[k] < 0)
			continue;
		if (k < CX_READ)
			l->ended_cpu = 1;
		else
			l->ended_io = 1;
		if ((uint64_t)v[k] > x->counted[k]) {
			l->ended[k] += (uint64_t)v[k] - x->counted[k];
			x->counted[k] = (uint64_t)v[k];
		}
	}
}

struct fold_candidate {
	uint64_t peak;
	size_t i;
};

static int by_peak(const void *a, const void *b)
{
	const struct fold_candidate *x = a, *y = b;
	if (x->peak != y->peak)
		return x->peak < y->peak ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;	/* the older first: a stable order */
}

/* Entry i joins the aggregate. */
static void fold_one(struct proclog *l, size_t i)
{
	struct proclog_folded *f = &l->folded;
	int64_t v[CX_N];
	entry_figures(l, i, v);
	for (size_t k = 0; k < CX_N; k++) {
		if (v[k] < 0)
			continue;
		f->sum[k] += (uint64_t)v[k];
		if (k < CX_READ)
			f->cpu = 1;
		else
			f->io = 1;
	}
	f->n++;
	if (l->p[i].peak_rss > f->peak_max)
		f->peak_max = l->p[i].peak_rss;
}

size_t proclog_fold(struct proclog *l, int64_t now_ns, int64_t settled_ns, size_t keep,
		    long *root)
{
	if (l->n <= keep || l->n < l->fold_at)
		return 0;
	struct fold_candidate *c = xcalloc(l->n, sizeof(*c));
	size_t nc = 0;
	for (size_t i = 0; i < l->n; i++) {
		const struct proc_summary *p = &l->p[i];
		if ((long)i == *root || p->end_ns < 0 || p->end_ns > now_ns - settled_ns ||
		    strcmp(p->ended, PROC_OOM_KILLED) == 0)
			continue;
		c[nc].peak = p->peak_rss;
		c[nc++].i = i;
	}
	size_t want = l->n - keep / 2, nf = nc < want ? nc : want;
	qsort(c, nc, sizeof(*c), by_peak);
	unsigned char *gone = xcalloc(l->n, 1);
	for (size_t k = 0; k < nf; k++) {
		fold_one(l, c[k].i);
		gone[c[k].i] = 1;
	}
	size_t n = 0;
	long r = -1;
	for (size_t i = 0; i < l->n; i++) {
		if (gone[i])
			continue;
		if ((long)i == *root)
			r = (long)n;
		l->p[n] = l->p[i];
		l->x[n++] = l->x[i];
	}
	l->n = n;
	*root = r;
	memset(l->index, 0, l->nindex * sizeof(*l->index));
	for (size_t i = 0; i < l->n; i++)
		index_put(l, i);
	l->fold_at = l->n > keep ? l->n + keep / 4 : 0;
	free(gone);
	free(c);
	return nf;
}

/* Adds the figures f (-1: none) to a sample's context; have: which groups had any. */
static void add_to_sample(struct sample *s, const uint64_t f[CX_N], int cpu, int io)
{
	if (cpu) {
		if (!(s->have & SAMPLE_CPU))
			s->cpu_user_ns = s->cpu_sys_ns = s->minflt = s->majflt = 0;
		s->have |= SAMPLE_CPU;
		s->cpu_user_ns += f[CX_UTIME];
		s->cpu_sys_ns += f[CX_STIME];
		s->minflt += f[CX_MINFLT];
		s->majflt += f[CX_MAJFLT];
	}
	if (io) {
		if (!(s->have & SAMPLE_IO))
			s->read_bytes = s->write_bytes = 0;
		s->have |= SAMPLE_IO;
		s->read_bytes += f[CX_READ];
		s->write_bytes += f[CX_WRITE];
	}
}

void proclog_add_ended(const struct proclog *l, struct sample *s)
{
	add_to_sample(s, l->ended, l->ended_cpu, l->ended_io);
}

void proclog_total(const struct proclog *l, struct sample *s)
{
	uint64_t sum[CX_N] = { 0 };
	int cpu = 0, io = 0;
	for (size_t i = 0; i < l->n; i++) {
		int64_t v[CX_N];
		entry_figures(l, i, v);
		for (size_t k = 0; k < CX_N; k++) {
			if (v[k] < 0)
				continue;
			sum[k] += (uint64_t)v[k];
			if (k < CX_READ)
				cpu = 1;
			else
				io = 1;
		}
	}
	for (size_t k = 0; k < CX_N; k++)
		sum[k] += l->folded.sum[k];
	cpu |= l->folded.cpu;
	io |= l->folded.io;
	struct sample t = *s;
	t.have &= ~(unsigned)(SAMPLE_CPU | SAMPLE_IO);
	add_to_sample(&t, sum, cpu, io);
	/* never below what the sample said */
	if (t.have & SAMPLE_CPU) {
		int had = (s->have & SAMPLE_CPU) != 0;
		s->have |= SAMPLE_CPU;
		s->cpu_user_ns = had && s->cpu_user_ns > t.cpu_user_ns ? s->cpu_user_ns : t.cpu_user_ns;
		s->cpu_sys_ns = had && s->cpu_sys_ns > t.cpu_sys_ns ? s->cpu_sys_ns : t.cpu_sys_ns;
		s->minflt = had && s->minflt > t.minflt ? s->minflt : t.minflt;
		s->majflt = had && s->majflt > t.majflt ? s->majflt : t.majflt;
	}
	if (t.have & SAMPLE_IO) {
		int had = (s->have & SAMPLE_IO) != 0;
		s->have |= SAMPLE_IO;
		s->read_bytes = had && s->read_bytes > t.read_bytes ? s->read_bytes : t.read_bytes;
		s->write_bytes = had && s->write_bytes > t.write_bytes ? s->write_bytes : t.write_bytes;
	}
}

void proclog_read(struct proclog *l, size_t i, const struct proc_stat *st, int have_stat,
		  const struct proc_io *io, int have_io)
{
	int64_t *r = l->x[i].read;
	if (have_stat) {
		r[CX_UTIME] = as_i64(proc_ticks_ns(st->utime));
		r[CX_STIME] = as_i64(proc_ticks_ns(st->stime));
		r[CX_MINFLT] = as_i64(st->minflt);
		r[CX_MAJFLT] = as_i64(st->majflt);
	}
	if (have_io) {
		r[CX_READ] = as_i64(io->read_bytes);
		r[CX_WRITE] = as_i64(io->write_bytes);
	}
	settle_context(l, i);
}

void proclog_exit_record(struct proclog *l, size_t i, const struct taskstats_exit *x)
{
	struct proclog_extra *e = &l->x[i];
	if (!(x->have & TASKSTATS_HAVE_BASIC))
		return;
	uint64_t user, sys;
	taskstats_cpu_ns(x, &user, &sys);
	if (x->scope == TASKSTATS_TGID) {
		e->group = 1;
		e->group_utime_ns = user;
		e->group_stime_ns = sys;
	} else {
		e->rec[CX_UTIME] += user;
		e->rec[CX_STIME] += sys;
		e->rec[CX_MINFLT] += x->minflt;
		e->rec[CX_MAJFLT] += x->majflt;
		e->rec[CX_READ] += x->read_bytes;
		e->rec[CX_WRITE] += x->write_bytes;
		e->rec_io = (e->nrec == 0 || e->rec_io) && (x->have & TASKSTATS_HAVE_IO);
		e->nrec++;
		if (x->flags & AGROUP)
			e->ended_rec = 1;
	}
	settle_context(l, i);
}

void proclog_read_set(struct proclog *l, const struct procset *ps, int all)
{
	for (size_t k = 0; k < ps->n; k++) {
		const struct procset_member *m = &ps->m[k];
		if (!all && !m->dead)
			continue;
		long i = proclog_find(l, m->pid);
		if (i < 0)
			continue;
		proclog_read(l, (size_t)i, &m->stat, m->have_stat, &m->io, m->have_io);
		if (m->dead)
			proclog_sum(l, (size_t)i);	/* it left: no longer in the live sum */
	}
}

void proclog_order_starts(struct proclog *l)
{
	/* from the last entry down: a child's start is final before its parent's is set */
	for (size_t i = l->n; i-- > 0;) {
		const struct proc_summary *c = &l->p[i];
		if (c->ppid <= 0 || c->first_ns < 0)
			continue;
		for (size_t j = i; j-- > 0;) {
			if (l->p[j].pid != c->ppid)
				continue;
			if (l->p[j].first_ns > c->first_ns)
				l->p[j].first_ns = c->first_ns;
			break;
		}
	}
}

long proclog_largest(const struct proclog *l)
{
	long best = -1;
	for (size_t i = 0; i < l->n; i++)
		if (l->p[i].peak_rss && (best < 0 || l->p[i].peak_rss > l->p[best].peak_rss))
			best = (long)i;
	return best;
}
