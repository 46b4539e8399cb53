#include "source/psi.h"
#include "base/parse.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* "12.34" -> 1234: digits, '.', exactly two digits; at most 100.00. */
static int parse_avg(const char *s, size_t len, uint32_t *out)
{
	uint64_t whole, frac;
	if (len < 4 || s[len - 3] != '.')
		return -EINVAL;
	if (parse_u64_n(s, len - 3, &whole) < 0 || parse_u64_n(s + len - 2, 2, &frac) < 0)
		return -EINVAL;
	if (whole > 100 || (whole == 100 && frac != 0))
		return -ERANGE;
	*out = (uint32_t)(whole * 100 + frac);
	return 0;
}

/* One line after its "some"/"full" word: four space-separated key=value fields in the
 * kernel's order. */
static int parse_line(const char *p, const char *end, struct psi_line *out)
{
	static const char *const keys[] = { "avg10=", "avg60=", "avg300=", "total=" };
	struct psi_line l;
	for (size_t i = 0; i < 4; i++) {
		size_t kl = strlen(keys[i]);
		if (p >= end || *p != ' ')
			return -EINVAL;
		p++;
		const char *v = p + kl;
		if ((size_t)(end - p) < kl || memcmp(p, keys[i], kl) != 0)
			return -EINVAL;
		const char *ve = v;
		while (ve < end && *ve != ' ')
			ve++;
		int e;
		if (i < 3) {
			uint32_t *dst = i == 0 ? &l.avg10 : i == 1 ? &l.avg60 : &l.avg300;
			e = parse_avg(v, (size_t)(ve - v), dst);
		} else {
			e = parse_u64_n(v, (size_t)(ve - v), &l.total_us);
		}
		if (e < 0)
			return e;
		p = ve;
	}
	if (p != end)
		return -EINVAL;
	*out = l;
	return 0;
}

int psi_parse(const char *buf, size_t len, struct psi *out)
{
	struct psi ps;
	bool some = false;
	const char *p = buf, *end = buf + len;
	memset(&ps, 0, sizeof(ps));
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		int e;
		if (le == p) {
			p = le + 1;
			continue;
		}
		if (le - p >= 4 && memcmp(p, "some", 4) == 0 && !some) {
			if ((e = parse_line(p + 4, le, &ps.some)) < 0)
				return e;
			some = true;
		} else if (le - p >= 4 && memcmp(p, "full", 4) == 0 && !ps.has_full) {
			if ((e = parse_line(p + 4, le, &ps.full)) < 0)
				return e;
			ps.has_full = true;
		} else {
			return -EINVAL;
		}
		p = le + 1;
	}
	if (!some)
		return -EINVAL;
	*out = ps;
	return 0;
}

static int map_absent(int e)
{
	return e == -EOPNOTSUPP || e == -ENOTSUP ? -ENOENT : e;
}

int psi_reader_open_system(struct psi_reader *r)
{
	r->f = (struct rfile)RFILE_INIT;
	return map_absent(rfile_open(&r->f, "/proc/pressure/memory"));
}

int psi_reader_open_cgroup(struct psi_reader *r, const char *cgdir)
{
	char path[4096];
	r->f = (struct rfile)RFILE_INIT;
	int w = snprintf(path, sizeof(path), "%s/memory.pressure", cgdir);
	if (w < 0 || (size_t)w >= sizeof(path))
		return -ENAMETOOLONG;
	return map_absent(rfile_open_abs(&r->f, path));
}

int psi_reader_read(struct psi_reader *r, struct psi *out)
{
	int e = map_absent(rfile_read(&r->f));
	if (e < 0)
		return e;
	return psi_parse(r->f.buf, r->f.len, out);
}

void psi_reader_close(struct psi_reader *r)
{
	if (r)
		rfile_close(&r->f);
}
