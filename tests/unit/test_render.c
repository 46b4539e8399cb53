/* Pure formatting: units, durations, timestamps, the live line, JSON escaping, the
 * outcome in words and the terminal chart (against a golden file). */
#include "testutil.h"

#include <string.h>
#include <time.h>

#include "base/fmt.h"
#include "base/util.h"
#include "render/json.h"
#include "render/live.h"
#include "render/procs.h"
#include "render/rows.h"
#include "render/summary.h"
#include "render/tchart.h"

#define GIB (1024ULL * 1024 * 1024)
#define MIB (1024ULL * 1024)

static void test_fmt_bytes(void **state)
{
	(void)state;
	char b[32];
	assert_string_equal(fmt_bytes(b, sizeof(b), 0), "0 B");
	assert_string_equal(fmt_bytes(b, sizeof(b), 1023), "1023 B");
	assert_string_equal(fmt_bytes(b, sizeof(b), 1024), "1.0 KiB");
	assert_string_equal(fmt_bytes(b, sizeof(b), 12 * MIB + MIB / 2), "12.5 MiB");
	assert_string_equal(fmt_bytes(b, sizeof(b), (uint64_t)(666.4 * GIB)), "666.4 GiB");
	assert_string_equal(fmt_bytes(b, sizeof(b), 2048 * GIB), "2.0 TiB");
}

static void test_fmt_duration(void **state)
{
	(void)state;
	char b[32];
	assert_string_equal(fmt_duration(b, sizeof(b), 850 * 1000000LL), "850ms");
	assert_string_equal(fmt_duration(b, sizeof(b), 12300 * 1000000LL), "12.3s");
	assert_string_equal(fmt_duration(b, sizeof(b), 245 * 1000000000LL), "4m05s");
	assert_string_equal(fmt_duration(b, sizeof(b), 3723 * 1000000000LL), "1h02m03s");
	assert_string_equal(fmt_duration(b, sizeof(b), (3 * 86400 + 4 * 3600) * 1000000000LL), "3d04h");
	assert_string_equal(fmt_duration(b, sizeof(b), -5), "0ms");
}

/* A moment before the run's start keeps its sign. */
static void test_fmt_offset(void **state)
{
	(void)state;
	char b[32];
	assert_string_equal(fmt_offset(b, sizeof(b), 850 * 1000000LL), "+850ms");
	assert_string_equal(fmt_offset(b, sizeof(b), 0), "+0ms");
	assert_string_equal(fmt_offset(b, sizeof(b), -1200 * 1000000LL), "-1.2s");
	assert_string_equal(fmt_offset(b, sizeof(b), -245 * 1000000000LL), "-4m05s");
	assert_string_equal(fmt_offset(b, sizeof(b), INT64_MIN), "-106751d23h");
}

static void test_fmt_time(void **state)
{
	(void)state;
	char b[40];
	/* 2026-11-29T02:24:19.123Z */
	int64_t t = 1795919059LL * 1000000000 + 123456789;
	assert_string_equal(fmt_iso8601(b, sizeof(b), t), "2026-11-29T02:24:19.123Z");
	assert_string_equal(fmt_hms(b, sizeof(b), t), "02:24:19");	/* TZ=UTC in main */
	assert_string_equal(fmt_datetime(b, sizeof(b), t), "2026-11-29 02:24");
}

static void test_live_context(void **state)
{
	(void)state;
	struct buf b = { 0 };
	struct sample p, s;
	memset(&p, 0, sizeof(p));
	memset(&s, 0, sizeof(s));
	p.elapsed_ns = 1000000000;
	s.elapsed_ns = 3000000000;
	p.have = s.have = SAMPLE_CPU;
	p.cpu_user_ns = 500000000;
	s.cpu_user_ns = 2000000000;
	s.cpu_sys_ns = 500000000;	/* 2 s of CPU in 2 s */
	p.majflt = 10;
	s.majflt = 110;
	live_context(&b, &p, &s);
	assert_string_equal(buf_str(&b), " cpu 100% majflt 50/s");
	buf_reset(&b);
	p.have = 0;	/* the first line: no rate yet */
	live_context(&b, &p, &s);
	assert_string_equal(buf_str(&b), "");
	buf_release(&b);
}

static void test_live_line(void **state)
{
	(void)state;
	struct sample s;
	memset(&s, 0, sizeof(s));
	s.mem.rss = (uint64_t)(666.4 * GIB);
	s.mem.anon = (uint64_t)(660.1 * GIB);
	s.mem.file = (uint64_t)(6.3 * GIB);
	s.mem.shmem = 0;
	s.mem.hwm = (uint64_t)(668.0 * GIB);
	s.mem_available = (uint64_t)(80.2 * GIB);
	struct buf b = { 0 };
	live_line(&b, 1795919059LL * 1000000000, &s);
	assert_string_equal(buf_str(&b), "02:24:19 rss 666.4 GiB (anon 660.1, file 6.3, shmem 0.0) "
					 "hwm 668.0 GiB avail 80.2 GiB");
	buf_reset(&b);
	s.mem.swap = 512 * MIB;
	s.have = SAMPLE_GPU;
	s.gpu = (uint64_t)(70.1 * GIB);
	live_line(&b, 1795919059LL * 1000000000, &s);
	assert_non_null(strstr(buf_str(&b), " swap 512.0 MiB gpu 70.1 GiB avail 80.2 GiB"));
	buf_release(&b);
}

