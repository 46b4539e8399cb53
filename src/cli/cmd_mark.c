/* rsswatch mark: a stage marker from a shell script, added to the running recording of
 * a process. */
#include "base/buf.h"
#include "base/clock.h"
#include "base/util.h"
#include "cli/cli.h"
#include "record/target.h"
#include "store/store.h"

#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the command line asks for: a label, and where it goes. */
struct mark_args {
	const char *db, *label;
	const char *run;	/* --run, or NULL */
	pid_t pid;		/* -p, or 0 */
};

#define AT(field, type) CLI_AT(struct mark_args, field, type)
static const struct cli_opt mark_opts[] = {
	{ "pid", 'p', CLI_CALLBACK, AT(pid, pid_t), .fn = cli_opt_pid, .arg = "PID",
	  .help = "the recorded process" },
	{ "run", 0, CLI_STRING, AT(run, const char *), .arg = "RUN", .help = "a run id or 'last'" },
	CLI_DB_ROW(struct mark_args),
	CLI_OPTS_END,
};

const struct cli_cmd mark_cli = {
	.verb = "mark",
	.usage = "usage: rsswatch mark [-p PID | --run RUN] LABEL [--db PATH]\n",
	.about = "Adds a mark with the current time to the running recording of process PID (every\n"
		 "running recording of it: its own, a tree's of one of its ancestors, and the one\n"
		 "that launched it, so that 'rsswatch mark -p $$' works from a launched script),\n"
		 "or to run RUN; without either, to the one recording that is running (an error\n"
		 "when none or several are). 'rsswatch show' lists the marks with the memory at each.\n",
	.opts = mark_opts,
};

/* Reads the options and the label into *a. Returns 0, CLI_DONE (--help printed) or
 * EXIT_USAGE (printed). */
static int read_args(int argc, char **argv, struct mark_args *a)
{
	memset(a, 0, sizeof(*a));
	int ret = cli_parse(&mark_cli, argc, argv, a);
	if (ret)
		return ret;
	if (a->pid && a->run)
		return cli_usage("mark", "give -p PID or --run RUN, not both");
	if (argc - optind != 1 || !argv[optind][0])
		return cli_usage("mark", "give one non-empty LABEL");
	a->label = argv[optind];
	return 0;
}

/* --run RUN: the mark goes to that run, which must still be recording. Returns 0 or
 * EXIT_USAGE / EXIT_FAIL (printed). */
static int mark_run(struct store *st, const char *ref, int64_t now, const char *label)
{
	int64_t id;
	struct run r;
	int ret = cli_resolve_run(st, ref, &id);
	if (ret)
		return ret;
	if (store_get_run(st, id, &r) < 0) {
		cli_error("cannot read run %lld: %s", (long long)id, store_errmsg(st));
		return EXIT_FAIL;
	}
	int running = strcmp(r.outcome, OUTCOME_RUNNING) == 0;
	run_release(&r);
	if (!running) {
		cli_error("run %lld is not being recorded any more", (long long)id);
		return EXIT_FAIL;
	}
	if (store_add_mark(st, id, now, label) < 0) {
		cli_error("cannot store the mark in run %lld: %s", (long long)id, store_errmsg(st));
		return EXIT_FAIL;
	}
	return 0;
}

/* Neither -p nor --run: the mark goes to the one recording that is running. Returns 0
 * or EXIT_FAIL (printed: none, or several, are running). */
static int mark_the_running(struct store *st, int64_t now, const char *label)
{
	struct run *runs;
	size_t n, running = 0;
	int64_t id = 0;
	int ret = EXIT_OK;
	if (store_list_runs(st, 0, &runs, &n) < 0) {
		cli_error("cannot list runs: %s", store_errmsg(st));
		return EXIT_FAIL;
	}
	struct buf which = { 0 };
	for (size_t i = 0; i < n; i++)
		if (strcmp(runs[i].outcome, OUTCOME_RUNNING) == 0) {
			if (runs[i].pid > 0)
				buf_printf(&which, "%s%lld (pid %d)", running ? ", " : "",
					   (long long)runs[i].id, (int)runs[i].pid);
			else	/* a command being launched: its pid is not stored yet */
				buf_printf(&which, "%s%lld (starting)", running ? ", " : "",
					   (long long)runs[i].id);
			id = runs[i].id;
			running++;
		}
	store_free_runs(runs, n);
	if (running == 1 && store_add_mark(st, id, now, label) != 0) {
		cli_error("cannot add a mark to run %lld: %s", (long long)id, store_errmsg(st));
		ret = EXIT_FAIL;
	} else if (running == 0) {
		cli_error("no recording is running to mark");
		ret = EXIT_FAIL;
	} else if (running > 1) {
		cli_error("%zu recordings are running (runs %s): give -p PID or --run RUN", running,
			  buf_str(&which));
		ret = EXIT_FAIL;
	}
	buf_release(&which);
	return ret;
}

/* Whether run r, which is being recorded, records process anc[0] (anc: its ancestry
 * from target_ancestry(), nearest first): it is the run's own target, a descendant of a
 * tree's target, or the command a recorder launched (or a descendant of it, with a
 * tree). The last holds before the recorder has stored the command's pid: a launched
 * command can mark its own run from its first instruction. */
static int run_records(const struct run *r, const struct proc_id *anc, size_t n)
{
	if (r->pid > 0 && r->pid == anc[0].pid)
		return 1;
	for (size_t i = 1; i < n; i++) {
		if (r->tree && r->pid > 0 && anc[i].pid == r->pid)
			return 1;
		/* the recorder itself: its child anc[i - 1] is the command it launched */
		if (r->mode && strcmp(r->mode, "command") == 0 && anc[i].pid == r->recorder_pid &&
		    anc[i].starttime == r->recorder_start && (r->tree || i == 1))
			return 1;
	}
	return 0;
}

/* -p PID: the mark goes to every running recording of that process (run_records()).
 * Returns 0 or EXIT_FAIL (printed: there is none). */
static int mark_pid(struct store *st, pid_t pid, int64_t now, const char *label)
{
	struct run *runs;
	struct proc_id *anc;
	size_t n, nanc, marked = 0;
	if (store_list_runs(st, 0, &runs, &n) < 0) {
		cli_error("cannot list runs: %s", store_errmsg(st));
		return EXIT_FAIL;
	}
	target_ancestry(pid, &anc, &nanc);
	struct proc_id self = { pid, 0 };
	for (size_t i = 0; i < n; i++)
		if (strcmp(runs[i].outcome, OUTCOME_RUNNING) == 0 &&
		    run_records(&runs[i], nanc ? anc : &self, nanc ? nanc : 1) &&
		    store_add_mark(st, runs[i].id, now, label) == 0)
			marked++;
	free(anc);
	store_free_runs(runs, n);
	if (!marked) {
		cli_error("no running recording of pid %d", (int)pid);
		return EXIT_FAIL;
	}
	return 0;
}

int cmd_mark(int argc, char **argv)
{
	struct mark_args a;
	int ret = read_args(argc, argv, &a);
	if (ret)
		return ret == CLI_DONE ? EXIT_OK : ret;
	struct store *st;
	if ((ret = cli_open_store(a.db, &st, CLI_STORE_WRITE)) != 0)
		return ret;
	int64_t now = real_ns();
	if (a.run)
		ret = mark_run(st, a.run, now, a.label);
	else if (a.pid)
		ret = mark_pid(st, a.pid, now, a.label);
	else
		ret = mark_the_running(st, now, a.label);
	store_close(st);
	return ret;
}
