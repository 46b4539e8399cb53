/* The table of output formats (render/format.c): every constant has its row, every
 * name finds its constant and nothing else does, every row format has complete row ops
 * and writes the row this file expects of it, so a row format added without its test
 * fails here. */
#include "testutil.h"

#include <errno.h>
#include <string.h>

#include "render/format.h"
#include "render/rows.h"

/* What each row format writes for the same header and row (rows.h): a text field with
 * a comma, a quote and a tab, a number, a missing value, a negative raw number. */
static const struct {
	enum output_format f;
	const char *header, *row;
} expected[] = {
	{ FORMAT_CSV, "comm,n,gone,d\n", "\"a,\"\"b\"\"?c\",7,,-1.5\n" },
	{ FORMAT_JSONL, "",
	  "{\"comm\":\"a,\\\"b\\\"\\tc\",\"n\":7,\"gone\":null,\"d\":-1.5}\n" },
	{ FORMAT_TSV, "comm\tn\tgone\td\n", "a,\"b\"?c\t7\t\t-1.5\n" },
};

static void test_every_row(void **state)
{
	(void)state;
	for (int f = 0; f < FORMAT_COUNT; f++) {
		const struct output_format_ops *o = output_format_ops((enum output_format)f);
		assert_non_null(o->name);
		assert_true(o->name[0] != '\0');
		assert_non_null(o->summary);
		assert_true(o->summary[0] != '\0');
		assert_true(o->ext == NULL || o->ext[0] == '.');
		for (int g = 0; g < f; g++)	/* one name, one format */
			assert_string_not_equal(o->name, output_format_ops((enum output_format)g)->name);
		if (!o->rows)
			continue;
		const struct row_ops *r = o->rows;
		assert_non_null(r->open);
		assert_non_null(r->sep);
		assert_non_null(r->close);
		assert_non_null(r->text);
		assert_non_null(r->null);
		assert_true(strlen(r->close) > 0 && r->close[strlen(r->close) - 1] == '\n');
		/* a header names the columns in a format without keys */
		assert_true(!r->header || !r->key);
	}
}

static void test_lookup(void **state)
{
	(void)state;
	enum output_format f;
	for (int i = 0; i < FORMAT_COUNT; i++) {
		const char *name = output_format_ops((enum output_format)i)->name;
		f = FORMAT_COUNT;
		assert_int_equal(output_format_from_name(name, &f), 0);
		assert_int_equal(f, i);
	}
	assert_int_equal(output_format_from_name("json", &f), 0);
	assert_int_equal(f, FORMAT_JSON);
	static const char *const bad[] = { "", "xml", "JSON", "js", "jsonl ", "csv,jsonl", "text\n" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		f = FORMAT_COUNT;
		assert_int_equal(output_format_from_name(bad[i], &f), -EINVAL);
		assert_int_equal(f, FORMAT_COUNT);	/* untouched on failure */
	}
}

static void test_names(void **state)
{
	(void)state;
	struct buf b = { 0 };
	output_format_names(&b, FORMAT_BIT(FORMAT_TEXT) | FORMAT_BIT(FORMAT_JSON), ", ", " or ");
	assert_string_equal(buf_str(&b), "text or json");
	buf_reset(&b);
	output_format_names(&b, FORMAT_BIT(FORMAT_JSON), ", ", " or ");
	assert_string_equal(buf_str(&b), "json");
	buf_reset(&b);
	output_format_names(&b, FORMAT_BIT(FORMAT_JSON) | FORMAT_BIT(FORMAT_TEXT) |
			    FORMAT_BIT(FORMAT_CSV), ", ", " or ");
	assert_string_equal(buf_str(&b), "text, json or csv");	/* the table's order */
	buf_reset(&b);
	output_format_names(&b, FORMAT_BIT(FORMAT_CSV) | FORMAT_BIT(FORMAT_JSONL), "|", "|");
	assert_string_equal(buf_str(&b), "csv|jsonl");
	buf_reset(&b);
	output_format_names(&b, 0, ", ", " or ");
	assert_string_equal(buf_str(&b), "");
	buf_release(&b);
}

/* Every format with row ops is one export writes, and writes what `expected` says. */
static void test_row_formats(void **state)
{
	(void)state;
	unsigned rows = output_formats_with_rows(), tested = 0;
	struct buf b = { 0 };
	for (size_t i = 0; i < sizeof(expected) / sizeof(expected[0]); i++) {
		enum output_format f = expected[i].f;
		struct row w;
		assert_non_null(output_format_ops(f)->rows);
		tested |= FORMAT_BIT(f);
		buf_reset(&b);
		if (row_format_has_header(f)) {
			row_begin(&w, &b, f);
			row_str(&w, "comm", "comm");
			row_str(&w, "n", "n");
			row_str(&w, "gone", "gone");
			row_str(&w, "d", "d");
			row_end(&w);
		}
		assert_string_equal(buf_str(&b), expected[i].header);
		buf_reset(&b);
		row_begin(&w, &b, f);
		row_str(&w, "comm", "a,\"b\"\tc");
		row_u64(&w, "n", 7);
		row_null(&w, "gone");
		row_raw(&w, "d", "-1.5");
		row_end(&w);
		assert_string_equal(buf_str(&b), expected[i].row);
	}
	assert_int_equal(tested, rows);	/* a row format without its line above fails */
	assert_true(rows & FORMAT_BIT(FORMAT_CSV));
	assert_false(rows & (FORMAT_BIT(FORMAT_TEXT) | FORMAT_BIT(FORMAT_JSON)));
	buf_release(&b);
}

/* TSV has no quoting: a formula cell gets a quote before it, a tab or line break in
 * text becomes '?', so a row stays one line of fields. */
static void test_tsv_text(void **state)
{
	(void)state;
	struct buf b = { 0 };
	struct row w;
	row_begin(&w, &b, FORMAT_TSV);
	row_str(&w, "comm", "=cmd|x");
	row_str(&w, "comm", "a\tb\nc");
	row_raw(&w, "n", "-12");
	row_end(&w);
	assert_string_equal(buf_str(&b), "'=cmd|x\ta?b?c\t-12\n");
	buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_row),
		cmocka_unit_test(test_lookup),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_row_formats),
		cmocka_unit_test(test_tsv_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
