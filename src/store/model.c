#include "store/model.h"

#include <stdlib.h>
#include <string.h>

uint64_t samples_rss_at(const struct sample *s, size_t n, int64_t elapsed_ns)
{
	if (n == 0)
		return 0;
	size_t lo = 0, hi = n;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (s[mid].elapsed_ns <= elapsed_ns)
			lo = mid;
		else
			hi = mid;
	}
	return s[lo].rss;
}

void run_release(struct run *r)
{
	if (!r)
		return;
	free(r->label);
	free(r->host);
	free(r->kernel);
	free(r->target);
	free(r->mode);
	free(r->boot_id);
	free(r->oom_memcg);
	free(r->outcome_note);
	free(r->cgroup);
	free(r->peak_source);
	free(r->peak_process_comm);
	memset(r, 0, sizeof(*r));
}

double run_mean_rss(const struct run *r)
{
	return r->samples ? r->sum_rss / (double)r->samples : 0.0;
}
