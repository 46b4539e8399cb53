#include "source/kmsg.h"
#include "base/parse.h"
#include "base/rfile.h"
#include "base/sysroot.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

size_t kmsg_unescape(const char *src, size_t len, char *dst, size_t n)
{
	size_t o = 0;
	for (size_t i = 0; i < len; i++) {
		char c = src[i];
		int hi, lo;
		if (c == '\\' && i + 3 < len && src[i + 1] == 'x' &&
		    (hi = hexval(src[i + 2])) >= 0 && (lo = hexval(src[i + 3])) >= 0) {
			c = (char)(hi * 16 + lo);
			i += 3;
		}
		if (o + 1 < n)
			dst[o] = c;
		o++;
	}
	if (n > 0)
		dst[o < n ? o : n - 1] = '\0';
	return o;
}

/* The next comma-separated header field of [*p, end). */
static bool next_field(const char **p, const char *end, const char **f, size_t *fl)
{
	if (*p > end)
		return false;
	const char *c = memchr(*p, ',', (size_t)(end - *p));
	const char *fe = c ? c : end;
	*f = *p;
	*fl = (size_t)(fe - *p);
	*p = fe + 1;
	return true;
}

int kmsg_record_parse(const char *buf, size_t len, struct kmsg_record *out)
{
	struct kmsg_record *rec = malloc(sizeof(*rec));
	const char *end = buf + len;
	const char *nl = memchr(buf, '\n', len);
	const char *le = nl ? nl : end;
	const char *semi = memchr(buf, ';', (size_t)(le - buf));
	const char *p = buf, *f;
	size_t fl;
	uint64_t v;
	int e = -EINVAL;
	if (!rec)
		return -ENOMEM;
	memset(rec, 0, offsetof(struct kmsg_record, text));
	if (!semi)
		goto out;
	if (!next_field(&p, semi, &f, &fl) || parse_u64_n(f, fl, &v) < 0 || v > UINT32_MAX)
		goto out;
	rec->prio = (unsigned)v;
	if (!next_field(&p, semi, &f, &fl) || parse_u64_n(f, fl, &rec->seq) < 0)
		goto out;
	if (!next_field(&p, semi, &f, &fl) || parse_u64_n(f, fl, &rec->usec) < 0)
		goto out;
	if (!next_field(&p, semi, &f, &fl) || fl != 1 || !strchr("-c+", f[0]))
		goto out;
	rec->cont = f[0] == 'c';
	/* further header fields (caller ids and the like) are allowed and skipped */
	size_t need = kmsg_unescape(semi + 1, (size_t)(le - semi - 1), rec->text,
				    sizeof(rec->text));
	rec->truncated = need >= sizeof(rec->text);
	rec->text_len = rec->truncated ? sizeof(rec->text) - 1 : need;
	rec->dict[0] = '\0';
	size_t dl = 0;
	for (p = le + 1; p < end;) {
		const char *ce = memchr(p, '\n', (size_t)(end - p));
		if (!ce)
			ce = end;
		if (ce == p || *p != ' ')
			goto out;
		if (dl > 0 && dl + 1 < sizeof(rec->dict))
			rec->dict[dl++] = '\n';
		if (dl + 1 < sizeof(rec->dict))
			dl += kmsg_unescape(p + 1, (size_t)(ce - p - 1), rec->dict + dl,
					    sizeof(rec->dict) - dl);
		if (dl >= sizeof(rec->dict))
			dl = sizeof(rec->dict) - 1;
		rec->dict[dl] = '\0';
		p = ce + 1;
	}
	memcpy(out, rec, sizeof(*rec));
	e = 0;
out:
	free(rec);
	return e;
}

/* The last occurrence of needle in [s, s+len). */
static const char *find_last(const char *s, size_t len, const char *needle)
{
	size_t nl = strlen(needle);
	if (len < nl)
		return NULL;
	for (size_t i = len - nl + 1; i-- > 0;)
		if (memcmp(s + i, needle, nl) == 0)
			return s + i;
	return NULL;
}

static const char *find_first(const char *s, size_t len, const char *needle)
{
	return memmem(s, len, needle, strlen(needle));
}

static bool starts(const char *s, size_t len, const char *prefix)
{
	size_t pl = strlen(prefix);
	return len >= pl && memcmp(s, prefix, pl) == 0;
}

