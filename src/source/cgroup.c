#include "source/cgroup.h"
#include "base/parse.h"
#include "base/sysroot.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The smallest value a v1 limit file shows for "unlimited": LONG_MAX rounded down to a
 * 64 KiB page. With 4 KiB pages the kernel shows 9223372036854771712, above this. */
#define CG_V1_UNLIMITED_MIN 0x7FFFFFFFFFFF0000ULL

/* The end of the line starting at p (the '\n' or end). */
static const char *line_end(const char *p, const char *end)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));
	return nl ? nl : end;
}

/* Whether the sep-separated list [s, s+len) holds word as one whole item. */
static bool list_has(const char *s, size_t len, char sep, const char *word)
{
	size_t wl = strlen(word);
	const char *p = s, *end = s + len;
	while (p <= end) {
		const char *q = p;
		while (q < end && *q != sep)
			q++;
		if ((size_t)(q - p) == wl && memcmp(p, word, wl) == 0)
			return true;
		p = q + 1;
	}
	return false;
}

bool cg_controllers_have_memory(const char *buf, size_t len)
{
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
		len--;
	return list_has(buf, len, ' ', "memory");
}

/* Copies a mountinfo field, undoing its octal escapes (\040 for a space, \011, \012,
 * \134). */
static int unescape_octal(const char *s, size_t len, char *out, size_t n)
{
	size_t o = 0;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (c == '\\' && i + 3 < len &&
		    s[i + 1] >= '0' && s[i + 1] <= '3' && s[i + 2] >= '0' && s[i + 2] <= '7' &&
		    s[i + 3] >= '0' && s[i + 3] <= '7') {
			c = (char)((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
			i += 3;
		}
		if (o + 1 >= n)
			return -ENAMETOOLONG;
		out[o++] = c;
	}
	out[o] = '\0';
	return 0;
}

#define MI_FIELDS_MAX 32

int cg_mountinfo_parse(const char *buf, size_t len, struct cg_mount *out)
{
	struct cg_mount m;
	const char *p = buf, *end = buf + len;
	memset(&m, 0, sizeof(m));
	while (p < end) {
		const char *le = line_end(p, end);
		const char *f[MI_FIELDS_MAX];
		size_t fl[MI_FIELDS_MAX];
		int nf = 0, dash = -1;
		const char *q = p;
		if (le == p)
			goto next;
		while (q < le) {
			while (q < le && *q == ' ')
				q++;
			if (q == le)
				break;
			const char *s = q;
			while (q < le && *q != ' ')
				q++;
			if (nf == MI_FIELDS_MAX)
				return -EINVAL;
			f[nf] = s;
			fl[nf] = (size_t)(q - s);
			if (dash < 0 && nf >= 6 && fl[nf] == 1 && s[0] == '-')
				dash = nf;
			nf++;
		}
		/* id parent maj:min root mountpoint options [optional...] - fstype source superopts */
		if (dash < 0 || nf < dash + 4)
			return -EINVAL;
		const char *fs = f[dash + 1];
		size_t fsl = fl[dash + 1];
		int e;
		if (!m.has_v2 && fsl == 7 && memcmp(fs, "cgroup2", 7) == 0) {
			if ((e = unescape_octal(f[3], fl[3], m.v2_root, sizeof(m.v2_root))) < 0 ||
			    (e = unescape_octal(f[4], fl[4], m.v2_mnt, sizeof(m.v2_mnt))) < 0)
				return e;
			m.has_v2 = true;
		} else if (!m.has_v1 && fsl == 6 && memcmp(fs, "cgroup", 6) == 0 &&
			   list_has(f[dash + 3], fl[dash + 3], ',', "memory")) {
			if ((e = unescape_octal(f[3], fl[3], m.v1_root, sizeof(m.v1_root))) < 0 ||
			    (e = unescape_octal(f[4], fl[4], m.v1_mnt, sizeof(m.v1_mnt))) < 0)
				return e;
			m.has_v1 = true;
		}
next:
		p = le + 1;
	}
	*out = m;
	return 0;
}

int cg_proc_path_parse(const char *buf, size_t len, int version, char *out, size_t n)
{
	static const char deleted[] = " (deleted)";
	const char *p = buf, *end = buf + len;
	if (version != 1 && version != 2)
		return -EINVAL;
	while (p < end) {
		const char *le = line_end(p, end);
		if (le == p)
			goto next;
		const char *c1 = memchr(p, ':', (size_t)(le - p));
		const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(le - c1 - 1)) : NULL;
		uint64_t hier;
		if (!c2 || parse_u64_n(p, (size_t)(c1 - p), &hier) < 0)
			return -EINVAL;
		const char *path = c2 + 1;
		size_t pl = (size_t)(le - path);
		bool match = version == 2 ? (hier == 0 && c2 == c1 + 1)
			: (hier != 0 && list_has(c1 + 1, (size_t)(c2 - c1 - 1), ',', "memory"));
		if (!match)
			goto next;
		if (pl == 0 || path[0] != '/')
			return -EINVAL;
		if (pl >= sizeof(deleted) - 1 &&
		    memcmp(le - (sizeof(deleted) - 1), deleted, sizeof(deleted) - 1) == 0)
			return -ENOENT;
		if (pl >= n)
			return -ENAMETOOLONG;
		memcpy(out, path, pl);
		out[pl] = '\0';
		return 0;
next:
		p = le + 1;
	}
	return -ENOENT;
}

