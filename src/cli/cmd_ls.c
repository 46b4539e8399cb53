/* rsswatch ls: every recorded run, newest first. */
#include "base/buf.h"
#include "base/fmt.h"
#include "base/parse.h"
#include "base/util.h"
#include "cli/cli.h"
#include "render/json.h"
#include "render/live.h"
#include "render/summary.h"
#include "store/store.h"

#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Copies s into out for one table cell: control characters become '?', and a value
 * longer than width columns is cut with "..." (each byte of UTF-8 text counts as one
 * column: good enough for labels and command lines). */
static void cut(char *out, size_t n, const char *s, size_t width)
{
	struct buf b = { 0 };
	buf_put_printable(&b, s);
	if (b.len > width) {
		size_t keep = width > 3 ? width - 3 : 0;
		b.len = keep;
		buf_puts(&b, "...");
	}
	strlcpy_rsw(out, buf_str(&b), n);
	buf_release(&b);
}

static int list(const char *db, int json, uint64_t limit, const struct run_param *want,
		size_t nwant, int series);

struct ls_args {
	const char *db;
	enum output_format format;
	uint64_t limit;		/* 0: every run */
	struct cli_params want;	/* --param */
	int series;
};

#define AT(field, type) CLI_AT(struct ls_args, field, type)
static const struct cli_opt ls_opts[] = {
	{ "last", 'n', CLI_INT, AT(limit, uint64_t), .min = 1,
	  .help = "only the N newest runs (of those that match --param)" },
	{ "param", 0, CLI_CALLBACK, AT(want, struct cli_params), .fn = cli_opt_param,
	  .arg = "KEY=VALUE", .help = "only runs recorded with this parameter (repeatable: all "
	  "must match; numbers match by value, so 12 matches 12.0)" },
	{ "series", 0, CLI_FLAG, AT(series, int),
	  .help = "one line per series of runs (record --follow: one run per instance of a "
		  "restarted service), newest first: its id (RUN 'sID' is its last run, 'sID:N' "
		  "its last N), the runs, the first start, the last end, the largest peak, each "
		  "run's outcome and the restart gaps (from the end of one instance to the first "
		  "sample of the next); -n N: the N newest series" },
	{ "format", 'f', CLI_FORMAT, AT(format, enum output_format), .formats = CLI_TEXT_JSON,
	  .help = " (default: text)" },
	{ "json", 0, CLI_FLAG, AT(format, enum output_format), .set = FORMAT_JSON,
	  .help = "the same as --format json: a JSON array of run objects (with --series: "
		  "of series)" },
	CLI_DB_ROW(struct ls_args),
	CLI_OPTS_END,
};

const struct cli_cmd ls_cli = {
	.verb = "ls",
	.usage = "usage: rsswatch ls [--format text|json] [--json] [-n N] [--series] "
		 "[--param KEY=VALUE]... [--db PATH]\n",
	.about = "Lists recorded runs, newest first: id, start, label, parameters (when any run\n"
		 "listed has some), target, duration, peak RSS and outcome.\n",
	.opts = ls_opts,
};

int cmd_ls(int argc, char **argv)
{
	struct ls_args a = { .format = FORMAT_TEXT };
	int ret = cli_parse(&ls_cli, argc, argv, &a);
	if (ret == 0 && optind < argc)
		ret = cli_usage("ls", "unexpected argument '%s'", argv[optind]);
	if (ret == 0)
		ret = list(a.db, a.format == FORMAT_JSON, a.limit, a.want.v, a.want.n, a.series);
	run_params_free(a.want.v, a.want.n);
	return ret == CLI_DONE ? EXIT_OK : ret;
}

/* Whether run r has every parameter of want[0..nwant) with a matching value. */
static int run_matches(const struct run *r, const struct run_param *want, size_t nwant)
{
	for (size_t i = 0; i < nwant; i++) {
		const struct run_param *p = run_param_find(r->params, r->nparams, want[i].key);
		if (!p || !run_param_matches(p, &want[i]))
			return 0;
	}
	return 1;
}

/* The restart gap stored with a followed run ("restart" event, gap_us=N), in ns; -1
 * when it has none (the first run of a series, or a recorder killed early). */
