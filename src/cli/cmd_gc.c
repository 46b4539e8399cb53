/* rsswatch gc: keep the run database bounded (retention), by hand; and the same after a
 * recording (record --keep, --max-db). The rules live in the store (src/store/retention.c,
 * docs/guide/storage.md); this verb parses the bounds and says what was done. */
#include "cli/cli.h"
#include "base/buf.h"
#include "base/clock.h"
#include "base/fmt.h"
#include "base/parse.h"
#include "store/store.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static const char usage_text[] =
	"usage: rsswatch gc [--keep AGE] [--max-db SIZE] [--dry-run] [--format text|json]\n"
	"                  [--json] [--db PATH]\n"
	"\n"
	"Keeps the run database bounded. Runs that ended more than AGE ago are thinned to at\n"
	"most 1000 samples each: every bucket of time keeps its maximum, so peaks survive.\n"
	"With --max-db, while the database is larger than SIZE, finished runs are thinned\n"
	"further, oldest first (to 1000 samples, then to 100), and as a last resort the\n"
	"series of the oldest runs are removed. A run's summary (peak, outcome, times), its\n"
	"parameters, processes, marks, events and OOM kills are always kept, and a run still\n"
	"being recorded is never touched. Then the file is made smaller (the first time with\n"
	"VACUUM, which needs free disk about the size of what is kept).\n"
	"\n"
	"  --keep AGE       keep every sample of runs that ended less than AGE ago: a number\n"
	"                   and s, m, h, d or w, e.g. 30d, 12h, 2w (default 30d; 'none': no\n"
	"                   age limit)\n"
	"  --max-db SIZE    the most the database may take: a number and K, M, G, T (powers\n"
	"                   of 1024; KiB, MB... too), e.g. 500M, 2G (default: no bound)\n"
	"  --dry-run        say what would be done, change nothing (the work is done in a\n"
	"                   transaction that is rolled back; sizes after are estimates)\n"
	"  -f, --format F   text (the default) or json\n"
	"  --json           the same as --format json: the result as one JSON object\n"
	"  --db PATH        the database (else $RSSWATCH_DB, else the default place)\n"
	"\n"
	"Exit status: 0; 1 when the database is locked by another process past 10 s, the\n"
	"disk is full, or SIZE cannot be met even with every finished run's series removed;\n"
	"2 on bad usage.\n";

#define GC_DEFAULT_KEEP_NS (30LL * 86400 * NS_PER_S)

int cli_parse_keep(const char *verb, const char *arg, int64_t *keep_ns)
{
	if (strcmp(arg, "none") == 0) {
		*keep_ns = -1;
		return 0;
	}
	if (parse_age_ns(arg, keep_ns) < 0)
		return cli_usage(verb, "invalid --keep '%s': give an age with a unit of s, m, h, "
				 "d or w, e.g. 30d, 12h, 2w, or 'none'", arg);
	return 0;
}

int cli_parse_max_db(const char *verb, const char *arg, uint64_t *bytes)
{
	if (parse_size(arg, bytes) < 0 || *bytes == 0)
		return cli_usage(verb, "invalid --max-db '%s': give a size above 0 with K, M, G or "
				 "T, e.g. 500M, 2G", arg);
	return 0;
}

struct report {
	int dry, json;
	struct buf runs;	/* --json: the runs changed, as a JSON array's items */
};

static void on_run(void *ctx, const struct store_gc_run *r)
{
	struct report *rep = ctx;
	char w[32];
	if (rep->json) {
		buf_printf(&rep->runs, "%s{\"id\":%" PRId64 ",\"points\":%u,\"bucket_ns\":%" PRId64
			   ",\"samples_before\":%" PRIu64 ",\"samples_after\":%" PRIu64
			   ",\"rows_removed\":%" PRIu64 "}", rep->runs.len ? "," : "", r->id,
			   r->points, r->bucket_ns, r->rows_before, r->rows_after, r->rows_removed);
		return;
	}
	if (r->points)
		printf("run %" PRId64 ": %s %" PRIu64 " samples to %" PRIu64 ", each %s kept as "
		       "its maximum\n", r->id, rep->dry ? "would thin" : "thinned", r->rows_before,
		       r->rows_after, fmt_duration(w, sizeof(w), r->bucket_ns));
	else
		printf("run %" PRId64 ": %s its series (%" PRIu64 " samples); its summary, marks "
		       "and events %s\n", r->id, rep->dry ? "would remove" : "removed",
		       r->rows_before, rep->dry ? "would stay" : "kept");
}

/* Applies retention to the database; prints the result unless quiet (then only
 * failures, as lines). Returns an exit status. */
