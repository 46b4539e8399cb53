#include "source/proc.h"
#include "base/parse.h"
#include "base/sysroot.h"
#include "base/util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
	ST_NAME = 1 << 0, ST_PPID = 1 << 1, ST_RSS = 1 << 2, ST_HWM = 1 << 3,
	ST_ANON = 1 << 4, ST_FILE = 1 << 5, ST_SHMEM = 1 << 6, ST_SWAP = 1 << 7,
	ST_THREADS = 1 << 8,
	ST_MEM = ST_RSS | ST_HWM | ST_ANON | ST_FILE | ST_SHMEM | ST_SWAP,
};

int proc_status_parse(const char *buf, size_t len, struct proc_status *out)
{
	/* One pass over the lines; each wanted key is matched by its full "Key:" prefix. */
	static const struct { const char *key; unsigned bit; size_t off; } keys[] = {
		{ "VmHWM:", ST_HWM, offsetof(struct proc_status, mem.hwm) },
		{ "VmRSS:", ST_RSS, offsetof(struct proc_status, mem.rss) },
		{ "RssAnon:", ST_ANON, offsetof(struct proc_status, mem.anon) },
		{ "RssFile:", ST_FILE, offsetof(struct proc_status, mem.file) },
		{ "RssShmem:", ST_SHMEM, offsetof(struct proc_status, mem.shmem) },
		{ "VmSwap:", ST_SWAP, offsetof(struct proc_status, mem.swap) },
	};
	struct proc_status st;
	unsigned have = 0;
	memset(&st, 0, sizeof(st));
	const char *p = buf, *end = buf + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		const char *colon = memchr(p, ':', (size_t)(le - p));
		if (!colon)
			goto next;
		size_t klen = (size_t)(colon - p) + 1;
		if (klen == 5 && memcmp(p, "Name:", 5) == 0) {
			/* "Name:", one tab, the name with its newlines and backslashes escaped
			 * ("\\n", "\\\\"): unescaped, so that it is the name /proc/PID/stat and
			 * exit records give (a name may begin with a tab of its own) */
			const char *v = colon + 1;
			if (v < le && *v == '\t')
				v++;
			size_t n = 0;
			for (; v < le && n + 1 < sizeof(st.name); v++) {
				if (*v == '\\' && v + 1 < le && (v[1] == 'n' || v[1] == '\\'))
					st.name[n++] = *++v == 'n' ? '\n' : '\\';
				else
					st.name[n++] = *v;
			}
			st.name[n] = '\0';
			have |= ST_NAME;
		} else if (klen == 5 && memcmp(p, "PPid:", 5) == 0) {
			uint64_t v;
			if (kv_value_u64(colon + 1, le, &v) < 0 || v > INT32_MAX)
				return -EINVAL;
			st.ppid = (pid_t)v;
			have |= ST_PPID;
		} else if (klen == 8 && memcmp(p, "Threads:", 8) == 0) {
			uint64_t v;
			if (kv_value_u64(colon + 1, le, &v) < 0 || v > UINT32_MAX)
				return -EINVAL;
			st.threads = (uint32_t)v;
			have |= ST_THREADS;
		} else if (p[0] == 'V' || p[0] == 'R') {
			for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
				if (strlen(keys[i].key) != klen || memcmp(p, keys[i].key, klen) != 0)
					continue;
				if (kv_value_u64(colon + 1, le, (uint64_t *)((char *)&st + keys[i].off)) < 0)
					return -EINVAL;
				have |= keys[i].bit;
				break;
			}
		}
next:
		p = le + 1;
	}
	if (!(have & ST_NAME) || !(have & ST_PPID) || !(have & ST_THREADS))
		return -EINVAL;
	if (!(have & ST_MEM))
		return -ENODATA;
	/* VmSwap is absent on kernels without swap support; everything else must be there. */
	if ((have & (ST_MEM & ~ST_SWAP)) != (ST_MEM & ~ST_SWAP))
		return -EINVAL;
	*out = st;
	return 0;
}

