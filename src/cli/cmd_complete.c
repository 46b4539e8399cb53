/* rsswatch __complete WORD...: what the shell completions (dist/completion/) offer for
 * the last WORD of a command line, the words before it being the line after
 * "rsswatch". A hidden verb: `rsswatch --help` does not list it.
 *
 * It prints one line naming what to complete, then the candidates, one per line, that
 * start with the word being completed:
 *   words      the candidates follow (verbs, options, choices, runs, names)
 *   files      the shell completes file names itself
 *   commands   the shell completes command names itself (record's COMMAND)
 * For "--opt=VALUE" the candidates are values alone: both shells complete the part
 * after the '='.
 *
 * Nothing here holds a list of options: the verbs, their options and the values they
 * take come from verbs.c's table and each verb's option table (cli/opts.h). What an
 * option's value is comes from the row: a CLI_CHOICE's names, a CLI_FORMAT's formats,
 * else the value's name in --help (.arg): FILE..., F and PATH are files, RUN a run,
 * PID a process, PATTERN a process name, KEY and KEY=VALUE a run parameter, NAME,... a
 * counter of the runs on the line. A verb's operands are runs where its usage names
 * RUN as an operand, a command where it names COMMAND.
 *
 * The run database is opened read-only, and only when a run, a parameter or a counter
 * is asked for; no database is no candidates, never an error. Errors print nothing:
 * a completion must never write into the user's command line. */
#include "base/buf.h"
#include "base/sysroot.h"
#include "base/util.h"
#include "cli/cli.h"
#include "store/store.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The candidates gathered: owned strings, sorted and made unique before printing. */
struct cands {
	char **v;
	size_t n, cap;
	const char *prefix;	/* only strings that start with it are kept */
};

/* Whether s is fit for a line of output: printable, no newline, not empty. */
static int printable(const char *s)
{
	if (!*s)
		return 0;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return 0;
	return 1;
}

