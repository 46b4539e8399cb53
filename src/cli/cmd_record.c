/* rsswatch record: resolve the target, open the store, run the recording loop, print the
 * summary and choose the exit status (a launched command's own status). */
#include "base/buf.h"
#include "base/clock.h"
#include "base/fmt.h"
#include "base/parse.h"
#include "base/sysroot.h"
#include "base/util.h"
#include "cli/cli.h"
#include "cli/retention.h"
#include "record/cgctl.h"
#include "record/facts.h"
#include "record/follow.h"
#include "record/engine.h"
#include "record/gpus.h"
#include "record/oom.h"
#include "record/pattern.h"
#include "record/recorder.h"
#include "record/target.h"
#include "render/live.h"
#include "render/summary.h"
#include "store/store.h"

#include <errno.h>
#include <malloc.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <unistd.h>

enum pick { PICK_NONE, PICK_NEWEST, PICK_OLDEST };

struct record_args {
	struct record_opts opts;
	const char *pid_arg;	/* -p as given; pid: its value */
	pid_t pid;
	const char *pattern;
	enum pick pick;
	int wait;
	int follow;		/* --follow */
	struct proc_filter filter;	/* --user */
	int64_t follow_deadline;	/* --follow -d: CLOCK_MONOTONIC end of it all; 0: none */
	const char *label;
	const char *db;
	char **command;
	int no_gpu;
	int no_bpf;
	int stacks;		/* record --stacks: STACKS_* (0: none) */
	int64_t gpu_interval_ns;
	uint64_t memory_limit;	/* 0: none */
	const char *cgroup;	/* -g */
	int tree;
	int no_tree;
	int no_cgroup;
	int reset_peak;
	struct cli_params params;	/* --param, in the order given; owned */
	struct hooks hooks;	/* --on-warn, --on-oom (opts.hooks points here when set) */
	const char *listen;	/* --listen HOST:PORT, or NULL */
	struct cli_retention retention;	/* --keep, --max-db: applied at the end */
};

#define PSS_DEFAULT_NS (10 * NS_PER_S)

/* --param KEY=VALUE, each key once. */
static int take_param(const struct cli_state *st, const struct cli_opt *o, const char *arg,
		      void *to)
{
	return cli_param_take(st, o, arg, to, 1);
}

/* --warn SIZE or PCT%, into the record_opts at to. */
static int take_warn(const struct cli_state *st, const struct cli_opt *o, const char *arg,
		     void *to)
{
	static const char why[] = "give a size (48G) or a percentage (80%)";
	struct record_opts *ro = to;
	size_t l = strlen(arg);
	if (l > 1 && arg[l - 1] == '%') {
		char pct[32];
		double v = 0;
		if (l - 1 >= sizeof(pct))
			return cli_opt_invalid(st, o, arg, why);
		memcpy(pct, arg, l - 1);
		pct[l - 1] = '\0';
		int64_t ns;
		/* a percentage: a plain decimal, read as seconds and scaled back */
		if (parse_duration_ns(pct, &ns) < 0 || pct[strspn(pct, "0123456789.")] != '\0' ||
		    (v = (double)ns / NS_PER_S) <= 0 || v > 100)
			return cli_opt_invalid(st, o, arg, why);
		ro->warn_pct = v;
	} else if (parse_size(arg, &ro->warn_bytes) < 0 || !ro->warn_bytes) {
		return cli_opt_invalid(st, o, arg, why);
	}
	return 0;
}

/* record --stacks[=MODE]: 0, or an engine_stacks (record/engine.h) */
static const struct cli_choice stacks_modes[] = {
	{ STACKS_MODE_MMAP, ENGINE_STACKS_MMAP },
	{ STACKS_MODE_FAULTS, ENGINE_STACKS_FAULTS },
	{ STACKS_MODE_MALLOC, ENGINE_STACKS_MALLOC },
	{ NULL, 0 },
};

/* --pss=DUR, or --pss DUR where DUR starts with a digit (getopt takes an optional
 * argument only after '='; a command never starts with one); the row's bounds. */
static int take_pss(const struct cli_state *st, const struct cli_opt *o, const char *arg,
		    void *to)
{
	if (!arg && optind < st->argc && st->argv[optind][0] >= '0' && st->argv[optind][0] <= '9')
		arg = st->argv[optind++];
	return cli_opt_store(st, o, arg, to);
}

/* -p, -n, -g: given twice, one of the two would be dropped without a word. The pid is
 * checked here; the pattern when it is compiled. */
static int take_target(const struct cli_state *st, const struct cli_opt *o, const char *arg,
		       void *to)
{
	struct record_args *a = st->args;
	const char **slot = to;
	int c = o->letter;
	if (*slot)
		return cli_usage("record", c == 'p' ? "give -%c once (got %s and %s)" :
				 "give -%c once (got '%s' and '%s')", c, *slot, arg);
	/* an empty pattern matches every process; an empty path names no cgroup */
	if (!*arg)
		return cli_usage("record", "-%c needs a non-empty %s", c,
				 c == 'p' ? "pid" : c == 'n' ? "pattern" : "cgroup");
	if (c == 'p' && parse_pid(arg, &a->pid) < 0)
		return cli_opt_invalid(st, o, arg, "give a process id >= 1");
	*slot = arg;
	return 0;
}

/* --user USER, into the proc_filter at to. */
static int take_user(const struct cli_state *st, const struct cli_opt *o, const char *arg,
		     void *to)
{
	struct proc_filter *f = to;
	(void)o;
	if (user_uid(arg, &f->uid) < 0)
		return cli_usage(st->cmd->verb, "no user '%s'", arg);
	f->have_uid = 1;
	return 0;
}

/* --listen HOST:PORT: its form checked now, bound once the store is open. */
static int take_listen(const struct cli_state *st, const struct cli_opt *o, const char *arg,
		       void *to)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	if (prom_parse_listen(arg, &ss, &sl) < 0)
		return cli_opt_invalid(st, o, arg, "give HOST:PORT, e.g. 127.0.0.1:9464 or [::1]:9464");
	memcpy(to, &arg, sizeof(arg));
	return 0;
}

