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
#include "base/rfile.h"
#include "base/sysroot.h"
#include "source/cgroup.h"
#include "source/nvml.h"
#include "source/proc.h"
#include "store/store.h"

#include <dirent.h>
#include <errno.h>
#include <malloc.h>
#include <getopt.h>
#include <poll.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

static const char usage_text[] =
	"usage: rsswatch record [OPTIONS] (-p PID | -n PATTERN | -g CGROUP | [--] COMMAND [ARG...])\n"
	"\n"
	"Records the memory of a process over time into the run database.\n"
	"\n"
	"  -p, --pid PID          attach to a running process\n"
	"  -n, --name PATTERN     attach to the process whose name or command line matches\n"
	"                         the extended regular expression PATTERN\n"
	"      --newest, --oldest with -n: pick among several matches\n"
	"      --wait             with -n: wait until a match appears\n"
	"  -g, --cgroup CGROUP    record every process of a memory cgroup (a path in the\n"
	"                         hierarchy, /a/b, or its directory under /sys/fs/cgroup),\n"
	"                         and the cgroup's own usage/limit/peak; ends when the\n"
	"                         cgroup is empty or removed\n"
	"  -t, --tree             the target and all its descendants: totals per sample,\n"
	"                         each process's figures stored beside them (summed RSS\n"
	"                         counts pages shared between processes more than once);\n"
	"                         the default for a launched COMMAND\n"
	"  COMMAND [ARG...]       launch COMMAND and record it with everything it starts;\n"
	"                         rsswatch exits with its status\n"
	"      --no-tree          a launched COMMAND alone, without its descendants\n"
	"      --no-cgroup        do not put a launched COMMAND in a cgroup of its own (by\n"
	"                         default, where it can be done without changing any other\n"
	"                         cgroup, as root on cgroup v1 or below a delegated v2\n"
	"                         cgroup, it is, for its exact charged peak and OOM kills)\n"
	"      --reset-peak       reset an attached target's VmHWM at the start (writes 5 to\n"
	"                         /proc/PID/clear_refs): its peak is then exact from the\n"
	"                         start; the target's own getrusage() sees the reset too\n"
	"      --memory-limit SIZE  run COMMAND in a new memory cgroup limited to SIZE\n"
	"                         (e.g. 64M, 2G; needs root): an OOM kill there is recorded\n"
	"                         as such, and the cgroup's usage/limit/peak is sampled\n"
	"      --warn SIZE|PCT    a 'warn' event and a highlighted line when memory reaches\n"
	"                         SIZE (e.g. 48G), or PCT% of the cgroup limit (with\n"
	"                         --memory-limit or -g: the cgroup's usage is compared)\n"
	"                         else of MemTotal; 'warn_clear' when it falls back\n"
	"      --warn-eta DUR     a 'warn_eta' event and a highlighted line, once, when the\n"
	"                         projected time until memory reaches the nearest limit\n"
	"                         (the cgroup limit, or MemAvailable) falls under DUR\n"
	"                         (e.g. 10m). Without it too, the live line shows the\n"
	"                         projection while memory rises ('full in ~4m10s') and the\n"
	"                         summary the smallest one seen (docs/MODELS.md)\n"
	"      --on-warn CMD      run CMD (through /bin/sh -c) at each 'warn' and the\n"
	"                         'warn_eta' event; --on-oom CMD: at each OOM kill of the\n"
	"                         target or a member. The facts are in the environment\n"
	"                         only: RSSWATCH_EVENT (warn, warn_eta, oom_kill),\n"
	"                         RSSWATCH_PID, RSSWATCH_RUN, RSSWATCH_RSS_BYTES,\n"
	"                         RSSWATCH_LIMIT_BYTES (where known), RSSWATCH_COMM,\n"
	"                         RSSWATCH_DB. Sampling never waits for it; its exit\n"
	"                         status is stored as a 'hook' event\n"
	"      --on-timeout DUR   end a CMD still running after DUR (default 30s):\n"
	"                         SIGTERM to its process group, SIGKILL 2s later\n"
	"      --listen HOST:PORT serve the latest sample at http://HOST:PORT/metrics in the\n"
	"                         Prometheus text format (OpenMetrics when asked for):\n"
	"                         only that address is bound (e.g. 127.0.0.1:9464,\n"
	"                         [::1]:9464); docs/METRICS.md lists the metrics\n"
	"      --pss[=DUR]        also read PSS, USS (private pages) and SwapPss from\n"
	"                         /proc/PID/smaps_rollup, at most every DUR (default 10s;\n"
	"                         --pss DUR works too when DUR starts with a digit). Each\n"
	"                         read costs about 9 ms per GiB resident and stalls the\n"
	"                         target's mmap calls while it runs: never on by default.\n"
	"                         With -t or -g, the members' PSS is summed: shared pages\n"
	"                         count once in all, unlike summed RSS\n"
	"  -i, --interval DUR     time between samples, 1ms..1h (default 1s; units ms s m h)\n"
	"  -d, --duration DUR     stop recording after DUR\n"
	"  -l, --label TEXT       a label stored with the run\n"
	"      --param KEY=VALUE  a parameter stored with the run (repeatable), e.g.\n"
	"                         --param pw=12; KEY is [A-Za-z0-9_.-], up to 63 bytes;\n"
	"                         a numeric VALUE can be fitted against (rsswatch model)\n"
	"  -q, --quiet            no live lines\n"
	"  -v, --verbose          say which optional sources (GPU, ...) are not available\n"
	"      --no-gpu           do not record GPU memory even where NVML is present\n"
	"      --gpu-interval DUR read GPU memory this often (default 20ms); a sample\n"
	"                         stores the highest figures read since the one before\n"
	"      --every N          a live line every N samples (default: about one a second)\n"
	"      --db PATH          the run database (default: $RSSWATCH_DB, else\n"
	"                         $XDG_STATE_HOME/rsswatch/rsswatch.db, else\n"
	"                         ~/.local/state/rsswatch/rsswatch.db)\n"
	"      --keep AGE         when the recording ends, thin runs that ended more than\n"
	"                         AGE ago (s m h d w), as 'rsswatch gc --keep' does\n"
	"      --max-db SIZE      when the recording ends, bring the database under SIZE,\n"
	"                         as 'rsswatch gc --max-db' does (default: neither)\n"
	"  -h, --help             this text\n"
	"\n"
	"Ctrl-C or SIGTERM ends the recording cleanly; with a launched command they are\n"
	"passed on to it and the recording ends when it does (a cgroup made for\n"
	"--memory-limit is removed then).\n"
	"Memory pressure (PSI: the host's /proc/pressure/memory, and a v2 cgroup's\n"
	"memory.pressure) is stored with every sample where the kernel has it, read at\n"
	"most once a second.\n"
	"When the target dies of SIGKILL, rsswatch tells an OOM kill from any other from\n"
	"the kernel log (/dev/kmsg), the cgroup's and the host's OOM kill counts; the\n"
	"outcome is then 'oom_killed', with the kernel's figures in an oom_kill event.\n"
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
	uint64_t memory_limit;	/* 0: none */
	const char *cgroup;	/* -g */
	int tree;
	int no_tree;
	int no_cgroup;
	int reset_peak;
	struct run_param *params;	/* --param, in the order given; owned */
	size_t nparams;
	struct hooks hooks;	/* --on-warn, --on-oom (opts.hooks points here when set) */
	const char *listen;	/* --listen HOST:PORT, or NULL */
	int keep_given;		/* retention at the end (cmd_gc.c): --keep, --max-db */
	int64_t keep_ns;
	uint64_t max_db;	/* 0: none */
};