static int cg_file_path(char *out, size_t n, const char *dir, const char *name)
{
	int w = snprintf(out, n, "%s/%s", dir, name);
	return w < 0 || (size_t)w >= n ? -ENAMETOOLONG : 0;
}

/* dir = sysroot + mnt + (path less the mounted root). */
static int join_cgroup_dir(const char *mnt, const char *root, const char *path,
			   char *out, size_t n)
{
	size_t rl = strlen(root);
	const char *rest = path;
	if (strcmp(root, "/") != 0) {
		if (strncmp(path, root, rl) != 0 || (path[rl] != '\0' && path[rl] != '/'))
			return -EXDEV;
		rest = path + rl;
	}
	/* A process outside our cgroup namespace shows as "/../x". */
	for (const char *d = strstr(rest, "/.."); d; d = strstr(d + 1, "/.."))
		if (d[3] == '\0' || d[3] == '/')
			return -EXDEV;
	if (strcmp(rest, "/") == 0)
		rest = "";
	return sysroot_path(out, n, "%s%s", mnt, rest);
}

int cg_mount_read(struct cg_mount *out)
{
	char *mi;
	size_t mil;
	int e = read_file("/proc/self/mountinfo", &mi, &mil);
	if (e < 0)
		return e;
	e = cg_mountinfo_parse(mi, mil, out);
	free(mi);
	return e;
}