int proc_stat_parse(const char *buf, size_t len, struct proc_stat *out)
{
	const char *open = memchr(buf, '(', len);
	const char *close = NULL;
	for (const char *q = buf + len; q > buf; q--) {
		if (q[-1] == ')') {
			close = q - 1;
			break;
		}
	}
	if (!open || !close || close < open)
		return -EINVAL;
	struct proc_stat st;
	memset(&st, 0, sizeof(st));
	size_t n = (size_t)(close - open - 1);
	if (n >= sizeof(st.comm))
		n = sizeof(st.comm) - 1;
	memcpy(st.comm, open + 1, n);
	st.comm[n] = '\0';

	/* Fields after the comm, counted from 3 (state) as proc(5) numbers them. */
	const char *p = close + 1, *end = buf + len;
	int field = 2;
	int got = 0;
	while (p < end && field < 22) {
		while (p < end && *p == ' ')
			p++;
		const char *f = p;
		while (p < end && *p != ' ' && *p != '\n')
			p++;
		if (f == p)
			break;
		field++;
		uint64_t v;
		switch (field) {
		case 3:
			st.state = *f;
			got++;
			break;
		case 4:
			if (parse_u64_n(f, (size_t)(p - f), &v) < 0 || v > INT32_MAX)
				return -EINVAL;
			st.ppid = (pid_t)v;
			got++;
			break;
		case 9:
			if (parse_u64_n(f, (size_t)(p - f), &v) < 0 || v > UINT32_MAX)
				return -EINVAL;
			st.flags = (unsigned)v;
			got++;
			break;
		case 10: case 12: case 14: case 15:
			if (parse_u64_n(f, (size_t)(p - f), &v) < 0)
				return -EINVAL;
			*(field == 10 ? &st.minflt : field == 12 ? &st.majflt :
			  field == 14 ? &st.utime : &st.stime) = v;
			got++;
			break;
		case 22:
			if (parse_u64_n(f, (size_t)(p - f), &v) < 0)
				return -EINVAL;
			st.starttime = v;
			got++;
			break;
		default:
			break;
		}
	}
	if (got != 8)
		return -EINVAL;
	*out = st;
	return 0;
}

#define PF_EXITING_FLAG 0x4u	/* include/linux/sched.h: PF_EXITING */

int proc_stat_exiting(const struct proc_stat *st)
{
	return st->state == 'Z' || st->state == 'X' || st->state == 'x' ||
	       (st->flags & PF_EXITING_FLAG) != 0;
}

uint64_t proc_ticks_ns(uint64_t ticks)
{
	static uint64_t hz;
	if (!hz) {
		long t = sysconf(_SC_CLK_TCK);
		hz = t > 0 ? (uint64_t)t : 100;
	}
	if (hz == 100)
		return ticks * 10000000ULL;
	return ticks / hz * NS_PER_S + ticks % hz * NS_PER_S / hz;
}

int proc_io_parse(const char *buf, size_t len, struct proc_io *out)
{
	static const struct { const char *key; unsigned bit; size_t off; } keys[] = {
		{ "rchar:", 1, offsetof(struct proc_io, rchar) },
		{ "wchar:", 2, offsetof(struct proc_io, wchar) },
		{ "read_bytes:", 4, offsetof(struct proc_io, read_bytes) },
		{ "write_bytes:", 8, offsetof(struct proc_io, write_bytes) },
	};
	struct proc_io io;
	unsigned have = 0;
	memset(&io, 0, sizeof(io));
	const char *p = buf, *end = buf + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		const char *colon = memchr(p, ':', (size_t)(le - p));
		size_t klen = colon ? (size_t)(colon - p) + 1 : 0;
		for (size_t i = 0; colon && i < ARRAY_SIZE(keys); i++) {
			if (strlen(keys[i].key) != klen || memcmp(p, keys[i].key, klen) != 0)
				continue;
			if (have & keys[i].bit)
				return -EINVAL;
			if (kv_value_u64(colon + 1, le, (uint64_t *)((char *)&io + keys[i].off)) < 0)
				return -EINVAL;
			have |= keys[i].bit;
			break;
		}
		p = le + 1;
	}
	if ((have & 12) != 12)
		return -EINVAL;
	*out = io;
	return 0;
}

int proc_cmdline_join(const char *buf, size_t len, char *out, size_t n)
{
	size_t o = 0;
	int args = 0;
	if (n == 0)
		return 0;
	while (len > 0 && buf[len - 1] == '\0')
		len--;
	if (len > 0)
		args = 1;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)buf[i];
		if (c == '\0')
			args++;
		if (o + 1 >= n)
			continue;
		out[o++] = c == '\0' ? ' ' : (c < 0x20 || c == 0x7f) ? '?' : (char)c;
	}
	out[o] = '\0';
	return args;
}

