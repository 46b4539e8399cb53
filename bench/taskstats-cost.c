/* taskstats-cost [RATE [SECONDS [TICK_MS]]]: what a taskstats listener costs (root).
 *
 * Four phases of SECONDS each (default 5):
 *   idle      the listener open on an otherwise idle host, woken by its socket;
 *   baseline  a spawner process forks RATE children per second (default 1,000), each
 *             exiting at once, with no listener registered;
 *   wake      the same while the listener is woken by every datagram (poll on its fd);
 *   tick      the same while the listener drains every TICK_MS ms (default 100), as a
 *             recorder would at each sample.
 * The listener's figure is its thread's CPU time (CLOCK_THREAD_CPUTIME_ID), per record
 * and per second. The spawner's figure is its CPU time and that of its children
 * (wait4), per exit: the difference between baseline and the listener phases is what
 * a registered listener adds to every exit on the host (the kernel fills and sends the
 * record in the exiting task). Figures on a shared host are noisy: run it twice. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/acct.h>

#include "source/taskstats.h"

static double now_s(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void add_ns(struct timespec *t, long ns)
{
	t->tv_nsec += ns;
	while (t->tv_nsec >= 1000000000L) {
		t->tv_nsec -= 1000000000L;
		t->tv_sec++;
	}
}

/* Forks rate children per second for secs seconds, in 1 ms steps on absolute
 * deadlines; each child exits at once and is reaped as it goes. */
static void spawn(long rate, double secs)
{
	struct timespec t;
	long steps = (long)(secs * 1000), done = 0;
	clock_gettime(CLOCK_MONOTONIC, &t);
	for (long s = 1; s <= steps; s++) {
		long due = rate * s / 1000;
		for (; done < due; done++) {
			pid_t p = fork();
			if (p == 0)
				_exit(0);
			if (p < 0)
				_exit(1);
		}
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		add_ns(&t, 1000000L);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR)
			;
	}
	while (wait(NULL) > 0)
		;
	_exit(0);
}

struct count {
	pid_t spawner;
	long records, ours;
};

static void on_rec(void *ctx, const struct taskstats_exit *r)
{
	struct count *c = ctx;
	c->records++;
	if (r->scope == TASKSTATS_PID && r->ppid == c->spawner && (r->flags & AGROUP))
		c->ours++;
}

/* Drains l until the spawner is gone (or for secs when there is none): woken by the
 * socket when tick_ms is 0, else every tick_ms. Prints one line. */
static void listen_phase(const char *name, struct taskstats_listener *l, pid_t spawner,
			 double secs, int tick_ms)
{
	struct count c = { spawner, 0, 0 };
	long lost = 0, wakeups = 0;
	double w0 = now_s(CLOCK_MONOTONIC), c0 = now_s(CLOCK_THREAD_CPUTIME_ID);
	for (;;) {
		if (spawner > 0 && waitpid(spawner, NULL, WNOHANG) == spawner)
			spawner = 0;
		if (spawner == 0 && c.spawner > 0)
			break;
		if (c.spawner == 0 && now_s(CLOCK_MONOTONIC) - w0 >= secs)
			break;
		if (tick_ms > 0) {
			struct timespec ts = { 0, tick_ms * 1000000L };
			nanosleep(&ts, NULL);
		} else {
			struct pollfd pfd = { taskstats_fd(l), POLLIN, 0 };
			poll(&pfd, 1, 100);
		}
		int n = taskstats_drain(l, on_rec, &c);
		if (n < 0) {
			fprintf(stderr, "taskstats-cost: drain: %s\n", strerror(-n));
			exit(1);
		}
		lost += n;
		wakeups++;
	}
	int n = taskstats_drain(l, on_rec, &c);
	lost += n > 0 ? n : 0;
	double wall = now_s(CLOCK_MONOTONIC) - w0, cpu = now_s(CLOCK_THREAD_CPUTIME_ID) - c0;
	printf("%-8s %6.2f s  %7ld records (%.0f/s; %ld of the spawner's children), %ld lost, "
	       "%ld wake-ups; listener %.2f ms CPU: %.2f us per record, %.3f%% of a core\n",
	       name, wall, c.records, (double)c.records / wall, c.ours, lost, wakeups,
	       cpu * 1e3, c.records ? cpu * 1e6 / (double)c.records : 0.0, cpu / wall * 100);
}

/* CPU time of the children reaped so far (the spawners, with their own children). */
static double children_cpu(void)
{
	struct rusage ru;
	getrusage(RUSAGE_CHILDREN, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static void spawner_line(const char *name, double cpu, long rate, double secs)
{
	printf("%-8s spawner and children: %.1f us CPU per fork+exit\n", name,
	       cpu * 1e6 / ((double)rate * secs));
}

static pid_t start_spawner(long rate, double secs)
{
	pid_t p = fork();
	if (p < 0) {
		perror("taskstats-cost: fork");
		exit(1);
	}
	if (p == 0)
		spawn(rate, secs);
	return p;
}

int main(int argc, char **argv)
{
	long rate = argc > 1 ? strtol(argv[1], NULL, 10) : 1000;
	double secs = argc > 2 ? strtod(argv[2], NULL) : 5;
	int tick = argc > 3 ? (int)strtol(argv[3], NULL, 10) : 100;
	if (rate <= 0 || secs <= 0 || tick <= 0) {
		fputs("usage: taskstats-cost [RATE [SECONDS [TICK_MS]]]\n", stderr);
		return 2;
	}
	printf("%ld exits/s for %.1f s per phase; tick %d ms\n", rate, secs, tick);

	double c0 = children_cpu();
	pid_t sp = start_spawner(rate, secs);
	if (waitpid(sp, NULL, 0) != sp)
		return 1;
	spawner_line("baseline", children_cpu() - c0, rate, secs);

	struct taskstats_listener l = TASKSTATS_LISTENER_INIT;
	int e = taskstats_open(&l);
	if (e < 0) {
		fprintf(stderr, "taskstats-cost: cannot open the taskstats listener: %s\n",
			strerror(-e));
		return 1;
	}
	listen_phase("idle", &l, 0, secs, 0);

	/* listen_phase reaps the spawner */
	c0 = children_cpu();
	listen_phase("wake", &l, start_spawner(rate, secs), secs, 0);
	spawner_line("wake", children_cpu() - c0, rate, secs);
	c0 = children_cpu();
	listen_phase("tick", &l, start_spawner(rate, secs), secs, tick);
	spawner_line("tick", children_cpu() - c0, rate, secs);

	taskstats_close(&l);
	return 0;
}