static void test_outcome_words(void **state)
{
	(void)state;
	struct run r;
	struct buf b = { 0 };
	memset(&r, 0, sizeof(r));
	strlcpy_rsw(r.outcome, OUTCOME_EXITED, sizeof(r.outcome));
	r.exit_code = 3;
	outcome_words(&b, &r);
	assert_string_equal(buf_str(&b), "exited with 3");
	buf_reset(&b);
	strlcpy_rsw(r.outcome, OUTCOME_SIGNALED, sizeof(r.outcome));
	r.signal = 9;
	outcome_words(&b, &r);
	assert_string_equal(buf_str(&b), "killed by SIGKILL");
	buf_reset(&b);
	strlcpy_rsw(r.outcome, OUTCOME_STOPPED, sizeof(r.outcome));
	outcome_words(&b, &r);
	assert_string_equal(buf_str(&b), "still running (recording stopped)");
	/* a memory cgroup is named by whoever made it: printable only */
	buf_reset(&b);
	strlcpy_rsw(r.outcome, OUTCOME_OOM_KILLED, sizeof(r.outcome));
	r.oom_memcg = "/a\x1b[2Jb";
	outcome_words(&b, &r);
	assert_string_equal(buf_str(&b), "killed by the OOM killer (memory cgroup /a?[2Jb)");
	buf_release(&b);
}

static void test_json_escape(void **state)
{
	(void)state;
	struct buf b = { 0 };
	json_str(&b, "<script>\"a\\b\"\n\t\x01</script>");
	assert_string_equal(buf_str(&b), "\"<script>\\\"a\\\\b\\\"\\n\\t\\u0001</script>\"");
	buf_release(&b);
}

/* Text from other users' processes: bytes that are not UTF-8 and C1 controls never
 * pass raw, valid UTF-8 does. */
static void test_untrusted_text(void **state)
{
	(void)state;
	struct buf b = { 0 };
	json_str(&b, "a\xff\xc3\xa9\xc2\x9b[2J");
	assert_string_equal(buf_str(&b), "\"a\\ufffd\xc3\xa9\xc2\x9b[2J\"");
	buf_reset(&b);
	buf_put_printable(&b, "a\xff\xc3\xa9\xc2\x9b[2J\x1b\xe2\x82");
	assert_string_equal(buf_str(&b), "a?\xc3\xa9?[2J???");
	buf_release(&b);
}

static void test_json_run(void **state)
{
	(void)state;
	struct run r;
	memset(&r, 0, sizeof(r));
	r.id = 7;
	r.label = "l";
	r.host = "h";
	r.kernel = "k";
	r.target = "t";
	r.mode = "pid";
	r.pid = 42;
	r.started_at = 1795919059LL * 1000000000;
	r.interval_ns = 100000000;
	r.samples = 2;
	strlcpy_rsw(r.outcome, OUTCOME_EXITED, sizeof(r.outcome));
	r.exit_code = 0;
	r.signal = -1;
	r.peak_gpu = -1;
	r.peak_rss = 1024;
	struct buf b = { 0 };
	json_run(&b, &r);
	const char *j = buf_str(&b);
	assert_non_null(strstr(j, "\"id\":7,"));
	assert_non_null(strstr(j, "\"started_at\":\"2026-11-29T02:24:19.000Z\""));
	assert_non_null(strstr(j, "\"ended_at\":null"));
	assert_non_null(strstr(j, "\"interval_s\":0.1,"));
	assert_non_null(strstr(j, "\"exit_code\":0,\"signal\":null"));
	assert_non_null(strstr(j, "\"peak_rss_bytes\":1024,"));
	assert_non_null(strstr(j, "\"peak_gpu_bytes\":null"));
	assert_true(j[0] == '{' && j[strlen(j) - 1] == '}');
	buf_release(&b);
}