static void copy_str(char *dst, size_t n, const char *s, size_t len)
{
	if (len >= n)
		len = n - 1;
	memcpy(dst, s, len);
	dst[len] = '\0';
}

static int parse_pid_n(const char *s, size_t len, pid_t *out)
{
	uint64_t v;
	if (parse_u64_n(s, len, &v) < 0 || v == 0 || v > INT32_MAX)
		return -EINVAL;
	*out = (pid_t)v;
	return 0;
}

/* "NNNkB" to bytes. */
static int parse_kb(const char *s, size_t len, uint64_t *out)
{
	uint64_t v;
	if (len < 3 || memcmp(s + len - 2, "kB", 2) != 0 || parse_u64_n(s, len - 2, &v) < 0)
		return -EINVAL;
	if (v > UINT64_MAX / 1024)
		return -ERANGE;
	*out = v * 1024;
	return 0;
}

/* The "key:value" fields after the comm of a kill or reaper line, separated by spaces
 * with an optional trailing comma. Unknown keys are skipped. */
static int parse_oom_fields(const char *p, const char *end, struct kmsg_oom *o)
{
	static const struct { const char *key; unsigned bit; size_t off; } kb[] = {
		{ "total-vm", KMSG_F_TOTAL_VM, offsetof(struct kmsg_oom, total_vm) },
		{ "anon-rss", KMSG_F_ANON_RSS, offsetof(struct kmsg_oom, anon_rss) },
		{ "file-rss", KMSG_F_FILE_RSS, offsetof(struct kmsg_oom, file_rss) },
		{ "shmem-rss", KMSG_F_SHMEM_RSS, offsetof(struct kmsg_oom, shmem_rss) },
		{ "pgtables", KMSG_F_PGTABLES, offsetof(struct kmsg_oom, pgtables) },
	};
	while (p < end) {
		while (p < end && *p == ' ')
			p++;
		if (p == end)
			break;
		const char *t = p;
		while (p < end && *p != ' ')
			p++;
		const char *te = p;
		if (te[-1] == ',')
			te--;
		const char *colon = memchr(t, ':', (size_t)(te - t));
		if (!colon)
			return -EINVAL;
		size_t kl = (size_t)(colon - t);
		const char *v = colon + 1;
		size_t vl = (size_t)(te - v);
		uint64_t n;
		if (kl == 3 && memcmp(t, "UID", 3) == 0) {
			if (parse_u64_n(v, vl, &n) < 0 || n > UINT32_MAX)
				return -EINVAL;
			o->uid = (uint32_t)n;
			o->have |= KMSG_F_UID;
			continue;
		}
		if (kl == 13 && memcmp(t, "oom_score_adj", 13) == 0) {
			int neg = vl > 0 && v[0] == '-';
			if (parse_u64_n(v + neg, vl - (size_t)neg, &n) < 0 || n > 1000)
				return -EINVAL;
			o->oom_score_adj = neg ? -(int)n : (int)n;
			o->have |= KMSG_F_OOM_SCORE_ADJ;
			continue;
		}
		for (size_t i = 0; i < sizeof(kb) / sizeof(kb[0]); i++) {
			if (strlen(kb[i].key) != kl || memcmp(kb[i].key, t, kl) != 0)
				continue;
			int e = parse_kb(v, vl, &n);
			if (e < 0)
				return e;
			memcpy((char *)o + kb[i].off, &n, sizeof(n));
			o->have |= kb[i].bit;
			break;
		}
	}
	return 0;
}

/* "PID (COMM)<anchor>...": pid and comm, comm ending at the last anchor. Returns the
 * position after the anchor's ')' */
static const char *parse_pid_comm(const char *p, const char *end, const char *anchor,
				  struct kmsg_oom *o)
{
	const char *sp = memchr(p, ' ', (size_t)(end - p));
	if (!sp || end - sp < 2 || sp[1] != '(' || parse_pid_n(p, (size_t)(sp - p), &o->pid) < 0)
		return NULL;
	const char *c = sp + 2;
	const char *a = find_last(c, (size_t)(end - c), anchor);
	if (!a)
		return NULL;
	copy_str(o->comm, sizeof(o->comm), c, (size_t)(a - c));
	return a + 1;
}

