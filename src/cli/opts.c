/* Option tables (opts.h): getopt_long's arrays built from a verb's rows, every value
 * parsed and bounded by its row's kind, and --help written from the same rows. Also
 * the CLI's two ways of saying something went wrong, cli_error and cli_usage. */
#include "cli/opts.h"
#include "base/buf.h"
#include "base/parse.h"
#include "base/util.h"
#include "cli/cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* getopt_long's code of the long option of row i: above every char, so that a letter
 * and a row's index never meet. */
#define LONG_BASE 256

/* A label longer than this ("    --memory-limit SIZE") has its text on the next line,
 * so that one long name does not push every other row's text to the right. */
#define LABEL_MAX 20
#define INDENT 2
#define GAP 3

void cli_error(const char *fmt, ...)
{
	va_list ap;
	fputs("rsswatch: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int cli_usage(const char *verb, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "rsswatch %s: ", verb);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see 'rsswatch %s --help')\n", verb);
	return EXIT_USAGE;
}

int cli_format(const char *verb, const char *name, unsigned accepted, enum output_format *out)
{
	enum output_format f;
	struct buf names = { 0 }, shown = { 0 };	/* an argument: one line, whatever was given */
	int ret = 0;
	output_format_names(&names, accepted, ", ", " or ");
	buf_put_printable(&shown, name);
	if (output_format_from_name(name, &f) < 0)
		ret = cli_usage(verb, "unknown format '%s': give %s", buf_str(&shown), buf_str(&names));
	else if (!(accepted & FORMAT_BIT(f)))
		ret = cli_usage(verb, "%s does not write %s: give %s", verb, buf_str(&shown),
				buf_str(&names));
	else
		*out = f;
	buf_release(&names);
	buf_release(&shown);
	return ret;
}

static void flatten(const struct cli_opt *opts, size_t base, struct cli_row **v, size_t *n,
		    size_t *cap)
{
	for (const struct cli_opt *o = opts; o && o->kind != CLI_END; o++) {
		if (o->kind == CLI_INCLUDE) {
			flatten(o->sub, base + o->off, v, n, cap);
			continue;
		}
		*v = xgrow(*v, *n, cap, sizeof(**v));
		(*v)[(*n)++] = (struct cli_row){ o, base + o->off };
	}
}

size_t cli_opts_rows(const struct cli_opt *opts, struct cli_row **rows)
{
	size_t n = 0, cap = 0;
	*rows = NULL;
	flatten(opts, 0, rows, &n, &cap);
	return n;
}

/* The formats a CLI_FORMAT row accepts. */
static unsigned formats_of(const struct cli_opt *o)
{
	return o->formats == CLI_FORMAT_ROWS ? output_formats_with_rows() : o->formats;
}

/* "--name", or "-x" for a row with a letter only. */
static void put_name(struct buf *b, const struct cli_opt *o)
{
	if (o->name)
		buf_printf(b, "--%s", o->name);
	else
		buf_printf(b, "-%c", o->letter);
}

/* The integer field at to, of size bytes (1, 2, 4 or 8: cli_opts_check), set to v. */
static void put_int(void *to, size_t size, uint64_t v)
{
	uint8_t u8 = (uint8_t)v;
	uint16_t u16 = (uint16_t)v;
	uint32_t u32 = (uint32_t)v;
	if (size == 1)
		memcpy(to, &u8, 1);
	else if (size == 2)
		memcpy(to, &u16, 2);
	else if (size == 4)
		memcpy(to, &u32, 4);
	else
		memcpy(to, &v, 8);
}

/* A bound in the largest unit that holds it exactly: "1ms", "1h", "24h". */
static void put_duration(struct buf *b, uint64_t ns)
{
	static const struct { const char *unit; uint64_t ns; } units[] = {
		{ "h", 3600 * NS_PER_S }, { "m", 60 * NS_PER_S }, { "s", NS_PER_S },
		{ "ms", NS_PER_MS }, { "us", NS_PER_US },
	};
	for (size_t i = 0; i < ARRAY_SIZE(units); i++)
		if (ns && ns % units[i].ns == 0) {
			buf_printf(b, "%llu%s", (unsigned long long)(ns / units[i].ns), units[i].unit);
			return;
		}
	buf_printf(b, "%.9gs", (double)ns / NS_PER_S);
}