/* A set run of three processes with one OOM kill, as the recorder stores them. */
static void set_run(struct run *r)
{
	memset(r, 0, sizeof(*r));
	r->id = 12;
	r->label = "";
	r->host = "h";
	r->kernel = "k";
	r->target = "make -j8";
	r->mode = "command";
	r->tree = 1;
	r->pid = 100;
	r->started_at = 1795919059LL * 1000000000;
	r->ended_at = r->started_at + 3000000000LL;
	r->interval_ns = 100000000;
	r->samples = 30;
	strlcpy_rsw(r->outcome, OUTCOME_EXITED, sizeof(r->outcome));
	r->exit_code = 0;
	r->signal = -1;
	r->peak_gpu = -1;
	r->peak_rss = 508 * MIB + MIB / 5;
	r->peak_rss_at = r->started_at + 2400000000LL;
	r->sum_rss = 30.0 * 100 * MIB;
	r->last_rss = 10 * MIB;
	r->hwm_before = -1;
	r->peak_source = PEAK_FROM_EXIT;
	r->oom_kills = 1;
	r->peak_process_rss = 342 * MIB + MIB / 2;
	r->peak_process_pid = 123;
	r->peak_process_comm = "cc1";
	r->exit_records = 1;
}

static const struct oom_kill one_kill = {
	.t = 1795919059LL * 1000000000 + 1200000000,
	.pid = 5123,
	.comm = "python3",
	.anon_rss = 199 * MIB + 6 * MIB / 10 + 1,
	.file_rss = 4096,
	.total_vm = 300 * MIB,
	.memcg = "/rsswatch-12",
};

static void test_summary_peak_source(void **state)
{
	(void)state;
	struct run r;
	struct buf b = { 0 };
	set_run(&r);
	summary_text(&b, &r, 400 * MIB, &one_kill, 1);
	const char *t = buf_str(&b);
	assert_non_null(strstr(t, "\npeak      508.2 MiB at 02:24:21 (+2.4s), from the exit record; "
				 "the highest sampled total was 400.0 MiB\n"));
	assert_non_null(strstr(t, "\nlargest   cc1 (pid 123), peak 342.5 MiB\n"));
	assert_non_null(strstr(t, "\noutcome   exited with 0; 1 process OOM-killed: python3 (pid 5123) "
				 "at +1.2s, anon-rss 199.6 MiB\n"));
	assert_null(strstr(t, "earlier"));
	assert_null(strstr(t, "sampled only"));
	assert_null(strstr(t, "cgroup    "));

	/* attached, no exit records, a sampled cgroup peak, a sampled peak */
	buf_reset(&b);
	r.hwm_before = (int64_t)(407 * MIB + 9 * MIB / 10 + 1);
	uint64_t peak = r.peak_rss;
	r.peak_rss = 8 * MIB;	/* the old peak is above the run's: said apart */
	r.peak_source = PEAK_FROM_SAMPLE;
	r.exit_records = 0;
	r.oom_kills = 0;
	r.peak_cgroup = 600 * MIB;
	r.peak_cgroup_at = r.started_at;
	r.cgroup = "/x";
	summary_text(&b, &r, r.peak_rss, NULL, 0);
	t = buf_str(&b);
	assert_non_null(strstr(t, "(+2.4s), from a sample\n"));
	assert_non_null(strstr(t, "\nearlier   peak 407.9 MiB before recording (VmHWM when attached; "
				 "not part of this run)\n"));
	assert_non_null(strstr(t, "\nnote      peaks of processes that ended between samples are "
				 "sampled only (not exact)\n"));
	assert_non_null(strstr(t, "\ncgroup    peak 600.0 MiB at 02:24:19 (/x), the highest usage sampled\n"));
	assert_null(strstr(t, "earlier   cgroup"));
	assert_non_null(strstr(t, "\noutcome   exited with 0\n"));
	r.cgroup_peak_before = 2900 * MIB;	/* -g on a cgroup with history */
	buf_reset(&b);
	summary_text(&b, &r, r.peak_rss, NULL, 0);
	assert_non_null(strstr(buf_str(&b), "\nearlier   cgroup peak 2.8 GiB before recording (the "
				 "kernel's all-time figure, covering more than this run)\n"));
	r.cgroup_peak_before = 0;

	/* one process alone: no largest process, no note on sets */
	buf_reset(&b);
	r.tree = 0;
	r.peak_cgroup_exact = 1;
	summary_text(&b, &r, r.peak_rss, NULL, 0);
	t = buf_str(&b);
	assert_null(strstr(t, "largest"));
	assert_null(strstr(t, "sampled only"));
	assert_non_null(strstr(t, "(/x), the cgroup's own peak\n"));

	/* every source in its words, and runs from before schema 8 as before */
	r.peak_rss = peak;
	const char *const src[] = { PEAK_FROM_HWM, PEAK_FROM_WAIT, PEAK_FROM_OOM, "" };
	const char *const words[] = { ", from VmHWM; the highest sampled RSS was 100.0 MiB\n",
				      ", from wait4; the highest sampled RSS was 100.0 MiB\n",
				      ", from the OOM report; the highest sampled RSS was 100.0 MiB\n",
				      ", from VmHWM; the highest sampled RSS was 100.0 MiB\n" };
	for (size_t i = 0; i < ARRAY_SIZE(src); i++) {
		buf_reset(&b);
		r.peak_source = (char *)src[i];
		summary_text(&b, &r, 100 * MIB, NULL, 0);
		assert_non_null(strstr(buf_str(&b), words[i]));
	}
	buf_release(&b);
}

