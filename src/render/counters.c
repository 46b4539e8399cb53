#include "render/counters.h"
#include "base/fmt.h"
#include "base/parse.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && strcmp(s + a - b, suffix) == 0;
}

enum counter_unit counter_unit_of(const char *name)
{
	if (!name)
		return COUNTER_PLAIN;
	if (ends_with(name, "_bytes") || strstr(name, "bytes"))
		return COUNTER_BYTES;
	if (ends_with(name, "_seconds"))
		return COUNTER_SECONDS;
	return COUNTER_PLAIN;
}

const char *counter_value_text(char *out, size_t n, const char *name, long long value)
{
	char v[48];
	/* the magnitude as unsigned, so LLONG_MIN has one too */
	unsigned long long mag = value < 0 ? 0ULL - (unsigned long long)value : (unsigned long long)value;
	const char *sign = value < 0 ? "-" : "";
	switch (counter_unit_of(name)) {
	case COUNTER_BYTES:
		snprintf(out, n, "%s%s", sign, fmt_bytes(v, sizeof(v), mag));
		break;
	case COUNTER_SECONDS:
		if (mag > (unsigned long long)INT64_MAX / NS_PER_S)
			snprintf(out, n, "%s%llus", sign, mag);
		else
			snprintf(out, n, "%s%s", sign, fmt_duration(v, sizeof(v), (int64_t)mag * NS_PER_S));
		break;
	default:
		snprintf(out, n, "%lld", value);
	}
	return out;
}

void counter_series_add(struct counter_series **s, size_t *n, const char *name, int64_t t,
			long long v)
{
	size_t i;
	for (i = 0; i < *n; i++)
		if (strcmp((*s)[i].name, name) == 0)
			break;
	if (i == *n) {
		*s = xrealloc(*s, (*n + 1) * sizeof(**s));
		memset(&(*s)[i], 0, sizeof(**s));
		strlcpy_rsw((*s)[i].name, name, sizeof((*s)[i].name));
		(*n)++;
	}
	struct counter_series *c = &(*s)[i];
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 64;
		c->t = xrealloc(c->t, c->cap * sizeof(*c->t));
		c->v = xrealloc(c->v, c->cap * sizeof(*c->v));
	}
	c->t[c->n] = t;
	c->v[c->n] = v;
	c->n++;
}

void counter_series_free(struct counter_series *s, size_t n)
{
	for (size_t i = 0; s && i < n; i++) {
		free(s[i].t);
		free(s[i].v);
	}
	free(s);
}
