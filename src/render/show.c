/* `show`'s output: one run's summary, its memory figures over the run (PSS, pressure,
 * context), the memory at each mark, the application's counters, the largest
 * processes of a set, events and a chart of RSS, as text or as one JSON object. */
#include "render/show.h"
#include "base/fmt.h"
#include "base/parse.h"
#include "base/util.h"
#include "render/callstacks.h"
#include "render/counters.h"
#include "render/json.h"
#include "render/procs.h"
#include "render/stages.h"
#include "render/summary.h"
#include "render/tchart.h"

#include <stdlib.h>
#include <string.h>

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

/* The context over the run (SAMPLE_CPU, SAMPLE_IO): the counters at the first and
 * last sample that had them, and the highest major-fault rate over windows of at
 * least CTX_WINDOW_NS (a sample carries the last stat read, so rates between two
 * samples closer than a clock tick would be noise). */
#define CTX_WINDOW_NS NS_PER_S
struct context {
	int have_cpu, have_io;
	int64_t t_first, t_last;
	uint64_t user0, sys0, min0, maj0, user, sys, minflt, majflt;
	uint64_t rd0, wr0, rd, wr;
	int64_t win_t;
	uint64_t win_maj;
	double maj_peak;	/* per second */
	int maj_rated;		/* maj_peak comes from a full window */
};

static void context_add(struct context *c, const struct sample *s)
{
	if (s->have & SAMPLE_CPU) {
		if (!c->have_cpu) {
			c->have_cpu = 1;
			c->t_first = c->win_t = s->elapsed_ns;
			c->user0 = s->cpu_user_ns;
			c->sys0 = s->cpu_sys_ns;
			c->min0 = s->minflt;
			c->maj0 = c->win_maj = s->majflt;
		}
		c->t_last = s->elapsed_ns;
		c->user = s->cpu_user_ns;
		c->sys = s->cpu_sys_ns;
		c->minflt = s->minflt;
		c->majflt = s->majflt;
		int64_t dt = s->elapsed_ns - c->win_t;
		if (dt >= CTX_WINDOW_NS) {
			double r = (double)(s->majflt - c->win_maj) * NS_PER_S / (double)dt;
			if (s->majflt >= c->win_maj && r > c->maj_peak)
				c->maj_peak = r;
			c->maj_rated = 1;
			c->win_t = s->elapsed_ns;
			c->win_maj = s->majflt;
		}
	}
	if (s->have & SAMPLE_IO) {
		if (!c->have_io) {
			c->have_io = 1;
			c->rd0 = s->read_bytes;
			c->wr0 = s->write_bytes;
		}
		c->rd = s->read_bytes;
		c->wr = s->write_bytes;
	}
}

/* The run's share of the counters. A launched command's counters start with the run;
 * a process that was attached to (or a cgroup's members) brought history, so only
 * the growth from the first sample counts, and the time from there. */
struct context_figures {
	double user_s, sys_s, avg_pct, maj_peak;
	uint64_t minflt, majflt, rd, wr;
};

static uint64_t grown(uint64_t last, uint64_t first)
{
	return last > first ? last - first : 0;
}

static void context_figures(const struct run *r, const struct context *c,
			    struct context_figures *f)
{
	int launched = strcmp(r->mode, "command") == 0;
	int64_t span = launched ? c->t_last : c->t_last - c->t_first;
	memset(f, 0, sizeof(*f));
	f->user_s = (double)(launched ? c->user : grown(c->user, c->user0)) / NS_PER_S;
	f->sys_s = (double)(launched ? c->sys : grown(c->sys, c->sys0)) / NS_PER_S;
	f->minflt = launched ? c->minflt : grown(c->minflt, c->min0);
	f->majflt = launched ? c->majflt : grown(c->majflt, c->maj0);
	f->rd = launched ? c->rd : grown(c->rd, c->rd0);
	f->wr = launched ? c->wr : grown(c->wr, c->wr0);
	if (span > 0)
		f->avg_pct = (f->user_s + f->sys_s) * 1e11 / (double)span;
	/* A run shorter than a window: its own average rate. */
	f->maj_peak = c->maj_rated ? c->maj_peak : span > 0 ? (double)f->majflt * NS_PER_S / (double)span : 0;
}