static void test_oom_kills_words(void **state)
{
	(void)state;
	struct run r;
	struct buf b = { 0 };
	set_run(&r);
	struct oom_kill k[3] = { one_kill, one_kill, one_kill };
	k[1].pid = 5124;
	k[1].t += 1000000000;
	k[1].anon_rss = 300 * MIB;
	strlcpy_rsw(k[1].comm, "ld\x1b[31m", sizeof(k[1].comm));
	k[2].pid = r.pid;
	k[2].t += 1500000000;
	k[2].anon_rss = 10 * MIB;
	r.oom_kills = 2;
	oom_kills_words(&b, &r, k, 2);
	assert_string_equal(buf_str(&b), "2 processes OOM-killed, the first at +1.2s; the largest: "
					 "ld?[31m (pid 5124) at +2.2s, anon-rss 300.0 MiB");
	/* the target itself was killed: its outcome says so, the others are named here */
	buf_reset(&b);
	strlcpy_rsw(r.outcome, OUTCOME_OOM_KILLED, sizeof(r.outcome));
	r.oom_kills = 3;
	oom_kills_words(&b, &r, k, 3);
	assert_string_equal(buf_str(&b), "2 other processes OOM-killed, the first at +1.2s; the largest: "
					 "ld?[31m (pid 5124) at +2.2s, anon-rss 300.0 MiB");
	buf_reset(&b);
	r.oom_kills = 1;
	oom_kills_words(&b, &r, &k[2], 1);
	assert_string_equal(buf_str(&b), "");
	/* counted, but the kernel log named none */
	buf_reset(&b);
	strlcpy_rsw(r.outcome, OUTCOME_EXITED, sizeof(r.outcome));
	r.oom_kills = 2;
	oom_kills_words(&b, &r, NULL, 0);
	assert_string_equal(buf_str(&b), "2 processes OOM-killed (the kernel log named none)");
	/* the cgroup counted more than the log named: both figures */
	buf_reset(&b);
	r.oom_kills = 56;
	oom_kills_words(&b, &r, k, 2);
	assert_string_equal(buf_str(&b), "56 processes OOM-killed (the kernel log named 2), the first "
					 "at +1.2s; the largest: ld?[31m (pid 5124) at +2.2s, "
					 "anon-rss 300.0 MiB");
	buf_reset(&b);
	r.oom_kills = 0;
	oom_kills_words(&b, &r, NULL, 0);
	assert_string_equal(buf_str(&b), "");
	buf_release(&b);
}

static struct proc_summary proc(pid_t pid, const char *comm, int64_t first_ms, int64_t end_ms,
				uint64_t peak, const char *src, const char *ended, int code, int sig)
{
	struct proc_summary p;
	memset(&p, 0, sizeof(p));
	p.pid = pid;
	p.ppid = 100;
	strlcpy_rsw(p.comm, comm, sizeof(p.comm));
	p.first_ns = first_ms * 1000000;
	p.end_ns = end_ms < 0 ? -1 : end_ms * 1000000;
	p.peak_rss = peak;
	strlcpy_rsw(p.peak_source, src, sizeof(p.peak_source));
	p.hwm_before = -1;
	strlcpy_rsw(p.ended, ended, sizeof(p.ended));
	p.exit_code = code;
	p.signal = sig;
	p.cpu_user_ns = p.cpu_sys_ns = p.minflt = p.majflt = -1;
	p.read_bytes = p.write_bytes = -1;
	return p;
}

