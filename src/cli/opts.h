/* A verb's options as one table, in the manner of git's parse-options.h and redis's
 * config table: each row is an option's names, the kind of value it takes with its
 * bounds, where the value goes, and its line of --help. cli_parse() builds
 * getopt_long's arrays from the rows, parses, checks every value with the strict
 * parsers of base/parse.h and prints the one-line usage errors (status 2);
 * cli_help() writes --help, its options part from the same rows, so that what a verb
 * takes and what it says it takes cannot drift apart.
 *
 * A value goes into the verb's own struct of arguments, at the offset CLI_AT() names
 * (which also checks the field's type at compile time); the parser knows nothing else
 * of that struct. A CLI_INCLUDE row brings in the rows of a table shared by several
 * verbs (the retention options of record and gc, cli/retention.h), whose offsets are
 * relative to a struct each verb embeds where the include row says.
 *
 * Errors read "rsswatch VERB: invalid --interval '0': give a duration of 1ms..1h, e.g.
 * 100ms, 1s, 5m (see 'rsswatch VERB --help')": the option by its long name, the value
 * as given (control characters shown as '?'), and what it takes, from the row's kind
 * and bounds. */
#ifndef RSW_CLI_OPTS_H
#define RSW_CLI_OPTS_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "render/format.h"

/* What a parser returns when it printed --help: nothing more to do, status 0. Any other
 * nonzero value is the exit status (the error printed). */
#define CLI_DONE (-1)

enum cli_kind {
	CLI_END,	/* the row that ends a table: CLI_OPTS_END */
	CLI_FLAG,	/* no value: stores .set (1 when .set is 0) into an integer or enum */
	CLI_STRING,	/* const char *: the argument itself (CLI_NONEMPTY: "" refused) */
	CLI_INT,	/* a whole number (base/parse.h parse_u64) in [min, max], into an
			 * unsigned or int field of any width */
	CLI_SIZE,	/* uint64_t bytes (parse_size: K, M, G, T) in [min, max] */
	CLI_DURATION,	/* int64_t ns (parse_duration_ns: us ms s m h) in [min, max] */
	CLI_CHOICE,	/* one name of .choices: its value into an integer or enum */
	CLI_FORMAT,	/* enum output_format: a name of .formats (cli_format) */
	CLI_CALLBACK,	/* .fn takes the argument as it is */
	CLI_INCLUDE,	/* the rows of .sub, their offsets from this row's */
};

enum {
	CLI_OPTIONAL = 1 << 0,	/* the value may be left out (--pss, --pss=10s): .set then */
	CLI_NONEMPTY = 1 << 1,	/* CLI_STRING: an empty value is refused */
};

/* A CLI_CHOICE's names and the value each stores; a NULL name ends the list. */
struct cli_choice {
	const char *name;
	int value;
};

struct cli_opt;
struct cli_cmd;

/* What a callback sees: the verb, its arguments (argv[optind] is the next word, which a
 * callback may take by advancing optind) and the verb's struct of arguments. */
struct cli_state {
	const struct cli_cmd *cmd;
	int argc;
	char **argv;
	void *args;
};

/* A row's own handling of its value: arg (NULL for an optional value left out) for the
 * field at to. Returns 0, or the exit status with the error printed (cli_opt_invalid,
 * cli_usage). A callback on a row of a value kind may call cli_opt_store for the kind's
 * parsing and bounds. */
typedef int cli_opt_fn(const struct cli_state *st, const struct cli_opt *o, const char *arg,
		       void *to);

/* One option. Invariants, checked by cli_opts_check() (and so by test_opts for every
 * verb): a name or a letter, each once in a verb, neither "help" nor 'h'; help text
 * (a CLI_FORMAT row's names are its text); max >= min where max is set, and an
 * integer field wide enough for max. */
struct cli_opt {
	const char *name;	/* the long option without "--"; NULL: a letter only */
	char letter;		/* the short option, or 0 */
	enum cli_kind kind;
	unsigned flags;		/* CLI_OPTIONAL, CLI_NONEMPTY */
	size_t off, size;	/* the field's offset and size in the args: CLI_AT() */
	uint64_t min, max;	/* CLI_INT, CLI_SIZE, CLI_DURATION; max 0: no upper bound */
	long long set;		/* CLI_FLAG's value; an optional value's default */
	const struct cli_choice *choices;	/* CLI_CHOICE */
	unsigned formats;	/* CLI_FORMAT: the accepted ones (FORMAT_BIT mask) */
	cli_opt_fn *fn;		/* CLI_CALLBACK; on other kinds, instead of storing */
	const struct cli_opt *sub;	/* CLI_INCLUDE */
	const char *arg;	/* the value's name in --help ("DUR"); NULL: from the kind */
	const char *eg;		/* examples the error adds: "100ms, 1s, 5m" */
	const char *help;	/* --help's text, one paragraph (wrapped when printed; a
				 * '\n' breaks the line); a CLI_FORMAT row's follows the
				 * format names ("text or json" + help) */
};

