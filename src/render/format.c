#include "render/format.h"
#include "render/json.h"

#include <errno.h>
#include <string.h>

/* Whether a CSV text cell would be taken for a formula by a spreadsheet: it begins
 * with = + - @, a tab or a carriage return (OWASP's list for CSV injection). */
static int csv_formula(const char *v)
{
	return v[0] && strchr("=+-@\t\r", v[0]);
}

/* A CSV text cell (RFC 4180): quoted when it holds a comma or a quote, quotes doubled.
 * A name from a process (comm, a counter's name) that a spreadsheet would run as a
 * formula is written as text: a quote before it, the cell quoted. Numbers never come
 * here (row_raw, row_u64), so a negative value stays a number. */
static void csv_text(struct buf *b, const char *s)
{
	struct buf t = { 0 };
	buf_put_printable(&t, s);	/* no line breaks are left: only , and " need quoting */
	const char *v = buf_str(&t);
	int formula = csv_formula(v);
	if (!formula && !strpbrk(v, ",\"")) {
		buf_puts(b, v);
	} else {
		buf_puts(b, formula ? "\"'" : "\"");
		for (; *v; v++) {
			if (*v == '"')
				buf_putc(b, '"');
			buf_putc(b, *v);
		}
		buf_putc(b, '"');
	}
	buf_release(&t);
}

/* A JSON object's key: the field's name (counter.NAME: the application chose NAME). */
static void json_key(struct buf *b, const char *name)
{
	json_str(b, name);
	buf_putc(b, ':');
}

/* A TSV text cell (IANA text/tab-separated-values): no field may hold a tab or a line
 * break, so control characters become '?' and nothing is quoted; a cell a spreadsheet
 * would run as a formula gets a quote before it, as in CSV. */
static void tsv_text(struct buf *b, const char *s)
{
	struct buf t = { 0 };
	buf_put_printable(&t, s);
	if (csv_formula(buf_str(&t)))
		buf_putc(b, '\'');
	buf_puts(b, buf_str(&t));
	buf_release(&t);
}

static const struct row_ops csv_rows = {
	.header = 1, .open = "", .sep = ",", .close = "\n", .text = csv_text, .null = "",
};

static const struct row_ops tsv_rows = {
	.header = 1, .open = "", .sep = "\t", .close = "\n", .text = tsv_text, .null = "",
};

static const struct row_ops jsonl_rows = {
	.open = "{", .sep = ",", .close = "}\n", .key = json_key, .text = json_str,
	.null = "null",
};

/* Every format, by its constant. The order is the order in which --help and errors
 * list them. */
static const struct output_format_ops table[FORMAT_COUNT] = {
	[FORMAT_TEXT] = { "text", "tables and sentences, for people", NULL, NULL },
	[FORMAT_JSON] = { "json", "one JSON document", NULL, NULL },
	[FORMAT_CSV] = { "csv", "comma-separated values, a header line first", NULL, &csv_rows },
	[FORMAT_JSONL] = { "jsonl", "JSON lines: one object per row", NULL, &jsonl_rows },
	[FORMAT_TSV] = { "tsv", "tab-separated values, a header line first", NULL, &tsv_rows },
	[FORMAT_HTML] = { "html", "a self-contained HTML page", ".html", NULL },
	[FORMAT_SVG] = { "svg", "an SVG image", ".svg", NULL },
	[FORMAT_PNG] = { "png", "a PNG image", ".png", NULL },
};

const struct output_format_ops *output_format_ops(enum output_format f)
{
	return &table[f];
}

int output_format_from_name(const char *name, enum output_format *out)
{
	for (int f = 0; f < FORMAT_COUNT; f++) {
		if (table[f].name && strcmp(table[f].name, name) == 0) {
			*out = (enum output_format)f;
			return 0;
		}
	}
	return -EINVAL;
}

unsigned output_formats_with_rows(void)
{
	unsigned mask = 0;
	for (int f = 0; f < FORMAT_COUNT; f++)
		if (table[f].rows)
			mask |= FORMAT_BIT(f);
	return mask;
}

void output_format_names(struct buf *b, unsigned mask, const char *sep, const char *last)
{
	int n = 0, left = 0;
	for (int f = 0; f < FORMAT_COUNT; f++)
		left += (mask & FORMAT_BIT(f)) != 0;
	for (int f = 0; f < FORMAT_COUNT; f++) {
		if (!(mask & FORMAT_BIT(f)))
			continue;
		if (n)
			buf_puts(b, left == 1 ? last : sep);
		buf_puts(b, table[f].name);
		n++;
		left--;
	}
}