#define AT(field, type) CLI_AT(struct record_args, field, type)
static const struct cli_opt record_opts_table[] = {
	{ "pid", 'p', CLI_CALLBACK, AT(pid_arg, const char *), .fn = take_target, .arg = "PID",
	  .help = "attach to a running process" },
	{ "name", 'n', CLI_CALLBACK, AT(pattern, const char *), .fn = take_target,
	  .arg = "PATTERN", .help = "attach to the process whose name or command line matches "
	  "the extended regular expression PATTERN" },
	{ "newest", 0, CLI_FLAG, AT(pick, enum pick), .set = PICK_NEWEST,
	  .help = "with -n: pick the newest of several matches" },
	{ "oldest", 0, CLI_FLAG, AT(pick, enum pick), .set = PICK_OLDEST,
	  .help = "with -n: pick the oldest of several matches" },
	{ "wait", 0, CLI_FLAG, AT(wait, int), .help = "with -n: wait until a match appears" },
	{ "user", 0, CLI_CALLBACK, AT(filter, struct proc_filter), .fn = take_user,
	  .arg = "USER", .help = "with -n: only processes of that owner (a uid or a name; any "
	  "user can start a process of any name)" },
	{ "follow", 0, CLI_FLAG, AT(follow, int),
	  .help = "with -n or -g: keep recording across restarts. When the target ends (exit, "
		  "signal, OOM kill), wait for the next process that matches PATTERN (or for "
		  "the cgroup to hold a process again) and record it as a new run of the same "
		  "series, until Ctrl-C, SIGTERM or the end of -d, which is the total time over "
		  "all instances. -p PID -n PATTERN --follow: PID first, then PATTERN. Each "
		  "restart is a 'restart' event on the new run with the gap (from the end of the "
		  "last instance to the new run's first sample); 'rsswatch ls --series' lists "
		  "series, RUN 'sID' is the last run of series ID, 'sID:N' its last N runs" },
	{ "cgroup", 'g', CLI_CALLBACK, AT(cgroup, const char *), .fn = take_target,
	  .arg = "CGROUP", .help = "record every process of a memory cgroup (a path in the "
	  "hierarchy, /a/b, or its directory under /sys/fs/cgroup), and the cgroup's own "
	  "usage/limit/peak; ends when the cgroup is empty or removed" },
	{ "tree", 't', CLI_FLAG, AT(tree, int),
	  .help = "the target and all its descendants: totals per sample, each process's "
		  "figures stored beside them (summed RSS counts pages shared between processes "
		  "more than once); the default for a launched COMMAND" },
	{ "no-tree", 0, CLI_FLAG, AT(no_tree, int),
	  .help = "a launched COMMAND alone, without its descendants" },
	{ "no-cgroup", 0, CLI_FLAG, AT(no_cgroup, int),
	  .help = "do not put a launched COMMAND in a cgroup of its own (by default, where it "
		  "can be done without changing any other cgroup, as root on cgroup v1 or below "
		  "a delegated v2 cgroup, it is, for its exact charged peak and OOM kills)" },
	{ "reset-peak", 0, CLI_FLAG, AT(reset_peak, int),
	  .help = "reset an attached target's VmHWM at the start (writes 5 to "
		  "/proc/PID/clear_refs): its peak is then exact from the start; the target's "
		  "own getrusage(), its parent's wait4() (time -v) and its exit record see the "
		  "reset too" },
	{ "memory-limit", 0, CLI_SIZE, AT(memory_limit, uint64_t), .min = 4096, .eg = "64M, 2G",
	  .help = "run COMMAND in a new memory cgroup limited to SIZE (e.g. 64M, 2G; needs "
		  "root): an OOM kill there is recorded as such, and the cgroup's "
		  "usage/limit/peak is sampled" },
	{ "warn", 0, CLI_CALLBACK, AT(opts, struct record_opts), .fn = take_warn,
	  .arg = "SIZE|PCT", .help = "a 'warn' event and a highlighted line when memory reaches "
	  "SIZE (e.g. 48G), or PCT% of the cgroup limit (with --memory-limit or -g: the "
	  "cgroup's usage is compared) else of MemTotal; 'warn_clear' when it falls back" },
	{ "warn-eta", 0, CLI_DURATION, AT(opts.warn_eta_ns, int64_t), .min = 1, .eg = "10m",
	  .help = "a 'warn_eta' event and a highlighted line, once, when the projected time "
		  "until memory reaches the nearest limit (the cgroup limit, or MemAvailable) "
		  "falls under DUR (e.g. 10m). Without it too, the live line shows the "
		  "projection while memory rises ('full in ~4m10s') and the summary the smallest "
		  "one seen (docs/guide/models.md)" },
	{ "on-warn", 0, CLI_STRING, AT(hooks.on_warn, const char *), .flags = CLI_NONEMPTY,
	  .arg = "CMD", .help = "run CMD (through /bin/sh -c) at each 'warn' and the "
	  "'warn_eta' event. The facts are in the environment only: RSSWATCH_EVENT (warn, "
	  "warn_eta, oom_kill), RSSWATCH_PID, RSSWATCH_RUN, RSSWATCH_RSS_BYTES, "
	  "RSSWATCH_LIMIT_BYTES (where known), RSSWATCH_COMM, RSSWATCH_DB. Sampling never "
	  "waits for it; its exit status is stored as a 'hook' event" },
	{ "on-oom", 0, CLI_STRING, AT(hooks.on_oom, const char *), .flags = CLI_NONEMPTY,
	  .arg = "CMD", .help = "run CMD at each OOM kill of the target or a member, as "
	  "--on-warn does" },
	{ "on-timeout", 0, CLI_DURATION, AT(hooks.timeout_ns, int64_t), .min = 1, .eg = "30s",
	  .help = "end a CMD still running after DUR (default 30s): SIGTERM to its process "
		  "group, SIGKILL 2s later" },
	{ "listen", 0, CLI_CALLBACK, AT(listen, const char *), .fn = take_listen,
	  .arg = "HOST:PORT", .help = "serve the latest sample at http://HOST:PORT/metrics in "
	  "the Prometheus text format (OpenMetrics when asked for): only that address is bound "
	  "(e.g. 127.0.0.1:9464, [::1]:9464); docs/guide/metrics.md lists the metrics" },
	{ "pss", 0, CLI_DURATION, AT(opts.pss_interval_ns, int64_t), .flags = CLI_OPTIONAL,
	  .set = PSS_DEFAULT_NS, .min = 10 * NS_PER_MS, .max = 24 * 3600 * NS_PER_S,
	  .eg = "10s, 1m", .fn = take_pss,
	  .help = "also read PSS, USS (private pages) and SwapPss from /proc/PID/smaps_rollup, "
		  "at most every DUR (default 10s; --pss DUR works too when DUR starts with a "
		  "digit). Each read costs about 9 ms per GiB resident and stalls the target's "
		  "mmap calls while it runs: never on by default. With -t or -g, the members' "
		  "PSS is summed: shared pages count once in all, unlike summed RSS" },
	{ "interval", 'i', CLI_DURATION, AT(opts.interval_ns, int64_t), .min = NS_PER_MS,
	  .max = 3600 * NS_PER_S, .eg = "100ms, 1s, 5m",
	  .help = "time between samples, 1ms..1h (default 1s)" },
	{ "duration", 'd', CLI_DURATION, AT(opts.duration_ns, int64_t), .min = 1,
	  .eg = "30s, 10m, 2h", .help = "stop recording after DUR" },
	{ "label", 'l', CLI_STRING, AT(label, const char *), .arg = "TEXT",
	  .help = "a label stored with the run" },
	{ "param", 0, CLI_CALLBACK, AT(params, struct cli_params), .fn = take_param,
	  .arg = "KEY=VALUE", .help = "a parameter stored with the run (repeatable), e.g. "
	  "--param pw=12; KEY is [A-Za-z0-9_.-], up to 63 bytes; a numeric VALUE can be fitted "
	  "against (rsswatch model)" },
	{ "quiet", 'q', CLI_FLAG, AT(opts.quiet, int), .help = "no live lines" },
	{ "verbose", 'v', CLI_FLAG, AT(opts.verbose, int),
	  .help = "say which optional sources (GPU, ...) are not available" },
	{ "no-bpf", 0, CLI_FLAG, AT(no_bpf, int),
	  .help = "do not load the eBPF peak engine (as root it gives each peak its exact "
	  "height and the kernel's time; docs/guide/peaks.md)" },
	{ "stacks", 0, CLI_CHOICE, AT(stacks, int), .flags = CLI_OPTIONAL, .set = ENGINE_STACKS_MMAP,
	  .choices = stacks_modes, .arg = "MODE",
	  .help = "also record what holds the memory: live bytes by call stack, at the peak "
		  "and at the end (eBPF, as root). MODE mmap (the default): the blocks of "
		  "anonymous memory mapped (mmap, brk, mremap), each by the stack that mapped "
		  "it; faults: each rise of a process's highest resident bytes (every 1/256 "
		  "of it, 1 MiB at least) by the stack of the fault that made it, memory from "
		  "malloc's arenas too; malloc: every block the allocator hands out (malloc, "
		  "calloc, realloc, ...) by its caller's stack, exact for small blocks but "
		  "costly (a trap per call), for short runs; docs/STACKS.md" },
	{ "no-gpu", 0, CLI_FLAG, AT(no_gpu, int),
	  .help = "do not record GPU memory even where NVML is present" },
	{ "gpu-interval", 0, CLI_DURATION, AT(gpu_interval_ns, int64_t), .min = NS_PER_MS,
	  .max = 3600 * NS_PER_S, .help = "read GPU memory from NVML this often (default 20ms, "
	  "or 1s where the eBPF probes count the CUDA driver's allocations); a sample stores "
	  "the highest figures since the one before" },
	{ "every", 0, CLI_INT, AT(opts.every, unsigned), .min = 1, .max = 1000000000,
	  .help = "a live line every N samples (default: about one a second)" },
	CLI_DB_ROW(struct record_args),
	{ .kind = CLI_INCLUDE, .sub = cli_retention_opts, AT(retention, struct cli_retention) },
	CLI_OPTS_END,
};

