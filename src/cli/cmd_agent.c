/* rsswatch agent: the targets from the command line and a config file, the one
 * /metrics endpoint, the signals; the watching itself is record/agent.c. */
#include "base/clock.h"
#include "base/parse.h"
#include "base/sysroot.h"
#include "base/util.h"
#include "cli/cli.h"
#include "metrics/http.h"
#include "record/agent.h"
#include "record/agentconf.h"
#include "record/recorder.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stddef.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* A config file larger than this is refused: a thousand targets fit in far less. */
#define CONFIG_MAX (1 << 20)

/* Reads path whole. Returns 0, or EXIT_USAGE (printed). */
static int read_config(const char *path, char **out, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	struct stat st;
	if (fd < 0) {
		cli_error("cannot read config %s: %s", path, errstr(errno));
		return EXIT_USAGE;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > CONFIG_MAX) {
		cli_error("cannot read config %s: %s", path, fstat(fd, &st) < 0 ? errstr(errno) :
			  !S_ISREG(st.st_mode) ? "not a regular file" : "larger than 1 MiB");
		close(fd);
		return EXIT_USAGE;
	}
	char *buf = xmalloc((size_t)st.st_size + 1);
	size_t n = 0;
	for (;;) {
		ssize_t r = read(fd, buf + n, (size_t)st.st_size + 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			cli_error("cannot read config %s: %s", path, errstr(errno));
			close(fd);
			free(buf);
			return EXIT_USAGE;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > (size_t)st.st_size) {	/* grown while read */
			cli_error("cannot read config %s: it changed while being read", path);
			close(fd);
			free(buf);
			return EXIT_USAGE;
		}
	}
	close(fd);
	*out = buf;
	*len = n;
	return 0;
}

struct agent_args {
	struct agentconf targets;
	struct agent_opts o;
	const char *listen;
	const char *db;
	int quiet;
};

/* -n, -p, -g: a target of the kind the row's letter names. */
static int add_target(const struct cli_state *st, const struct cli_opt *o, const char *value,
		      void *to)
{
	struct agentconf_err err;
	enum agent_kind kind = o->letter == 'n' ? AGENT_MATCH : o->letter == 'p' ? AGENT_PID :
			       AGENT_CGROUP;
	if (agentconf_add(to, kind, value, NULL, 0, &err) < 0)
		return cli_usage(st->cmd->verb, "-%c %s: %s", o->letter, value, err.msg);
	return 0;
}

static int add_config(const struct cli_state *st, const struct cli_opt *o, const char *path,
		      void *to)
{
	char *buf;
	size_t len;
	struct agentconf_err err;
	(void)st;
	(void)o;
	int ret = read_config(path, &buf, &len);
	if (ret != 0)
		return ret;
	if (agentconf_parse(to, buf, len, &err) < 0) {
		/* the path is the admin's own; a line of it is not printed (it may hold
		 * anything), only where it is and why it was refused */
		fprintf(stderr, "rsswatch agent: %s:%u: %s\n", path, err.line, err.msg);
		ret = EXIT_USAGE;
	}
	free(buf);
	return ret;
}

#define AT(field, type) CLI_AT(struct agent_args, field, type)
static const struct cli_opt agent_opts[] = {
	{ "name", 'n', CLI_CALLBACK, AT(targets, struct agentconf), .fn = add_target,
	  .arg = "PATTERN", .help = "a target: processes whose name or command line matches the "
	  "extended regular expression (as record -n); one instance at a time, the newest of "
	  "several (--oldest)" },
	{ "pid", 'p', CLI_CALLBACK, AT(targets, struct agentconf), .fn = add_target,
	  .arg = "PID", .help = "a target: that process, once" },
	{ "cgroup", 'g', CLI_CALLBACK, AT(targets, struct agentconf), .fn = add_target,
	  .arg = "CGROUP", .help = "a target: every process of a memory cgroup, recorded while "
	  "it holds any" },
	{ "config", 0, CLI_CALLBACK, AT(targets, struct agentconf), .fn = add_config,
	  .arg = "FILE", .help = "targets, one a line: name=NAME and one of match=PATTERN, "
	  "pid=PID, cgroup=CGROUP; '#' comments; a VALUE with spaces in double quotes "
	  "(docs/guide/agent.md)" },
	{ "oldest", 0, CLI_FLAG, AT(o.oldest, int),
	  .help = "several matches at once: the oldest, not the newest" },
	{ "listen", 0, CLI_STRING, AT(listen, const char *), .arg = "HOST:PORT",
	  .help = "serve /metrics of every target (e.g. 127.0.0.1:9464; only that address is "
		  "bound); docs/guide/metrics.md" },
	{ "interval", 'i', CLI_DURATION, AT(o.interval_ns, int64_t), .min = NS_PER_MS,
	  .max = 3600 * NS_PER_S, .eg = "100ms, 1s, 5m",
	  .help = "time between samples, 1ms..1h (default 1s)" },
	{ "quiet", 'q', CLI_FLAG, AT(quiet, int),
	  .help = "no lines about instances starting and ending" },
	{ "no-gpu", 0, CLI_FLAG, AT(o.no_gpu, int),
	  .help = "do not record GPU memory even where NVML is present" },
	CLI_DB_ROW(struct agent_args),
	CLI_OPTS_END,
};

