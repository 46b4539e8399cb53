/* Whole runs loaded for the verbs that draw or compare them (runload.h). */
#include "cli/runload.h"
#include "base/util.h"
#include "cli/cli.h"
#include "render/svg.h"

#include <stdlib.h>
#include <string.h>

static int collect(void *ctx, const struct sample *s)
{
	struct loaded_run *lr = ctx;
	if (lr->n == lr->cap) {
		lr->cap = lr->cap ? lr->cap * 2 : 1024;
		lr->s = xrealloc(lr->s, lr->cap * sizeof(*lr->s));
	}
	lr->s[lr->n++] = *s;
	return 0;
}

static int counter_cb(void *ctx, int64_t elapsed, const char *name, long long value)
{
	struct loaded_run *lr = ctx;
	counter_series_add(&lr->counters, &lr->ncounters, name, elapsed, value);
	return 0;
}

int loaded_run_load(struct store *st, const char *ref, struct loaded_run *lr)
{
	int64_t id;
	int ret = cli_resolve_run(st, ref, &id);
	memset(lr, 0, sizeof(*lr));
	if (ret)
		return ret;
	if (store_get_run(st, id, &lr->run) < 0) {
		cli_error("cannot read run %lld: %s", (long long)id, store_errmsg(st));
		return EXIT_FAIL;
	}
	if (store_each_sample(st, id, collect, lr) < 0 ||
	    store_marks(st, id, &lr->marks, &lr->nmarks) < 0 ||
	    store_events(st, id, &lr->events, &lr->nevents) < 0 ||
	    store_oom_kills(st, id, &lr->kills, &lr->nkills) < 0 ||
	    store_each_counter(st, id, counter_cb, lr) < 0) {
		cli_error("cannot read run %lld: %s", (long long)id, store_errmsg(st));
		loaded_run_release(lr);
		return EXIT_FAIL;
	}
	return 0;
}

void loaded_run_release(struct loaded_run *lr)
{
	if (!lr)
		return;
	run_release(&lr->run);
	free(lr->s);
	store_free_marks(lr->marks, lr->nmarks);
	store_free_events(lr->events, lr->nevents);
	free(lr->kills);
	counter_series_free(lr->counters, lr->ncounters);
	memset(lr, 0, sizeof(*lr));
}

int64_t loaded_run_mark(const struct loaded_run *lr, const char *label)
{
	for (size_t i = 0; i < lr->nmarks; i++)
		if (strcmp(lr->marks[i].label, label) == 0)
			return lr->marks[i].t;
	return 0;
}

int plot_prepare(struct loaded_run *lr, size_t n, const char *align, struct chart_run *cr)
{
	memset(cr, 0, n * sizeof(*cr));
	for (size_t i = 0; i < n; i++) {
		cr[i].run = &lr[i].run;
		cr[i].s = lr[i].s;
		cr[i].n = lr[i].n;
		cr[i].marks = lr[i].marks;
		cr[i].nmarks = lr[i].nmarks;
		cr[i].events = lr[i].events;
		cr[i].nevents = lr[i].nevents;
		cr[i].kills = lr[i].kills;
		cr[i].nkills = lr[i].nkills;
		cr[i].counters = lr[i].counters;
		cr[i].ncounters = lr[i].ncounters;
		if (align) {
			int64_t t = loaded_run_mark(&lr[i], align);
			if (!t) {
				cli_error("run %lld has no mark '%s'", (long long)lr[i].run.id, align);
				return EXIT_FAIL;
			}
			cr[i].shift_ns = t - lr[i].run.started_at;
		}
	}
	return 0;
}
