/* The NVML source against the fake library (tests/fake/fake_nvml.c), and the PID
 * namespace helpers. The fakes live in ../fake/ next to this binary's folder. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "source/nvml.h"

#define KiB 1024ULL
#define MiB (1024 * KiB)
#define GiB (1024 * MiB)

static char fake_dir[PATH_MAX + 8];
static char script_path[PATH_MAX];

/* Points RSSWATCH_NVML_LIB at a fake variant ("" for the full one) and writes the
 * script it will read at nvmlInit. */
static void use_fake(const char *variant, const char *script)
{
	char lib[PATH_MAX + 64];
	snprintf(lib, sizeof(lib), "%s/%slibnvidia-ml.so.1", fake_dir, variant);
	assert_int_equal(access(lib, R_OK), 0);
	setenv("RSSWATCH_NVML_LIB", lib, 1);
	FILE *f = fopen(script_path, "w");
	assert_non_null(f);
	fputs(script, f);
	assert_int_equal(fclose(f), 0);
	setenv("FAKE_NVML_SCRIPT", script_path, 1);
}

static struct nvml *open_fake(const char *variant, const char *script)
{
	struct nvml *n = NULL;
	char why[256] = "";
	use_fake(variant, script);
	int r = nvml_open(&n, why, sizeof(why));
	if (r != 0)
		fail_msg("nvml_open: %d (%s)", r, why);
	assert_non_null(n);
	return n;
}

static void test_absent(void **state)
{
	(void)state;
	struct nvml *n = NULL;
	char why[256] = "";
	setenv("RSSWATCH_NVML_LIB", "/nonexistent/libnvidia-ml.so.1", 1);
	assert_int_equal(nvml_open(&n, why, sizeof(why)), -ENOENT);
	assert_null(n);
	assert_non_null(strstr(why, "/nonexistent/libnvidia-ml.so.1"));
	nvml_close(NULL);
}

static void test_devices(void **state)
{
	(void)state;
	struct nvml *n = open_fake("",
		"device 0 name \"Fake H200\" total 141G used 10G\n"
		"device 1 name \"Fake H100\" uuid GPU-1234 total 80G used 512M mig on\n");
	struct gpu_device g[4];
	assert_int_equal(nvml_device_count(n), 2);
	assert_int_equal(nvml_has_process_query(n), 1);
	assert_int_equal(nvml_read_devices(n, g, 4), 2);
	assert_int_equal(g[0].index, 0);
	assert_string_equal(g[0].name, "Fake H200");
	assert_true(g[0].total == 141 * GiB);
	assert_true(g[0].used == 10 * GiB);
	assert_int_equal(g[0].present, 1);
	assert_int_equal(g[0].err, 0);
	assert_int_equal(g[0].mig, 0);
	assert_string_equal(g[1].name, "Fake H100");
	assert_string_equal(g[1].uuid, "GPU-1234");
	assert_true(g[1].total == 80 * GiB);
	assert_true(g[1].used == 512 * MiB);
	assert_int_equal(g[1].mig, 1);
	/* A short output array takes the first devices only. */
	assert_int_equal(nvml_read_devices(n, g, 1), 1);
	assert_int_equal(g[0].index, 0);
	nvml_close(n);
}

