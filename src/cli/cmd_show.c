/* rsswatch show: one run's summary, its processes, marks and events, and a chart of RSS. */
#include "base/buf.h"
#include "cli/cli.h"
#include "render/show.h"
#include "render/tchart.h"
#include "store/store.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage_text[] =
	"usage: rsswatch show [RUN] [--format text|json] [--json] [--events] [--db PATH]\n"
	"\n"
	"Shows one run (default: the last): its summary, the largest processes of a set\n"
	"(--tree, -g), marks, events and a chart of RSS over time that fits the terminal.\n"
	"RUN is a run id, 'last', or sID: the last run of series ID (record --follow).\n"
	"\n"
	"      --events   list every event, with each process start and exit of a set\n"
	"                 (otherwise counted in one line), and every mark (otherwise the\n"
	"                 first 52)\n"
	"  -f, --format F text (the default) or json\n"
	"      --json     the same as --format json: one run object with its marks,\n"
	"                 events, OOM kills and processes\n"
	"      --db PATH  the run database\n";

int cmd_show(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "format", required_argument, NULL, 'f' },
		{ "events", no_argument, NULL, 'e' },
		{ "db", required_argument, NULL, CLI_OPT_DB },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, all_events = 0, ret;
	enum output_format format = FORMAT_TEXT;
	const char *db = NULL;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j': format = FORMAT_JSON; break;
		case 'f':
			if ((ret = cli_format("show", optarg, CLI_TEXT_JSON, &format)) != 0)
				return ret;
			break;
		case 'e': all_events = 1; break;
		case CLI_OPT_DB: db = optarg; break;
		case 'h': fputs(usage_text, stdout); return EXIT_OK;
		default: return cli_bad_option("show", c, argv);
		}
	}
	const char *ref;
	struct store *st;
	ret = cli_one_run("show", argc, argv, db, &ref, &st);
	if (ret)
		return ret;
	int64_t id;
	struct run r;
	memset(&r, 0, sizeof(r));
	struct mark *marks = NULL;
	struct event *events = NULL;
	struct oom_kill *kills = NULL;
	struct proc_summary *procs = NULL;
	struct show_run sh = { .run = &r };
	struct show_figures *f = NULL;
	struct buf b = { 0 };
	if ((ret = cli_resolve_run(st, ref, &id)) != 0)
		goto out_store;
	if (store_get_run(st, id, &r) < 0 || store_marks(st, id, &marks, &sh.nm) < 0 ||
	    store_events(st, id, &events, &sh.ne) < 0 ||
	    store_oom_kills(st, id, &kills, &sh.nk) < 0 ||
	    store_processes(st, id, &procs, &sh.np) < 0)
		goto fail;
	struct run_thinning thin;
	int thinned = store_run_thinning(st, id, &thin);
	if (thinned < 0)
		goto fail;
	sh.thinned = thinned ? &thin : NULL;
	sh.marks = marks;
	sh.events = events;
	sh.kills = kills;
	sh.procs = procs;
	f = show_figures_new(&sh);
	if (store_each_sample(st, id, show_add_sample, f) < 0 ||
	    store_each_counter(st, id, show_add_counter, f) < 0)
		goto fail;
	if (format == FORMAT_JSON)
		show_json(&b, &sh, f);
	else
		show_text(&b, &sh, f, all_events, terminal_width(STDOUT_FILENO));
	fputs(buf_str(&b), stdout);
	goto out_store;
fail:
	cli_error("cannot read run %lld: %s", (long long)id, store_errmsg(st));
	ret = EXIT_FAIL;
out_store:
	show_figures_free(f);
	run_release(&r);
	buf_release(&b);
	store_free_marks(marks, sh.nm);
	store_free_events(events, sh.ne);
	free(kills);
	free(procs);
	store_close(st);
	return ret;
}
