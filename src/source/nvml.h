/* GPU memory through NVML, loaded at run time.
 *
 * libnvidia-ml.so.1 is opened with dlopen() (RSSWATCH_NVML_LIB overrides the path, for
 * tests) and every symbol is resolved once into a table; no NVIDIA header or library is
 * needed to build. When the library is absent nvml_open() fails with -ENOENT and the
 * caller simply records no GPU figures (the "null backend"). tests/fake/fake_nvml.c is
 * a scriptable stand-in library for tests and benchmarks (see docs/guide/gpu.md).
 *
 * Cost: a device memory query costs a few microseconds and a process query a few tens
 * per device on real drivers. The recorder reads GPUs on their own interval (every
 * 20 ms by default) and keeps the highest figures between samples (record/sampler.h);
 * nothing here rate-limits.
 *
 * PIDs: NVML reports host PIDs (the initial PID namespace). They match the PIDs rsswatch
 * reads under /proc only when rsswatch itself runs in the initial PID namespace; see
 * pidns_is_initial() and nspid_parse() below, and docs/guide/gpu.md.
 *
 * Not thread-safe: one struct nvml per recorder thread. */
#ifndef RSW_SOURCE_NVML_H
#define RSW_SOURCE_NVML_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define NVML_MAX_DEVICES 64
#define GPU_NAME_MAX 96		/* NVML's own name and UUID buffer size */

struct nvml;

/* One device. index is NVML's index (the order nvidia-smi shows, unless
 * CUDA_VISIBLE_DEVICES-style remapping is done by the caller). used and total are valid
 * only when err == 0. A device whose query fails with "GPU is lost" (or "reset
 * required", "GPU not found") is marked present = 0 from then on and never queried
 * again; other failures set err for that read only. */
struct gpu_device {
	unsigned index;
	char name[GPU_NAME_MAX];	/* "" when the driver would not say */
	char uuid[GPU_NAME_MAX];
	unsigned long long used, total;	/* bytes; used excludes driver-reserved memory
					   when the driver has the v2 memory query */
	int present;			/* 0 once the device is lost */
	int mig;			/* 1 MIG mode on, 0 off, -1 unknown */
	int err;			/* 0, or -errno of this read's memory query */
};

/* GPU memory of a set of processes. bytes is the sum over devices of the memory that
 * NVML attributes to the pids in the set. known = 1 when that figure is complete: every
 * present device answered its process query and every matching entry carried a value.
 * When known = 0, bytes is what could be counted (a lower bound) and unknown_mask has
 * bit d set for each device d whose share is incomplete. Lost devices contribute 0 and
 * are not marked. */
struct gpu_usage {
	unsigned long long bytes;
	unsigned long long per_device[NVML_MAX_DEVICES];
	uint64_t unknown_mask;
	int known;
};

#define GPU_PROC_COMPUTE 1
#define GPU_PROC_GRAPHICS 2

/* One process on one device, as nvidia-smi lists them. A pid that holds both a compute
 * and a graphics context on a device is one entry with both kind bits (its figure is the
 * larger of the two reports, which are the same memory). In MIG mode there is one entry
 * per GPU/compute instance; gi and ci are ~0u outside MIG. */
struct gpu_proc {
	unsigned device;
	pid_t pid;			/* host pid */
	unsigned long long bytes;	/* valid when known */
	int known;			/* 0 when the driver says "not available" */
	unsigned kind;			/* GPU_PROC_* bits */
	unsigned gi, ci;
};

/* Loads the library, initialises NVML and enumerates devices (name, UUID and MIG mode
 * are read once, here). Returns 0, -ENOENT when the library is absent, -ENOSYS when a
 * required symbol is missing, or another -errno when NVML will not initialise (-ENXIO:
 * the driver is not loaded). On failure a one-line reason is written to why (if not
 * NULL), e.g. "libnvidia-ml.so.1: cannot open shared object file: No such file or
 * directory", for --verbose and for `rsswatch gpus`. */
int nvml_open(struct nvml **out, char *why, size_t whylen);

/* Number of devices found at open (at most NVML_MAX_DEVICES). */
int nvml_device_count(const struct nvml *n);

/* 1 when the driver has a per-process query (usage can be known), else 0. */
int nvml_has_process_query(const struct nvml *n);

/* Fills out[0..min(count, max)) with every device's memory. Returns the number of
 * devices written. A failing device is reported in its entry, never as an error. */
int nvml_read_devices(struct nvml *n, struct gpu_device *out, size_t max);

/* GPU memory used by the host pids in pids[0..npids), summed over devices (see struct
 * gpu_usage). Returns 0; a device that fails is reported through known/unknown_mask.
 * Without a process query in the driver, returns 0 with known = 0. */
int nvml_read_usage(struct nvml *n, const pid_t *pids, size_t npids, struct gpu_usage *out);

/* Every process using GPU memory, device by device. Writes at most max entries and
 * returns the number found (more than max means out was too small), -EOPNOTSUPP without
 * a process query in the driver. Devices that fail are skipped. */
int nvml_list_processes(struct nvml *n, struct gpu_proc *out, size_t max);

/* The folder the library was loaded from (the driver's: its libcuda.so.1 is there
 * too), in buf. 0, or -ENOENT when the loader does not say. */
int nvml_library_dir(const struct nvml *n, char *buf, size_t len);

/* Shuts NVML down and unloads the library. Accepts NULL. */
void nvml_close(struct nvml *n);

/* The "NSpid:" line of a /proc/PID/status text: the pid in each PID namespace, from the
 * namespace of the procfs mount (first) to the process's own (last). Writes at most max
 * pids and returns how many the line holds; -ENOENT when there is no NSpid line (kernels
 * before 4.1), -EINVAL when it is malformed. Pure: no I/O. */
int nspid_parse(const char *buf, size_t len, pid_t *out, size_t max);

/* The pid that process pid (as seen under our /proc) has inside its innermost PID
 * namespace, e.g. the pid a containerised program knows itself by. Returns 0 or -errno. */
int nspid_innermost(pid_t pid, pid_t *out);

/* Whether a readlink() of /proc/self/ns/pid ("pid:[4026531836]") names the initial PID
 * namespace, whose inode number is fixed by the kernel. Pure. */
int pidns_link_is_initial(const char *link);

/* 1 when rsswatch runs in the initial PID namespace (NVML pids are our pids), 0 when
 * not (NVML pids cannot be matched to ours), -errno when it cannot tell. */
int pidns_is_initial(void);

#endif
