/* rsswatch record: resolve the target, open the store, run the recording loop, print the
 * summary and choose the exit status (a launched command's own status). */
#include "base/buf.h"
#include "base/clock.h"
#include "base/fmt.h"
#include "base/parse.h"
#include "base/util.h"
#include "cli/cli.h"
#include "record/recorder.h"
#include "record/target.h"
#include "render/summary.h"
#include "source/nvml.h"
#include "source/proc.h"
#include "store/store.h"

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/utsname.h>
#include <unistd.h>

static const char usage_text[] =
	"usage: rsswatch record [OPTIONS] (-p PID | -n PATTERN | [--] COMMAND [ARG...])\n"
	"\n"
	"Records the memory of a process over time into the run database.\n"
	"\n"
	"  -p, --pid PID          attach to a running process\n"
	"  -n, --name PATTERN     attach to the process whose name or command line matches\n"
	"                         the extended regular expression PATTERN\n"
	"      --newest, --oldest with -n: pick among several matches\n"
	"      --wait             with -n: wait until a match appears\n"
	"  COMMAND [ARG...]       launch COMMAND and record it; rsswatch exits with its status\n"
	"  -i, --interval DUR     time between samples, 1ms..1h (default 1s; units ms s m h)\n"
	"  -d, --duration DUR     stop recording after DUR\n"
	"  -l, --label TEXT       a label stored with the run\n"
	"  -q, --quiet            no live lines\n"
	"  -v, --verbose          say which optional sources (GPU, ...) are not available\n"
	"      --no-gpu           do not record GPU memory even where NVML is present\n"
	"      --gpu-interval DUR read GPU figures at most this often (default: the\n"
	"                         interval, but no faster than every 100ms)\n"
	"      --every N          a live line every N samples (default: about one a second)\n"
	"      --db PATH          the run database (default: $RSSWATCH_DB, else\n"
	"                         $XDG_STATE_HOME/rsswatch/rsswatch.db, else\n"
	"                         ~/.local/state/rsswatch/rsswatch.db)\n"
	"  -h, --help             this text\n"
	"\n"
	"Ctrl-C or SIGTERM ends the recording cleanly; with a launched command they are\n"
	"passed on to it and the recording ends when it does.\n"
	"Exit status: 0, or the command's own status (128+N for signal N); 1 on failure,\n"
	"2 on bad usage; with a command, 125 when rsswatch failed, 126 when the command\n"
	"cannot run, 127 when it is not found.\n";

enum pick { PICK_NONE, PICK_NEWEST, PICK_OLDEST };

struct record_args {
	struct record_opts opts;
	const char *pid_arg;
	const char *pattern;
	enum pick pick;
	int wait;
	const char *label;
	const char *db;
	char **command;
	int verbose;
	int no_gpu;
	int64_t gpu_interval_ns;
};

enum { OPT_DB = CLI_OPT_DB, OPT_NEWEST, OPT_OLDEST, OPT_WAIT, OPT_EVERY, OPT_NO_GPU,
       OPT_GPU_INTERVAL };

