/* Process churn as another user makes it: forks and execs PROG (default /bin/true) in
 * a loop for SECONDS and prints how many it started. For bench/agent-churn.sh.
 *
 *   churn SECONDS [PROG]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: churn SECONDS [PROG]\n");
		return 2;
	}
	char *end;
	double secs = strtod(argv[1], &end);
	if (*end || secs <= 0) {
		fprintf(stderr, "churn: bad duration '%s'\n", argv[1]);
		return 2;
	}
	char *prog = argc > 2 ? argv[2] : "/bin/true";
	double stop = now() + secs;
	unsigned long n = 0;
	while (now() < stop) {
		pid_t p = fork();
		if (p < 0)
			return 1;
		if (p == 0) {
			execl(prog, prog, (char *)NULL);
			_exit(127);
		}
		while (waitpid(p, NULL, 0) < 0 && errno == EINTR)
			;
		n++;
	}
	printf("%lu\n", n);
	return 0;
}
