/* Helpers shared by the verbs that read the run database. */
#include "base/buf.h"
#include "base/parse.h"
#include "base/util.h"
#include "cli/cli.h"
#include "record/recorder.h"
#include "store/store.h"

#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *cli_db_path(const char *opt)
{
	const char *env;
	char *p;
	if (opt && *opt)
		return xstrdup(opt);
	if ((env = getenv("RSSWATCH_DB")) && *env)
		return xstrdup(env);
	/* A relative $XDG_STATE_HOME is to be ignored (XDG Base Directory Specification):
	 * it would put the database wherever the command runs. */
	const char *xdg = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");
	const char *base = xdg && xdg[0] == '/' ? xdg : NULL;
	const char *suffix = "/rsswatch/rsswatch.db";
	if (!base) {
		base = home && *home ? home : ".";
		suffix = "/.local/state/rsswatch/rsswatch.db";
	}
	size_t n = strlen(base) + strlen(suffix) + 1;
	p = xmalloc(n);
	snprintf(p, n, "%s%s", base, suffix);
	return p;
}

int cli_db_empty(const char *opt)
{
	if (!opt || *opt)
		return 0;
	cli_error("--db needs a path: an empty one names no database");
	return 1;
}

int cli_db_dir_missing(const char *path)
{
	struct stat sb;
	if (lstat(path, &sb) == 0 || errno != ENOENT)
		return 0;	/* there, or a failure store_open will explain */
	char *dir = xstrdup(path);
	char *d = dirname(dir);
	int missing = stat(d, &sb) < 0 && errno == ENOENT;
	if (missing)
		cli_error("cannot create the database %s: the directory %s does not exist "
			  "(--db creates no directories)", path, d);
	free(dir);
	return missing;
}

int cli_open_store(const char *db_opt, struct store **st, int flags)
{
	char err[512];
	if (cli_db_empty(db_opt))
		return EXIT_USAGE;
	char *path = cli_db_path(db_opt);
	int e = store_open(path, flags & CLI_STORE_WRITE ? 0 : STORE_READONLY, st, err,
			   sizeof(err));
	if (e == -ENOENT && (flags & CLI_STORE_QUIET_MISSING)) {
		free(path);
		return -ENOENT;
	}
	if (e < 0)
		cli_error("%s: %s", path, err);
	else
		store_set_alive(*st, recorder_alive);	/* "running" runs of dead recorders */
	free(path);
	return e < 0 ? EXIT_FAIL : 0;
}

int cli_env_flag(const char *name)
{
	const char *v = getenv(name);
	return v && *v && strcmp(v, "0") != 0;
}

int cli_param_take(const struct cli_state *st, const struct cli_opt *o, const char *arg,
		   struct cli_params *p, int once)
{
	struct run_param rp;
	char why[128];
	if (run_param_parse(arg, &rp, why, sizeof(why)) < 0)
		return cli_opt_invalid(st, o, arg, why);
	if (once && run_param_find(p->v, p->n, rp.key)) {
		free(rp.value);
		return cli_usage(st->cmd->verb, "--param %s given twice", rp.key);
	}
	p->v = xrealloc(p->v, (p->n + 1) * sizeof(*p->v));
	p->v[p->n++] = rp;
	return 0;
}

int cli_opt_param(const struct cli_state *st, const struct cli_opt *o, const char *arg, void *to)
{
	return cli_param_take(st, o, arg, to, 0);
}

int cli_opt_pid(const struct cli_state *st, const struct cli_opt *o, const char *arg, void *to)
{
	pid_t pid;
	if (parse_pid(arg, &pid) < 0)
		return cli_opt_invalid(st, o, arg, "give a process id >= 1");
	memcpy(to, &pid, sizeof(pid));
	return 0;
}

int cli_one_run(const char *verb, int argc, char **argv, const char *db_opt,
		const char **ref, struct store **st)
{
	if (argc - optind > 1)
		return cli_usage(verb, "give one RUN");
	*ref = optind < argc ? argv[optind] : "last";
	return cli_open_store(db_opt, st, 0);
}

