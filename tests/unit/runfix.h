/* Runs, OOM kills and processes built in memory for the renderers' unit tests: a set
 * run of three processes with one kill, as the recorder stores it. */
#ifndef RSW_TEST_RUNFIX_H
#define RSW_TEST_RUNFIX_H

#include <string.h>
#include "base/util.h"
#include "store/run.h"

#ifndef MIB
#define MIB (1024ULL * 1024)
#endif

/* A set run of three processes with one OOM kill, as the recorder stores them. */
static inline void set_run(struct run *r)
{
	memset(r, 0, sizeof(*r));
	r->id = 12;
	r->label = "";
	r->host = "h";
	r->kernel = "k";
	r->target = "make -j8";
	r->mode = "command";
	r->tree = 1;
	r->pid = 100;
	r->started_at = 1795919059LL * 1000000000;
	r->ended_at = r->started_at + 3000000000LL;
	r->interval_ns = 100000000;
	r->samples = 30;
	strlcpy_rsw(r->outcome, OUTCOME_EXITED, sizeof(r->outcome));
	r->exit_code = 0;
	r->signal = -1;
	r->peak_gpu = -1;
	r->peak_rss = 508 * MIB + MIB / 5;
	r->peak_rss_at = r->started_at + 2400000000LL;
	r->sum_rss = 30.0 * 100 * MIB;
	r->last_rss = 10 * MIB;
	r->hwm_before = -1;
	r->peak_source = PEAK_FROM_EXIT;
	r->oom_kills = 1;
	r->peak_process_rss = 342 * MIB + MIB / 2;
	r->peak_process_pid = 123;
	r->peak_process_comm = "cc1";
	r->exit_records = 1;
}

static const struct oom_kill one_kill = {
	.t = 1795919059LL * 1000000000 + 1200000000,
	.pid = 5123,
	.comm = "python3",
	.anon_rss = 199 * MIB + 6 * MIB / 10 + 1,
	.file_rss = 4096,
	.total_vm = 300 * MIB,
	.memcg = "/rsswatch-12",
};

static inline struct proc_summary proc(pid_t pid, const char *comm, int64_t first_ms, int64_t end_ms,
				uint64_t peak, const char *src, const char *ended, int code, int sig)
{
	struct proc_summary p;
	memset(&p, 0, sizeof(p));
	p.pid = pid;
	p.ppid = 100;
	strlcpy_rsw(p.comm, comm, sizeof(p.comm));
	p.first_ns = first_ms * 1000000;
	p.end_ns = end_ms < 0 ? -1 : end_ms * 1000000;
	p.peak_rss = peak;
	strlcpy_rsw(p.peak_source, src, sizeof(p.peak_source));
	p.hwm_before = -1;
	strlcpy_rsw(p.ended, ended, sizeof(p.ended));
	p.exit_code = code;
	p.signal = sig;
	p.cpu_user_ns = p.cpu_sys_ns = p.minflt = p.majflt = -1;
	p.read_bytes = p.write_bytes = -1;
	return p;
}

#endif