static int parse_context(const char *s, const char *end, struct kmsg_oom *o)
{
	const char *p = s + strlen("oom-kill:constraint=");
	const char *c = memchr(p, ',', (size_t)(end - p));
	if (!c)
		return -EINVAL;
	copy_str(o->constraint, sizeof(o->constraint), p, (size_t)(c - p));
	o->memcg = (size_t)(c - p) == 16 && memcmp(p, "CONSTRAINT_MEMCG", 16) == 0;
	const char *tm = find_first(c, (size_t)(end - c), ",task_memcg=");
	const char *uid = find_last(c, (size_t)(end - c), ",uid=");
	if (!tm || !uid || uid < tm)
		return -EINVAL;
	const char *pid = find_last(tm, (size_t)(uid - tm), ",pid=");
	if (!pid)
		return -EINVAL;
	const char *task = find_last(tm, (size_t)(pid - tm), ",task=");
	if (!task)
		return -EINVAL;
	uint64_t u;
	if (parse_u64_n(uid + 5, (size_t)(end - uid - 5), &u) < 0 || u > UINT32_MAX ||
	    parse_pid_n(pid + 5, (size_t)(uid - pid - 5), &o->pid) < 0)
		return -EINVAL;
	o->uid = (uint32_t)u;
	o->have |= KMSG_F_UID;
	copy_str(o->comm, sizeof(o->comm), task + 6, (size_t)(pid - task - 6));
	copy_str(o->task_memcg, sizeof(o->task_memcg), tm + 12, (size_t)(task - tm - 12));
	const char *om = find_first(c, (size_t)(tm - c), ",oom_memcg=");
	if (om) {
		copy_str(o->oom_memcg, sizeof(o->oom_memcg), om + 11, (size_t)(tm - om - 11));
		o->have |= KMSG_F_OOM_MEMCG;
	}
	return 0;
}

int kmsg_oom_parse(const char *text, size_t len, struct kmsg_oom *out)
{
	static const char killed[] = ": Killed process ";
	static const char reaped[] = "oom_reaper: reaped process ";
	static const char invoked[] = " invoked oom-killer: ";
	struct kmsg_oom *o = calloc(1, sizeof(*o));
	const char *end = text + len, *k, *p;
	int e = -EINVAL;
	if (!o)
		return -ENOMEM;
	while (end > text && end[-1] == '\n')
		end--;
	len = (size_t)(end - text);
	if (starts(text, len, "oom-kill:constraint=")) {
		o->kind = KMSG_OOM_CONTEXT;
		e = parse_context(text, end, o);
	} else if (starts(text, len, reaped)) {
		o->kind = KMSG_OOM_REAPED;
		p = parse_pid_comm(text + sizeof(reaped) - 1, end, "), now ", o);
		if (p)
			e = parse_oom_fields(p + strlen(", now"), end, o);
	} else if ((k = find_first(text, len, killed)) != NULL &&
		   (starts(text, len, "Memory cgroup out of memory") ||
		    starts(text, len, "Out of memory"))) {
		o->kind = KMSG_OOM_KILLED;
		o->memcg = text[0] == 'M';
		o->have |= KMSG_F_SCOPE;
		p = parse_pid_comm(k + sizeof(killed) - 1, end, ") total-vm:", o);
		if (p)
			e = parse_oom_fields(p, end, o);
		if (e == 0 && (o->have & (KMSG_F_TOTAL_VM | KMSG_F_ANON_RSS)) !=
			      (KMSG_F_TOTAL_VM | KMSG_F_ANON_RSS))
			e = -EINVAL;
	} else if ((k = find_first(text, len, invoked)) != NULL) {
		o->kind = KMSG_OOM_INVOKED;
		copy_str(o->comm, sizeof(o->comm), text, (size_t)(k - text));
		e = 0;
	} else {
		e = -ENOENT;
	}
	if (e == 0)
		memcpy(out, o, sizeof(*o));
	free(o);
	return e;
}

void kmsg_clock_note(struct kmsg_clock *c, uint64_t usec, int64_t mono_ns)
{
	int64_t off = mono_ns - (int64_t)(usec * 1000);
	if (c->have) {
		int64_t since = mono_ns > c->at_ns ? mono_ns - c->at_ns : 0;
		int64_t allowed = c->offset_ns + since / (1000000 / KMSG_CLOCK_DRIFT_PPM);
		if (off > allowed)
			off = allowed;
	}
	c->have = 1;
	c->offset_ns = off;
	c->at_ns = mono_ns;
}

