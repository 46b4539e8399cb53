/* endstamp MS STAMPFILE [PIDFILE]: a target whose end is known to the microsecond.
 * It sleeps MS milliseconds, writes CLOCK_REALTIME in nanoseconds to STAMPFILE (opened
 * beforehand) and exits at once: the stamp is taken a few microseconds before the exit.
 *
 * With PIDFILE it forks first: the child is the target (its pid goes to PIDFILE) and the
 * parent waits for it, so the target is reaped the moment it ends, as a daemon's
 * supervisor would reap it. A watcher of that pid then sees it gone rather than a zombie
 * (kill -0 still succeeds on a zombie). For the end-detection part of bench/run.sh. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void stamp_after(long ms, int fd)
{
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000L };
	char line[32];
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	clock_gettime(CLOCK_REALTIME, &ts);
	int n = snprintf(line, sizeof(line), "%lld\n", (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
	_exit(write(fd, line, (size_t)n) == n ? 0 : 1);
}

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 4) {
		fputs("usage: endstamp MS STAMPFILE [PIDFILE]\n", stderr);
		return 2;
	}
	char *end;
	long ms = strtol(argv[1], &end, 10);
	int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (*end || ms < 0 || fd < 0) {
		fputs("endstamp: bad arguments\n", stderr);
		return 2;
	}
	if (argc == 3)
		stamp_after(ms, fd);
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0)
		stamp_after(ms, fd);
	close(fd);
	FILE *f = fopen(argv[3], "w");
	if (!f || fprintf(f, "%d\n", (int)pid) < 0 || fclose(f) != 0)
		return 1;
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return 0;
}
