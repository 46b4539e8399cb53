/* compare --by KEY: runs regrouped by the value of one of their parameters. */
#ifndef RSW_CLI_COMPARE_BY_H
#define RSW_CLI_COMPARE_BY_H

#include <stddef.h>

#include "base/buf.h"
#include "render/compare.h"

/* Sorts r[0..n) by the value of parameter key (numerically when every value is a
 * number, else as text; runs keep their order within a value) and fills g with one
 * group per value, pointing into r; *ng is the number of groups (g has room for n).
 * Writes a line naming each group ("A: pw=2 (runs 1, 2)") into legend. Returns 0, or
 * -ENOENT when a run lacks the parameter (its id in *missing). */
int compare_group_by(const char *key, struct cmp_run *r, size_t n, struct cmp_group *g,
		     size_t *ng, struct buf *legend, long long *missing);

#endif