static int64_t restart_gap(struct store *st, int64_t id)
{
	struct event *ev = NULL;
	size_t n = 0;
	int64_t gap = -1;
	if (store_events(st, id, &ev, &n) < 0)
		return -1;
	for (size_t i = 0; i < n && gap < 0; i++) {
		const char *p = strstr(ev[i].detail, "gap_us=");
		char num[24];
		uint64_t us;
		if (strcmp(ev[i].kind, "restart") != 0 || !p)
			continue;
		p += strlen("gap_us=");
		size_t l = strspn(p, "0123456789");
		if (l == 0 || l >= sizeof(num))
			continue;
		memcpy(num, p, l);
		num[l] = '\0';
		if (parse_u64(num, &us) == 0 && us < (uint64_t)INT64_MAX / 1000)
			gap = (int64_t)us * 1000;
	}
	store_free_events(ev, n);
	return gap;
}

/* ls --series: the runs (newest first) grouped by series, one line (or JSON object)
 * each, newest series first; runs of no series are left out. */
static void list_series(struct store *st, struct buf *b, const struct run *runs, size_t n,
			int json, uint64_t limit)
{
	size_t shown = 0, any = 0;
	for (size_t i = 0; i < n && !any; i++)
		any = runs[i].series > 0;
	if (json)
		buf_putc(b, '[');
	else if (any)	/* no header over "no series recorded yet" */
		buf_printf(b, "%7s  %4s  %-16s  %-16s  %10s  %s\n", "SERIES", "RUNS", "FIRST STARTED",
			   "LAST ENDED", "PEAK", "OUTCOMES (RESTART GAPS)");
	for (size_t i = 0; i < n && (!limit || shown < limit); i++) {
		int64_t sid = runs[i].series;
		int seen = 0;
		for (size_t j = 0; j < i && !seen; j++)
			seen = runs[j].series == sid;
		if (sid <= 0 || seen)
			continue;
		/* its runs, oldest first: those listed, from the end */
		const struct run **mine = xmalloc(n * sizeof(*mine));
		size_t k = 0;
		for (size_t j = n; j-- > 0;)
			if (runs[j].series == sid)
				mine[k++] = &runs[j];
		const struct run *first = mine[0], *lastr = mine[k - 1];
		uint64_t peak = 0;
		for (size_t j = 0; j < k; j++)
			if (mine[j]->peak_rss > peak)
				peak = mine[j]->peak_rss;
		int64_t end = lastr->ended_at;
		if (json) {
			buf_printf(b, "%s\n  {\"series\":%lld,\"runs\":[", shown ? "," : "", (long long)sid);
			for (size_t j = 0; j < k; j++)
				buf_printf(b, "%s%lld", j ? "," : "", (long long)mine[j]->id);
			buf_puts(b, "],\"started_at\":");
			json_time(b, first->started_at);
			buf_puts(b, ",\"ended_at\":");
			json_time(b, end);
			buf_printf(b, ",\"peak_rss_bytes\":%llu,\"outcomes\":[", (unsigned long long)peak);
			for (size_t j = 0; j < k; j++) {
				if (j)
					buf_putc(b, ',');
				json_str(b, mine[j]->outcome);
			}
			buf_puts(b, "],\"restart_gaps_s\":[");
			for (size_t j = 1; j < k; j++) {
				int64_t g = restart_gap(st, mine[j]->id);
				if (j > 1)
					buf_putc(b, ',');
				if (g >= 0)
					buf_printf(b, "%.6f", (double)g / NS_PER_S);
				else
					buf_puts(b, "null");
			}
			buf_puts(b, "]}");
		} else {
			char id[24], from[32], to[32], pk[32], gap[32];
			snprintf(id, sizeof(id), "s%lld", (long long)sid);	/* as RUN takes it */
			buf_printf(b, "%7s  %4zu  %-16s  %-16s  %10s  %zu run%s: ", id, k,
				   fmt_datetime(from, sizeof(from), first->started_at),
				   end ? fmt_datetime(to, sizeof(to), end) : "-",
				   peak ? fmt_bytes(pk, sizeof(pk), peak) : "-", k, k == 1 ? "" : "s");
			for (size_t j = 0; j < k; j++)
				buf_printf(b, "%s%s", j ? ", " : "", mine[j]->outcome);
			if (k > 1) {
				buf_puts(b, " (restarts after ");
				for (size_t j = 1; j < k; j++) {
					int64_t g = restart_gap(st, mine[j]->id);
					buf_printf(b, "%s%s", j > 1 ? ", " : "", g >= 0 ?
						   fmt_duration(gap, sizeof(gap), g) : "?");
				}
				buf_putc(b, ')');
			}
			buf_putc(b, '\n');
		}
		free(mine);
		shown++;
	}
	if (json)
		buf_puts(b, shown ? "\n]\n" : "]\n");
	else if (!shown)
		buf_puts(b, "no series recorded yet (record --follow makes them)\n");
}

