/* rsswatch mark: a stage marker from a shell script, added to the running recording of
 * a process. */
#include "base/buf.h"
#include "base/clock.h"
#include "base/parse.h"
#include "base/util.h"
#include "cli/cli.h"
#include "store/store.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

static const char usage_text[] =
	"usage: rsswatch mark [-p PID | --run RUN] LABEL [--db PATH]\n"
	"\n"
	"Adds a mark with the current time to the running recording of process PID (every\n"
	"running recording of it), or to run RUN; without either, to the one recording\n"
	"that is running (an error when none or several are). 'rsswatch show' lists the\n"
	"marks with the memory at each.\n"
	"\n"
	"  -p, --pid PID   the recorded process\n"
	"      --run RUN   a run id or 'last'\n"
	"      --db PATH   the run database\n";

enum { OPT_RUN = CLI_OPT_DB + 1 };

int cmd_mark(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "run", required_argument, NULL, OPT_RUN },
		{ "db", required_argument, NULL, CLI_OPT_DB },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	const char *db = NULL, *pid_arg = NULL, *run_arg = NULL;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":p:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p': pid_arg = optarg; break;
		case OPT_RUN: run_arg = optarg; break;
		case CLI_OPT_DB: db = optarg; break;
		case 'h': fputs(usage_text, stdout); return EXIT_OK;
		default: return cli_bad_option("mark", c, argv);
		}
	}
	if (pid_arg && run_arg)
		return cli_usage("mark", "give -p PID or --run RUN, not both");
	if (argc - optind != 1 || !argv[optind][0])
		return cli_usage("mark", "give one non-empty LABEL");
	const char *label = argv[optind];
	pid_t pid = 0;
	if (pid_arg && parse_pid(pid_arg, &pid) < 0)
		return cli_usage("mark", "invalid pid '%s': give a process id >= 1", pid_arg);

	struct store *st;
	int ret = cli_open_store(db, &st, CLI_STORE_WRITE);
	if (ret)
		return ret;
	int64_t now = real_ns();
	int marked = 0;
	if (run_arg) {
		int64_t id;
		struct run r;
		if ((ret = cli_resolve_run(st, run_arg, &id)) != 0)
			goto out;
		if (store_get_run(st, id, &r) < 0) {
			cli_error("cannot read run %lld: %s", (long long)id, store_errmsg(st));
			ret = EXIT_FAIL;
			goto out;
		}
		int running = strcmp(r.outcome, OUTCOME_RUNNING) == 0;
		run_release(&r);
		if (!running) {
			cli_error("run %lld is not being recorded any more", (long long)id);
			ret = EXIT_FAIL;
			goto out;
		}
		if (store_add_mark(st, id, now, label) == 0)
			marked++;
	} else if (!pid_arg) {
		/* neither: the one recording that is running */
		struct run *runs;
		size_t n, running = 0;
		int64_t id = 0;
		if (store_list_runs(st, 0, &runs, &n) < 0) {
			cli_error("cannot list runs: %s", store_errmsg(st));
			ret = EXIT_FAIL;
			goto out;
		}
		struct buf which = { 0 };
		for (size_t i = 0; i < n; i++)
			if (strcmp(runs[i].outcome, OUTCOME_RUNNING) == 0) {
				buf_printf(&which, "%s%lld (pid %d)", running ? ", " : "", (long long)runs[i].id,
					   (int)runs[i].pid);
				id = runs[i].id;
				running++;
			}
		store_free_runs(runs, n);
		if (running == 1 && store_add_mark(st, id, now, label) == 0) {
			marked++;
		} else if (running == 1) {
			cli_error("cannot add a mark to run %lld: %s", (long long)id, store_errmsg(st));
			ret = EXIT_FAIL;
		} else if (running == 0) {
			cli_error("no recording is running to mark");
			ret = EXIT_FAIL;
		} else {
			cli_error("%zu recordings are running (runs %s): give -p PID or --run RUN", running,
				  buf_str(&which));
			ret = EXIT_FAIL;
		}
		buf_release(&which);
	} else {
		struct run *runs;
		size_t n;
		if (store_list_runs(st, 0, &runs, &n) < 0) {
			cli_error("cannot list runs: %s", store_errmsg(st));
			ret = EXIT_FAIL;
			goto out;
		}
		for (size_t i = 0; i < n; i++)
			if (runs[i].pid == pid && strcmp(runs[i].outcome, OUTCOME_RUNNING) == 0 &&
			    store_add_mark(st, runs[i].id, now, label) == 0)
				marked++;
		store_free_runs(runs, n);
		if (!marked) {
			cli_error("no running recording of pid %d", (int)pid);
			ret = EXIT_FAIL;
		}
	}
out:
	store_close(st);
	return ret;
}