/* A bound in the largest unit that holds it exactly: "4K", "2G"; else bytes. */
static void put_size(struct buf *b, uint64_t bytes)
{
	static const char units[] = "TGMK";
	for (int i = 0; i < 4; i++) {
		uint64_t u = 1ULL << (10 * (4 - i));
		if (bytes && bytes % u == 0) {
			buf_printf(b, "%llu%c", (unsigned long long)(bytes / u), units[i]);
			return;
		}
	}
	buf_printf(b, "%llu", (unsigned long long)bytes);
}

static void put_bound(struct buf *b, const struct cli_opt *o, uint64_t v)
{
	if (o->kind == CLI_DURATION)
		put_duration(b, v);
	else if (o->kind == CLI_SIZE)
		put_size(b, v);
	else
		buf_printf(b, "%llu", (unsigned long long)v);
}

/* The names of a choice list: "elapsed or wall", "a, b or c". */
static void put_choices(struct buf *b, const struct cli_choice *c)
{
	for (size_t i = 0; c && c[i].name; i++)
		buf_printf(b, "%s%s", i == 0 ? "" : c[i + 1].name ? ", " : " or ", c[i].name);
}

/* What a row's kind and bounds take, for its error: "give a duration of 1ms..1h". */
static void put_hint(struct buf *b, const struct cli_opt *o)
{
	const char *what = o->kind == CLI_INT ? "a whole number" : o->kind == CLI_SIZE ? "a size" :
			   o->kind == CLI_DURATION ? "a duration" : NULL;
	if (what) {
		buf_printf(b, "give %s", what);
		if (o->min && o->max) {
			buf_puts(b, " of ");
			put_bound(b, o, o->min);
			buf_puts(b, "..");
			put_bound(b, o, o->max);
		} else if (o->max) {
			buf_puts(b, " of at most ");
			put_bound(b, o, o->max);
		} else if (o->min == 1) {
			buf_puts(b, " above 0");
		} else if (o->min) {
			buf_puts(b, " of at least ");
			put_bound(b, o, o->min);
		}
	} else if (o->kind == CLI_CHOICE) {
		buf_puts(b, "give ");
		put_choices(b, o->choices);
	} else if (o->kind == CLI_STRING && (o->flags & CLI_NONEMPTY)) {
		buf_printf(b, "give a non-empty %s", o->arg ? o->arg : "value");
	} else {
		buf_puts(b, "see --help");
	}
	if (o->eg)
		buf_printf(b, ", e.g. %s", o->eg);
}

int cli_opt_invalid(const struct cli_state *st, const struct cli_opt *o, const char *arg,
		    const char *why)
{
	struct buf name = { 0 }, shown = { 0 }, hint = { 0 };
	put_name(&name, o);
	buf_put_printable(&shown, arg ? arg : "");
	if (!why) {
		put_hint(&hint, o);
		why = buf_str(&hint);
	}
	int ret = cli_usage(st->cmd->verb, "invalid %s '%s': %s", buf_str(&name), buf_str(&shown),
			    why);
	buf_release(&name);
	buf_release(&shown);
	buf_release(&hint);
	return ret;
}

static int out_of_bounds(const struct cli_opt *o, uint64_t v)
{
	return v < o->min || (o->max && v > o->max);
}