const struct cli_choice cli_chart_times[] = {
	{ "elapsed", CHART_ELAPSED },
	{ "wall", CHART_WALL },
	{ NULL, 0 },
};

/* One RUN argument's failure to resolve, in words; the exit status. */
static int ref_failed(struct store *st, const char *ref, int e)
{
	struct buf shown = { 0 };	/* an argument: one line, whatever was given */
	buf_put_printable(&shown, ref);
	const char *r = buf_str(&shown);
	int ret = EXIT_FAIL;
	if (e == -EINVAL) {
		cli_error("invalid run '%s': give a run id, 'last', 'sID' (the last run of series "
			  "ID) or 'sID:N' (its last N runs)", r);
		ret = EXIT_USAGE;
	} else if (e == -E2BIG) {
		cli_error("'%s' names several runs: give one here ('sID' is the series' last)", r);
		ret = EXIT_USAGE;
	} else if (e == -ENOENT && ref[0] == 'l') {
		cli_error("no runs recorded yet");
	} else if (e == -ENOENT && ref[0] == 's') {
		cli_error("no series %s (rsswatch ls --series lists them)", r + 1);
	} else if (e == -ENOENT) {
		cli_error("no run %s", r);
	} else {
		cli_error("cannot look up run %s: %s", r, store_errmsg(st));
	}
	buf_release(&shown);
	return ret;
}

int cli_resolve_run(struct store *st, const char *ref, int64_t *id)
{
	int e = store_resolve(st, ref, id);
	return e < 0 ? ref_failed(st, ref, e) : 0;
}

int cli_expand_runs(struct store *st, char *const *refs, size_t n, char ***out, size_t *nout)
{
	char **v = xcalloc(n ? n : 1, sizeof(*v));
	size_t cnt = 0, cap = n;
	for (size_t i = 0; i < n; i++) {
		/* each comma-separated part; a part that names N runs becomes N ids */
		struct buf group = { 0 };
		char *arg = xstrdup(refs[i]), *save = NULL;
		int top = !strchr(refs[i], ',');
		for (char *ref = strtok_r(arg, ",", &save); ref; ref = strtok_r(NULL, ",", &save)) {
			struct run_ref rr;
			int64_t *ids;
			size_t k;
			if (run_ref_parse(ref, &rr) < 0 || !rr.series || rr.count == 1) {
				buf_printf(&group, "%s%s", group.len ? "," : "", ref);
				continue;
			}
			int e = store_resolve_runs(st, ref, &ids, &k);
			if (e < 0) {
				int ret = ref_failed(st, ref, e);
				buf_release(&group);
				free(arg);
				cli_free_refs(v, cnt);
				return ret;
			}
			for (size_t j = 0; j < k; j++) {
				if (top) {
					if (cnt == cap)
						v = xrealloc(v, (cap = cap * 2 + 1) * sizeof(*v));
					v[cnt] = xmalloc(24);
					snprintf(v[cnt++], 24, "%lld", (long long)ids[j]);
				} else {
					buf_printf(&group, "%s%lld", group.len ? "," : "", (long long)ids[j]);
				}
			}
			free(ids);
		}
		free(arg);
		if (!top || group.len) {
			if (cnt == cap)
				v = xrealloc(v, (cap = cap * 2 + 1) * sizeof(*v));
			v[cnt++] = xstrdup(buf_str(&group));
		}
		buf_release(&group);
	}
	*out = v;
	*nout = cnt;
	return 0;
}

int cli_open_runs(const char *db, char *const *refs, size_t n, struct store **st, char ***out,
		  size_t *nout)
{
	int ret = cli_open_store(db, st, 0);
	if (ret)
		return ret;
	if ((ret = cli_expand_runs(*st, refs, n, out, nout)) != 0) {
		store_close(*st);
		*st = NULL;
	}
	return ret;
}

void cli_free_refs(char **refs, size_t n)
{
	for (size_t i = 0; refs && i < n; i++)
		free(refs[i]);
	free(refs);
}
