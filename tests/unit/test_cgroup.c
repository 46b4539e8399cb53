/* cgroup parsers on real v1/v2 captures and malformed input, and cg_find/cg_reader
 * against the fixture trees in tests/fixtures (switched with sysroot_set()). */
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

#include "base/sysroot.h"
#include "source/cgroup.h"

#define FIX "tests/fixtures"
#define V2_CHILD "/sys/fs/cgroup/system.slice/prover.service/rsw-oom"
#define V1_CHILD "/sys/fs/cgroup/memory/process_api/d89c3b7f79dcc5e781eb897dd160613f/rsw-fixture"

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	char *buf = malloc(1 << 20);
	assert_non_null(buf);
	*len = fread(buf, 1, (1 << 20) - 1, f);
	buf[*len] = '\0';
	fclose(f);
	return buf;
}

static void test_mountinfo_v2(void **state)
{
	(void)state;
	size_t len;
	char *b = slurp(FIX "/cgroup-v2/proc/self/mountinfo", &len);
	struct cg_mount *m = malloc(sizeof(*m));
	assert_int_equal(cg_mountinfo_parse(b, len, m), 0);
	assert_true(m->has_v2);
	assert_false(m->has_v1);
	assert_string_equal(m->v2_mnt, "/sys/fs/cgroup");
	assert_string_equal(m->v2_root, "/");
	free(m);
	free(b);
}

static void test_mountinfo_v1_hybrid(void **state)
{
	(void)state;
	size_t len;
	char *b = slurp(FIX "/cgroup-v1/proc/self/mountinfo", &len);
	struct cg_mount *m = malloc(sizeof(*m));
	assert_int_equal(cg_mountinfo_parse(b, len, m), 0);
	assert_true(m->has_v1);
	assert_string_equal(m->v1_mnt, "/sys/fs/cgroup/memory");
	assert_string_equal(m->v1_root, "/");
	/* the hybrid host also has a controller-less cgroup2 mount */
	assert_true(m->has_v2);
	assert_string_equal(m->v2_mnt, "/sys/fs/cgroup/unified");
	free(m);
	free(b);
}

static void test_mountinfo_escapes_and_bad(void **state)
{
	(void)state;
	static const char esc[] =
		"41 31 0:37 /a\\040b /sys/fs/cgroup/mem\\040ory rw - cgroup cgroup rw,cpu,memory\n";
	static const char no_dash[] = "41 31 0:37 / /sys/fs/cgroup/memory rw cgroup cgroup rw,memory\n";
	static const char short_after_dash[] = "41 31 0:37 / /x rw - cgroup\n";
	static const char opt_memory_not_super[] =
		"41 31 0:37 / /x rw,memory - cgroup cgroup rw,cpu\n";
	struct cg_mount *m = malloc(sizeof(*m));
	assert_int_equal(cg_mountinfo_parse(esc, strlen(esc), m), 0);
	assert_true(m->has_v1);
	assert_string_equal(m->v1_mnt, "/sys/fs/cgroup/mem ory");
	assert_string_equal(m->v1_root, "/a b");
	assert_int_equal(cg_mountinfo_parse(no_dash, strlen(no_dash), m), -EINVAL);
	assert_int_equal(cg_mountinfo_parse(short_after_dash, strlen(short_after_dash), m), -EINVAL);
	assert_int_equal(cg_mountinfo_parse(opt_memory_not_super, strlen(opt_memory_not_super), m), 0);
	assert_false(m->has_v1);
	assert_int_equal(cg_mountinfo_parse("", 0, m), 0);
	assert_false(m->has_v1 || m->has_v2);
	free(m);
}

