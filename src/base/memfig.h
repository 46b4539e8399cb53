/* The memory figures of a process, or their total over a set of processes, as
 * /proc/PID/status gives them. Every struct that carries them embeds this one (a
 * process's status, a sample, a member of a set at a sample, a set's totals), so a
 * figure added here travels through each of them, and through the helpers below,
 * without another line of code.
 *
 * Invariant: every member is a uint64_t count of bytes, and nothing else. The helpers
 * rely on it: they work figure by figure over the struct as an array. */
#ifndef RSW_BASE_MEMFIG_H
#define RSW_BASE_MEMFIG_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct mem_figures {
	uint64_t rss;		/* VmRSS: resident memory */
	uint64_t hwm;		/* VmHWM: the peak of rss the kernel saved */
	uint64_t anon;		/* RssAnon: resident anonymous memory */
	uint64_t file;		/* RssFile: resident file-backed memory */
	uint64_t shmem;		/* RssShmem: resident shared memory */
	uint64_t swap;		/* VmSwap: swapped out */
};

#define MEM_NFIGURES (sizeof(struct mem_figures) / sizeof(uint64_t))
_Static_assert(sizeof(struct mem_figures) == MEM_NFIGURES * sizeof(uint64_t),
	       "struct mem_figures holds uint64_t figures only");

/* to += x, figure by figure (a set's total of its members). */
static inline void mem_figures_add(struct mem_figures *to, const struct mem_figures *x)
{
	uint64_t a[MEM_NFIGURES], b[MEM_NFIGURES];
	memcpy(a, to, sizeof(a));
	memcpy(b, x, sizeof(b));
	for (size_t i = 0; i < MEM_NFIGURES; i++)
		a[i] += b[i];
	memcpy(to, a, sizeof(a));
}

/* to -= x, figure by figure, for taking out of a total what was added to it: x must
 * be part of to (unsigned arithmetic: nothing saturates). */
static inline void mem_figures_sub(struct mem_figures *to, const struct mem_figures *x)
{
	uint64_t a[MEM_NFIGURES], b[MEM_NFIGURES];
	memcpy(a, to, sizeof(a));
	memcpy(b, x, sizeof(b));
	for (size_t i = 0; i < MEM_NFIGURES; i++)
		a[i] -= b[i];
	memcpy(to, a, sizeof(a));
}

#endif
