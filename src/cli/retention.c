/* The retention rows of record and gc, and retention applied (retention.h). */
#include "cli/retention.h"
#include "base/clock.h"
#include "base/fmt.h"
#include "base/parse.h"
#include "cli/cli.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

/* --keep AGE: an age with its unit (parse_age_ns), or 'none'. */
static int take_keep(const struct cli_state *st, const struct cli_opt *o, const char *arg,
		     void *to)
{
	int64_t ns = -1;
	if (strcmp(arg, "none") != 0 && parse_age_ns(arg, &ns) < 0)
		return cli_opt_invalid(st, o, arg, "give an age with a unit of s, m, h, d or w, "
				       "e.g. 30d, 12h, 2w, or 'none'");
	memcpy(to, &ns, sizeof(ns));
	return 0;
}

const struct cli_opt cli_retention_opts[] = {
	{ "keep", 0, CLI_CALLBACK, CLI_AT(struct cli_retention, keep_ns, int64_t),
	  .fn = take_keep, .arg = "AGE",
	  .help = "keep every sample of runs that ended less than AGE ago; older runs are "
		  "thinned to at most 1000 samples, every bucket of time keeping its maximum: a "
		  "number and s, m, h, d or w, e.g. 30d, 12h, 2w ('none': no age limit)" },
	{ "max-db", 0, CLI_SIZE, CLI_AT(struct cli_retention, max_bytes, uint64_t), .min = 1,
	  .eg = "500M, 2G",
	  .help = "the most the database may take: a number and K, M, G, T (powers of 1024; "
		  "KiB, MB... too), e.g. 500M, 2G; above it finished runs are thinned further, "
		  "oldest first" },
	CLI_OPTS_END,
};

int cli_retention_gc(const char *db, const struct store_gc_opts *o, int missing_ok,
		     const struct cli_gc_report *rep)
{
	struct store *st;
	int ret = cli_open_store(db, &st, CLI_STORE_WRITE | (missing_ok ? CLI_STORE_QUIET_MISSING : 0));
	if (ret == -ENOENT)
		return EXIT_OK;
	if (ret)
		return ret;
	struct store_gc_result res;
	int e = store_gc(st, o, rep ? rep->run : NULL, rep ? rep->ctx : NULL, &res);
	char a[32], b[32];
	if (e == -EBUSY) {
		cli_error("gc: the database is locked by another process (a recorder writing, or "
			  "another gc); try again");
		ret = EXIT_FAIL;
	} else if (e == -ENOSPC && res.disk_needed) {
		cli_error("gc: not enough free disk to VACUUM the database (needs about %s, %s "
			  "free); the rows removed leave space that later recordings reuse",
			  fmt_bytes(a, sizeof(a), res.disk_needed), fmt_bytes(b, sizeof(b), res.disk_free));
		ret = EXIT_FAIL;
	} else if (e == -ENOSPC) {
		cli_error("gc: the disk is full: %s", store_errmsg(st));
		ret = EXIT_FAIL;
	} else if (e < 0) {
		cli_error("gc failed: %s", store_errmsg(st));
		ret = EXIT_FAIL;
	}
	if (e == 0 && rep && rep->result)
		rep->result(rep->ctx, o, &res);
	if (e == 0 && res.over_bound) {
		cli_error("gc: the database still takes %s, above --max-db %s: what is left are run "
			  "summaries, marks, events and runs being recorded",
			  fmt_bytes(a, sizeof(a), res.bytes_used), fmt_bytes(b, sizeof(b), o->max_bytes));
		ret = EXIT_FAIL;
	}
	store_close(st);
	return ret;
}

int cli_retention_after_record(const char *db, const struct cli_retention *r)
{
	if (r->keep_ns < 0 && !r->max_bytes)
		return EXIT_OK;
	struct store_gc_opts o = { .keep_ns = r->keep_ns, .max_bytes = r->max_bytes,
				   .now_ns = real_ns() };
	return cli_retention_gc(db, &o, 1, NULL);
}