static int gc_run(const char *db, const struct store_gc_opts *o, int json, int quiet,
		  int missing_ok)
{
	struct store *st;
	int ret = cli_open_store(db, &st, CLI_STORE_WRITE | (missing_ok ? CLI_STORE_QUIET_MISSING : 0));
	if (ret == -ENOENT)
		return EXIT_OK;
	if (ret)
		return ret;
	struct report rep = { .dry = o->dry_run, .json = json };
	struct store_gc_result res;
	int e = store_gc(st, o, quiet ? NULL : on_run, &rep, &res);
	char a[32], b[32];
	if (e == -EBUSY) {
		cli_error("gc: the database is locked by another process (a recorder writing, or "
			  "another gc); try again");
		ret = EXIT_FAIL;
	} else if (e == -ENOSPC && res.disk_needed) {
		cli_error("gc: not enough free disk to VACUUM the database (needs about %s, %s "
			  "free); the rows removed leave space that later recordings reuse",
			  fmt_bytes(a, sizeof(a), res.disk_needed), fmt_bytes(b, sizeof(b), res.disk_free));
		ret = EXIT_FAIL;
	} else if (e == -ENOSPC) {
		cli_error("gc: the disk is full: %s", store_errmsg(st));
		ret = EXIT_FAIL;
	} else if (e < 0) {
		cli_error("gc failed: %s", store_errmsg(st));
		ret = EXIT_FAIL;
	}
	if (e == 0 && json) {
		printf("{\"dry_run\":%s,\"keep_s\":", o->dry_run ? "true" : "false");
		if (o->keep_ns >= 0)
			printf("%.9g", (double)o->keep_ns / NS_PER_S);
		else
			fputs("null", stdout);
		fputs(",\"max_db_bytes\":", stdout);
		if (o->max_bytes)
			printf("%" PRIu64, o->max_bytes);
		else
			fputs("null", stdout);
		printf(",\"runs\":%" PRIu64 ",\"runs_recording\":%" PRIu64 ",\"runs_thinned\":%"
		       PRIu64 ",\"runs_emptied\":%" PRIu64 ",\"rows_removed\":%" PRIu64
		       ",\"bytes_before\":%" PRIu64 ",\"bytes_after\":%" PRIu64 ",\"over_bound\":%s"
		       ",\"changed\":[%s]}\n", res.runs_seen, res.runs_running, res.runs_thinned,
		       res.runs_emptied, res.rows_removed, res.bytes_before, res.bytes_after,
		       res.over_bound ? "true" : "false", buf_str(&rep.runs));
	} else if (e == 0 && !quiet) {
		printf("gc%s: %" PRIu64 " runs; %s%" PRIu64 " thinned, %" PRIu64 " emptied, %" PRIu64
		       " rows removed", o->dry_run ? " (dry run, nothing changed)" : "",
		       res.runs_seen, o->dry_run ? "would be " : "", res.runs_thinned,
		       res.runs_emptied, res.rows_removed);
		if (res.runs_running)
			printf("; %" PRIu64 " still being recorded, left alone", res.runs_running);
		printf("\ndatabase: %s %s, %s%s after%s\n", fmt_bytes(a, sizeof(a), res.bytes_before),
		       o->dry_run ? "now" : "before", o->dry_run ? "about " : "",
		       fmt_bytes(b, sizeof(b), res.bytes_after),
		       res.reclaimed == 2 ? " (VACUUM)" : res.reclaimed == 1 ? " (incremental vacuum)" : "");
		if (res.checkpoint_busy)
			puts("note: a reader holds the write-ahead log; the file shrinks at its next "
			     "checkpoint");
	}
	if (e == 0 && res.over_bound) {
		cli_error("gc: the database still takes %s, above --max-db %s: what is left are run "
			  "summaries, marks, events and runs being recorded",
			  fmt_bytes(a, sizeof(a), res.bytes_used), fmt_bytes(b, sizeof(b), o->max_bytes));
		ret = EXIT_FAIL;
	}
	buf_release(&rep.runs);
	store_close(st);
	return ret;
}

int cli_gc_after_record(const char *db, int64_t keep_ns, uint64_t max_bytes)
{
	if (keep_ns < 0 && !max_bytes)
		return EXIT_OK;
	struct store_gc_opts o = { .keep_ns = keep_ns, .max_bytes = max_bytes, .now_ns = real_ns() };
	return gc_run(db, &o, 0, 1, 1);
}

int cmd_gc(int argc, char **argv)
{
	enum { OPT_KEEP = CLI_OPT_DB + 1, OPT_MAX_DB, OPT_DRY_RUN, OPT_JSON };
	static const struct option longopts[] = {
		{ "keep", required_argument, NULL, OPT_KEEP },
		{ "max-db", required_argument, NULL, OPT_MAX_DB },
		{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "format", required_argument, NULL, 'f' },
		{ "db", required_argument, NULL, CLI_OPT_DB },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct store_gc_opts o = { .keep_ns = GC_DEFAULT_KEEP_NS };
	const char *db = NULL;
	int c, ret;
	enum output_format format = FORMAT_TEXT;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_KEEP:
			if ((ret = cli_parse_keep("gc", optarg, &o.keep_ns)))
				return ret;
			break;
		case OPT_MAX_DB:
			if ((ret = cli_parse_max_db("gc", optarg, &o.max_bytes)))
				return ret;
			break;
		case OPT_DRY_RUN: o.dry_run = 1; break;
		case OPT_JSON: format = FORMAT_JSON; break;
		case 'f':
			if ((ret = cli_format("gc", optarg, CLI_TEXT_JSON, &format)) != 0)
				return ret;
			break;
		case CLI_OPT_DB: db = optarg; break;
		case 'h': fputs(usage_text, stdout); return EXIT_OK;
		case ':': return cli_usage("gc", "option '%s' needs a value", argv[optind - 1]);
		default: return cli_usage("gc", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cli_usage("gc", "unexpected argument '%s'", argv[optind]);
	o.now_ns = real_ns();
	return gc_run(db, &o, format == FORMAT_JSON, 0, 0);
}
