/* The exposition writer (metrics/prom.c): label escaping, both formats' shapes, and the
 * strict --listen parser. */
#include "testutil.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include "metrics/prom.h"

static void test_escape(void **state)
{
	(void)state;
	struct buf b = { 0 };
	prom_escape_label(&b, "a\"b\\c\nd");
	assert_string_equal(buf_str(&b), "a\\\"b\\\\c\\nd");
	buf_reset(&b);
	prom_escape_label(&b, "plain name-1.x:y");
	assert_string_equal(buf_str(&b), "plain name-1.x:y");
	buf_reset(&b);
	prom_escape_label(&b, "");
	assert_string_equal(buf_str(&b), "");
	buf_release(&b);
}

/* A process named a\b"c<newline>d: /proc/PID/status shows a\\b"c\nd (the kernel
 * escapes the backslash and the newline); each byte is escaped once in the label. */
static void test_comm_label(void **state)
{
	(void)state;
	struct buf b = { 0 };
	prom_comm_label(&b, "a\\\\b\"c\\nd");
	assert_string_equal(buf_str(&b), "a\\\\b\\\"c\\nd");
	buf_reset(&b);
	/* a backslash the kernel did not write (a raw name) stays one character */
	prom_comm_label(&b, "x\\");
	assert_string_equal(buf_str(&b), "x\\\\");
	buf_reset(&b);
	prom_comm_label(&b, "\\\\\\n\\\\");	/* \\ \n \\ as the kernel writes them */
	assert_string_equal(buf_str(&b), "\\\\\\n\\\\");
	buf_release(&b);

	struct prom_snapshot p;
	memset(&p, 0, sizeof(p));
	p.have_sample = 1;
	p.run = 1;
	p.pid = 9;
	snprintf(p.comm, sizeof(p.comm), "a\\\\b\"c\\nd");
	prom_write(&b, &p, 0);
	assert_non_null(strstr(buf_str(&b), "\nrsswatch_resident_bytes{run=\"1\",pid=\"9\",comm=\"a\\\\b\\\"c\\nd\"} 0\n"));
	buf_release(&b);
}

static void fill(struct prom_snapshot *p)
{
	memset(p, 0, sizeof(*p));
	p->have_sample = 1;
	p->run = 7;
	p->pid = 4242;
	snprintf(p->comm, sizeof(p->comm), "x\"y\nz");
	p->s.mem.rss = 1000;
	p->s.have = SAMPLE_CGROUP | SAMPLE_CPU;
	p->s.cgroup = 900;
	p->s.cgroup_limit = 4096;
	p->s.cpu_user_ns = 1500000000;
	p->samples = 3;
	p->oom_kills = 1;
	snprintf(p->counters[0].name, sizeof(p->counters[0].name), "items_in_flight");
	p->counters[0].value = -2;
	snprintf(p->counters[1].name, sizeof(p->counters[1].name), "queue_bytes");
	p->counters[1].value = 64;
	p->counters[1].is_gauge = 1;
	p->ncounters = 2;
}

static void test_text(void **state)
{
	(void)state;
	struct prom_snapshot p;
	fill(&p);
	struct buf b = { 0 };
	prom_write(&b, &p, 0);
	const char *t = buf_str(&b);
	const char *L = "{run=\"7\",pid=\"4242\",comm=\"x\\\"y\\nz\"";
	char want[256];
	snprintf(want, sizeof(want), "\nrsswatch_resident_bytes%s} 1000\n", L);
	assert_non_null(strstr(t, want));
	assert_non_null(strstr(t, "# TYPE rsswatch_resident_bytes gauge\n"));
	assert_non_null(strstr(t, "# TYPE rsswatch_oom_kills_total counter\n"));
	snprintf(want, sizeof(want), "\nrsswatch_oom_kills_total%s} 1\n", L);
	assert_non_null(strstr(t, want));
	snprintf(want, sizeof(want), "\nrsswatch_cgroup_limit_bytes%s} 4096\n", L);
	assert_non_null(strstr(t, want));
	snprintf(want, sizeof(want), "\nrsswatch_cpu_seconds_total%s,mode=\"user\"} 1.5\n", L);
	assert_non_null(strstr(t, want));
	snprintf(want, sizeof(want), "\nrsswatch_app_accumulated%s,name=\"items_in_flight\"} -2\n", L);
	assert_non_null(strstr(t, want));
	snprintf(want, sizeof(want), "\nrsswatch_app_value%s,name=\"queue_bytes\"} 64\n", L);
	assert_non_null(strstr(t, want));
	assert_null(strstr(t, "rsswatch_gpu_bytes"));	/* not sampled: not written */
	assert_null(strstr(t, "# EOF"));
	/* no raw newline inside any series line: every line is a comment or a sample */
	for (const char *l = t; *l; l = strchr(l, '\n') + 1)
		assert_true(*l == '#' || strncmp(l, "rsswatch_", 9) == 0);
	buf_release(&b);
}