static void test_procs_table(void **state)
{
	(void)state;
	struct proc_summary p[6] = {
		proc(123, "cc1", 100, 2500, 342 * MIB + MIB / 2, PEAK_FROM_EXIT, PROC_EXITED, 0, -1),
		proc(100, "make", 0, -1, 20 * MIB, PEAK_FROM_HWM, PROC_RUNNING, -1, -1),
		proc(5123, "python3\n\x1b[2J", 200, 1200, 12 * MIB, PEAK_FROM_OOM, PROC_OOM_KILLED, -1, 9),
		proc(124, "a-very-long-process-name", 300, 400, 3 * MIB, PEAK_FROM_SAMPLE, PROC_SIGNALED, -1, 15),
		proc(125, "as", 500, 600, 2 * MIB, PEAK_FROM_SAMPLE, PROC_EXITED, 1, -1),
		proc(126, "as", 700, 800, 1 * MIB, PEAK_FROM_SAMPLE, PROC_GONE, -1, -1),
	};
	/* CPU: user and system together; a count past six digits in millions */
	p[0].cpu_user_ns = 12340000000LL;
	p[0].cpu_sys_ns = 1000000000LL;
	p[0].majflt = 1234567;
	p[1].cpu_user_ns = 500000000;
	p[1].cpu_sys_ns = 250000000;
	p[1].majflt = 0;
	p[2].cpu_user_ns = 1234560000000LL;	/* 1234.56 s */
	p[2].cpu_sys_ns = 0;
	p[2].majflt = 999999;
	struct buf b = { 0 };
	procs_table(&b, p, 6, 4);
	assert_string_equal(buf_str(&b),
		"\nprocesses (6, largest peak first)\n"
		"      PID  COMMAND           START      END              PEAK    CPU s  MAJFLT  ENDED\n"
		"      123  cc1               +100ms     +2.5s       342.5 MiB*   13.34    1.2M  exited 0\n"
		"      100  make              +0ms       -            20.0 MiB     0.75       0  running\n"
		"     5123  python3??[2J      +200ms     +1.2s        12.0 MiB*  1234.6  999999  OOM-killed\n"
		"      124  a-very-long-p...  +300ms     +400ms        3.0 MiB        -       -  killed by SIGTERM\n"
		"  ... and 2 more processes: the largest of them peaked at 2.0 MiB\n"
		"      (1 exited non-zero, 1 gone)\n"
		"  * exact peak (exit record, wait4 or OOM report); the others are sampled\n"
		"  CPU s: user and system time over the process's life; MAJFLT: page faults that waited "
		"for I/O\n");
	/* the widest row (a start and an end past an hour, the longest signal words) stays
	 * within 100 columns */
	buf_reset(&b);
	struct proc_summary w = p[3];
	w.first_ns = 3723LL * 1000000000LL;
	w.end_ns = 86399LL * 1000000000LL;
	w.peak_rss = 1023 * MIB;
	w.cpu_user_ns = 999999LL * 1000000000LL;
	w.cpu_sys_ns = 0;
	w.majflt = 999999999;
	procs_table(&b, &w, 1, 20);
	const char *row = strstr(buf_str(&b), "\n      124");
	assert_non_null(row);
	assert_true(strcspn(row + 1, "\n") <= 100);
	/* all shown, none exact, no context known: no summary line, no legends */
	buf_reset(&b);
	procs_table(&b, p + 3, 3, 20);
	assert_null(strstr(buf_str(&b), "more process"));
	assert_null(strstr(buf_str(&b), "exact"));
	assert_null(strstr(buf_str(&b), "CPU s:"));
	assert_non_null(strstr(buf_str(&b), "  exited 1\n"));
	buf_reset(&b);
	procs_table(&b, p, 0, 20);
	assert_int_equal(b.len, 0);
	buf_release(&b);
	assert_true(peak_is_exact(PEAK_FROM_WAIT));
	assert_false(peak_is_exact(PEAK_FROM_HWM));
	assert_false(peak_is_exact(""));
}