/* Where a row's value goes: the field of struct type T (a member designator:
 * "opts.interval_ns" works), which must be of type `type` (a compile-time error
 * otherwise). */
#define CLI_AT(T, field, type)                                                           \
	.off = offsetof(T, field) + 0 * sizeof(&((T *)0)->field == (type *)0),           \
	.size = sizeof(((T *)0)->field)
#define CLI_OPTS_END { .kind = CLI_END }

/* The --db row that every verb takes, into its struct's `const char *db`: one wording
 * of where the database is. A verb that takes it only for uniformity says so. */
#define CLI_DB_HELP "the run database (default: $RSSWATCH_DB, else " \
	"$XDG_STATE_HOME/rsswatch/rsswatch.db, else ~/.local/state/rsswatch/rsswatch.db)"
#define CLI_DB_ROW_AS(args, text) \
	{ "db", 0, CLI_STRING, CLI_AT(args, db, const char *), .arg = "PATH", .help = text }
#define CLI_DB_ROW(args) CLI_DB_ROW_AS(args, CLI_DB_HELP)

/* A CLI_FORMAT row's .formats for "every format with row ops" (export's), read from
 * render/format.c's table when parsing and printing, so that a row format added there
 * needs no edit here. */
#define CLI_FORMAT_ROWS (~0u)

enum {
	CLI_IN_ORDER = 1 << 0,	/* options end at the first operand (record's COMMAND) */
};

/* A verb's command line. --help (-h) is every verb's: it is not a row of the table. */
struct cli_cmd {
	const char *verb;	/* as errors name it: "rsswatch record: ..." */
	const char *usage;	/* --help's first lines: "usage: rsswatch record ...\n" */
	const char *about;	/* the prose after the usage, or NULL */
	const struct cli_opt *opts;	/* the rows, ended by CLI_OPTS_END */
	const char *more;	/* the prose after the options, or NULL */
	/* all of --help written by the verb (export names its formats and its columns
	 * in it), or NULL for usage, about, the options and more */
	void (*help)(const struct cli_cmd *c, struct buf *b);
	unsigned flags;		/* CLI_IN_ORDER */
};

/* Parses argv[1..argc) against c's table into args (the verb's struct, filled with
 * its defaults beforehand). Leaves optind at the first operand. Returns 0, CLI_DONE
 * (--help written to standard output), or EXIT_USAGE with one line on stderr: an
 * unknown option, an option without its value (or with one it does not take), a value
 * out of its kind or bounds, or a callback's refusal. */
int cli_parse(const struct cli_cmd *c, int argc, char **argv, void *args);

/* Writes --help of c into b: c->help's, or the usage, the about text, the options and
 * the closing prose. */
void cli_help(const struct cli_cmd *c, struct buf *b);
/* The options part of --help: one entry per row, in the table's order (an include's
 * rows in its place), then -h, --help. The text column is the same for every row of a
 * verb; lines are wrapped to CLI_HELP_WIDTH. */
void cli_help_options(const struct cli_cmd *c, struct buf *b);
#define CLI_HELP_WIDTH 80

/* A row's kind applied to arg (NULL: the optional value left out, .set) into to: the
 * parsing and bounds of the row's kind. Returns 0 or EXIT_USAGE (printed). */
int cli_opt_store(const struct cli_state *st, const struct cli_opt *o, const char *arg, void *to);
/* "rsswatch VERB: invalid --NAME 'ARG': WHY" (ARG printable), and EXIT_USAGE. WHY NULL:
 * what the row's kind and bounds take ("give a duration of 1ms..1h, e.g. ..."). */
int cli_opt_invalid(const struct cli_state *st, const struct cli_opt *o, const char *arg,
		    const char *why);

/* Every row of a table, with the rows of its includes in their place; each with its
 * offset from the start of the verb's struct. */
struct cli_row {
	const struct cli_opt *o;
	size_t off;
};
/* The rows of opts into *rows (free() it); returns how many. */
size_t cli_opts_rows(const struct cli_opt *opts, struct cli_row **rows);
/* Whether c's table keeps the invariants of struct cli_opt: 0, or -EINVAL with the
 * first broken one in why. */
int cli_opts_check(const struct cli_cmd *c, char *why, size_t n);

/* "rsswatch: <message>\n" on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "rsswatch VERB: <message> (see 'rsswatch VERB --help')" on stderr; returns EXIT_USAGE. */
int cli_usage(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* --format NAME (-f NAME) of a verb that writes the formats in accepted (a mask of
 * FORMAT_BIT, render/format.h) into *out. A name no format has, or a format the verb
 * does not write, is one line naming the accepted ones. Returns 0, or EXIT_USAGE
 * (printed). --json is the same as --format json wherever it exists. */
int cli_format(const char *verb, const char *name, unsigned accepted, enum output_format *out);

#endif