static void cand_add(struct cands *c, const char *s)
{
	if (strncmp(s, c->prefix, strlen(c->prefix)) != 0 || !printable(s))
		return;
	c->v = xgrow(c->v, c->n, &c->cap, sizeof(*c->v));
	c->v[c->n++] = xstrdup(s);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* What a word completes to. */
enum want {
	WANT_NONE,
	WANT_VERB,
	WANT_OPTION,
	WANT_VALUE,	/* of the row .row */
	WANT_RUN,
	WANT_COMMAND,
	WANT_FILE,
};

/* The command line as read so far. */
struct line {
	const char *db;			/* --db's value, or NULL */
	const struct verb *verb;
	char **runs;			/* the RUN operands given, for counter names */
	size_t nruns;
};

static const struct verb *find_verb(const char *name)
{
	for (const struct verb *v = verbs; v->name; v++)
		if (strcmp(v->name, name) == 0)
			return v;
	return NULL;
}

/* The row of c's table called name (a long name of n bytes), or with letter. */
static const struct cli_opt *find_row(const struct cli_row *rows, size_t nrows, const char *name,
				      size_t n, char letter)
{
	for (size_t i = 0; i < nrows; i++) {
		const struct cli_opt *o = rows[i].o;
		if (name && o->name && strlen(o->name) == n && strncmp(o->name, name, n) == 0)
			return o;
		if (!name && letter && o->letter == letter)
			return o;
	}
	return NULL;
}

/* Whether a row takes its value as the next word (a value that is not optional). */
static int takes_next(const struct cli_opt *o)
{
	return o->kind != CLI_FLAG && !(o->flags & CLI_OPTIONAL);
}

/* A verb's usage (its --help up to the first blank line), in b. */
static void usage_of(const struct verb *v, struct buf *b)
{
	cli_help(v->cli, b);
	const char *end = strstr(buf_str(b), "\n\n");
	if (end)
		b->len = (size_t)(end - buf_str(b));
}

/* Whether the usage has word as an operand ("RUN", "[RUN]", "RUN...", "[RUN...]"),
 * not as the value of an option ("--run RUN]"): its words are compared with the
 * brackets and dots taken off, and a word after an option (other than "--") is that
 * option's value. */
static int usage_operand(const char *usage, const char *word)
{
	char *copy = xstrdup(usage), *save = NULL, *prev = NULL;
	int found = 0;
	for (char *t = strtok_r(copy, " \n|", &save); t && !found; t = strtok_r(NULL, " \n|", &save)) {
		char *w = t + strspn(t, "[(");
		size_t n = strcspn(w, ".])");
		const char *p = prev ? prev + strspn(prev, "[(") : "";
		int after_option = p[0] == '-' && strncmp(p, "--]", 3) != 0 && strcmp(p, "--") != 0;
		found = n == strlen(word) && strncmp(w, word, n) == 0 && !after_option;
		prev = t;
	}
	free(copy);
	return found;
}

static enum want operand_want(const struct verb *v)
{
	struct buf u = { 0 };
	usage_of(v, &u);
	enum want w = usage_operand(buf_str(&u), "RUN") ? WANT_RUN :
		      usage_operand(buf_str(&u), "COMMAND") ? WANT_COMMAND : WANT_NONE;
	buf_release(&u);
	return w;
}

/* The store for reading, or NULL (no database, or one that cannot be read). */
static struct store *open_store(const struct line *l)
{
	struct store *st;
	char err[256];
	if (l->db && !*l->db)
		return NULL;
	char *path = cli_db_path(l->db);
	int e = store_open(path, STORE_READONLY, &st, err, sizeof(err));
	free(path);
	return e < 0 ? NULL : st;
}

/* "last", every run id, and "sID" for every series (record --follow). */
static void add_runs(struct cands *c, const struct line *l)
{
	struct store *st = open_store(l);
	struct run *runs = NULL;
	size_t n = 0;
	char id[32];
	cand_add(c, "last");
	if (!st)
		return;
	if (store_list_runs(st, 0, &runs, &n) == 0) {
		for (size_t i = 0; i < n; i++) {
			snprintf(id, sizeof(id), "%lld", (long long)runs[i].id);
			cand_add(c, id);
			if (runs[i].series > 0) {
				snprintf(id, sizeof(id), "s%lld", (long long)runs[i].series);
				cand_add(c, id);
			}
		}
		store_free_runs(runs, n);
	}
	store_close(st);
}

/* The keys of the runs' parameters, each followed by suffix ("" or "="). */
static void add_param_keys(struct cands *c, const struct line *l, const char *suffix)
{
	struct store *st = open_store(l);
	struct run *runs = NULL;
	size_t n = 0;
	if (!st)
		return;
	if (store_list_runs(st, 0, &runs, &n) == 0) {
		struct buf k = { 0 };
		for (size_t i = 0; i < n; i++)
			for (size_t j = 0; j < runs[i].nparams; j++) {
				buf_reset(&k);
				buf_printf(&k, "%s%s", runs[i].params[j].key, suffix);
				cand_add(c, buf_str(&k));
			}
		buf_release(&k);
		store_free_runs(runs, n);
	}
	store_close(st);
}

static int counter_name(void *ctx, int64_t elapsed_ns, const char *name, long long value)
{
	(void)elapsed_ns;
	(void)value;
	struct cands *c = ctx;
	/* counters are stored when they change: skip a name just added */
	if (c->n == 0 || strcmp(c->v[c->n - 1], name) != 0)
		cand_add(c, name);
	return 0;
}

/* The counter and gauge names of the runs on the line (else the last run), for a
 * comma-separated list: the names already typed stay in front of each candidate. */
static void add_counters(struct cands *c, const struct line *l, const char *typed)
{
	struct store *st = open_store(l);
	if (!st)
		return;
	const char *last_comma = strrchr(typed, ',');
	size_t keep = last_comma ? (size_t)(last_comma - typed) + 1 : 0;
	struct cands names = { .prefix = typed + keep };
	const char *last = "last";
	char *const *refs = l->nruns ? l->runs : (char *const *)&last;
	size_t nrefs = l->nruns ? l->nruns : 1;
	for (size_t i = 0; i < nrefs; i++) {
		int64_t *ids = NULL;
		size_t nids = 0;
		if (store_resolve_runs(st, refs[i], &ids, &nids) < 0)
			continue;
		for (size_t j = 0; j < nids; j++)
			store_each_counter(st, ids[j], counter_name, &names);
		free(ids);
	}
	store_close(st);
	struct buf b = { 0 };
	for (size_t i = 0; i < names.n; i++) {
		buf_reset(&b);
		buf_append(&b, typed, keep);
		buf_puts(&b, names.v[i]);
		cand_add(c, buf_str(&b));
		free(names.v[i]);
	}
	free(names.v);
	buf_release(&b);
}

/* Each process's id, or its name (comm), from /proc under the sysroot. */
static void add_procs(struct cands *c, int names)
{
	char path[4096];
	if (sysroot_path(path, sizeof(path), "/proc") < 0)
		return;
	DIR *d = opendir(path);
	if (!d)
		return;
	for (struct dirent *e; (e = readdir(d)) != NULL;) {
		if (!isdigit((unsigned char)e->d_name[0]) ||
		    strspn(e->d_name, "0123456789") != strlen(e->d_name))
			continue;
		if (!names) {
			cand_add(c, e->d_name);
			continue;
		}
		char comm[64];
		if (sysroot_path(path, sizeof(path), "/proc/%s/comm", e->d_name) < 0)
			continue;
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;	/* gone meanwhile */
		ssize_t r = read(fd, comm, sizeof(comm) - 1);
		close(fd);
		if (r <= 0)
			continue;
		comm[r] = '\0';
		if (comm[r - 1] == '\n')
			comm[r - 1] = '\0';
		cand_add(c, comm);
	}
	closedir(d);
}

/* Whether a row's value is a file, by the value's name in --help. */
static int file_arg(const char *arg)
{
	return arg && (strncmp(arg, "FILE", 4) == 0 || strcmp(arg, "F") == 0 ||
		       strcmp(arg, "PATH") == 0);
}

/* The values of row o that start with typed. */
static enum want add_values(struct cands *c, const struct cli_opt *o, const struct line *l,
			    const char *typed)
{
	const char *arg = o->arg ? o->arg : "";
	if (o->kind == CLI_CHOICE) {
		for (const struct cli_choice *ch = o->choices; ch && ch->name; ch++)
			cand_add(c, ch->name);
	} else if (o->kind == CLI_FORMAT) {
		unsigned mask = o->formats == CLI_FORMAT_ROWS ? output_formats_with_rows() :
								 o->formats;
		for (int f = 0; f < FORMAT_COUNT; f++)
			if (mask & FORMAT_BIT(f))
				cand_add(c, output_format_ops((enum output_format)f)->name);
	} else if (file_arg(o->arg)) {
		return WANT_FILE;
	} else if (strcmp(arg, "RUN") == 0) {
		add_runs(c, l);
	} else if (strcmp(arg, "PID") == 0) {
		add_procs(c, 0);
	} else if (strcmp(arg, "PATTERN") == 0) {
		add_procs(c, 1);
	} else if (strcmp(arg, "KEY") == 0 || strcmp(arg, "KEY=VALUE") == 0) {
		add_param_keys(c, l, arg[3] ? "=" : "");
	} else if (strcmp(arg, "NAME,...") == 0) {
		add_counters(c, l, typed);
	}
	return WANT_VALUE;
}

/* Every option of the verb (its long names, and --help). */
static void add_options(struct cands *c, const struct cli_row *rows, size_t nrows)
{
	struct buf b = { 0 };
	for (size_t i = 0; i < nrows; i++) {
		if (!rows[i].o->name)
			continue;
		buf_reset(&b);
		buf_printf(&b, "--%s", rows[i].o->name);
		cand_add(c, buf_str(&b));
	}
	cand_add(c, "--help");
	buf_release(&b);
}

/* Completes words[n - 1], after words[0..n - 1), into c; returns what the shell is to
 * do. */
static enum want complete(char **words, int n, struct cands *c)
{
	struct line l = { 0 };
	int i = 0;
	const char *cur = words[n - 1];
	/* rsswatch --db PATH VERB ... */
	while (i < n - 1 && strncmp(words[i], "--db", 4) == 0 &&
	       (words[i][4] == '\0' || words[i][4] == '=')) {
		if (words[i][4] == '=') {
			l.db = words[i++] + 5;
		} else if (i + 1 < n - 1) {
			l.db = words[i + 1];
			i += 2;
		} else {
			return WANT_FILE;
		}
	}
	if (i == n - 1) {
		c->prefix = cur;
		if (cur[0] == '-') {
			cand_add(c, "--help");
			cand_add(c, "--version");
			cand_add(c, "--db");
			return WANT_OPTION;
		}
		for (const struct verb *v = verbs; v->name; v++)
			if (!verb_hidden(v))
				cand_add(c, v->name);
		return WANT_VERB;
	}
	l.verb = find_verb(words[i++]);
	if (!l.verb || verb_hidden(l.verb))
		return WANT_NONE;
	struct cli_row *rows;
	size_t nrows = cli_opts_rows(l.verb->cli->opts, &rows);
	int in_order = (l.verb->cli->flags & CLI_IN_ORDER) != 0;
	const struct cli_opt *pending = NULL;	/* the row whose value comes next */
	int operands = 0, dashdash = 0;
	enum want operand = operand_want(l.verb);
	l.runs = xcalloc((size_t)n, sizeof(*l.runs));
	for (; i < n - 1; i++) {
		const char *w = words[i];
		if (pending) {
			if (pending->name && strcmp(pending->name, "db") == 0)
				l.db = w;
			pending = NULL;
		} else if (dashdash || w[0] != '-' || w[1] == '\0') {
			operands++;
			if (operand == WANT_RUN)
				l.runs[l.nruns++] = words[i];
			if (in_order)
				dashdash = 1;
		} else if (strcmp(w, "--") == 0) {
			dashdash = 1;
		} else if (w[1] == '-') {
			const char *eq = strchr(w, '=');
			size_t len = eq ? (size_t)(eq - w - 2) : strlen(w + 2);
			const struct cli_opt *o = find_row(rows, nrows, w + 2, len, 0);
			if (o && eq && strcmp(o->name, "db") == 0)
				l.db = eq + 1;
			else if (o && !eq && takes_next(o))
				pending = o;
		} else {
			/* -qi 1s: letters, the last of which may take the next word */
			for (const char *p = w + 1; *p; p++) {
				const struct cli_opt *o = find_row(rows, nrows, NULL, 0, *p);
				if (o && takes_next(o)) {
					if (p[1] == '\0')
						pending = o;
					break;	/* the rest of the word is its value */
				}
			}
		}
	}
	enum want want = WANT_NONE;
	c->prefix = cur;
	if (pending) {
		want = add_values(c, pending, &l, cur);
	} else if (dashdash || cur[0] != '-') {
		if (operand == WANT_COMMAND || in_order)
			want = operands == 0 ? WANT_COMMAND : WANT_FILE;
		else if (operand == WANT_RUN) {
			add_runs(c, &l);
			want = WANT_RUN;
		}
	} else if (strncmp(cur, "--", 2) == 0 && strchr(cur, '=')) {
		const char *eq = strchr(cur, '=');
		const struct cli_opt *o = find_row(rows, nrows, cur + 2, (size_t)(eq - cur - 2), 0);
		c->prefix = eq + 1;
		if (o && o->kind != CLI_FLAG)
			want = add_values(c, o, &l, eq + 1);
	} else {
		add_options(c, rows, nrows);
		want = WANT_OPTION;
	}
	free(rows);
	free(l.runs);
	return want;
}

/* The table exists for --help and test_opts: the words are read by complete(), not by
 * cli_parse, as they are another verb's. */
struct complete_args {
	const char *db;
};

static const struct cli_opt complete_opts[] = {
	CLI_DB_ROW(struct complete_args),
	CLI_OPTS_END,
};

const struct cli_cmd complete_cli = {
	.verb = "__complete",
	.usage = "usage: rsswatch __complete WORD...\n",
	.about = "What the shell completions offer for the last WORD of a command line (the\n"
		 "words before it being the line after 'rsswatch'): a line 'words', 'files' or\n"
		 "'commands', then the candidates, one per line. The database is the one\n"
		 "that --db on the line names, else the default.\n",
	.opts = complete_opts,
};

int cmd_complete(int argc, char **argv)
{
	static char empty[] = "";
	char *none[] = { empty };
	struct cands c = { .prefix = "" };
	enum want w = argc > 1 ? complete(argv + 1, argc - 1, &c) : complete(none, 1, &c);
	if (c.n)	/* qsort of no array: c.v is NULL, which qsort may not be given */
		qsort(c.v, c.n, sizeof(*c.v), cmp_str);
	struct buf out = { 0 };
	buf_puts(&out, w == WANT_FILE ? "files\n" : w == WANT_COMMAND ? "commands\n" : "words\n");
	for (size_t i = 0; i < c.n; i++)
		if (i == 0 || strcmp(c.v[i], c.v[i - 1]) != 0)
			buf_printf(&out, "%s\n", c.v[i]);
	for (size_t i = 0; i < c.n; i++)
		free(c.v[i]);
	free(c.v);
	fputs(buf_str(&out), stdout);
	buf_release(&out);
	return EXIT_OK;
}
