/* forktree N KIB STOPFILE: forks N children that each touch KIB KiB of their own memory
 * and sleep until STOPFILE exists (checked every 200 ms), then exit. Prints "ready" on
 * stdout once every child has touched its memory. The tree for bench/tree-cost.sh. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void nap(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fputs("usage: forktree N KIB STOPFILE\n", stderr);
		return 2;
	}
	long n = strtol(argv[1], NULL, 10), kib = strtol(argv[2], NULL, 10);
	const char *stop = argv[3];
	int pfd[2];
	struct stat sb;
	if (n < 0 || kib < 0 || pipe(pfd) < 0)
		return 2;
	for (long i = 0; i < n; i++) {
		pid_t p = fork();
		if (p < 0) {
			perror("forktree: fork");
			return 1;
		}
		if (p == 0) {
			close(pfd[0]);
			size_t len = (size_t)kib * 1024;
			char *m = len ? mmap(NULL, len, PROT_READ | PROT_WRITE,
					     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) : NULL;
			if (m == MAP_FAILED)
				_exit(1);
			for (size_t k = 0; k < len; k += 4096)
				m[k] = 1;
			if (write(pfd[1], "x", 1) != 1)
				_exit(1);
			close(pfd[1]);
			while (stat(stop, &sb) < 0)
				nap(200);
			_exit(0);
		}
	}
	close(pfd[1]);
	char c;
	for (long i = 0; i < n; i++)
		if (read(pfd[0], &c, 1) != 1)
			return 1;
	printf("ready\n");
	fflush(stdout);
	while (wait(NULL) > 0 || errno == EINTR)
		;
	return 0;
}