static void test_usage_several_devices(void **state)
{
	(void)state;
	struct nvml *n = open_fake("",
		"device 0 total 141G\ndevice 1 total 141G\ndevice 2 total 141G\n"
		"proc self device 0 bytes 1G\n"
		"proc self device 1 bytes 2G\n"
		"proc 4242 device 1 bytes 512M\n"
		"proc 999999 device 0 bytes 5G\n"
		"proc 999999 device 2 bytes 7G\n");
	pid_t pids[] = { getpid(), 4242 };
	struct gpu_usage u;
	assert_int_equal(nvml_read_usage(n, pids, 2, &u), 0);
	assert_int_equal(u.known, 1);
	assert_true(u.bytes == 3 * GiB + 512 * MiB);
	assert_true(u.per_device[0] == 1 * GiB);
	assert_true(u.per_device[1] == 2 * GiB + 512 * MiB);
	assert_true(u.per_device[2] == 0);
	assert_true(u.unknown_mask == 0);
	/* A pid on no device uses nothing, and that is known. */
	pid_t none = 31337;
	assert_int_equal(nvml_read_usage(n, &none, 1, &u), 0);
	assert_int_equal(u.known, 1);
	assert_true(u.bytes == 0);

	struct gpu_proc p[8];
	assert_int_equal(nvml_list_processes(n, p, 8), 5);
	assert_int_equal(p[0].device, 0);
	assert_int_equal(p[0].pid, getpid());
	assert_true(p[0].bytes == 1 * GiB);
	assert_int_equal(p[0].known, 1);
	assert_int_equal(p[0].kind, GPU_PROC_COMPUTE);
	assert_int_equal(p[4].device, 2);
	assert_int_equal(p[4].pid, 999999);
	/* Too small an array: the count still says how many there are. */
	assert_int_equal(nvml_list_processes(n, p, 2), 5);
	nvml_close(n);
}

static void test_values_change(void **state)
{
	(void)state;
	struct nvml *n = open_fake("",
		"device 0 total 100G used 1G\n"
		"used device 0 bytes 20G from call 2\n"
		"used device 0 bytes 30G from call 3 to call 3\n"
		"proc self device 0 bytes 1G to call 1\n"
		"proc self device 0 bytes 3G from call 2 to call 2\n"
		"proc self device 0 bytes 6G from call 3 to call 3\n");
	pid_t self = getpid();
	struct gpu_usage u;
	struct gpu_device g;
	static const unsigned long long want_proc[] = { 1 * GiB, 3 * GiB, 6 * GiB, 0 };
	static const unsigned long long want_used[] = { 1 * GiB, 20 * GiB, 30 * GiB, 20 * GiB };
	for (int i = 0; i < 4; i++) {
		assert_int_equal(nvml_read_usage(n, &self, 1, &u), 0);
		assert_int_equal(u.known, 1);
		assert_true(u.bytes == want_proc[i]);
		assert_int_equal(nvml_read_devices(n, &g, 1), 1);
		assert_true(g.used == want_used[i]);
	}
	nvml_close(n);
}

static void test_time_window(void **state)
{
	(void)state;
	/* Windows in milliseconds since nvmlInit: one open for the next hour, one that
	 * opens only an hour from now. */
	struct nvml *n = open_fake("",
		"device 0 total 1G\n"
		"proc self device 0 bytes 100M to ms 3600000\n"
		"proc self device 0 bytes 200M from ms 3600000\n");
	pid_t self = getpid();
	struct gpu_usage u;
	assert_int_equal(nvml_read_usage(n, &self, 1, &u), 0);
	assert_true(u.bytes == 100 * MiB);
	nvml_close(n);
}

static void test_call_failure(void **state)
{
	(void)state;
	struct nvml *n = open_fake("",
		"device 0 total 10G used 1G\ndevice 1 total 10G used 2G\n"
		"proc self device 0 bytes 1G\nproc self device 1 bytes 2G\n"
		"fail procs device 0 error unknown from call 2 to call 2\n"
		"fail memory device 1 error unknown from call 2 to call 2\n");
	pid_t self = getpid();
	struct gpu_usage u;
	struct gpu_device g[2];

	assert_int_equal(nvml_read_usage(n, &self, 1, &u), 0);
	assert_int_equal(u.known, 1);
	assert_true(u.bytes == 3 * GiB);
	/* Second read: device 0 fails; device 1 still counts, the total is partial. */
	assert_int_equal(nvml_read_usage(n, &self, 1, &u), 0);
	assert_int_equal(u.known, 0);
	assert_true(u.unknown_mask == 1);
	assert_true(u.bytes == 2 * GiB);
	/* A failure is not sticky. */
	assert_int_equal(nvml_read_usage(n, &self, 1, &u), 0);
	assert_int_equal(u.known, 1);
	assert_true(u.bytes == 3 * GiB);

	assert_int_equal(nvml_read_devices(n, g, 2), 2);
	assert_int_equal(g[1].err, 0);
	assert_int_equal(nvml_read_devices(n, g, 2), 2);
	assert_int_equal(g[0].err, 0);
	assert_true(g[0].used == 1 * GiB);
	assert_int_equal(g[1].err, -EIO);
	assert_int_equal(g[1].present, 1);
	assert_true(g[1].used == 0 && g[1].total == 0);
	assert_int_equal(nvml_read_devices(n, g, 2), 2);
	assert_int_equal(g[1].err, 0);
	assert_true(g[1].used == 2 * GiB);
	nvml_close(n);
}