static void context_line(struct buf *b, const struct run *r, const struct context *c)
{
	struct context_figures f;
	char x[32], y[32];
	if (!c->have_cpu && !c->have_io)
		return;
	context_figures(r, c, &f);
	buf_puts(b, "context  ");
	if (c->have_cpu)
		buf_printf(b, " cpu %.2f s (user %.2f s, sys %.2f s; %.0f%% of a CPU on average),"
			   " major faults %llu (peak %.0f/s), minor %llu", f.user_s + f.sys_s,
			   f.user_s, f.sys_s, f.avg_pct, (unsigned long long)f.majflt, f.maj_peak,
			   (unsigned long long)f.minflt);
	if (c->have_io)
		buf_printf(b, "%s read %s, written %s", c->have_cpu ? ";" : "",
			   fmt_bytes(x, sizeof(x), f.rd), fmt_bytes(y, sizeof(y), f.wr));
	buf_putc(b, '\n');
}

static void context_json(struct buf *b, const struct run *r, const struct context *c)
{
	struct context_figures f;
	context_figures(r, c, &f);
	buf_puts(b, ",\"context\":{");
	if (c->have_cpu)
		buf_printf(b, "\"cpu_user_s\":%.3f,\"cpu_sys_s\":%.3f,\"cpu_avg_pct\":%.1f,"
			   "\"minflt\":%llu,\"majflt\":%llu,\"majflt_peak_per_s\":%.1f",
			   f.user_s, f.sys_s, f.avg_pct, (unsigned long long)f.minflt,
			   (unsigned long long)f.majflt, f.maj_peak);
	else
		buf_puts(b, "\"cpu_user_s\":null,\"cpu_sys_s\":null,\"cpu_avg_pct\":null,"
			 "\"minflt\":null,\"majflt\":null,\"majflt_peak_per_s\":null");
	if (c->have_io)
		buf_printf(b, ",\"read_bytes\":%llu,\"write_bytes\":%llu",
			   (unsigned long long)f.rd, (unsigned long long)f.wr);
	else
		buf_puts(b, ",\"read_bytes\":null,\"write_bytes\":null");
	buf_putc(b, '}');
}

struct counter_stat {
	char name[48];
	long long max, last;
};

struct counters {
	struct counter_stat *c;
	size_t n, cap;
};

struct show_figures {
	struct tchart_point *p;	/* RSS at each sample, for the chart */
	size_t n, cap;
	struct stages stages;	/* the marks' table */
	uint64_t max_rss;
	int have_gpu;
	struct pressure psi[2];	/* the host's, the cgroup's */
	struct context ctx;
	/* --pss: the highest PSS read (with the USS of that read), the highest SwapPss,
	 * and how long each read took */
	uint64_t pss_max, uss_at_max, swap_pss_max;
	int64_t *read_us;
	size_t nreads, reads_cap;
	struct counters counters;	/* each counter's highest and last value */
};

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* A series thinned by retention: what the chart and the figures below rest on. */
static void thinned_line(struct buf *b, const struct run_thinning *t)
{
	char at[32], w[32];
	if (!t)
		return;
	fmt_datetime(at, sizeof(at), t->at);
	if (t->points == 0) {
		buf_printf(b, "thinned   %s by retention: the %lld samples were removed; the "
			   "summary, marks and events are kept\n", at, (long long)t->rows_before);
		return;
	}
	buf_printf(b, "thinned   %s by retention: at most %lld of the %lld samples kept, each "
		   "%s at its maximum (the peak above is the recorded one)\n", at,
		   (long long)t->points, (long long)t->rows_before,
		   fmt_duration(w, sizeof(w), t->bucket_ns));
}

static void pss_line(struct buf *b, struct show_figures *pts)
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

int show_add_counter(void *ctx, int64_t elapsed, const char *name, long long value)
{
	struct counters *cs = &((struct show_figures *)ctx)->counters;
	(void)elapsed;
	size_t i;
	for (i = 0; i < cs->n; i++)
		if (strcmp(cs->c[i].name, name) == 0)
			break;
	if (i == cs->n) {
		cs->c = xgrow(cs->c, cs->n, &cs->cap, sizeof(*cs->c));
		strlcpy_rsw(cs->c[i].name, name, sizeof(cs->c[i].name));
		cs->c[i].max = value;
		cs->n++;
	}
	if (value > cs->c[i].max)
		cs->c[i].max = value;
	cs->c[i].last = value;
	return 0;
}

