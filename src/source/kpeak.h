/* The peak engine: an eBPF program on the kernel's own record of every page change
 * (rss_stat), which keeps the exact highest resident size of each tracked process and
 * of their total, with the kernel's time of each (src/bpf/kpeak.bpf.c). The recorder
 * reads the figures at its samples; nothing crosses to user space per page.
 * Needs root, BTF and a kernel of 6.2 or later; a build without clang or libbpf has
 * no engine (kpeak_built() is 0) and every open fails with -ENOSYS. */
#ifndef RSSWATCH_SOURCE_KPEAK_H
#define RSSWATCH_SOURCE_KPEAK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct kpeak;

/* The figures so far. Times are CLOCK_MONOTONIC (ns); 0 when there is no peak. */
struct kpeak_figures {
	uint64_t peak;		/* the highest total of the tracked processes */
	int64_t peak_at;
	int64_t total;		/* their total now (bytes; file + anon + shmem) */
	uint64_t events;	/* 1 once a change of their pages was seen, else 0 */
	uint64_t dropped;	/* processes that could not be tracked (table full) */
	uint64_t lost;		/* exits and OOM victims the ring buffer had no room for */
};

/* The exact peak of one tracked process that ended. */
struct kpeak_exit {
	pid_t pid;
	uint64_t peak;
	int64_t peak_at;
};

/* A tracked process the OOM killer chose (oom:mark_victim), with the figures of the
 * kernel's kill line, read at that moment: it comes before the line is printed. */
struct kpeak_victim {
	pid_t pid;
	uint32_t uid;
	int64_t at;		/* CLOCK_MONOTONIC */
	char comm[16];
	uint64_t total_vm, anon_rss, file_rss, shmem_rss, pgtables;	/* bytes */
	int oom_score_adj;
};

/* What kpeak_drain hands over; any may be NULL. left: a process moved out of the
 * watched cgroup (kpeak_watch_cgroup) at CLOCK_MONOTONIC at, no longer tracked. */
struct kpeak_handlers {
	void (*exit)(void *ctx, const struct kpeak_exit *x);
	void (*victim)(void *ctx, const struct kpeak_victim *v);
	void (*left)(void *ctx, pid_t pid, int64_t at);
	void *ctx;
};

/* The tracked processes' total over time, for the peak of each stage between two
 * marks: span n is the KPEAK_SPAN_NS from CLOCK_MONOTONIC n << KPEAK_SPAN_SHIFT, and
 * the last KPEAK_SPANS of them are kept (34 s). */
#define KPEAK_SPAN_SHIFT 20
#define KPEAK_SPAN_NS (INT64_C(1) << KPEAK_SPAN_SHIFT)
#define KPEAK_SPANS 32768

struct kpeak_span {
	uint64_t peak;		/* the highest total within the span */
	int64_t peak_at;	/* when; 0: not known (peak is then the last total) */
	int64_t last;		/* the total after the span's last change */
};

/* Whether this build has the engine. */
int kpeak_built(void);
/* Loads and attaches the engine. Returns 0 and *out; or -errno, with why it cannot run
 * in why (a phrase: "not root", "the kernel has no BTF", ...). */
int kpeak_open(struct kpeak **out, char *why, size_t whylen);
/* Tracks a running process, from its resident bytes now (/proc/PID/statm: the same
 * counters the engine reads) and every change after. 0 (also when it is tracked
 * already: a child of a tracked process, followed from its fork), or -errno (-ENOSPC:
 * the table is full; -ESRCH: it is gone). */
int kpeak_track(struct kpeak *k, pid_t pid);
/* Tracks the next process the calling process forks, from that child's exec: a
 * launched command, not the copy of the recorder it is before. */
void kpeak_adopt_next_child(struct kpeak *k);
/* Whether the children a tracked process forks are tracked too (a tree). */
void kpeak_follow_forks(struct kpeak *k, int on);
/* The engine's table of tracked processes, for another program of the engine to share
 * (source/kstacks.c). */
int kpeak_procs_fd(const struct kpeak *k);
/* Has the engine's program for page changes pass each change of a process that reached
 * its fault_next on to the raw tracepoint program prog_fd (record --stacks=faults:
 * source/kstacks.c); -1 stops it. 0 or -errno. */
