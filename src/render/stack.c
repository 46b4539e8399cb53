#include "render/stack.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

struct stack_row {
	int64_t t;
	pid_t pid;
	uint64_t rss;
	char comm[64];
};

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
	r->rss = p->gone ? 0 : p->rss;
	strlcpy_rsw(r->comm, p->comm, sizeof(r->comm));
	return 0;
}

static int cmp_pid(const void *a, const void *b)
{
	const struct stack_row *const *p = a, *const *q = b;
	return (*p)->pid < (*q)->pid ? -1 : (*p)->pid > (*q)->pid;
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
	/* each member's peak, and its name at its peak (a process may exec) */
	struct stack_row **by = xmalloc((s->nrows ? s->nrows : 1) * sizeof(*by));
	for (size_t i = 0; i < s->nrows; i++)
		by[i] = &s->rows[i];
	qsort(by, s->nrows, sizeof(*by), cmp_pid);
	struct stack_layer *m = xcalloc(s->nrows ? s->nrows : 1, sizeof(*m));
	size_t nm = 0;
	for (size_t i = 0; i < s->nrows; i++) {
		if (!nm || m[nm - 1].pid != by[i]->pid) {
			m[nm].pid = by[i]->pid;
			strlcpy_rsw(m[nm].comm, by[i]->comm, sizeof(m[nm].comm));
			nm++;
		}
		if (by[i]->rss > m[nm - 1].peak) {
			m[nm - 1].peak = by[i]->rss;
			strlcpy_rsw(m[nm - 1].comm, by[i]->comm, sizeof(m[nm - 1].comm));
		}
	}
	free(by);
	qsort(m, nm, sizeof(*m), cmp_peak);
	size_t named = nm < top ? nm : top;
	s->others = nm - named;
	s->nlayers = named + (s->others ? 1 : 0);
	s->layers = xcalloc(s->nlayers ? s->nlayers : 1, sizeof(*s->layers));
	memcpy(s->layers, m, named * sizeof(*m));
	if (s->others) {
		struct stack_layer *o = &s->layers[named];
		strlcpy_rsw(o->comm, "others", sizeof(o->comm));
		for (size_t i = named; i < nm; i++)
			o->peak = m[i].peak > o->peak ? m[i].peak : o->peak;
	}
	free(m);

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
	memset(s, 0, sizeof(*s));
}