static void test_proc_path(void **state)
{
	(void)state;
	char out[PATH_MAX];
	size_t len;
	char *b = slurp(FIX "/cgroup-v1/proc/4107/cgroup", &len);
	assert_int_equal(cg_proc_path_parse(b, len, 1, out, sizeof(out)), 0);
	assert_string_equal(out, "/process_api/d89c3b7f79dcc5e781eb897dd160613f/rsw-fixture");
	assert_int_equal(cg_proc_path_parse(b, len, 2, out, sizeof(out)), 0);
	assert_string_equal(out, "/");
	free(b);

	static const char comb[] = "3:cpu,cpuacct:/x\n2:cpuset,memory:/a:b\n0::/u\n";
	assert_int_equal(cg_proc_path_parse(comb, strlen(comb), 1, out, sizeof(out)), 0);
	assert_string_equal(out, "/a:b");
	static const char cpuacct_only[] = "3:cpu,cpuacct:/x\n2:memoryx:/y\n";
	assert_int_equal(cg_proc_path_parse(cpuacct_only, strlen(cpuacct_only), 1, out, sizeof(out)), -ENOENT);
	static const char v2[] = "0::/system.slice/prover.service/rsw-oom\n";
	assert_int_equal(cg_proc_path_parse(v2, strlen(v2), 1, out, sizeof(out)), -ENOENT);
	assert_int_equal(cg_proc_path_parse(v2, strlen(v2), 2, out, sizeof(out)), 0);
	assert_string_equal(out, "/system.slice/prover.service/rsw-oom");
	static const char del[] = "0::/gone (deleted)\n";
	assert_int_equal(cg_proc_path_parse(del, strlen(del), 2, out, sizeof(out)), -ENOENT);
	char small[8];
	memcpy(small, "keep", 5);
	assert_int_equal(cg_proc_path_parse(v2, strlen(v2), 2, small, sizeof(small)), -ENAMETOOLONG);
	assert_string_equal(small, "keep");
	static const char nocolon[] = "garbage\n";
	assert_int_equal(cg_proc_path_parse(nocolon, strlen(nocolon), 2, out, sizeof(out)), -EINVAL);
	static const char badnum[] = "x::/a\n";
	assert_int_equal(cg_proc_path_parse(badnum, strlen(badnum), 2, out, sizeof(out)), -EINVAL);
	static const char relative[] = "0::a\n";
	assert_int_equal(cg_proc_path_parse(relative, strlen(relative), 2, out, sizeof(out)), -EINVAL);
	static const char trunc[] = "0:";
	assert_int_equal(cg_proc_path_parse(trunc, strlen(trunc), 2, out, sizeof(out)), -EINVAL);
	assert_int_equal(cg_proc_path_parse(v2, strlen(v2), 3, out, sizeof(out)), -EINVAL);
}

static void test_controllers(void **state)
{
	(void)state;
	static const char all[] = "cpuset cpu io memory hugetlb pids rdma misc\n";
	assert_true(cg_controllers_have_memory(all, strlen(all)));
	assert_true(cg_controllers_have_memory("memory\n", 7));
	assert_false(cg_controllers_have_memory("hugetlb\n", 8));
	assert_false(cg_controllers_have_memory("memoryx cpu", 11));
	assert_false(cg_controllers_have_memory("", 0));
}

static void test_values_and_limits(void **state)
{
	(void)state;
	uint64_t v = 7;
	assert_int_equal(cg_value_parse("376832\n", 7, &v), 0);
	assert_true(v == 376832);
	assert_int_equal(cg_value_parse("0", 1, &v), 0);
	assert_true(v == 0);
	v = 7;
	assert_int_equal(cg_value_parse("max\n", 4, &v), -EINVAL);	/* not a limit file */
	assert_int_equal(cg_value_parse("\n", 1, &v), -EINVAL);
	assert_int_equal(cg_value_parse("", 0, &v), -EINVAL);
	assert_int_equal(cg_value_parse("12 \n", 4, &v), -EINVAL);
	assert_int_equal(cg_value_parse("1\n\n", 3, &v), -EINVAL);
	assert_int_equal(cg_value_parse("-1\n", 3, &v), -EINVAL);
	assert_int_equal(cg_value_parse("18446744073709551616\n", 21, &v), -ERANGE);
	assert_true(v == 7);

	assert_int_equal(cg_limit_parse("max\n", 4, &v), 0);
	assert_true(v == CG_UNLIMITED);
	assert_int_equal(cg_limit_parse("67108864\n", 9, &v), 0);
	assert_true(v == 67108864);
	assert_int_equal(cg_limit_parse("9223372036854771712\n", 20, &v), 0);	/* v1, 4 KiB pages */
	assert_true(v == CG_UNLIMITED);
	assert_int_equal(cg_limit_parse("9223372036854710272\n", 20, &v), 0);	/* v1, 64 KiB pages */
	assert_true(v == CG_UNLIMITED);
	assert_int_equal(cg_limit_parse("9223372036854644736\n", 20, &v), 0);	/* a real, huge limit */
	assert_true(v == 9223372036854644736ULL);
	assert_int_equal(cg_limit_parse("maximum\n", 8, &v), -EINVAL);
	assert_int_equal(cg_limit_parse("Max\n", 4, &v), -EINVAL);
}

