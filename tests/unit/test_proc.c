/* Parsers of /proc files, on bytes captured from a real machine (tests/fixtures/proc). */
#include "testutil.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <limits.h>
#include <string.h>

#include "source/proc.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void test_status_weird_name(void **state)
{
	(void)state;
	size_t len;
	char *buf = fixture("tests/fixtures/proc/status-weird-name.txt", &len);
	struct proc_status st;
	assert_int_equal(proc_status_parse(buf, len, &st), 0);
	assert_string_equal(st.name, "my (weird) hog)");
	assert_int_equal(st.ppid, 6555);
	/* VmRSS:    22716 kB etc., as captured */
	assert_true(st.mem.rss > 20 * 1024 * 1024);
	assert_true(st.mem.hwm >= st.mem.rss);
	assert_true(st.mem.anon + st.mem.file + st.mem.shmem == st.mem.rss);
	assert_int_equal(st.threads, 1);
	free(buf);
}

/* The kernel escapes a name's newlines and backslashes in status (not in stat): the
 * parser gives the name itself, as stat and exit records do, leading tab included. */
static void test_status_name_unescaped(void **state)
{
	(void)state;
	static const char text[] = "Name:\t\ta\\\\b\\nc\\x\nPPid:\t1\nThreads:\t1\n"
				   "VmHWM:\t1 kB\nVmRSS:\t1 kB\nRssAnon:\t1 kB\n"
				   "RssFile:\t0 kB\nRssShmem:\t0 kB\nVmSwap:\t0 kB\n";
	struct proc_status st;
	assert_int_equal(proc_status_parse(text, strlen(text), &st), 0);
	assert_string_equal(st.name, "\ta\\b\nc\\x");
}

static void test_status_exact_values(void **state)
{
	(void)state;
	static const char text[] =
		"Name:\tx\nUmask:\t0022\nState:\tR (running)\nPPid:\t77\n"
		"VmPeak:\t    3060 kB\nVmHWM:\t    1704 kB\nVmRSS:\t    1700 kB\n"
		"RssAnon:\t     112 kB\nRssFile:\t    1588 kB\nRssShmem:\t       0 kB\n"
		"VmSwap:\t       8 kB\nThreads:\t4\n";
	struct proc_status st;
	assert_int_equal(proc_status_parse(text, strlen(text), &st), 0);
	assert_int_equal(st.mem.hwm, 1704 * 1024);
	assert_int_equal(st.mem.rss, 1700 * 1024);
	assert_int_equal(st.mem.anon, 112 * 1024);
	assert_int_equal(st.mem.file, 1588 * 1024);
	assert_int_equal(st.mem.shmem, 0);
	assert_int_equal(st.mem.swap, 8 * 1024);
	assert_int_equal(st.threads, 4);
	assert_int_equal(st.ppid, 77);
}

static void test_status_zombie_and_kthread(void **state)
{
	(void)state;
	size_t len;
	struct proc_status st;
	char *buf = fixture("tests/fixtures/proc/status-zombie.txt", &len);
	assert_int_equal(proc_status_parse(buf, len, &st), -ENODATA);
	free(buf);
	buf = fixture("tests/fixtures/proc/status-kthread.txt", &len);
	assert_int_equal(proc_status_parse(buf, len, &st), -ENODATA);
	free(buf);
}

static void test_status_malformed(void **state)
{
	(void)state;
	struct proc_status st;
	static const char bad_unit[] = "Name:\tx\nPPid:\t1\nThreads:\t1\nVmHWM:\t1 MB\nVmRSS:\t1 kB\n";
	assert_int_equal(proc_status_parse(bad_unit, strlen(bad_unit), &st), -EINVAL);
	static const char missing_rss[] = "Name:\tx\nPPid:\t1\nThreads:\t1\nVmHWM:\t1 kB\n"
					  "RssAnon:\t1 kB\nRssFile:\t0 kB\nRssShmem:\t0 kB\n";
	assert_int_equal(proc_status_parse(missing_rss, strlen(missing_rss), &st), -EINVAL);
	static const char overflow[] = "Name:\tx\nPPid:\t1\nThreads:\t1\nVmHWM:\t99999999999999999999 kB\n";
	assert_int_equal(proc_status_parse(overflow, strlen(overflow), &st), -EINVAL);
	assert_int_equal(proc_status_parse("", 0, &st), -EINVAL);
	/* Truncated in the middle of the file: required lines missing. */
	size_t len;
	char *buf = fixture("tests/fixtures/proc/status-weird-name.txt", &len);
	assert_int_equal(proc_status_parse(buf, 40, &st), -EINVAL);
	free(buf);
}

