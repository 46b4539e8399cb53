/* Option tables (src/cli/opts.c): values of every kind stored where their rows say,
 * bounds, choices and formats refused in the one-line errors the verbs print, missing
 * values and unknown options named, options in order for record's COMMAND, shared rows
 * through an include, and --help written from the rows. Then every verb's table, from
 * verbs.c: each keeps the rules of struct cli_opt (a row without help text fails here)
 * and its --help lists every row. */
#include "testutil.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "base/parse.h"
#include "base/util.h"
#include "cli/cli.h"
#include "cli/opts.h"
#include "render/svg.h"

/* Standard error (or output) into a temporary file while a parse runs. */
static char captured[8192];
static int saved_fd = -1;
static FILE *cap;

static void capture_begin(int fd)
{
	fflush(fd == 2 ? stderr : stdout);
	cap = tmpfile();
	assert_non_null(cap);
	saved_fd = dup(fd);
	dup2(fileno(cap), fd);
}

static const char *capture_end(int fd)
{
	fflush(fd == 2 ? stderr : stdout);
	dup2(saved_fd, fd);
	close(saved_fd);
	rewind(cap);
	size_t n = fread(captured, 1, sizeof(captured) - 1, cap);
	captured[n] = '\0';
	fclose(cap);
	return captured;
}

struct shared {
	int64_t keep_ns;
	uint64_t bytes;
};

struct targs {
	int quiet;
	int64_t interval_ns;
	const char *label;
	uint64_t size;
	unsigned every;
	enum chart_time time;
	enum output_format format;
	int64_t pss_ns;
	const char *seen;	/* the callback's argument */
	int calls;
	struct shared sh;	/* the included rows' */
};

static int take_seen(const struct cli_state *st, const struct cli_opt *o, const char *arg,
		     void *to)
{
	struct targs *a = st->args;
	if (strcmp(arg, "no") == 0)
		return cli_opt_invalid(st, o, arg, "give anything but no");
	memcpy(to, &arg, sizeof(arg));
	a->calls++;
	return 0;
}

static const struct cli_opt shared_opts[] = {
	{ "keep", 0, CLI_DURATION, CLI_AT(struct shared, keep_ns, int64_t), .min = 1,
	  .arg = "AGE", .help = "an included row" },
	{ "bytes", 0, CLI_SIZE, CLI_AT(struct shared, bytes, uint64_t), .help = "another" },
	CLI_OPTS_END,
};

static const struct cli_choice times[] = {
	{ "elapsed", CHART_ELAPSED }, { "wall", CHART_WALL }, { NULL, 0 },
};

#define A(f, type) CLI_AT(struct targs, f, type)
static const struct cli_opt topts[] = {
	{ "quiet", 'q', CLI_FLAG, A(quiet, int), .help = "no lines" },
	{ "interval", 'i', CLI_DURATION, A(interval_ns, int64_t), .min = NS_PER_MS,
	  .max = 3600 * NS_PER_S, .eg = "100ms, 1s, 5m",
	  .help = "time between samples, a long help text that has to be wrapped over more "
		  "than one line of the help output to fit in its width" },
	{ "label", 'l', CLI_STRING, A(label, const char *), .flags = CLI_NONEMPTY, .arg = "TEXT",
	  .help = "a label" },
	{ "size", 0, CLI_SIZE, A(size, uint64_t), .min = 4096, .help = "a size" },
	{ "every", 0, CLI_INT, A(every, unsigned), .min = 1, .max = 1000, .help = "a count" },
	{ "time", 0, CLI_CHOICE, A(time, enum chart_time), .choices = times,
	  .help = "'elapsed' or 'wall'" },
	{ "format", 'f', CLI_FORMAT, A(format, enum output_format), .formats = CLI_TEXT_JSON },
	{ "json", 0, CLI_FLAG, A(format, enum output_format), .set = FORMAT_JSON,
	  .help = "the same as --format json" },
	{ "pss", 0, CLI_DURATION, A(pss_ns, int64_t), .flags = CLI_OPTIONAL, .set = 10 * NS_PER_S,
	  .min = 10 * NS_PER_MS, .help = "an optional value" },
	{ "seen", 's', CLI_CALLBACK, A(seen, const char *), .fn = take_seen, .help = "a callback" },
	{ .kind = CLI_INCLUDE, .sub = shared_opts, A(sh, struct shared) },
	CLI_OPTS_END,
};