static void test_events(void **state)
{
	(void)state;
	size_t len;
	struct cg_events ev;
	char *b = slurp(FIX "/cgroup-v2-oom" V2_CHILD "/memory.events", &len);
	assert_int_equal(cg_events_parse(b, len, &ev), 0);
	assert_true(ev.max == 105 && ev.oom == 4 && ev.oom_kill == 1 && ev.oom_group_kill == 0);
	assert_int_equal(ev.have, CG_EV_LOW | CG_EV_HIGH | CG_EV_MAX | CG_EV_OOM |
				  CG_EV_OOM_KILL | CG_EV_OOM_GROUP_KILL);
	free(b);
	b = slurp(FIX "/cgroup-v2" V2_CHILD "/memory.events", &len);
	assert_int_equal(cg_events_parse(b, len, &ev), 0);
	assert_true(ev.oom == 0 && ev.oom_kill == 0);
	free(b);

	static const char old[] = "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n";	/* before 5.17 */
	assert_int_equal(cg_events_parse(old, strlen(old), &ev), 0);
	assert_false(ev.have & CG_EV_OOM_GROUP_KILL);
	static const char future[] = "low 0\nhigh 0\nmax 3\noom 1\noom_kill 2\nsomething_new 5\n";
	assert_int_equal(cg_events_parse(future, strlen(future), &ev), 0);
	assert_true(ev.oom_kill == 2);
	memset(&ev, 0x5a, sizeof(ev));
	struct cg_events keep = ev;
	static const char missing[] = "low 0\nhigh 0\nmax 3\noom 1\n";
	assert_int_equal(cg_events_parse(missing, strlen(missing), &ev), -EINVAL);
	static const char garbage[] = "oom 1\noom_kill one\n";
	assert_int_equal(cg_events_parse(garbage, strlen(garbage), &ev), -EINVAL);
	static const char nospace[] = "oom 1\noom_kill\n";
	assert_int_equal(cg_events_parse(nospace, strlen(nospace), &ev), -EINVAL);
	static const char overflow[] = "oom 1\noom_kill 99999999999999999999\n";
	assert_int_equal(cg_events_parse(overflow, strlen(overflow), &ev), -ERANGE);
	static const char truncated[] = "oom 1\noom_kill ";
	assert_int_equal(cg_events_parse(truncated, strlen(truncated), &ev), -EINVAL);
	assert_memory_equal(&ev, &keep, sizeof(ev));
}

static void test_oom_control(void **state)
{
	(void)state;
	size_t len;
	struct cg_oom_control oc;
	char *b = slurp(FIX "/cgroup-v1-oom" V1_CHILD "/memory.oom_control", &len);
	assert_int_equal(cg_oom_control_parse(b, len, &oc), 0);
	assert_false(oc.oom_kill_disable);
	assert_false(oc.under_oom);
	assert_true(oc.has_oom_kill);
	assert_true(oc.oom_kill == 1);
	free(b);
	b = slurp(FIX "/cgroup-v1" V1_CHILD "/memory.oom_control", &len);
	assert_int_equal(cg_oom_control_parse(b, len, &oc), 0);
	assert_true(oc.oom_kill == 0);
	free(b);
	static const char old[] = "oom_kill_disable 1\nunder_oom 1\n";	/* before 4.13 */
	assert_int_equal(cg_oom_control_parse(old, strlen(old), &oc), 0);
	assert_true(oc.oom_kill_disable && oc.under_oom && !oc.has_oom_kill);
	static const char bad[] = "oom_kill_disable 2\nunder_oom 0\noom_kill 0\n";
	assert_int_equal(cg_oom_control_parse(bad, strlen(bad), &oc), -EINVAL);
	static const char missing[] = "oom_kill 3\n";
	assert_int_equal(cg_oom_control_parse(missing, strlen(missing), &oc), -EINVAL);
	static const char junk[] = "oom_kill_disable 0\nunder_oom 0\noom_kill 3x\n";
	assert_int_equal(cg_oom_control_parse(junk, strlen(junk), &oc), -EINVAL);
}