int kpeak_rises_to(struct kpeak *k, int prog_fd);
/* Why the kernel would not take a program of the engine (e: what libbpf returned), in
 * why; returns e. */
int kpeak_refusal(int e, char *why, size_t n);
/* Tracks the processes moved into the cgroup at dir (version 1: of the memory
 * controller; 2) or below it, and no longer those moved out. The processes already in
 * it are the caller's to kpeak_track (with kpeak_follow_forks, their children are
 * tracked as they fork). 0 or -errno. */
int kpeak_watch_cgroup(struct kpeak *k, const char *dir, int version);
void kpeak_read(const struct kpeak *k, struct kpeak_figures *f);
/* A tracked process's peak so far. 0, or -ENOENT when it is not tracked (or ended). */
int kpeak_proc(const struct kpeak *k, pid_t pid, uint64_t *peak, int64_t *at);
/* Hands over, in order, each tracked process that ended, left the watched cgroup or
 * that the OOM killer chose since the last call. No system call: the ring buffer is mapped. Returns how many. */
int kpeak_drain(struct kpeak *k, const struct kpeak_handlers *h);
/* Span n of the total's history (n: a CLOCK_MONOTONIC time >> KPEAK_SPAN_SHIFT, past
 * and over). 1 and *s where the total changed in it; 0 where it did not (the total
 * stayed at the last change's); -ESTALE where the history no longer holds it. */
int kpeak_span(const struct kpeak *k, int64_t n, struct kpeak_span *s);
/* The GPU probes: uprobes on the CUDA driver's allocation and free entry points
 * (cuMemAlloc_v2, cuMemFree_v2, their Async, Managed, Pitch and pool kin, cuMemCreate
 * and cuMemRelease), for the device bytes the tracked processes hold from the driver.
 * live: their total now; peak and peak_at: its highest and when (CLOCK_MONOTONIC);
 * calls: calls of tracked processes begun or ended; inflight: begun and not ended
 * (a figure of the driver read while either moved may not agree with live); blocks:
 * allocations seen; dropped: those the table had no room for. */
struct kpeak_gpu {
	int64_t live;		/* device bytes the tracked processes hold from the driver */
	uint64_t peak;		/* the highest of live since the reset, and when */
	int64_t peak_at;	/* (CLOCK_MONOTONIC ns) */
	uint64_t calls;		/* probed calls begun and ended, counted at both */
	int64_t inflight;	/* probed calls under way */
	uint64_t blocks;	/* blocks counted since the reset */
	uint64_t dropped;	/* blocks not counted: the probes' table was full */
};

/* Attaches the GPU probes to the CUDA driver library open at fd (a libcuda.so the
 * caller found and checked; the uprobes take the file itself, whatever its path). Every
 * process that maps the same file then calls them, and they count the tracked ones.
 * Returns the number of entry points attached, 0 when this file is attached already, or
 * -errno with a phrase in why (-ENOENT: it exports none of them). */
int kpeak_gpu_attach(struct kpeak *k, int fd, char *why, size_t whylen);
/* How many driver files the probes are attached to. */
int kpeak_gpu_files(const struct kpeak *k);
void kpeak_gpu_read(const struct kpeak *k, struct kpeak_gpu *g);
/* The highest live total since the last call (or the reset) and when it was reached
 * (CLOCK_MONOTONIC; the time of the last call where it did not rise since), and restarts
 * the window from the total now. */
void kpeak_gpu_window(struct kpeak *k, uint64_t *high, int64_t *at);

/* Whether OOM victims are reported (oom:mark_victim attached; Linux 6.8+). */
int kpeak_sees_victims(const struct kpeak *k);
/* Forgets every tracked process and figure (the GPU probes stay attached), as just opened: the engine of one
 * recording serves the next (record --follow) without the 30-60 ms of a new load. The
 * processes still running are no longer tracked. */
void kpeak_reset(struct kpeak *k);
/* Detaches and frees. Accepts NULL. */
void kpeak_close(struct kpeak *k);

#endif