int proc_cmdline_quote(const char *buf, size_t len, struct buf *out, size_t max)
{
	struct buf word = { 0 };
	int args = 0;
	size_t arg_max = max / 8 > 64 ? max / 8 : 64;
	while (len > 0 && buf[len - 1] == '\0')
		len--;
	for (size_t i = 0; i < len;) {
		size_t end = i;
		while (end < len && buf[end] != '\0')
			end++;
		size_t keep = end - i > arg_max ? arg_max : end - i;
		buf_reset(&word);
		for (size_t k = i; k < i + keep; k++) {
			unsigned char c = (unsigned char)buf[k];
			buf_putc(&word, c < 0x20 || c == 0x7f ? '?' : (char)c);
		}
		size_t before = out->len;
		if (args)
			buf_putc(out, ' ');
		buf_put_shell_word(out, buf_str(&word));
		if (keep < end - i)
			buf_printf(out, "[+%zu bytes]", end - i - keep);
		if (out->len > max) {
			size_t more = 1;
			for (size_t k = i; k < len; k++)
				more += buf[k] == '\0';
			out->len = before;
			out->p[before] = '\0';
			buf_printf(out, " ... (%zu more argument%s)", more, more == 1 ? "" : "s");
			break;
		}
		args++;
		i = end + 1;
	}
	buf_release(&word);
	return args;
}

int meminfo_parse(const char *buf, size_t len, struct meminfo *out)
{
	struct meminfo m;
	unsigned have = 0;
	const char *p = buf, *end = buf + len;
	while (p < end && have != 3) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		if (le - p > 9 && memcmp(p, "MemTotal:", 9) == 0) {
			if (kv_value_u64(p + 9, le, &m.total) < 0)
				return -EINVAL;
			have |= 1;
		} else if (le - p > 13 && memcmp(p, "MemAvailable:", 13) == 0) {
			if (kv_value_u64(p + 13, le, &m.available) < 0)
				return -EINVAL;
			have |= 2;
		}
		p = le + 1;
	}
	if (have != 3)
		return -EINVAL;
	*out = m;
	return 0;
}

void proc_reader_init(struct proc_reader *r)
{
	memset(r, 0, sizeof(*r));
	r->status = (struct rfile)RFILE_INIT;
	r->stat = (struct rfile)RFILE_INIT;
	r->io = (struct rfile)RFILE_INIT;
	r->statm_fd = r->task_fd = -1;
	r->reuse_max = UINT_MAX;
}

void proc_reader_max_reuse(struct proc_reader *r, unsigned n)
{
	r->reuse_max = n;
}

int proc_reader_open(struct proc_reader *r, pid_t pid)
{
	char path[PATH_MAX];
	proc_reader_init(r);
	r->pid = pid;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	int e = rfile_open(&r->status, path);
	if (e < 0)
		return e;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	rfile_open(&r->stat, path);	/* optional: without it no context counters */
	/* Both optional: without them status is simply read every time. */
	if (sysroot_path(path, sizeof(path), "/proc/%d/statm", (int)pid) == 0)
		r->statm_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (sysroot_path(path, sizeof(path), "/proc/%d/task", (int)pid) == 0)
		r->task_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return 0;
}

/* statm's bytes and the thread count, or 0 when they cannot be read (then status is
 * read). -ESRCH when the process is gone. */
static int read_key(struct proc_reader *r, char *key, size_t n, size_t *len)
{
	struct stat sb;
	if (r->statm_fd < 0 || (r->task_fd < 0 && !r->thread_events))
		return 0;
	ssize_t m = pread(r->statm_fd, key, n - sizeof(sb.st_nlink), 0);
	if (m < 0)
		return errno == ESRCH || errno == ENOENT ? -ESRCH : 0;
	if (m == 0)
		return 0;
	if (r->thread_events) {
		*len = (size_t)m;
		return 1;
	}
	if (fstat(r->task_fd, &sb) < 0)
		return 0;
	memcpy(key + m, &sb.st_nlink, sizeof(sb.st_nlink));
	*len = (size_t)m + sizeof(sb.st_nlink);
	return 1;
}

