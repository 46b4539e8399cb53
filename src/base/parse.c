#include "base/parse.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int parse_u64_n(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;
	if (len == 0)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		unsigned d = (unsigned)(s[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

int parse_u64(const char *s, uint64_t *out)
{
	return parse_u64_n(s, strlen(s), out);
}

int parse_i64(const char *s, int64_t *out)
{
	int neg = s[0] == '-';
	uint64_t v;
	int r = parse_u64(s + neg, &v);
	if (r < 0)
		return r;
	if (v > (uint64_t)INT64_MAX + (uint64_t)neg)
		return -ERANGE;
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return 0;
}

int parse_pid(const char *s, pid_t *out)
{
	uint64_t v = 0;
	int r = parse_u64(s, &v);
	if (r == -ERANGE)
		return r;
	if (r < 0 || v == 0)
		return -EINVAL;
	if (v > INT32_MAX)
		return -ERANGE;
	*out = (pid_t)v;
	return 0;
}

/* Split "12.5ms" into the number 12.5 and the unit "ms". The number is plain decimal:
 * digits, at most one '.', at least one digit; no sign, exponent, hex, inf or nan. */
static int split_number(const char *s, double *num, const char **unit)
{
	size_t i = 0, digits = 0;
	int dot = 0;
	for (; s[i]; i++) {
		if (s[i] >= '0' && s[i] <= '9')
			digits++;
		else if (s[i] == '.' && !dot)
			dot = 1;
		else
			break;
	}
	if (digits == 0)
		return -EINVAL;
	char tmp[64];
	if (i >= sizeof(tmp))
		return -ERANGE;
	memcpy(tmp, s, i);
	tmp[i] = '\0';
	char *end;
	errno = 0;
	double v = strtod(tmp, &end);
	if (*end || errno == ERANGE || !isfinite(v))
		return -ERANGE;
	*num = v;
	*unit = s + i;
	return 0;
}

int parse_duration_ns(const char *s, int64_t *out)
{
	static const struct { const char *name; double ns; } units[] = {
		{ "", NS_PER_S }, { "us", 1e3 }, { "ms", 1e6 }, { "s", NS_PER_S },
		{ "m", 60e9 }, { "h", 3600e9 },
	};
	double v;
	const char *unit;
	int r = split_number(s, &v, &unit);
	if (r < 0)
		return r;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(unit, units[i].name) != 0)
			continue;
		double ns = v * units[i].ns;
		if (ns > 100.0 * 365 * 24 * 3600 * NS_PER_S)
			return -ERANGE;
		*out = (int64_t)llround(ns);
		return 0;
	}
	return -EINVAL;
}

int parse_age_ns(const char *s, int64_t *out)
{
	static const struct { char unit; double ns; } units[] = {
		{ 's', NS_PER_S }, { 'm', 60.0 * NS_PER_S }, { 'h', 3600.0 * NS_PER_S },
		{ 'd', 86400.0 * NS_PER_S }, { 'w', 604800.0 * NS_PER_S },
	};
	double v;
	const char *unit;
	int r = split_number(s, &v, &unit);
	if (r < 0)
		return r;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (unit[0] != units[i].unit || unit[1])
			continue;
		double ns = v * units[i].ns;
		if (ns > 100.0 * 365 * 24 * 3600 * NS_PER_S)
			return -ERANGE;
		*out = (int64_t)llround(ns);
		return 0;
	}
	return -EINVAL;
}

int parse_size(const char *s, uint64_t *out)
{
	double v;
	const char *unit;
	int r = split_number(s, &v, &unit);
	if (r < 0)
		return r;
	double mult = 1;
	const char *p = unit;
	switch (*p) {
	case 'k': case 'K': mult = 1024.0; p++; break;
	case 'm': case 'M': mult = 1024.0 * 1024; p++; break;
	case 'g': case 'G': mult = 1024.0 * 1024 * 1024; p++; break;
	case 't': case 'T': mult = 1024.0 * 1024 * 1024 * 1024; p++; break;
	default: break;
	}
	if (p != unit && *p == 'i')
		p++;
	if (*p == 'B' || *p == 'b')
		p++;
	if (*p)
		return -EINVAL;
	double bytes = v * mult;
	if (bytes >= 18446744073709551616.0)
		return -ERANGE;
	*out = (uint64_t)llround(bytes);
	return 0;
}

int kv_value_u64(const char *v, const char *end, uint64_t *out)
{
	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	const char *d = v;
	while (d < end && *d >= '0' && *d <= '9')
		d++;
	uint64_t n;
	if (parse_u64_n(v, (size_t)(d - v), &n) < 0)
		return -EINVAL;
	while (d < end && *d == ' ')
		d++;
	if (d == end) {
		*out = n;
		return 0;
	}
	if (end - d == 2 && d[0] == 'k' && d[1] == 'B') {
		if (n > UINT64_MAX / 1024)
			return -ERANGE;
		*out = n * 1024;
		return 0;
	}
	return -EINVAL;
}

int kv_find_u64(const char *buf, size_t len, const char *key, uint64_t *out)
{
	size_t klen = strlen(key);
	const char *p = buf, *end = buf + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		if ((size_t)(le - p) >= klen && memcmp(p, key, klen) == 0)
			return kv_value_u64(p + klen, le, out);
		p = le + 1;
	}
	return -ENOENT;
}