int cli_opt_store(const struct cli_state *st, const struct cli_opt *o, const char *arg, void *to)
{
	uint64_t u;
	int64_t ns;
	if (!arg && o->kind != CLI_FLAG && o->kind != CLI_STRING) {
		put_int(to, o->size, (uint64_t)o->set);	/* an optional value left out */
		return 0;
	}
	switch (o->kind) {
	case CLI_FLAG:
		put_int(to, o->size, (uint64_t)(o->set ? o->set : 1));
		return 0;
	case CLI_STRING:
		if ((o->flags & CLI_NONEMPTY) && (!arg || !*arg))
			return cli_opt_invalid(st, o, arg, NULL);
		memcpy(to, &arg, sizeof(arg));
		return 0;
	case CLI_INT:
		if (parse_u64(arg, &u) < 0 || out_of_bounds(o, u))
			return cli_opt_invalid(st, o, arg, NULL);
		put_int(to, o->size, u);
		return 0;
	case CLI_SIZE:
		if (parse_size(arg, &u) < 0 || out_of_bounds(o, u))
			return cli_opt_invalid(st, o, arg, NULL);
		memcpy(to, &u, sizeof(u));
		return 0;
	case CLI_DURATION:
		if (parse_duration_ns(arg, &ns) < 0 || ns < 0 || out_of_bounds(o, (uint64_t)ns))
			return cli_opt_invalid(st, o, arg, NULL);
		memcpy(to, &ns, sizeof(ns));
		return 0;
	case CLI_CHOICE:
		for (const struct cli_choice *c = o->choices; c && c->name; c++)
			if (strcmp(c->name, arg) == 0) {
				put_int(to, o->size, (uint64_t)(int64_t)c->value);
				return 0;
			}
		return cli_opt_invalid(st, o, arg, NULL);
	case CLI_FORMAT:
		return cli_format(st->cmd->verb, arg, formats_of(o), (enum output_format *)to);
	default:	/* a callback row without its function: cli_opts_check says so */
		return cli_opt_invalid(st, o, arg, NULL);
	}
}

/* An option getopt_long refused ('?': unknown, or a value given to a flag; ':' a
 * value missing), in one line. optopt is the letter of a short option, the code of a
 * row's long one, and 0 for a long option no row has. */
static int bad_option(const struct cli_state *st, const struct cli_row *rows, int c)
{
	struct buf shown = { 0 };
	int ret;
	const char *verb = st->cmd->verb;
	if (optopt >= LONG_BASE || (c == '?' && optopt == 'h')) {	/* --quiet=1, --help=1 */
		const char *name = optopt == 'h' ? "help" : rows[optopt - LONG_BASE].o->name;
		ret = c == ':' ? cli_usage(verb, "option '--%s' needs a value", name)
			       : cli_usage(verb, "option '--%s' takes no value", name);
	} else if (optopt > 0) {
		ret = c == ':' ? cli_usage(verb, "option '-%c' needs a value", optopt)
			       : cli_usage(verb, "unknown option '-%c'", optopt);
	} else {
		buf_put_printable(&shown, st->argv[optind - 1]);
		ret = cli_usage(verb, "unknown option '%s'", buf_str(&shown));
	}
	buf_release(&shown);
	return ret;
}

int cli_parse(const struct cli_cmd *c, int argc, char **argv, void *args)
{
	struct cli_row *rows;
	size_t n = cli_opts_rows(c->opts, &rows);
	struct option *longopts = xcalloc(n + 2, sizeof(*longopts));
	struct buf shorts = { 0 };
	size_t k = 0;
	/* ':' first: getopt_long prints nothing and tells a missing value from an
	 * unknown option; '+': options end at the first operand */
	buf_puts(&shorts, c->flags & CLI_IN_ORDER ? "+:" : ":");
	for (size_t i = 0; i < n; i++) {
		const struct cli_opt *o = rows[i].o;
		int has = o->kind == CLI_FLAG ? no_argument :
			  o->flags & CLI_OPTIONAL ? optional_argument : required_argument;
		if (o->name)
			longopts[k++] = (struct option){ o->name, has, NULL, LONG_BASE + (int)i };
		if (o->letter)
			buf_printf(&shorts, "%c%s", o->letter, has == no_argument ? "" :
				   has == optional_argument ? "::" : ":");
	}
	longopts[k] = (struct option){ "help", no_argument, NULL, 'h' };
	buf_putc(&shorts, 'h');

	struct cli_state st = { c, argc, argv, args };
	int ret = 0, ch;
	opterr = 0;
	optind = 0;	/* glibc: start afresh, at argv[1] (a test parses many times) */
	while (ret == 0 && (ch = getopt_long(argc, argv, buf_str(&shorts), longopts, NULL)) != -1) {
		const struct cli_row *r = NULL;
		if (ch == 'h') {
			struct buf help = { 0 };
			cli_help(c, &help);
			fputs(buf_str(&help), stdout);
			buf_release(&help);
			ret = CLI_DONE;
			break;
		}
		if (ch >= LONG_BASE && (size_t)(ch - LONG_BASE) < n)
			r = &rows[ch - LONG_BASE];
		for (size_t i = 0; !r && ch > 0 && ch < LONG_BASE && i < n; i++)
			if (ch != '?' && ch != ':' && rows[i].o->letter == ch)
				r = &rows[i];
		if (!r) {
			ret = bad_option(&st, rows, ch);
			break;
		}
		void *to = (char *)args + r->off;
		ret = r->o->fn ? r->o->fn(&st, r->o, optarg, to) : cli_opt_store(&st, r->o, optarg, to);
	}
	free(longopts);
	free(rows);
	buf_release(&shorts);
	return ret;
}

