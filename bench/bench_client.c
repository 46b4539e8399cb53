/* Cost of the client library's calls, in ns per call: each operation is timed over a
 * loop of N calls, REPS times, and the median is printed; then again with two threads
 * calling it on the same counter or ring at once (ns per call seen by each thread).
 * No recorder reads the page while this runs, which is the library's normal state.
 *
 *   build/bench/bench_client [REPS]        (default 9) */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rsswatch.h"
#include "base/clock.h"

#define MAX_REPS 51

enum op { OP_ADD_NAME, OP_ADD_HANDLE, OP_GAUGE_NAME, OP_GAUGE_HANDLE, OP_MARK };

static const char *const op_names[] = {
	"rsw_counter_add (by name)",
	"rsw_counter_add_h (handle)",
	"rsw_gauge_set (by name)",
	"rsw_gauge_set_h (handle)",
	"rsw_mark (24-byte label)",
};

static rsw_counter_t *counter;
static rsw_gauge_t *gauge;
static int errors;
static long lapped;	/* marks given up with -ENOBUFS: their slot was still busy */

/* Runs op n times; returns ns per call. */
static double run(enum op op, long n)
{
	int64_t t0 = mono_ns();
	int bad = 0, rc;
	long i, lost = 0;

	switch (op) {
	case OP_ADD_NAME:
		for (i = 0; i < n; i++)
			bad |= rsw_counter_add("bench.items_in_flight", 1);
		break;
	case OP_ADD_HANDLE:
		for (i = 0; i < n; i++)
			bad |= rsw_counter_add_h(counter, 1);
		break;
	case OP_GAUGE_NAME:
		for (i = 0; i < n; i++)
			bad |= rsw_gauge_set("bench.queue_depth", i);
		break;
	case OP_GAUGE_HANDLE:
		for (i = 0; i < n; i++)
			bad |= rsw_gauge_set_h(gauge, i);
		break;
	case OP_MARK:
		for (i = 0; i < n; i++) {
			rc = rsw_mark("stage: synthesis done 42");
			lost += rc == -ENOBUFS;
			bad |= rc != 0 && rc != -ENOBUFS;
		}
		break;
	}
	if (bad)
		__atomic_fetch_add(&errors, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&lapped, lost, __ATOMIC_RELAXED);
	return (double)(mono_ns() - t0) / (double)n;
}

struct job {
	enum op op;
	long n;
	pthread_barrier_t *start;
	double ns;
};

static void *thread_main(void *arg)
{
	struct job *j = arg;

	pthread_barrier_wait(j->start);
	j->ns = run(j->op, j->n);
	return NULL;
}

/* Two threads at once; returns the mean of their ns per call. */
static double run2(enum op op, long n)
{
	pthread_barrier_t start;
	pthread_t t[2];
	struct job j[2];
	int i;

	pthread_barrier_init(&start, NULL, 2);
	for (i = 0; i < 2; i++) {
		j[i].op = op;
		j[i].n = n;
		j[i].start = &start;
		if (pthread_create(&t[i], NULL, thread_main, &j[i]) != 0) {
			fprintf(stderr, "bench_client: cannot start a thread\n");
			exit(1);
		}
	}
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&start);
	return (j[0].ns + j[1].ns) / 2;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	double one[MAX_REPS], two[MAX_REPS];
	int reps = 9, r, rc;
	unsigned op;
	char *end;

	if (argc > 1) {
		long v = strtol(argv[1], &end, 10);

		if (*end || v < 1 || v > MAX_REPS) {
			fprintf(stderr, "usage: bench_client [REPS (1..%d)]\n", MAX_REPS);
			return 2;
		}
		reps = (int)v;
	}
	rc = rsw_init();
	counter = rsw_counter("bench.items_in_flight");
	gauge = rsw_gauge("bench.queue_depth");
	if (rc || !counter || !gauge) {
		fprintf(stderr, "bench_client: cannot set up the client page: %s\n",
			strerror(rc < 0 ? -rc : 0));
		return 1;
	}
	printf("%-28s %12s %14s\n", "call", "1 thread ns", "2 threads ns");
	for (op = 0; op < sizeof(op_names) / sizeof(op_names[0]); op++) {
		long n = op == OP_MARK ? 1000000 : 4000000;

		run((enum op)op, n / 10);	/* warm up */
		for (r = 0; r < reps; r++) {
			one[r] = run((enum op)op, n);
			two[r] = run2((enum op)op, n);
		}
		printf("%-28s %12.1f %14.1f\n", op_names[op], median(one, reps),
			median(two, reps));
	}
	printf("median of %d runs; %s; %ld marks lost to a busy slot (-ENOBUFS)\n", reps,
		errors ? "SOME CALLS FAILED" : "no call failed", lapped);
	return errors ? 1 : 0;
}
