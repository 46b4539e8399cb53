#include "render/stages.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

void stages_init(struct stages *st, const struct run *r, const struct mark *m, size_t nm)
{
	memset(st, 0, sizeof(*st));
	st->s = xcalloc(nm ? nm : 1, sizeof(*st->s));
	st->n = nm;
	for (size_t i = 0; i < nm; i++)
		st->s[i].elapsed_ns = m[i].t - r->started_at;
}

void stages_add(struct stages *st, const struct sample *s)
{
	if (!st->known)
		st->first_rss = s->mem.rss;
	/* a mark before this sample has its figures: the sample before (else this one, the
	 * first) */
	for (; st->done < st->n && st->s[st->done].elapsed_ns < s->elapsed_ns; st->done++) {
		st->s[st->done].rss = st->known ? st->last_rss : s->mem.rss;
		st->s[st->done].gpu = st->known ? st->last_gpu : s->gpu;
	}
	st->known = 1;
	st->last_rss = s->mem.rss;
	st->last_gpu = s->gpu;
}

void stages_end(struct stages *st)
{
	for (; st->done < st->n; st->done++) {
		st->s[st->done].rss = st->last_rss;
		st->s[st->done].gpu = st->last_gpu;
	}
	uint64_t prev = st->first_rss;
	for (size_t i = 0; i < st->n; i++) {
		st->s[i].change = (int64_t)st->s[i].rss - (int64_t)prev;
		prev = st->s[i].rss;
	}
}

void stages_release(struct stages *st)
{
	free(st->s);
	memset(st, 0, sizeof(*st));
}

int stages_peak_time_exact(const struct run *r)
{
	const char *src = r->peak_source ? r->peak_source : "";
	return strcmp(src, PEAK_FROM_PAGES) == 0 || strcmp(src, PEAK_FROM_SAMPLE) == 0 ||
	       strcmp(src, PEAK_FROM_OOM) == 0;
}
