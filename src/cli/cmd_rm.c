/* rsswatch rm: delete runs with their samples, events and marks. */
#include "cli/cli.h"
#include "store/store.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>

static const char usage_text[] =
	"usage: rsswatch rm RUN... [--db PATH]\n"
	"\n"
	"Deletes runs (ids, or 'last') with their samples, marks and events. A run that is\n"
	"still being recorded is refused.\n";

int cmd_rm(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "db", required_argument, NULL, CLI_OPT_DB },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	const char *db = NULL;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case CLI_OPT_DB: db = optarg; break;
		case 'h': fputs(usage_text, stdout); return EXIT_OK;
		default: return cli_bad_option("rm", c, argv);
		}
	}
	if (optind == argc)
		return cli_usage("rm", "give at least one RUN");

	struct store *st;
	int ret = cli_open_store(db, &st, CLI_STORE_WRITE);
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