/* Every family the sample's column table names is written as the table says: a family
 * of its own with the column's help and value, and each labelled series of those
 * prom.c writes itself, under the type the table gives. */
static void test_column_families(void **state)
{
	(void)state;
	struct prom_snapshot p;
	fill(&p);
	p.s.have = ~0u;
	const struct store_table *t = &store_sample_table;
	for (size_t i = 0; i < t->ncols; i++) {
		const struct store_column *c = &t->cols[i];
		uint64_t v = 1000 + 7 * i;
		double d = (double)v;
		if (c->kind == COL_F64)
			memcpy((char *)&p.s + c->off, &d, sizeof(d));
		else if (c->kind == COL_U64 || c->kind == COL_I64)
			memcpy((char *)&p.s + c->off, &v, sizeof(v));
	}
	struct buf b = { 0 };
	prom_write(&b, &p, 0);
	const char *x = buf_str(&b);
	const char *L = "{run=\"7\",pid=\"4242\",comm=\"x\\\"y\\nz\"";
	size_t families = 0;
	for (size_t i = 0; i < t->ncols; i++) {
		const struct store_column *c = &t->cols[i];
		if (!c->prom)
			continue;
		families++;
		int counter = c->prom_type == PROM_COUNTER;
		char name[96], want[512];
		snprintf(name, sizeof(name), "%s%s", c->prom, counter ? "_total" : "");
		snprintf(want, sizeof(want), "# TYPE %s %s\n", name, counter ? "counter" : "gauge");
		if (!strstr(x, want))
			fail_msg("sample.%s: no \"%s\"", c->name, want);
		if (c->prom_label) {
			snprintf(want, sizeof(want), "\n%s%s,%s} ", name, L, c->prom_label);
		} else {
			snprintf(want, sizeof(want), "# HELP %s %s\n", name, c->help);
			if (!strstr(x, want))
				fail_msg("sample.%s: no \"%s\"", c->name, want);
			snprintf(want, sizeof(want), "\n%s%s} %llu\n", name, L,
				 (unsigned long long)store_column_i64(c, &p.s));
		}
		if (!strstr(x, want))
			fail_msg("sample.%s: no series \"%s\"", c->name, want);
	}
	assert_true(families > 0);
	buf_release(&b);
}

/* The cgroup's peak is the run's: a sample whose interval peaked low (rsswatch resets
 * the cgroup's own peak at each sample, where it can) does not lower it. */
static void test_cgroup_peak(void **state)
{
	(void)state;
	struct prom_snapshot p;
	fill(&p);
	struct buf b = { 0 };
	prom_write(&b, &p, 0);
	assert_null(strstr(buf_str(&b), "rsswatch_cgroup_peak_bytes"));	/* no peak sampled */
	buf_release(&b);
	p.s.have |= SAMPLE_CGROUP_PEAK;
	p.s.cgroup_peak = 3000000;	/* this interval's */
	p.cgroup_peak = 213000000;	/* the run's, before a free */
	prom_write(&b, &p, 0);
	const char *L = "{run=\"7\",pid=\"4242\",comm=\"x\\\"y\\nz\"";
	char want[256];
	snprintf(want, sizeof(want), "\nrsswatch_cgroup_peak_bytes%s} 213000000\n", L);
	assert_non_null(strstr(buf_str(&b), want));
	buf_release(&b);
	/* the first sample: the run's peak not yet folded in, the sample's counts */
	p.cgroup_peak = 0;
	prom_write(&b, &p, 0);
	snprintf(want, sizeof(want), "\nrsswatch_cgroup_peak_bytes%s} 3000000\n", L);
	assert_non_null(strstr(buf_str(&b), want));
	buf_release(&b);
}

static void test_openmetrics(void **state)
{
	(void)state;
	struct prom_snapshot p;
	fill(&p);
	struct buf b = { 0 };
	prom_write(&b, &p, 1);
	const char *t = buf_str(&b);
	assert_non_null(strstr(t, "# TYPE rsswatch_oom_kills counter\n"));
	assert_non_null(strstr(t, "# UNIT rsswatch_resident_bytes bytes\n"));
	assert_non_null(strstr(t, "\nrsswatch_oom_kills_total{"));
	size_t n = strlen(t);
	assert_true(n > 6 && strcmp(t + n - 6, "# EOF\n") == 0);
	buf_release(&b);
	assert_true(prom_wants_openmetrics("application/openmetrics-text; version=1.0.0,text/plain;q=0.5"));
	assert_false(prom_wants_openmetrics("text/plain"));
	assert_false(prom_wants_openmetrics(NULL));
}