static void test_stat_weird_name(void **state)
{
	(void)state;
	size_t len;
	char *buf = fixture("tests/fixtures/proc/stat-weird-name.txt", &len);
	struct proc_stat st;
	assert_int_equal(proc_stat_parse(buf, len, &st), 0);
	assert_string_equal(st.comm, "my (weird) hog)");
	assert_int_equal(st.state, 'S');
	assert_int_equal(st.ppid, 6555);
	assert_true(st.starttime == 61522);
	assert_true(st.minflt == 5229 && st.majflt == 0);
	assert_true(st.utime == 0 && st.stime == 1);
	free(buf);
}

/* Captured from a python3 loop here: each counter lands in its own field (minflt 10,
 * cminflt 11, majflt 12, cmajflt 13, utime 14, stime 15), children's left out. */
static void test_stat_counters(void **state)
{
	(void)state;
	size_t len;
	char *buf = fixture("tests/fixtures/proc/stat-busy.txt", &len);
	struct proc_stat st;
	assert_int_equal(proc_stat_parse(buf, len, &st), 0);
	assert_string_equal(st.comm, "python3");
	assert_true(st.minflt == 4513 && st.majflt == 1);
	assert_true(st.utime == 71 && st.stime == 2);
	assert_true(st.starttime == 1454605);
	free(buf);
	static const char badflt[] = "12 (x) S 1 1 1 0 -1 0 12x 0 0 0 0 0 0 0 0 0 0 0 1 0";
	assert_int_equal(proc_stat_parse(badflt, strlen(badflt), &st), -EINVAL);
	static const char over[] = "12 (x) S 1 1 1 0 -1 0 1 0 0 0 99999999999999999999 0 0 0 0 0 0 0 1 0";
	assert_int_equal(proc_stat_parse(over, strlen(over), &st), -EINVAL);
	/* cut before stime */
	static const char cut[] = "12 (x) S 1 1 1 0 -1 0 1 0 0 0 5";
	assert_int_equal(proc_stat_parse(cut, strlen(cut), &st), -EINVAL);
}

/* The flags of field 9, and a process in its exit: PF_EXITING (0x4) set on its main
 * thread (on cgroup v1 its /proc/PID/cgroup then names the root), or a zombie. */
static void test_stat_exiting(void **state)
{
	(void)state;
	struct proc_stat st;
	static const char running[] = "12 (x) R 1 1 1 0 -1 4194560 1 0 0 0 5 6 0 0 20 0 1 0 99";
	static const char exiting[] = "12 (x) D 1 1 1 0 -1 4194564 1 0 0 0 5 6 0 0 20 0 1 0 99";
	static const char zombie[] = "12 (x) Z 1 1 1 0 -1 4227084 1 0 0 0 5 6 0 0 20 0 1 0 99";
	assert_int_equal(proc_stat_parse(running, strlen(running), &st), 0);
	assert_int_equal(st.flags, 4194560);
	assert_false(proc_stat_exiting(&st));
	assert_int_equal(proc_stat_parse(exiting, strlen(exiting), &st), 0);
	assert_true(proc_stat_exiting(&st));
	assert_int_equal(proc_stat_parse(zombie, strlen(zombie), &st), 0);
	assert_true(proc_stat_exiting(&st));
	static const char badflags[] = "12 (x) S 1 1 1 0 -1 4x 1 0 0 0 5 6 0 0 20 0 1 0 99";
	assert_int_equal(proc_stat_parse(badflags, strlen(badflags), &st), -EINVAL);
}