const struct cli_cmd agent_cli = {
	.verb = "agent",
	.usage = "usage: rsswatch agent [OPTIONS] (-n PATTERN | -p PID | -g CGROUP | --config FILE)...\n",
	.about = "Watches several targets at once, for a fleet host: each instance of a target (a\n"
		 "process that matches, started and restarted as often as it is) is recorded as a\n"
		 "run in the database, the runs of one target forming one series; one /metrics\n"
		 "endpoint serves them all, each series labelled target=\"NAME\". Runs until SIGINT\n"
		 "or SIGTERM, which end every recording as 'stopped' (or until every target was a\n"
		 "-p PID that has ended).\n"
		 "-n, -p, -g and --config may be repeated and mixed. A target's NAME is 1..63 of\n"
		 "A-Z a-z 0-9 _ . -; without one it is derived from the target (e.g. pid-4242).\n",
	.opts = agent_opts,
	.more = "Exit status: 0 when stopped by a signal (every run stored with its outcome); 1\n"
		"on failure (a database that cannot be opened, a target that failed); 2 on bad\n"
		"usage, a bad config line (its line number given) or an address that cannot be\n"
		"bound.\n",
	.flags = CLI_IN_ORDER,
};

static int parse_args(int argc, char **argv, struct agent_args *a)
{
	a->o.interval_ns = NS_PER_S;
	a->o.no_proccn = cli_env_flag("RSSWATCH_NO_PROCCN");
	int ret = cli_parse(&agent_cli, argc, argv, a);
	if (ret)
		return ret;
	if (optind < argc)
		return cli_usage("agent", "unexpected argument '%s'", argv[optind]);
	if (a->targets.n == 0)
		return cli_usage("agent", "give a target: -n PATTERN, -p PID, -g CGROUP or --config FILE");
	return 0;
}

/* The agent's lines on stderr, one at a time from the targets' threads (stdio locks
 * each call). The target's name is of the safe charset; the recorders' texts are
 * their own. */
struct out {
	int quiet;
};

static void print_note(void *ctx, const char *target, const char *text)
{
	const struct out *o = ctx;
	static const char pfx[] = "rsswatch: ";
	int ours = strncmp(text, pfx, sizeof(pfx) - 1) == 0;
	if (o->quiet && ours && !strstr(text, "cannot") && !strstr(text, "warning"))
		return;
	fprintf(stderr, "rsswatch: %s: %s\n", target, ours ? text + sizeof(pfx) - 1 : text);
}

/* Waits for SIGINT, SIGTERM or SIGHUP (1), or for every target's thread to have
 * ended (0). */
static int wait_stop(struct agent *ag)
{
	sigset_t set;
	recorder_signals(&set);
	for (;;) {
		struct timespec ts = { 1, 0 };
		int sig = sigtimedwait(&set, NULL, &ts);
		if (sig > 0)
			return 1;
		if (agent_running(ag) == 0)
			return 0;
	}
}

int cmd_agent(int argc, char **argv)
{
	struct agent_args a;
	struct out out;
	struct agent *ag = NULL;
	char *dbpath = NULL;
	char err[512];
	int ret = EXIT_OK;
	memset(&a, 0, sizeof(a));
	if ((ret = parse_args(argc, argv, &a)) != 0) {
		ret = ret == CLI_DONE ? EXIT_OK : ret;
		goto done;
	}
	out.quiet = a.quiet;
	a.o.note = print_note;
	a.o.note_ctx = &out;
	if (cli_db_empty(a.db)) {
		ret = EXIT_USAGE;
		goto done;
	}
	if (a.db && cli_db_dir_missing(a.db)) {
		ret = EXIT_FAIL;
		goto done;
	}
	dbpath = cli_db_path(a.db);
	a.o.db_path = dbpath;
	/* Every thread started from here on (the endpoint's, the writers', the targets')
	 * inherits this mask: the stop signals reach this thread's sigtimedwait, the
	 * targets' signal only the thread it is sent to. */
	sigset_t set;
	recorder_signals(&set);
	sigaddset(&set, AGENT_STOP_SIGNAL);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	sysroot();	/* read once, before any thread asks */
	if (a.listen) {
		const char **names = xcalloc(a.targets.n, sizeof(*names));
		for (size_t i = 0; i < a.targets.n; i++)
			names[i] = a.targets.t[i].name;
		int e = metrics_server_start_set(&a.o.metrics, a.listen, names, a.targets.n);
		free(names);
		if (e < 0) {
			cli_error("cannot listen on %s: %s", a.listen, errstr(e));
			ret = EXIT_USAGE;
			goto free_db;
		}
	}
	if (agent_start(&ag, &a.targets, &a.o, err, sizeof(err)) < 0) {
		cli_error("%s", err);
		ret = EXIT_FAIL;
		goto free_db;
	}
	if (!a.quiet)
		fprintf(stderr, "rsswatch: agent watching %zu target%s, runs in %s%s%s\n",
			a.targets.n, a.targets.n == 1 ? "" : "s", dbpath,
			a.listen ? ", metrics at http://" : "", a.listen ? a.listen : "");
	int signaled = wait_stop(ag);
	int failed = agent_stop(ag);
	if (!a.quiet && signaled)
		fprintf(stderr, "rsswatch: agent stopped\n");
	ret = failed ? EXIT_FAIL : EXIT_OK;
free_db:
	metrics_server_free(a.o.metrics);
	free(dbpath);
done:
	agentconf_release(&a.targets);
	return ret;
}
