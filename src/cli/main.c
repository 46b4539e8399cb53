/* rsswatch: records how much memory a process uses over time. main(): the verb from
 * verbs.c's table, and what every verb shares around it (--db before the verb, a
 * standard output that could not be written). */
#include "cli/cli.h"
#include "base/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
	fputs("usage: rsswatch VERB [OPTIONS] ...\n\n"
	      "Records how much memory a process uses over time, keeps every run,\n"
	      "and shows, exports and compares them.\n\nverbs:\n", f);
	for (const struct verb *v = verbs; v->name; v++)
		if (!verb_hidden(v))
			fprintf(f, "  %-10s %s\n", v->name, v->summary);
	fputs("\n'rsswatch VERB --help' describes each verb; 'man rsswatch' all of them.\n", f);
}

/* Standard output that could not be written (a full disk, a closed pipe's reader gone
 * with SIGPIPE ignored) is an error, not a silent loss: status 1 and one line, unless
 * the verb failed already (and said why) or passes on a command's own status. */
static int finish_stdout(int rc)
{
	errno = 0;
	if (fflush(stdout) == 0 && !ferror(stdout))
		return rc;
	if (rc != EXIT_OK)
		return rc;
	cli_error("cannot write to standard output: %s", errno ? errstr(errno) : "write error");
	return EXIT_FAIL;
}

/* "rsswatch --db PATH VERB ..." (or --db=PATH) is "rsswatch VERB --db PATH ...": every
 * verb takes --db, and a database named once before the verb is the habit of git -C
 * and sqlite3. The option moves after the verb, before the verb's own arguments (so
 * ahead of record's "--"). Returns the new argc, or -1 (printed) when --db has no
 * value. */
static int db_after_verb(int argc, char **argv, char **out)
{
	int used = strncmp(argv[1], "--db=", 5) == 0 ? 1 : 2;
	const char *path = used == 1 ? argv[1] + 5 : argv[2];
	if (used == 2 && argc < 3) {
		cli_error("option '--db' needs a value (see 'rsswatch --help')");
		return -1;
	}
	if (argc <= used + 1) {
		usage(stderr);
		return -1;
	}
	int n = 0;
	out[n++] = argv[0];
	out[n++] = argv[used + 1];	/* the verb */
	out[n++] = (char *)"--db";
	out[n++] = (char *)path;
	for (int i = used + 2; i < argc; i++)
		out[n++] = argv[i];
	out[n] = NULL;
	return n;
}

int main(int argc, char **argv)
{
	static char **moved;	/* static: lives, reachable, as long as the process */
	if (argc >= 2 && (strcmp(argv[1], "--db") == 0 || strncmp(argv[1], "--db=", 5) == 0)) {
		moved = xmalloc(sizeof(*moved) * ((size_t)argc + 2));
		int n = db_after_verb(argc, argv, moved);
		if (n < 0)
			return EXIT_USAGE;
		argc = n;
		argv = moved;
	}
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return finish_stdout(EXIT_OK);
	}
	if (strcmp(argv[1], "--version") == 0) {
		puts("rsswatch " RSSWATCH_VERSION);
		return finish_stdout(EXIT_OK);
	}
	for (const struct verb *v = verbs; v->name; v++)
		if (strcmp(argv[1], v->name) == 0)
			return finish_stdout(v->run(argc - 1, argv + 1));
	cli_error("unknown verb '%s' (see 'rsswatch --help')", argv[1]);
	return EXIT_USAGE;
}
