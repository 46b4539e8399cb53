#include "cli/compare_by.h"
#include "store/run.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *by_key;
static int by_numeric;

static const struct run_param *param_of(const struct cmp_run *r)
{
	return run_param_find(r->run->params, r->run->nparams, by_key);
}

static int cmp_value(const struct run_param *a, const struct run_param *b)
{
	if (by_numeric)
		return (a->num > b->num) - (a->num < b->num);
	return strcmp(a->value, b->value);
}

int compare_group_by(const char *key, struct cmp_run *r, size_t n, struct cmp_group *g,
		     size_t *ng, struct buf *legend, long long *missing)
{
	by_key = key;
	by_numeric = 1;
	for (size_t i = 0; i < n; i++) {
		const struct run_param *p = param_of(&r[i]);
		if (!p) {
			*missing = (long long)r[i].run->id;
			return -ENOENT;
		}
		by_numeric &= p->is_num;
	}
	/* insertion sort: stable, and n is a handful of runs */
	for (size_t i = 1; i < n; i++) {
		struct cmp_run x = r[i];
		size_t j = i;
		while (j > 0 && cmp_value(param_of(&r[j - 1]), param_of(&x)) > 0) {
			r[j] = r[j - 1];
			j--;
		}
		r[j] = x;
	}
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (i == 0 || cmp_value(param_of(&r[i - 1]), param_of(&r[i])) != 0) {
			g[k].runs = &r[i];
			g[k].n = 0;
			k++;
		}
		g[k - 1].n++;
	}
	for (size_t i = 0; i < k; i++) {
		buf_printf(legend, "%s%c: %s=", i ? ", " : "", k <= 26 ? (int)('A' + i) : '?', key);
		buf_put_printable(legend, param_of(&g[i].runs[0])->value);
		buf_puts(legend, g[i].n == 1 ? " (run " : " (runs ");
		for (size_t j = 0; j < g[i].n; j++)
			buf_printf(legend, "%s%lld", j ? ", " : "", (long long)g[i].runs[j].run->id);
		buf_putc(legend, ')');
	}
	*ng = k;
	return 0;
}