static void test_device_lost(void **state)
{
	(void)state;
	struct nvml *n = open_fake("",
		"device 0 total 10G used 1G\ndevice 1 total 10G used 2G\n"
		"proc self device 0 bytes 1G\nproc self device 1 bytes 2G\n"
		"fail all device 1 error lost from call 2\n");
	pid_t self = getpid();
	struct gpu_usage u;
	struct gpu_device g[2];

	assert_int_equal(nvml_read_devices(n, g, 2), 2);
	assert_int_equal(g[1].present, 1);
	assert_int_equal(nvml_read_usage(n, &self, 1, &u), 0);
	assert_true(u.bytes == 3 * GiB);
	/* Memory call 2 on device 1 reports it lost: marked absent, not an error. */
	assert_int_equal(nvml_read_devices(n, g, 2), 2);
	assert_int_equal(g[0].present, 1);
	assert_true(g[0].used == 1 * GiB);
	assert_int_equal(g[1].present, 0);
	assert_int_equal(g[1].err, -ENODEV);
	assert_string_equal(g[1].name, "Fake GPU 1");
	/* Its share is gone, and the figure over the remaining devices is complete. */
	assert_int_equal(nvml_read_usage(n, &self, 1, &u), 0);
	assert_int_equal(u.known, 1);
	assert_true(u.bytes == 1 * GiB);
	assert_true(u.per_device[1] == 0);
	struct gpu_proc p[4];
	assert_int_equal(nvml_list_processes(n, p, 4), 1);
	assert_int_equal(p[0].device, 0);
	/* It stays lost. */
	assert_int_equal(nvml_read_devices(n, g, 2), 2);
	assert_int_equal(g[1].present, 0);
	nvml_close(n);
}

static void test_lost_during_process_query(void **state)
{
	(void)state;
	struct nvml *n = open_fake("",
		"device 0 total 10G\ndevice 1 total 10G\n"
		"proc self device 0 bytes 1G\nproc self device 1 bytes 2G\n"
		"fail procs device 1 error lost\n");
	pid_t self = getpid();
	struct gpu_usage u;
	struct gpu_device g[2];
	assert_int_equal(nvml_read_usage(n, &self, 1, &u), 0);
	assert_int_equal(u.known, 1);
	assert_true(u.bytes == 1 * GiB);
	assert_int_equal(nvml_read_devices(n, g, 2), 2);
	assert_int_equal(g[1].present, 0);
	nvml_close(n);
}

static void test_entry32(void **state)
{
	(void)state;
	/* Three and two entries (one entry reads the same in both layouts). */
	struct nvml *n = open_fake("",
		"entry32\n"
		"device 0 total 141G\ndevice 1 total 141G\n"
		"proc 101 device 0 bytes 1G\n"
		"proc self device 0 bytes 2G\n"
		"proc 103 device 0 bytes 3G\n"
		"proc 201 device 1 bytes 5G\n"
		"proc self device 1 bytes 7G\n");
	pid_t pids[] = { getpid(), 103 };
	struct gpu_usage u;
	assert_int_equal(nvml_read_usage(n, pids, 2, &u), 0);
	assert_int_equal(u.known, 1);
	assert_true(u.per_device[0] == 5 * GiB);
	assert_true(u.per_device[1] == 7 * GiB);
	struct gpu_proc p[8];
	assert_int_equal(nvml_list_processes(n, p, 8), 5);
	assert_int_equal(p[0].pid, 101);
	assert_int_equal(p[1].pid, getpid());
	assert_int_equal(p[2].pid, 103);
	assert_true(p[2].bytes == 3 * GiB);
	assert_int_equal(p[2].gi, ~0u);
	assert_int_equal(p[3].pid, 201);
	assert_int_equal(p[4].pid, getpid());
	assert_true(p[4].bytes == 7 * GiB);
	nvml_close(n);
}

