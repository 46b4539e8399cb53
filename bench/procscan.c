/* procscan K: K full scans of /proc the way ps(1) does it: list /proc, open, read and
 * close /proc/PID/stat of every process, and parse its ppid. Prints the number of
 * processes seen in the last scan. For bench/tree-cost.sh (CPU from bench/rusage). */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long k = argc > 1 ? strtol(argv[1], NULL, 10) : 1;
	long seen = 0, sum = 0;
	char path[300], buf[1024];
	for (long i = 0; i < k; i++) {
		DIR *d = opendir("/proc");
		struct dirent *de;
		if (!d)
			return 1;
		seen = 0;
		while ((de = readdir(d))) {
			if (de->d_name[0] < '1' || de->d_name[0] > '9')
				continue;
			snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
			int fd = open(path, O_RDONLY);
			if (fd < 0)
				continue;
			ssize_t n = read(fd, buf, sizeof(buf) - 1);
			close(fd);
			if (n <= 0)
				continue;
			buf[n] = '\0';
			char *rp = strrchr(buf, ')');
			if (rp && strlen(rp) > 4)
				sum += strtol(rp + 4, NULL, 10);	/* ppid */
			seen++;
		}
		closedir(d);
	}
	printf("%ld %ld\n", seen, sum > 0 ? 1L : 0L);
	return 0;
}
