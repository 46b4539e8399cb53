/* Assembling one sample of the target from its sources, through files kept open
 * between samples. This is the hot path of the recorder: two preads and two parses
 * per sample, no allocation, no open(). */
#ifndef RSW_RECORD_SAMPLER_H
#define RSW_RECORD_SAMPLER_H

#include <sys/types.h>

#include "base/parse.h"
#include "base/rfile.h"
#include "record/procset.h"
#include "source/cgroup.h"
#include "source/kpeak.h"
#include "source/proc.h"
#include "source/nvml.h"
#include "source/psi.h"
#include "source/smaps.h"
#include "store/run.h"

/* Every device NVML can enumerate: none is dropped. */
#define SAMPLER_MAX_GPUS NVML_MAX_DEVICES
/* A read that driver calls overlapped, before the first anchor, is due again this
 * soon (below), at the next sample or GPU tick after it: at most ten reads a second,
 * and only until one anchors. */
#define GPU_ANCHOR_RETRY_NS (100 * 1000 * 1000LL)

/* GPU figures from one NVML read, or the highest of several: have says bytes (the
 * target's total) is known; at is the monotonic time of the read that gave bytes.
 * dev[] holds one entry per device in NVML's order; a device lost or failing at the
 * read has used and total 0 and target_known 0. */
struct gpu_reading {
	int have;
	uint64_t bytes;
	int64_t at;
	int probed;		/* bytes and at are the GPU probes' (below), not a read's */
	struct gpu_figures dev[SAMPLER_MAX_GPUS];
	size_t ndev;
};

/* GPU memory has no high-water mark, so the sampler keeps one: NVML is read at its own
 * pace, on the grid gpu_origin_ns + k * gpu_every_ns (by sampler_poll_gpu() between
 * samples, or by a sample that finds a read due), and every read is folded into
 * gpu_win, the highest figures since the last sample (each figure on its own: the
 * total, and per device the target's bytes and the device's used bytes). A sample
 * takes gpu_win and restarts it from gpu_last, the latest good read, so a sample with
 * no read since the one before carries the latest figures. gpus[0..ngpus) are the
 * per-device figures the last sample took; gpu_fresh says whether any read was folded
 * into them since the sample before (gpu_nread counts those reads). A failed read
 * changes nothing.
 *
 * With the GPU probes (the engine's uprobes on the CUDA driver, source/kpeak.h), the
 * target's GPU bytes between two reads move as the probes' live total does: each read
 * that no driver call overlapped anchors them (gpu_anchor_read, the read's figure;
 * gpu_anchor_live, the probes' total then; a read below that total counts as the
 * total: the driver's figure holds its blocks), and the highest of the probes' total
 * since, h at time t, stands for a figure of anchor_read + h - anchor_live read at t.
 * Until the first anchor the probes' highest is kept in gpu_pre, so what came before
 * it counts too. So a spike of any length between two reads is the next sample's, at
 * its time; what the driver charges besides the blocks (the context) comes from the
 * reads. A read that driver calls overlapped does not anchor; before the first anchor
 * it is tried again GPU_ANCHOR_RETRY_NS later, and it bounds the context from below
 * (gpu_extra_min). A run that ends with no anchor (a short command whose calls
 * overlapped every read) takes gpu_pre plus that bound: the least the driver's
 * figure can have been, and never below a read. */
