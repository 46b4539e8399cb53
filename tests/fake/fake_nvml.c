/* A stand-in for libnvidia-ml.so.1, driven by a script, for tests and benchmarks.
 *
 * The script is the file named by FAKE_NVML_SCRIPT, read again at every nvmlInit (and
 * all counters reset then). No script means a driver with no devices. One statement a
 * line; '#' starts a comment; sizes take K, M, G, T (powers of 1024).
 *
 *   device IDX [name "TEXT"] [uuid TEXT] total SIZE [used SIZE] [mig on|off]
 *   used device IDX bytes SIZE [WINDOW]
 *       the device's used memory while WINDOW holds (the last such line that holds wins)
 *   proc PID|self|parent|child device IDX bytes SIZE|na [graphics] [gi N ci N] [cuda FILE]
 *        [WINDOW]
 *       a process entry; "na" is NVML_VALUE_NOT_AVAILABLE (all ones); "graphics" lists
 *       it in the graphics query instead of the compute one; "child" is the calling
 *       process's first child at the time of the call (a recorder's launched command;
 *       no entry while it has none); "cuda FILE" adds the live
 *       bytes the stand-in CUDA driver keeps in FILE (tests/fake/fake_cuda.c) at the
 *       time of the call, so SIZE is the context and the blocks come and go with the
 *       target's calls
 *   fail FUNC [device IDX] error NAME|NUMBER [WINDOW]
 *       FUNC is init, count, memory, procs (compute and graphics), name or all (every
 *       per-device query); NAME is unknown, lost, no_permission, not_supported,
 *       driver_not_loaded, reset_required; init and count take no WINDOW
 *   entry32
 *       the _v3 process queries write 32-byte entries, as some R535 drivers did
 *   slow MS
 *       a compute process query that answers takes MS milliseconds after its instant,
 *       as a real driver's can take tens of them
 *
 * WINDOW is any of "from call N", "to call M" (inclusive; calls are counted per device
 * and per query, from 1: memory queries for "used" and "fail memory", compute process
 * queries for "proc" and "fail procs"; a call answered INSUFFICIENT_SIZE does not count,
 * and a graphics query sees the count of the last compute query) and "from ms N",
 * "to ms M" (milliseconds since nvmlInit, end excluded). A call sees one instant: its
 * time is taken once, so a window that opens or closes during the call does not change
 * its answer half-way. A short spike between two samples of a recorder:
 *
 *   proc self device 0 bytes 500M to ms 1300
 *   proc self device 0 bytes 6G from ms 1300 to ms 1450
 *   proc self device 0 bytes 500M from ms 1450
 *
 * When FAKE_NVML_INIT_HOLD names a file, nvmlInit creates that name with ".held" added
 * and waits until the file itself exists: a test does something while a caller is in
 * its start (between attaching to a process and its first read of it, for a
 * recorder).
 *
 * When FAKE_NVML_LOG names a file, every memory and process query appends one line to
 * it: "MS memory DEV USED", "MS procs DEV COUNT" or "MS graphics DEV COUNT" (MS since
 * nvmlInit; USED and COUNT are what the call answered, "-" for an error), so a test
 * can tell when and how often the driver was asked.
 *
 * Variants, by compile-time define: FAKE_NO_PROCESS_QUERY exports no process query;
 * FAKE_OLD_DRIVER exports only the unversioned symbols (16-byte process entries,
 * nvmlMemory_t); FAKE_NO_MEMORY_QUERY exports no memory query. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef int nvmlReturn_t;
typedef struct fake_device *nvmlDevice_t;

typedef struct {
	unsigned long long total, free, used;
} nvmlMemory_t;

typedef struct {
	unsigned int version;
	unsigned long long total, reserved, free, used;
} nvmlMemory_v2_t;

enum {
	E_SUCCESS = 0, E_INVALID_ARGUMENT = 2, E_NOT_SUPPORTED = 3, E_NO_PERMISSION = 4,
	E_INSUFFICIENT_SIZE = 7, E_DRIVER_NOT_LOADED = 9, E_GPU_IS_LOST = 15,
	E_RESET_REQUIRED = 16, E_ARGUMENT_VERSION_MISMATCH = 25, E_UNKNOWN = 999,
};

/* Prototypes of everything exported (the real library's names). */
nvmlReturn_t nvmlInit(void);
nvmlReturn_t nvmlShutdown(void);
const char *nvmlErrorString(nvmlReturn_t r);
nvmlReturn_t nvmlDeviceGetCount(unsigned int *count);
nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t *dev);
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t dev, char *name, unsigned int len);
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t dev, char *uuid, unsigned int len);
nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t dev, unsigned int *cur, unsigned int *pend);
#ifndef FAKE_OLD_DRIVER
nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count);
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *dev);
#endif
#ifndef FAKE_NO_MEMORY_QUERY
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t dev, nvmlMemory_t *m);
#ifndef FAKE_OLD_DRIVER
nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t dev, nvmlMemory_v2_t *m);
#endif
#endif
#ifndef FAKE_NO_PROCESS_QUERY
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t dev, unsigned int *n, void *infos);
nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t dev, unsigned int *n, void *infos);
#ifndef FAKE_OLD_DRIVER
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t dev, unsigned int *n, void *infos);
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t dev, unsigned int *n, void *infos);
nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t dev, unsigned int *n, void *infos);
#endif
#endif

