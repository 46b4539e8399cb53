/* The GPUs for a recording and for `rsswatch gpus`, through NVML (source/nvml.h): the
 * CLI asks here and prints; it opens no library and reads no /proc itself. */
#ifndef RSW_RECORD_GPUS_H
#define RSW_RECORD_GPUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/parse.h"
#include "record/recorder.h"
#include "source/nvml.h"
#include "source/proc.h"

/* GPU memory has no high-water mark: a spike between two reads is missed. Reads cost
 * tens of microseconds (docs/guide/gpu.md), so by default they come every 20 ms, whatever
 * the sampling interval, and each sample keeps the highest figures since the last. */
#define GPU_INTERVAL_DEFAULT_NS (20 * NS_PER_MS)

/* Opens NVML for a recording: o->nvml, and o->gpu_interval_ns = interval_ns or the
 * default. Returns the number of devices, or -errno with a one-line reason in why
 * (o->nvml stays NULL: the recording goes on without GPU figures). */
int gpus_open(struct record_opts *o, int64_t interval_ns, char *why, size_t n);

/* With the GPU probes (the engine's uprobes on the CUDA driver), NVML is read for the
 * context and the other processes only, this often. */
#define GPU_INTERVAL_PROBED_NS NS_PER_S

/* Attaches the engine's GPU probes (o->kpeak, and o->kstacks's with --stacks) to the
 * CUDA driver beside NVML's library
 * (its libcuda.so.1) and to the one process pid maps (0: none yet, a command to be
 * launched); where they attach and interval_ns is 0 (not asked for), NVML is read every
 * GPU_INTERVAL_PROBED_NS. Needs o->nvml. Returns the number of driver files probed
 * (0: none, polling stays), with what happened in words in why. */
int gpus_probe(struct record_opts *o, pid_t pid, int64_t interval_ns, char *why, size_t n);
/* Attaches the GPU probes of k (and of the stacks program ks, NULL: none) to the
 * libcuda.so process pid maps, where it is a file they are not on yet (through /proc/PID/map_files: the file mapped, whatever its path
 * names now). Returns 1 when they attached to it, with what in why (appended after
 * "; " where why holds something), 0 when they did not (or are on it already), and
 * -ENOENT when pid maps no libcuda.so (yet). */
struct kstacks;
int gpus_probe_mapped(struct kpeak *k, struct kstacks *ks, pid_t pid, char *why, size_t n);

/* Closes what gpus_open opened. */
void gpus_close(struct record_opts *o);

/* A process holding GPU memory, with its command name when it can be read here (gone,
 * or not visible from this PID namespace: has_comm 0). */
struct gpu_user {
	struct gpu_proc p;
	bool has_comm;
	char comm[PROC_NAME_MAX];
};

/* What the driver reports now. nusers < 0: the driver cannot list processes. */
struct gpu_inventory {
	struct gpu_device dev[NVML_MAX_DEVICES];
	int ndev;
	struct gpu_user *users;
	int nusers;
	int own_pidns;		/* 1: rsswatch runs in a PID namespace of its own */
};

/* Reads the devices and the processes using them. Returns 0, or -errno with a
 * one-line reason in why (-ENOENT, -ENXIO: no driver). */
int gpu_inventory_read(struct gpu_inventory *inv, char *why, size_t n);
void gpu_inventory_release(struct gpu_inventory *inv);

#endif
