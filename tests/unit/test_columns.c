/* The column tables (src/store/columns.c) as the one description of each figure: every
 * column has its help line, no two outputs of a table share a name, and each name,
 * unit, format and Prometheus family agree with one another. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/util.h"
#include "render/export.h"
#include "render/json.h"
#include "store/run.h"

static const struct store_table *const tables[] = {
	&store_run_table, &store_sample_table, &store_proc_sample_table, &store_process_table,
};

static int ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);
	return n >= t && strcmp(s + n - t, tail) == 0;
}

/* One sentence: a capital or a digit first, a full stop last, on one line, short enough
 * for a --help line and a /metrics HELP. */
static void test_every_column_has_help(void **state)
{
	(void)state;
	for (size_t t = 0; t < ARRAY_SIZE(tables); t++) {
		for (size_t i = 0; i < tables[t]->ncols; i++) {
			const struct store_column *c = &tables[t]->cols[i];
			const char *h = c->help;
			if (!h || !h[0])
				fail_msg("%s.%s has no help line", tables[t]->name, c->name);
			if (!((h[0] >= 'A' && h[0] <= 'Z') || (h[0] >= '0' && h[0] <= '9')) ||
			    !ends_with(h, ".") || strchr(h, '\n') || strlen(h) > 240)
				fail_msg("%s.%s: the help line is not one sentence: \"%s\"",
					 tables[t]->name, c->name, h);
		}
	}
}

/* The names a row of t is written under: no two alike, none that export writes
 * itself (time, elapsed_s), and none like its GPU and counter columns. */
static void test_output_names_are_unique(void **state)
{
	(void)state;
	for (size_t t = 0; t < ARRAY_SIZE(tables); t++) {
		const struct store_table *tb = tables[t];
		for (size_t i = 0; i < tb->ncols; i++) {
			const struct store_column *c = &tb->cols[i];
			if (c->out == OUT_NONE)
				continue;
			const char *n = store_column_json(c);
			if (strcmp(n, "time") == 0 || strcmp(n, "elapsed_s") == 0 ||
			    strncmp(n, "counter.", 8) == 0 ||
			    (strncmp(n, "gpu", 3) == 0 && n[3] >= '0' && n[3] <= '9'))
				fail_msg("%s.%s: its name %s is one export writes itself", tb->name,
					 c->name, n);
			for (size_t j = 0; j < i; j++)
				if (tb->cols[j].out != OUT_NONE &&
				    strcmp(store_column_json(&tb->cols[j]), n) == 0)
					fail_msg("%s: %s and %s are both written as %s", tb->name,
						 tb->cols[j].name, c->name, n);
			for (size_t j = 0; j < tb->ncols; j++)
				if (strcmp(tb->cols[j].name, c->name) == 0 && j != i)
					fail_msg("%s: two columns %s", tb->name, c->name);
		}
	}
}

/* What a name says agrees with the unit and the format: *_bytes counts bytes, *_s and
 * *_seconds are times, a percentage is a double, a moment is written as a time. */