#define MAX_DEV 64
#define MAX_RULES 4096

enum func { F_INIT, F_COUNT, F_MEMORY, F_PROCS, F_NAME, F_ALL };

struct window {
	long from_call, to_call;	/* 0: open */
	long from_ms, to_ms;		/* -1: open */
};

struct fake_device {
	int defined;
	char name[96], uuid[96];
	unsigned long long total, used;
	int mig;
	long mem_calls, proc_calls;
};

enum rule_kind { R_USED, R_PROC, R_FAIL };

struct rule {
	enum rule_kind kind;
	int dev;		/* -1: any device */
	enum func func;
	int error;
	pid_t pid;
	unsigned long long bytes;
	int graphics;
	unsigned gi, ci;
	char cuda[256];		/* the stand-in driver's live bytes, or "" */
	struct window w;
};

static struct fake_device devs[MAX_DEV];
static int ndev;
static struct rule rules[MAX_RULES];
static int nrules;
static int entry32;
static long slow_ms;
static struct timespec t0;
static FILE *query_log;

static long elapsed_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long)((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000);
}

/* Whether window w holds at the given call, at ms since nvmlInit. */
static int in_window(const struct window *w, long call, long ms)
{
	if (w->from_call && call < w->from_call)
		return 0;
	if (w->to_call && call > w->to_call)
		return 0;
	if (w->from_ms >= 0 || w->to_ms >= 0) {
		if (w->from_ms >= 0 && ms < w->from_ms)
			return 0;
		if (w->to_ms >= 0 && ms >= w->to_ms)
			return 0;
	}
	return 1;
}

/* ---- the script ---- */

#define MAX_TOK 32

static int tokenize(char *line, char **tok)
{
	int n = 0;
	char *p = line;
	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
			p++;
		if (!*p || *p == '#')
			return n;
		if (n == MAX_TOK)
			return -1;
		if (*p == '"') {
			tok[n++] = ++p;
			while (*p && *p != '"')
				p++;
			if (!*p)
				return -1;
			*p++ = '\0';
			continue;
		}
		tok[n++] = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\n')
			p++;
		if (*p)
			*p++ = '\0';
	}
}

static int parse_num(const char *s, unsigned long long *out)
{
	char *end;
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	unsigned shift = 0;
	switch (*end) {
	case '\0': break;
	case 'K': shift = 10; end++; break;
	case 'M': shift = 20; end++; break;
	case 'G': shift = 30; end++; break;
	case 'T': shift = 40; end++; break;
	default: return -1;
	}
	if (*end || (shift && v > (~0ULL >> shift)))
		return -1;
	*out = v << shift;
	return 0;
}

static int parse_error(const char *s)
{
	static const struct { const char *name; int code; } names[] = {
		{ "unknown", E_UNKNOWN }, { "lost", E_GPU_IS_LOST },
		{ "no_permission", E_NO_PERMISSION }, { "not_supported", E_NOT_SUPPORTED },
		{ "driver_not_loaded", E_DRIVER_NOT_LOADED }, { "reset_required", E_RESET_REQUIRED },
	};
	unsigned long long v;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(s, names[i].name) == 0)
			return names[i].code;
	if (parse_num(s, &v) == 0 && v > 0 && v < 100000)
		return (int)v;
	return -1;
}