void cg_hier_path(const struct cg_mount *m, const struct cg_loc *loc, char *out, size_t n)
{
	const char *mnt = loc->version == 1 ? m->v1_mnt : m->v2_mnt;
	const char *root = loc->version == 1 ? m->v1_root : m->v2_root;
	char prefix[PATH_MAX];
	snprintf(out, n, "%s", loc->dir);
	if (snprintf(prefix, sizeof(prefix), "%s%s", sysroot(), mnt) >= (int)sizeof(prefix))
		return;
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

int cg_find(pid_t pid, struct cg_loc *out)
{
	struct cg_mount *m = xmalloc(sizeof(*m));
	int e = cg_mount_read(m);
	if (e == 0)
		e = cg_find_in(m, pid, out);
	free(m);
	return e;
}

int cg_find_in(const struct cg_mount *m, pid_t pid, struct cg_loc *out)
{
	char *pc = NULL, path[PATH_MAX], cgpath[PATH_MAX];
	size_t pcl;
	struct cg_loc loc;
	int e;
	if (pid == 0)
		snprintf(path, sizeof(path), "/proc/self/cgroup");
	else
		snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	e = read_file(path, &pc, &pcl);
	if (e < 0) {
		if (e == -ENOENT)
			e = -ESRCH;
		goto out;
	}
	e = -ENOENT;
	if (m->has_v1 && cg_proc_path_parse(pc, pcl, 1, cgpath, sizeof(cgpath)) == 0) {
		loc.version = 1;
		e = join_cgroup_dir(m->v1_mnt, m->v1_root, cgpath, loc.dir, sizeof(loc.dir));
	} else if (m->has_v2) {
		char *ctl = NULL;
		size_t cl;
		if (cg_file_path(path, sizeof(path), strcmp(m->v2_mnt, "/") == 0 ? "" : m->v2_mnt,
				 "cgroup.controllers") == 0 &&
		    read_file(path, &ctl, &cl) == 0 && cg_controllers_have_memory(ctl, cl)) {
			e = cg_proc_path_parse(pc, pcl, 2, cgpath, sizeof(cgpath));
			if (e == 0) {
				loc.version = 2;
				e = join_cgroup_dir(m->v2_mnt, m->v2_root, cgpath, loc.dir,
						    sizeof(loc.dir));
			}
		}
		free(ctl);
	}
	if (e == 0)
		*out = loc;
out:
	free(pc);
	return e;
}

int cg_value_parse(const char *buf, size_t len, uint64_t *out)
{
	if (len > 0 && buf[len - 1] == '\n')
		len--;
	return parse_u64_n(buf, len, out);
}

int cg_limit_parse(const char *buf, size_t len, uint64_t *out)
{
	uint64_t v;
	if (len > 0 && buf[len - 1] == '\n')
		len--;
	if (len == 3 && memcmp(buf, "max", 3) == 0) {
		*out = CG_UNLIMITED;
		return 0;
	}
	int e = parse_u64_n(buf, len, &v);
	if (e < 0)
		return e;
	*out = v >= CG_V1_UNLIMITED_MIN ? CG_UNLIMITED : v;
	return 0;
}

/* "key value" files. A key found in the table is stored at its offset in obj; a key of
 * a total entry (v1's total_*) wins over the local one of the same bit whatever the
 * order. Every line must have the form "word digits"; unknown keys are not checked
 * beyond that shape, so new kernel fields never break parsing. */
struct kv_key {
	const char *name;
	unsigned bit;
	size_t off;
	bool total;
};

static int kv_table_parse(const char *buf, size_t len, const struct kv_key *keys,
			  size_t nkeys, void *obj, unsigned *have)
{
	const char *p = buf, *end = buf + len;
	unsigned got = 0, got_total = 0;
	while (p < end) {
		const char *le = line_end(p, end);
		if (le == p)
			goto next;
		const char *sp = memchr(p, ' ', (size_t)(le - p));
		if (!sp || sp == p)
			return -EINVAL;
		size_t kl = (size_t)(sp - p);
		uint64_t v;
		int e = parse_u64_n(sp + 1, (size_t)(le - sp - 1), &v);
		if (e < 0)
			return e;
		for (size_t i = 0; i < nkeys; i++) {
			if (strlen(keys[i].name) != kl || memcmp(keys[i].name, p, kl) != 0)
				continue;
			if (!keys[i].total && (got_total & keys[i].bit))
				break;
			memcpy((char *)obj + keys[i].off, &v, sizeof(v));
			got |= keys[i].bit;
			if (keys[i].total)
				got_total |= keys[i].bit;
			break;
		}
next:
		p = le + 1;
	}
	*have = got;
	return 0;
}

#define EVK(n, b) { #n, b, offsetof(struct cg_events, n), false }

int cg_events_parse(const char *buf, size_t len, struct cg_events *out)
{
	static const struct kv_key keys[] = {
		EVK(low, CG_EV_LOW), EVK(high, CG_EV_HIGH), EVK(max, CG_EV_MAX),
		EVK(oom, CG_EV_OOM), EVK(oom_kill, CG_EV_OOM_KILL),
		EVK(oom_group_kill, CG_EV_OOM_GROUP_KILL),
	};
	struct cg_events ev;
	memset(&ev, 0, sizeof(ev));
	int e = kv_table_parse(buf, len, keys, ARRAY_SIZE(keys), &ev, &ev.have);
	if (e < 0)
		return e;
	if ((ev.have & (CG_EV_OOM | CG_EV_OOM_KILL)) != (CG_EV_OOM | CG_EV_OOM_KILL))
		return -EINVAL;
	*out = ev;
	return 0;
}

int cg_oom_control_parse(const char *buf, size_t len, struct cg_oom_control *out)
{
	struct raw { uint64_t disable, under, kill; } raw;
	static const struct kv_key keys[] = {
		{ "oom_kill_disable", 1, offsetof(struct raw, disable), false },
		{ "under_oom", 2, offsetof(struct raw, under), false },
		{ "oom_kill", 4, offsetof(struct raw, kill), false },
	};
	unsigned have;
	memset(&raw, 0, sizeof(raw));
	int e = kv_table_parse(buf, len, keys, ARRAY_SIZE(keys), &raw, &have);
	if (e < 0)
		return e;
	if ((have & 3) != 3 || raw.disable > 1 || raw.under > 1)
		return -EINVAL;
	out->oom_kill_disable = raw.disable != 0;
	out->under_oom = raw.under != 0;
	out->has_oom_kill = (have & 4) != 0;
	out->oom_kill = raw.kill;
	return 0;
}

#define STK(name, field, bit) { name, bit, offsetof(struct cg_stat, field), false }
#define STT(name, field, bit) { name, bit, offsetof(struct cg_stat, field), true }

int cg_stat_parse(const char *buf, size_t len, struct cg_stat *out)
{
	static const struct kv_key keys[] = {
		/* v2 names (v1 shares shmem, swap, the LRU lists and the fault counts) */
		STK("anon", anon, CG_ST_ANON), STK("file", file, CG_ST_FILE),
		STK("shmem", shmem, CG_ST_SHMEM),
		STK("file_mapped", file_mapped, CG_ST_FILE_MAPPED),
		STK("file_dirty", file_dirty, CG_ST_FILE_DIRTY),
		STK("file_writeback", file_writeback, CG_ST_FILE_WRITEBACK),
		STK("kernel", kernel, CG_ST_KERNEL), STK("slab", slab, CG_ST_SLAB),
		STK("sock", sock, CG_ST_SOCK), STK("swap", swap, CG_ST_SWAP),
		STK("active_anon", active_anon, CG_ST_ACTIVE_ANON),
		STK("inactive_anon", inactive_anon, CG_ST_INACTIVE_ANON),
		STK("active_file", active_file, CG_ST_ACTIVE_FILE),
		STK("inactive_file", inactive_file, CG_ST_INACTIVE_FILE),
		STK("unevictable", unevictable, CG_ST_UNEVICTABLE),
		STK("pgfault", pgfault, CG_ST_PGFAULT),
		STK("pgmajfault", pgmajfault, CG_ST_PGMAJFAULT),
		/* v1 local names */
		STK("rss", anon, CG_ST_ANON), STK("cache", file, CG_ST_FILE),
		STK("mapped_file", file_mapped, CG_ST_FILE_MAPPED),
		STK("dirty", file_dirty, CG_ST_FILE_DIRTY),
		STK("writeback", file_writeback, CG_ST_FILE_WRITEBACK),
		/* v1 hierarchical totals */
		STT("total_rss", anon, CG_ST_ANON), STT("total_cache", file, CG_ST_FILE),
		STT("total_shmem", shmem, CG_ST_SHMEM),
		STT("total_mapped_file", file_mapped, CG_ST_FILE_MAPPED),
		STT("total_dirty", file_dirty, CG_ST_FILE_DIRTY),
		STT("total_writeback", file_writeback, CG_ST_FILE_WRITEBACK),
		STT("total_swap", swap, CG_ST_SWAP),
		STT("total_active_anon", active_anon, CG_ST_ACTIVE_ANON),
		STT("total_inactive_anon", inactive_anon, CG_ST_INACTIVE_ANON),
		STT("total_active_file", active_file, CG_ST_ACTIVE_FILE),
		STT("total_inactive_file", inactive_file, CG_ST_INACTIVE_FILE),
		STT("total_unevictable", unevictable, CG_ST_UNEVICTABLE),
		STT("total_pgfault", pgfault, CG_ST_PGFAULT),
		STT("total_pgmajfault", pgmajfault, CG_ST_PGMAJFAULT),
	};
	struct cg_stat st;
	memset(&st, 0, sizeof(st));
	int e = kv_table_parse(buf, len, keys, ARRAY_SIZE(keys), &st, &st.have);
	if (e < 0)
		return e;
	if ((st.have & (CG_ST_ANON | CG_ST_FILE)) != (CG_ST_ANON | CG_ST_FILE))
		return -EINVAL;
	*out = st;
	return 0;
}

int cg_procs_parse(const char *buf, size_t len, pid_t *pids, size_t cap, size_t *count)
{
	const char *p = buf, *end = buf + len;
	size_t n = 0;
	while (p < end) {
		const char *le = line_end(p, end);
		uint64_t v;
		if (parse_u64_n(p, (size_t)(le - p), &v) < 0 || v == 0 || v > INT32_MAX)
			return -EINVAL;
		if (n < cap)
			pids[n] = (pid_t)v;
		n++;
		p = le + 1;
	}
	*count = n;
	return 0;
}

/* ---- Reader ------------------------------------------------------------------------ */

/* Opens dir/name into f; an absent optional file is not an error. */
static int open_in(struct rfile *f, const char *dir, const char *name, bool optional)
{
	char path[PATH_MAX];
	int e = cg_file_path(path, sizeof(path), dir, name);
	if (e == 0)
		e = rfile_open_abs(f, path);
	if (e == -ENOENT && optional)
		return 0;
	return e;
}

/* Opens the peak file read-write where a reset may be wanted, keeping the read-only fd
 * when that is refused (memory.peak is read-only before 6.12). */
static int open_peak(struct cg_reader *r, const char *name, bool want_write)
{
	char path[PATH_MAX];
	int e = cg_file_path(path, sizeof(path), r->dir, name);
	if (e < 0)
		return e;
	e = rfile_open_abs(&r->peak, path);
	if (e == -ENOENT)
		return 0;
	if (e < 0 || !want_write)
		return e;
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		close(r->peak.fd);
		r->peak.fd = fd;
		r->peak_reset = r->version == 2 ? CG_PEAK_RESET_FD : CG_PEAK_RESET_V1;
	}
	return 0;
}

