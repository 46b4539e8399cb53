/* The live line printed while recording, and the outcome in words. Pure formatting. */
#ifndef RSW_RENDER_LIVE_H
#define RSW_RENDER_LIVE_H

#include <stdint.h>

#include "base/buf.h"
#include "store/run.h"

/* "02:24:19 rss 666.4 GiB (anon 660.1, file 6.3, shmem 0.0) hwm 668.0 GiB avail 80.2 GiB"
 * (plus swap when any, gpu and "cg 60.1/64.0 MiB" (cgroup usage/limit) when sampled). The figures in parentheses share the unit of rss. */
void live_line(struct buf *b, int64_t realtime_ns, const struct sample *s);

/* ", full in ~4m10s (cgroup limit)": the projected time to exhaustion in seconds
 * (record/eta.h) and the limit's name; nothing when eta_s is negative (memory is not
 * rising toward a limit). */
void live_eta(struct buf *b, double eta_s, const char *limit);

/* "name=value" of an application counter or gauge, the name made printable and the
 * value in the unit its name says (render/counters.h): "bytes_held=300.0 MiB". */
void live_counter(struct buf *b, const char *name, long long value);

/* " cpu 97% majflt 12/s": CPU use (100% is one CPU's time) and major faults per second
 * between the previous live line's sample prev and s; nothing when either lacks the
 * counters (SAMPLE_CPU) or no time passed. Counters that went down (a set's member
 * that left had not been read) give 0. The CPU only over LIVE_CPU_MIN_NS or more: the
 * kernel's counters of a running process move in clock ticks (10 ms), so a shorter
 * window (a short command's last line) could read 0% or several hundred. */
#define LIVE_CPU_MIN_NS (100 * 1000 * 1000)
void live_context(struct buf *b, const struct sample *prev, const struct sample *s);

/* "exited with 3", "killed by SIGKILL", "still running (recording stopped)", ...
 * An OOM kill says what the kernel said: "killed by the OOM killer (memory cgroup /x)
 * at 02:25:07, anon-rss 629.6 GiB; peak 666.4 GiB at 02:24:19"; a run's outcome_note
 * (partial evidence) follows after "; ". */
void outcome_words(struct buf *b, const struct run *r);

/* The same in a few words for a table cell, without the evidence and figures:
 * "killed by the OOM killer", "exited with 3", ... */
void outcome_short(struct buf *b, const struct run *r);

/* "SIGKILL" for 9; "signal 77" for an unnamed one. Writes into buf. */
const char *signal_name(int sig, char *buf, size_t n);

#endif
