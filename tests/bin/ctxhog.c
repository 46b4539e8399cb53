/* ctxhog DIR MIB: does countable work and says what it did. Writes MIB MiB to
 * DIR/ctxhog.dat and syncs it (bytes written to storage), drops the file's pages from
 * the page cache and touches them through a mapping (major page faults: a read waits
 * for the disk; none on tmpfs), drops them again and reads the file with read()
 * (bytes read from storage), touches MIB MiB of anonymous memory (minor faults), then
 * writes its own counters, as the kernel keeps them, to standard output (a pipe costs
 * no storage bytes) and leaves with _exit (no exit handlers, no faults after the count):
 *
 *   minflt majflt utime_us stime_us read_bytes write_bytes
 *
 * getrusage(RUSAGE_SELF) gives the faults and times; /proc/self/io the bytes. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static int fail(const char *what)
{
	perror(what);
	return 1;
}

/* The value of "key: N" in the text of /proc/self/io, or -1. */
static long long io_field(const char *text, const char *key)
{
	const char *p = strstr(text, key);
	if (!p)
		return -1;
	char *end;
	long long v = strtoll(p + strlen(key), &end, 10);
	return end == p + strlen(key) ? -1 : v;
}

int main(int argc, char **argv)
{
	char *end;
	long mib = argc == 3 ? strtol(argv[2], &end, 10) : -1;
	if (argc != 3 || *end || mib <= 0 || mib > 4096) {
		fputs("usage: ctxhog DIR MIB\n", stderr);
		return 2;
	}
	size_t len = (size_t)mib << 20;
	long page = sysconf(_SC_PAGESIZE);
	char path[4096];
	snprintf(path, sizeof(path), "%s/ctxhog.dat", argv[1]);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return fail("open");
	char *chunk = malloc(1 << 20);
	if (!chunk)
		return fail("malloc");
	memset(chunk, 'x', 1 << 20);
	for (long i = 0; i < mib; i++)
		if (write(fd, chunk, 1 << 20) != 1 << 20)
			return fail("write");
	if (fsync(fd) < 0 || posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0)
		return fail("fsync");
	char *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return fail("mmap");
	volatile char sum = 0;
	for (size_t off = 0; off < len; off += (size_t)page)
		sum = (char)(sum + m[off]);
	munmap(m, len);
	if (posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0 || lseek(fd, 0, SEEK_SET) != 0)
		return fail("fadvise");
	for (long i = 0; i < mib; i++)
		if (read(fd, chunk, 1 << 20) != 1 << 20)
			return fail("read");
	close(fd);
	unlink(path);
	char *anon = malloc(len);
	if (!anon)
		return fail("malloc");
	for (size_t off = 0; off < len; off += (size_t)page)
		anon[off] = 1;

	/* the count: every page the code below touches is touched once already */
	char io[1024], line[256];
	struct rusage ru;
	snprintf(line, sizeof(line), "%d", (int)sum);
	int iofd = open("/proc/self/io", O_RDONLY);
	ssize_t n = iofd >= 0 ? read(iofd, io, sizeof(io) - 1) : -1;
	if (n <= 0)
		return fail("/proc/self/io");
	io[n] = '\0';
	close(iofd);
	getrusage(RUSAGE_SELF, &ru);
	int k = snprintf(line, sizeof(line), "%ld %ld %lld %lld %lld %lld\n", ru.ru_minflt,
			 ru.ru_majflt,
			 (long long)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec,
			 (long long)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec,
			 io_field(io, "read_bytes: "), io_field(io, "\nwrite_bytes: "));
	if (write(1, line, (size_t)k) != k)
		return fail("write");
	_exit(0);
}