static void test_ticks_ns(void **state)
{
	(void)state;
	uint64_t hz = (uint64_t)sysconf(_SC_CLK_TCK);
	assert_true(proc_ticks_ns(0) == 0);
	assert_true(proc_ticks_ns(hz) == 1000000000ULL);
	assert_true(proc_ticks_ns(hz * 3600 * 24 * 365) == 1000000000ULL * 3600 * 24 * 365);
}

static void test_io(void **state)
{
	(void)state;
	size_t len;
	char *buf = fixture("tests/fixtures/proc/io.txt", &len);
	struct proc_io io;
	assert_int_equal(proc_io_parse(buf, len, &io), 0);
	assert_true(io.rchar == 8517574 && io.wchar == 1697);
	assert_true(io.read_bytes == 5853184 && io.write_bytes == 0);
	/* truncated before write_bytes */
	const char *w = strstr(buf, "write_bytes");
	assert_non_null(w);
	assert_int_equal(proc_io_parse(buf, (size_t)(w - buf), &io), -EINVAL);
	free(buf);
	static const char unit[] = "read_bytes: 4096 MB\nwrite_bytes: 0\n";
	assert_int_equal(proc_io_parse(unit, strlen(unit), &io), -EINVAL);
	static const char twice[] = "read_bytes: 1\nwrite_bytes: 0\nread_bytes: 2\n";
	assert_int_equal(proc_io_parse(twice, strlen(twice), &io), -EINVAL);
	static const char neg[] = "read_bytes: -1\nwrite_bytes: 0\n";
	assert_int_equal(proc_io_parse(neg, strlen(neg), &io), -EINVAL);
	assert_int_equal(proc_io_parse("", 0, &io), -EINVAL);
	static const char exact[] = "read_bytes: 18446744073709551615\nwrite_bytes: 7";
	assert_int_equal(proc_io_parse(exact, strlen(exact), &io), 0);
	assert_true(io.read_bytes == UINT64_MAX && io.write_bytes == 7);
}

static void test_stat_malformed(void **state)
{
	(void)state;
	struct proc_stat st;
	static const char noparen[] = "12 x S 1 1 1";
	assert_int_equal(proc_stat_parse(noparen, strlen(noparen), &st), -EINVAL);
	static const char shortline[] = "12 (x) S 1 1 1";
	assert_int_equal(proc_stat_parse(shortline, strlen(shortline), &st), -EINVAL);
	static const char badppid[] = "12 (x) S z 1 1 0 -1 0 0 0 0 0 0 0 0 0 0 0 0 1 0";
	assert_int_equal(proc_stat_parse(badppid, strlen(badppid), &st), -EINVAL);
}

static void test_cmdline(void **state)
{
	(void)state;
	size_t len;
	char out[256];
	char *buf = fixture("tests/fixtures/proc/cmdline-weird-name.bin", &len);
	assert_int_equal(proc_cmdline_join(buf, len, out, sizeof(out)), 4);
	assert_string_equal(out, "/tmp/my (weird) hog) x +20M sleep 3s");
	static const char ctl[] = "a\nb\0c";
	assert_int_equal(proc_cmdline_join(ctl, sizeof(ctl), out, sizeof(out)), 2);
	assert_string_equal(out, "a?b c");
	assert_int_equal(proc_cmdline_join("", 0, out, sizeof(out)), 0);
	assert_string_equal(out, "");
	/* truncation keeps the buffer terminated */
	assert_int_equal(proc_cmdline_join(buf, len, out, 8), 4);
	assert_string_equal(out, "/tmp/my");
	free(buf);
}

/* The command line as a shell would read it back: a word with spaces or the shell's
 * special characters in single quotes, a quote inside as '\'', an empty argument as '',
 * control characters as '?', and a line past its bound cut before an argument. */