static void test_not_available(void **state)
{
	(void)state;
	struct nvml *n = open_fake("",
		"device 0 total 141G\ndevice 1 total 141G\n"
		"proc self device 0 bytes na\n"
		"proc self device 1 bytes 1G\n"
		"proc 4242 device 0 bytes na\n");
	pid_t self = getpid();
	struct gpu_usage u;
	assert_int_equal(nvml_read_usage(n, &self, 1, &u), 0);
	assert_int_equal(u.known, 0);
	assert_true(u.unknown_mask == 1);
	assert_true(u.bytes == 1 * GiB);	/* not 16 EiB */
	/* The unavailable figure of a process outside the set does not matter. */
	pid_t other = 777;
	assert_int_equal(nvml_read_usage(n, &other, 1, &u), 0);
	assert_int_equal(u.known, 1);
	struct gpu_proc p[4];
	assert_int_equal(nvml_list_processes(n, p, 4), 3);
	assert_int_equal(p[0].known, 0);
	assert_true(p[0].bytes == 0);
	assert_int_equal(p[2].known, 1);
	nvml_close(n);
}

static void test_graphics_merged(void **state)
{
	(void)state;
	struct nvml *n = open_fake("",
		"device 0 total 141G\n"
		"proc self device 0 bytes 1G\n"
		"proc self device 0 bytes 1G graphics\n"
		"proc 4242 device 0 bytes 256M graphics\n");
	pid_t pids[] = { getpid(), 4242 };
	struct gpu_usage u;
	assert_int_equal(nvml_read_usage(n, pids, 2, &u), 0);
	assert_int_equal(u.known, 1);
	assert_true(u.bytes == 1 * GiB + 256 * MiB);	/* self counted once */
	struct gpu_proc p[4];
	assert_int_equal(nvml_list_processes(n, p, 4), 2);
	assert_int_equal(p[0].kind, GPU_PROC_COMPUTE | GPU_PROC_GRAPHICS);
	assert_int_equal(p[1].kind, GPU_PROC_GRAPHICS);
	nvml_close(n);
}

static void test_mig_instances(void **state)
{
	(void)state;
	struct nvml *n = open_fake("",
		"device 0 total 141G mig on\n"
		"proc self device 0 bytes 1G gi 1 ci 0\n"
		"proc self device 0 bytes 2G gi 2 ci 0\n");
	pid_t self = getpid();
	struct gpu_usage u;
	assert_int_equal(nvml_read_usage(n, &self, 1, &u), 0);
	assert_true(u.bytes == 3 * GiB);
	struct gpu_proc p[4];
	assert_int_equal(nvml_list_processes(n, p, 4), 2);
	assert_int_equal(p[1].gi, 2);
	assert_int_equal(p[1].ci, 0);
	nvml_close(n);
}

static void test_insufficient_size(void **state)
{
	(void)state;
	/* More processes than the first buffer holds: grown and retried. */
	char script[16384];
	size_t o = 0;
	o += (size_t)snprintf(script + o, sizeof(script) - o, "device 0 total 141G\n");
	for (int i = 0; i < 150; i++)
		o += (size_t)snprintf(script + o, sizeof(script) - o,
				      "proc %d device 0 bytes 1M\n", 1000 + i);
	assert_true(o < sizeof(script));
	struct nvml *n = open_fake("", script);
	static struct gpu_proc p[200];
	assert_int_equal(nvml_list_processes(n, p, 200), 150);
	assert_int_equal(p[149].pid, 1149);
	pid_t pids[] = { 1000, 1149, 5 };
	struct gpu_usage u;
	assert_int_equal(nvml_read_usage(n, pids, 3, &u), 0);
	assert_int_equal(u.known, 1);
	assert_true(u.bytes == 2 * MiB);
	nvml_close(n);
}

