/* An open-once file reader: the file is opened at start and re-read with
 * pread(fd, buf, cap, 0) at every sample, into one buffer that grows when a read fills
 * it. Kept-open /proc and cgroup files return fresh data at every pread and cost a
 * fraction of open+read+close (docs/dev/BENCHMARKS.md).
 *
 * Invariant: after a successful rfile_read(), buf[len] == '\0' and len < cap. */
#ifndef RSW_BASE_RFILE_H
#define RSW_BASE_RFILE_H

#include <stddef.h>

struct rfile {
	int fd;		/* -1 when closed */
	char *buf;
	size_t len;
	size_t cap;
};

#define RFILE_INIT { -1, NULL, 0, 0 }

/* Opens root + path (see sysroot.h). Returns 0 or -errno. */
int rfile_open(struct rfile *f, const char *path);
/* Opens an already formatted absolute path without the root prefix. */
int rfile_open_abs(struct rfile *f, const char *abspath);
/* Re-reads the whole file. Returns 0 or -errno (ESRCH once a process is reaped). */
int rfile_read(struct rfile *f);
void rfile_close(struct rfile *f);

/* One-shot read of a whole small file (root-relative path) into a new buffer.
 * Returns 0 or -errno; *out is malloc'ed and NUL-terminated. */
int read_file(const char *path, char **out, size_t *len);

#endif