static int parse_dev(const char *s)
{
	unsigned long long v;
	if (parse_num(s, &v) < 0 || v >= MAX_DEV)
		return -1;
	return (int)v;
}

/* Reads "from call N", "to call N", "from ms N", "to ms N" at tok[i]; returns how many
 * tokens it took (0 when tok[i] starts no window clause, -1 on error). */
static int parse_window(char **tok, int n, int i, struct window *w)
{
	unsigned long long v;
	if (strcmp(tok[i], "from") != 0 && strcmp(tok[i], "to") != 0)
		return 0;
	if (i + 2 >= n || parse_num(tok[i + 2], &v) < 0 || v > 1000000000)
		return -1;
	int from = tok[i][0] == 'f';
	if (strcmp(tok[i + 1], "call") == 0) {
		if (from)
			w->from_call = (long)v;
		else
			w->to_call = (long)v;
	} else if (strcmp(tok[i + 1], "ms") == 0) {
		if (from)
			w->from_ms = (long)v;
		else
			w->to_ms = (long)v;
	} else {
		return -1;
	}
	return 3;
}

static int parse_line(char **tok, int n)
{
	unsigned long long v;
	if (strcmp(tok[0], "entry32") == 0 && n == 1) {
		entry32 = 1;
		return 0;
	}
	if (strcmp(tok[0], "slow") == 0 && n == 2) {
		if (parse_num(tok[1], &v) < 0 || v > 60000)
			return -1;
		slow_ms = (long)v;
		return 0;
	}
	if (strcmp(tok[0], "device") == 0) {
		if (n < 2)
			return -1;
		int d = parse_dev(tok[1]);
		if (d < 0)
			return -1;
		struct fake_device *x = &devs[d];
		memset(x, 0, sizeof(*x));
		x->defined = 1;
		snprintf(x->name, sizeof(x->name), "Fake GPU %d", d);
		snprintf(x->uuid, sizeof(x->uuid), "GPU-fa4e0000-0000-0000-0000-%012d", d);
		for (int i = 2; i < n; i += 2) {
			if (i + 1 >= n)
				return -1;
			if (strcmp(tok[i], "name") == 0)
				snprintf(x->name, sizeof(x->name), "%s", tok[i + 1]);
			else if (strcmp(tok[i], "uuid") == 0)
				snprintf(x->uuid, sizeof(x->uuid), "%s", tok[i + 1]);
			else if (strcmp(tok[i], "total") == 0 && parse_num(tok[i + 1], &v) == 0)
				x->total = v;
			else if (strcmp(tok[i], "used") == 0 && parse_num(tok[i + 1], &v) == 0)
				x->used = v;
			else if (strcmp(tok[i], "mig") == 0)
				x->mig = strcmp(tok[i + 1], "on") == 0;
			else
				return -1;
		}
		if (d >= ndev)
			ndev = d + 1;
		return 0;
	}
	if (nrules == MAX_RULES)
		return -1;
	struct rule r;
	memset(&r, 0, sizeof(r));
	r.dev = -1;
	r.gi = r.ci = ~0u;
	r.w.from_ms = r.w.to_ms = -1;
	int have_bytes = 0, i;
	if (strcmp(tok[0], "used") == 0) {
		r.kind = R_USED;
		i = 1;
	} else if (strcmp(tok[0], "proc") == 0 && n >= 2) {
		r.kind = R_PROC;
		if (strcmp(tok[1], "self") == 0)
			r.pid = getpid();
		else if (strcmp(tok[1], "parent") == 0)
			r.pid = getppid();
		else if (strcmp(tok[1], "child") == 0)
			r.pid = -1;
		else if (parse_num(tok[1], &v) == 0 && v > 0 && v <= 0x7fffffff)
			r.pid = (pid_t)v;
		else
			return -1;
		i = 2;
	} else if (strcmp(tok[0], "fail") == 0 && n >= 2) {
		static const char *const fn[] = { "init", "count", "memory", "procs", "name", "all" };
		r.kind = R_FAIL;
		r.error = -1;
		r.func = (enum func)-1;
		for (int k = 0; k < 6; k++)
			if (strcmp(tok[1], fn[k]) == 0)
				r.func = (enum func)k;
		if ((int)r.func < 0)
			return -1;
		i = 2;
	} else {
		return -1;
	}
	while (i < n) {
		int w = parse_window(tok, n, i, &r.w);
		if (w < 0)
			return -1;
		if (w > 0) {
			i += w;
			continue;
		}
		if (strcmp(tok[i], "graphics") == 0) {
			r.graphics = 1;
			i++;
			continue;
		}
		if (i + 1 >= n)
			return -1;
		const char *k = tok[i], *val = tok[i + 1];
		if (strcmp(k, "device") == 0) {
			if ((r.dev = parse_dev(val)) < 0)
				return -1;
		} else if (strcmp(k, "bytes") == 0) {
			if (strcmp(val, "na") == 0)
				r.bytes = ~0ULL;
			else if (parse_num(val, &r.bytes) < 0)
				return -1;
			have_bytes = 1;
		} else if (strcmp(k, "cuda") == 0) {
			if (snprintf(r.cuda, sizeof(r.cuda), "%s", val) >= (int)sizeof(r.cuda))
				return -1;
		} else if (strcmp(k, "error") == 0) {
			if ((r.error = parse_error(val)) < 0)
				return -1;
		} else if ((strcmp(k, "gi") == 0 || strcmp(k, "ci") == 0) &&
			   parse_num(val, &v) == 0 && v <= 0xffffffffULL) {
			if (k[0] == 'g')
				r.gi = (unsigned)v;
			else
				r.ci = (unsigned)v;
		} else {
			return -1;
		}
		i += 2;
	}
	if (r.kind != R_FAIL && (r.dev < 0 || !have_bytes))
		return -1;
	if (r.kind == R_FAIL && r.error < 0)
		return -1;
	rules[nrules++] = r;
	return 0;
}

