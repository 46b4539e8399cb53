/* rsswatch show: one run's summary, its marks and events, and a chart of RSS. */
#include "base/buf.h"
#include "base/fmt.h"
#include "base/util.h"
#include "cli/cli.h"
#include "render/json.h"
#include "render/summary.h"
#include "render/tchart.h"
#include "store/store.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const char usage_text[] =
	"usage: rsswatch show [RUN] [--json] [--db PATH]\n"
	"\n"
	"Shows one run (default: the last): its summary, marks, events and a chart of RSS\n"
	"over time that fits the terminal. RUN is a run id or 'last'.\n"
	"\n"
	"      --json     one run object with its marks and events\n"
	"      --db PATH  the run database\n";

struct points {
	struct tchart_point *p;
	size_t n, cap;
	uint64_t max_rss;
};

static int collect(void *ctx, const struct sample *s)
{
	struct points *pts = ctx;
	if (pts->n == pts->cap) {
		pts->cap = pts->cap ? pts->cap * 2 : 1024;
		pts->p = xrealloc(pts->p, pts->cap * sizeof(*pts->p));
	}
	pts->p[pts->n].t = s->elapsed_ns;
	pts->p[pts->n].v = s->rss;
	pts->n++;
	if (s->rss > pts->max_rss)
		pts->max_rss = s->rss;
	return 0;
}

/* RSS at elapsed time e: the last sample at or before it. */
static uint64_t rss_at(const struct points *pts, int64_t e)
{
	size_t lo = 0, hi = pts->n;
	if (!pts->n)
		return 0;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (pts->p[mid].t <= e)
			lo = mid;
		else
			hi = mid;
	}
	return pts->p[lo].v;
}

static void show_json(struct buf *b, const struct run *r, const struct mark *m, size_t nm,
		      const struct event *ev, size_t ne)
{
	buf_putc(b, '{');
	json_run_fields(b, r);
	buf_puts(b, ",\"marks\":[");
	for (size_t i = 0; i < nm; i++) {
		buf_puts(b, i ? ",{\"time\":" : "{\"time\":");
		json_time(b, m[i].t);
		buf_printf(b, ",\"elapsed_s\":%.3f,\"label\":", (double)(m[i].t - r->started_at) / 1e9);
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
	buf_puts(b, "]}\n");
}

int cmd_show(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "db", required_argument, NULL, CLI_OPT_DB },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, json = 0;
	const char *db = NULL;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j': json = 1; break;
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
	struct mark *marks = NULL;
	struct event *events = NULL;
	size_t nm = 0, ne = 0;
	struct points pts = { NULL, 0, 0, 0 };
	struct buf b = { 0 };
	if ((ret = cli_resolve_run(st, ref, &id)) != 0)
		goto out_store;
	if (store_get_run(st, id, &r) < 0 || store_marks(st, id, &marks, &nm) < 0 ||
	    store_events(st, id, &events, &ne) < 0 || store_each_sample(st, id, collect, &pts) < 0) {
		cli_error("cannot read run %lld: %s", (long long)id, store_errmsg(st));
		ret = EXIT_FAIL;
		goto out_store;
	}
	if (json) {
		show_json(&b, &r, marks, nm, events, ne);
	} else {
		summary_text(&b, &r, pts.max_rss);
		char t[32], v[32];
		if (nm) {
			buf_puts(&b, "\nmarks\n");
			for (size_t i = 0; i < nm; i++)
				buf_printf(&b, "  %c +%-9s %10s  %s\n", tchart_mark_letter(i),
					   fmt_duration(t, sizeof(t), marks[i].t - r.started_at),
					   fmt_bytes(v, sizeof(v), rss_at(&pts, marks[i].t - r.started_at)),
					   marks[i].label);
		}
		if (ne) {
			buf_puts(&b, "\nevents\n");
			for (size_t i = 0; i < ne; i++)
				buf_printf(&b, "  +%-9s %-10s %s\n", fmt_duration(t, sizeof(t), events[i].t - r.started_at),
					   events[i].kind, events[i].detail);
		}
		if (pts.n > 1) {
			buf_printf(&b, "\nRSS over time (peak %s marked ^%s)\n", fmt_bytes(v, sizeof(v), pts.max_rss),
				   nm ? ", marks by their letter" : "");
			int64_t end = pts.p[pts.n - 1].t;
			int64_t *mt = xcalloc(nm ? nm : 1, sizeof(*mt));
			for (size_t i = 0; i < nm; i++)
				mt[i] = marks[i].t - r.started_at;
			tchart_render_marks(&b, pts.p, pts.n, end, terminal_width(STDOUT_FILENO), 8, mt, nm);
			free(mt);
		}
	}
	fputs(buf_str(&b), stdout);
	run_release(&r);
out_store:
	buf_release(&b);
	free(pts.p);
	store_free_marks(marks, nm);
	store_free_events(events, ne);
	store_close(st);
	return ret;
}
