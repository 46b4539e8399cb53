#include "record/gpus.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

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
