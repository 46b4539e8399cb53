/* rusage COMMAND [ARG...]: runs COMMAND and prints, on stderr, one line
 * "cpu_s=U+S maxrss_kib=N" from wait4(2): the CPU time of the command and of every
 * descendant it waited for, and the largest resident set among them. */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 2) {
		fputs("usage: rusage COMMAND [ARG...]\n", stderr);
		return 2;
	}
	pid_t pid = fork();
	if (pid == 0) {
		execvp(argv[1], argv + 1);
		perror("rusage: exec");
		_exit(127);
	}
	int status;
	struct rusage ru;
	if (pid < 0 || wait4(pid, &status, 0, &ru) < 0) {
		perror("rusage");
		return 1;
	}
	double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
		     (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	fprintf(stderr, "cpu_s=%.6f maxrss_kib=%ld\n", cpu, ru.ru_maxrss);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