static void test_units_formats_families(void **state)
{
	(void)state;
	for (size_t t = 0; t < ARRAY_SIZE(tables); t++) {
		const struct store_table *tb = tables[t];
		for (size_t i = 0; i < tb->ncols; i++) {
			const struct store_column *c = &tb->cols[i];
			const char *n = store_column_json(c);
			int text = c->kind == COL_TEXT || c->kind == COL_CHARS;
			if (c->out != OUT_NONE && ends_with(n, "_bytes") && c->unit != UNIT_BYTES)
				fail_msg("%s.%s: %s is not in bytes", tb->name, c->name, n);
			if ((c->out == OUT_SECONDS || c->out == OUT_SECONDS_G ||
			     c->out == OUT_SECONDS_1) && (c->unit != UNIT_NS || !ends_with(n, "_s")))
				fail_msg("%s.%s: seconds from nanoseconds, named *_s", tb->name, c->name);
			if ((c->out == OUT_PCT) != (c->unit == UNIT_PCT) ||
			    (c->out == OUT_PCT && c->kind != COL_F64))
				fail_msg("%s.%s: a percentage is a REAL written as one", tb->name, c->name);
			int as_time = c->out == OUT_TIME || c->out == OUT_TIME_US;
			if (c->unit == UNIT_TIME && !as_time && c->out != OUT_NONE)
				fail_msg("%s.%s: a moment is written as a time", tb->name, c->name);
			if (as_time && (c->unit != UNIT_TIME || c->kind != COL_I64))
				fail_msg("%s.%s: only a moment is written as a time", tb->name, c->name);
			if (c->out == OUT_TEXT_OR_NULL && !text)
				fail_msg("%s.%s: only text is null when empty", tb->name, c->name);
			if (text && c->unit != UNIT_NONE)
				fail_msg("%s.%s: text has no unit", tb->name, c->name);
			if (c->json_with && !store_table_column(tb, c->json_with))
				fail_msg("%s.%s: json_with names no column", tb->name, c->name);
			if (!c->prom) {
				if (c->prom_type != PROM_NONE || c->prom_label)
					fail_msg("%s.%s: a type without a family", tb->name, c->name);
				continue;
			}
			/* /metrics serves a sample's figures */
			if (tb != &store_sample_table || c->prom_type == PROM_NONE ||
			    strncmp(c->prom, "rsswatch_", 9) != 0 || ends_with(c->prom, "_total"))
				fail_msg("%s.%s: family %s", tb->name, c->name, c->prom);
			if (ends_with(c->prom, "_bytes") != (c->unit == UNIT_BYTES) ||
			    ends_with(c->prom, "_seconds") != (c->unit == UNIT_NS || c->unit == UNIT_US))
				fail_msg("%s.%s: %s does not end in its unit", tb->name, c->name, c->prom);
			if (!c->prom_label && (text || c->kind == COL_F64 || c->unit != UNIT_BYTES))
				fail_msg("%s.%s: a family of its own is a whole number of bytes (as "
					 "prom.c writes them)", tb->name, c->name);
			for (size_t j = 0; j < i; j++) {
				const struct store_column *d = &tb->cols[j];
				if (!d->prom || strcmp(d->prom, c->prom) != 0)
					continue;
				if (!c->prom_label || !d->prom_label ||
				    strcmp(c->prom_label, d->prom_label) == 0 ||
				    c->prom_type != d->prom_type)
					fail_msg("%s: %s and %s are one series of %s", tb->name, d->name,
						 c->name, c->prom);
			}
		}
	}
}

/* The keys of a flat JSON object (values without braces of their own but {}),
 * separated by '\n'. */
static void object_keys(const char *j, struct buf *out)
{
	int depth = 0, in_str = 0, key = 0;
	for (const char *p = j; *p; p++) {
		if (in_str) {
			if (*p == '\\')
				p++;
			else if (*p == '"') {
				in_str = 0;
				if (key)
					buf_putc(out, '\n');
				key = 0;
			} else if (key)
				buf_putc(out, *p);
			continue;
		}
		if (*p == '{' || *p == '[')
			depth++;
		else if (*p == '}' || *p == ']')
			depth--;
		else if (*p == '"') {
			in_str = 1;
			char prev = 0;
			for (const char *q = p - 1; q >= j && !prev; q--)
				if (*q != ' ')
					prev = *q;
			key = depth == 1 && (prev == '{' || prev == ',');
		}
	}
}

static int is_extra(const char *name)
{
	for (size_t i = 0; json_run_extra_names[i]; i++)
		if (strcmp(json_run_extra_names[i], name) == 0)
			return 1;
	return 0;
}

/* A run object (ls --json, show --json) has the run table's columns of some output, in
 * its order and under their names, and the fields that are no column once each. */
static void test_run_object_is_the_table(void **state)
{
	(void)state;
	struct run r;
	memset(&r, 0, sizeof(r));
	r.label = r.host = r.kernel = r.target = r.mode = "x";
	struct buf j = { 0 }, got = { 0 }, want = { 0 }, extras = { 0 };
	json_run(&j, &r);
	object_keys(buf_str(&j), &got);
	for (size_t i = 0; i < store_run_table.ncols; i++) {
		const struct store_column *c = &store_run_table.cols[i];
		if (c->out != OUT_NONE) {
			assert_false(is_extra(store_column_json(c)));
			buf_printf(&want, "%s\n", store_column_json(c));
		}
	}
	struct buf cols = { 0 };
	for (const char *k = buf_str(&got); *k; k = strchr(k, '\n') + 1) {
		size_t n = (size_t)(strchr(k, '\n') - k);
		char name[64];
		snprintf(name, sizeof(name), "%.*s", (int)n, k);
		if (is_extra(name))
			buf_printf(&extras, "%s\n", name);
		else
			buf_printf(&cols, "%s\n", name);
	}
	assert_string_equal(buf_str(&cols), buf_str(&want));
	assert_string_equal(buf_str(&extras), "params\nduration_s\nmean_rss_bytes\n");
	buf_release(&j);
	buf_release(&got);
	buf_release(&want);
	buf_release(&extras);
	buf_release(&cols);
}