#define SHOW_MARKS 52	/* one for each letter of the chart (tchart_mark_letter) */

/* The run's peak as a row of the marks table, in time order: the stage it fell in is
 * the one between the marks around it. Its time is exact only from the kernel's page
 * counts, an OOM report or a sample (the figure is the moment's); a high-water figure
 * (VmHWM, an exit record, wait4) was reached at some moment before the time it was
 * read, and is said so. */
static void peak_row(struct buf *b, const struct run *r)
{
	char t[32], v[32];
	buf_printf(b, "  ^ %-10s %10s %11s  the run's peak", fmt_offset(t, sizeof(t),
		   r->peak_rss_at - r->started_at), fmt_bytes(v, sizeof(v), r->peak_rss), "");
	if (!stages_peak_time_exact(r) && r->peak_source && r->peak_source[0])
		buf_printf(b, ", reached by then (%s)", r->peak_source);
	buf_putc(b, '\n');
}

/* The peak of the stage a mark opens, from the kernel's page counts, and when: "-"
 * where it is not known. */
static void stage_peak_cell(struct buf *b, const struct run *r, const struct mark *m)
{
	char v[32], t[32];
	if (!m->stage_peak_known) {
		buf_printf(b, " %10s %-8s", "-", "");
		return;
	}
	buf_printf(b, " %10s %-8s", fmt_bytes(v, sizeof(v), m->stage_peak),
		   fmt_offset(t, sizeof(t), m->stage_peak_at - r->started_at));
}

/* The memory at each stage (render/stages.h): RSS (and GPU) at every mark, and the
 * change since the previous mark (or since the start for the first); with the engine,
 * each stage's own peak and its time; the run's peak among them, where it fell. */
static void marks_table(struct buf *b, const struct run *r, const struct mark *m,
			const struct stages *sg, int have_gpu, int all)
{
	char t[32], v[32], d[32];
	size_t nm = sg->n;
	int peak_said = !r->peak_rss || !r->peak_rss_at;
	int stage_peaks = 0;
	for (size_t i = 0; i < nm; i++)
		stage_peaks |= m[i].stage_peak_known;
	buf_printf(b, "\nmarks%*s%10s %11s%s%s\n", 19, "", "RSS", "change", have_gpu ? "        GPU" : "",
		   stage_peaks ? "  STAGE PEAK at" : "");
	size_t shown = all || nm <= SHOW_MARKS ? nm : SHOW_MARKS;
	for (size_t i = 0; i < shown; i++) {
		const struct stage *g = &sg->s[i];
		if (!peak_said && r->peak_rss_at - r->started_at < g->elapsed_ns) {
			peak_row(b, r);
			peak_said = 1;
		}
		/* a mark made before the run began (an attached process's) is shown before
		 * its start, not moved to it */
		buf_printf(b, "  %c %-10s", tchart_mark_letter(i), fmt_offset(t, sizeof(t), g->elapsed_ns));
		if (sg->known) {
			uint64_t ch = g->change < 0 ? (uint64_t)-g->change : (uint64_t)g->change;
			fmt_bytes(d, sizeof(d), ch);
			buf_printf(b, " %10s %s%10s", fmt_bytes(v, sizeof(v), g->rss),
				   g->change >= 0 ? "+" : "-", d);
			if (have_gpu)
				buf_printf(b, " %10s", fmt_bytes(v, sizeof(v), g->gpu));
		}
		if (stage_peaks)
			stage_peak_cell(b, r, &m[i]);
		buf_puts(b, "  ");
		buf_put_printable(b, m[i].label);
		buf_putc(b, '\n');
	}
	if (!peak_said && shown == nm)
		peak_row(b, r);
	if (shown < nm)
		buf_printf(b, "  ... and %zu more marks (--events lists them all)\n", nm - shown);
}