static int load_script(void)
{
	memset(devs, 0, sizeof(devs));
	ndev = nrules = entry32 = 0;
	slow_ms = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	const char *log = getenv("FAKE_NVML_LOG");
	if (query_log)
		fclose(query_log);
	query_log = log && *log ? fopen(log, "ae") : NULL;
	const char *path = getenv("FAKE_NVML_SCRIPT");
	if (!path || !*path)
		return 0;
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "fake_nvml: %s: %s\n", path, strerror(errno));
		return -1;
	}
	char line[1024];
	int lineno = 0, bad = 0;
	while (fgets(line, sizeof(line), f)) {
		char *tok[MAX_TOK];
		lineno++;
		int n = tokenize(line, tok);
		if (n == 0)
			continue;
		if (n < 0 || parse_line(tok, n) < 0) {
			fprintf(stderr, "fake_nvml: %s:%d: cannot parse\n", path, lineno);
			bad = 1;
		}
	}
	fclose(f);
	for (int d = 0; d < ndev; d++)
		if (!devs[d].defined) {
			fprintf(stderr, "fake_nvml: %s: device %d not defined\n", path, d);
			bad = 1;
		}
	return bad ? -1 : 0;
}

/* One line of the query log (FAKE_NVML_LOG), written at once. */
static void log_call(long ms, const char *what, int d, int ok, unsigned long long v)
{
	if (!query_log)
		return;
	if (ok)
		fprintf(query_log, "%ld %s %d %llu\n", ms, what, d, v);
	else
		fprintf(query_log, "%ld %s %d -\n", ms, what, d);
	fflush(query_log);
}

/* The scripted error for func on device d at this call (at ms), or 0. */
static int failure(enum func func, int d, long call, long ms)
{
	for (int i = 0; i < nrules; i++) {
		const struct rule *r = &rules[i];
		if (r->kind != R_FAIL || (r->dev >= 0 && r->dev != d))
			continue;
		if (r->func != func && !(r->func == F_ALL && func >= F_MEMORY))
			continue;
		if (func <= F_COUNT || in_window(&r->w, call, ms))
			return r->error;
	}
	return 0;
}

static struct fake_device *dev_of(nvmlDevice_t h)
{
	if (h < devs || h >= devs + ndev)
		return NULL;
	return h;
}

/* ---- the API ---- */

static int initialised;

/* FAKE_NVML_INIT_HOLD (above). */
static void init_hold(void)
{
	const char *path = getenv("FAKE_NVML_INIT_HOLD");
	char held[512];
	if (!path || !*path || snprintf(held, sizeof(held), "%s.held", path) >= (int)sizeof(held))
		return;
	int fd = open(held, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0)
		close(fd);
	struct timespec ms = { 0, 1000000 };
	while (access(path, F_OK) < 0)
		nanosleep(&ms, NULL);
}