enum { OPT_DB = CLI_OPT_DB, OPT_NEWEST, OPT_OLDEST, OPT_WAIT, OPT_EVERY, OPT_NO_GPU,
       OPT_GPU_INTERVAL, OPT_MEMORY_LIMIT, OPT_WARN, OPT_PSS, OPT_NO_TREE, OPT_NO_CGROUP,
       OPT_RESET_PEAK, OPT_PARAM, OPT_WARN_ETA, OPT_ON_WARN, OPT_ON_OOM, OPT_ON_TIMEOUT,
       OPT_LISTEN, OPT_KEEP, OPT_MAX_DB };

#define PSS_DEFAULT_NS (10 * NS_PER_S)

static int parse_args(int argc, char **argv, struct record_args *a)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "name", required_argument, NULL, 'n' },
		{ "cgroup", required_argument, NULL, 'g' },
		{ "tree", no_argument, NULL, 't' },
		{ "no-tree", no_argument, NULL, OPT_NO_TREE },
		{ "no-cgroup", no_argument, NULL, OPT_NO_CGROUP },
		{ "reset-peak", no_argument, NULL, OPT_RESET_PEAK },
		{ "interval", required_argument, NULL, 'i' },
		{ "duration", required_argument, NULL, 'd' },
		{ "label", required_argument, NULL, 'l' },
		{ "param", required_argument, NULL, OPT_PARAM },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "no-gpu", no_argument, NULL, OPT_NO_GPU },
		{ "gpu-interval", required_argument, NULL, OPT_GPU_INTERVAL },
		{ "every", required_argument, NULL, OPT_EVERY },
		{ "newest", no_argument, NULL, OPT_NEWEST },
		{ "oldest", no_argument, NULL, OPT_OLDEST },
		{ "wait", no_argument, NULL, OPT_WAIT },
		{ "memory-limit", required_argument, NULL, OPT_MEMORY_LIMIT },
		{ "warn", required_argument, NULL, OPT_WARN },
		{ "warn-eta", required_argument, NULL, OPT_WARN_ETA },
		{ "on-warn", required_argument, NULL, OPT_ON_WARN },
		{ "on-oom", required_argument, NULL, OPT_ON_OOM },
		{ "on-timeout", required_argument, NULL, OPT_ON_TIMEOUT },
		{ "listen", required_argument, NULL, OPT_LISTEN },
		{ "pss", optional_argument, NULL, OPT_PSS },
		{ "db", required_argument, NULL, OPT_DB },
		{ "keep", required_argument, NULL, OPT_KEEP },
		{ "max-db", required_argument, NULL, OPT_MAX_DB },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	uint64_t u;
	a->opts.interval_ns = NS_PER_S;
	hooks_init(&a->hooks);
	{	/* a test knob: follow a tree by walking only (see record_opts) */
		const char *v = getenv("RSSWATCH_NO_PROCCN");
		a->opts.no_proccn = v && *v && strcmp(v, "0") != 0;
		v = getenv("RSSWATCH_NO_TASKSTATS");	/* and without exit records */
		a->opts.no_exit_records = v && *v && strcmp(v, "0") != 0;
	}
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:p:n:g:ti:d:l:qvh", longopts, NULL)) != -1) {
		switch (c) {
		/* Given twice, one of the two would be dropped without a word. */
		case 'p':
			if (a->pid_arg)
				return cli_usage("record", "give -p once (got %s and %s)", a->pid_arg, optarg);
			a->pid_arg = optarg;
			break;
		case 'n':
			if (a->pattern)
				return cli_usage("record", "give -n once (got '%s' and '%s')", a->pattern, optarg);
			a->pattern = optarg;
			break;
		case 'g':
			if (a->cgroup)
				return cli_usage("record", "give -g once (got '%s' and '%s')", a->cgroup, optarg);
			a->cgroup = optarg;
			break;
		case 't': a->tree = 1; break;
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
		case OPT_PARAM: {
			struct run_param p;
			char why[128];
			if (run_param_parse(optarg, &p, why, sizeof(why)) < 0) {
				struct buf shown = { 0 };	/* one line, whatever was given */
				buf_put_printable(&shown, optarg);
				int uret = cli_usage("record", "invalid --param '%s': %s", buf_str(&shown), why);
				buf_release(&shown);
				return uret;
			}
			if (run_param_find(a->params, a->nparams, p.key)) {
				free(p.value);
				return cli_usage("record", "--param %s given twice", p.key);
			}
			a->params = xrealloc(a->params, (a->nparams + 1) * sizeof(*a->params));
			a->params[a->nparams++] = p;
			break;
		}
		case 'q': a->opts.quiet = 1; break;
		case 'v': a->verbose = 1; break;
		case OPT_NO_GPU: a->no_gpu = 1; break;
		case OPT_NO_TREE: a->no_tree = 1; break;
		case OPT_NO_CGROUP: a->no_cgroup = 1; break;
		case OPT_RESET_PEAK: a->opts.reset_peak = a->reset_peak = 1; break;
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
		case OPT_WARN: {
			size_t l = strlen(optarg);
			if (l > 1 && optarg[l - 1] == '%') {
				char pct[32];
				double v = 0;
				if (l - 1 >= sizeof(pct))
					return cli_usage("record", "invalid --warn '%s'", optarg);
				memcpy(pct, optarg, l - 1);
				pct[l - 1] = '\0';
				int64_t ns;
				/* a percentage: a plain decimal, read as seconds and scaled back */
				if (parse_duration_ns(pct, &ns) < 0 || pct[strspn(pct, "0123456789.")] != '\0' ||
				    (v = (double)ns / 1e9) <= 0 || v > 100)
					return cli_usage("record", "invalid --warn '%s': give a size (48G) or a percentage (80%%)", optarg);
				a->opts.warn_pct = v;
			} else if (parse_size(optarg, &a->opts.warn_bytes) < 0 || !a->opts.warn_bytes) {
				return cli_usage("record", "invalid --warn '%s': give a size (48G) or a percentage (80%%)", optarg);
			}
			break;
		}
		case OPT_ON_WARN:
		case OPT_ON_OOM:
			if (!*optarg)
				return cli_usage("record", "--on-warn and --on-oom take a command");
			*(c == OPT_ON_WARN ? &a->hooks.on_warn : &a->hooks.on_oom) = optarg;
			break;
		case OPT_ON_TIMEOUT:
			if (parse_duration_ns(optarg, &a->hooks.timeout_ns) < 0 || a->hooks.timeout_ns <= 0)
				return cli_usage("record", "invalid --on-timeout '%s': give a duration (30s)", optarg);
			break;
		case OPT_LISTEN: {
			struct sockaddr_storage ss;
			socklen_t sl;
			if (prom_parse_listen(optarg, &ss, &sl) < 0)
				return cli_usage("record", "invalid --listen '%s': give HOST:PORT, e.g. 127.0.0.1:9464 or [::1]:9464", optarg);
			a->listen = optarg;
			break;
		}
		case OPT_WARN_ETA:
			if (parse_duration_ns(optarg, &a->opts.warn_eta_ns) < 0 || a->opts.warn_eta_ns <= 0)
				return cli_usage("record", "invalid --warn-eta '%s': give a duration (10m)", optarg);
			break;
		case OPT_PSS: {
			/* --pss=DUR, or --pss DUR where DUR starts with a digit (getopt takes an
			 * optional argument only after '='; a command never starts with one). */
			const char *v = optarg;
			if (!v && optind < argc && argv[optind][0] >= '0' && argv[optind][0] <= '9')
				v = argv[optind++];
			a->opts.pss_interval_ns = PSS_DEFAULT_NS;
			if (v && (parse_duration_ns(v, &a->opts.pss_interval_ns) < 0 ||
				  a->opts.pss_interval_ns < 10 * NS_PER_MS ||
				  a->opts.pss_interval_ns > 24 * 3600 * NS_PER_S))
				return cli_usage("record", "invalid --pss '%s': give a duration of 10ms..24h, e.g. 10s, 1m", v);
			break;
		}
		case OPT_MEMORY_LIMIT:
			if (parse_size(optarg, &a->memory_limit) < 0 || a->memory_limit < 4096)
				return cli_usage("record", "invalid memory limit '%s': give a size of at least 4K, e.g. 64M, 2G", optarg);
			break;
		case OPT_DB: a->db = optarg; break;
		case OPT_KEEP:
			a->keep_given = 1;
			if (cli_parse_keep("record", optarg, &a->keep_ns))
				return EXIT_USAGE;
			break;
		case OPT_MAX_DB:
			if (cli_parse_max_db("record", optarg, &a->max_db))
				return EXIT_USAGE;
			break;
		case 'h': fputs(usage_text, stdout); exit(EXIT_OK);
		case ':': return cli_usage("record", "option '%s' needs a value", argv[optind - 1]);
		default: return cli_usage("record", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		a->command = argv + optind;
	int targets = !!a->pid_arg + !!a->pattern + !!a->command + !!a->cgroup;
	if (targets == 0)
		return cli_usage("record", "give a target: -p PID, -n PATTERN, -g CGROUP or a COMMAND");
	if (targets > 1)
		return cli_usage("record", "give only one target: -p PID, -n PATTERN, -g CGROUP or a COMMAND");
	if ((a->pick || a->wait) && !a->pattern)
		return cli_usage("record", "--newest, --oldest and --wait go with -n PATTERN");
	if (a->memory_limit && !a->command)
		return cli_usage("record", "--memory-limit goes with a COMMAND to launch");
	if ((a->no_tree || a->no_cgroup) && !a->command)
		return cli_usage("record", "--no-tree and --no-cgroup go with a COMMAND to launch");
	if (a->no_tree && a->tree)
		return cli_usage("record", "give either --tree or --no-tree");
	if (a->no_cgroup && a->memory_limit)
		return cli_usage("record", "--memory-limit needs a cgroup: drop --no-cgroup");
	if (a->reset_peak && !a->pid_arg && !a->pattern)
		return cli_usage("record", "--reset-peak goes with an attached target (-p or -n)");
	if (a->hooks.on_warn && !a->opts.warn_bytes && a->opts.warn_pct <= 0 && !a->opts.warn_eta_ns)
		return cli_usage("record", "--on-warn goes with --warn or --warn-eta");
	if (a->command && !a->no_tree)
		a->tree = 1;	/* a launched command is measured with everything it starts */
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
		/* Names and command lines of other users' processes: no control characters
		 * reach the terminal. */
		struct buf b = { 0 };
		for (size_t i = 0; i < n; i++) {
			buf_reset(&b);
			buf_printf(&b, "  %7d  ", (int)m[i].pid);
			size_t name_at = b.len;
			buf_put_printable(&b, m[i].name);
			while (b.len < name_at + 16)
				buf_putc(&b, ' ');
			buf_putc(&b, ' ');
			buf_put_printable(&b, m[i].cmdline);
			fprintf(stderr, "%s\n", buf_str(&b));
		}
		buf_release(&b);
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
	} else if (a->cgroup) {
		r->target = xstrdup("");	/* set by the caller: the cgroup's path */
		r->mode = xstrdup("cgroup");
	} else {
		if (proc_read_cmdline(t->pid, cmd, sizeof(cmd)) < 0)
			cmd[0] = '\0';
		r->target = xstrdup(cmd);
		r->mode = xstrdup(a->pattern ? "name" : "pid");
	}
	r->pid = t->pid;
	r->tree = a->tree && !a->cgroup;
	r->pss_interval_ns = a->opts.pss_interval_ns;
	r->started_at = real_ns();
	r->interval_ns = a->opts.interval_ns;
	strlcpy_rsw(r->outcome, OUTCOME_RUNNING, sizeof(r->outcome));
	r->exit_code = -1;
	r->signal = -1;
	r->peak_gpu = -1;
	r->hwm_before = -1;
	r->min_eta_ns = -1;
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
 * with --verbose). GPU memory has no high-water mark, so it is read every 20ms unless
 * asked otherwise (tens of microseconds a read), and samples keep the highest. */
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
		a->opts.gpu_interval_ns = 20 * NS_PER_MS;
	if (a->verbose)
		fprintf(stderr, "rsswatch: GPU figures from %d device(s), every %lldms\n",
			nvml_device_count(a->opts.nvml), (long long)(a->opts.gpu_interval_ns / NS_PER_MS));
}

