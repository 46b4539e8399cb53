/* render/json.c: escaping (untrusted text never passes raw), a run's object, its OOM
 * kills and its processes. */
#include "testutil.h"

#include <string.h>
#include <time.h>

#include "base/util.h"
#include "render/json.h"
#include "runfix.h"

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
	/* the smallest time to exhaustion projected */
	buf_reset(&b);
	r.min_eta_ns = 250LL * 1000000000LL;
	r.min_eta_at = r.started_at + 3LL * 1000000000LL;
	snprintf(r.min_eta_limit, sizeof(r.min_eta_limit), "cgroup");
	json_run(&b, &r);
	assert_non_null(strstr(buf_str(&b), ",\"min_eta_s\":250.0,\"min_eta_at\":\""));
	assert_non_null(strstr(buf_str(&b), "Z\",\"min_eta_limit\":\"cgroup\"}"));
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

int main(void)
{
	setenv("TZ", "UTC", 1);
	tzset();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_escape),
		cmocka_unit_test(test_untrusted_text),
		cmocka_unit_test(test_json_run),
		cmocka_unit_test(test_json_kills_processes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
