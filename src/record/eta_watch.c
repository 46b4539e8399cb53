#include "record/eta_watch.h"
#include "base/fmt.h"
#include "base/parse.h"
#include "base/util.h"

#include <string.h>
#include <stdio.h>

static int64_t eta_ns_of(const struct eta_projection *p)
{
	double ns = p->eta_s * NS_PER_S;
	return ns > 9e18 ? INT64_MAX : (int64_t)ns;
}

void eta_watch_init(struct eta_watch *w, int64_t interval_ns, int64_t warn_ns)
{
	memset(w, 0, sizeof(*w));
	eta_init(&w->est, interval_ns);
	w->warn_ns = warn_ns;
}

void eta_watch_sample(struct eta_watch *w, const struct sample *s, int64_t t,
		      struct store *st, struct run *run, pid_t pid)
{
	struct eta_projection *p = &w->now;
	eta_add(&w->est, s, p);
	if (!p->have)
		return;
	int64_t eta_ns = eta_ns_of(p);
	if (!run->min_eta_limit[0] || eta_ns < run->min_eta_ns) {
		run->min_eta_ns = eta_ns;
		run->min_eta_at = t;
		strlcpy_rsw(run->min_eta_limit, eta_limit_key(p->limit), sizeof(run->min_eta_limit));
	}
	if (!w->warn_ns || w->warned || eta_ns >= w->warn_ns)
		return;
	w->warned = 1;
	/* Figures for scripts first, as the other events' details do. */
	char detail[256];
	snprintf(detail, sizeof(detail), "eta_s=%.1f elapsed_s=%.3f limit=%s limit_bytes=%llu "
		 "headroom_bytes=%llu rate_bytes_per_s=%.0f", p->eta_s, (double)s->elapsed_ns / NS_PER_S,
		 eta_limit_key(p->limit), (unsigned long long)p->limit_bytes,
		 (unsigned long long)p->headroom, p->rate);
	store_add_event(st, run->id, t, "warn_eta", pid, detail);
}

void eta_watch_words(const struct eta_watch *w, int64_t t, char *out, size_t n)
{
	const struct eta_projection *p = &w->now;
	char d[32], head[32], rate[32], lim[64], hms[16];
	if (p->limit == ETA_CGROUP)
		snprintf(lim, sizeof(lim), "the cgroup limit (%s)", fmt_bytes(d, sizeof(d), p->limit_bytes));
	else
		snprintf(lim, sizeof(lim), "MemAvailable");
	snprintf(out, n, "%s WARNING memory full in ~%s at this rate: %s left under %s, rising %s/s",
		 fmt_hms(hms, sizeof(hms), t), fmt_duration(d, sizeof(d), eta_ns_of(p)),
		 fmt_bytes(head, sizeof(head), p->headroom), lim,
		 fmt_bytes(rate, sizeof(rate), (uint64_t)p->rate));
}
