/* scale: a workload whose memory grows linearly with a parameter, for `rsswatch model`.
 *
 * It holds BASE MiB (a table paid once, like the story's constraint table) plus N items
 * of STEP MiB each (paid per unit, like a partition worker's buffers), every page
 * touched, for HOLD ms, then exits 0. Its peak RSS is BASE + N x STEP MiB plus the
 * process's own footprint (a MiB or two: the program and its C library).
 *
 *   scale N [--base MIB] [--step MIB] [--hold MS]      (defaults 64, 16, 300)
 *
 * Record it at a few values of N with --param, then ask what N fits a budget:
 *   for n in 1 2 4 8; do rsswatch record -q --param n=$n -- build/examples/scale $n; done
 *   rsswatch model 'peak ~ n' --budget 300M -o fit.svg
 *
 * The table and the items are made by functions of their own, and nothing in it calls
 * rsswatch: recorded with --stacks (as root), the stacks at the peak name them, and
 *   rsswatch model 'stack[alloc_item_buffer] ~ n'
 * says which grows with N and which stays flat (make demo shows it). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static long arg(const char *s, const char *what)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > 1L << 20) {
		fprintf(stderr, "scale: bad %s '%s'\n", what, s);
		exit(2);
	}
	return v;
}

/* Maps mib MiB into p and touches every page, so that all of it is resident. A macro,
 * not a function: the call to mmap is then in the function that names what the memory
 * is for, which is what the stacks of record --stacks show as "allocated in". */
#define MAP_TOUCHED(p, mib)                                                               \
	do {                                                                              \
		size_t n_ = (size_t)(mib) << 20;                                          \
		(p) = n_ ? mmap(NULL, n_, PROT_READ | PROT_WRITE,                         \
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) : NULL;               \
		if ((p) == MAP_FAILED) {                                                  \
			perror("scale: mmap");                                            \
			exit(1);                                                          \
		}                                                                         \
		for (size_t i_ = 0; i_ < n_; i_ += 4096)                                  \
			(p)[i_] = 1;                                                      \
	} while (0)

static long items;	/* the item buffers made */

/* The table paid once, and one item's buffer: each its own frame in the stacks (the
 * item count keeps the compiler from folding the two into one). */
__attribute__((noinline)) static char *alloc_constraint_table(long mib)
{
	char *p;
	MAP_TOUCHED(p, mib);
	return p;
}

__attribute__((noinline)) static char *alloc_item_buffer(long mib)
{
	char *p;
	MAP_TOUCHED(p, mib);
	items++;
	return p;
}

int main(int argc, char **argv)
{
	long n = -1, base = 64, step = 16, hold_ms = 300;
	for (int i = 1; i < argc; i++) {
		const char *next = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(argv[i], "--base") == 0 && next) {
			base = arg(next, "--base");
			i++;
		} else if (strcmp(argv[i], "--step") == 0 && next) {
			step = arg(next, "--step");
			i++;
		} else if (strcmp(argv[i], "--hold") == 0 && next) {
			hold_ms = arg(next, "--hold");
			i++;
		} else if (n < 0 && argv[i][0] != '-') {
			n = arg(argv[i], "N");
		} else {
			fprintf(stderr, "usage: scale N [--base MIB] [--step MIB] [--hold MS]\n");
			return 2;
		}
	}
	if (n < 0) {
		fprintf(stderr, "usage: scale N [--base MIB] [--step MIB] [--hold MS]\n");
		return 2;
	}
	char *volatile keep = alloc_constraint_table(base);
	for (long i = 0; i < n; i++)
		keep = alloc_item_buffer(step);
	(void)keep;
	if (items != n)
		return 1;
	struct timespec ts = { hold_ms / 1000, (hold_ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	return 0;
}