int64_t kmsg_clock_mono(const struct kmsg_clock *c, uint64_t usec)
{
	return (int64_t)(usec * 1000) + (c->have ? c->offset_ns : 0);
}

/* ---- Reader ---------------------------------------------------------------------- */

int kmsg_reader_open(struct kmsg_reader *r, unsigned flags)
{
	char path[PATH_MAX];
	struct stat st;
	r->fd = -1;
	r->lost = 0;
	r->len = 0;
	int e = sysroot_path(path, sizeof(path), "/dev/kmsg");
	if (e < 0)
		return e;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 ||
	    (!(flags & KMSG_FROM_START) && lseek(fd, 0, SEEK_END) < 0)) {
		e = -errno;
		close(fd);
		return e;
	}
	r->fd = fd;
	r->stream = !S_ISCHR(st.st_mode);
	return 0;
}

void kmsg_reader_open_fd(struct kmsg_reader *r, int fd)
{
	r->fd = fd;
	r->stream = true;
	r->lost = 0;
	r->len = 0;
}

/* In stream mode: the length of the first whole record in buf (its first line and the
 * continuation lines after it), or 0 when more bytes are needed to know. */
static size_t stream_record_len(const char *buf, size_t len, bool eof)
{
	const char *nl = memchr(buf, '\n', len);
	while (nl) {
		size_t next = (size_t)(nl - buf) + 1;
		if (next == len)
			return eof ? len : 0;
		if (buf[next] != ' ')
			return next;
		nl = memchr(buf + next, '\n', len - next);
	}
	return eof ? len : 0;
}

static int next_stream(struct kmsg_reader *r, struct kmsg_record *out)
{
	bool eof = false;
	for (;;) {
		size_t n = r->len ? stream_record_len(r->buf, r->len, eof) : 0;
		if (n > 0) {
			int e = kmsg_record_parse(r->buf, n, out);
			memmove(r->buf, r->buf + n, r->len - n);
			r->len -= n;
			return e;
		}
		if (eof)
			return -EAGAIN;
		if (r->len == sizeof(r->buf)) {	/* a record longer than any real one */
			r->len = 0;
			return -EINVAL;
		}
		ssize_t got = read(r->fd, r->buf + r->len, sizeof(r->buf) - r->len);
		if (got > 0) {
			r->len += (size_t)got;
		} else if (got == 0) {
			eof = true;
		} else if (errno == EAGAIN) {
			return -EAGAIN;
		} else if (errno != EINTR) {
			return -errno;
		}
	}
}

int kmsg_reader_next(struct kmsg_reader *r, struct kmsg_record *out)
{
	if (r->fd < 0)
		return -EBADF;
	if (r->stream)
		return next_stream(r, out);
	for (;;) {
		ssize_t n = read(r->fd, r->buf, sizeof(r->buf));
		if (n > 0)
			return kmsg_record_parse(r->buf, (size_t)n, out);
		if (n == 0)
			return -EAGAIN;
		if (errno == EPIPE) {
			r->lost++;	/* the position moved on to the oldest record kept */
			continue;
		}
		if (errno != EINTR)
			return -errno;
	}
}

void kmsg_reader_close(struct kmsg_reader *r)
{
	if (r && r->fd >= 0) {
		close(r->fd);
		r->fd = -1;
	}
}

int vmstat_oom_kill_parse(const char *buf, size_t len, uint64_t *out)
{
	const char *p = buf, *end = buf + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		if (le - p > 9 && memcmp(p, "oom_kill ", 9) == 0)
			return parse_u64_n(p + 9, (size_t)(le - p - 9), out) < 0 ? -EINVAL : 0;
		p = le + 1;
	}
	return -ENOENT;
}

int vmstat_read_oom_kill(uint64_t *out)
{
	char *buf;
	size_t len;
	int e = read_file("/proc/vmstat", &buf, &len);
	if (e < 0)
		return e;
	e = vmstat_oom_kill_parse(buf, len, out);
	free(buf);
	return e;
}