static const struct cli_cmd tcmd = {
	.verb = "t",
	.usage = "usage: rsswatch t [OPTIONS] [ARG...]\n",
	.about = "A verb of the test.\n",
	.opts = topts,
	.more = "The end.\n",
};

static const struct cli_cmd tcmd_in_order = {
	.verb = "t", .usage = "usage: rsswatch t\n", .opts = topts, .flags = CLI_IN_ORDER,
};

static void targs_init(struct targs *a)
{
	memset(a, 0, sizeof(*a));
	a->interval_ns = NS_PER_S;
	a->every = 7;
}

/* cli_parse of c over "t" and the words given (NULL-terminated) into *a; what it said
 * on stderr into *err. */
static int parse_words(const struct cli_cmd *c, struct targs *a, const char **err, ...)
{
	char *argv[32];
	int argc = 0;
	va_list ap;
	argv[argc++] = (char *)"t";
	va_start(ap, err);
	for (char *w; (w = va_arg(ap, char *)) != NULL && argc < 31;)
		argv[argc++] = w;
	va_end(ap);
	argv[argc] = NULL;
	targs_init(a);
	capture_begin(2);
	int ret = cli_parse(c, argc, argv, a);
	*err = capture_end(2);
	return ret;
}

static void test_values(void **state)
{
	(void)state;
	struct targs a;
	const char *err;
	assert_int_equal(parse_words(&tcmd, &a, &err, "-q", "-i", "250ms", "--label=x", "--size",
				     "4K", "--every", "1000", "--time", "wall", "-f", "json",
				     "--pss", "--keep", "2s", "--bytes", "1G", "op", NULL), 0);
	assert_string_equal(err, "");
	assert_int_equal(a.quiet, 1);
	assert_int_equal(a.interval_ns, 250 * NS_PER_MS);
	assert_string_equal(a.label, "x");
	assert_int_equal(a.size, 4096);
	assert_int_equal(a.every, 1000);
	assert_int_equal(a.time, CHART_WALL);
	assert_int_equal(a.format, FORMAT_JSON);
	assert_int_equal(a.pss_ns, 10 * NS_PER_S);	/* left out: the row's default */
	assert_int_equal(a.sh.keep_ns, 2 * NS_PER_S);	/* an include's rows, in place */
	assert_int_equal(a.sh.bytes, 1ULL << 30);
	assert_int_equal(optind, 18);	/* the operand */
	assert_int_equal(parse_words(&tcmd, &a, &err, "--pss=2s", "--json", "--interval=1h",
				     "--time=elapsed", NULL), 0);
	assert_int_equal(a.pss_ns, 2 * NS_PER_S);
	assert_int_equal(a.format, FORMAT_JSON);
	assert_int_equal(a.interval_ns, 3600 * NS_PER_S);
	assert_int_equal(a.time, CHART_ELAPSED);
}

/* Each bad value: status 2, one line naming the option, the value and what it takes,
 * and the field left as it was. */
