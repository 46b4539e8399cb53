/* rsswatch show: one run's summary, its processes, marks and events, and a chart of RSS. */
#include "base/buf.h"
#include "base/fmt.h"
#include "base/util.h"
#include "cli/cli.h"
#include "render/counters.h"
#include "render/json.h"
#include "render/procs.h"
#include "render/summary.h"
#include "render/tchart.h"
#include "store/store.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage_text[] =
	"usage: rsswatch show [RUN] [--json] [--events] [--db PATH]\n"
	"\n"
	"Shows one run (default: the last): its summary, the largest processes of a set\n"
	"(--tree, -g), marks, events and a chart of RSS over time that fits the terminal.\n"
	"RUN is a run id or 'last'.\n"
	"\n"
	"      --events   list every event, with each process start and exit of a set\n"
	"                 (otherwise counted in one line), and every mark (otherwise the\n"
	"                 first 52)\n"
	"      --json     one run object with its marks, events, OOM kills and processes\n"
	"      --db PATH  the run database\n";

/* The most memory pressure seen (PSI avg10, percent) and the stall time over the run
 * (the difference of the totals between the first and last reading). */
struct pressure {
	int have, have_full;
	double some, full;
	uint64_t some_first, some_last;
};

static void pressure_add(struct pressure *p, int have, int have_full, double some, double full,
			 uint64_t some_total)
{
	if (!have)
		return;
	if (!p->have)
		p->some_first = some_total;
	p->have = 1;
	p->some_last = some_total;
	if (some > p->some)
		p->some = some;
	if (have_full) {
		p->have_full = 1;
		if (full > p->full)
			p->full = full;
	}
}

static void pressure_line(struct buf *b, const struct pressure *psi)
{
	char d[32];
	if (!psi[0].have && !psi[1].have)
		return;
	buf_puts(b, "pressure  max avg10");
	for (int i = 0; i < 2; i++) {
		const struct pressure *p = &psi[i];
		if (!p->have)
			continue;
		buf_printf(b, "%s %s some %.2f%%", i && psi[0].have ? ";" : "", i ? "cgroup" : "host",
			   p->some);
		if (p->have_full)
			buf_printf(b, " full %.2f%%", p->full);
		uint64_t us = p->some_last > p->some_first ? p->some_last - p->some_first : 0;
		buf_printf(b, " (stalled %s)", fmt_duration(d, sizeof(d), (int64_t)us * 1000));
	}
	buf_putc(b, '\n');
}

struct points {
	struct tchart_point *p;
	uint64_t *gpu;		/* per point; meaningful when have_gpu */
	size_t n, cap;
	uint64_t max_rss;
	int have_gpu;
	struct pressure psi[2];	/* the host's, the cgroup's */
	/* --pss: the highest PSS read (with the USS of that read), the highest SwapPss,
	 * and how long each read took */
	uint64_t pss_max, uss_at_max, swap_pss_max;
	int64_t *read_us;
	size_t nreads;
};

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

static void pss_line(struct buf *b, struct points *pts)
{
	char a[32], c[32], d[32];
	if (!pts->nreads)
		return;
	qsort(pts->read_us, pts->nreads, sizeof(*pts->read_us), cmp_i64);
	buf_printf(b, "pss       peak %s (uss %s), swap pss peak %s; %zu read%s taking %.1f ms "
		   "(median), %.1f ms (max)\n", fmt_bytes(a, sizeof(a), pts->pss_max),
		   fmt_bytes(c, sizeof(c), pts->uss_at_max), fmt_bytes(d, sizeof(d), pts->swap_pss_max),
		   pts->nreads, pts->nreads == 1 ? "" : "s",
		   (double)pts->read_us[pts->nreads / 2] / 1000.0,
		   (double)pts->read_us[pts->nreads - 1] / 1000.0);
}

struct counter_stat {
	char name[48];
	long long max, last;
};

struct counters {
	struct counter_stat *c;
	size_t n;
};

