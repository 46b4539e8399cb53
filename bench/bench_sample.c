/* bench_sample PID [N]: the work of one sample without the timer: N times, read the
 * target's figures (statm, and status when they moved) and the host's meminfo through
 * the kept-open files, append the
 * sample to a store batch and commit every 1,000 samples (as 1 kHz recording does once
 * a second). Prints the CPU time per sample (median of 5 rounds). The database is a
 * temporary file. */
#include "base/parse.h"
#include "record/sampler.h"
#include "store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double cpu_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	pid_t pid;
	uint64_t n = 20000;
	if (argc < 2 || parse_pid(argv[1], &pid) < 0 || (argc > 2 && parse_u64(argv[2], &n) < 0)) {
		fputs("usage: bench_sample PID [N]\n", stderr);
		return 2;
	}
	char dir[] = "/tmp/rsswatch-bench-XXXXXX", path[64], err[256];
	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/b.db", dir);
	struct store *st;
	if (store_open(path, STORE_CREATE, &st, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench_sample: %s\n", err);
		return 1;
	}
	struct run r;
	memset(&r, 0, sizeof(r));
	r.started_at = 1;
	r.interval_ns = NS_PER_MS;
	snprintf(r.outcome, sizeof(r.outcome), "%s", OUTCOME_RUNNING);
	r.exit_code = r.signal = -1;
	r.peak_gpu = -1;
	store_run_begin(st, &r);
	struct sampler s;
	if (sampler_open(&s, pid) < 0) {
		fputs("bench_sample: cannot open the target\n", stderr);
		return 1;
	}
	/* Twice: as for an idle target (status read only when statm or the thread count
	 * moves), and as for a target whose memory changes at every sample (the cached
	 * status dropped before each read, so status is read every time). */
	int64_t el = 0;
	for (int busy = 0; busy < 2; busy++) {
		double rounds[5];
		for (int k = 0; k < 5; k++) {
			double t0 = cpu_us();
			for (uint64_t i = 0; i < n; i++) {
				struct sample m;
				if (busy)
					s.proc.cached = 0;
				if (sampler_read(&s, el, &m) < 0)
					return 1;
				m.elapsed_ns = ++el;
				store_add_sample(st, r.id, &m);
				r.samples++;
				if (r.samples % 1000 == 0)
					store_flush(st, &r);
			}
			rounds[k] = (cpu_us() - t0) / (double)n;
		}
		qsort(rounds, 5, sizeof(rounds[0]), cmp);
		printf("sample work, %s: %.2f us per sample (median of 5 rounds of %llu; "
		       "min %.2f, max %.2f)\n", busy ? "target changing (status read every time)"
						   : "idle target (status cached)",
		       rounds[2], (unsigned long long)n, rounds[0], rounds[4]);
	}
	sampler_close(&s);
	store_close(st);
	unlink(path);
	char wal[80];
	snprintf(wal, sizeof(wal), "%s-wal", path);
	unlink(wal);
	snprintf(wal, sizeof(wal), "%s-shm", path);
	unlink(wal);
	rmdir(dir);
	return 0;
}
