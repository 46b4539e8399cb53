/* pipeline: a small model of a GPU proving pipeline, instrumented with librsswatch.
 *
 * N partition workers each synthesize buffers of SIZE MiB; one slower consumer (the
 * "GPU" worker) takes them through a channel and frees them. A semaphore of DEPTH
 * permits is meant to bound the buffers alive at once: a worker takes a permit before
 * synthesizing and the consumer gives it back when it has freed the buffer.
 *
 * With --bug, a worker gives its permit back as soon as it has synthesized, before its
 * send into a single-slot channel: the bound is gone, finished buffers pile up in
 * blocked sends, and memory grows with N. Without it the channel holds N and the permit
 * lives as long as the buffer, so memory stays at about DEPTH buffers.
 *
 * Counters: buffers_in_flight, bytes_in_flight (gauges), partitions_done; marks at each
 * phase. Run it under `rsswatch record` to see them beside the memory curve.
 *
 *   pipeline [--workers N] [--size MIB] [--rounds R] [--depth D] [--gpu-ms MS] [--bug] */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rsswatch.h>

struct channel {
	pthread_mutex_t lock;
	pthread_cond_t not_full, not_empty;
	char **slots;
	size_t cap, head, len;
	int closed;
};

static struct channel chan;
static sem_t permits;
static int workers = 4, rounds = 3, depth = 2, gpu_ms = 60, bug;
static size_t size_mib = 32;
static long long in_flight;
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void track(int delta)
{
	pthread_mutex_lock(&count_lock);
	in_flight += delta;
	rsw_gauge_set("buffers_in_flight", in_flight);
	rsw_gauge_set("bytes_in_flight", in_flight * (long long)size_mib << 20);
	pthread_mutex_unlock(&count_lock);
}

static void send(char *buf)
{
	pthread_mutex_lock(&chan.lock);
	while (chan.len == chan.cap)
		pthread_cond_wait(&chan.not_full, &chan.lock);
	chan.slots[(chan.head + chan.len++) % chan.cap] = buf;
	pthread_cond_signal(&chan.not_empty);
	pthread_mutex_unlock(&chan.lock);
}

static char *receive(void)
{
	pthread_mutex_lock(&chan.lock);
	while (chan.len == 0 && !chan.closed)
		pthread_cond_wait(&chan.not_empty, &chan.lock);
	char *buf = NULL;
	if (chan.len) {
		buf = chan.slots[chan.head];
		chan.head = (chan.head + 1) % chan.cap;
		chan.len--;
		pthread_cond_signal(&chan.not_full);
	}
	pthread_mutex_unlock(&chan.lock);
	return buf;
}

static void *worker(void *arg)
{
	(void)arg;
	for (int r = 0; r < rounds; r++) {
		sem_wait(&permits);
		char *buf = malloc(size_mib << 20);
		if (!buf)
			abort();
		memset(buf, r + 1, size_mib << 20);	/* synthesis: every page touched */
		track(+1);
		if (bug)
			sem_post(&permits);	/* the bug: the permit no longer covers the buffer */
		send(buf);
	}
	return NULL;
}

static void *gpu(void *arg)
{
	(void)arg;
	char *buf;
	while ((buf = receive())) {
		sleep_ms(gpu_ms);	/* the GPU works on the partition */
		free(buf);
		track(-1);
		rsw_counter_add("partitions_done", 1);
		if (!bug)
			sem_post(&permits);
	}
	return NULL;
}

static int arg_int(const char *s, int lo, int hi)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (*end || v < lo || v > hi) {
		fprintf(stderr, "pipeline: invalid value '%s' (%d..%d)\n", s, lo, hi);
		exit(2);
	}
	return (int)v;
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *next = i + 1 < argc ? argv[i + 1] : "";
		if (strcmp(argv[i], "--bug") == 0)
			bug = 1;
		else if (strcmp(argv[i], "--workers") == 0 && ++i)
			workers = arg_int(next, 1, 256);
		else if (strcmp(argv[i], "--size") == 0 && ++i)
			size_mib = (size_t)arg_int(next, 1, 65536);
		else if (strcmp(argv[i], "--rounds") == 0 && ++i)
			rounds = arg_int(next, 1, 100000);
		else if (strcmp(argv[i], "--depth") == 0 && ++i)
			depth = arg_int(next, 1, 256);
		else if (strcmp(argv[i], "--gpu-ms") == 0 && ++i)
			gpu_ms = arg_int(next, 0, 60000);
		else {
			fprintf(stderr, "usage: pipeline [--workers N] [--size MIB] [--rounds R] "
					"[--depth D] [--gpu-ms MS] [--bug]\n");
			return 2;
		}
	}
	rsw_init();
	pthread_mutex_init(&chan.lock, NULL);
	pthread_cond_init(&chan.not_full, NULL);
	pthread_cond_init(&chan.not_empty, NULL);
	chan.cap = bug ? 1 : (size_t)workers;
	chan.slots = calloc(chan.cap, sizeof(*chan.slots));
	sem_init(&permits, 0, (unsigned)depth);

	rsw_mark(bug ? "synthesis starts (--bug)" : "synthesis starts");
	pthread_t w[256], g;
	pthread_create(&g, NULL, gpu, NULL);
	for (int i = 0; i < workers; i++)
		pthread_create(&w[i], NULL, worker, NULL);
	for (int i = 0; i < workers; i++)
		pthread_join(w[i], NULL);
	rsw_mark("all partitions synthesized");
	pthread_mutex_lock(&chan.lock);
	chan.closed = 1;
	pthread_cond_broadcast(&chan.not_empty);
	pthread_mutex_unlock(&chan.lock);
	pthread_join(g, NULL);
	rsw_mark("gpu done");
	printf("pipeline: %d workers x %d rounds of %zu MiB done%s\n", workers, rounds, size_mib,
	       bug ? " (with --bug)" : "");
	return 0;
}