static void test_json_kills_processes(void **state)
{
	(void)state;
	struct run r;
	struct buf b = { 0 };
	set_run(&r);
	json_run(&b, &r);
	const char *j = buf_str(&b);
	assert_non_null(strstr(j, "\"signal\":null,\"oom_kills\":1,"));
	assert_non_null(strstr(j, ",\"peak_source\":\"exit record\",\"hwm_before_bytes\":null,"
				  "\"cgroup_peak_before_bytes\":null,\"peak_process_rss_bytes\":359137280,\"peak_process_pid\":123,"
				  "\"peak_process_comm\":\"cc1\",\"exit_records\":true,"));
	assert_non_null(strstr(j, ",\"peak_cgroup_bytes\":null,\"peak_cgroup_exact\":false,"
				  "\"min_eta_s\":null,\"min_eta_at\":null,\"min_eta_limit\":null}"));
	/* the smallest time to exhaustion projected: JSON and the summary */
	buf_reset(&b);
	r.min_eta_ns = 250LL * 1000000000LL;
	r.min_eta_at = r.started_at + 3LL * 1000000000LL;
	snprintf(r.min_eta_limit, sizeof(r.min_eta_limit), "cgroup");
	json_run(&b, &r);
	assert_non_null(strstr(buf_str(&b), ",\"min_eta_s\":250.0,\"min_eta_at\":\""));
	assert_non_null(strstr(buf_str(&b), "Z\",\"min_eta_limit\":\"cgroup\"}"));
	buf_reset(&b);
	summary_text(&b, &r, 0, NULL, 0);
	assert_non_null(strstr(buf_str(&b), "\neta       smallest projection: full in ~4m10s "
					   "(cgroup limit) at "));
	assert_non_null(strstr(buf_str(&b), " (+3.0s)\n"));
	r.min_eta_limit[0] = '\0';
	buf_reset(&b);
	summary_text(&b, &r, 0, NULL, 0);
	assert_null(strstr(buf_str(&b), "smallest projection"));
	buf_reset(&b);
	r.hwm_before = 4096;
	r.peak_process_pid = 0;
	r.peak_source = "";
	json_run(&b, &r);
	assert_non_null(strstr(buf_str(&b), ",\"peak_source\":null,\"hwm_before_bytes\":4096,"
				  "\"cgroup_peak_before_bytes\":null,\"peak_process_rss_bytes\":null,"
				  "\"peak_process_pid\":null,"
				  "\"peak_process_comm\":null,"));

	buf_reset(&b);
	struct oom_kill k = one_kill;
	strlcpy_rsw(k.comm, "a\"b\x01", sizeof(k.comm));
	json_oom_kills(&b, &r, &k, 1);
	assert_string_equal(buf_str(&b), "[{\"pid\":5123,\"comm\":\"a\\\"b\\u0001\","
		"\"time\":\"2026-11-29T02:24:20.200Z\",\"elapsed_s\":1.200,\"anon_rss_bytes\":209295770,"
		"\"file_rss_bytes\":4096,\"shmem_rss_bytes\":0,\"total_vm_bytes\":314572800,"
		"\"memcg\":\"/rsswatch-12\"}]");
	/* a run from before schema 8: its target's kill from the run's fields */
	buf_reset(&b);
	r.oom_at = r.started_at + 500000000;
	r.oom_anon_rss = 8192;
	r.oom_rss_known = 1;
	r.oom_memcg = "";
	json_oom_kills(&b, &r, NULL, 0);
	assert_string_equal(buf_str(&b), "[{\"pid\":100,\"comm\":null,\"time\":\"2026-11-29T02:24:19.500Z\","
		"\"elapsed_s\":0.500,\"anon_rss_bytes\":8192,\"file_rss_bytes\":null,"
		"\"shmem_rss_bytes\":null,\"total_vm_bytes\":null,\"memcg\":null}]");

	buf_reset(&b);
	struct proc_summary p[2] = {
		proc(123, "cc1", 100, 2500, 4096, PEAK_FROM_EXIT, PROC_EXITED, 0, -1),
		proc(100, "make", 0, -1, 8192, PEAK_FROM_HWM, PROC_RUNNING, -1, -1),
	};
	p[1].hwm_before = 65536;
	p[0].cpu_user_ns = 1234567890;
	p[0].cpu_sys_ns = 0;
	p[0].minflt = 5000;
	p[0].majflt = 7;
	p[0].read_bytes = 1LL << 33;
	p[0].write_bytes = 0;
	p[1].minflt = 10;	/* stat read, io not permitted */
	p[1].majflt = 0;
	p[1].cpu_user_ns = 20000000;
	p[1].cpu_sys_ns = 10000000;
	json_processes(&b, p, 2);
	assert_string_equal(buf_str(&b),
		"[{\"pid\":123,\"ppid\":100,\"comm\":\"cc1\",\"started_s\":0.100,\"ended_s\":2.500,"
		"\"peak_rss_bytes\":4096,\"peak_exact\":true,\"peak_source\":\"exit record\","
		"\"hwm_before_bytes\":null,\"ended\":\"exited\",\"exit_code\":0,\"signal\":null,"
		"\"cpu_user_s\":1.234,\"cpu_sys_s\":0.000,\"minflt\":5000,\"majflt\":7,"
		"\"read_bytes\":8589934592,\"write_bytes\":0},"
		"{\"pid\":100,\"ppid\":100,\"comm\":\"make\",\"started_s\":0.000,\"ended_s\":null,"
		"\"peak_rss_bytes\":8192,\"peak_exact\":false,\"peak_source\":\"VmHWM\","
		"\"hwm_before_bytes\":65536,\"ended\":\"running\",\"exit_code\":null,\"signal\":null,"
		"\"cpu_user_s\":0.020,\"cpu_sys_s\":0.010,\"minflt\":10,\"majflt\":0,"
		"\"read_bytes\":null,\"write_bytes\":null}]");
	buf_release(&b);
}

/* export --procs: one process at one sample, in CSV and JSON lines; a process name with
 * a comma, a quote and an escape byte stays one field and never reaches a terminal raw. */
