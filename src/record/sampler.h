/* Assembling one sample of the target from its sources, through files kept open
 * between samples. This is the hot path of the recorder: two preads and two parses
 * per sample, no allocation, no open(). */
#ifndef RSW_RECORD_SAMPLER_H
#define RSW_RECORD_SAMPLER_H

#include <sys/types.h>

#include "base/rfile.h"
#include "record/procset.h"
#include "source/cgroup.h"
#include "source/proc.h"
#include "source/nvml.h"
#include "source/psi.h"
#include "source/smaps.h"
#include "store/model.h"

#define SAMPLER_MAX_GPUS 16

/* GPU figures are read at their own, slower pace (an NVML process query costs tens of
 * microseconds per device): at most every gpu_every_ns; samples in between carry the
 * last value. gpu_fresh says whether this sample read them anew. */
struct sampler {
	pid_t pid;
	struct proc_reader proc;	/* /proc/PID/status */
	struct rfile meminfo;		/* /proc/meminfo */
	struct nvml *nvml;		/* NULL: no GPU figures */
	int64_t gpu_every_ns, gpu_next_ns;
	int gpu_have;			/* gpu_bytes is known */
	uint64_t gpu_bytes;
	struct gpu_figures gpus[SAMPLER_MAX_GPUS];
	size_t ngpus;
	int gpu_fresh;
	struct cg_reader *cg;		/* cgroup figures from here (borrowed), or NULL */
	int cg_reset;			/* restart the cgroup's peak after each read */
	int cg_peak_exact;		/* its peak covers the run only: sampled (else not) */
	struct procset *set;		/* totals over this set (borrowed), or NULL */
	size_t nprocs;			/* members summed in the last sample */
	/* Memory pressure: the host's /proc/pressure/memory and a v2 cgroup's
	 * memory.pressure, kept open and read at most every PSI_EVERY_NS; samples in
	 * between carry the last reading. A file that is absent (no PSI) gives nothing. */
	struct psi_reader psi_host, psi_cg;
	int psi_host_open, psi_cg_open;
	int psi_host_have, psi_cg_have;
	struct psi psi_host_last, psi_cg_last;
	int64_t psi_next_ns;
	/* --pss: smaps_rollup read at most every pss_every_ns (0: never), by
	 * sampler_read_pss() only: the recorder decides when, since each read stalls the
	 * target. pss_err: the first error that turned PSS off (-EACCES, ...). Over a set,
	 * pss_nfailed members could not be read at the last read (their error pss_err). */
	int64_t pss_every_ns, pss_next_ns;
	struct smaps_reader smaps;
	int pss_err;
	size_t pss_nfailed;
};

#define PSI_EVERY_NS 1000000000LL

/* Opens the target's files (pid 0: no single process, a cgroup's set is sampled).
 * Returns 0, -ESRCH when the process is gone, or -errno. */
int sampler_open(struct sampler *s, pid_t pid);
/* Adds GPU figures from n (owned by the caller), read at most every every_ns. */
void sampler_use_gpu(struct sampler *s, struct nvml *n, int64_t every_ns);
/* Adds the cgroup's usage, limit and peak (cg owned by the caller). With reset_peak
 * the peak is restarted now and after every read, so each sample's cgroup_peak is the
 * peak over the interval before it (only where cg_reader_reset_peak() can: a v1 cgroup
 * rsswatch made, or v2 on 6.12+). The cgroup's peak is sampled only where it covers
 * the run alone: a cgroup made for the run (cg->owned), or one whose peak was reset
 * here; otherwise samples carry its usage only (its peak is history from before).
 * Returns whether the peak is sampled. */
int sampler_use_cgroup(struct sampler *s, struct cg_reader *cg, int reset_peak);
/* Adds the pressure of the v2 cgroup directory cgdir (absolute, with the sysroot):
 * its memory.pressure. Returns 0, or -ENOENT where it has none (v1, PSI off). */
int sampler_use_cgroup_psi(struct sampler *s, const char *cgdir);
/* Adds PSS, USS and SwapPss from smaps_rollup, read at most every every_ns. */
void sampler_use_pss(struct sampler *s, int64_t every_ns);
/* Whether a PSS read is due at monotonic time now. */
int sampler_pss_due(const struct sampler *s, int64_t now);
/* Reads PSS into out (pss, uss, swap_pss, pss_read_us; SAMPLE_PSS) and schedules the
 * next read. Returns 0; -ESRCH when the process is gone; or the -errno that turned PSS
 * off for the rest of the recording (-EACCES: no ptrace-read permission), once. */
int sampler_read_pss(struct sampler *s, int64_t now, struct sample *out);
/* Samples the totals over set (owned by the caller) instead of the one process. */
void sampler_use_set(struct sampler *s, struct procset *set);
/* Fills out (all but elapsed_ns) at monotonic time now. Returns 0, -ESRCH when the
 * target is gone (reaped or a zombie), or another -errno. */
int sampler_read(struct sampler *s, int64_t now, struct sample *out);
void sampler_close(struct sampler *s);

#endif
