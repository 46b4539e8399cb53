/* rsswatch gc: keep the run database bounded (retention), by hand. The rules live in
 * the store (src/store/retention.c, docs/guide/storage.md), the options and their
 * application in cli/retention.c (shared with record --keep and --max-db); this verb
 * says what was done. */
#include "cli/cli.h"
#include "cli/retention.h"
#include "base/buf.h"
#include "base/clock.h"
#include "base/fmt.h"
#include "base/parse.h"
#include "store/store.h"

#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define GC_DEFAULT_KEEP_NS (30LL * 86400 * NS_PER_S)

struct gc_args {
	const char *db;
	struct cli_retention ret;
	int dry_run;
	enum output_format format;
};

#define AT(field, type) CLI_AT(struct gc_args, field, type)
static const struct cli_opt gc_opts[] = {
	{ .kind = CLI_INCLUDE, .sub = cli_retention_opts, AT(ret, struct cli_retention) },
	{ "dry-run", 0, CLI_FLAG, AT(dry_run, int),
	  .help = "say what would be done, change nothing (the work is done in a transaction "
		  "that is rolled back; sizes after are estimates)" },
	{ "format", 'f', CLI_FORMAT, AT(format, enum output_format), .formats = CLI_TEXT_JSON,
	  .help = " (default: text)" },
	{ "json", 0, CLI_FLAG, AT(format, enum output_format), .set = FORMAT_JSON,
	  .help = "the same as --format json: the result as one JSON object" },
	CLI_DB_ROW(struct gc_args),
	CLI_OPTS_END,
};

const struct cli_cmd gc_cli = {
	.verb = "gc",
	.usage = "usage: rsswatch gc [--keep AGE] [--max-db SIZE] [--dry-run] [--format text|json]\n"
		 "                  [--json] [--db PATH]\n",
	.about = "Keeps the run database bounded. Runs that ended more than AGE ago (default 30d)\n"
		 "are thinned to at most 1000 samples each: every bucket of time keeps its\n"
		 "maximum, so peaks survive. With --max-db, while the database is larger than\n"
		 "SIZE (default: no bound), finished runs are thinned further, oldest first (to\n"
		 "1000 samples, then to 100), and as a last resort the series of the oldest runs\n"
		 "are removed. A run's summary (peak, outcome, times), its parameters, processes,\n"
		 "marks, events and OOM kills are always kept, and a run still being recorded is\n"
		 "never touched. Then the file is made smaller (the first time with VACUUM, which\n"
		 "needs free disk about the size of what is kept).\n",
	.opts = gc_opts,
	.more = "Exit status: 0; 1 when the database is locked by another process past 10 s, the\n"
		"disk is full, or SIZE cannot be met even with every finished run's series removed;\n"
		"2 on bad usage.\n",
};

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

/* The result, once store_gc has done its work. */
static void on_result(void *ctx, const struct store_gc_opts *o, const struct store_gc_result *res)
{
	struct report *rep = ctx;
	char a[32], b[32];
	if (rep->json) {
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
		       ",\"changed\":[%s]}\n", res->runs_seen, res->runs_running, res->runs_thinned,
		       res->runs_emptied, res->rows_removed, res->bytes_before, res->bytes_after,
		       res->over_bound ? "true" : "false", buf_str(&rep->runs));
		return;
	}
	printf("gc%s: %" PRIu64 " runs; %s%" PRIu64 " thinned, %" PRIu64 " emptied, %" PRIu64
	       " rows removed", o->dry_run ? " (dry run, nothing changed)" : "",
	       res->runs_seen, o->dry_run ? "would be " : "", res->runs_thinned,
	       res->runs_emptied, res->rows_removed);
	if (res->runs_running)
		printf("; %" PRIu64 " still being recorded, left alone", res->runs_running);
	printf("\ndatabase: %s %s, %s%s after%s\n", fmt_bytes(a, sizeof(a), res->bytes_before),
	       o->dry_run ? "now" : "before", o->dry_run ? "about " : "",
	       fmt_bytes(b, sizeof(b), res->bytes_after),
	       res->reclaimed == 2 ? " (VACUUM)" : res->reclaimed == 1 ? " (incremental vacuum)" : "");
	if (res->checkpoint_busy)
		puts("note: a reader holds the write-ahead log; the file shrinks at its next "
		     "checkpoint");
}

int cmd_gc(int argc, char **argv)
{
	struct gc_args a = { .ret = { .keep_ns = GC_DEFAULT_KEEP_NS }, .format = FORMAT_TEXT };
	int ret = cli_parse(&gc_cli, argc, argv, &a);
	if (ret)
		return ret == CLI_DONE ? EXIT_OK : ret;
	if (optind < argc)
		return cli_usage("gc", "unexpected argument '%s'", argv[optind]);
	struct store_gc_opts o = { .keep_ns = a.ret.keep_ns, .max_bytes = a.ret.max_bytes,
				   .dry_run = a.dry_run, .now_ns = real_ns() };
	struct report rep = { .dry = a.dry_run, .json = a.format == FORMAT_JSON };
	struct cli_gc_report cb = { on_run, on_result, &rep };
	ret = cli_retention_gc(a.db, &o, 0, &cb);
	buf_release(&rep.runs);
	return ret;
}