nvmlReturn_t nvmlInit(void)
{
	init_hold();
	if (load_script() < 0)
		return E_UNKNOWN;
	int e = failure(F_INIT, -1, 0, 0);
	if (e)
		return e;
	initialised = 1;
	return E_SUCCESS;
}

nvmlReturn_t nvmlShutdown(void)
{
	initialised = 0;
	if (query_log)
		fclose(query_log);
	query_log = NULL;
	return E_SUCCESS;
}

const char *nvmlErrorString(nvmlReturn_t r)
{
	switch (r) {
	case E_SUCCESS: return "Success";
	case E_NOT_SUPPORTED: return "Not Supported";
	case E_NO_PERMISSION: return "Insufficient Permissions";
	case E_INSUFFICIENT_SIZE: return "Insufficient Size";
	case E_DRIVER_NOT_LOADED: return "Driver Not Loaded";
	case E_GPU_IS_LOST: return "GPU is lost";
	default: return "Unknown Error";
	}
}

nvmlReturn_t nvmlDeviceGetCount(unsigned int *count)
{
	if (!initialised)
		return 1;
	int e = failure(F_COUNT, -1, 0, 0);
	if (e)
		return e;
	*count = (unsigned)ndev;
	return E_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t *dev)
{
	if (!initialised || index >= (unsigned)ndev)
		return E_INVALID_ARGUMENT;
	*dev = &devs[index];
	return E_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t h, char *name, unsigned int len)
{
	struct fake_device *x = dev_of(h);
	if (!x)
		return E_INVALID_ARGUMENT;
	int e = failure(F_NAME, (int)(x - devs), 1, elapsed_ms());
	if (e)
		return e;
	if (strlen(x->name) >= len)
		return E_INSUFFICIENT_SIZE;
	memcpy(name, x->name, strlen(x->name) + 1);
	return E_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t h, char *uuid, unsigned int len)
{
	struct fake_device *x = dev_of(h);
	if (!x)
		return E_INVALID_ARGUMENT;
	if (strlen(x->uuid) >= len)
		return E_INSUFFICIENT_SIZE;
	memcpy(uuid, x->uuid, strlen(x->uuid) + 1);
	return E_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t h, unsigned int *cur, unsigned int *pend)
{
	struct fake_device *x = dev_of(h);
	if (!x)
		return E_INVALID_ARGUMENT;
	*cur = *pend = (unsigned)x->mig;
	return E_SUCCESS;
}

#ifndef FAKE_OLD_DRIVER
nvmlReturn_t nvmlInit_v2(void)
{
	return nvmlInit();
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count)
{
	return nvmlDeviceGetCount(count);
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *dev)
{
	return nvmlDeviceGetHandleByIndex(index, dev);
}
#endif

#ifndef FAKE_NO_MEMORY_QUERY
/* used and total of device x at its next memory call; 0 or an NVML error. */
static int memory_now(struct fake_device *x, unsigned long long *used)
{
	int d = (int)(x - devs);
	long call = ++x->mem_calls, ms = elapsed_ms();
	int e = failure(F_MEMORY, d, call, ms);
	if (e) {
		log_call(ms, "memory", d, 0, 0);
		return e;
	}
	*used = x->used;
	for (int i = 0; i < nrules; i++) {
		const struct rule *r = &rules[i];
		if (r->kind == R_USED && r->dev == d && in_window(&r->w, call, ms))
			*used = r->bytes;
	}
	log_call(ms, "memory", d, 1, *used);
	return E_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t h, nvmlMemory_t *m)
{
	struct fake_device *x = dev_of(h);
	unsigned long long used;
	if (!x || !m)
		return E_INVALID_ARGUMENT;
	int e = memory_now(x, &used);
	if (e)
		return e;
	m->total = x->total;
	m->used = used;
	m->free = used < x->total ? x->total - used : 0;
	return E_SUCCESS;
}

#ifndef FAKE_OLD_DRIVER
nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t h, nvmlMemory_v2_t *m)
{
	struct fake_device *x = dev_of(h);
	unsigned long long used;
	if (!x || !m)
		return E_INVALID_ARGUMENT;
	if (m->version != ((unsigned)sizeof(*m) | 2u << 24))
		return E_ARGUMENT_VERSION_MISMATCH;
	int e = memory_now(x, &used);
	if (e)
		return e;
	m->total = x->total;
	m->reserved = 0;
	m->used = used;
	m->free = used < x->total ? x->total - used : 0;
	return E_SUCCESS;
}
#endif
#endif

