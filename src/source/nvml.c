/* NVML through dlopen: a table of resolved symbols, the device and process queries, and
 * the PID namespace helpers. See nvml.h for the contract and docs/guide/gpu.md for the driver
 * differences handled here. */
#include "source/nvml.h"
#include "base/parse.h"
#include "base/rfile.h"
#include "base/sysroot.h"
#include "base/util.h"

#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The NVML ABI, restated: only what is used here. Handles are opaque pointers and every
 * function returns an nvmlReturn_t (an int). */
enum {
	NV_SUCCESS = 0,
	NV_UNINITIALIZED = 1,
	NV_INVALID_ARGUMENT = 2,
	NV_NOT_SUPPORTED = 3,
	NV_NO_PERMISSION = 4,
	NV_NOT_FOUND = 6,
	NV_INSUFFICIENT_SIZE = 7,
	NV_DRIVER_NOT_LOADED = 9,
	NV_TIMEOUT = 10,
	NV_LIBRARY_NOT_FOUND = 12,
	NV_FUNCTION_NOT_FOUND = 13,
	NV_GPU_IS_LOST = 15,
	NV_RESET_REQUIRED = 16,
	NV_LIB_RM_VERSION_MISMATCH = 18,
	NV_MEMORY = 20,
	NV_NO_DATA = 21,
	NV_GPU_NOT_FOUND = 28,
};

#define NV_VALUE_NOT_AVAILABLE (~0ULL)

struct nv_memory {		/* nvmlMemory_t */
	unsigned long long total, free, used;
};

struct nv_memory_v2 {		/* nvmlMemory_v2_t; version = sizeof | 2 << 24 */
	unsigned int version;
	unsigned long long total, reserved, free, used;
};

typedef void *nv_device;

/* Entry layouts of the process queries, by byte offset (read with memcpy, never through
 * a struct, because the stride is decided at run time):
 *   v1 (unversioned symbol)  16 bytes: u32 pid @0, u64 usedGpuMemory @8
 *   v2, v3                   24 bytes: ... u32 gpuInstanceId @16, u32 computeInstanceId @20
 *   v3 on some R535 drivers  32 bytes: ... u64 usedGpuCcProtectedMemory @24 */
#define ENT_MAX 32
#define PID_PLAUSIBLE_MAX 4194304	/* PID_MAX_LIMIT on 64-bit kernels */
/* A process query whose buffer was too small is retried with a larger one; the list
 * can grow between two calls, but not six times in a row unless processes start
 * faster than the driver answers: then the read fails rather than loop. */
#define QUERY_TRIES 6
/* The buffer's bound in entries: more processes than a driver allows on all of a
 * host's GPUs; a count above it is a driver's error, not a reason to allocate. */
#define QUERY_ENTRIES_MAX 65536
/* The buffer's first size in entries, grown as a query asks. */
#define QUERY_ENTRIES_FIRST 64

struct syms {
	int (*init)(void);
	int (*shutdown)(void);
	const char *(*error_string)(int);
	int (*get_count)(unsigned *);
	int (*get_handle)(unsigned, nv_device *);
	int (*get_name)(nv_device, char *, unsigned);
	int (*get_uuid)(nv_device, char *, unsigned);
	int (*get_mig_mode)(nv_device, unsigned *, unsigned *);
	int (*mem_v2)(nv_device, struct nv_memory_v2 *);
	int (*mem_v1)(nv_device, struct nv_memory *);
	int (*compute)(nv_device, unsigned *, void *);
	int (*graphics)(nv_device, unsigned *, void *);
};

/* Symbols in order of preference; the index of the name found sets the entry layout of
 * the process queries (0: v3, 1: v2, 2: v1). */