/* The memory cgroup of the target: one rsswatch made for --memory-limit (sampled, and
 * removed at the end), or the one an attached process is in (read only for its OOM
 * kill count). */
struct target_cgroup {
	struct cg_loc parent, loc;
	int made;		/* rsswatch created loc: remove it at the end */
	int open;		/* reader is open */
	struct cg_reader reader;
	char path[PATH_MAX];	/* its path in the hierarchy, as the kernel log names it */
};

/* dir less the mount point of its hierarchy ("/a/b"), as /proc/PID/cgroup and the
 * kernel log write it; dir itself when the mount is not found. */
static void cg_hier_path(const struct cg_loc *loc, char *out, size_t n)
{
	char *buf;
	size_t len;
	struct cg_mount *m = xcalloc(1, sizeof(*m));
	strlcpy_rsw(out, loc->dir, n);
	if (read_file("/proc/self/mountinfo", &buf, &len) == 0) {
		if (cg_mountinfo_parse(buf, len, m) == 0) {
			const char *mnt = loc->version == 1 ? m->v1_mnt : m->v2_mnt;
			const char *root = loc->version == 1 ? m->v1_root : m->v2_root;
			char prefix[PATH_MAX];
			snprintf(prefix, sizeof(prefix), "%s%s", sysroot(), mnt);
			size_t pl = strlen(prefix);
			if (pl && strncmp(loc->dir, prefix, pl) == 0 &&
			    (loc->dir[pl] == '/' || loc->dir[pl] == '\0')) {
				const char *rest = loc->dir + pl;
				if (strcmp(root, "/") == 0)
					snprintf(out, n, "%s", *rest ? rest : "/");
				else
					snprintf(out, n, "%s%s", root, rest);
			}
		}
		free(buf);
	}
	free(m);
}