static void test_no_process_query(void **state)
{
	(void)state;
	struct nvml *n = open_fake("noproc/", "device 0 total 141G used 3G\nproc self device 0 bytes 1G\n");
	pid_t self = getpid();
	struct gpu_usage u;
	struct gpu_device g;
	struct gpu_proc p[2];
	assert_int_equal(nvml_has_process_query(n), 0);
	assert_int_equal(nvml_read_usage(n, &self, 1, &u), 0);
	assert_int_equal(u.known, 0);
	assert_true(u.bytes == 0);
	assert_int_equal(nvml_list_processes(n, p, 2), -EOPNOTSUPP);
	assert_int_equal(nvml_read_devices(n, &g, 1), 1);
	assert_true(g.used == 3 * GiB);
	nvml_close(n);
}

static void test_no_memory_query(void **state)
{
	(void)state;
	struct nvml *n = NULL;
	char why[256] = "";
	use_fake("nomem/", "device 0 total 141G\n");
	assert_int_equal(nvml_open(&n, why, sizeof(why)), -ENOSYS);
	assert_null(n);
	assert_non_null(strstr(why, "nvmlDeviceGetMemoryInfo"));
}

static void test_old_driver(void **state)
{
	(void)state;
	/* Unversioned symbols only: nvmlInit, nvmlMemory_t, 16-byte process entries. */
	struct nvml *n = open_fake("old/",
		"device 0 total 16G used 4G\n"
		"proc self device 0 bytes 1G\nproc 4242 device 0 bytes 2G\nproc 55 device 0 bytes 4G\n");
	pid_t pids[] = { getpid(), 4242 };
	struct gpu_usage u;
	struct gpu_device g;
	assert_int_equal(nvml_read_devices(n, &g, 1), 1);
	assert_true(g.used == 4 * GiB && g.total == 16 * GiB);
	assert_int_equal(nvml_read_usage(n, pids, 2, &u), 0);
	assert_int_equal(u.known, 1);
	assert_true(u.bytes == 3 * GiB);
	struct gpu_proc p[4];
	assert_int_equal(nvml_list_processes(n, p, 4), 3);
	assert_int_equal(p[2].pid, 55);
	assert_true(p[2].bytes == 4 * GiB);
	nvml_close(n);
}

static void test_init_failure(void **state)
{
	(void)state;
	struct nvml *n = NULL;
	char why[256] = "";
	use_fake("", "device 0 total 1G\nfail init error driver_not_loaded\n");
	assert_int_equal(nvml_open(&n, why, sizeof(why)), -ENXIO);
	assert_null(n);
	assert_non_null(strstr(why, "Driver Not Loaded"));
	use_fake("", "device 0 total 1G\nfail count error unknown\n");
	assert_int_equal(nvml_open(&n, why, sizeof(why)), -EIO);
	assert_non_null(strstr(why, "cannot count devices"));
}

static void test_no_devices(void **state)
{
	(void)state;
	struct nvml *n = open_fake("", "# a driver without GPUs\n");
	struct gpu_device g;
	struct gpu_usage u;
	pid_t self = getpid();
	assert_int_equal(nvml_device_count(n), 0);
	assert_int_equal(nvml_read_devices(n, &g, 1), 0);
	assert_int_equal(nvml_read_usage(n, &self, 1, &u), 0);
	assert_int_equal(u.known, 1);
	assert_true(u.bytes == 0);
	nvml_close(n);
}