#define SYM(field) offsetof(struct syms, field)
static const struct symdef {
	size_t off;
	int required;
	const char *names[3];
} symdefs[] = {
	{ SYM(init), 1, { "nvmlInit_v2", "nvmlInit", NULL } },
	{ SYM(shutdown), 0, { "nvmlShutdown", NULL, NULL } },
	{ SYM(error_string), 0, { "nvmlErrorString", NULL, NULL } },
	{ SYM(get_count), 1, { "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount", NULL } },
	{ SYM(get_handle), 1, { "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex", NULL } },
	{ SYM(get_name), 0, { "nvmlDeviceGetName", NULL, NULL } },
	{ SYM(get_uuid), 0, { "nvmlDeviceGetUUID", NULL, NULL } },
	{ SYM(get_mig_mode), 0, { "nvmlDeviceGetMigMode", NULL, NULL } },
	{ SYM(mem_v2), 0, { "nvmlDeviceGetMemoryInfo_v2", NULL, NULL } },
	{ SYM(mem_v1), 0, { "nvmlDeviceGetMemoryInfo", NULL, NULL } },
	{ SYM(compute), 0, { "nvmlDeviceGetComputeRunningProcesses_v3",
			     "nvmlDeviceGetComputeRunningProcesses_v2",
			     "nvmlDeviceGetComputeRunningProcesses" } },
	{ SYM(graphics), 0, { "nvmlDeviceGetGraphicsRunningProcesses_v3",
			      "nvmlDeviceGetGraphicsRunningProcesses_v2",
			      "nvmlDeviceGetGraphicsRunningProcesses" } },
};

/* One process entry, decoded. */
struct pent {
	pid_t pid;
	unsigned long long bytes;
	int known;
	unsigned kind;
	unsigned gi, ci;
};

struct nvml {
	void *dl;
	struct syms s;
	int compute_ver, graphics_ver;	/* 3, 2 or 1 */
	unsigned ndev;
	nv_device dev[NVML_MAX_DEVICES];
	unsigned char lost[NVML_MAX_DEVICES];
	int mig[NVML_MAX_DEVICES];
	char name[NVML_MAX_DEVICES][GPU_NAME_MAX];
	char uuid[NVML_MAX_DEVICES][GPU_NAME_MAX];
	unsigned char *raw;	/* query buffer: raw_cap entries of ENT_MAX bytes */
	unsigned raw_cap;
	struct pent *ent;	/* one device's merged entries */
	unsigned nent, ent_cap;
};

/* nvmlReturn_t to -errno. Lost, reset-required and vanished devices are -ENODEV, which
 * callers take to mean "gone for good". */
static int nv_errno(int r)
{
	switch (r) {
	case NV_SUCCESS: return 0;
	case NV_UNINITIALIZED:
	case NV_INVALID_ARGUMENT: return -EINVAL;
	case NV_NOT_SUPPORTED: return -EOPNOTSUPP;
	case NV_NO_PERMISSION: return -EACCES;
	case NV_NOT_FOUND: return -ENOENT;
	case NV_INSUFFICIENT_SIZE: return -ENOBUFS;
	case NV_DRIVER_NOT_LOADED: return -ENXIO;
	case NV_TIMEOUT: return -ETIMEDOUT;
	case NV_LIBRARY_NOT_FOUND:
	case NV_FUNCTION_NOT_FOUND: return -ENOSYS;
	case NV_GPU_IS_LOST:
	case NV_RESET_REQUIRED:
	case NV_GPU_NOT_FOUND: return -ENODEV;
	case NV_LIB_RM_VERSION_MISMATCH: return -EPROTO;
	case NV_MEMORY: return -ENOMEM;
	case NV_NO_DATA: return -ENODATA;
	default: return -EIO;
	}
}

static const char *nv_text(const struct nvml *n, int r)
{
	const char *t = n->s.error_string ? n->s.error_string(r) : NULL;
	return t ? t : "unknown error";
}