static const char *arg_name(const struct cli_opt *o)
{
	if (o->arg)
		return o->arg;
	switch (o->kind) {
	case CLI_INT: return "N";
	case CLI_SIZE: return "SIZE";
	case CLI_DURATION: return "DUR";
	case CLI_FORMAT: return "F";
	case CLI_CHOICE: return "KIND";
	default: return "VALUE";
	}
}

/* "-i, --interval DUR", "    --pss[=DUR]", "-q, --quiet". */
static void put_label(struct buf *b, const struct cli_opt *o)
{
	if (o->letter)
		buf_printf(b, "-%c%s", o->letter, o->name ? ", " : "");
	else
		buf_puts(b, "    ");
	if (o->name)
		buf_printf(b, "--%s", o->name);
	if (o->kind == CLI_FLAG)
		return;
	if (o->flags & CLI_OPTIONAL)
		buf_printf(b, o->name ? "[=%s]" : "[%s]", arg_name(o));
	else
		buf_printf(b, " %s", arg_name(o));
}

static void pad(struct buf *b, size_t n)
{
	while (n--)
		buf_putc(b, ' ');
}

/* text from column col (the line so far is at column at <= col), its words wrapped to
 * CLI_HELP_WIDTH and every later line at col; a '\n' in text breaks the line. */
static void put_wrapped(struct buf *b, const char *text, size_t col, size_t at)
{
	size_t x = col;
	int first = 1;	/* no word yet on this line */
	pad(b, col - at);
	for (const char *p = text; *p;) {
		if (*p == '\n' || *p == ' ') {
			if (*p++ == '\n') {
				buf_putc(b, '\n');
				pad(b, col);
				x = col;
				first = 1;
			}
			continue;
		}
		size_t w = strcspn(p, " \n");
		if (!first && x + 1 + w > CLI_HELP_WIDTH) {
			buf_putc(b, '\n');
			pad(b, col);
			x = col;
			first = 1;
		}
		if (!first) {
			buf_putc(b, ' ');
			x++;
		}
		buf_append(b, p, w);
		x += w;
		p += w;
		first = 0;
	}
	buf_putc(b, '\n');
}

/* A row's text: its help, after the format names for a CLI_FORMAT row. */
static void put_text(struct buf *b, const struct cli_opt *o)
{
	if (o->kind == CLI_FORMAT)
		output_format_names(b, formats_of(o), ", ", " or ");
	if (o->help)
		buf_puts(b, o->help);
}

void cli_help_options(const struct cli_cmd *c, struct buf *b)
{
	static const struct cli_opt help_row = {
		.name = "help", .letter = 'h', .kind = CLI_FLAG, .help = "this text",
	};
	struct cli_row *rows;
	size_t n = cli_opts_rows(c->opts, &rows), width = 0;
	struct buf *labels = xcalloc(n + 1, sizeof(*labels)), text = { 0 };
	for (size_t i = 0; i <= n; i++) {
		put_label(&labels[i], i < n ? rows[i].o : &help_row);
		if (labels[i].len <= LABEL_MAX && labels[i].len > width)
			width = labels[i].len;
	}
	size_t col = INDENT + width + GAP;
	for (size_t i = 0; i <= n; i++) {
		buf_reset(&text);
		put_text(&text, i < n ? rows[i].o : &help_row);
		pad(b, INDENT);
		buf_puts(b, buf_str(&labels[i]));
		size_t at = INDENT + labels[i].len;
		if (labels[i].len > width) {	/* a long label: its text on the next line */
			buf_putc(b, '\n');
			at = 0;
		}
		put_wrapped(b, buf_str(&text), col, at);
		buf_release(&labels[i]);
	}
	buf_release(&text);
	free(labels);
	free(rows);
}

