#include "record/sampler.h"

#include <errno.h>
#include <string.h>

int sampler_open(struct sampler *s, pid_t pid)
{
	s->meminfo = (struct rfile)RFILE_INIT;
	int e = proc_reader_open(&s->proc, pid);
	if (e < 0)
		return e == -ENOENT ? -ESRCH : e;
	if ((e = rfile_open(&s->meminfo, "/proc/meminfo")) < 0) {
		proc_reader_close(&s->proc);
		return e;
	}
	return 0;
}

int sampler_read(struct sampler *s, struct sample *out)
{
	struct proc_status ps;
	struct meminfo mi = { 0, 0 };
	int e = proc_reader_read(&s->proc, &ps);
	if (e < 0)
		return e;
	if (rfile_read(&s->meminfo) == 0)
		meminfo_parse(s->meminfo.buf, s->meminfo.len, &mi);
	memset(out, 0, sizeof(*out));
	out->rss = ps.rss;
	out->hwm = ps.hwm;
	out->anon = ps.anon;
	out->file = ps.file;
	out->shmem = ps.shmem;
	out->swap = ps.swap;
	out->threads = ps.threads;
	out->mem_available = mi.available;
	return 0;
}

void sampler_close(struct sampler *s)
{
	proc_reader_close(&s->proc);
	rfile_close(&s->meminfo);
}