static void set_why(char *why, size_t whylen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void set_why(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;
	if (!why || whylen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
}

static int resolve(struct nvml *n, const char *path, char *why, size_t whylen)
{
	for (size_t i = 0; i < ARRAY_SIZE(symdefs); i++) {
		const struct symdef *d = &symdefs[i];
		void *fn = NULL;
		int which = -1;
		for (int k = 0; k < 3 && d->names[k] && !fn; k++) {
			fn = dlsym(n->dl, d->names[k]);
			which = k;
		}
		if (!fn && d->required) {
			set_why(why, whylen, "%s: no symbol %s", path, d->names[0]);
			return -ENOSYS;
		}
		/* Function pointers and void * share a representation on every platform
		 * with dlsym; POSIX requires it. */
		memcpy((char *)&n->s + d->off, &fn, sizeof(fn));
		if (d->off == SYM(compute))
			n->compute_ver = 3 - which;
		else if (d->off == SYM(graphics))
			n->graphics_ver = 3 - which;
	}
	if (!n->s.mem_v2 && !n->s.mem_v1) {
		set_why(why, whylen, "%s: no symbol nvmlDeviceGetMemoryInfo", path);
		return -ENOSYS;
	}
	return 0;
}

static void read_static(struct nvml *n, unsigned d)
{
	n->mig[d] = -1;
	if (n->lost[d])
		return;
	if (n->s.get_name && n->s.get_name(n->dev[d], n->name[d], GPU_NAME_MAX) != NV_SUCCESS)
		n->name[d][0] = '\0';
	if (n->s.get_uuid && n->s.get_uuid(n->dev[d], n->uuid[d], GPU_NAME_MAX) != NV_SUCCESS)
		n->uuid[d][0] = '\0';
	n->name[d][GPU_NAME_MAX - 1] = n->uuid[d][GPU_NAME_MAX - 1] = '\0';
	unsigned cur, pend;
	if (n->s.get_mig_mode && n->s.get_mig_mode(n->dev[d], &cur, &pend) == NV_SUCCESS)
		n->mig[d] = cur ? 1 : 0;
}

int nvml_open(struct nvml **out, char *why, size_t whylen)
{
	const char *env = secure_getenv("RSSWATCH_NVML_LIB");	/* never in a setuid program */
	const char *path = env && *env ? env : "libnvidia-ml.so.1";
	struct nvml *n = xcalloc(1, sizeof(*n));
	int r;

	n->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!n->dl) {
		const char *e = dlerror();
		set_why(why, whylen, "%s", e ? e : path);
		free(n);
		return -ENOENT;
	}
	r = resolve(n, path, why, whylen);
	if (r < 0)
		goto fail;
	int nv = n->s.init();
	if (nv != NV_SUCCESS) {
		set_why(why, whylen, "%s: cannot initialise: %s", path, nv_text(n, nv));
		r = nv_errno(nv);
		if (r == 0 || r == -ENOENT)
			r = -EIO;
		goto fail;
	}
	unsigned count = 0;
	nv = n->s.get_count(&count);
	if (nv != NV_SUCCESS) {
		set_why(why, whylen, "%s: cannot count devices: %s", path, nv_text(n, nv));
		r = nv_errno(nv) ? nv_errno(nv) : -EIO;
		if (n->s.shutdown)
			n->s.shutdown();
		goto fail;
	}
	n->ndev = count < NVML_MAX_DEVICES ? count : NVML_MAX_DEVICES;
	for (unsigned d = 0; d < n->ndev; d++) {
		/* A device that cannot be opened is reported as absent, not fatal: the
		 * others are still worth recording. */
		if (n->s.get_handle(d, &n->dev[d]) != NV_SUCCESS)
			n->lost[d] = 1;
		read_static(n, d);
	}
	n->raw_cap = QUERY_ENTRIES_FIRST;
	n->raw = xmalloc((size_t)n->raw_cap * ENT_MAX);
	*out = n;
	return 0;
fail:
	dlclose(n->dl);
	free(n);
	return r;
}

int nvml_library_dir(const struct nvml *n, char *buf, size_t len)
{
	struct link_map *map = NULL;
	if (!n || dlinfo(n->dl, RTLD_DI_LINKMAP, &map) < 0 || !map || !map->l_name ||
	    map->l_name[0] != '/')
		return -ENOENT;
	const char *slash = strrchr(map->l_name, '/');
	size_t k = (size_t)(slash - map->l_name);
	if (k == 0 || k >= len)
		return -ENOENT;
	memcpy(buf, map->l_name, k);
	buf[k] = 0;
	return 0;
}

void nvml_close(struct nvml *n)
{
	if (!n)
		return;
	if (n->s.shutdown)
		n->s.shutdown();
	dlclose(n->dl);
	free(n->raw);
	free(n->ent);
	free(n);
}

int nvml_device_count(const struct nvml *n)
{
	return (int)n->ndev;
}

int nvml_has_process_query(const struct nvml *n)
{
	return n->s.compute != NULL;
}

/* Memory of one device: 0, or -errno (-ENODEV marks it lost). */
static int device_memory(struct nvml *n, unsigned d, unsigned long long *used,
			 unsigned long long *total)
{
	int nv;
	if (n->s.mem_v2) {
		struct nv_memory_v2 m;
		memset(&m, 0, sizeof(m));
		m.version = (unsigned)sizeof(m) | 2u << 24;
		nv = n->s.mem_v2(n->dev[d], &m);
		if (nv == NV_SUCCESS) {
			*used = m.used;
			*total = m.total;
			return 0;
		}
		/* An old driver may export the symbol yet refuse the struct version. */
		if (!(nv == NV_NOT_SUPPORTED || nv == NV_FUNCTION_NOT_FOUND ||
		      nv == 25 /* ARGUMENT_VERSION_MISMATCH */) || !n->s.mem_v1)
			return nv_errno(nv);
	}
	struct nv_memory m1;
	nv = n->s.mem_v1(n->dev[d], &m1);
	if (nv != NV_SUCCESS)
		return nv_errno(nv);
	*used = m1.used;
	*total = m1.total;
	return 0;
}

int nvml_read_devices(struct nvml *n, struct gpu_device *out, size_t max)
{
	size_t k = 0;
	for (unsigned d = 0; d < n->ndev && k < max; d++, k++) {
		struct gpu_device *g = &out[k];
		memset(g, 0, sizeof(*g));
		g->index = d;
		memcpy(g->name, n->name[d], GPU_NAME_MAX);
		memcpy(g->uuid, n->uuid[d], GPU_NAME_MAX);
		g->mig = n->mig[d];
		if (n->lost[d]) {
			g->err = -ENODEV;
			continue;
		}
		g->present = 1;
		g->err = device_memory(n, d, &g->used, &g->total);
		if (g->err == -ENODEV) {
			n->lost[d] = 1;
			g->present = 0;
		}
		if (g->err)
			g->used = g->total = 0;
	}
	return (int)k;
}

static void load_u32(const unsigned char *p, unsigned *v)
{
	memcpy(v, p, sizeof(*v));
}

static void load_u64(const unsigned char *p, unsigned long long *v)
{
	memcpy(v, p, sizeof(*v));
}

static int stride_plausible(const unsigned char *raw, unsigned count, size_t stride)
{
	for (unsigned i = 0; i < count; i++) {
		unsigned pid;
		load_u32(raw + i * stride, &pid);
		if (pid == 0 || pid > PID_PLAUSIBLE_MAX)
			return 0;
	}
	return 1;
}

/* The stride of the count entries a v3 query wrote into raw, which was filled with
 * 0xA5 bytes first (a pid of 0xA5A5A5A5 is impossible). A driver writing 32-byte
 * entries writes bytes [24*count, 32*count); one writing 24-byte entries leaves them
 * untouched. Those bytes include the whole 8-byte tail of the last 32-byte entry, so a
 * false reading needs the driver to have written exactly the fill pattern there. The
 * choice is then checked: every pid must be plausible under it, else the other stride is
 * tried. With one entry both layouts agree. Returns the stride, or -EPROTO. */
static int detect_stride(const unsigned char *raw, unsigned count)
{
	if (count <= 1)
		return 24;
	int s = 24;
	for (size_t b = (size_t)count * 24; b < (size_t)count * 32; b++) {
		if (raw[b] != 0xA5) {
			s = 32;
			break;
		}
	}
	if (stride_plausible(raw, count, (size_t)s))
		return s;
	if (stride_plausible(raw, count, s == 24 ? 32 : 24))
		return s == 24 ? 32 : 24;
	return -EPROTO;
}

static void ent_push(struct nvml *n, const struct pent *e)
{
	if (n->nent == n->ent_cap) {
		n->ent_cap = n->ent_cap ? n->ent_cap * 2 : 64;
		n->ent = xrealloc(n->ent, n->ent_cap * sizeof(*n->ent));
	}
	n->ent[n->nent++] = *e;
}

/* One process query (compute or graphics) of device d, its entries merged into n->ent.
 * A (pid, gi, ci) already there from the other query is the same context memory seen
 * twice: keep the larger figure, add the kind. */
static int query_procs(struct nvml *n, unsigned d, unsigned kind)
{
	int (*fn)(nv_device, unsigned *, void *) =
		kind == GPU_PROC_COMPUTE ? n->s.compute : n->s.graphics;
	int ver = kind == GPU_PROC_COMPUTE ? n->compute_ver : n->graphics_ver;
	unsigned count = 0;
	int nv = NV_INSUFFICIENT_SIZE;

	/* The number of processes can change between calls: grow and retry a few
	 * times. The buffer holds raw_cap entries of the largest layout, whatever the
	 * driver writes. */
	for (int tries = 0; tries < QUERY_TRIES && nv == NV_INSUFFICIENT_SIZE; tries++) {
		memset(n->raw, 0xA5, (size_t)n->raw_cap * ENT_MAX);
		count = n->raw_cap;
		nv = fn(n->dev[d], &count, n->raw);
		if (nv == NV_INSUFFICIENT_SIZE) {
			unsigned want = count > n->raw_cap ? count + 16 : n->raw_cap * 2;
			if (want > QUERY_ENTRIES_MAX)
				return -E2BIG;
			n->raw_cap = want;
			n->raw = xrealloc(n->raw, (size_t)n->raw_cap * ENT_MAX);
		}
	}
	if (nv != NV_SUCCESS)
		return nv_errno(nv);
	if (count > n->raw_cap)
		return -EPROTO;
	int stride = ver == 1 ? 16 : ver == 2 ? 24 : detect_stride(n->raw, count);
	if (stride < 0)
		return stride;
	if (ver != 3 && !stride_plausible(n->raw, count, (size_t)stride))
		return -EPROTO;

	unsigned have = n->nent;
	for (unsigned i = 0; i < count; i++) {
		const unsigned char *p = n->raw + (size_t)i * (size_t)stride;
		struct pent e;
		unsigned pid;
		load_u32(p, &pid);
		load_u64(p + 8, &e.bytes);
		e.pid = (pid_t)pid;
		e.known = e.bytes != NV_VALUE_NOT_AVAILABLE;
		if (!e.known)
			e.bytes = 0;
		e.gi = e.ci = ~0u;
		if (stride >= 24) {
			load_u32(p + 16, &e.gi);
			load_u32(p + 20, &e.ci);
		}
		e.kind = kind;
		unsigned j;
		for (j = 0; j < have; j++) {
			struct pent *o = &n->ent[j];
			if (o->pid == e.pid && o->gi == e.gi && o->ci == e.ci && !(o->kind & kind))
				break;
		}
		if (j == have) {
			ent_push(n, &e);
			continue;
		}
		struct pent *o = &n->ent[j];
		o->kind |= kind;
		if (e.known && (!o->known || e.bytes > o->bytes)) {
			o->bytes = e.bytes;
			o->known = 1;
		}
	}
	return 0;
}

/* All entries of device d into n->ent. 0 or -errno; -ENODEV marks the device lost. A
 * driver without the graphics query, or refusing it, still gives compute figures. */
static int device_procs(struct nvml *n, unsigned d)
{
	n->nent = 0;
	int r = query_procs(n, d, GPU_PROC_COMPUTE);
	if (r == 0 && n->s.graphics) {
		int g = query_procs(n, d, GPU_PROC_GRAPHICS);
		if (g == -ENODEV || g == -EIO || g == -EPROTO || g == -E2BIG)
			r = g;
	}
	if (r == -ENODEV)
		n->lost[d] = 1;
	return r;
}

static int pid_in(pid_t pid, const pid_t *pids, size_t npids)
{
	for (size_t i = 0; i < npids; i++)
		if (pids[i] == pid)
			return 1;
	return 0;
}

int nvml_read_usage(struct nvml *n, const pid_t *pids, size_t npids, struct gpu_usage *out)
{
	struct gpu_usage u;
	memset(&u, 0, sizeof(u));
	if (!n->s.compute) {
		*out = u;
		return 0;
	}
	u.known = 1;
	for (unsigned d = 0; d < n->ndev; d++) {
		if (n->lost[d])
			continue;
		int r = device_procs(n, d);
		if (r == -ENODEV)
			continue;
		if (r < 0) {
			u.known = 0;
			u.unknown_mask |= 1ULL << d;
			continue;
		}
		for (unsigned i = 0; i < n->nent; i++) {
			const struct pent *e = &n->ent[i];
			if (!pid_in(e->pid, pids, npids))
				continue;
			if (!e->known) {
				u.known = 0;
				u.unknown_mask |= 1ULL << d;
				continue;
			}
			u.per_device[d] += e->bytes;
			u.bytes += e->bytes;
		}
	}
	*out = u;
	return 0;
}

int nvml_list_processes(struct nvml *n, struct gpu_proc *out, size_t max)
{
	if (!n->s.compute)
		return -EOPNOTSUPP;
	size_t found = 0;
	for (unsigned d = 0; d < n->ndev; d++) {
		if (n->lost[d] || device_procs(n, d) < 0)
			continue;
		for (unsigned i = 0; i < n->nent; i++, found++) {
			if (found >= max)
				continue;
			const struct pent *e = &n->ent[i];
			out[found] = (struct gpu_proc){
				.device = d, .pid = e->pid, .bytes = e->bytes, .known = e->known,
				.kind = e->kind, .gi = e->gi, .ci = e->ci,
			};
		}
	}
	return found > INT_MAX ? INT_MAX : (int)found;
}

int nspid_parse(const char *buf, size_t len, pid_t *out, size_t max)
{
	const char *p = buf, *end = buf + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		if (le - p >= 6 && memcmp(p, "NSpid:", 6) == 0) {
			const char *q = p + 6;
			int n = 0;
			for (;;) {
				while (q < le && (*q == '\t' || *q == ' '))
					q++;
				if (q == le)
					break;
				const char *f = q;
				while (q < le && *q != '\t' && *q != ' ')
					q++;
				uint64_t v;
				if (parse_u64_n(f, (size_t)(q - f), &v) < 0 || v == 0 ||
				    v > INT32_MAX || n == INT_MAX)
					return -EINVAL;
				if ((size_t)n < max)
					out[n] = (pid_t)v;
				n++;
			}
			return n > 0 ? n : -EINVAL;
		}
		p = le + 1;
	}
	return -ENOENT;
}

int nspid_innermost(pid_t pid, pid_t *out)
{
	char path[64], *buf;
	size_t len;
	pid_t ns[32];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	int r = read_file(path, &buf, &len);
	if (r < 0)
		return r;
	r = nspid_parse(buf, len, ns, ARRAY_SIZE(ns));
	free(buf);
	if (r < 0)
		return r;
	if ((size_t)r > ARRAY_SIZE(ns))
		return -E2BIG;
	*out = ns[r - 1];
	return 0;
}

int pidns_link_is_initial(const char *link)
{
	/* PROC_PID_INIT_INO in the kernel's include/linux/proc_ns.h. */
	return strcmp(link, "pid:[4026531836]") == 0;
}

int pidns_is_initial(void)
{
	char path[PATH_MAX], link[64];
	int r = sysroot_path(path, sizeof(path), "/proc/self/ns/pid");
	if (r < 0)
		return r;
	ssize_t k = readlink(path, link, sizeof(link) - 1);
	if (k < 0)
		return -errno;
	link[k] = '\0';
	return pidns_link_is_initial(link);
}