/* show --json's processes: render/json.c writes them itself, under the process
 * table's names and in its order, with peak_exact (no column) after the peak. */
static void test_processes_are_the_table(void **state)
{
	(void)state;
	struct proc_summary p;
	memset(&p, 0, sizeof(p));
	struct buf j = { 0 }, got = { 0 }, want = { 0 };
	json_processes(&j, &p, 1);
	assert_true(j.len > 2);
	object_keys(buf_str(&j) + 1, &got);	/* the object inside the array */
	for (size_t i = 0; i < store_process_table.ncols; i++) {
		const struct store_column *c = &store_process_table.cols[i];
		if (c->out == OUT_NONE)
			continue;
		buf_printf(&want, "%s\n", store_column_json(c));
		if (strcmp(c->name, "peak_rss") == 0)
			buf_puts(&want, "peak_exact\n");
	}
	assert_string_equal(buf_str(&got), buf_str(&want));
	buf_release(&j);
	buf_release(&got);
	buf_release(&want);
}

/* export --help names every column a row can have, each on a line of its own with its
 * help, and the columns of --procs; no line is wider than 80 columns. */
static void test_export_help_names_every_column(void **state)
{
	(void)state;
	struct buf b = { 0 };
	export_columns_help(&b);
	const char *h = buf_str(&b);
	for (size_t i = 0; i < store_sample_table.ncols; i++) {
		const struct store_column *c = &store_sample_table.cols[i];
		char want[96];
		snprintf(want, sizeof(want), "\n  %s ", store_column_json(c));
		if ((c->out != OUT_NONE) != (strstr(h, want) != NULL))
			fail_msg("export --help and sample.%s disagree", c->name);
	}
	const char *procs = strstr(h, "--procs");
	assert_non_null(procs);
	for (size_t i = 0; i < store_proc_sample_table.ncols; i++) {
		const struct store_column *c = &store_proc_sample_table.cols[i];
		if (c->out != OUT_NONE && !strstr(procs, store_column_json(c)))
			fail_msg("export --help does not name %s of --procs", c->name);
	}
	for (const char *l = h; *l; l = strchr(l, '\n') + 1) {
		assert_non_null(strchr(l, '\n'));
		assert_true(strchr(l, '\n') - l <= 80);
	}
	buf_release(&b);
}

/* --- the docs' tables, made from the column tables ---
 *
 * A doc holds a generated part between "<!-- generated: NAME -->" and
 * "<!-- end generated -->". The test makes every such part anew and fails when the doc
 * differs; RSW_UPDATE_DOC=1 (scripts/gen-storage-doc.sh) writes the doc instead. */

static const char *unit_name(enum col_unit u)
{
	switch (u) {
	case UNIT_NONE: return "";
	case UNIT_BYTES: return "bytes";
	case UNIT_NS: return "ns";
	case UNIT_US: return "us";
	case UNIT_TIME: return "ns (epoch)";
	case UNIT_PCT: return "%";
	case UNIT_COUNT: return "count";
	}
	return "?";
}

/* The family a column is served as, with its series' label. */
static void prom_name(struct buf *b, const struct store_column *c)
{
	buf_printf(b, "`%s%s%s%s%s`", c->prom, c->prom_type == PROM_COUNTER ? "_total" : "",
		   c->prom_label ? "{" : "", c->prom_label ? c->prom_label : "",
		   c->prom_label ? "}" : "");
}

/* A table cell: "| TEXT " (code in backticks), or "| " when empty. */
static void cell(struct buf *b, const char *text, int code)
{
	if (!text || !text[0])
		buf_puts(b, "| ");
	else
		buf_printf(b, code ? "| `%s` " : "| %s ", text);
}

