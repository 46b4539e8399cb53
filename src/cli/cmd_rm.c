/* rsswatch rm: delete runs with their samples, events and marks. */
#include "cli/cli.h"
#include "store/store.h"

#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

struct rm_args {
	const char *db;
};

static const struct cli_opt rm_opts[] = {
	CLI_DB_ROW(struct rm_args),
	CLI_OPTS_END,
};

const struct cli_cmd rm_cli = {
	.verb = "rm",
	.usage = "usage: rsswatch rm RUN... [--db PATH]\n",
	.about = "Deletes runs (ids, or 'last') with their samples, marks and events. A run that is\n"
		 "still being recorded is refused.\n",
	.opts = rm_opts,
};

int cmd_rm(int argc, char **argv)
{
	struct rm_args a = { NULL };
	int ret = cli_parse(&rm_cli, argc, argv, &a);
	if (ret)
		return ret == CLI_DONE ? EXIT_OK : ret;
	if (optind == argc)
		return cli_usage("rm", "give at least one RUN");

	struct store *st;
	ret = cli_open_store(a.db, &st, CLI_STORE_WRITE);
	if (ret)
		return ret;
	for (int i = optind; i < argc; i++) {
		int64_t id;
		int e = cli_resolve_run(st, argv[i], &id);
		if (e) {
			ret = ret ? ret : e;
			continue;
		}
		e = store_delete_run(st, id);
		if (e == -EBUSY) {
			cli_error("run %lld is still being recorded; stop its recorder first", (long long)id);
			ret = EXIT_FAIL;
		} else if (e < 0) {
			cli_error("cannot delete run %lld: %s", (long long)id, store_errmsg(st));
			ret = EXIT_FAIL;
		} else {
			printf("removed run %lld\n", (long long)id);
		}
	}
	store_close(st);
	return ret;
}