static void test_recorder_metrics(void **state)
{
	(void)state;
	struct prom_snapshot p;
	fill(&p);
	p.samples_dropped = 5;
	p.sample_cost_s = 0.00025;
	snprintf(p.eta_limit, sizeof(p.eta_limit), "cgroup");
	p.eta_s = 42.5;
	struct buf b = { 0 };
	prom_write(&b, &p, 0);
	const char *t = buf_str(&b);
	const char *L = "{run=\"7\",pid=\"4242\",comm=\"x\\\"y\\nz\"";
	char want[256];
	snprintf(want, sizeof(want), "\nrsswatch_samples_dropped_total%s} 5\n", L);
	assert_non_null(strstr(t, want));
	snprintf(want, sizeof(want), "\nrsswatch_sample_duration_seconds%s} 0.00025\n", L);
	assert_non_null(strstr(t, want));
	snprintf(want, sizeof(want), "\nrsswatch_exhaustion_eta_seconds%s,limit=\"cgroup\"} 42.5\n", L);
	assert_non_null(strstr(t, want));
	snprintf(want, sizeof(want), "\nrsswatch_run_outcome%s,outcome=\"running\"} 1\n", L);
	assert_non_null(strstr(t, want));
	assert_null(strstr(t, "rsswatch_run_end_timestamp_seconds"));	/* not ended */
	buf_reset(&b);

	/* no projection: no ETA series */
	p.eta_limit[0] = '\0';
	/* ended: how, and when (to the millisecond, not rounded to 9 digits) */
	snprintf(p.outcome, sizeof(p.outcome), "oom_killed");
	p.ended_at = 1700000000123000000LL;
	p.exit_code = -1;
	p.signal = 9;
	prom_write(&b, &p, 0);
	t = buf_str(&b);
	assert_null(strstr(t, "rsswatch_exhaustion_eta_seconds"));
	snprintf(want, sizeof(want), "\nrsswatch_run_outcome%s,outcome=\"oom_killed\"} 1\n", L);
	assert_non_null(strstr(t, want));
	assert_null(strstr(t, "outcome=\"running\""));
	snprintf(want, sizeof(want), "\nrsswatch_run_end_timestamp_seconds%s} 1700000000.123\n", L);
	assert_non_null(strstr(t, want));
	snprintf(want, sizeof(want), "\nrsswatch_run_signal%s} 9\n", L);
	assert_non_null(strstr(t, want));
	assert_null(strstr(t, "rsswatch_run_exit_code"));
	buf_reset(&b);

	/* OpenMetrics: units where the family name ends in one */
	prom_write(&b, &p, 1);
	t = buf_str(&b);
	assert_non_null(strstr(t, "# UNIT rsswatch_run_end_timestamp_seconds seconds\n"));
	assert_non_null(strstr(t, "# TYPE rsswatch_samples_dropped counter\n"));
	assert_non_null(strstr(t, "# UNIT rsswatch_cpu_seconds seconds\n"));
	assert_null(strstr(t, "# UNIT rsswatch_samples "));
	buf_release(&b);
}

static void test_no_sample(void **state)
{
	(void)state;
	struct prom_snapshot p;
	memset(&p, 0, sizeof(p));
	struct buf b = { 0 };
	prom_write(&b, &p, 0);
	assert_null(strstr(buf_str(&b), "rsswatch_resident_bytes"));
	assert_non_null(strstr(buf_str(&b), "rsswatch_recorder_cpu_seconds_total{"));
	buf_release(&b);
}

static void test_listen(void **state)
{
	(void)state;
	struct sockaddr_storage ss;
	socklen_t len = 0;
	assert_int_equal(prom_parse_listen("127.0.0.1:9464", &ss, &len), 0);
	assert_int_equal(ss.ss_family, AF_INET);
	assert_int_equal(ntohs(((struct sockaddr_in *)&ss)->sin_port), 9464);
	assert_int_equal(prom_parse_listen("[::1]:80", &ss, &len), 0);
	assert_int_equal(ss.ss_family, AF_INET6);
	assert_int_equal(prom_parse_listen("localhost:1", &ss, &len), 0);
	assert_int_equal(ss.ss_family, AF_INET);
	const char *bad[] = { "", "9464", ":9464", "127.0.0.1", "127.0.0.1:", "127.0.0.1:0",
			      "127.0.0.1:65536", "127.0.0.1:94a", "127.0.0.1:-1", "1.2.3:80",
			      "::1:80", "[::1]80", "[127.0.0.1]:80", "example.com:80",
			      "127.0.0.1:+80", NULL };
	for (size_t i = 0; bad[i]; i++) {
		ss.ss_family = 12345;
		assert_int_equal(prom_parse_listen(bad[i], &ss, &len), -EINVAL);
		assert_int_equal(ss.ss_family, 12345);	/* untouched on failure */
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_comm_label),
		cmocka_unit_test(test_recorder_metrics),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_column_families),
		cmocka_unit_test(test_cgroup_peak),
		cmocka_unit_test(test_openmetrics),
		cmocka_unit_test(test_no_sample),
		cmocka_unit_test(test_listen),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