int cg_reader_open(struct cg_reader *r, int version, const char *dir, bool owned)
{
	int e;
	memset(r, 0, sizeof(*r));
	r->usage = r->limit = r->peak = r->events = r->stat = (struct rfile)RFILE_INIT;
	if (version != 1 && version != 2)
		return -EINVAL;
	if (strlen(dir) >= sizeof(r->dir))
		return -ENAMETOOLONG;
	r->version = version;
	r->owned = owned;
	r->peak_reset = CG_PEAK_RESET_NONE;
	memcpy(r->dir, dir, strlen(dir) + 1);
	if (version == 2) {
		if ((e = open_in(&r->usage, dir, "memory.current", false)) < 0 ||
		    (e = open_in(&r->limit, dir, "memory.max", true)) < 0 ||
		    (e = open_peak(r, "memory.peak", true)) < 0 ||
		    (e = open_in(&r->events, dir, "memory.events", true)) < 0 ||
		    (e = open_in(&r->stat, dir, "memory.stat", true)) < 0)
			goto fail;
	} else {
		if ((e = open_in(&r->usage, dir, "memory.usage_in_bytes", false)) < 0 ||
		    (e = open_in(&r->limit, dir, "memory.limit_in_bytes", true)) < 0 ||
		    (e = open_peak(r, "memory.max_usage_in_bytes", owned)) < 0 ||
		    (e = open_in(&r->events, dir, "memory.oom_control", true)) < 0 ||
		    (e = open_in(&r->stat, dir, "memory.stat", true)) < 0)
			goto fail;
	}
	return 0;
fail:
	cg_reader_close(r);
	return e;
}