static void test_stat_v2(void **state)
{
	(void)state;
	size_t len;
	struct cg_stat st;
	char *b = slurp(FIX "/cgroup-v2-oom" V2_CHILD "/memory.stat", &len);
	assert_int_equal(cg_stat_parse(b, len, &st), 0);
	assert_true(st.anon == 0 && st.file == 28672 && st.kernel == 315392);
	assert_true(st.slab == 111752 && st.inactive_file == 20480 && st.pgfault == 16532);
	assert_true(st.have & CG_ST_KERNEL);
	assert_false(st.have & CG_ST_SWAP);
	free(b);
}

static void test_stat_v1(void **state)
{
	(void)state;
	size_t len;
	struct cg_stat st;
	char *b = slurp(FIX "/cgroup-v1" V1_CHILD "/memory.stat", &len);
	assert_int_equal(cg_stat_parse(b, len, &st), 0);
	assert_true(st.anon == 28016640 && st.file == 4096 && st.file_dirty == 4096);
	assert_true(st.inactive_anon == 28012544 && st.pgfault == 13927);
	assert_true(st.have & CG_ST_SWAP);
	assert_false(st.have & CG_ST_KERNEL);
	free(b);

	/* total_* (hierarchical) wins whatever the order */
	static const char tot_first[] = "total_rss 900\ntotal_cache 800\nrss 1\ncache 2\n";
	assert_int_equal(cg_stat_parse(tot_first, strlen(tot_first), &st), 0);
	assert_true(st.anon == 900 && st.file == 800);
	static const char local_only[] = "rss 1\ncache 2\nmapped_file 3\nshmem 4\n";
	assert_int_equal(cg_stat_parse(local_only, strlen(local_only), &st), 0);
	assert_true(st.anon == 1 && st.file == 2 && st.file_mapped == 3 && st.shmem == 4);
	static const char no_file[] = "anon 5\nshmem 0\n";
	assert_int_equal(cg_stat_parse(no_file, strlen(no_file), &st), -EINVAL);
	static const char garbage[] = "anon 5\nfile five\n";
	assert_int_equal(cg_stat_parse(garbage, strlen(garbage), &st), -EINVAL);
	static const char numa_style[] = "anon N0=0\nfile N0=0\n";
	assert_int_equal(cg_stat_parse(numa_style, strlen(numa_style), &st), -EINVAL);
}