static void test_bounds(void **state)
{
	(void)state;
	static const struct {
		const char *opt, *value, *want;
	} bad[] = {
		{ "-i", "0", "invalid --interval '0': give a duration of 1ms..1h, e.g. 100ms, 1s, 5m" },
		{ "-i", "0.5ms", "invalid --interval '0.5ms': give a duration of 1ms..1h, e.g. 100ms, 1s, 5m" },
		{ "--interval", "61m", "invalid --interval '61m': give a duration of 1ms..1h, e.g. 100ms, 1s, 5m" },
		{ "-i", "1x", "invalid --interval '1x': give a duration of 1ms..1h, e.g. 100ms, 1s, 5m" },
		{ "-i", "", "invalid --interval '': give a duration of 1ms..1h, e.g. 100ms, 1s, 5m" },
		{ "--every", "0", "invalid --every '0': give a whole number of 1..1000" },
		{ "--every", "1001", "invalid --every '1001': give a whole number of 1..1000" },
		{ "--every", "-1", "invalid --every '-1': give a whole number of 1..1000" },
		{ "--size", "4095", "invalid --size '4095': give a size of at least 4K" },
		{ "--size", "2Q", "invalid --size '2Q': give a size of at least 4K" },
		{ "--keep", "0", "invalid --keep '0': give a duration above 0" },
		{ "--pss", "5ms", "invalid --pss '5ms': give a duration of at least 10ms" },
		{ "-l", "", "invalid --label '': give a non-empty TEXT" },
		{ "--time", "Wall", "invalid --time 'Wall': give elapsed or wall" },
		{ "-s", "no", "invalid --seen 'no': give anything but no" },
		{ "-i", "1\033s", "invalid --interval '1?s': give a duration of 1ms..1h, e.g. 100ms, 1s, 5m" },
		{ "-f", "csv", "t does not write csv: give text or json" },
		{ "-f", "xml", "unknown format 'xml': give text or json" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct targs a;
		const char *err;
		char want[256], opt[64];
		snprintf(want, sizeof(want), "rsswatch t: %s (see 'rsswatch t --help')\n", bad[i].want);
		int ret;
		if (strcmp(bad[i].opt, "--pss") == 0) {	/* an optional value goes after '=' */
			snprintf(opt, sizeof(opt), "--pss=%s", bad[i].value);
			ret = parse_words(&tcmd, &a, &err, opt, NULL);
		} else {
			ret = parse_words(&tcmd, &a, &err, bad[i].opt, bad[i].value, NULL);
		}
		assert_int_equal(ret, EXIT_USAGE);
		assert_string_equal(err, want);
		assert_int_equal(a.interval_ns, NS_PER_S);	/* written only on success */
		assert_int_equal(a.every, 7);
		assert_int_equal(a.size, 0);
		assert_null(a.label);
		assert_int_equal(a.calls, 0);
	}
}

static void test_flag(void **state)
{
	(void)state;
	struct targs a;
	const char *err;
	assert_int_equal(parse_words(&tcmd, &a, &err, "--quiet", NULL), 0);
	assert_int_equal(a.quiet, 1);
	assert_int_equal(parse_words(&tcmd, &a, &err, "--quiet=1", NULL), EXIT_USAGE);
	assert_string_equal(err, "rsswatch t: option '--quiet' takes no value "
			    "(see 'rsswatch t --help')\n");
	/* a letter in a cluster, and a long name's unique prefix */
	assert_int_equal(parse_words(&tcmd, &a, &err, "-qi5s", "--qu", NULL), 0);
	assert_int_equal(a.quiet, 1);
	assert_int_equal(a.interval_ns, 5 * NS_PER_S);
}

static void test_missing_value(void **state)
{
	(void)state;
	struct targs a;
	const char *err;
	assert_int_equal(parse_words(&tcmd, &a, &err, "-q", "-i", NULL), EXIT_USAGE);
	assert_string_equal(err, "rsswatch t: option '-i' needs a value (see 'rsswatch t --help')\n");
	assert_int_equal(parse_words(&tcmd, &a, &err, "--interval", NULL), EXIT_USAGE);
	assert_string_equal(err, "rsswatch t: option '--interval' needs a value "
			    "(see 'rsswatch t --help')\n");
	assert_int_equal(parse_words(&tcmd, &a, &err, "--keep", NULL), EXIT_USAGE);
	assert_string_equal(err, "rsswatch t: option '--keep' needs a value "
			    "(see 'rsswatch t --help')\n");
}

static void test_unknown_option(void **state)
{
	(void)state;
	struct targs a;
	const char *err;
	assert_int_equal(parse_words(&tcmd, &a, &err, "--bogus", "-q", NULL), EXIT_USAGE);
	assert_string_equal(err, "rsswatch t: unknown option '--bogus' (see 'rsswatch t --help')\n");
	assert_int_equal(parse_words(&tcmd, &a, &err, "-Z", NULL), EXIT_USAGE);
	assert_string_equal(err, "rsswatch t: unknown option '-Z' (see 'rsswatch t --help')\n");
	/* the letter, not the word it is in */
	assert_int_equal(parse_words(&tcmd, &a, &err, "-Zq", NULL), EXIT_USAGE);
	assert_string_equal(err, "rsswatch t: unknown option '-Z' (see 'rsswatch t --help')\n");
	assert_int_equal(parse_words(&tcmd, &a, &err, "--bo\033gus=1", NULL), EXIT_USAGE);
	assert_string_equal(err, "rsswatch t: unknown option '--bo?gus=1' "
			    "(see 'rsswatch t --help')\n");
	assert_int_equal(parse_words(&tcmd, &a, &err, "--help=1", NULL), EXIT_USAGE);
	assert_string_equal(err, "rsswatch t: option '--help' takes no value "
			    "(see 'rsswatch t --help')\n");
}

/* CLI_IN_ORDER (record, agent): the first operand ends the options; else getopt_long
 * takes options after operands too. */
static void test_in_order(void **state)
{
	(void)state;
	struct targs a;
	const char *err;
	assert_int_equal(parse_words(&tcmd_in_order, &a, &err, "-q", "cmd", "-i", "5s", NULL), 0);
	assert_int_equal(optind, 2);
	assert_int_equal(a.interval_ns, NS_PER_S);
	assert_int_equal(parse_words(&tcmd, &a, &err, "-q", "cmd", "-i", "5s", NULL), 0);
	assert_int_equal(optind, 4);
	assert_int_equal(a.interval_ns, 5 * NS_PER_S);
}

/* --help: to standard output, CLI_DONE, and nothing parsed after it. */
static void test_help_option(void **state)
{
	(void)state;
	struct targs a;
	char *argv[] = { (char *)"t", (char *)"-q", (char *)"--help", (char *)"-i", (char *)"0", NULL };
	targs_init(&a);
	capture_begin(1);
	int ret = cli_parse(&tcmd, 5, argv, &a);
	const char *out = capture_end(1);
	assert_int_equal(ret, CLI_DONE);
	assert_true(strncmp(out, "usage: rsswatch t [OPTIONS]", 27) == 0);
}

/* Whether help holds row o's label as a word of its own ("--pss" not in "--pss-x"). */
static int lists(const char *help, const struct cli_opt *o)
{
	char want[80];
	if (o->name)
		snprintf(want, sizeof(want), "--%s", o->name);
	else
		snprintf(want, sizeof(want), "-%c", o->letter);
	for (const char *p = help; (p = strstr(p, want)) != NULL; p++) {
		char next = p[strlen(want)];
		if (next == ' ' || next == '\n' || next == '[' || next == ',')
			return 1;
	}
	return 0;
}

/* Every line of the options part is at most CLI_HELP_WIDTH long, but a word too long
 * for any line. */
static void assert_widths(const char *text)
{
	for (const char *p = text; *p;) {
		size_t l = strcspn(p, "\n");
		if (l > CLI_HELP_WIDTH && memchr(p, ' ', l) && strspn(p, " ") < l - 40)
			fail_msg("a line of %zu columns: %.*s", l, (int)l, p);
		p += l + (p[l] == '\n');
	}
}

static void test_help_text(void **state)
{
	(void)state;
	struct buf b = { 0 };
	cli_help(&tcmd, &b);
	const char *want =
		"usage: rsswatch t [OPTIONS] [ARG...]\n"
		"\n"
		"A verb of the test.\n"
		"\n"
		"  -q, --quiet          no lines\n"
		"  -i, --interval DUR   time between samples, a long help text that has to be\n"
		"                       wrapped over more than one line of the help output to fit\n"
		"                       in its width\n"
		"  -l, --label TEXT     a label\n"
		"      --size SIZE      a size\n"
		"      --every N        a count\n"
		"      --time KIND      'elapsed' or 'wall'\n"
		"  -f, --format F       text or json\n"
		"      --json           the same as --format json\n"
		"      --pss[=DUR]      an optional value\n"
		"  -s, --seen VALUE     a callback\n"
		"      --keep AGE       an included row\n"
		"      --bytes SIZE     another\n"
		"  -h, --help           this text\n"
		"\n"
		"The end.\n";
	assert_string_equal(buf_str(&b), want);
	buf_release(&b);
}

/* A label too long for the column puts its text on the next line. */
static void test_help_long_label(void **state)
{
	(void)state;
	static const struct cli_opt o[] = {
		{ "x", 'x', CLI_FLAG, A(quiet, int), .help = "short" },
		{ "memory-limit", 0, CLI_SIZE, A(size, uint64_t), .help = "long" },
		CLI_OPTS_END,
	};
	static const struct cli_cmd c = { .verb = "t", .usage = "", .opts = o };
	struct buf b = { 0 };
	cli_help_options(&c, &b);
	assert_string_equal(buf_str(&b), "  -x, --x      short\n"
			    "      --memory-limit SIZE\n"
			    "               long\n"
			    "  -h, --help   this text\n");
	buf_release(&b);
}

/* The rules of struct cli_opt: each broken one is named. */
static void test_check(void **state)
{
	(void)state;
	char why[200];
	assert_int_equal(cli_opts_check(&tcmd, why, sizeof(why)), 0);
	static const struct cli_opt no_help[] = {
		{ "quiet", 'q', CLI_FLAG, A(quiet, int), .help = "no lines" },
		{ "loud", 0, CLI_FLAG, A(quiet, int) },
		CLI_OPTS_END,
	};
	static const struct cli_opt twice[] = {
		{ .kind = CLI_INCLUDE, .sub = shared_opts, A(sh, struct shared) },
		{ "keep", 0, CLI_FLAG, A(quiet, int), .help = "x" },
		CLI_OPTS_END,
	};
	static const struct cli_opt too_wide[] = {
		{ "every", 0, CLI_INT, A(every, unsigned), .min = 1, .help = "no max" },
		CLI_OPTS_END,
	};
	static const struct cli_opt help_row[] = {
		{ "help", 0, CLI_FLAG, A(quiet, int), .help = "x" },
		CLI_OPTS_END,
	};
	static const struct cli_opt no_fn[] = {
		{ "cb", 0, CLI_CALLBACK, A(seen, const char *), .help = "x" },
		CLI_OPTS_END,
	};
	static const struct {
		const struct cli_opt *opts;
		const char *why;
	} broken[] = {
		{ no_help, "t: --loud: no help text" },
		{ twice, "t: --keep: given twice" },
		{ too_wide, "t: --every: max 0 does not fit its 4-byte field" },
		{ help_row, "t: --help: --help and -h are every verb's" },
		{ no_fn, "t: --cb: a callback row without its function" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(broken); i++) {
		struct cli_cmd c = { .verb = "t", .usage = "", .opts = broken[i].opts };
		assert_int_equal(cli_opts_check(&c, why, sizeof(why)), -EINVAL);
		assert_string_equal(why, broken[i].why);
	}
}

/* Every verb has its table, which keeps the rules, and its --help lists every row and
 * begins with its usage. */
static void test_every_verb(void **state)
{
	(void)state;
	size_t nverbs = 0;
	for (const struct verb *v = verbs; v->name; v++, nverbs++) {
		char why[200], head[64];
		if (!v->cli)
			fail_msg("verb %s has no option table", v->name);
		assert_string_equal(v->cli->verb, v->name);
		if (cli_opts_check(v->cli, why, sizeof(why)) < 0)
			fail_msg("%s", why);
		struct buf help = { 0 }, opts = { 0 };
		cli_help(v->cli, &help);
		snprintf(head, sizeof(head), "usage: rsswatch %s", v->name);
		assert_true(strncmp(buf_str(&help), head, strlen(head)) == 0);
		cli_help_options(v->cli, &opts);
		assert_non_null(strstr(buf_str(&help), buf_str(&opts)));
		assert_widths(buf_str(&opts));
		struct cli_row *rows;
		size_t n = cli_opts_rows(v->cli->opts, &rows);
		const struct cli_opt *db = NULL;
		for (size_t i = 0; i < n; i++) {
			if (!lists(buf_str(&opts), rows[i].o))
				fail_msg("%s --help does not list --%s", v->name, rows[i].o->name);
			if (rows[i].o->name && strcmp(rows[i].o->name, "db") == 0)
				db = rows[i].o;
		}
		/* the man page: every verb takes --db, in one wording (gpus opens none) */
		if (!db)
			fail_msg("verb %s takes no --db", v->name);
		if (strcmp(v->name, "gpus") != 0)
			assert_string_equal(db->help, CLI_DB_HELP);
		assert_non_null(strstr(buf_str(&opts), "  -h, --help "));
		free(rows);
		buf_release(&help);
		buf_release(&opts);
	}
	assert_true(nverbs >= 13);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_flag),
		cmocka_unit_test(test_missing_value),
		cmocka_unit_test(test_unknown_option),
		cmocka_unit_test(test_in_order),
		cmocka_unit_test(test_help_option),
		cmocka_unit_test(test_help_text),
		cmocka_unit_test(test_help_long_label),
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_every_verb),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