/* Cleans up after recorders that were killed before they could (SIGKILL, a crash):
 * the cgroups "rsswatch-PID" and "rsswatch-PID-N" in parent whose PID is no rsswatch
 * now. Processes still in one (the command, or what it started, outlived its
 * recorder: rsswatch does not kill it, see docs/CGROUPS.md) are moved up to parent,
 * as release_cgroup() does at the end of a recording, and keep running without the
 * limit (on v2 into the parent's leaf: see cg_evacuate()); then the cgroup is removed.
 * The leaf stays for this run's cgroup; release_cgroup() undoes it at the end. */
static void remove_stale_cgroups(const struct cg_loc *parent)
{
	DIR *d = opendir(parent->dir);
	struct dirent *de;
	if (!d)
		return;
	while ((de = readdir(d))) {
		char *end, comm[64];
		struct proc_stat ps;
		struct cg_loc stale = { .version = parent->version };
		if (strncmp(de->d_name, "rsswatch-", 9) != 0)
			continue;
		long pid = strtol(de->d_name + 9, &end, 10);
		if (end == de->d_name + 9 || (*end && *end != '-') || pid <= 0 || pid > INT32_MAX)
			continue;
		if (proc_read_stat((pid_t)pid, &ps) == 0) {
			strlcpy_rsw(comm, ps.comm, sizeof(comm));
			if (strcmp(comm, "rsswatch") == 0)
				continue;	/* alive (or a namesake): leave it */
		}
		if (snprintf(stale.dir, sizeof(stale.dir), "%s/%s", parent->dir, de->d_name) >=
		    (int)sizeof(stale.dir) || cg_child_destroy(&stale, 0) != -EBUSY)
			continue;
		char where[PATH_MAX];
		size_t moved = cg_evacuate(parent, stale.dir, where);
		if (moved)
			fprintf(stderr, "rsswatch: %zu process%s left in %s by a recorder that was "
				"killed moved to %s\n", moved, moved == 1 ? "" : "es", stale.dir,
				where);
		cg_child_destroy(&stale, 500);	/* an exiting process may hold it a moment */
	}
	closedir(d);
}