static void test_nspid_parse(void **state)
{
	(void)state;
	pid_t p[4] = { 0 };
	const char *host = "Name:\tbash\nTgid:\t812\nNgid:\t0\nPid:\t812\nPPid:\t1\n"
			   "NStgid:\t812\nNSpid:\t812\nNSpgid:\t812\n";
	assert_int_equal(nspid_parse(host, strlen(host), p, 4), 1);
	assert_int_equal(p[0], 812);

	const char *nested = "Pid:\t40211\nNStgid:\t40211\t7\nNSpid:\t40211\t7\t1\nNSpgid:\t1\n";
	assert_int_equal(nspid_parse(nested, strlen(nested), p, 4), 3);
	assert_int_equal(p[0], 40211);
	assert_int_equal(p[1], 7);
	assert_int_equal(p[2], 1);
	/* Fewer slots than levels: the count still says how many there are. */
	memset(p, 0, sizeof(p));
	assert_int_equal(nspid_parse(nested, strlen(nested), p, 1), 3);
	assert_int_equal(p[0], 40211);
	assert_int_equal(p[1], 0);
	/* Last line without a newline; length bounds the text. */
	const char *last = "Pid:\t9\nNSpid:\t9\t3";
	assert_int_equal(nspid_parse(last, strlen(last), p, 4), 2);
	assert_int_equal(p[1], 3);
	assert_int_equal(nspid_parse(last, strlen(last) - 2, p, 4), 1);

	const char *old = "Name:\tbash\nPid:\t812\nPPid:\t1\n";
	assert_int_equal(nspid_parse(old, strlen(old), p, 4), -ENOENT);
	const char *bad[] = { "NSpid:\n", "NSpid:\t12x\n", "NSpid:\t0\n", "NSpid:\t-3\n",
			      "NSpid:\t99999999999\n" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(nspid_parse(bad[i], strlen(bad[i]), p, 4), -EINVAL);
	/* "NSpidx:" is another key. */
	const char *other = "NSpgid:\t5\n";
	assert_int_equal(nspid_parse(other, strlen(other), p, 4), -ENOENT);
}

static void test_pidns(void **state)
{
	(void)state;
	assert_int_equal(pidns_link_is_initial("pid:[4026531836]"), 1);
	assert_int_equal(pidns_link_is_initial("pid:[4026532415]"), 0);
	assert_int_equal(pidns_link_is_initial(""), 0);
	int r = pidns_is_initial();
	assert_true(r == 0 || r == 1 || r == -EACCES || r == -ENOENT);
	pid_t inner = 0;
	assert_int_equal(nspid_innermost(getpid(), &inner), 0);
	assert_int_equal(inner, getpid());
	assert_true(nspid_innermost(INT32_MAX, &inner) < 0);
}

int main(void)
{
	char exe[PATH_MAX];
	ssize_t k = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (k < 0)
		return 1;
	exe[k] = '\0';
	/* BUILD/tests/test_nvml -> BUILD/fake */
	for (int i = 0; i < 2; i++) {
		char *s = strrchr(exe, '/');
		if (!s)
			return 1;
		*s = '\0';
	}
	snprintf(fake_dir, sizeof(fake_dir), "%s/fake", exe);
	const char *tmp = getenv("TMPDIR");
	snprintf(script_path, sizeof(script_path), "%s/test_nvml.%d.script",
		 tmp && *tmp ? tmp : "/tmp", (int)getpid());

	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_absent),
		cmocka_unit_test(test_devices),
		cmocka_unit_test(test_usage_several_devices),
		cmocka_unit_test(test_values_change),
		cmocka_unit_test(test_time_window),
		cmocka_unit_test(test_call_failure),
		cmocka_unit_test(test_device_lost),
		cmocka_unit_test(test_lost_during_process_query),
		cmocka_unit_test(test_entry32),
		cmocka_unit_test(test_not_available),
		cmocka_unit_test(test_graphics_merged),
		cmocka_unit_test(test_mig_instances),
		cmocka_unit_test(test_insufficient_size),
		cmocka_unit_test(test_no_process_query),
		cmocka_unit_test(test_no_memory_query),
		cmocka_unit_test(test_old_driver),
		cmocka_unit_test(test_init_failure),
		cmocka_unit_test(test_no_devices),
		cmocka_unit_test(test_nspid_parse),
		cmocka_unit_test(test_pidns),
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);
	unlink(script_path);
	return r;
}
