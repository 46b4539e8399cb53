/* rsswatch show: one run's summary, its processes, marks and events, and a chart of RSS. */
#include "base/buf.h"
#include "cli/cli.h"
#include "render/show.h"
#include "render/tchart.h"
#include "store/store.h"

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct show_args {
	const char *db;
	enum output_format format;
	int all_events;
	int all_stacks;
};

#define AT(field, type) CLI_AT(struct show_args, field, type)
static const struct cli_opt show_opts[] = {
	{ "events", 0, CLI_FLAG, AT(all_events, int),
	  .help = "list every event, with each process start and exit of a set (otherwise "
		  "counted in one line), and every mark (otherwise the first 52)" },
	{ "stacks", 0, CLI_FLAG, AT(all_stacks, int),
	  .help = "with a run recorded with --stacks: every stack that held memory at the "
		  "peak and at the end, each whole (otherwise the 15 largest, by the function "
		  "that allocated)" },
	{ "format", 'f', CLI_FORMAT, AT(format, enum output_format), .formats = CLI_TEXT_JSON,
	  .help = " (default: text)" },
	{ "json", 0, CLI_FLAG, AT(format, enum output_format), .set = FORMAT_JSON,
	  .help = "the same as --format json: one run object with its marks, events, OOM "
		  "kills and processes" },
	CLI_DB_ROW(struct show_args),
	CLI_OPTS_END,
};

const struct cli_cmd show_cli = {
	.verb = "show",
	.usage = "usage: rsswatch show [RUN] [--format text|json] [--json] [--events] [--stacks]\n"
		 "                    [--db PATH]\n",
	.about = "Shows one run (default: the last): its summary, the largest processes of a set\n"
		 "(--tree, -g), marks, events and a chart of RSS over time that fits the terminal.\n"
		 "RUN is a run id, 'last', or sID: the last run of series ID (record --follow).\n",
	.opts = show_opts,
};

int cmd_show(int argc, char **argv)
{
	struct show_args a = { .format = FORMAT_TEXT };
	int ret = cli_parse(&show_cli, argc, argv, &a);
	if (ret)
		return ret == CLI_DONE ? EXIT_OK : ret;
	const char *ref;
	struct store *st;
	ret = cli_one_run("show", argc, argv, a.db, &ref, &st);
	if (ret)
		return ret;
	int64_t id;
	struct run r;
	memset(&r, 0, sizeof(r));
	struct mark *marks = NULL;
	struct event *events = NULL;
	struct oom_kill *kills = NULL;
	struct proc_summary *procs = NULL;
	struct stored_stack *stacks[STACK_MOMENTS] = { NULL };
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
	for (int m = 0; m < STACK_MOMENTS && RUN_HAS_STACKS(&r); m++) {
		if (store_stacks(st, id, (enum stack_moment)m, &stacks[m], &sh.stacks.n[m]) < 0)
			goto fail;
		sh.stacks.v[m] = stacks[m];
	}
	sh.all_stacks = a.all_stacks;
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
	if (a.format == FORMAT_JSON)
		show_json(&b, &sh, f);
	else
		show_text(&b, &sh, f, a.all_events, terminal_width(STDOUT_FILENO));
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
	for (int m = 0; m < STACK_MOMENTS; m++)
		store_free_stacks(stacks[m], sh.stacks.n[m]);
	store_close(st);
	return ret;
}