/* Makes the cgroup of a launched command: limited for --memory-limit (failures are
 * printed: returns 0 or EXIT_CANCELED); else, unlimited, only where that changes no
 * other cgroup (cg_child_create's CG_CREATE_AS_IS), and without a word when it cannot
 * be done (returns 0 either way; -v says why). */
static int make_run_cgroup(uint64_t limit, int verbose, struct target_cgroup *tc)
{
	char name[64], sz[32];
	int quiet = limit == 0;
	int e = cg_find(0, &tc->parent);
	if (quiet && e < 0) {
		if (verbose)
			fprintf(stderr, "rsswatch: no cgroup of its own for the command: %s\n",
				e == -ENOENT ? "no memory cgroup controller" : errstr(e));
		return 0;
	}
	if (e == -ENOENT) {
		cli_error("--memory-limit: no memory cgroup controller is mounted on this host");
		return EXIT_CANCELED;
	}
	if (e < 0) {
		cli_error("--memory-limit: cannot find the memory cgroup of rsswatch: %s", errstr(e));
		return EXIT_CANCELED;
	}
	/* On v2, rsswatch may run in the leaf an earlier run made for the processes of its
	 * cgroup (cg_child_create): the run's cgroup goes beside that leaf, where memory
	 * is enabled already, not into a new leaf below it, and so on at every run. */
	char *slash = strrchr(tc->parent.dir, '/');
	if (tc->parent.version == 2 && slash && slash > tc->parent.dir &&
	    strcmp(slash + 1, "rsswatch-leaf") == 0)
		*slash = '\0';
	remove_stale_cgroups(&tc->parent);
	/* A name left by an rsswatch that was killed (and whose pid is ours now) is
	 * skipped, not reused: it may still hold processes. */
	for (int i = 0; i < 100; i++) {
		if (i)
			snprintf(name, sizeof(name), "rsswatch-%d-%d", (int)getpid(), i);
		else
			snprintf(name, sizeof(name), "rsswatch-%d", (int)getpid());
		if ((e = cg_child_create(&tc->parent, name, quiet ? CG_UNLIMITED : limit,
					 quiet ? CG_CREATE_AS_IS : 0, &tc->loc)) != -EEXIST)
			break;
	}
	if (e < 0 && quiet) {
		if (verbose)
			fprintf(stderr, "rsswatch: no cgroup of its own for the command: %s\n",
				e == -EOPNOTSUPP ? "memory is not enabled for the children of its "
						   "cgroup" : errstr(e));
		return 0;
	}
	if (e < 0) {
		int perm = e == -EACCES || e == -EPERM || e == -EROFS;
		cli_error("--memory-limit %s: cannot create a memory cgroup in %s: %s%s",
			  fmt_bytes(sz, sizeof(sz), limit), tc->parent.dir,
			  e == -EOPNOTSUPP ? "the memory controller cannot be enabled there" : errstr(e),
			  perm ? " (it needs root, or a cgroup delegated to this user)" : "");
		return EXIT_CANCELED;
	}
	tc->made = 1;
	if ((e = cg_reader_open(&tc->reader, tc->loc.version, tc->loc.dir, true)) < 0) {
		cli_error("--memory-limit: cannot read the memory cgroup %s: %s", tc->loc.dir, errstr(e));
		cg_child_destroy(&tc->loc, 0);
		tc->made = 0;
		return EXIT_CANCELED;
	}
	tc->open = 1;
	cg_hier_path(&tc->loc, tc->path, sizeof(tc->path));
	return 0;
}