#ifndef FAKE_NO_PROCESS_QUERY
/* The first child of this process now (any thread's), or 0. */
static pid_t first_child(void)
{
	char path[64], buf[64];
	pid_t pid = 0;
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	while (d && !pid && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%.16s/children", e->d_name);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		ssize_t n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n > 0) {
			buf[n] = 0;
			pid = (pid_t)strtol(buf, NULL, 10);
		}
	}
	if (d)
		closedir(d);
	return pid;
}

/* The pid of a process entry now (see "child"), 0 when none. */
static pid_t proc_pid(const struct rule *r)
{
	return r->pid < 0 ? first_child() : r->pid;
}

/* A process entry's bytes now: its SIZE, plus the stand-in driver's live bytes. */
static unsigned long long proc_bytes(const struct rule *r)
{
	uint64_t live = 0;
	if (!r->cuda[0] || r->bytes == ~0ULL)
		return r->bytes;
	int fd = open(r->cuda, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (pread(fd, &live, sizeof(live), 0) != (ssize_t)sizeof(live))
			live = 0;
		close(fd);
	}
	return r->bytes + live;
}

/* One process query: stride is 16 (v1), 24 (v2, v3) or 32 (v3 with entry32). */
static nvmlReturn_t procs(nvmlDevice_t h, unsigned int *n, void *infos, int graphics,
			  size_t stride)
{
	struct fake_device *x = dev_of(h);
	if (!x || !n || (*n && !infos))
		return E_INVALID_ARGUMENT;
	int d = (int)(x - devs);
	long call = graphics ? (x->proc_calls ? x->proc_calls : 1) : x->proc_calls + 1;
	long ms = elapsed_ms();
	const char *what = graphics ? "graphics" : "procs";
	int e = failure(F_PROCS, d, call, ms);
	if (e) {
		if (!graphics)
			x->proc_calls++;
		log_call(ms, what, d, 0, 0);
		return e;
	}
	unsigned count = 0;
	for (int i = 0; i < nrules; i++) {
		const struct rule *r = &rules[i];
		if (r->kind == R_PROC && r->dev == d && r->graphics == graphics &&
		    in_window(&r->w, call, ms) && proc_pid(r))
			count++;
	}
	if (count > *n) {
		*n = count;
		log_call(ms, what, d, 0, 0);
		return E_INSUFFICIENT_SIZE;
	}
	if (!graphics)
		x->proc_calls++;
	unsigned char *p = infos;
	unsigned listed = 0;
	for (int i = 0; i < nrules && listed < count; i++) {	/* a child born since: not listed */
		const struct rule *r = &rules[i];
		if (r->kind != R_PROC || r->dev != d || r->graphics != graphics ||
		    !in_window(&r->w, call, ms))
			continue;
		pid_t who = proc_pid(r);
		if (!who)
			continue;
		unsigned pid = (unsigned)who;
		unsigned long long zero = 0;
		memset(p, 0, stride);
		memcpy(p, &pid, 4);
		unsigned long long bytes = proc_bytes(r);
		memcpy(p + 8, &bytes, 8);
		if (stride >= 24) {
			memcpy(p + 16, &r->gi, 4);
			memcpy(p + 20, &r->ci, 4);
		}
		if (stride == 32)
			memcpy(p + 24, &zero, 8);
		p += stride;
		listed++;
	}
	*n = listed;
	log_call(ms, what, d, 1, listed);
	if (slow_ms && !graphics) {
		struct timespec ts = { slow_ms / 1000, slow_ms % 1000 * 1000000 };
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	}
	return E_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t dev, unsigned int *n, void *infos)
{
	return procs(dev, n, infos, 0, 16);
}

nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t dev, unsigned int *n, void *infos)
{
	return procs(dev, n, infos, 1, 16);
}

#ifndef FAKE_OLD_DRIVER
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t dev, unsigned int *n, void *infos)
{
	return procs(dev, n, infos, 0, 24);
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t dev, unsigned int *n, void *infos)
{
	return procs(dev, n, infos, 0, entry32 ? 32 : 24);
}

nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t dev, unsigned int *n, void *infos)
{
	return procs(dev, n, infos, 1, entry32 ? 32 : 24);
}
#endif
#endif
