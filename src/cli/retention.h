/* Retention from the command line, shared by record (--keep, --max-db when the
 * recording ends) and gc: the two options as rows that both verbs' tables include, and
 * applying them to a database. The rules themselves are the store's
 * (src/store/retention.c, docs/guide/storage.md). */
#ifndef RSW_CLI_RETENTION_H
#define RSW_CLI_RETENTION_H

#include <stdint.h>

#include "cli/opts.h"
#include "store/store.h"

/* What --keep and --max-db ask for; a verb embeds it in its args and includes
 * cli_retention_opts at it (CLI_INCLUDE). */
struct cli_retention {
	int64_t keep_ns;	/* thin runs that ended more than this ago; -1: no age limit */
	uint64_t max_bytes;	/* the most the database may take; 0: no bound */
};

/* --keep AGE ('none': -1) and --max-db SIZE (above 0). */
extern const struct cli_opt cli_retention_opts[];

/* What gc says of the work, as it is done: each run changed, then the result (when
 * store_gc succeeded, before a bound not met is said). */
struct cli_gc_report {
	store_gc_cb run;
	void (*result)(void *ctx, const struct store_gc_opts *o, const struct store_gc_result *r);
	void *ctx;
};

/* Applies retention o to the database db (cli_db_path), opened for writing: with
 * missing_ok, a database not there yet is nothing to do. Prints the failures (locked,
 * disk full, the bound not met), each one line; rep may be NULL (after a recording:
 * only failures are said). Returns an exit status. */
int cli_retention_gc(const char *db, const struct store_gc_opts *o, int missing_ok,
		     const struct cli_gc_report *rep);

/* After a recording: r's retention, if it asks for any, with nothing said but
 * failures. Returns an exit status. */
int cli_retention_after_record(const char *db, const struct cli_retention *r);

#endif