/* The cgroup an attached process is in, for its OOM kill count; none is fine. */
static void watch_target_cgroup(pid_t pid, struct target_cgroup *tc)
{
	if (cg_find(pid, &tc->loc) < 0 ||
	    cg_reader_open(&tc->reader, tc->loc.version, tc->loc.dir, false) < 0)
		return;
	cg_hier_path(&tc->loc, tc->path, sizeof(tc->path));
	/* The root cgroup counts every OOM kill on the host: no evidence about this one. */
	if (strcmp(tc->path, "/") == 0) {
		cg_reader_close(&tc->reader);
		return;
	}
	tc->open = 1;
}

/* Closes the reader and removes a cgroup rsswatch made. Processes the command left
 * behind in it (daemons it started) are moved to the parent first: they keep running,
 * without the limit. */
static void release_cgroup(struct target_cgroup *tc)
{
	if (tc->open)
		cg_reader_close(&tc->reader);
	tc->open = 0;
	if (!tc->made)
		return;
	tc->made = 0;
	int e = cg_child_destroy(&tc->loc, 2000);
	if (e == -EBUSY) {
		char where[PATH_MAX];
		size_t n = cg_evacuate(&tc->parent, tc->loc.dir, where);
		if (n)
			fprintf(stderr, "rsswatch: %zu process%s left in %s moved to %s\n", n,
				n == 1 ? "" : "es", tc->path, where);
		e = cg_child_destroy(&tc->loc, 2000);
	}
	if (e < 0 && e != -ENOENT)
		cli_error("cannot remove the memory cgroup %s: %s", tc->loc.dir, errstr(e));
	/* v2: the parent as it was, unless other recorders (or others) use it now */
	cg_leaf_undo(&tc->parent);
}

/* -g PATH: a directory of a memory cgroup, or a path in the memory hierarchy. Opens
 * its reader. Returns 0, or EXIT_FAIL (printed). */
static int open_named_cgroup(const char *arg, struct target_cgroup *tc)
{
	char *buf;
	size_t len;
	struct cg_mount *m = xcalloc(1, sizeof(*m));
	int found = 0;
	if (read_file("/proc/self/mountinfo", &buf, &len) == 0) {
		if (cg_mountinfo_parse(buf, len, m) < 0)
			m->has_v1 = m->has_v2 = false;
		free(buf);
	}
	/* The v1 memory hierarchy first (a hybrid host's v2 mount has no memory), then
	 * v2; a directory given in full is taken as it is. */
	for (int pass = 0; pass < 3 && !found; pass++) {
		const char *mnt = pass == 0 ? "" : pass == 1 ? m->v1_mnt : m->v2_mnt;
		int version = pass == 1 ? 1 : 2;
		if (pass == 1 && !m->has_v1)
			continue;
		if (pass == 2 && !m->has_v2)
			continue;
		if (pass == 0) {
			if (m->has_v1 && strncmp(arg, m->v1_mnt, strlen(m->v1_mnt)) == 0)
				version = 1;
			else if (!(m->has_v2 && strncmp(arg, m->v2_mnt, strlen(m->v2_mnt)) == 0))
				continue;
		}
		const char *sep = arg[0] == '/' ? "" : "/";
		if (snprintf(tc->loc.dir, sizeof(tc->loc.dir), "%s%s%s%s", sysroot(), mnt, sep, arg) >=
		    (int)sizeof(tc->loc.dir))
			continue;
		size_t l = strlen(tc->loc.dir);
		while (l > 1 && tc->loc.dir[l - 1] == '/')
			tc->loc.dir[--l] = '\0';
		tc->loc.version = version;
		found = cg_reader_open(&tc->reader, version, tc->loc.dir, false) == 0;
	}
	free(m);
	if (!found) {
		cli_error("no memory cgroup '%s' (give its path in the memory hierarchy, e.g. "
			  "/system.slice/x.service, or its directory under /sys/fs/cgroup)", arg);
		return EXIT_FAIL;
	}
	tc->open = 1;
	cg_hier_path(&tc->loc, tc->path, sizeof(tc->path));
	return 0;
}

static int join_cgroup(void *ctx)
{
	return cg_attach(ctx, 0);
}