int proc_reader_read(struct proc_reader *r, struct proc_status *out)
{
	char before[sizeof(r->key)], after[sizeof(r->key)];
	size_t blen = 0, alen = 0;
	r->reads++;
	/* With no reuse allowed the key would only cost two more reads. */
	int kb = r->reuse_max ? read_key(r, before, sizeof(before), &blen) : 0;
	if (kb < 0)
		return kb;
	if (kb && r->cached && blen == r->key_len && memcmp(before, r->key, blen) == 0 &&
	    r->reuses < r->reuse_max) {
		r->reuses++;
		*out = r->last;
		return 0;
	}
	r->cached = 0;
	r->status_reads++;
	int e = rfile_read(&r->status);
	if (e < 0)
		return e == -ENOENT ? -ESRCH : e;
	e = proc_status_parse(r->status.buf, r->status.len, out);
	if (e < 0)
		return e == -ENODATA ? -ESRCH : e;
	if (kb && read_key(r, after, sizeof(after), &alen) > 0 && alen == blen &&
	    memcmp(before, after, blen) == 0) {
		memcpy(r->key, before, blen);
		r->key_len = blen;
		r->last = *out;
		r->cached = 1;
		r->reuses = 0;
	}
	return 0;
}

void proc_reader_use_thread_events(struct proc_reader *r, int on)
{
	r->thread_events = on;
	r->cached = 0;
}

void proc_reader_invalidate(struct proc_reader *r)
{
	r->cached = 0;
}

int proc_reader_read_stat(struct proc_reader *r, struct proc_stat *out)
{
	if (r->stat.fd < 0)
		return -ENOENT;
	int e = rfile_read(&r->stat);
	if (e < 0)
		return e == -ENOENT ? -ESRCH : e;
	return proc_stat_parse(r->stat.buf, r->stat.len, out);
}

int proc_reader_read_io(struct proc_reader *r, struct proc_io *out)
{
	int e;
	if (r->io_err)
		return r->io_err;
	if (r->io.fd < 0) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/io", (int)r->pid);
		if ((e = rfile_open(&r->io, path)) < 0) {
			if (e == -ENOENT || e == -ESRCH)
				return -ESRCH;
			r->io_err = e;
			return e;
		}
	}
	/* Permission is checked at each read too (the process may have changed its
	 * credentials, e.g. a setuid exec). */
	if ((e = rfile_read(&r->io)) < 0) {
		if (e == -ENOENT || e == -ESRCH)
			return -ESRCH;
		r->io_err = e;
		return e;
	}
	return proc_io_parse(r->io.buf, r->io.len, out);
}

void proc_reader_close(struct proc_reader *r)
{
	rfile_close(&r->status);
	rfile_close(&r->stat);
	rfile_close(&r->io);
	if (r->statm_fd >= 0)
		close(r->statm_fd);
	if (r->task_fd >= 0)
		close(r->task_fd);
	r->statm_fd = r->task_fd = -1;
	r->cached = 0;
}

int proc_read_stat(pid_t pid, struct proc_stat *out)
{
	char path[64], *buf;
	size_t len;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	int e = read_file(path, &buf, &len);
	if (e < 0)
		return e;
	e = proc_stat_parse(buf, len, out);
	free(buf);
	return e;
}

/* pid's raw command line (NUL-separated), malloc'ed into *buf. */
static int read_cmdline(pid_t pid, char **buf, size_t *len)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	return read_file(path, buf, len);
}

int proc_read_cmdline(pid_t pid, char *out, size_t n)
{
	char *buf;
	size_t len;
	int e = read_cmdline(pid, &buf, &len);
	if (e < 0)
		return e;
	proc_cmdline_join(buf, len, out, n);
	free(buf);
	return 0;
}

int proc_read_cmdline_quoted(pid_t pid, struct buf *out, size_t max)
{
	char *buf;
	size_t len;
	int e = read_cmdline(pid, &buf, &len);
	if (e < 0)
		return e;
	proc_cmdline_quote(buf, len, out, max);
	free(buf);
	return 0;
}

int proc_read_boot_id(char *out, size_t n)
{
	char *buf;
	size_t len;
	int e = read_file("/proc/sys/kernel/random/boot_id", &buf, &len);
	if (e < 0)
		return e;
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
		buf[--len] = '\0';
	strlcpy_rsw(out, buf, n);
	free(buf);
	return 0;
}