static int parse_args(int argc, char **argv, struct record_args *a)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "name", required_argument, NULL, 'n' },
		{ "interval", required_argument, NULL, 'i' },
		{ "duration", required_argument, NULL, 'd' },
		{ "label", required_argument, NULL, 'l' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "no-gpu", no_argument, NULL, OPT_NO_GPU },
		{ "gpu-interval", required_argument, NULL, OPT_GPU_INTERVAL },
		{ "every", required_argument, NULL, OPT_EVERY },
		{ "newest", no_argument, NULL, OPT_NEWEST },
		{ "oldest", no_argument, NULL, OPT_OLDEST },
		{ "wait", no_argument, NULL, OPT_WAIT },
		{ "db", required_argument, NULL, OPT_DB },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	uint64_t u;
	a->opts.interval_ns = NS_PER_S;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:p:n:i:d:l:qvh", longopts, NULL)) != -1) {
		switch (c) {
		case 'p': a->pid_arg = optarg; break;
		case 'n': a->pattern = optarg; break;
		case 'i':
			if (parse_duration_ns(optarg, &a->opts.interval_ns) < 0 ||
			    a->opts.interval_ns < NS_PER_MS || a->opts.interval_ns > 3600 * NS_PER_S)
				return cli_usage("record", "invalid interval '%s': give 1ms..1h, e.g. 100ms, 1s, 5m", optarg);
			break;
		case 'd':
			if (parse_duration_ns(optarg, &a->opts.duration_ns) < 0 || a->opts.duration_ns <= 0)
				return cli_usage("record", "invalid duration '%s': give e.g. 30s, 10m, 2h", optarg);
			break;
		case 'l': a->label = optarg; break;
		case 'q': a->opts.quiet = 1; break;
		case 'v': a->verbose = 1; break;
		case OPT_NO_GPU: a->no_gpu = 1; break;
		case OPT_GPU_INTERVAL:
			if (parse_duration_ns(optarg, &a->gpu_interval_ns) < 0 ||
			    a->gpu_interval_ns < NS_PER_MS || a->gpu_interval_ns > 3600 * NS_PER_S)
				return cli_usage("record", "invalid GPU interval '%s': give 1ms..1h", optarg);
			break;
		case OPT_EVERY:
			if (parse_u64(optarg, &u) < 0 || u == 0 || u > 1000000000)
				return cli_usage("record", "invalid --every '%s': give a number of samples >= 1", optarg);
			a->opts.every = (unsigned)u;
			break;
		case OPT_NEWEST: a->pick = PICK_NEWEST; break;
		case OPT_OLDEST: a->pick = PICK_OLDEST; break;
		case OPT_WAIT: a->wait = 1; break;
		case OPT_DB: a->db = optarg; break;
		case 'h': fputs(usage_text, stdout); exit(EXIT_OK);
		case ':': return cli_usage("record", "option '%s' needs a value", argv[optind - 1]);
		default: return cli_usage("record", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		a->command = argv + optind;
	int targets = !!a->pid_arg + !!a->pattern + !!a->command;
	if (targets == 0)
		return cli_usage("record", "give a target: -p PID, -n PATTERN or a COMMAND");
	if (targets > 1)
		return cli_usage("record", "give only one target: -p PID, -n PATTERN or a COMMAND");
	if ((a->pick || a->wait) && !a->pattern)
		return cli_usage("record", "--newest, --oldest and --wait go with -n PATTERN");
	return 0;
}

/* Attach: checks that pid exists and its memory can be read. */
static int attach_pid(pid_t pid, struct record_target *t)
{
	int fd = pidfd_open_rsw(pid);
	if (fd < 0) {
		cli_error("cannot attach to pid %d: %s", (int)pid,
			  fd == -ESRCH ? "no such process" : errstr(fd));
		return EXIT_FAIL;
	}
	struct proc_reader pr;
	struct proc_status ps;
	int e = proc_reader_open(&pr, pid);
	if (e == 0)
		e = proc_reader_read(&pr, &ps);
	proc_reader_close(&pr);
	if (e < 0) {
		close(fd);
		if (e == -ESRCH)
			cli_error("cannot attach to pid %d: it has exited or has no memory of its own "
				  "(zombie or kernel thread)", (int)pid);
		else if (e == -ENOENT || e == -EACCES || e == -EPERM)
			cli_error("cannot read the memory of pid %d: %s (/proc/%d is hidden or not "
				  "readable by this user)", (int)pid, errstr(e), (int)pid);
		else
			cli_error("cannot read the memory of pid %d: %s", (int)pid, errstr(e));
		return EXIT_FAIL;
	}
	t->pid = pid;
	t->pidfd = fd;
	t->is_child = 0;
	return 0;
}

static int wait_signal(int sigfd, int ms)
{
	struct pollfd p = { sigfd, POLLIN, 0 };
	return poll(&p, 1, ms) > 0;
}

static int resolve_pattern(const struct record_args *a, int sigfd, pid_t *pid)
{
	regex_t re;
	int rc = regcomp(&re, a->pattern, REG_EXTENDED | REG_NOSUB);
	if (rc != 0) {
		char msg[128];
		regerror(rc, &re, msg, sizeof(msg));
		return cli_usage("record", "invalid pattern '%s': %s", a->pattern, msg);
	}
	struct proc_match *m = NULL;
	size_t n = 0;
	int said = 0, ret = EXIT_OK;
	for (;;) {
		free(m);
		m = NULL;
		int e = find_matches(&re, &m, &n);
		if (e < 0) {
			cli_error("cannot list processes: %s", errstr(e));
			ret = EXIT_FAIL;
			goto out;
		}
		if (n > 0 || !a->wait)
			break;
		if (!said && !a->opts.quiet)
			fprintf(stderr, "rsswatch: waiting for a process matching '%s'\n", a->pattern);
		said = 1;
		if (wait_signal(sigfd, 250)) {
			cli_error("stopped waiting for a process matching '%s'", a->pattern);
			ret = EXIT_FAIL;
			goto out;
		}
	}
	if (n == 0) {
		cli_error("no process matches '%s' (use --wait to wait for one)", a->pattern);
		ret = EXIT_FAIL;
	} else if (n > 1 && a->pick == PICK_NONE) {
		cli_error("%zu processes match '%s'; pick one with -p, --newest or --oldest:", n, a->pattern);
		for (size_t i = 0; i < n; i++)
			fprintf(stderr, "  %7d  %-16s %s\n", (int)m[i].pid, m[i].name, m[i].cmdline);
		ret = EXIT_USAGE;
	} else {
		*pid = m[a->pick == PICK_NEWEST ? n - 1 : 0].pid;
	}
out:
	free(m);
	regfree(&re);
	return ret;
}

/* argv joined with spaces, quoting arguments that need it. */
static char *join_command(char **argv)
{
	struct buf b = { 0 };
	for (char **p = argv; *p; p++) {
		if (p != argv)
			buf_putc(&b, ' ');
		if (**p && !strpbrk(*p, " \t\n'\"\\$`*?;&|<>()")) {
			buf_puts(&b, *p);
			continue;
		}
		buf_putc(&b, '\'');
		for (const char *c = *p; *c; c++) {
			if (*c == '\'')
				buf_puts(&b, "'\\''");
			else
				buf_putc(&b, *c);
		}
		buf_putc(&b, '\'');
	}
	return b.p ? b.p : xstrdup("");
}

static void fill_run(struct run *r, const struct record_args *a, const struct record_target *t)
{
	struct utsname u;
	struct proc_stat self;
	char boot[64] = "", cmd[4096];
	char *buf;
	size_t len;
	struct meminfo mi = { 0, 0 };

	memset(r, 0, sizeof(*r));
	uname(&u);
	r->host = xstrdup(u.nodename);
	r->kernel = xstrdup(u.release);
	r->label = xstrdup(a->label ? a->label : "");
	if (a->command) {
		r->target = join_command(a->command);
		r->mode = xstrdup("command");
	} else {
		if (proc_read_cmdline(t->pid, cmd, sizeof(cmd)) < 0)
			cmd[0] = '\0';
		r->target = xstrdup(cmd);
		r->mode = xstrdup(a->pattern ? "name" : "pid");
	}
	r->pid = t->pid;
	r->started_at = real_ns();
	r->interval_ns = a->opts.interval_ns;
	strlcpy_rsw(r->outcome, OUTCOME_RUNNING, sizeof(r->outcome));
	r->exit_code = -1;
	r->signal = -1;
	r->peak_gpu = -1;
	if (read_file("/proc/meminfo", &buf, &len) == 0) {
		meminfo_parse(buf, len, &mi);
		free(buf);
	}
	r->mem_total = mi.total;
	r->recorder_pid = getpid();
	if (proc_read_stat(getpid(), &self) == 0)
		r->recorder_start = self.starttime;
	proc_read_boot_id(boot, sizeof(boot));
	r->boot_id = xstrdup(boot);
}

/* GPU figures where an NVIDIA driver is present; without one nothing changes (one line
 * with --verbose). GPU queries are slow next to /proc reads: no faster than 100ms
 * unless asked. */
static void open_gpu(struct record_args *a)
{
	char why[256];
	if (a->no_gpu)
		return;
	if (nvml_open(&a->opts.nvml, why, sizeof(why)) < 0) {
		a->opts.nvml = NULL;
		if (a->verbose)
			fprintf(stderr, "rsswatch: no GPU figures: %s\n", why);
		return;
	}
	a->opts.gpu_interval_ns = a->gpu_interval_ns;
	if (!a->opts.gpu_interval_ns)
		a->opts.gpu_interval_ns = a->opts.interval_ns > 100 * NS_PER_MS ? a->opts.interval_ns
										   : 100 * NS_PER_MS;
	if (a->verbose)
		fprintf(stderr, "rsswatch: GPU figures from %d device(s), every %lldms\n",
			nvml_device_count(a->opts.nvml), (long long)(a->opts.gpu_interval_ns / NS_PER_MS));
}

/* The highest sampled RSS of the run, to tell whether the peak came from VmHWM. */
static int max_rss_cb(void *ctx, const struct sample *s)
{
	uint64_t *m = ctx;
	if (s->rss > *m)
		*m = s->rss;
	return 0;
}

int cmd_record(int argc, char **argv)
{
	struct record_args a;
	memset(&a, 0, sizeof(a));
	int ret = parse_args(argc, argv, &a);
	if (ret)
		return ret;
	a.opts.live = stderr;
	const int fail = a.command ? EXIT_CANCELED : EXIT_FAIL;

	pid_t pid = 0;
	if (a.pid_arg) {
		int e = parse_pid(a.pid_arg, &pid);
		if (e < 0)
			return cli_usage("record", "invalid pid '%s': give a process id >= 1", a.pid_arg);
	}

	char err[512];
	char *dbpath = cli_db_path(a.db);
	struct store *st = NULL;
	if (store_open(dbpath, STORE_CREATE, &st, err, sizeof(err)) < 0) {
		cli_error("%s: %s", dbpath, err);
		free(dbpath);
		return fail;
	}

	/* Signals arrive through a signalfd; a launched command gets the old mask back. */
	sigset_t set, old;
	recorder_signals(&set);
	sigprocmask(SIG_BLOCK, &set, &old);
	signal(SIGPIPE, SIG_IGN);
	int sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	struct record_target t = { 0, -1, 0 };
	struct run run;
	memset(&run, 0, sizeof(run));
	if (sigfd < 0) {
		cli_error("cannot set up signal handling: %s", errstr(errno));
		ret = fail;
		goto out;
	}

	if (a.command) {
		pid_t child = launch_command(a.command, &old);
		if (child < 0) {
			if (child == -ENOENT) {
				cli_error("cannot run '%s': command not found", a.command[0]);
				ret = EXIT_ENOENT;
			} else {
				cli_error("cannot run '%s': %s", a.command[0], errstr(child));
				ret = EXIT_CANNOT_INVOKE;
			}
			goto out;
		}
		t.pid = child;
		t.is_child = 1;
		t.pidfd = pidfd_open_rsw(child);
		if (t.pidfd < 0) {
			cli_error("cannot watch pid %d: %s", (int)child, errstr(t.pidfd));
			ret = fail;
			goto out;
		}
	} else {
		if (a.pattern && (ret = resolve_pattern(&a, sigfd, &pid)) != 0)
			goto out;
		if ((ret = attach_pid(pid, &t)) != 0)
			goto out;
	}

	fill_run(&run, &a, &t);
	if (store_run_begin(st, &run) < 0) {
		cli_error("%s: cannot start a run: %s", dbpath, store_errmsg(st));
		ret = fail;
		goto out;
	}
	if (!a.opts.quiet) {
		char iv[32];
		struct proc_stat ps;
		fprintf(stderr, "rsswatch: recording pid %d (%s) every %s as run %lld in %s\n",
			(int)t.pid, proc_read_stat(t.pid, &ps) == 0 ? ps.comm : "?",
			fmt_duration(iv, sizeof(iv), a.opts.interval_ns), (long long)run.id, dbpath);
	}

	open_gpu(&a);
	int e = record(&a.opts, &t, sigfd, st, &run);
	if (e < 0)
		cli_error("recording of pid %d ended early: %s", (int)t.pid, errstr(e));

	uint64_t max_rss = 0;
	store_each_sample(st, run.id, max_rss_cb, &max_rss);
	struct buf sum = { 0 };
	summary_text(&sum, &run, max_rss);
	fputs(buf_str(&sum), stderr);
	buf_release(&sum);

	ret = e < 0 ? fail : EXIT_OK;
	if (a.command && e == 0) {
		if (strcmp(run.outcome, OUTCOME_EXITED) == 0)
			ret = run.exit_code >= 0 ? run.exit_code : EXIT_CANCELED;
		else if (strcmp(run.outcome, OUTCOME_SIGNALED) == 0 ||
			 strcmp(run.outcome, OUTCOME_OOM_KILLED) == 0)
			ret = 128 + run.signal;
	}
out:
	run_release(&run);
	nvml_close(a.opts.nvml);
	if (t.pidfd >= 0)
		close(t.pidfd);
	if (sigfd >= 0)
		close(sigfd);
	store_close(st);
	free(dbpath);
	return ret;
}
