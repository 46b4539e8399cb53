/* Output formats: every name a reading verb's --format takes, once, in one table, with
 * what a verb needs of each (in the spirit of systemd's output_mode_table). A verb says
 * which formats it can write (a mask of FORMAT_BIT), parses the name with
 * output_format_from_name and dispatches on the enum; `export` writes any format that
 * has row ops, through render/rows.h, and needs no code of its own per format.
 *
 * Adding a row format for `export` (docs/dev/ARCHITECTURE.md, "Adding an output
 * format"): its constant here, its row in format.c's table with its row_ops, a test in
 * tests/unit/test_format.c, and the words in the man page. */
#ifndef RSW_RENDER_FORMAT_H
#define RSW_RENDER_FORMAT_H

#include "base/buf.h"

enum output_format {
	FORMAT_TEXT,		/* for people: tables and sentences (every verb's default) */
	FORMAT_JSON,		/* one JSON document (--json) */
	FORMAT_CSV,		/* rows (export): RFC 4180, a header line */
	FORMAT_JSONL,		/* rows (export): one JSON object per line */
	FORMAT_TSV,		/* rows (export): tab-separated, a header line */
	FORMAT_HTML,		/* a page (report) */
	FORMAT_SVG,		/* a picture (plot) */
	FORMAT_PNG,		/* a picture (plot) */
	FORMAT_COUNT
};

#define FORMAT_BIT(f) (1u << (f))

/* How a row format writes one row of named fields (render/rows.h). A row is open, then
 * its fields, sep between two, each as key(name) when key is set and its value, then
 * close. Numbers are written as they are; text through text(), which quotes what the
 * format must; a missing value is null. */
struct row_ops {
	int header;		/* a first line names the columns (written with text()) */
	const char *open, *sep, *close;	/* close ends the line */
	void (*key)(struct buf *b, const char *name);	/* before each value; NULL: none */
	void (*text)(struct buf *b, const char *s);
	const char *null;
};

struct output_format_ops {
	const char *name;	/* what --format takes */
	const char *summary;	/* a few words for --help and the man page */
	const char *ext;	/* the file name ending of a file format (plot -o), or NULL */
	const struct row_ops *rows;	/* a row format (export), or NULL */
};

/* The row of format f (f < FORMAT_COUNT). */
const struct output_format_ops *output_format_ops(enum output_format f);
/* The format called name (exactly: "json", not "JSON") into *out. Returns 0 or -EINVAL. */
int output_format_from_name(const char *name, enum output_format *out);
/* The formats with row ops (those `export` writes), as a mask of FORMAT_BIT. */
unsigned output_formats_with_rows(void);
/* The names of the formats in mask, in the table's order, sep between two and last
 * before the last: with ", " and " or ", "text or json", "csv, jsonl or tsv"; with "|"
 * and "|", "csv|jsonl|tsv". Appended to b. */
void output_format_names(struct buf *b, unsigned mask, const char *sep, const char *last);

#endif