static int list(const char *db, int json, uint64_t limit, const struct run_param *want,
		size_t nwant, int series)
{

	struct store *st;
	/* Nothing recorded yet in the default place ($RSSWATCH_DB's too) is an empty list;
	 * a database named with --db that is not there is a mistyped path. */
	int e = cli_open_store(db, &st, db ? 0 : CLI_STORE_QUIET_MISSING);
	if (e == -ENOENT) {	/* nothing recorded yet: an empty list */
		puts(json ? "[]" : "no runs recorded yet");
		return EXIT_OK;
	}
	if (e)
		return e;
	struct run *runs;
	size_t n;
	if (store_list_runs(st, nwant || series ? 0 : limit, &runs, &n) < 0) {
		cli_error("cannot list runs: %s", store_errmsg(st));
		store_close(st);
		return EXIT_FAIL;
	}
	if (nwant) {	/* keep the runs that match, then the limit */
		size_t k = 0;
		for (size_t i = 0; i < n; i++) {
			if (run_matches(&runs[i], want, nwant) && (series || !limit || k < limit)) {
				if (k != i)
					runs[k] = runs[i];
				k++;
			} else {
				run_release(&runs[i]);
			}
		}
		n = k;
	}
	struct buf b = { 0 };
	if (series) {
		list_series(st, &b, runs, n, json, limit);
	} else if (json) {
		buf_putc(&b, '[');
		for (size_t i = 0; i < n; i++) {
			if (i)
				buf_putc(&b, ',');
			buf_puts(&b, "\n  ");
			json_run(&b, &runs[i]);
		}
		buf_puts(&b, n ? "\n]\n" : "]\n");
	} else if (!n) {
		buf_puts(&b, "no runs recorded yet\n");
	} else {
		/* The GPU column only when some run listed has GPU figures. */
		int gpu = 0, params = 0;
		for (size_t i = 0; i < n; i++) {
			gpu |= runs[i].peak_gpu >= 0;
			params |= runs[i].nparams > 0;
		}
		buf_printf(&b, "%5s  %-16s  %-20s  %s%-30s  %9s  %10s  %s%s\n", "ID", "STARTED", "LABEL",
			   params ? "PARAMS                    " : "", "TARGET", "DURATION", "PEAK",
			   gpu ? "  GPU PEAK  " : "", "OUTCOME");
		for (size_t i = 0; i < n; i++) {
			const struct run *r = &runs[i];
			char when[32], label[32], target[40], dur[32], peak[32], gpeak[32], pcol[40];
			int64_t end = r->ended_at ? r->ended_at : r->last_at ? r->last_at : r->started_at;
			struct buf out = { 0 };
			outcome_short(&out, r);
			if (!r->samples)	/* e.g. a recorder killed at once; ended before one */
				buf_puts(&out, ", no samples");
			cut(label, sizeof(label), r->label, 20);
			cut(target, sizeof(target), r->target, 30);
			pcol[0] = '\0';
			if (params) {
				struct buf pb = { 0 };
				char cell[32];
				params_text(&pb, r->params, r->nparams);
				cut(cell, sizeof(cell), pb.len ? buf_str(&pb) + 1 : "-", 24);
				snprintf(pcol, sizeof(pcol), "%-24s  ", cell);
				buf_release(&pb);
			}
			gpeak[0] = '\0';
			if (gpu)
				snprintf(gpeak, sizeof(gpeak), "%10s  ", r->peak_gpu >= 0 ?
					 fmt_bytes(peak, sizeof(peak), (uint64_t)r->peak_gpu) : "-");
			buf_printf(&b, "%5lld  %-16s  %-20s  %s%-30s  %9s  %10s  %s%s\n", (long long)r->id,
				   fmt_datetime(when, sizeof(when), r->started_at), label, pcol, target,
				   fmt_duration(dur, sizeof(dur), end - r->started_at),
				   r->peak_rss ? fmt_bytes(peak, sizeof(peak), r->peak_rss) : "-",
				   gpeak, buf_str(&out));
			buf_release(&out);
		}
	}
	fputs(buf_str(&b), stdout);
	buf_release(&b);
	store_free_runs(runs, n);
	store_close(st);
	return EXIT_OK;
}
