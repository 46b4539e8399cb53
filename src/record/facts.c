#include "record/facts.h"
#include "base/rfile.h"
#include "base/util.h"
#include "source/proc.h"

#include <stdlib.h>
#include <sys/utsname.h>
#include <unistd.h>

void facts_host(struct run *r)
{
	struct utsname u;
	struct proc_stat self;
	struct meminfo mi = { 0, 0 };
	char boot[64] = "", *buf;
	size_t len;
	if (uname(&u) < 0)
		u.nodename[0] = u.release[0] = '\0';
	r->host = xstrdup(u.nodename);
	r->kernel = xstrdup(u.release);
	if (read_file("/proc/meminfo", &buf, &len) == 0) {
		meminfo_parse(buf, len, &mi);
		free(buf);
	}
	r->mem_total = mi.total;
	r->recorder_pid = getpid();
	if (proc_read_stat(getpid(), &self) == 0)
		r->recorder_start = self.starttime;
	proc_read_boot_id(boot, sizeof(boot));
	r->boot_id = xstrdup(boot);
}

char *facts_cmdline(pid_t pid)
{
	struct buf b = { 0 };
	if (proc_read_cmdline_quoted(pid, &b, FACTS_CMDLINE_MAX) < 0 || !b.p) {
		buf_release(&b);
		return xstrdup("");
	}
	return b.p;
}

void facts_comm(pid_t pid, char *out, size_t n)
{
	struct proc_stat ps;
	strlcpy_rsw(out, proc_read_stat(pid, &ps) == 0 ? ps.comm : "?", n);
}

int facts_memory_readable(pid_t pid)
{
	struct proc_reader pr;
	struct proc_status ps;
	int e = proc_reader_open(&pr, pid);
	if (e == 0)
		e = proc_reader_read(&pr, &ps);
	proc_reader_close(&pr);
	return e;
}