static void test_cmdline_quoted(void **state)
{
	(void)state;
	size_t len;
	struct buf out = { 0 };
	char *buf = fixture("tests/fixtures/proc/cmdline-weird-name.bin", &len);
	assert_int_equal(proc_cmdline_quote(buf, len, &out, 4096), 4);
	assert_string_equal(buf_str(&out), "'/tmp/my (weird) hog) x' +20M sleep 3s");
	buf_reset(&out);
	static const char odd[] = "sh\0-c\0echo 'hi'; exit\0\0a\nb\0$HOME";
	assert_int_equal(proc_cmdline_quote(odd, sizeof(odd), &out, 4096), 6);
	assert_string_equal(buf_str(&out), "sh -c 'echo '\\''hi'\\''; exit' '' 'a?b' '$HOME'");
	buf_reset(&out);
	assert_int_equal(proc_cmdline_quote("", 0, &out, 4096), 0);
	assert_string_equal(buf_str(&out), "");
	/* bounded: what fits, then how many did not */
	assert_int_equal(proc_cmdline_quote(buf, len, &out, 26), 1);
	assert_string_equal(buf_str(&out), "'/tmp/my (weird) hog) x' ... (3 more arguments)");
	buf_reset(&out);
	/* one long argument keeps its head, and those after it are still there */
	char longarg[600 + 12];
	memcpy(longarg, "sh\0", 3);
	memset(longarg + 3, 'x', 600);
	memcpy(longarg + 603, "\0after\0", 7);
	assert_int_equal(proc_cmdline_quote(longarg, 610, &out, 1024), 3);
	assert_int_equal(out.len, strlen("sh ") + 128 + strlen("[+472 bytes] after"));
	assert_non_null(strstr(buf_str(&out), "xxx[+472 bytes] after"));
	buf_release(&out);
	free(buf);
}

static void test_meminfo(void **state)
{
	(void)state;
	size_t len;
	char *buf = fixture("tests/fixtures/proc/meminfo.txt", &len);
	struct meminfo mi;
	assert_int_equal(meminfo_parse(buf, len, &mi), 0);
	assert_true(mi.total > 1024ULL * 1024 * 1024);
	assert_true(mi.available > 0 && mi.available <= mi.total);
	free(buf);
	static const char only_total[] = "MemTotal:       24522232 kB\n";
	assert_int_equal(meminfo_parse(only_total, strlen(only_total), &mi), -EINVAL);
	static const char exact[] = "MemTotal: 2048 kB\nMemFree: 1 kB\nMemAvailable: 1024 kB\n";
	assert_int_equal(meminfo_parse(exact, strlen(exact), &mi), 0);
	assert_int_equal(mi.total, 2048 * 1024);
	assert_int_equal(mi.available, 1024 * 1024);
}

/* The reader re-reads status only when statm or the thread count moved: an idle child
 * costs one status read over many samples, and every change is seen. */
