/* The command-line layer: the only place that prints errors and chooses exit codes.
 * Each verb lives in its own cmd_*.c, reads its options from its table (cli/opts.h)
 * and is listed in the table in verbs.c. */
#ifndef RSW_CLI_CLI_H
#define RSW_CLI_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "cli/opts.h"
#include "render/format.h"
#include "render/svg.h"
#include "store/run.h"

/* Exit codes (man/rsswatch.1, EXIT STATUS). A launched command's own status is passed through; 125, 126
 * and 127 are used when rsswatch failed, the command could not run, or was not found. */
enum {
	EXIT_OK = 0,
	EXIT_FAIL = 1,
	EXIT_USAGE = 2,
	EXIT_CANCELED = 125,
	EXIT_CANNOT_INVOKE = 126,
	EXIT_ENOENT = 127,
};

struct verb {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
	const struct cli_cmd *cli;	/* its options (cli/opts.h), for test_opts */
};

/* A verb named "__..." is hidden: --help does not list it and the completion does not
 * offer it (the shell completions' __complete, for no one to type). A name, not a
 * field, so that the table's rows stay one short line each. */
static inline int verb_hidden(const struct verb *v)
{
	return v->name[0] == '_' && v->name[1] == '_';
}

int cmd_record(int argc, char **argv);
int cmd_ls(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_rm(int argc, char **argv);
int cmd_gpus(int argc, char **argv);
int cmd_mark(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_model(int argc, char **argv);
int cmd_agent(int argc, char **argv);
int cmd_gc(int argc, char **argv);
int cmd_complete(int argc, char **argv);

/* Each verb's command line: its option table and --help (cli/opts.h), in its file. */
extern const struct cli_cmd record_cli, ls_cli, show_cli, export_cli, rm_cli, gpus_cli,
	mark_cli, plot_cli, report_cli, compare_cli, model_cli, agent_cli, gc_cli, complete_cli;

/* All verbs, in the order `rsswatch --help` lists them; NULL-terminated. */
extern const struct verb verbs[];

/* The database path: --db if given, else $RSSWATCH_DB, else
 * $XDG_STATE_HOME/rsswatch/rsswatch.db (when that is an absolute path, as the XDG
 * specification asks), else ~/.local/state/rsswatch/rsswatch.db.
 * Returns a malloc'ed string. */
char *cli_db_path(const char *opt);

/* Whether path (a database that --db names) does not exist and neither does its
 * directory; then says so (printed). */
int cli_db_dir_missing(const char *path);
/* Whether --db was given an empty path (said: an error, status 2). opt may be NULL. */
int cli_db_empty(const char *opt);

struct store;

enum {
	CLI_STORE_QUIET_MISSING = 1 << 0,	/* no database yet: -ENOENT, nothing printed */
	CLI_STORE_WRITE = 1 << 1,		/* the verb writes (rm, mark); else read-only */
};
/* Opens the run database for a verb, read-only unless flags has CLI_STORE_WRITE;
 * prints the error. Returns 0, EXIT_FAIL, or -ENOENT (printed nothing) when there is no
 * database yet and flags has CLI_STORE_QUIET_MISSING. */
int cli_open_store(const char *db_opt, struct store **st, int flags);
/* Resolves a RUN argument ("last", an id, or "sID": series ID's last run; see
 * run_ref_parse in store/run.h) to one run; prints the error and returns EXIT_USAGE
 * or EXIT_FAIL, else 0. */
int cli_resolve_run(struct store *st, const char *ref, int64_t *id);
/* For verbs that take several RUNs: a copy of refs[0..n) in which each "sID:N" (the
 * last N runs of series ID) is replaced by the ids of those runs, oldest first: as
 * arguments of their own, or, inside a comma-separated group (compare), in that group.
 * Other arguments are copied as they are (resolved later). Returns 0 with *out (free
 * with cli_free_refs) and *nout, or EXIT_USAGE / EXIT_FAIL (printed). */
int cli_expand_runs(struct store *st, char *const *refs, size_t n, char ***out, size_t *nout);
void cli_free_refs(char **refs, size_t n);
/* The store of db opened for reading, and refs[0..n) expanded (cli_expand_runs) into
 * *out and *nout. Returns 0, or the exit status (printed) with nothing left open. */
int cli_open_runs(const char *db, char *const *refs, size_t n, struct store **st, char ***out,
		  size_t *nout);

/* Run parameters given with --param KEY=VALUE, in the order given; owned (free with
 * run_params_free(v, n)). */
struct cli_params {
	struct run_param *v;
	size_t n;
};
/* A --param row's callback (ls, model: a filter, any key again): KEY=VALUE appended to
 * the struct cli_params at to. cli_param_take does it for any caller, once: a key
 * given twice is refused (record). Return 0 or EXIT_USAGE (printed). */
int cli_opt_param(const struct cli_state *st, const struct cli_opt *o, const char *arg, void *to);
int cli_param_take(const struct cli_state *st, const struct cli_opt *o, const char *arg,
		   struct cli_params *p, int once);
/* A -p PID row's callback: a process id >= 1 into the pid_t at to. */
int cli_opt_pid(const struct cli_state *st, const struct cli_opt *o, const char *arg, void *to);

/* A test knob of the environment: NAME set to anything but "" or "0". */
int cli_env_flag(const char *name);

/* A verb on one RUN (the operands left after getopt: none means "last"): sets *ref and
 * opens the store read-only. Returns 0, or EXIT_USAGE / EXIT_FAIL (printed). */
int cli_one_run(const char *verb, int argc, char **argv, const char *db_opt,
		const char **ref, struct store **st);

/* --time KIND of a chart (a CLI_CHOICE row's choices): elapsed or wall, into an enum
 * chart_time. */
extern const struct cli_choice cli_chart_times[];

/* What most reading verbs write: text for people (the default) or one JSON document. */
#define CLI_TEXT_JSON (FORMAT_BIT(FORMAT_TEXT) | FORMAT_BIT(FORMAT_JSON))


#endif