static int counter_cb(void *ctx, int64_t elapsed, const char *name, long long value)
{
	struct counters *cs = ctx;
	(void)elapsed;
	size_t i;
	for (i = 0; i < cs->n; i++)
		if (strcmp(cs->c[i].name, name) == 0)
			break;
	if (i == cs->n) {
		cs->c = xrealloc(cs->c, (cs->n + 1) * sizeof(*cs->c));
		strlcpy_rsw(cs->c[i].name, name, sizeof(cs->c[i].name));
		cs->c[i].max = value;
		cs->n++;
	}
	if (value > cs->c[i].max)
		cs->c[i].max = value;
	cs->c[i].last = value;
	return 0;
}

/* The index of the last point at or before elapsed t (0 when none is). */
static size_t point_at(const struct points *pts, int64_t t)
{
	size_t lo = 0, hi = pts->n;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (pts->p[mid].t <= t)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

#define SHOW_MARKS 52	/* one for each letter of the chart (tchart_mark_letter) */

/* The memory at each stage: RSS (and GPU) at every mark, and the change since the
 * previous mark (or since the start for the first). */
static void marks_table(struct buf *b, const struct run *r, const struct mark *m, size_t nm,
			const struct points *pts, int all)
{
	char t[32], v[32], d[32];
	buf_printf(b, "\nmarks%*s%10s %11s%s\n", 19, "", "RSS", "change", pts->have_gpu ? "        GPU" : "");
	uint64_t prev = pts->n ? pts->p[0].v : 0;
	size_t shown = all || nm <= SHOW_MARKS ? nm : SHOW_MARKS;
	for (size_t i = 0; i < shown; i++) {
		buf_printf(b, "  %c +%-9s", tchart_mark_letter(i), fmt_duration(t, sizeof(t), m[i].t - r->started_at));
		if (pts->n) {
			size_t k = point_at(pts, m[i].t - r->started_at);
			uint64_t rss = pts->p[k].v;
			fmt_bytes(d, sizeof(d), rss > prev ? rss - prev : prev - rss);
			buf_printf(b, " %10s %s%10s", fmt_bytes(v, sizeof(v), rss), rss >= prev ? "+" : "-", d);
			if (pts->have_gpu)
				buf_printf(b, " %10s", fmt_bytes(v, sizeof(v), pts->gpu[k]));
			prev = rss;
		}
		buf_puts(b, "  ");
		buf_put_printable(b, m[i].label);
		buf_putc(b, '\n');
	}
	if (shown < nm)
		buf_printf(b, "  ... and %zu more marks (--events lists them all)\n", nm - shown);
}

static int collect(void *ctx, const struct sample *s)
{
	struct points *pts = ctx;
	if (pts->n == pts->cap) {
		pts->cap = pts->cap ? pts->cap * 2 : 1024;
		pts->p = xrealloc(pts->p, pts->cap * sizeof(*pts->p));
		pts->gpu = xrealloc(pts->gpu, pts->cap * sizeof(*pts->gpu));
	}
	pts->p[pts->n].t = s->elapsed_ns;
	pts->p[pts->n].v = s->rss;
	pts->gpu[pts->n] = s->gpu;
	if (s->have & SAMPLE_GPU)
		pts->have_gpu = 1;
	if (s->have & SAMPLE_PSS) {
		if (s->pss >= pts->pss_max) {
			pts->pss_max = s->pss;
			pts->uss_at_max = s->uss;
		}
		if (s->swap_pss > pts->swap_pss_max)
			pts->swap_pss_max = s->swap_pss;
		pts->read_us = xrealloc(pts->read_us, (pts->nreads + 1) * sizeof(*pts->read_us));
		pts->read_us[pts->nreads++] = s->pss_read_us;
	}
	pressure_add(&pts->psi[0], !!(s->have & SAMPLE_PSI), !!(s->have & SAMPLE_PSI_FULL),
		     s->psi_some_avg10, s->psi_full_avg10, s->psi_some_total_us);
	pressure_add(&pts->psi[1], !!(s->have & SAMPLE_CG_PSI), !!(s->have & SAMPLE_CG_PSI_FULL),
		     s->cg_psi_some_avg10, s->cg_psi_full_avg10, s->cg_psi_some_total_us);
	pts->n++;
	if (s->rss > pts->max_rss)
		pts->max_rss = s->rss;
	return 0;
}

/* How many processes of a set `show` gives a row each; the rest share one line. */
#define SHOW_TOP_PROCS 20

/* What `show` read of a run besides its samples. */
struct shown {
	struct mark *marks;
	size_t nm;
	struct event *events;
	size_t ne;
	struct oom_kill *kills;
	size_t nk;
	struct proc_summary *procs;
	size_t np;
};

/* A set's process start and exit events: many, so listed only with --events. */
static int process_event(const struct event *e)
{
	return strcmp(e->kind, "proc_start") == 0 || strcmp(e->kind, "proc_exit") == 0;
}

static void events_text(struct buf *b, const struct run *r, const struct shown *sh, int all)
{
	char t[32];
	size_t hidden = 0;
	for (size_t i = 0; i < sh->ne; i++)
		hidden += !all && process_event(&sh->events[i]);
	if (!sh->ne)
		return;
	buf_puts(b, "\nevents\n");
	for (size_t i = 0; i < sh->ne; i++) {
		const struct event *e = &sh->events[i];
		if (!all && process_event(e))
			continue;
		buf_printf(b, "  +%-9s %-10s ", fmt_duration(t, sizeof(t), e->t - r->started_at), e->kind);
		buf_put_printable(b, e->detail);
		buf_putc(b, '\n');
	}
	if (hidden)
		buf_printf(b, "  %zu process start/exit event%s: rsswatch show %lld --events\n", hidden,
			   hidden == 1 ? "" : "s", (long long)r->id);
}

static void show_json(struct buf *b, const struct run *r, const struct shown *sh)
{
	const struct mark *m = sh->marks;
	const struct event *ev = sh->events;
	size_t nm = sh->nm, ne = sh->ne;
	buf_putc(b, '{');
	json_run_fields(b, r);
	buf_puts(b, ",\"marks\":[");
	for (size_t i = 0; i < nm; i++) {
		buf_puts(b, i ? ",{\"time\":" : "{\"time\":");
		json_time(b, m[i].t);
		/* A launched program can mark a moment before the run's first sample; such a
		 * mark is at 0 on the run's time axis (its own time is in "time"). */
		int64_t el = m[i].t > r->started_at ? m[i].t - r->started_at : 0;
		buf_printf(b, ",\"elapsed_s\":%.3f,\"label\":", (double)el / 1e9);
		json_str(b, m[i].label);
		buf_putc(b, '}');
	}
	buf_puts(b, "],\"events\":[");
	for (size_t i = 0; i < ne; i++) {
		buf_puts(b, i ? ",{\"time\":" : "{\"time\":");
		json_time(b, ev[i].t);
		buf_puts(b, ",\"kind\":");
		json_str(b, ev[i].kind);
		buf_printf(b, ",\"pid\":%d,\"detail\":", (int)ev[i].pid);
		json_str(b, ev[i].detail);
		buf_putc(b, '}');
	}
	buf_puts(b, "],\"oom\":");
	json_oom_kills(b, r, sh->kills, sh->nk);
	if (run_is_set(r)) {
		buf_puts(b, ",\"processes\":");
		json_processes(b, sh->procs, sh->np);
	}
	buf_puts(b, "}\n");
}

int cmd_show(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "events", no_argument, NULL, 'e' },
		{ "db", required_argument, NULL, CLI_OPT_DB },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, json = 0, all_events = 0;
	const char *db = NULL;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j': json = 1; break;
		case 'e': all_events = 1; break;
		case CLI_OPT_DB: db = optarg; break;
		case 'h': fputs(usage_text, stdout); return EXIT_OK;
		case ':': return cli_usage("show", "option '%s' needs a value", argv[optind - 1]);
		default: return cli_usage("show", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (argc - optind > 1)
		return cli_usage("show", "give one RUN");
	const char *ref = optind < argc ? argv[optind] : "last";

	struct store *st;
	int ret = cli_open_store(db, &st, 0);
	if (ret)
		return ret;
	int64_t id;
	struct run r;
	memset(&r, 0, sizeof(r));
	struct shown sh;
	memset(&sh, 0, sizeof(sh));
	struct points pts;
	memset(&pts, 0, sizeof(pts));
	struct counters cs = { NULL, 0 };
	struct buf b = { 0 };
	if ((ret = cli_resolve_run(st, ref, &id)) != 0)
		goto out_store;
	if (store_get_run(st, id, &r) < 0 || store_marks(st, id, &sh.marks, &sh.nm) < 0 ||
	    store_events(st, id, &sh.events, &sh.ne) < 0 ||
	    store_oom_kills(st, id, &sh.kills, &sh.nk) < 0 ||
	    store_processes(st, id, &sh.procs, &sh.np) < 0 ||
	    store_each_sample(st, id, collect, &pts) < 0 ||
	    store_each_counter(st, id, counter_cb, &cs) < 0) {
		cli_error("cannot read run %lld: %s", (long long)id, store_errmsg(st));
		ret = EXIT_FAIL;
		goto out_store;
	}
	if (json) {
		show_json(&b, &r, &sh);
	} else {
		summary_text(&b, &r, pts.max_rss, sh.kills, sh.nk);
		pss_line(&b, &pts);
		pressure_line(&b, pts.psi);
		if (sh.nm)
			marks_table(&b, &r, sh.marks, sh.nm, &pts, all_events);
		if (cs.n) {
			buf_printf(&b, "\ncounters%*s%14s %14s\n", 24, "", "max", "last");
			for (size_t i = 0; i < cs.n; i++) {
				struct buf name = { 0 };
				buf_put_printable(&name, cs.c[i].name);
				char mx[48], la[48];
				buf_printf(&b, "  %-30s %14s %14s\n", buf_str(&name),
					   counter_value_text(mx, sizeof(mx), cs.c[i].name, cs.c[i].max),
					   counter_value_text(la, sizeof(la), cs.c[i].name, cs.c[i].last));
				buf_release(&name);
			}
		}
		if (sh.np > 1)
			procs_table(&b, sh.procs, sh.np, SHOW_TOP_PROCS);
		events_text(&b, &r, &sh, all_events);
		if (pts.n > 0) {
			/* The title names the reported peak in the words of the summary, and the
			 * chart draws it (also where no sample saw it), marked '^'. */
			struct buf pk = { 0 };
			run_peak_words(&pk, &r, pts.max_rss);
			buf_printf(&b, "\nRSS over time (%s, marked ^%s)\n", buf_str(&pk),
				   sh.nm ? "; marks by their letter" : "");
			buf_release(&pk);
			/* the axis runs to the recorded end: an OOM kill after the last sample */
			int64_t end = pts.p[pts.n - 1].t;
			if (r.ended_at > r.started_at && r.ended_at - r.started_at > end)
				end = r.ended_at - r.started_at;
			struct tchart_point peak = { r.peak_rss_at > r.started_at ? r.peak_rss_at - r.started_at : 0,
						     r.peak_rss };
			if (peak.t > end)
				end = peak.t;
			int64_t *mt = xcalloc(sh.nm ? sh.nm : 1, sizeof(*mt));
			for (size_t i = 0; i < sh.nm; i++)
				mt[i] = sh.marks[i].t - r.started_at;
			tchart_render_peak(&b, pts.p, pts.n, end, terminal_width(STDOUT_FILENO), 8, mt, sh.nm,
					   &peak);
			free(mt);
		}
	}
	fputs(buf_str(&b), stdout);
out_store:
	run_release(&r);
	buf_release(&b);
	free(pts.p);
	free(pts.gpu);
	free(pts.read_us);
	free(cs.c);
	store_free_marks(sh.marks, sh.nm);
	store_free_events(sh.events, sh.ne);
	free(sh.kills);
	free(sh.procs);
	store_close(st);
	return ret;
}