static void test_reader_cache(void **state)
{
	(void)state;
	int go[2], done[2];
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(done), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char c;
		char *p = NULL;
		close(go[1]);
		close(done[0]);
		while (read(go[0], &c, 1) == 1) {
			if (c == 'a') {	/* map and touch 8 MiB */
				p = mmap(NULL, 8 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
				memset(p, 1, 8 << 20);
			} else if (c == 'f') {
				munmap(p, 8 << 20);
			}
			if (write(done[1], &c, 1) != 1)
				_exit(1);
		}
		_exit(0);
	}
	close(go[0]);
	close(done[1]);
	struct proc_reader r;
	struct proc_status st, fresh;
	char c;
	/* a round trip first: the child is then idle in read(), done with its start */
	assert_int_equal(write(go[1], "n", 1), 1);
	assert_int_equal(read(done[0], &c, 1), 1);
	assert_int_equal(proc_reader_open(&r, pid), 0);
	assert_int_equal(proc_reader_read(&r, &st), 0);
	for (int i = 0; i < 50; i++)
		assert_int_equal(proc_reader_read(&r, &st), 0);
	assert_true(r.status_reads <= 2);	/* idle: the cached status serves */
	/* bounded reuse: with at most 4 reuses in a row, 50 reads read status 10 times */
	unsigned long bounded = r.status_reads;
	proc_reader_max_reuse(&r, 4);
	for (int i = 0; i < 50; i++)
		assert_int_equal(proc_reader_read(&r, &st), 0);
	assert_true(r.status_reads - bounded >= 10);	/* more when the child moves */
	/* no reuse at all (intervals of a second or more): every read reads status */
	proc_reader_max_reuse(&r, 0);
	bounded = r.status_reads;
	for (int i = 0; i < 10; i++)
		assert_int_equal(proc_reader_read(&r, &st), 0);
	assert_int_equal(r.status_reads - bounded, 10);
	assert_true(st.mem.rss > 0 && st.mem.hwm >= st.mem.rss);
	proc_reader_max_reuse(&r, UINT_MAX);
	unsigned long before = r.status_reads;
	uint64_t rss0 = st.mem.rss;

	assert_int_equal(write(go[1], "a", 1), 1);
	assert_int_equal(read(done[0], &c, 1), 1);
	assert_int_equal(proc_reader_read(&r, &st), 0);
	assert_true(r.status_reads > before);
	assert_true(st.mem.rss >= rss0 + (8 << 20));
	assert_true(st.mem.hwm >= st.mem.rss);
	/* what the cache returns equals a fresh read */
	struct proc_reader r2;
	assert_int_equal(proc_reader_open(&r2, pid), 0);
	assert_int_equal(proc_reader_read(&r2, &fresh), 0);
	assert_true(fresh.mem.rss == st.mem.rss && fresh.mem.anon == st.mem.anon && fresh.mem.hwm == st.mem.hwm);
	proc_reader_close(&r2);

	assert_int_equal(write(go[1], "f", 1), 1);
	assert_int_equal(read(done[0], &c, 1), 1);
	assert_int_equal(proc_reader_read(&r, &st), 0);
	assert_true(st.mem.rss < rss0 + (8 << 20));	/* the unmap is seen */
	/* and the peak kept: the kernel saves it from its per-CPU counters, which may lag
	 * by up to nr_cpus x 64 pages, so allow 1 MiB */
	assert_true(st.mem.hwm >= rss0 + (7 << 20));

	close(go[1]);
	waitpid(pid, NULL, 0);
	assert_int_equal(proc_reader_read(&r, &st), -ESRCH);	/* reaped: gone */
	proc_reader_close(&r);
	close(done[0]);
}

static void test_uid_cgroup(void **state)
{
	(void)state;
	static const char st[] = "Name:\tsleep\nUmask:\t0022\nState:\tS (sleeping)\n"
				 "Uid:\t61370\t61370\t61370\t61370\nGid:\t5\t5\t5\t5\n";
	uid_t u = 7;
	assert_int_equal(proc_status_uid_parse(st, sizeof(st) - 1, &u), 0);
	assert_int_equal(u, 61370);
	static const char nouid[] = "Name:\tx\nUidx:\t1\n";
	assert_int_equal(proc_status_uid_parse(nouid, sizeof(nouid) - 1, &u), -EINVAL);
	static const char bad[] = "Uid:\t12a\t0\t0\t0\n";
	assert_int_equal(proc_status_uid_parse(bad, sizeof(bad) - 1, &u), -EINVAL);
	static const char big[] = "Uid:\t99999999999\t0\t0\t0\n";
	assert_int_equal(proc_status_uid_parse(big, sizeof(big) - 1, &u), -EINVAL);

	static const char v2[] = "0::/system.slice/pg.service/sub\n";
	assert_int_equal(proc_cgroup_within(v2, sizeof(v2) - 1, "/system.slice/pg.service"), 1);
	assert_int_equal(proc_cgroup_within(v2, sizeof(v2) - 1, "/system.slice/pg.service/"), 1);
	assert_int_equal(proc_cgroup_within(v2, sizeof(v2) - 1, "/system.slice/pg"), 0);
	assert_int_equal(proc_cgroup_within(v2, sizeof(v2) - 1, "/user.slice"), 0);
	assert_int_equal(proc_cgroup_within(v2, sizeof(v2) - 1, "/"), 1);
	static const char v1[] = "12:memory:/user.slice/user-1.slice\n11:cpu,cpuacct:/a:b\n0::/\n";
	assert_int_equal(proc_cgroup_within(v1, sizeof(v1) - 1, "/a:b"), 1);
	assert_int_equal(proc_cgroup_within(v1, sizeof(v1) - 1, "/user.slice"), 1);
	assert_int_equal(proc_cgroup_within(v1, sizeof(v1) - 1, "/system.slice"), 0);
}

