/* A set's memory by process: the RSS of its largest members over time, as plot
 * --by-process and the report of a set draw it (a stacked area). Pure: rows in, arrays
 * out.
 *
 * The members are ranked by their peak RSS over the run; the first top of them get a
 * layer each (largest first, so the largest is drawn at the bottom) and every other
 * member is summed into one "others" layer. v[i * nlayers + l] is layer l's RSS at time
 * t[i]; times strictly increase. A member that left the set counts 0 from then on. */
#ifndef RSW_RENDER_STACK_H
#define RSW_RENDER_STACK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "store/run.h"

struct stack_layer {
	pid_t pid;		/* 0 for "others" */
	char comm[64];		/* as recorded: escape it before it reaches SVG or HTML */
	uint64_t peak;
};

struct proc_stack {
	struct stack_layer *layers;
	size_t nlayers;
	size_t others;		/* members summed into the last layer (0: no such layer) */
	int64_t *t;
	uint64_t *v;
	size_t nt;
	/* until proc_stack_finish: the rows as added (time, pid, RSS: 24 bytes each, so a
	 * day of a large set stays small) and every member seen, sorted by pid, with its
	 * peak and its name at that peak (a process may exec) */
	struct stack_row *rows;
	size_t nrows, caprows;
	struct stack_layer *members;
	size_t nmembers, capmembers;
};

/* Adds one member's figures at one sample (store_each_proc_at_sample's rows, in its
 * order: time order, then by pid). Returns 0 (a store_proc_cb). */
int proc_stack_add(void *stack, int64_t elapsed_ns, const struct proc_figures *p);

/* Ranks the members and fills layers, t and v from the rows added; top is how many
 * members get a layer of their own (at least 1). */
void proc_stack_finish(struct proc_stack *s, size_t top);

void proc_stack_release(struct proc_stack *s);

#define STACK_TOP 8	/* the members plot --by-process names by default */

#endif