static void columns_md(struct buf *b, const struct store_table *t)
{
	int prom = 0;
	for (size_t i = 0; i < t->ncols; i++)
		prom |= t->cols[i].prom != NULL;
	buf_printf(b, "`%s`:\n\n| column | type | unit | output name |%s what it holds |\n"
		   "|---|---|---|---|%s---|\n", t->name, prom ? " /metrics |" : "", prom ? "---|" : "");
	for (size_t k = 0; t->keys[k]; k++) {
		int run = strcmp(t->keys[k], "run_id") == 0;
		cell(b, t->keys[k], 1);
		cell(b, "INTEGER", 0);
		cell(b, run ? "" : "ns", 0);
		cell(b, "", 0);
		if (prom)
			cell(b, "", 0);
		cell(b, run ? "The run the row belongs to (run.id)."
		     : "Time since the run began: the sample the row is for.", 0);
		buf_puts(b, "|\n");
	}
	for (size_t i = 0; i < t->ncols; i++) {
		const struct store_column *c = &t->cols[i];
		if (strchr(c->help, '|'))
			fail_msg("%s.%s: a | in the help line breaks the doc's table", t->name, c->name);
		cell(b, c->name, 1);
		cell(b, c->sql_type, 0);
		cell(b, unit_name(c->unit), 0);
		cell(b, c->out == OUT_NONE ? "" : store_column_json(c), 1);
		if (prom) {
			struct buf f = { 0 };
			if (c->prom)
				prom_name(&f, c);
			cell(b, buf_str(&f), 0);
			buf_release(&f);
		}
		cell(b, c->help, 0);
		buf_puts(b, "|\n");
	}
}

static int generate(struct buf *b, const char *name)
{
	for (size_t t = 0; t < ARRAY_SIZE(tables); t++) {
		char want[64];
		snprintf(want, sizeof(want), "columns %s", tables[t]->name);
		if (strcmp(name, want) == 0) {
			columns_md(b, tables[t]);
			return 1;
		}
	}
	return 0;
}

#define GEN_BEGIN "<!-- generated: "
#define GEN_END "<!-- end generated -->"

/* The doc at path with each generated part made anew; the names of the parts found
 * into names, one a line. */
static void doc_anew(const char *path, struct buf *out, struct buf *names)
{
	size_t len;
	char *doc = fixture(path, &len);
	const char *p = doc;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) + 1 : strlen(p);
		buf_append(out, p, n);
		if (strncmp(p, GEN_BEGIN, strlen(GEN_BEGIN)) == 0) {
			const char *name = p + strlen(GEN_BEGIN);
			const char *end = strstr(name, " -->");
			assert_non_null(end);
			char nm[64];
			snprintf(nm, sizeof(nm), "%.*s", (int)(end - name), name);
			buf_printf(names, "%s\n", nm);
			if (!generate(out, nm))
				fail_msg("%s: no generated part called \"%s\"", path, nm);
			const char *stop = strstr(p, "\n" GEN_END);
			if (!stop)
				fail_msg("%s: \"%s\" has no end", path, nm);
			p = stop + 1;
			continue;
		}
		p += n;
	}
	free(doc);
}

static void check_doc(const char *path, const char *parts)
{
	struct buf anew = { 0 }, names = { 0 };
	doc_anew(path, &anew, &names);
	assert_string_equal(buf_str(&names), parts);
	const char *up = getenv("RSW_UPDATE_DOC");
	if (up && up[0] == '1') {
		FILE *f = fopen(path, "wb");
		if (!f)
			fail_msg("cannot write %s", path);
		fputs(buf_str(&anew), f);
		fclose(f);
	} else {
		size_t len;
		char *doc = fixture(path, &len);
		if (strcmp(doc, buf_str(&anew)) != 0)
			fail_msg("%s is not what the column tables say: run scripts/gen-storage-doc.sh "
				 "(and look at the diff)", path);
		free(doc);
	}
	buf_release(&anew);
	buf_release(&names);
}

static void test_docs_are_up_to_date(void **state)
{
	(void)state;
	check_doc("docs/guide/storage.md",
		  "columns run\ncolumns sample\ncolumns proc_sample\ncolumns process\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_column_has_help),
		cmocka_unit_test(test_output_names_are_unique),
		cmocka_unit_test(test_units_formats_families),
		cmocka_unit_test(test_run_object_is_the_table),
		cmocka_unit_test(test_processes_are_the_table),
		cmocka_unit_test(test_export_help_names_every_column),
		cmocka_unit_test(test_docs_are_up_to_date),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