struct sampler {
	pid_t pid;
	struct proc_reader proc;	/* /proc/PID/status */
	/* One process: its name and parent at the last read (proc's cached status is
	 * there only while it is cached) */
	char name[PROC_NAME_MAX];
	pid_t ppid;
	struct rfile meminfo;		/* /proc/meminfo, read at most every MEMINFO_EVERY_NS */
	struct meminfo mem_last;
	int64_t mem_next_ns;
	struct nvml *nvml;		/* NULL: no GPU figures */
	int64_t gpu_every_ns, gpu_origin_ns, gpu_next_ns;
	struct gpu_reading gpu_last, gpu_win;
	unsigned gpu_nread;
	struct gpu_figures gpus[SAMPLER_MAX_GPUS];
	size_t ngpus;
	int gpu_fresh;
	int64_t gpu_taken_at;		/* when the last sample's GPU figure was reached */
	int gpu_taken_probed;		/* and whether the probes gave it */
	struct kpeak *gpu_probes;	/* NULL: reads only */
	int gpu_anchored;
	uint64_t gpu_anchor_read;
	int64_t gpu_anchor_live;
	struct gpu_high {
		int have;
		uint64_t bytes;		/* the probes' highest total before the first anchor */
		int64_t at;
	} gpu_pre;
	uint64_t gpu_extra_min;		/* the driver's figure less the blocks, at least */
	struct cg_reader *cg;		/* cgroup figures from here (borrowed), or NULL */
	int cg_reset;			/* restart the cgroup's peak after each read */
	int cg_peak_exact;		/* its peak covers the run only */
	uint64_t cg_peak_before;	/* else: its peak at the start (UINT64_MAX: none) */
	int cg_peak_rose;		/* and it rose above that: the run reached it */
	int cg_oom_known;		/* cg_oom_kill was read at the last sample */
	uint64_t cg_oom_kill;		/* the cgroup's OOM kill count then */
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
	/* Context counters (CPU time, faults, I/O bytes): stat re-read at most every
	 * stat_every_ns (one clock tick: its CPU times move in ticks), io at most every
	 * IO_EVERY_NS; samples in between carry the last reading. Single process: its
	 * last readings here (have_*: read at least once); a set keeps its own. */
	int64_t stat_every_ns, stat_next_ns, io_next_ns;
	struct proc_stat stat_last;
	struct proc_io io_last;
	int have_stat, have_io;
};

#define PSI_EVERY_NS NS_PER_S
#define IO_EVERY_NS NS_PER_S

/* Opens the target's files (pid 0: no single process, a cgroup's set is sampled).
 * Returns 0, -ESRCH when the process is gone, or -errno. */
int sampler_open(struct sampler *s, pid_t pid);
/* Adds GPU figures from n (owned by the caller), read at monotonic times
 * origin_ns + k * every_ns: a caller polling on a timer with the same deadlines (a
 * timerfd never fires early) reads at every deadline, and a sample that falls on a
 * deadline already read does not read again. */
void sampler_use_gpu(struct sampler *s, struct nvml *n, int64_t every_ns, int64_t origin_ns);
/* Adds the GPU probes of engine k (owned by the caller), after sampler_use_gpu. */
void sampler_use_gpu_probes(struct sampler *s, struct kpeak *k);
/* Reads the GPU figures if a read is due at monotonic time now and folds them into the
 * highest since the last sample. Returns 1 when it read, else 0. Costs one NVML device
 * query and one or two process queries per device (tens of microseconds). */
int sampler_poll_gpu(struct sampler *s, int64_t now);
/* The highest known GPU total since the last sample, of reads and of the probes, and
 * when it was reached (monotonic; *probed: the probes gave it): for the end of a
 * recording, whose last moments no sample took. Returns 1 when there is one, else 0. */
int sampler_gpu_pending(struct sampler *s, uint64_t *bytes, int64_t *at, int *probed);
/* Adds the cgroup's usage, limit and peak (cg owned by the caller). With reset_peak
 * the peak is restarted now and after every read, so each sample's cgroup_peak is the
 * peak over the interval before it (only where cg_reader_reset_peak() can: a v1 cgroup
 * rsswatch made, or v2 on 6.12+). The cgroup's peak is sampled only where it covers
 * the run alone: a cgroup made for the run (cg->owned), or one whose peak was reset
 * here. Otherwise its peak holds history from before the run: it is sampled only once
 * it rises above its value now (cg_peak_rose), and samples carry the usage until then.
 * Returns whether the peak covers the run alone. */
int sampler_use_cgroup(struct sampler *s, struct cg_reader *cg, int reset_peak);
/* The cgroup's peak now, where it is the run's (see sampler_use_cgroup): since the
 * last reset, or above its value at the start. Returns 1 with *peak, else 0. */
int sampler_cgroup_peak(struct sampler *s, uint64_t *peak);
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
/* Fills out (all but elapsed_ns) at monotonic time now: GPU figures are the highest
 * since the previous sample (a read is made first if one is due). Returns 0, -ESRCH
 * when the target is gone (reaped or a zombie), or another -errno. */
int sampler_read(struct sampler *s, int64_t now, struct sample *out);
void sampler_close(struct sampler *s);

#endif