/* Which lines of /proc/PID/maps name the CUDA driver's code, and their range. */
static void test_maps_line_match(void **state)
{
	(void)state;
	char r[64];
	const char *code = "7f12a0000000-7f12a1c00000 r-xp 00200000 08:01 1234    "
			   "/usr/lib/x86_64-linux-gnu/libcuda.so.560.35.03";
#define M(line, prefix) proc_maps_line_match(line, strlen(line), prefix, r, sizeof(r))
	assert_int_equal(M(code, "libcuda.so"), 1);
	assert_string_equal(r, "7f12a0000000-7f12a1c00000");
	assert_int_equal(M(code, "libcudart"), 0);
	/* data, not code; anonymous; a name that only holds the prefix in a folder */
	assert_int_equal(M("7f12a1c00000-7f12a1e00000 rw-p 01e00000 08:01 1234 "
			   "/usr/lib/libcuda.so.1", "libcuda.so"), 0);
	assert_int_equal(M("7f12a1c00000-7f12a1e00000 r-xp 00000000 00:00 0 ", "libcuda.so"), 0);
	assert_int_equal(M("7f12a1c00000-7f12a1e00000 r-xp 00000000 00:00 0 [vdso]", "x"), 0);
	assert_int_equal(M("5000-6000 r-xp 0 08:01 9 /tmp/libcuda.so/evil", "libcuda.so"), 0);
	/* a deleted file and a path with spaces are still the file mapped */
	assert_int_equal(M("5000-6000 r-xp 0 08:01 9 /my dir/libcuda.so.1 (deleted)",
			   "libcuda.so"), 1);
	assert_string_equal(r, "5000-6000");
	/* malformed: too few fields, a range that is not hex, one too long */
	assert_int_equal(M("5000-6000 r-xp", "libcuda.so"), -EINVAL);
	assert_int_equal(M("5000-zz r-xp 0 08:01 9 /libcuda.so", "libcuda.so"), -EINVAL);
	char big[200];
	memset(big, 'a', 150);
	snprintf(big + 150, sizeof(big) - 150, "-b r-xp 0 08:01 9 /libcuda.so");
	assert_int_equal(M(big, "libcuda.so"), -EINVAL);
#undef M
}

/* The file a process maps, opened through map_files: this test's own libc. */
static void test_open_mapped(void **state)
{
	(void)state;
	int fd = proc_open_mapped(getpid(), "libc.so");
	assert_true(fd >= 0);
	struct stat a, b;
	assert_int_equal(fstat(fd, &a), 0);
	close(fd);
	void *h = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	assert_non_null(h);
	struct link_map *map = NULL;
	assert_int_equal(dlinfo(h, RTLD_DI_LINKMAP, &map), 0);
	assert_int_equal(stat(map->l_name, &b), 0);
	assert_true(a.st_ino == b.st_ino && a.st_dev == b.st_dev);
	dlclose(h);
	assert_int_equal(proc_open_mapped(getpid(), "libnothing-here.so"), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_status_weird_name),
		cmocka_unit_test(test_status_exact_values),
		cmocka_unit_test(test_status_name_unescaped),
		cmocka_unit_test(test_status_zombie_and_kthread),
		cmocka_unit_test(test_status_malformed),
		cmocka_unit_test(test_stat_weird_name),
		cmocka_unit_test(test_stat_malformed),
		cmocka_unit_test(test_stat_counters),
		cmocka_unit_test(test_stat_exiting),
		cmocka_unit_test(test_ticks_ns),
		cmocka_unit_test(test_io),
		cmocka_unit_test(test_cmdline),
		cmocka_unit_test(test_cmdline_quoted),
		cmocka_unit_test(test_meminfo),
		cmocka_unit_test(test_uid_cgroup),
		cmocka_unit_test(test_reader_cache),
		cmocka_unit_test(test_maps_line_match),
		cmocka_unit_test(test_open_mapped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