static void test_procs(void **state)
{
	(void)state;
	pid_t pids[4] = { 0 };
	size_t n = 99;
	static const char three[] = "4107\n4300\n1\n";
	assert_int_equal(cg_procs_parse(three, strlen(three), pids, 4, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(pids[0], 4107);
	assert_int_equal(pids[2], 1);
	assert_int_equal(cg_procs_parse(three, strlen(three), pids, 1, &n), 0);
	assert_int_equal(n, 3);	/* more than fit */
	assert_int_equal(cg_procs_parse("", 0, pids, 4, &n), 0);
	assert_int_equal(n, 0);
	n = 99;
	assert_int_equal(cg_procs_parse("12\n\n13\n", 8, pids, 4, &n), -EINVAL);
	assert_int_equal(cg_procs_parse("0\n", 2, pids, 4, &n), -EINVAL);
	assert_int_equal(cg_procs_parse("2147483648\n", 11, pids, 4, &n), -EINVAL);
	assert_int_equal(cg_procs_parse("12 \n", 4, pids, 4, &n), -EINVAL);
	assert_int_equal(n, 99);
}

static void test_find_v2(void **state)
{
	(void)state;
	struct cg_loc loc;
	sysroot_set(FIX "/cgroup-v2");
	assert_int_equal(cg_find(499, &loc), 0);
	assert_int_equal(loc.version, 2);
	assert_string_equal(loc.dir, FIX "/cgroup-v2" V2_CHILD);
	assert_int_equal(cg_find(0, &loc), 0);
	assert_string_equal(loc.dir, FIX "/cgroup-v2/sys/fs/cgroup/system.slice/prover.service/rsswatch-leaf");
	assert_int_equal(cg_find(4242, &loc), -ESRCH);
	sysroot_set(NULL);
}

/* A cgroup's path in its hierarchy, as the kernel log names it: the mount (and the
 * sysroot) off, the mounted root on. */
static void test_hier_path(void **state)
{
	(void)state;
	struct cg_mount *m = calloc(1, sizeof(*m));
	struct cg_loc loc;
	char path[PATH_MAX];
	assert_non_null(m);
	sysroot_set(FIX "/cgroup-v2");
	assert_int_equal(cg_mount_read(m), 0);
	assert_int_equal(cg_find_in(m, 0, &loc), 0);
	cg_hier_path(m, &loc, path, sizeof(path));
	assert_string_equal(path, "/system.slice/prover.service/rsswatch-leaf");
	snprintf(loc.dir, sizeof(loc.dir), "%s", FIX "/cgroup-v2/sys/fs/cgroup");
	cg_hier_path(m, &loc, path, sizeof(path));
	assert_string_equal(path, "/");
	snprintf(loc.dir, sizeof(loc.dir), "%s", "/elsewhere/a");	/* not under the mount */
	cg_hier_path(m, &loc, path, sizeof(path));
	assert_string_equal(path, "/elsewhere/a");
	sysroot_set(NULL);

	memset(m, 0, sizeof(*m));
	m->has_v1 = true;
	snprintf(m->v1_mnt, sizeof(m->v1_mnt), "/sys/fs/cgroup/memory");
	snprintf(m->v1_root, sizeof(m->v1_root), "/x");
	loc.version = 1;
	snprintf(loc.dir, sizeof(loc.dir), "/sys/fs/cgroup/memory/a/b");
	cg_hier_path(m, &loc, path, sizeof(path));
	assert_string_equal(path, "/x/a/b");
	snprintf(loc.dir, sizeof(loc.dir), "/sys/fs/cgroup/memoryx/a");	/* a sibling mount */
	cg_hier_path(m, &loc, path, sizeof(path));
	assert_string_equal(path, "/sys/fs/cgroup/memoryx/a");
	free(m);
}

static void test_find_v1(void **state)
{
	(void)state;
	struct cg_loc loc;
	sysroot_set(FIX "/cgroup-v1");
	assert_int_equal(cg_find(4107, &loc), 0);
	assert_int_equal(loc.version, 1);
	assert_string_equal(loc.dir, FIX "/cgroup-v1" V1_CHILD);
	sysroot_set(NULL);
}

static void test_reader_v2(void **state)
{
	(void)state;
	struct cg_reader *r = malloc(sizeof(*r));
	struct cg_sample s;
	struct cg_stat st;
	assert_int_equal(cg_reader_open(r, 2, FIX "/cgroup-v2-oom" V2_CHILD, false), 0);
	assert_int_equal(cg_reader_read(r, &s), 0);
	assert_true(s.usage == 376832 && s.limit == 67108864 && s.peak == 67108864);
	assert_true(s.oom == 4 && s.oom_kill == 1);
	assert_int_equal(s.have, CG_S_USAGE | CG_S_LIMIT | CG_S_PEAK | CG_S_OOM | CG_S_OOM_KILL);
	assert_int_equal(cg_reader_read_stat(r, &st), 0);
	assert_true(st.file == 28672);
	cg_reader_close(r);
	cg_reader_close(r);	/* twice is fine */
	assert_int_equal(cg_reader_open(r, 2, FIX "/cgroup-v2-oom/sys/fs/cgroup/nope", false), -ENOENT);
	cg_reader_close(r);
	/* a v1 directory read as v2 has no memory.current */
	assert_int_equal(cg_reader_open(r, 2, FIX "/cgroup-v1" V1_CHILD, false), -ENOENT);
	free(r);
}

/* A tree captured whole on the GPU machine (tests/gpu/capture-cgroup-v2.sh): the shell's
 * own non-root v2 cgroup, as rsswatch finds and reads it there. */
#define V2_REAL "/cgroup-v2-real"
#define V2_REAL_CG "/sys/fs/cgroup/process_api/fd6930e708fef2377ae812797190c1f2"

static void test_real_v2_capture(void **state)
{
	(void)state;
	struct cg_loc loc;
	sysroot_set(FIX V2_REAL);
	assert_int_equal(cg_find(418, &loc), 0);
	assert_int_equal(loc.version, 2);
	assert_string_equal(loc.dir, FIX V2_REAL V2_REAL_CG);
	sysroot_set(NULL);

	struct cg_reader *r = malloc(sizeof(*r));
	struct cg_sample s;
	assert_int_equal(cg_reader_open(r, 2, FIX V2_REAL V2_REAL_CG, false), 0);
	assert_int_equal(cg_reader_read(r, &s), 0);
	assert_true(s.usage == 5816320);		/* memory.current as captured */
	assert_true(s.limit == CG_UNLIMITED);		/* memory.max "max" */
	assert_true(s.peak == 7065600 && s.oom_kill == 0);
	assert_true(s.have & CG_S_OOM_KILL);
	cg_reader_close(r);
	free(r);
}

static void test_reader_v1(void **state)
{
	(void)state;
	struct cg_reader *r = malloc(sizeof(*r));
	struct cg_sample s;
	/* not owned: the v1 peak must never be reset */
	assert_int_equal(cg_reader_open(r, 1, FIX "/cgroup-v1-oom" V1_CHILD, false), 0);
	assert_int_equal(r->peak_reset, CG_PEAK_RESET_NONE);
	assert_int_equal(cg_reader_reset_peak(r), -EOPNOTSUPP);
	assert_int_equal(cg_reader_read(r, &s), 0);
	assert_true(s.usage == 28348416 && s.limit == 67108864 && s.peak == 67108864);
	assert_true(s.oom_kill == 1 && !s.under_oom);
	assert_int_equal(s.have, CG_S_USAGE | CG_S_LIMIT | CG_S_PEAK | CG_S_OOM_KILL | CG_S_UNDER_OOM);
	cg_reader_close(r);
	free(r);
}

static void test_reader_missing_optional(void **state)
{
	(void)state;
	/* a cgroup with only the usage file (memory.peak before 5.19 and so on) */
	char dir[] = "/tmp/rsw-cg-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/memory.current", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("4096\n", f);
	fclose(f);
	struct cg_reader *r = malloc(sizeof(*r));
	struct cg_sample s;
	assert_int_equal(cg_reader_open(r, 2, dir, false), 0);
	assert_int_equal(cg_reader_read(r, &s), 0);
	assert_true(s.usage == 4096 && s.limit == CG_UNLIMITED);
	assert_int_equal(s.have, CG_S_USAGE);
	assert_int_equal(cg_reader_reset_peak(r), -EOPNOTSUPP);
	struct cg_stat st;
	assert_int_equal(cg_reader_read_stat(r, &st), -ENOENT);
	/* garbage in the usage file is an error, the sample is untouched */
	f = fopen(path, "w");
	fputs("lots\n", f);
	fclose(f);
	s.usage = 1;
	assert_int_equal(cg_reader_read(r, &s), -EINVAL);
	assert_true(s.usage == 1);
	cg_reader_close(r);
	free(r);
	unlink(path);
	rmdir(dir);
}

static void test_read_procs(void **state)
{
	(void)state;
	pid_t *pids;
	size_t n;
	assert_int_equal(cg_read_procs(FIX "/cgroup-v1" V1_CHILD, &pids, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(pids[0], 4107);
	free(pids);
	assert_int_equal(cg_read_procs(FIX "/cgroup-v2" V2_CHILD, &pids, &n), 0);
	assert_int_equal(n, 0);
	free(pids);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mountinfo_v2),
		cmocka_unit_test(test_mountinfo_v1_hybrid),
		cmocka_unit_test(test_mountinfo_escapes_and_bad),
		cmocka_unit_test(test_proc_path),
		cmocka_unit_test(test_controllers),
		cmocka_unit_test(test_values_and_limits),
		cmocka_unit_test(test_events),
		cmocka_unit_test(test_oom_control),
		cmocka_unit_test(test_stat_v2),
		cmocka_unit_test(test_stat_v1),
		cmocka_unit_test(test_procs),
		cmocka_unit_test(test_find_v2),
		cmocka_unit_test(test_find_v1),
		cmocka_unit_test(test_hier_path),
		cmocka_unit_test(test_reader_v2),
		cmocka_unit_test(test_reader_v1),
		cmocka_unit_test(test_real_v2_capture),
		cmocka_unit_test(test_reader_missing_optional),
		cmocka_unit_test(test_read_procs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