int proc_status_uid_parse(const char *buf, size_t len, uid_t *out)
{
	size_t i = 0;
	while (i < len) {
		const char *line = buf + i;
		const char *nl = memchr(line, '\n', len - i);
		size_t ll = nl ? (size_t)(nl - line) : len - i;
		if (ll > 4 && memcmp(line, "Uid:", 4) == 0) {
			size_t j = 4, k;
			while (j < ll && (line[j] == ' ' || line[j] == '\t'))
				j++;
			for (k = j; k < ll && line[k] >= '0' && line[k] <= '9'; k++)
				;
			uint64_t v;
			if (k == j || (k < ll && line[k] != ' ' && line[k] != '\t') ||
			    parse_u64_n(line + j, k - j, &v) < 0 || v > UINT32_MAX)
				return -EINVAL;
			*out = (uid_t)v;
			return 0;
		}
		i += ll + 1;
	}
	return -EINVAL;
}

int proc_cgroup_within(const char *buf, size_t len, const char *path)
{
	size_t plen = strlen(path);
	while (plen > 1 && path[plen - 1] == '/')
		plen--;
	size_t i = 0;
	while (i < len) {
		const char *line = buf + i;
		const char *nl = memchr(line, '\n', len - i);
		size_t ll = nl ? (size_t)(nl - line) : len - i;
		/* ID:CONTROLLERS:PATH; the path may hold ':' */
		const char *c1 = memchr(line, ':', ll);
		const char *c2 = c1 ? memchr(c1 + 1, ':', ll - (size_t)(c1 + 1 - line)) : NULL;
		if (c2) {
			const char *p = c2 + 1;
			size_t n = ll - (size_t)(p - line);
			if (n >= plen && memcmp(p, path, plen) == 0 &&
			    (n == plen || p[plen] == '/' || plen == 1))
				return 1;
		}
		i += ll + 1;
	}
	return 0;
}

int proc_read_uid(pid_t pid, uid_t *out)
{
	char path[64], *buf;
	size_t len;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	int e = read_file(path, &buf, &len);
	if (e < 0)
		return e;
	e = proc_status_uid_parse(buf, len, out);
	free(buf);
	return e;
}

int proc_in_cgroup(pid_t pid, const char *cgroup)
{
	char path[64], *buf;
	size_t len;
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	int e = read_file(path, &buf, &len);
	if (e < 0)
		return e;
	e = proc_cgroup_within(buf, len, cgroup);
	free(buf);
	return e;
}

int proc_maps_line_match(const char *line, size_t len, const char *prefix, char *range,
			 size_t n)
{
	/* START-END PERMS OFFSET DEV INODE [PATH] */
	const char *end = line + len, *p = line, *f[5];
	size_t flen[5];
	for (int i = 0; i < 5; i++) {
		while (p < end && *p == ' ')
			p++;
		f[i] = p;
		while (p < end && *p != ' ')
			p++;
		flen[i] = (size_t)(p - f[i]);
		if (!flen[i])
			return -EINVAL;
	}
	while (p < end && *p == ' ')
		p++;
	if (p == end || *p != '/')
		return 0;	/* anonymous, or [heap] and its kin */
	if (flen[1] != 4 || f[1][2] != 'x')
		return 0;
	const char *name = p;
	for (const char *q = p; q < end; q++)
		if (*q == '/')
			name = q + 1;
	size_t plen = strlen(prefix);
	if ((size_t)(end - name) < plen || memcmp(name, prefix, plen) != 0)
		return 0;
	if (!memchr(f[0], '-', flen[0]) || flen[0] >= n)
		return -EINVAL;
	for (size_t i = 0; i < flen[0]; i++)
		if (!isxdigit((unsigned char)f[0][i]) && f[0][i] != '-')
			return -EINVAL;
	memcpy(range, f[0], flen[0]);
	range[flen[0]] = 0;
	return 1;
}

int proc_open_mapped(pid_t pid, const char *prefix)
{
	char path[PATH_MAX], range[64];
	if (sysroot_path(path, sizeof(path), "/proc/%d/maps", (int)pid) < 0)
		return -ENAMETOOLONG;
	FILE *f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int found = 0;
	while (!found && (len = getline(&line, &cap, f)) > 0) {
		if (line[len - 1] == '\n')
			len--;
		found = proc_maps_line_match(line, (size_t)len, prefix, range, sizeof(range)) == 1;
	}
	free(line);
	fclose(f);
	if (!found)
		return -ENOENT;
	if (sysroot_path(path, sizeof(path), "/proc/%d/map_files/%s", (int)pid, range) < 0)
		return -ENAMETOOLONG;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}
