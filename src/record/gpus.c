#include "record/gpus.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "source/kpeak.h"
#include "source/kstacks.h"

/* The most processes listed: more than a driver allows on all of a host's GPUs. */
#define GPU_USERS_MAX 4096

int gpus_open(struct record_opts *o, int64_t interval_ns, char *why, size_t n)
{
	int e = nvml_open(&o->nvml, why, n);
	if (e < 0) {
		o->nvml = NULL;
		return e;
	}
	o->gpu_interval_ns = interval_ns ? interval_ns : GPU_INTERVAL_DEFAULT_NS;
	return nvml_device_count(o->nvml);
}

/* Attaches the probes of k, and of the stacks program ks where it runs, to the file open
 * at fd (closed here), named what, and adds what happened to why (after "; " where it
 * holds something already). */
static int probe_file(struct kpeak *k, struct kstacks *ks, int fd, const char *what, char *why,
		      size_t n)
{
	char err[160];
	int e = kpeak_gpu_attach(k, fd, err, sizeof(err));
	if (e > 0 && ks && kstacks_gpu_attach(ks, fd, err, sizeof(err)) < 0) {
		size_t len = strlen(why);	/* the bytes without who asked for them */
		if (len < n)
			snprintf(why + len, n - len, "%sthe stacks of %s: %s", len ? "; " : "",
				 what, err);
	}
	close(fd);
	size_t len = strlen(why);
	const char *sep = len ? "; " : "";
	if (len < n && e < 0)
		snprintf(why + len, n - len, "%s%s: %s", sep, what, err);
	else if (len < n && e > 0)
		snprintf(why + len, n - len, "%s%d entry points of %s", sep, e, what);
	return e;
}

int gpus_probe_mapped(struct kpeak *k, struct kstacks *ks, pid_t pid, char *why, size_t n)
{
	char what[64];
	/* untrusted, wherever it is (a container's): taken as the file mapped, never by
	 * its name */
	int fd = proc_open_mapped(pid, "libcuda.so");
	if (fd < 0)
		return -ENOENT;
	snprintf(what, sizeof(what), "the libcuda.so pid %d maps", (int)pid);
	return probe_file(k, ks, fd, what, why, n) > 0;
}

int gpus_probe(struct record_opts *o, pid_t pid, int64_t interval_ns, char *why, size_t n)
{
	char dir[PATH_MAX], path[PATH_MAX + 16];
	if (!o->nvml)
		return 0;
	if (!o->kpeak) {
		snprintf(why, n, "the eBPF engine is not running");
		return 0;
	}
	why[0] = 0;
	/* The driver's own folder: where a command's loader finds libcuda.so.1 too. */
	if (nvml_library_dir(o->nvml, dir, sizeof(dir)) == 0) {
		snprintf(path, sizeof(path), "%s/libcuda.so.1", dir);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			probe_file(o->kpeak, o->kstacks, fd, path, why, n);
	}
	if (pid > 0)
		gpus_probe_mapped(o->kpeak, o->kstacks, pid, why, n);
	int files = kpeak_gpu_files(o->kpeak);
	if (!why[0])
		snprintf(why, n, "no CUDA driver library found");
	if (files > 0 && !interval_ns)
		o->gpu_interval_ns = GPU_INTERVAL_PROBED_NS;
	return files;
}

void gpus_close(struct record_opts *o)
{
	nvml_close(o->nvml);
	o->nvml = NULL;
}

int gpu_inventory_read(struct gpu_inventory *inv, char *why, size_t n)
{
	struct nvml *nv;
	memset(inv, 0, sizeof(*inv));
	int e = nvml_open(&nv, why, n);
	if (e < 0)
		return e;
	inv->ndev = nvml_read_devices(nv, inv->dev, NVML_MAX_DEVICES);
	struct gpu_proc *p = xcalloc(GPU_USERS_MAX, sizeof(*p));
	inv->nusers = nvml_list_processes(nv, p, GPU_USERS_MAX);
	if (inv->nusers > GPU_USERS_MAX)
		inv->nusers = GPU_USERS_MAX;
	nvml_close(nv);
	if (inv->nusers > 0)
		inv->users = xcalloc((size_t)inv->nusers, sizeof(*inv->users));
	for (int i = 0; i < inv->nusers; i++) {
		struct proc_stat st;
		struct gpu_user *u = &inv->users[i];
		u->p = p[i];
		u->has_comm = proc_read_stat(p[i].pid, &st) == 0;
		if (u->has_comm)
			strlcpy_rsw(u->comm, st.comm, sizeof(u->comm));
	}
	free(p);
	inv->own_pidns = pidns_is_initial() == 0;
	return 0;
}

void gpu_inventory_release(struct gpu_inventory *inv)
{
	free(inv->users);
	inv->users = NULL;
}
