#include "render/stack.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

struct stack_row {
	int64_t t;
	uint64_t rss;
	pid_t pid;
};

/* The member with pid in s->members (sorted by pid), added when new. */
static struct stack_layer *member(struct proc_stack *s, pid_t pid)
{
	size_t lo = 0, hi = s->nmembers;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->members[mid].pid == pid)
			return &s->members[mid];
		if (s->members[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (s->nmembers == s->capmembers) {
		s->capmembers = s->capmembers ? 2 * s->capmembers : 64;
		s->members = xrealloc(s->members, s->capmembers * sizeof(*s->members));
	}
	memmove(&s->members[lo + 1], &s->members[lo], (s->nmembers - lo) * sizeof(*s->members));
	s->nmembers++;
	memset(&s->members[lo], 0, sizeof(s->members[lo]));
	s->members[lo].pid = pid;
	return &s->members[lo];
}

int proc_stack_add(void *stack, int64_t elapsed_ns, const struct proc_figures *p)
{
	struct proc_stack *s = stack;
	if (s->nrows == s->caprows) {
		s->caprows = s->caprows ? 2 * s->caprows : 256;
		s->rows = xrealloc(s->rows, s->caprows * sizeof(*s->rows));
	}
	struct stack_row *r = &s->rows[s->nrows++];
	r->t = elapsed_ns;
	r->pid = p->pid;
	r->rss = p->gone ? 0 : p->mem.rss;
	struct stack_layer *m = member(s, p->pid);
	if (!m->comm[0] || r->rss > m->peak) {
		if (p->comm[0])
			strlcpy_rsw(m->comm, p->comm, sizeof(m->comm));
		if (r->rss > m->peak)
			m->peak = r->rss;
	}
	return 0;
}

static int cmp_peak(const void *a, const void *b)
{
	const struct stack_layer *p = a, *q = b;
	if (p->peak != q->peak)
		return p->peak > q->peak ? -1 : 1;
	return p->pid < q->pid ? -1 : p->pid > q->pid;
}

void proc_stack_finish(struct proc_stack *s, size_t top)
{
	if (top < 1)
		top = 1;
	struct stack_layer *m = s->members;
	size_t nm = s->nmembers;
	if (nm)
		qsort(m, nm, sizeof(*m), cmp_peak);
	size_t named = nm < top ? nm : top;
	s->others = nm - named;
	s->nlayers = named + (s->others ? 1 : 0);
	s->layers = xcalloc(s->nlayers ? s->nlayers : 1, sizeof(*s->layers));
	if (named)
		memcpy(s->layers, m, named * sizeof(*m));
	if (s->others) {
		struct stack_layer *o = &s->layers[named];
		strlcpy_rsw(o->comm, "others", sizeof(o->comm));
		for (size_t i = named; i < nm; i++)
			o->peak = m[i].peak > o->peak ? m[i].peak : o->peak;
	}
	free(s->members);
	s->members = NULL;
	s->nmembers = s->capmembers = 0;

	size_t nt = 0;
	for (size_t i = 0; i < s->nrows; i++)
		nt += i == 0 || s->rows[i].t != s->rows[i - 1].t;
	s->t = xmalloc((nt ? nt : 1) * sizeof(*s->t));
	s->v = xcalloc((nt ? nt : 1) * (s->nlayers ? s->nlayers : 1), sizeof(*s->v));
	s->nt = 0;
	for (size_t i = 0; i < s->nrows; i++) {
		const struct stack_row *r = &s->rows[i];
		if (s->nt == 0 || s->t[s->nt - 1] != r->t)
			s->t[s->nt++] = r->t;
		size_t l;
		for (l = 0; l < named; l++)
			if (s->layers[l].pid == r->pid)
				break;
		if (l == named && !s->others)
			continue;
		s->v[(s->nt - 1) * s->nlayers + l] += r->rss;
	}
	free(s->rows);
	s->rows = NULL;
	s->nrows = s->caprows = 0;
}

void proc_stack_release(struct proc_stack *s)
{
	if (!s)
		return;
	free(s->layers);
	free(s->t);
	free(s->v);
	free(s->rows);
	free(s->members);
	memset(s, 0, sizeof(*s));
}