/* A run whose command could not be started leaves no row behind. */
static void discard_run(struct store *st, struct run *r)
{
	strlcpy_rsw(r->outcome, OUTCOME_EXITED, sizeof(r->outcome));
	if (store_run_finish(st, r) == 0)
		store_delete_run(st, r->id);
}

/* The highest sampled RSS of the run, to tell whether the peak came from VmHWM. */
static int max_rss_cb(void *ctx, const struct sample *s)
{
	uint64_t *m = ctx;
	if (s->rss > *m)
		*m = s->rss;
	return 0;
}

static int record_target_run(struct record_args a);

int cmd_record(int argc, char **argv)
{
	struct record_args a;
	memset(&a, 0, sizeof(a));
	/* One malloc arena for the sampling thread and the writer: a second one would add
	 * about 200 KiB of touched pages to a process meant to stay small (under 4 MiB),
	 * for no gain with two threads that rarely allocate at once. */
	mallopt(M_ARENA_MAX, 1);
	int ret = parse_args(argc, argv, &a);
	if (ret == 0) {
		ret = record_target_run(a);
		cli_gc_after_record(a.db, a.keep_given ? a.keep_ns : -1, a.max_db);
	}
	run_params_free(a.params, a.nparams);
	return ret;
}

/* The recording itself, once the arguments are read (a's params stay the caller's). */
static int record_target_run(struct record_args a)
{
	int ret;
	a.opts.live = stderr;
	const int fail = a.command ? EXIT_CANCELED : EXIT_FAIL;

	pid_t pid = 0;
	if (a.pid_arg) {
		int e = parse_pid(a.pid_arg, &pid);
		if (e < 0)
			return cli_usage("record", "invalid pid '%s': give a process id >= 1", a.pid_arg);
	}

	char err[512];
	/* An explicit --db names a file in a directory that exists: a typo must not
	 * create directories (the default place and $RSSWATCH_DB's are made as needed). */
	if (a.db && a.db[0] && cli_db_dir_missing(a.db))
		return fail;
	char *dbpath = cli_db_path(a.db);
	a.hooks.db_path = dbpath;
	if (a.hooks.on_warn || a.hooks.on_oom)
		a.opts.hooks = &a.hooks;	/* this copy's (a is passed by value) */
	/* The address is bound before anything starts: one that cannot be is refused
	 * like a bad argument. */
	if (a.listen) {
		int e = exporter_start(&a.opts.exporter, a.listen);
		if (e < 0) {
			cli_error("cannot listen on %s: %s", a.listen, errstr(e));
			free(dbpath);
			return EXIT_USAGE;
		}
	}
	struct store *st = NULL;
	if (store_open(dbpath, STORE_CREATE, &st, err, sizeof(err)) < 0) {
		cli_error("%s: %s", dbpath, err);
		exporter_free(a.opts.exporter);
		free(dbpath);
		return fail;
	}

	/* Signals arrive through a signalfd; a launched command gets the old mask back. */
	sigset_t set, old;
	recorder_signals(&set);
	sigprocmask(SIG_BLOCK, &set, &old);
	signal(SIGPIPE, SIG_IGN);
	int sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	struct record_target t;
	memset(&t, 0, sizeof(t));
	t.pidfd = -1;
	struct run run;
	memset(&run, 0, sizeof(run));
	struct target_cgroup *tc = xcalloc(1, sizeof(*tc));
	if (sigfd < 0) {
		cli_error("cannot set up signal handling: %s", errstr(errno));
		ret = fail;
		goto out;
	}

	if (a.command && !a.no_cgroup &&
	    (ret = make_run_cgroup(a.memory_limit, a.verbose, tc)) != 0)
		goto out;
	if (a.command) {
		/* launched once its run exists (below): no moment of it goes unrecorded */
	} else if (a.cgroup) {
		if ((ret = open_named_cgroup(a.cgroup, tc)) != 0)
			goto out;
		t.set_cgroup_dir = tc->loc.dir;
	} else {
		if (a.pattern && (ret = resolve_pattern(&a, sigfd, &pid)) != 0)
			goto out;
		if ((ret = attach_pid(pid, &t)) != 0)
			goto out;
		watch_target_cgroup(pid, tc);
	}
	if (tc->open) {
		t.cg = &tc->reader;
		t.cg_path = tc->path;
		t.cg_sample = tc->made || a.cgroup;
		t.cg_reset_peak = tc->made || a.cgroup;	/* where the reader can (v1: ours only) */
		if (tc->loc.version == 2)
			t.psi_cgroup_dir = tc->loc.dir;	/* its memory.pressure */
	}
	t.tree = a.tree;
	if (a.tree && tc->made)
		t.set_cgroup_dir = tc->loc.dir;	/* every process of the command's cgroup */

	fill_run(&run, &a, &t);
	if (a.cgroup) {
		free(run.target);
		run.target = xstrdup(tc->path);
		run.cgroup = xstrdup(tc->path);
	}
	if (tc->made) {
		free(run.cgroup);
		run.cgroup = xstrdup(tc->path);
		run.cgroup_limit = a.memory_limit;
	}
	if (store_run_begin(st, &run) < 0) {
		cli_error("%s: cannot start a run: %s", dbpath, store_errmsg(st));
		ret = fail;
		goto out;
	}
	if (store_put_params(st, run.id, a.params, a.nparams) < 0) {
		cli_error("%s: cannot store the run's parameters: %s", dbpath, store_errmsg(st));
		discard_run(st, &run);
		ret = fail;
		goto out;
	}
	if (a.command) {
		int setup_failed;
		pid_t child = launch_command(a.command, &old, tc->made ? join_cgroup : NULL,
					     &tc->loc, &setup_failed, &t.pre_exec_rss);
		if (child < 0) {
			if (setup_failed) {
				cli_error("cannot move '%s' into the memory cgroup %s: %s", a.command[0],
					  tc->loc.dir, errstr(child));
				ret = EXIT_CANCELED;
			} else if (child == -ENOENT && !a.command[1] && parse_pid(a.command[0], &(pid_t){ 0 }) == 0) {
				/* "record 1234": a process id given as a command */
				cli_error("cannot run '%s': command not found; to record process %s, "
					  "use 'rsswatch record -p %s'", a.command[0], a.command[0], a.command[0]);
				ret = EXIT_ENOENT;
			} else if (child == -ENOENT) {
				cli_error("cannot run '%s': command not found", a.command[0]);
				ret = EXIT_ENOENT;
			} else {
				cli_error("cannot run '%s': %s", a.command[0], errstr(child));
				ret = EXIT_CANNOT_INVOKE;
			}
			discard_run(st, &run);
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
		run.pid = child;
		run.started_at = real_ns();	/* the command's start, not the row's */
	}

	if (!a.opts.quiet) {
		char iv[32];
		struct proc_stat ps;
		char lim[32];
		if (a.cgroup)
			fprintf(stderr, "rsswatch: recording memory cgroup %s every %s as run %lld in %s\n",
				tc->path, fmt_duration(iv, sizeof(iv), a.opts.interval_ns),
				(long long)run.id, dbpath);
		else {
			/* the name is the target's to choose: no control characters reach us */
			struct buf name = { 0 };
			buf_put_printable(&name, proc_read_stat(t.pid, &ps) == 0 ? ps.comm : "?");
			fprintf(stderr, "rsswatch: recording pid %d (%s)%s every %s as run %lld in %s\n",
				(int)t.pid, buf_str(&name), a.tree ? " and its descendants" : "",
				fmt_duration(iv, sizeof(iv), a.opts.interval_ns), (long long)run.id, dbpath);
			buf_release(&name);
		}
		if (tc->made && a.memory_limit)
			fprintf(stderr, "rsswatch: in memory cgroup %s limited to %s\n", tc->path,
				fmt_bytes(lim, sizeof(lim), a.memory_limit));
	}

	open_gpu(&a);
	int store_err = 0;
	int e = record(&a.opts, &t, sigfd, st, &run, &store_err);
	if (e < 0)
		cli_error("recording of %s ended early: %s", a.cgroup ? "the cgroup" : "the target",
			  errstr(e));

	uint64_t max_rss = 0;
	store_each_sample(st, run.id, max_rss_cb, &max_rss);
	struct oom_kill *kills = NULL;
	size_t nkills = 0;
	if (store_oom_kills(st, run.id, &kills, &nkills) < 0)
		nkills = 0;	/* the summary then names no kill; the run is stored */
	struct buf sum = { 0 };
	summary_text(&sum, &run, max_rss, kills, nkills);
	fputs(buf_str(&sum), stderr);
	buf_release(&sum);
	free(kills);
	/* What one attached process left out: its descendants (an "untracked" event). */
	struct event *ev = NULL;
	size_t nev = 0;
	if (store_events(st, run.id, &ev, &nev) == 0)
		for (size_t i = 0; i < nev; i++)
			if (strcmp(ev[i].kind, "untracked") == 0)
				fprintf(stderr, "note      %s\n", ev[i].detail);
	store_free_events(ev, nev);
	/* The summary is what was recorded; say when the database holds less. */
	struct store_lost lost = store_lost(st);
	if (store_err)
		cli_error("run %lld was not saved completely (%s): the database holds it up to "
			  "the last write, and shows it as interrupted", (long long)run.id,
			  store_err == -ENOSPC ? "disk full" : errstr(store_err));
	else if (lost.samples_merged || lost.rows_dropped)
		fprintf(stderr, "rsswatch: while writing to the database failed or fell behind, "
			"%llu samples were merged into their neighbours (the higher kept) and %llu "
			"other rows dropped\n", (unsigned long long)lost.samples_merged,
			(unsigned long long)lost.rows_dropped);

	ret = e < 0 ? fail : EXIT_OK;
	if (a.command && e == 0) {
		if (strcmp(run.outcome, OUTCOME_EXITED) == 0)
			ret = run.exit_code >= 0 ? run.exit_code : EXIT_CANCELED;
		else if (strcmp(run.outcome, OUTCOME_SIGNALED) == 0 ||
			 strcmp(run.outcome, OUTCOME_OOM_KILLED) == 0)
			ret = 128 + run.signal;
	}
out:
	release_cgroup(tc);
	free(tc);
	run_release(&run);
	nvml_close(a.opts.nvml);
	if (t.pidfd >= 0)
		close(t.pidfd);
	if (sigfd >= 0)
		close(sigfd);
	exporter_free(a.opts.exporter);
	store_close(st);
	free(dbpath);
	return ret;
}
