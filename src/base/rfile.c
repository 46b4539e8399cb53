#include "base/rfile.h"
#include "base/sysroot.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

int rfile_open_abs(struct rfile *f, const char *abspath)
{
	int fd = open(abspath, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	f->fd = fd;
	f->len = 0;
	if (!f->buf) {
		f->cap = 4096;
		f->buf = xmalloc(f->cap);
	}
	f->buf[0] = '\0';
	return 0;
}

int rfile_open(struct rfile *f, const char *path)
{
	char full[PATH_MAX];
	int r = sysroot_path(full, sizeof(full), "%s", path);
	if (r < 0)
		return r;
	return rfile_open_abs(f, full);
}

/* A seq_file (/proc/PID/task/TID/children, cgroup.procs, ...) returns at most about a
 * page per read even when more follows, so a short read is the end of the file only
 * when it is small: past SHORT_READ_MAX bytes, read on from there until read returns 0.
 * Small files (status, statm, meminfo) still cost one pread. */
#define SHORT_READ_MAX 2048

int rfile_read(struct rfile *f)
{
	size_t len = 0;
	for (;;) {
		ssize_t n = pread(f->fd, f->buf + len, f->cap - 1 - len, (off_t)len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		len += (size_t)n;
		if (len < f->cap - 1 && (n == 0 || len < SHORT_READ_MAX)) {
			f->len = len;
			f->buf[len] = '\0';
			return 0;
		}
		if (len < f->cap - 1)
			continue;	/* maybe more after a seq_file's page */
		if (f->cap >= (1u << 26))
			return -EFBIG;
		f->cap *= 2;
		f->buf = xrealloc(f->buf, f->cap);
	}
}

void rfile_close(struct rfile *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	free(f->buf);
	f->buf = NULL;
	f->len = f->cap = 0;
}

int read_file(const char *path, char **out, size_t *len)
{
	struct rfile f = RFILE_INIT;
	int r = rfile_open(&f, path);
	if (r == 0)
		r = rfile_read(&f);
	if (r < 0) {
		rfile_close(&f);
		return r;
	}
	*out = f.buf;
	if (len)
		*len = f.len;
	close(f.fd);
	return 0;
}