void cli_help(const struct cli_cmd *c, struct buf *b)
{
	if (c->help) {
		c->help(c, b);
		return;
	}
	buf_puts(b, c->usage);
	if (c->about)
		buf_printf(b, "\n%s", c->about);
	buf_putc(b, '\n');
	cli_help_options(c, b);
	if (c->more)
		buf_printf(b, "\n%s", c->more);
}

/* The largest value an integer field of size bytes holds, signed or not. */
static uint64_t int_field_max(size_t size)
{
	return size >= 8 ? INT64_MAX : (1ULL << (8 * size - 1)) - 1;
}

static int row_broken(const struct cli_opt *o, char *why, size_t n)
{
	int value = o->kind == CLI_INT || o->kind == CLI_SIZE || o->kind == CLI_DURATION;
	if (o->kind <= CLI_END || o->kind >= CLI_INCLUDE)
		snprintf(why, n, "no such kind %d", (int)o->kind);
	else if (!o->name && !o->letter)
		snprintf(why, n, "a row with neither name nor letter");
	else if ((o->name && strcmp(o->name, "help") == 0) || o->letter == 'h')
		snprintf(why, n, "--help and -h are every verb's");
	else if (o->letter && !((o->letter >= 'a' && o->letter <= 'z') ||
				(o->letter >= 'A' && o->letter <= 'Z') ||
				(o->letter >= '0' && o->letter <= '9')))
		snprintf(why, n, "letter '%c' is not a letter or digit", o->letter);
	else if (o->kind != CLI_FORMAT && (!o->help || !*o->help))
		snprintf(why, n, "no help text");
	else if (o->kind == CLI_FORMAT && !o->formats)
		snprintf(why, n, "a format row that accepts no format");
	else if (o->kind == CLI_CHOICE && (!o->choices || !o->choices[0].name))
		snprintf(why, n, "a choice row without choices");
	else if (o->kind == CLI_CALLBACK && !o->fn)
		snprintf(why, n, "a callback row without its function");
	else if (value && o->max && o->max < o->min)
		snprintf(why, n, "max below min");
	else if ((o->kind == CLI_FLAG || o->kind == CLI_INT || o->kind == CLI_CHOICE) &&
		 o->size != 1 && o->size != 2 && o->size != 4 && o->size != 8)
		snprintf(why, n, "an integer field of %zu bytes", o->size);
	else if ((o->kind == CLI_SIZE || o->kind == CLI_DURATION) && o->size != 8)
		snprintf(why, n, "a 64-bit field is needed, not %zu bytes", o->size);
	else if (o->kind == CLI_STRING && o->size != sizeof(const char *))
		snprintf(why, n, "a string row needs a const char * field");
	else if (o->kind == CLI_FORMAT && o->size != sizeof(enum output_format))
		snprintf(why, n, "a format row needs an enum output_format field");
	else if (o->kind == CLI_INT && o->size < 8 && (!o->max || o->max > int_field_max(o->size)))
		snprintf(why, n, "max %llu does not fit its %zu-byte field",
			 (unsigned long long)o->max, o->size);
	else
		return 0;
	return 1;
}

int cli_opts_check(const struct cli_cmd *c, char *why, size_t n)
{
	struct cli_row *rows;
	size_t nr = cli_opts_rows(c->opts, &rows);
	char w[160];
	int ret = 0;
	for (size_t i = 0; i < nr && !ret; i++) {
		const struct cli_opt *o = rows[i].o;
		if (row_broken(o, w, sizeof(w)))
			ret = -EINVAL;
		for (size_t j = 0; j < i && !ret; j++) {
			const struct cli_opt *p = rows[j].o;
			if ((o->name && p->name && strcmp(o->name, p->name) == 0) ||
			    (o->letter && o->letter == p->letter)) {
				snprintf(w, sizeof(w), "given twice");
				ret = -EINVAL;
			}
		}
		if (ret) {
			struct buf name = { 0 };
			put_name(&name, o);
			snprintf(why, n, "%s: %s: %s", c->verb, buf_str(&name), w);
			buf_release(&name);
		}
	}
	free(rows);
	return ret;
}
