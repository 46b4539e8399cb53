/* sharemm MIB: maps and touches MIB MiB, then starts a child that shares its address
 * space (clone with CLONE_VM, as vfork and posix_spawn do before the exec), which
 * sleeps 400 ms and exits; the parent waits for it. Both processes show the same
 * resident pages: a recorder that sums them counts the memory twice. */
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int child(void *arg)
{
	(void)arg;
	struct timespec ts = { 0, 400 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	return 0;
}

int main(int argc, char **argv)
{
	char *end;
	long mib = argc > 1 ? strtol(argv[1], &end, 10) : -1;
	if (argc != 2 || *end || mib <= 0 || mib > 1 << 20) {
		fputs("usage: sharemm MIB\n", stderr);
		return 2;
	}
	size_t len = (size_t)mib << 20;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	memset(p, 1, len);
	size_t stack_len = 1 << 16;
	char *stack = mmap(NULL, stack_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (stack == MAP_FAILED)
		return 1;
	pid_t pid = clone(child, stack + stack_len, CLONE_VM | SIGCHLD, NULL);
	if (pid < 0)
		return 1;
	int st;
	if (waitpid(pid, &st, 0) < 0)
		return 1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