/* Reads an open file; a removed cgroup answers ENODEV (or ENOENT). */
static int read_kept(struct rfile *f)
{
	int e = rfile_read(f);
	return e == -ENOENT ? -ENODEV : e;
}

int cg_reader_read(struct cg_reader *r, struct cg_sample *out)
{
	struct cg_sample s;
	int e;
	memset(&s, 0, sizeof(s));
	s.limit = CG_UNLIMITED;
	if ((e = read_kept(&r->usage)) < 0)
		return e;
	if ((e = cg_value_parse(r->usage.buf, r->usage.len, &s.usage)) < 0)
		return e;
	s.have |= CG_S_USAGE;
	if (r->limit.fd >= 0) {
		if ((e = read_kept(&r->limit)) < 0 ||
		    (e = cg_limit_parse(r->limit.buf, r->limit.len, &s.limit)) < 0)
			return e;
		s.have |= CG_S_LIMIT;
	}
	if (r->peak.fd >= 0) {
		if ((e = read_kept(&r->peak)) < 0 ||
		    (e = cg_value_parse(r->peak.buf, r->peak.len, &s.peak)) < 0)
			return e;
		s.have |= CG_S_PEAK;
	}
	if (r->events.fd >= 0) {
		if ((e = read_kept(&r->events)) < 0)
			return e;
		if (r->version == 2) {
			struct cg_events ev;
			if ((e = cg_events_parse(r->events.buf, r->events.len, &ev)) < 0)
				return e;
			s.oom = ev.oom;
			s.oom_kill = ev.oom_kill;
			s.have |= CG_S_OOM | CG_S_OOM_KILL;
		} else {
			struct cg_oom_control oc;
			if ((e = cg_oom_control_parse(r->events.buf, r->events.len, &oc)) < 0)
				return e;
			s.under_oom = oc.under_oom;
			s.have |= CG_S_UNDER_OOM;
			if (oc.has_oom_kill) {
				s.oom_kill = oc.oom_kill;
				s.have |= CG_S_OOM_KILL;
			}
		}
	}
	*out = s;
	return 0;
}