static void test_proc_rows(void **state)
{
	(void)state;
	struct proc_figures f;
	memset(&f, 0, sizeof(f));
	f.pid = 5123;
	f.ppid = 5100;
	strlcpy_rsw(f.comm, "py,\"3\"\x1b", sizeof(f.comm));
	f.mem.rss = 3 * MIB;
	f.mem.anon = 2 * MIB;
	f.mem.file = MIB;
	f.mem.shmem = 4096;
	f.mem.swap = 8192;
	struct buf b = { 0 };
	proc_rows_header(&b, FORMAT_CSV);
	proc_row(&b, FORMAT_CSV, 1795919059LL * 1000000000, 1250000000, &f);
	assert_string_equal(buf_str(&b),
		"time,elapsed_s,pid,ppid,comm,rss_bytes,anon_bytes,file_bytes,shmem_bytes,swap_bytes\n"
		"2026-11-29T02:24:20.250Z,1.250,5123,5100,\"py,\"\"3\"\"?\",3145728,2097152,1048576,4096,8192\n");
	buf_reset(&b);
	proc_row(&b, FORMAT_JSONL, 1795919059LL * 1000000000, 1250000000, &f);
	assert_string_equal(buf_str(&b),
		"{\"time\":\"2026-11-29T02:24:20.250Z\",\"elapsed_s\":1.250,\"pid\":5123,\"ppid\":5100,"
		"\"comm\":\"py,\\\"3\\\"\\u001b\",\"rss_bytes\":3145728,\"anon_bytes\":2097152,"
		"\"file_bytes\":1048576,\"shmem_bytes\":4096,\"swap_bytes\":8192}\n");
	/* a missing value, and a key chosen by an application */
	buf_reset(&b);
	struct row w;
	row_begin(&w, &b, FORMAT_JSONL);
	row_null(&w, "counter.a\"b");
	row_end(&w);
	row_begin(&w, &b, FORMAT_CSV);
	row_null(&w, "x");
	row_u64(&w, "y", 7);
	row_end(&w);
	assert_string_equal(buf_str(&b), "{\"counter.a\\\"b\":null}\n,7\n");
	buf_release(&b);
}

/* CSV injection: a text cell that begins with = + - @ (a tab or CR become '?' first)
 * is quoted with a single quote before it; numbers, negative ones included, and plain
 * text stay as they are; JSON lines are untouched. */
static void test_csv_formula(void **state)
{
	(void)state;
	static const struct { const char *in, *csv; } c[] = {
		{ "=cmd|'/c calc'!", "\"'=cmd|'/c calc'!\"" },
		{ "+SUM(1+1)", "\"'+SUM(1+1)\"" },
		{ "-2+3", "\"'-2+3\"" },
		{ "@SUM(A1)", "\"'@SUM(A1)\"" },
		{ "=a,\"b\"", "\"'=a,\"\"b\"\"\"" },
		{ "a=b", "a=b" },
		{ " =x", " =x" },
		{ "", "" },
	};
	struct buf b = { 0 };
	struct row w;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		buf_reset(&b);
		row_begin(&w, &b, FORMAT_CSV);
		row_str(&w, "comm", c[i].in);
		row_raw(&w, "n", "-12");
		row_end(&w);
		char want[96];
		snprintf(want, sizeof(want), "%s,-12\n", c[i].csv);
		assert_string_equal(buf_str(&b), want);
	}
	buf_reset(&b);
	row_begin(&w, &b, FORMAT_JSONL);
	row_str(&w, "comm", "=x");
	row_end(&w);
	assert_string_equal(buf_str(&b), "{\"comm\":\"=x\"}\n");
	buf_release(&b);
}

/* A ramp up to a peak at 60% of the time, then down: the golden chart shows the ramp,
 * the peak column marked '^' and the axes. */
static void test_tchart_golden(void **state)
{
	(void)state;
	struct tchart_point pts[50];
	for (int i = 0; i < 50; i++) {
		pts[i].t = (int64_t)i * 1000000000LL;
		pts[i].v = (uint64_t)(i <= 30 ? i : 60 - i) * 64 * MIB;
	}
	struct buf b = { 0 };
	tchart_render(&b, pts, 50, 49 * 1000000000LL, 52, 4);
	size_t len;
	char *golden = fixture("tests/fixtures/golden/tchart-ramp.txt", &len);
	assert_string_equal(buf_str(&b), golden);
	free(golden);
	buf_release(&b);
	/* nothing to draw: nothing drawn */
	tchart_render(&b, pts, 0, 0, 80, 4);
	assert_int_equal(b.len, 0);
	tchart_render(&b, pts, 50, 49, 5, 4);
	assert_int_equal(b.len, 0);
}

/* The same ramp with three marks, two of them close together: each letter lands in its
 * column or the nearest free one, in a row under the time axis. */
static void test_tchart_marks_golden(void **state)
{
	(void)state;
	struct tchart_point pts[50];
	for (int i = 0; i < 50; i++) {
		pts[i].t = (int64_t)i * 1000000000LL;
		pts[i].v = (uint64_t)(i <= 30 ? i : 60 - i) * 64 * MIB;
	}
	int64_t marks[] = { 0, 10 * 1000000000LL, 10 * 1000000000LL + 1, 49 * 1000000000LL };
	struct buf b = { 0 };
	tchart_render_marks(&b, pts, 50, 49 * 1000000000LL, 52, 4, marks, 4);
	assert_golden("tests/fixtures/golden/tchart-marks.txt", buf_str(&b));
	/* without marks: exactly the chart of tchart_render */
	struct buf plain = { 0 };
	buf_reset(&b);
	tchart_render_marks(&b, pts, 50, 49 * 1000000000LL, 52, 4, NULL, 0);
	tchart_render(&plain, pts, 50, 49 * 1000000000LL, 52, 4);
	assert_string_equal(buf_str(&b), buf_str(&plain));
	assert_int_equal(tchart_mark_letter(0), 'A');
	assert_int_equal(tchart_mark_letter(26), 'a');
	assert_int_equal(tchart_mark_letter(60), '*');
	buf_release(&b);
	buf_release(&plain);
}

