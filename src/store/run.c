#include "store/run.h"
#include "base/utf8.h"
#include "base/util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t samples_rss_at(const struct sample *s, size_t n, int64_t elapsed_ns)
{
	if (n == 0)
		return 0;
	size_t lo = 0, hi = n;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (s[mid].elapsed_ns <= elapsed_ns)
			lo = mid;
		else
			hi = mid;
	}
	return s[lo].mem.rss;
}

int event_is_process(const struct event *e)
{
	return strcmp(e->kind, "proc_start") == 0 || strcmp(e->kind, "proc_exit") == 0;
}

int peak_is_exact(const char *src)
{
	return src && (strcmp(src, PEAK_FROM_EXIT) == 0 || strcmp(src, PEAK_FROM_WAIT) == 0 ||
		       strcmp(src, PEAK_FROM_OOM) == 0 || strcmp(src, PEAK_FROM_PAGES) == 0);
}

int run_blind_below_hwm(const struct run *r)
{
	return r->hwm_before >= 0 && (uint64_t)r->hwm_before > r->peak_rss && !r->hwm_reset &&
	       r->samples && !(r->peak_source && strcmp(r->peak_source, PEAK_FROM_PAGES) == 0);
}

int peak_confirms(uint64_t peak, const char *peak_source, uint64_t bytes, const char *source)
{
	return bytes == peak && peak_is_exact(source) && peak_source &&
	       strcmp(peak_source, PEAK_FROM_SAMPLE) == 0;
}

void run_set_unknown(struct run *r)
{
	strlcpy_rsw(r->outcome, OUTCOME_RUNNING, sizeof(r->outcome));
	r->exit_code = -1;
	r->signal = -1;
	r->peak_gpu = -1;
	r->hwm_before = -1;
	r->min_eta_ns = -1;
}

void run_release(struct run *r)
{
	if (!r)
		return;
	store_row_free_text(&store_run_table, r);
	run_params_free(r->params, r->nparams);
	memset(r, 0, sizeof(*r));
}

double run_mean_rss(const struct run *r)
{
	return r->samples ? r->sum_rss / (double)r->samples : 0.0;
}

int run_param_number(const char *s, double *out)
{
	const char *p = s;
	if (*p == '-' || *p == '+')
		p++;
	size_t digits = strspn(p, "0123456789");
	p += digits;
	if (*p == '.') {
		size_t frac = strspn(p + 1, "0123456789");
		digits += frac;
		p += 1 + frac;
	}
	if (digits == 0)
		return 0;
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '-' || *p == '+')
			p++;
		size_t e = strspn(p, "0123456789");
		if (e == 0)
			return 0;
		p += e;
	}
	if (*p != '\0')
		return 0;
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (*end != '\0' || !isfinite(v) || errno == ERANGE)
		return 0;
	*out = v;
	return 1;
}

int run_param_parse(const char *arg, struct run_param *out, char *err, size_t errlen)
{
	const char *eq = strchr(arg, '=');
	if (!eq) {
		snprintf(err, errlen, "a parameter is KEY=VALUE, e.g. pw=12");
		return -EINVAL;
	}
	size_t klen = (size_t)(eq - arg);
	if (klen == 0 || klen > RUN_PARAM_KEY_MAX) {
		snprintf(err, errlen, "a parameter name is 1 to %d characters", RUN_PARAM_KEY_MAX);
		return -EINVAL;
	}
	for (size_t i = 0; i < klen; i++) {
		char c = arg[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '-')) {
			snprintf(err, errlen, "a parameter name may hold only letters, digits, "
				 "'_', '.' and '-'");
			return -EINVAL;
		}
	}
	const char *v = eq + 1;
	size_t vlen = strlen(v);
	if (vlen == 0 || vlen > RUN_PARAM_VALUE_MAX) {
		snprintf(err, errlen, "a parameter value is 1 to %d bytes", RUN_PARAM_VALUE_MAX);
		return -EINVAL;
	}
	for (const unsigned char *p = (const unsigned char *)v; *p; ) {
		size_t l = utf8_seq(p);
		if (l == 0) {
			snprintf(err, errlen, "a parameter value must be UTF-8 text");
			return -EINVAL;
		}
		if ((l == 1 && (*p < 0x20 || *p == 0x7f)) || (l == 2 && p[0] == 0xc2 && p[1] < 0xa0)) {
			snprintf(err, errlen, "a parameter value may not hold control characters");
			return -EINVAL;
		}
		p += l;
	}
	memcpy(out->key, arg, klen);
	out->key[klen] = '\0';
	out->value = xstrdup(v);
	out->num = 0;
	out->is_num = run_param_number(v, &out->num);
	return 0;
}

const struct run_param *run_param_find(const struct run_param *p, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(p[i].key, key) == 0)
			return &p[i];
	return NULL;
}

int run_param_matches(const struct run_param *p, const struct run_param *want)
{
	if (strcmp(p->value, want->value) == 0)
		return 1;
	return p->is_num && want->is_num && p->num == want->num;
}

void run_params_free(struct run_param *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(p[i].value);
	free(p);
}

/* A decimal number of up to 18 digits at *p (no sign, no spaces); moves *p past it. */
static int ref_number(const char **p, uint64_t *out)
{
	uint64_t v = 0;
	size_t digits = 0;
	while (**p >= '0' && **p <= '9') {
		if (++digits > 18)
			return -EINVAL;
		v = v * 10 + (uint64_t)(**p - '0');
		(*p)++;
	}
	if (!digits)
		return -EINVAL;
	*out = v;
	return 0;
}

int run_ref_parse(const char *s, struct run_ref *out)
{
	struct run_ref r = { .count = 1 };
	uint64_t v;
	const char *p = s;
	if (strcmp(s, "last") == 0) {
		*out = r;
		return 0;
	}
	if (*p == 's') {
		r.series = 1;
		p++;
	}
	if (ref_number(&p, &v) < 0 || v == 0)
		return -EINVAL;
	r.id = (int64_t)v;
	if (r.series && *p == ':') {
		p++;
		if (ref_number(&p, &r.count) < 0 || r.count == 0)
			return -EINVAL;
	}
	if (*p)
		return -EINVAL;
	*out = r;
	return 0;
}