int cg_reader_read_stat(struct cg_reader *r, struct cg_stat *out)
{
	if (r->stat.fd < 0)
		return -ENOENT;
	int e = read_kept(&r->stat);
	if (e < 0)
		return e;
	return cg_stat_parse(r->stat.buf, r->stat.len, out);
}

int cg_reader_reset_peak(struct cg_reader *r)
{
	static const char v2_text[] = "1\n", v1_text[] = "0\n";
	if (r->peak_reset == CG_PEAK_RESET_NONE || r->peak.fd < 0)
		return -EOPNOTSUPP;
	bool v2 = r->peak_reset == CG_PEAK_RESET_FD;
	const char *t = v2 ? v2_text : v1_text;
	size_t tl = 2;
	for (;;) {
		ssize_t w = pwrite(r->peak.fd, t, tl, 0);
		if (w == (ssize_t)tl)
			return 0;
		if (w >= 0)
			return -EIO;
		if (errno == EINTR)
			continue;
		if (errno == EINVAL || errno == EACCES || errno == EPERM || errno == EBADF) {
			r->peak_reset = CG_PEAK_RESET_NONE;
			return -EOPNOTSUPP;
		}
		return -errno;
	}
}

void cg_reader_close(struct cg_reader *r)
{
	if (!r)
		return;
	rfile_close(&r->usage);
	rfile_close(&r->limit);
	rfile_close(&r->peak);
	rfile_close(&r->events);
	rfile_close(&r->stat);
	r->peak_reset = CG_PEAK_RESET_NONE;
}

int cg_read_procs(const char *dir, pid_t **pids, size_t *count)
{
	struct rfile f = RFILE_INIT;
	size_t n = 0;
	int e = open_in(&f, dir, "cgroup.procs", false);
	if (e == 0)
		e = rfile_read(&f);
	if (e == 0)
		e = cg_procs_parse(f.buf, f.len, NULL, 0, &n);
	if (e == 0) {
		pid_t *v = xcalloc(n ? n : 1, sizeof(*v));
		size_t n2;
		e = cg_procs_parse(f.buf, f.len, v, n, &n2);
		if (e == 0) {
			*pids = v;
			*count = n;
		} else {
			free(v);
		}
	}
	rfile_close(&f);
	return e;
}