int show_add_sample(void *ctx, const struct sample *s)
{
	struct show_figures *pts = ctx;
	if (pts->n == pts->cap) {
		pts->cap = pts->cap ? pts->cap * 2 : 1024;
		pts->p = xrealloc(pts->p, pts->cap * sizeof(*pts->p));
	}
	pts->p[pts->n].t = s->elapsed_ns;
	pts->p[pts->n].v = s->mem.rss;
	stages_add(&pts->stages, s);
	if (s->have & SAMPLE_GPU)
		pts->have_gpu = 1;
	if (s->have & SAMPLE_PSS) {
		if (s->pss >= pts->pss_max) {
			pts->pss_max = s->pss;
			pts->uss_at_max = s->uss;
		}
		if (s->swap_pss > pts->swap_pss_max)
			pts->swap_pss_max = s->swap_pss;
		pts->read_us = xgrow(pts->read_us, pts->nreads, &pts->reads_cap, sizeof(*pts->read_us));
		pts->read_us[pts->nreads++] = s->pss_read_us;
	}
	pressure_add(&pts->psi[0], !!(s->have & SAMPLE_PSI), !!(s->have & SAMPLE_PSI_FULL),
		     s->psi_some_avg10, s->psi_full_avg10, s->psi_some_total_us);
	pressure_add(&pts->psi[1], !!(s->have & SAMPLE_CG_PSI), !!(s->have & SAMPLE_CG_PSI_FULL),
		     s->cg_psi_some_avg10, s->cg_psi_full_avg10, s->cg_psi_some_total_us);
	context_add(&pts->ctx, s);
	pts->n++;
	if (s->mem.rss > pts->max_rss)
		pts->max_rss = s->mem.rss;
	return 0;
}

/* How many processes of a set `show` gives a row each; the rest share one line. */
#define SHOW_TOP_PROCS 20

static void events_text(struct buf *b, const struct show_run *sh, int all)
{
	const struct run *r = sh->run;
	char t[32];
	size_t hidden = 0;
	for (size_t i = 0; i < sh->ne; i++)
		hidden += !all && event_is_process(&sh->events[i]);
	if (!sh->ne)
		return;
	buf_puts(b, "\nevents\n");
	for (size_t i = 0; i < sh->ne; i++) {
		const struct event *e = &sh->events[i];
		if (!all && event_is_process(e))
			continue;
		buf_printf(b, "  +%-9s %-10s ", fmt_duration(t, sizeof(t), e->t - r->started_at), e->kind);
		buf_put_printable(b, e->detail);
		buf_putc(b, '\n');
	}
	if (hidden)
		buf_printf(b, "  %zu process start/exit event%s: rsswatch show %lld --events\n", hidden,
			   hidden == 1 ? "" : "s", (long long)r->id);
}