/* One wording of the peak for every output, also for runs older than peak_source: the
 * report once said "VmHWM" where show said "from the OOM report". */
static void test_run_peak_words(void **state)
{
	(void)state;
	struct run r;
	struct buf b = { 0 };
	set_run(&r);
	r.peak_rss = 773 * MIB + MIB / 5;
	r.peak_source = PEAK_FROM_HWM;
	run_peak_words(&b, &r, 160 * MIB);
	assert_string_equal(buf_str(&b), "highest sample 160.0 MiB; peak 773.2 MiB from VmHWM");
	buf_reset(&b);
	r.peak_source = PEAK_FROM_SAMPLE;
	run_peak_words(&b, &r, r.peak_rss);
	assert_string_equal(buf_str(&b), "peak 773.2 MiB from a sample");
	/* before schema 8: the OOM report when the peak is at the kill, else VmHWM */
	r.peak_source = "";
	r.oom_at = r.peak_rss_at;
	assert_string_equal(run_peak_from(&r, 160 * MIB), "from the OOM report");
	r.oom_at = 0;
	assert_string_equal(run_peak_from(&r, 160 * MIB), "from VmHWM");
	assert_null(run_peak_from(&r, r.peak_rss));
	/* the report's card uses the same words as show */
	struct buf s = { 0 };
	r.oom_at = r.peak_rss_at;
	summary_text(&s, &r, 160 * MIB, NULL, 0);
	assert_non_null(strstr(buf_str(&s), ", from the OOM report;"));
	buf_release(&s);
	buf_release(&b);
}

/* The reported peak rises in its column of the terminal chart and takes the '^'; after
 * the last sample (a run that ended later) nothing is drawn. */
static void test_tchart_peak(void **state)
{
	(void)state;
	struct tchart_point pts[1] = { { 0, 4 * MIB } };
	struct tchart_point peak = { 100, 64 * MIB };
	struct buf b = { 0 };
	tchart_render_peak(&b, pts, 1, 100, 32, 2, NULL, 0, &peak);
	const char *t = buf_str(&b);
	assert_non_null(strstr(t, "64.0 MiB"));
	/* the top row: empty from column 1 until the peak's column at the end */
	const char *row = strstr(t, "\xe2\x94\xa4");
	assert_non_null(row);
	row += 3;
	assert_true(strncmp(row, " ", 1) == 0);
	const char *nl = strchr(row, '\n');
	assert_true(nl - row > 20);
	assert_true(strncmp(nl - 3, "\xe2\x96\x88", 3) == 0);	/* a full block at the end */
	/* the axis: '^' in the last column */
	const char *ax = strstr(t, "\xe2\x94\x94");
	assert_non_null(ax);
	const char *axl = strchr(ax, '\n') + 1;
	const char *axe = strchr(axl, '\n');
	assert_int_equal(axe[-1], '^');
	buf_release(&b);

	/* a peak at the start keeps the axis's "0s" beside its '^' */
	struct tchart_point first[2] = { { 0, 64 * MIB }, { 100, 4 * MIB } };
	struct tchart_point at0 = { 0, 64 * MIB };
	tchart_render_peak(&b, first, 2, 100, 32, 2, NULL, 0, &at0);
	ax = strstr(buf_str(&b), "\xe2\x94\x94");
	assert_non_null(ax);
	axl = strchr(ax, '\n') + 1;
	assert_non_null(strstr(axl, "  ^0s "));
	buf_release(&b);
}

int main(void)
{
	setenv("TZ", "UTC", 1);
	tzset();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fmt_bytes),
		cmocka_unit_test(test_fmt_duration),
		cmocka_unit_test(test_fmt_offset),
		cmocka_unit_test(test_fmt_time),
		cmocka_unit_test(test_live_line),
		cmocka_unit_test(test_live_context),
		cmocka_unit_test(test_outcome_words),
		cmocka_unit_test(test_json_escape),
		cmocka_unit_test(test_untrusted_text),
		cmocka_unit_test(test_json_run),
		cmocka_unit_test(test_summary_peak_source),
		cmocka_unit_test(test_run_peak_words),
		cmocka_unit_test(test_tchart_peak),
		cmocka_unit_test(test_oom_kills_words),
		cmocka_unit_test(test_procs_table),
		cmocka_unit_test(test_json_kills_processes),
		cmocka_unit_test(test_proc_rows),
		cmocka_unit_test(test_csv_formula),
		cmocka_unit_test(test_tchart_golden),
		cmocka_unit_test(test_tchart_marks_golden),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
