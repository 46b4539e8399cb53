/* Helpers shared by the verbs that read the run database. */
#include "base/util.h"
#include "cli/cli.h"
#include "store/store.h"

#include <errno.h>
#include <stdlib.h>

int cli_open_store(const char *db_opt, struct store **st, int quiet_missing)
{
	char err[512];
	char *path = cli_db_path(db_opt);
	int e = store_open(path, 0, st, err, sizeof(err));
	if (e == -ENOENT && quiet_missing) {
		free(path);
		return -ENOENT;
	}
	if (e < 0)
		cli_error("%s: %s", path, err);
	free(path);
	return e < 0 ? EXIT_FAIL : 0;
}

int cli_resolve_run(struct store *st, const char *ref, int64_t *id)
{
	int e = store_resolve(st, ref, id);
	if (e == -EINVAL) {
		cli_error("invalid run '%s': give a run id or 'last'", ref);
		return EXIT_USAGE;
	}
	if (e == -ENOENT) {
		if (ref[0] == 'l')
			cli_error("no runs recorded yet");
		else
			cli_error("no run %s", ref);
		return EXIT_FAIL;
	}
	if (e < 0) {
		cli_error("cannot look up run %s: %s", ref, store_errmsg(st));
		return EXIT_FAIL;
	}
	return 0;
}