void show_json(struct buf *b, const struct show_run *sh, const struct show_figures *f)
{
	const struct run *r = sh->run;
	const struct context *ctx = &f->ctx;
	const struct mark *m = sh->marks;
	const struct event *ev = sh->events;
	size_t nm = sh->nm, ne = sh->ne;
	buf_putc(b, '{');
	json_run_fields(b, r);
	buf_puts(b, ",\"marks\":[");
	for (size_t i = 0; i < nm; i++) {
		buf_puts(b, i ? ",{\"time\":" : "{\"time\":");
		json_time(b, m[i].t);
		/* A mark made before the run began (an attached process marked earlier) has
		 * a negative elapsed_s: it is not moved to the start. */
		int64_t el = m[i].t - r->started_at;
		buf_printf(b, ",\"elapsed_s\":%.3f,\"label\":", (double)el / NS_PER_S);
		json_str(b, m[i].label);
		/* the peak of the stage it opens, from the kernel's page counts */
		if (m[i].stage_peak_known) {
			char at[40];
			buf_printf(b, ",\"stage_peak_bytes\":%llu,\"stage_peak_time\":",
				   (unsigned long long)m[i].stage_peak);
			json_str(b, fmt_iso8601_us(at, sizeof(at), m[i].stage_peak_at));
		} else {
			buf_puts(b, ",\"stage_peak_bytes\":null,\"stage_peak_time\":null");
		}
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
	buf_puts(b, "],\"thinned\":");
	if (sh->thinned) {
		const struct run_thinning *t = sh->thinned;
		buf_puts(b, "{\"time\":");
		json_time(b, t->at);
		buf_printf(b, ",\"points\":%lld,\"bucket_s\":%.3f,\"samples_recorded\":%lld}",
			   (long long)t->points, (double)t->bucket_ns / NS_PER_S,
			   (long long)t->rows_before);
	} else {
		buf_puts(b, "null");
	}
	buf_puts(b, ",\"oom\":");
	json_oom_kills(b, r, sh->kills, sh->nk);
	/* oom_kills can be more: kills the run's cgroup counted whose lines were lost */
	buf_printf(b, ",\"oom_kills_named\":%zu", sh->nk ? sh->nk : r->oom_at ? (size_t)1 : 0);
	context_json(b, r, ctx);
	callstacks_json(b, r, &sh->stacks);
	if (run_is_set(r)) {
		buf_puts(b, ",\"processes\":");
		json_processes(b, sh->procs, sh->np);
	}
	buf_puts(b, "}\n");
}


struct show_figures *show_figures_new(const struct show_run *sh)
{
	struct show_figures *f = xcalloc(1, sizeof(*f));
	stages_init(&f->stages, sh->run, sh->marks, sh->nm);
	return f;
}

void show_figures_free(struct show_figures *f)
{
	if (!f)
		return;
	free(f->p);
	free(f->read_us);
	free(f->counters.c);
	stages_release(&f->stages);
	free(f);
}

void show_text(struct buf *b, const struct show_run *sh, struct show_figures *pts, int all,
	       int width)
{
	const struct run *r = sh->run;
	struct counters *cs = &pts->counters;
	summary_text(b, r, pts->max_rss, sh->kills, sh->nk);
	thinned_line(b, sh->thinned);
	pss_line(b, pts);
	pressure_line(b, pts->psi);
	context_line(b, r, &pts->ctx);
	if (sh->nm) {
		stages_end(&pts->stages);
		marks_table(b, r, sh->marks, &pts->stages, pts->have_gpu, all);
	}
	if (cs->n) {
		buf_printf(b, "\ncounters%*s%14s %14s\n", 24, "", "max", "last");
		for (size_t i = 0; i < cs->n; i++) {
			struct buf name = { 0 };
			buf_put_printable(&name, cs->c[i].name);
			char mx[48], la[48];
			buf_printf(b, "  %-30s %14s %14s\n", buf_str(&name),
				   counter_value_text(mx, sizeof(mx), cs->c[i].name, cs->c[i].max),
				   counter_value_text(la, sizeof(la), cs->c[i].name, cs->c[i].last));
			buf_release(&name);
		}
	}
	if (sh->np > 1)
		procs_table(b, sh->procs, sh->np, SHOW_TOP_PROCS);
	callstacks_text(b, r, &sh->stacks, sh->all_stacks);
	events_text(b, sh, all);
	if (pts->n > 0) {
		/* The title names the reported peak in the words of the summary, and the
		 * chart draws it (also where no sample saw it), marked '^'. */
		struct buf pk = { 0 };
		run_peak_words(&pk, r, pts->max_rss);
		buf_printf(b, "\nRSS over time (%s, marked ^%s)\n", buf_str(&pk),
			   sh->nm ? "; marks by their letter" : "");
		buf_release(&pk);
		/* the axis runs to the recorded end: an OOM kill after the last sample */
		int64_t end = pts->p[pts->n - 1].t;
		if (r->ended_at > r->started_at && r->ended_at - r->started_at > end)
			end = r->ended_at - r->started_at;
		struct tchart_point peak = { r->peak_rss_at > r->started_at ? r->peak_rss_at - r->started_at : 0,
					     r->peak_rss };
		if (peak.t > end)
			end = peak.t;
		int64_t *mt = xcalloc(sh->nm ? sh->nm : 1, sizeof(*mt));
		for (size_t i = 0; i < sh->nm; i++)
			mt[i] = sh->marks[i].t - r->started_at;
		tchart_render_peak(b, pts->p, pts->n, end, width, 8, mt, sh->nm, &peak);
		free(mt);
	}
}