const struct cli_cmd record_cli = {
	.verb = "record",
	.usage = "usage: rsswatch record [OPTIONS] (-p PID | -n PATTERN | -g CGROUP | [--] COMMAND [ARG...])\n",
	.about = "Records the memory of a process over time into the run database. With\n"
		 "COMMAND [ARG...], launches COMMAND and records it with everything it starts;\n"
		 "rsswatch then exits with its status.\n",
	.opts = record_opts_table,
	.more = "Ctrl-C or SIGTERM ends the recording cleanly; with a launched command they are\n"
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
		"cannot run, 127 when it is not found.\n"
		"--keep and --max-db are applied when the recording ends, as 'rsswatch gc'\n"
		"applies them; without them nothing is thinned.\n",
	.flags = CLI_IN_ORDER,
};

/* The options that go together, and the target: exactly one. */
static int check_args(struct record_args *a)
{
	int targets = !!a->pid_arg + !!a->pattern + !!a->command + !!a->cgroup;
	if (a->filter.have_uid && !a->pattern)
		return cli_usage("record", "--user goes with -n PATTERN");
	if (a->follow && !a->pattern && !a->cgroup)
		return cli_usage("record", "--follow goes with -n PATTERN (also -p PID -n PATTERN) or -g CGROUP");
	if (a->follow && a->pid_arg && a->pattern)
		targets--;	/* PID first, then the pattern's next instances */
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
	if (a->stacks && a->no_bpf)
		return cli_usage("record", "--stacks needs the eBPF engine: drop --no-bpf");
	if (a->command && !a->no_tree)
		a->tree = 1;	/* a launched command is measured with everything it starts */
	a->opts.reset_peak = a->reset_peak;
	return 0;
}

static int parse_args(int argc, char **argv, struct record_args *a)
{
	a->opts.interval_ns = NS_PER_S;
	a->retention.keep_ns = -1;	/* no retention unless asked */
	hooks_init(&a->hooks);
	/* test knobs: follow a tree by walking only, and without exit records */
	a->opts.no_proccn = cli_env_flag("RSSWATCH_NO_PROCCN");
	a->opts.no_exit_records = cli_env_flag("RSSWATCH_NO_TASKSTATS");
	a->opts.no_kmsg = cli_env_flag("RSSWATCH_NO_KMSG");
	int ret = cli_parse(&record_cli, argc, argv, a);
	if (ret)
		return ret;
	if (optind < argc)
		a->command = argv + optind;
	return check_args(a);
}

/* Attach: checks that pid exists and its memory can be read. */
static int attach_pid(pid_t pid, struct record_target *t)
{
	int fd = target_pidfd_open(pid);
	if (fd < 0) {
		cli_error("cannot attach to pid %d: %s", (int)pid,
			  fd == -ESRCH ? "no such process" : errstr(fd));
		return EXIT_FAIL;
	}
	int e = facts_memory_readable(pid);
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

/* argv joined with spaces, quoting arguments that need it. */
static char *join_command(char **argv)
{
	struct buf b = { 0 };
	for (char **p = argv; *p; p++) {
		if (p != argv)
			buf_putc(&b, ' ');
		buf_put_shell_word(&b, *p);
	}
	return b.p ? b.p : xstrdup("");
}

static void fill_run(struct run *r, const struct record_args *a, const struct record_target *t)
{
	memset(r, 0, sizeof(*r));
	facts_host(r);
	r->label = xstrdup(a->label ? a->label : "");
	if (a->command) {
		r->target = join_command(a->command);
		r->mode = xstrdup("command");
	} else if (a->cgroup) {
		r->target = xstrdup("");	/* set by the caller: the cgroup's path */
		r->mode = xstrdup("cgroup");
	} else {
		r->target = facts_cmdline(t->pid);
		r->mode = xstrdup(a->pattern ? "name" : "pid");
	}
	r->pid = t->pid;
	r->tree = a->tree && !a->cgroup;
	r->pss_interval_ns = a->opts.pss_interval_ns;
	if (a->stacks)
		r->stacks = xstrdup(a->stacks == ENGINE_STACKS_FAULTS ? STACKS_MODE_FAULTS :
				    a->stacks == ENGINE_STACKS_MALLOC ? STACKS_MODE_MALLOC :
				    STACKS_MODE_MMAP);
	r->started_at = real_ns();
	r->interval_ns = a->opts.interval_ns;
	run_set_unknown(r);
}

/* GPU figures where an NVIDIA driver is present (record/gpus.h), with the engine's
 * probes on the driver where they attach (to pid's, if it is running); without a
 * driver nothing changes (one line with --verbose). */
static void open_gpu(struct record_args *a, pid_t pid)
{
	char why[256], how[PATH_MAX + 128];
	if (a->no_gpu)
		return;
	int n = gpus_open(&a->opts, a->gpu_interval_ns, why, sizeof(why));
	if (n < 0) {
		if (a->opts.verbose)
			fprintf(stderr, "rsswatch: no GPU figures: %s\n", why);
		return;
	}
	int probed = gpus_probe(&a->opts, pid, a->gpu_interval_ns, how, sizeof(how));
	if (!a->opts.verbose)
		return;
	fprintf(stderr, "rsswatch: GPU figures from %d device(s), every %lldms\n", n,
		(long long)(a->opts.gpu_interval_ns / NS_PER_MS));
	if (probed > 0)
		fprintf(stderr, "rsswatch: GPU allocations from the driver's own calls (eBPF "
			"uprobes on %s)\n", how);
	else
		fprintf(stderr, "rsswatch: no GPU probes: %s\n", how);
}

/* The cgroup of a launched command (record/cgctl.h): limited for --memory-limit
 * (failures are printed: returns 0 or EXIT_CANCELED); else, unlimited, only where that
 * changes no other cgroup, and without a word when it cannot be done (returns 0
 * either way; -v says why). */
static int make_run_cgroup(uint64_t limit, int verbose, struct run_cgroup *rc)
{
	enum run_cgroup_step step;
	char sz[32];
	int e = run_cgroup_make(rc, limit, &step);
	if (e == 0)
		return 0;
	if (step == RUN_CGROUP_READ) {
		/* blamed on --memory-limit only when it was given; running out of
		 * descriptors is named as such, whichever step met it */
		struct rlimit nofile;
		if ((e == -EMFILE || e == -ENFILE) && getrlimit(RLIMIT_NOFILE, &nofile) == 0)
			cli_error("cannot read the memory cgroup %s: too few file descriptors (%s, "
				  "the limit is %llu): raise it (ulimit -n)", rc->loc.dir, errstr(e),
				  (unsigned long long)nofile.rlim_cur);
		else
			cli_error("%s: cannot read the memory cgroup %s: %s", limit ? "--memory-limit"
				  : "the command's cgroup", rc->loc.dir, errstr(e));
		return EXIT_CANCELED;
	}
	if (!limit) {
		if (verbose)
			fprintf(stderr, "rsswatch: no cgroup of its own for the command: %s\n",
				step == RUN_CGROUP_FIND && e == -ENOENT ? "no memory cgroup controller" :
				step == RUN_CGROUP_CREATE && e == -EOPNOTSUPP ?
				"memory is not enabled for the children of its cgroup" : errstr(e));
		return 0;
	}
	if (step == RUN_CGROUP_FIND && e == -ENOENT)
		cli_error("--memory-limit: no memory cgroup controller is mounted on this host");
	else if (step == RUN_CGROUP_FIND)
		cli_error("--memory-limit: cannot find the memory cgroup of rsswatch: %s", errstr(e));
	else
		cli_error("--memory-limit %s: cannot create a memory cgroup in %s: %s%s",
			  fmt_bytes(sz, sizeof(sz), limit), rc->parent.dir,
			  e == -EOPNOTSUPP ? "the memory controller cannot be enabled there" : errstr(e),
			  e == -EACCES || e == -EPERM || e == -EROFS ?
			  " (it needs root, or a cgroup delegated to this user)" : "");
	return EXIT_CANCELED;
}

/* -g PATH: returns 0, or EXIT_FAIL (printed). */
static int open_named_cgroup(const char *arg, struct run_cgroup *rc)
{
	int e = run_cgroup_open_named(rc, arg);
	if (e == 0)
		return 0;
	if (e == -EINVAL) {
		cli_error("-g %s: refusing a cgroup path with a '..' component: give it without",
			  arg);
		return EXIT_FAIL;
	}
	if (e == -EXDEV) {
		cli_error("-g %s: %s is not on a cgroup file system", arg, rc->loc.dir);
		return EXIT_FAIL;
	}
	cli_error("no memory cgroup '%s' (give its path in the memory hierarchy, e.g. "
		  "/system.slice/x.service, or its directory under /sys/fs/cgroup)", arg);
	return EXIT_FAIL;
}

static void release_cgroup(struct run_cgroup *rc)
{
	int e = run_cgroup_release(rc);
	if (e < 0)
		cli_error("cannot remove the memory cgroup %s: %s", rc->loc.dir, errstr(e));
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
	if (s->mem.rss > *m)
		*m = s->mem.rss;
	return 0;
}

/* The recorder's lines (record/recorder.h), on stderr. */
struct live_out {
	FILE *f;
	struct buf line;
	struct sample prev;	/* the last live line's sample, for its rates */
};

static void show_live(void *ctx, const struct recorder_live *l)
{
	struct live_out *o = ctx;
	buf_reset(&o->line);
	live_line(&o->line, l->t, l->s);
	live_context(&o->line, &o->prev, l->s);
	o->prev = *l->s;
	live_eta(&o->line, l->eta_s, l->eta_limit);
	for (size_t i = 0; i < l->ncounters; i++) {
		buf_puts(&o->line, i ? " " : " | ");
		live_counter(&o->line, l->counters[i].name, l->counters[i].value);
	}
	buf_putc(&o->line, '\n');
	fputs(buf_str(&o->line), o->f);
}

/* An alert is red on a terminal. */
static void show_note(void *ctx, enum recorder_note kind, const char *text)
{
	struct live_out *o = ctx;
	int hi = kind == RECORDER_ALERT && isatty(fileno(o->f));
	fprintf(o->f, "%s%s%s\n", hi ? "\033[1;31m" : "", text, hi ? "\033[0m" : "");
}

/* One recording, from the arguments to the exit status; each step below takes it one
 * further and returns 0 or the exit status to end with (printed). */
struct session {
	struct record_args *a;
	int fail;		/* the status of a failure of rsswatch itself */
	pid_t pid;		/* -p, or the match of -n */
	char *dbpath;
	struct store *st;
	int sigfd;
	sigset_t old;		/* the signal mask before ours, for a launched command */
	struct record_target t;
	struct run run;
	struct run_cgroup *tc;
	struct live_out out;
	struct recorder_sink sink;
	/* --follow: the wait between instances, the series (the id of its first run; 0
	 * before it) and where the last instance ended (realtime; 0: no instance yet) */
	struct follow fw;
	int fw_open;
	int fw_said;		/* the line about polling instead of events, once */
	int64_t series;
	int64_t prev_end;
	int64_t prev_run;
	char cg_dir[PATH_MAX];	/* -g --follow: the cgroup's directory */
	uid_t prev_uid;		/* --follow: the owner of the last instance */
	int have_prev_uid;
	int gpu_open;
	struct taskstats_listener ts;	/* exit records, from before a launch (record_opts) */
	struct oom_watch oom;		/* OOM evidence, from before a launch (record_opts) */
};

/* The eBPF peak engine for the session's runs (record/engine.h), where the kernel and
 * our privileges allow it; else nothing changes (one line with --verbose). With
 * --stacks, the stacks program too: asked for, it must run (0, or the exit status). */
static int open_engine(struct record_args *a, int fail)
{
	char why[256];
	if (a->no_bpf || a->opts.kpeak)
		return 0;
	if (*sysroot()) {	/* a test's tree stands for /proc: no kernel to ask */
		if (!a->stacks)
			return 0;
		cli_error("cannot record stacks with a test root (RSSWATCH_SYSROOT)");
		return fail;
	}
	int e = engine_open(&a->opts, why, sizeof(why));
	if (e == 0 && a->stacks)
		e = engine_open_stacks(&a->opts, (enum engine_stacks)a->stacks, why, sizeof(why));
	if (e < 0 && a->stacks) {
		cli_error("cannot record stacks: %s", why);
		return fail;
	}
	if (a->stacks == ENGINE_STACKS_MALLOC)
		fprintf(stderr, "rsswatch: --stacks=malloc traps into the kernel at every call of "
			"malloc and free: a program that allocates often runs 100 to 1,000 times "
			"slower; use it for short runs that reproduce a problem\n");
	if (!a->opts.verbose)
		return 0;
	if (e < 0)
		fprintf(stderr, "rsswatch: no exact peaks from the kernel: the eBPF engine cannot "
			"run: %s\n", why);
	else
		fprintf(stderr, "rsswatch: exact peaks from the kernel's page counts (eBPF)%s\n",
			!a->stacks ? "" : a->stacks == ENGINE_STACKS_FAULTS ?
			"; the stacks of the faults that raise the peak" :
			a->stacks == ENGINE_STACKS_MALLOC ?
			"; live bytes by call stack (malloc and its kin, mmap, brk, mremap)" :
			"; live bytes by call stack (mmap, brk, mremap)");
	if (e == 0 && !engine_sees_victims(&a->opts))
		fprintf(stderr, "rsswatch: OOM kills from the kernel log only: the engine cannot "
			"hear oom:mark_victim (its arguments are read as Linux 6.8 and later "
			"pass them)\n");
	return 0;
}

/* The pid, the database and the --listen address: refused before anything starts.
 * Then the engine. */
static int open_session(struct session *s)
{
	struct record_args *a = s->a;
	char err[512];
	s->pid = a->pid;
	/* An explicit --db names a file in a directory that exists: a typo must not
	 * create directories (the default place and $RSSWATCH_DB's are made as needed). */
	if (cli_db_empty(a->db))
		return EXIT_USAGE;
	if (a->db && cli_db_dir_missing(a->db))
		return s->fail;
	s->dbpath = cli_db_path(a->db);
	a->hooks.db_path = s->dbpath;
	/* a launched command's own "rsswatch mark" finds this recording's database */
	if (a->command && setenv("RSSWATCH_DB", s->dbpath, 1) < 0)
		return s->fail;
	if (a->hooks.on_warn || a->hooks.on_oom)
		a->opts.hooks = &a->hooks;
	/* The store first: a new database's schema is made in a child process, forked
	 * while this one has no other thread (the exporter's would be one). */
	if (store_open(s->dbpath, STORE_CREATE | STORE_SMALL, &s->st, err, sizeof(err)) < 0) {
		cli_error("%s: %s", s->dbpath, err);
		return s->fail;
	}
	/* The address is bound before the target is looked for or started: one that
	 * cannot be is refused like a bad argument. */
	if (a->listen) {
		int e = metrics_server_start(&a->opts.metrics, a->listen);
		if (e < 0) {
			cli_error("cannot listen on %s: %s", a->listen, errstr(e));
			return EXIT_USAGE;
		}
	}
	store_set_alive(s->st, recorder_alive);
	if (a->follow) {
		char why[128];
		if (follow_init(&s->fw, a->pattern, NULL, a->pick == PICK_OLDEST, why, sizeof(why)) < 0)
			return cli_usage("record", "invalid pattern '%s': %s", a->pattern, why);
		s->fw_open = 1;
		s->fw.filter = a->filter;
		if (a->opts.no_proccn) {	/* the test knob: the fallback, on purpose */
			s->fw.polling = 1;
			s->fw.poll_err = -EPERM;
		}
	}
	/* Signals arrive through a signalfd; a launched command gets the old mask back. */
	sigset_t set;
	recorder_signals(&set);
	sigprocmask(SIG_BLOCK, &set, &s->old);
	signal(SIGPIPE, SIG_IGN);
	s->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (s->sigfd < 0) {
		cli_error("cannot set up signal handling: %s", errstr(errno));
		return s->fail;
	}
	/* Before the target is looked for or started: it takes tens of milliseconds, which
	 * a short-lived target may not outlive (and a followed one's next instance). */
	return open_engine(a, s->fail);
}

/* --wait looks for a match this often: a process that starts is found within a
 * quarter of a second, at the cost of one scan of /proc each time. */
#define MATCH_RETRY_MS 250

static int wait_signal(int sigfd, int ms)
{
	struct pollfd p = { sigfd, POLLIN, 0 };
	return poll(&p, 1, ms) > 0;
}

/* follow_next()'s "stop here": a signal, or the end of -d, while waiting. Never an
 * exit status. */
#define FOLLOW_STOPPED (-1)
/* run_recording()'s "that instance was gone before its first sample; no run kept". */
#define FOLLOW_GONE (-2)

/* Waits for the next instance of a followed target (record/follow.h): 0 (*pid; 0 for
 * a cgroup), FOLLOW_STOPPED, or EXIT_FAIL (printed). */
static int follow_next(struct session *s, pid_t *pid)
{
	const struct record_args *a = s->a;
	if (s->fw.polling && !s->fw_said && !a->opts.quiet) {
		fprintf(stderr, "rsswatch: no process events (%s): looking for the next instance "
			"every %dms\n", s->fw.poll_err == -EPERM && a->opts.no_proccn ?
			"RSSWATCH_NO_PROCCN is set" : errstr(s->fw.poll_err), FOLLOW_POLL_MS);
		s->fw_said = 1;
	}
	if (!a->opts.quiet) {
		if (a->cgroup)
			fprintf(stderr, "rsswatch: waiting for a process in memory cgroup %s\n", s->cg_dir);
		else
			fprintf(stderr, "rsswatch: waiting for a process matching '%s'\n", a->pattern);
	}
	int r = follow_wait(&s->fw, s->sigfd, a->follow_deadline, pid);
	if (r < 0) {
		cli_error("cannot wait for the next instance: %s", errstr(r));
		return EXIT_FAIL;
	}
	if (r == 0) {
		if (!a->opts.quiet)
			fprintf(stderr, "rsswatch: stopped waiting%s\n", s->series ?
				"; the series is complete" : "");
		return FOLLOW_STOPPED;
	}
	return 0;
}

static int resolve_pattern(struct session *s, pid_t *pid)
{
	const struct record_args *a = s->a;
	int sigfd = s->sigfd;
	regex_t re;
	char msg[128];
	if (pattern_compile(&re, a->pattern, msg, sizeof(msg)) < 0)
		return cli_usage("record", "invalid pattern '%s': %s", a->pattern, msg);
	struct proc_match *m = NULL;
	size_t n = 0;
	int said = 0, ret = EXIT_OK;
	for (;;) {
		free(m);
		m = NULL;
		int e = target_find_matches(&re, &m, &n);
		if (e < 0) {
			cli_error("cannot list processes: %s", errstr(e));
			ret = EXIT_FAIL;
			goto out;
		}
		size_t kept = 0;
		for (size_t i = 0; i < n; i++)
			if (target_filter_ok(&a->filter, m[i].pid))
				m[kept++] = m[i];
		n = kept;
		if (n == 0 && a->follow) {	/* the proc connector's events, not a retry */
			ret = follow_next(s, pid);
			goto out;
		}
		if (n > 0 || !a->wait)
			break;
		if (!said && !a->opts.quiet)
			fprintf(stderr, "rsswatch: waiting for a process matching '%s'\n", a->pattern);
		said = 1;
		if (wait_signal(sigfd, MATCH_RETRY_MS)) {
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

/* The target and its cgroup: one made for a command (launched later, in start_run),
 * one named with -g, or the process attached and the cgroup it is in. */
static int find_target(struct session *s)
{
	struct record_args *a = s->a;
	struct record_target *t = &s->t;
	struct run_cgroup *tc = s->tc;
	int ret;
	if (a->command && !a->no_cgroup &&
	    (ret = make_run_cgroup(a->memory_limit, a->opts.verbose, tc)) != 0)
		return ret;
	if (a->cgroup) {
		if ((ret = open_named_cgroup(a->cgroup, tc)) != 0)
			return ret;
		if (a->follow && !s->fw.cgroup_dir) {
			/* --follow: an empty cgroup's first instance is still to come; it
			 * is opened again then (a service manager may make it anew) */
			pid_t none;
			strlcpy_rsw(s->cg_dir, tc->loc.dir, sizeof(s->cg_dir));
			s->fw.cgroup_dir = s->cg_dir;
			if ((ret = follow_next(s, &none)) != 0)
				return ret;
			release_cgroup(tc);
			run_cgroup_init(tc, &s->sink);
			if ((ret = open_named_cgroup(a->cgroup, tc)) != 0)
				return ret;
		}
		t->set_cgroup_dir = tc->loc.dir;
	} else if (!a->command) {
		/* -p PID -n PATTERN --follow: PID first; later instances come matched */
		if (a->pattern && !s->pid && (ret = resolve_pattern(s, &s->pid)) != 0)
			return ret;
		if ((ret = attach_pid(s->pid, t)) != 0)
			return ret;
		run_cgroup_watch(tc, s->pid);
	}
	if (tc->open) {
		t->cg = &tc->reader;
		t->cg_path = tc->path;
		t->cg_sample = tc->made || a->cgroup;
		t->cg_reset_peak = tc->made || a->cgroup;	/* where the reader can (v1: ours only) */
		if (tc->loc.version == 2)
			t->psi_cgroup_dir = tc->loc.dir;	/* its memory.pressure */
	}
	t->tree = a->tree;
	if (a->tree && tc->made)
		t->set_cgroup_dir = tc->loc.dir;	/* every process of the command's cgroup */
	return 0;
}

/* Why a command could not be launched, and the status that says so. */
/* record --stacks=malloc: the allocator's probes on the launched child before its exec
 * (target_launch's hold), so that the command's first allocation is seen. */
static void probe_child(void *ctx, pid_t child)
{
	char why[160];
	if (engine_probe(ctx, child, why, sizeof(why)) < 0)
		fprintf(stderr, "rsswatch: stacks: cannot probe the allocator of pid %d: %s\n",
			(int)child, why);
}

static int launch_failed(const struct session *s, pid_t child, int setup_failed)
{
	char **cmd = s->a->command;
	if (setup_failed) {
		cli_error("cannot move '%s' into the memory cgroup %s: %s", cmd[0], s->tc->loc.dir,
			  errstr(child));
		return EXIT_CANCELED;
	}
	if (child == -ENOENT && !cmd[1] && parse_pid(cmd[0], &(pid_t){ 0 }) == 0) {
		/* "record 1234": a process id given as a command */
		cli_error("cannot run '%s': command not found; to record process %s, use "
			  "'rsswatch record -p %s'", cmd[0], cmd[0], cmd[0]);
		return EXIT_ENOENT;
	}
	if (child == -ENOENT) {
		cli_error("cannot run '%s': command not found", cmd[0]);
		return EXIT_ENOENT;
	}
	cli_error("cannot run '%s': %s", cmd[0], errstr(child));
	return EXIT_CANNOT_INVOKE;
}

/* The run's row, then the command (a launched command starts once its run exists: no
 * moment of it goes unrecorded). */
static int start_run(struct session *s)
{
	struct record_args *a = s->a;
	struct run *run = &s->run;
	struct run_cgroup *tc = s->tc;
	engine_new_run(&a->opts);
	fill_run(run, a, &s->t);
	if (a->cgroup) {
		free(run->target);
		run->target = xstrdup(tc->path);
		run->cgroup = xstrdup(tc->path);
	}
	if (tc->made) {
		free(run->cgroup);
		run->cgroup = xstrdup(tc->path);
		run->cgroup_limit = a->memory_limit;
	}
	run->series = s->series;
	if (store_run_begin(s->st, run) < 0) {
		cli_error("%s: cannot start a run: %s", s->dbpath, store_errmsg(s->st));
		return s->fail;
	}
	if (a->follow && !s->series)
		s->series = run->id;	/* the series is named after its first run */
	char line[256];
	int oc = a->follow ? follow_owner_check(s->st, run, &s->prev_uid, &s->have_prev_uid,
						line, sizeof(line)) : 0;
	if (oc < 0)
		cli_error("cannot store an event of run %lld: %s", (long long)run->id,
			  store_errmsg(s->st));
	if (oc != 0)
		fprintf(stderr, "rsswatch: %s\n", line);
	run->series = s->series;	/* the first run's is written with its progress */
	if (store_put_params(s->st, run->id, a->params.v, a->params.n) < 0) {
		cli_error("%s: cannot store the run's parameters: %s", s->dbpath, store_errmsg(s->st));
		discard_run(s->st, run);
		return s->fail;
	}
	if (!a->command)
		return 0;
	int setup_failed;
	/* Listening before the launch: the shortest commands end before the recorder
	 * would have registered (a failure here is the recorder's to meet again). */
	if (!a->opts.no_exit_records && !*sysroot() && taskstats_fd(&s->ts) < 0 &&
	    taskstats_open(&s->ts) < 0)
		taskstats_close(&s->ts);
	a->opts.exit_listener = &s->ts;
	if (!s->oom.open)
		oom_watch_open(&s->oom, s->t.cg, !a->opts.no_kmsg);
	a->opts.oom_watch = &s->oom;
	/* the GPU probes before the command's first call to the driver */
	if (!s->gpu_open)
		open_gpu(a, 0);
	s->gpu_open = 1;
	engine_adopt_launch(&a->opts, s->t.tree || s->t.set_cgroup_dir);
	struct launch_hold hold = { probe_child, &a->opts };
	pid_t child = target_launch(a->command, &s->old, tc->made ? run_cgroup_join : NULL,
				    &tc->loc, a->stacks == ENGINE_STACKS_MALLOC ? &hold : NULL,
				    &setup_failed, &s->t.launch);
	if (child < 0) {
		discard_run(s->st, run);
		return launch_failed(s, child, setup_failed);
	}
	s->t.pid = child;
	s->t.is_child = 1;
	s->t.pidfd = target_pidfd_open(child);
	if (s->t.pidfd < 0) {
		cli_error("cannot watch pid %d: %s", (int)child, errstr(s->t.pidfd));
		return s->fail;
	}
	run->pid = child;
	run->started_at = s->t.launch.exec_at;	/* the command's start, not the row's */
	return 0;
}

/* "rsswatch: recording pid 4242 (x) every 1s as run 7 in PATH". */
static void say_start(const struct session *s)
{
	const struct record_args *a = s->a;
	char iv[32], lim[32], comm[PROC_NAME_MAX];
	if (a->opts.quiet)
		return;
	fmt_duration(iv, sizeof(iv), a->opts.interval_ns);
	if (a->cgroup) {
		fprintf(stderr, "rsswatch: recording memory cgroup %s every %s as run %lld in %s\n",
			s->tc->path, iv, (long long)s->run.id, s->dbpath);
	} else {
		/* the name is the target's to choose: no control characters reach us */
		struct buf name = { 0 };
		facts_comm(s->t.pid, comm, sizeof(comm));
		buf_put_printable(&name, comm);
		fprintf(stderr, "rsswatch: recording pid %d (%s)%s every %s as run %lld in %s\n",
			(int)s->t.pid, buf_str(&name), a->tree ? " and its descendants" : "", iv,
			(long long)s->run.id, s->dbpath);
		buf_release(&name);
	}
	if (s->tc->made && a->memory_limit)
		fprintf(stderr, "rsswatch: in memory cgroup %s limited to %s\n", s->tc->path,
			fmt_bytes(lim, sizeof(lim), a->memory_limit));
}

/* The summary, what one attached process left out (its descendants: an "untracked"
 * event), and what the database holds less than was recorded. */
static void say_end(const struct session *s, int store_err)
{
	uint64_t max_rss = 0;
	struct oom_kill *kills = NULL;
	size_t nkills = 0, nev = 0;
	struct event *ev = NULL;
	struct buf sum = { 0 };
	store_each_sample(s->st, s->run.id, max_rss_cb, &max_rss);
	if (store_oom_kills(s->st, s->run.id, &kills, &nkills) < 0)
		nkills = 0;	/* the summary then names no kill; the run is stored */
	summary_text(&sum, &s->run, max_rss, kills, nkills);
	fputs(buf_str(&sum), stderr);
	buf_release(&sum);
	free(kills);
	if (store_events(s->st, s->run.id, &ev, &nev) == 0)
		for (size_t i = 0; i < nev; i++)
			if (strcmp(ev[i].kind, "untracked") == 0)
				fprintf(stderr, "note      %s\n", ev[i].detail);
	store_free_events(ev, nev);
	struct store_lost lost = store_lost(s->st);
	if (store_err)
		cli_error("run %lld was not saved completely (%s): the database holds it up to "
			  "the last write, and shows it as interrupted", (long long)s->run.id,
			  store_err == -ENOSPC ? "disk full" : errstr(store_err));
	else if (lost.samples_merged || lost.rows_dropped)
		fprintf(stderr, "rsswatch: while writing to the database failed or fell behind, "
			"%llu samples were merged into their neighbours (the higher kept) and %llu "
			"other rows dropped\n", (unsigned long long)lost.samples_merged,
			(unsigned long long)lost.rows_dropped);
}

/* A followed instance after the first: the gap from the end of the last instance to
 * this run's first sample, as a "restart" event of this run and a line. */
static void note_restart(struct session *s)
{
	const struct run *r = &s->run;
	int64_t gap;
	if (follow_store_restart(s->st, r, s->prev_end, s->prev_run, &gap) < 0)
		cli_error("cannot store the restart of run %lld: %s", (long long)r->id,
			  store_errmsg(s->st));
	if (!s->a->opts.quiet)
		fprintf(stderr, "rsswatch: restarted after %.1fms (from the end of run %lld to the "
			"first sample of run %lld)\n", (double)gap / 1e6, (long long)s->prev_run,
			(long long)r->id);
}

/* Records, says how it went, and picks the exit status: a launched command's own. */
static int run_recording(struct session *s)
{
	struct record_args *a = s->a;
	int store_err = 0;
	if (!s->gpu_open)
		open_gpu(a, s->t.pid);
	s->gpu_open = 1;
	say_start(s);		/* after what is slow to open: the first sample comes now */
	int e = record(&a->opts, &s->t, s->sigfd, s->st, &s->run, &store_err);
	if ((e == -ESRCH || (e == 0 && a->cgroup)) && a->follow && !s->run.samples && !store_err) {
		/* a followed instance that was gone before its first sample: no run (a -g
		 * cgroup found empty at the first sample ends without an error) */
		if (!a->opts.quiet && a->cgroup)
			fprintf(stderr, "rsswatch: the cgroup's processes ended before its first "
				"sample: no run kept\n");
		else if (!a->opts.quiet)
			fprintf(stderr, "rsswatch: pid %d ended before its first sample: no run kept\n",
				(int)s->t.pid);
		store_delete_run(s->st, s->run.id);
		if (s->series == s->run.id)
			s->series = 0;
		return FOLLOW_GONE;
	}
	if (s->prev_end)
		note_restart(s);
	if (e == -ESRCH && !a->cgroup && strcmp(s->run.outcome, OUTCOME_STOPPED) != 0) {
		/* it ended between the attach and its first read: its end, not an error */
		if (!a->opts.quiet)
			fprintf(stderr, "rsswatch: pid %d ended before its first sample\n",
				(int)s->t.pid);
		e = 0;
	}
	if (e < 0)
		cli_error("recording of %s ended early: %s", a->cgroup ? "the cgroup" : "the target",
			  errstr(e));
	say_end(s, store_err);
	if (e < 0)
		return s->fail;
	if (a->command && strcmp(s->run.outcome, OUTCOME_EXITED) == 0)
		return s->run.exit_code >= 0 ? s->run.exit_code : EXIT_CANCELED;
	if (a->command && (strcmp(s->run.outcome, OUTCOME_SIGNALED) == 0 ||
			   strcmp(s->run.outcome, OUTCOME_OOM_KILLED) == 0))
		return 128 + s->run.signal;
	return EXIT_OK;
}

/* What one instance held, let go before the next: its run, pidfd and cgroup. */
static void end_instance(struct session *s, int kept)
{
	if (kept) {	/* the gap runs from the end of the last run kept */
		s->prev_end = s->run.ended_at ? s->run.ended_at : real_ns();
		s->prev_run = s->run.id;
	}
	run_release(&s->run);
	if (s->t.pidfd >= 0)
		close(s->t.pidfd);
	memset(&s->t, 0, sizeof(s->t));
	s->t.pidfd = -1;
	release_cgroup(s->tc);
	run_cgroup_init(s->tc, &s->sink);
	s->pid = 0;
}

/* record --follow: one run per instance until a signal or the end of -d (over all
 * instances). An instance that ends before it can be attached is passed over. */
static int follow_loop(struct session *s)
{
	struct record_args *a = s->a;
	for (;;) {
		if (a->follow_deadline) {
			int64_t left = a->follow_deadline - mono_ns();
			a->opts.duration_ns = left > 0 ? left : 1;
		}
		int ret = run_recording(s);
		if (ret != FOLLOW_GONE &&
		    (ret != EXIT_OK || strcmp(s->run.outcome, OUTCOME_STOPPED) == 0))
			return ret;
		end_instance(s, ret != FOLLOW_GONE);
		for (;;) {
			pid_t pid = 0;
			if ((ret = follow_next(s, &pid)) != 0)
				return ret == FOLLOW_STOPPED ? EXIT_OK : ret;
			s->pid = pid;
			if ((ret = find_target(s)) == 0)
				break;
			/* gone already (or the cgroup removed again): wait on; one still there
			 * that cannot be recorded would only be found again */
			if (ret != EXIT_FAIL || (pid > 0 && (kill(pid, 0) == 0 || errno == EPERM)))
				return ret;
			if (s->t.pidfd >= 0)
				close(s->t.pidfd);
			s->t.pidfd = -1;
			release_cgroup(s->tc);
			run_cgroup_init(s->tc, &s->sink);
		}
		if ((ret = start_run(s)) != 0)
			return ret;
	}
}

static void close_session(struct session *s)
{
	taskstats_close(&s->ts);
	oom_watch_close(&s->oom);
	if (s->fw_open)
		follow_release(&s->fw);
	release_cgroup(s->tc);
	free(s->tc);
	run_release(&s->run);
	gpus_close(&s->a->opts);
	engine_close(&s->a->opts);
	if (s->t.pidfd >= 0)
		close(s->t.pidfd);
	if (s->sigfd >= 0)
		close(s->sigfd);
	metrics_server_free(s->a->opts.metrics);
	store_close(s->st);
	free(s->dbpath);
	buf_release(&s->out.line);
}

int cmd_record(int argc, char **argv)
{
	struct record_args a;
	struct session s;
	memset(&a, 0, sizeof(a));
	memset(&s, 0, sizeof(s));
	/* One malloc arena for the sampling thread and the writer: a second one would add
	 * about 200 KiB of touched pages to a process meant to stay small (under 4 MiB),
	 * for no gain with two threads that rarely allocate at once. */
	mallopt(M_ARENA_MAX, 1);
	int ret = parse_args(argc, argv, &a);
	if (ret != 0) {
		run_params_free(a.params.v, a.params.n);
		return ret == CLI_DONE ? EXIT_OK : ret;
	}
	s.a = &a;
	s.fail = a.command ? EXIT_CANCELED : EXIT_FAIL;
	s.sigfd = -1;
	s.t.pidfd = -1;
	s.ts = (struct taskstats_listener)TASKSTATS_LISTENER_INIT;
	s.oom.kmsg.fd = -1;
	s.out.f = stderr;
	s.sink = (struct recorder_sink){ show_live, show_note, &s.out };
	a.opts.sink = &s.sink;
	s.tc = xmalloc(sizeof(*s.tc));
	run_cgroup_init(s.tc, &s.sink);
	if (a.follow && a.opts.duration_ns)	/* -d: the total over every instance */
		a.follow_deadline = mono_ns() + a.opts.duration_ns;
	if ((ret = open_session(&s)) == 0 && (ret = find_target(&s)) == 0 &&
	    (ret = start_run(&s)) == 0)
		ret = a.follow ? follow_loop(&s) : run_recording(&s);
	if (ret == FOLLOW_STOPPED)	/* stopped before the first instance: no run */
		ret = EXIT_OK;
	close_session(&s);
	cli_retention_after_record(a.db, &a.retention);
	run_params_free(a.params.v, a.params.n);
	return ret;
}
