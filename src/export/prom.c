#include "export/prom.h"
#include "base/parse.h"
#include "source/cgroup.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

void prom_escape_label(struct buf *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			buf_puts(b, "\\\\");
		else if (*s == '"')
			buf_puts(b, "\\\"");
		else if (*s == '\n')
			buf_puts(b, "\\n");
		else
			buf_putc(b, *s);
	}
}

void prom_comm_label(struct buf *b, const char *s)
{
	char raw[2] = { 0, 0 };
	for (; *s; s++) {
		raw[0] = *s;
		if (s[0] == '\\' && s[1] == '\\')
			raw[0] = *++s;
		else if (s[0] == '\\' && s[1] == 'n')
			raw[0] = '\n', s++;
		prom_escape_label(b, raw);
	}
}

int prom_wants_openmetrics(const char *accept)
{
	return accept && strstr(accept, "application/openmetrics-text") != NULL;
}

/* The labels every series has: run, pid, comm. */
static void labels(struct buf *b, const struct prom_snapshot *p)
{
	buf_printf(b, "run=\"%lld\",pid=\"%d\",comm=\"", (long long)p->run, (int)p->pid);
	prom_comm_label(b, p->comm);
	buf_putc(b, '"');
}

/* The # HELP and # TYPE lines of a family. A counter's family is named without _total
 * in OpenMetrics and with it in the Prometheus format, where the TYPE names the
 * series. */
static void family(struct buf *b, int om, const char *name, const char *type, const char *help)
{
	int counter = strcmp(type, "counter") == 0;
	const char *sfx = counter && !om ? "_total" : "";
	buf_printf(b, "# HELP %s%s %s\n# TYPE %s%s %s\n", name, sfx, help, name, sfx, type);
	if (!om)
		return;
	/* OpenMetrics: a family whose name ends in its unit says so */
	static const char *const units[] = { "bytes", "seconds" };
	size_t n = strlen(name);
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		size_t u = strlen(units[i]);
		if (n > u + 1 && name[n - u - 1] == '_' && strcmp(name + n - u, units[i]) == 0)
			buf_printf(b, "# UNIT %s %s\n", name, units[i]);
	}
}

static void series_u(struct buf *b, const struct prom_snapshot *p, const char *name,
		     const char *sfx, const char *extra, uint64_t v)
{
	buf_printf(b, "%s%s{", name, sfx);
	labels(b, p);
	buf_printf(b, "%s} %llu\n", extra ? extra : "", (unsigned long long)v);
}

static void series_d(struct buf *b, const struct prom_snapshot *p, const char *name,
		     const char *sfx, const char *extra, double v)
{
	buf_printf(b, "%s%s{", name, sfx);
	labels(b, p);
	buf_printf(b, "%s} %.15g\n", extra ? extra : "", v);
}

/* A PSI stall-time counter family: kind="some", and kind="full" when read. */
static void pressure(struct buf *b, int om, const struct prom_snapshot *p, const char *name,
		     const char *help, uint64_t some_us, uint64_t full_us, int have_full)
{
	family(b, om, name, "counter", help);
	series_d(b, p, name, "_total", ",kind=\"some\"", (double)some_us / 1e6);
	if (have_full)
		series_d(b, p, name, "_total", ",kind=\"full\"", (double)full_us / 1e6);
}

static void gauge(struct buf *b, int om, const struct prom_snapshot *p, const char *name,
		  const char *help, uint64_t v)
{
	family(b, om, name, "gauge", help);
	series_u(b, p, name, "", NULL, v);
}

static void gauge_d(struct buf *b, int om, const struct prom_snapshot *p, const char *name,
		    const char *help, double v)
{
	family(b, om, name, "gauge", help);
	series_d(b, p, name, "", NULL, v);
}

static void counter_u(struct buf *b, int om, const struct prom_snapshot *p, const char *name,
		      const char *help, uint64_t v)
{
	family(b, om, name, "counter", help);
	series_u(b, p, name, "_total", NULL, v);
}

static void app(struct buf *b, int om, const struct prom_snapshot *p, int gauges)
{
	const char *name = gauges ? "rsswatch_app_value" : "rsswatch_app_counter";
	int any = 0;
	for (size_t i = 0; i < p->ncounters; i++) {
		const struct prom_counter *c = &p->counters[i];
		if (!c->is_gauge != !gauges)
			continue;
		if (!any++)
			family(b, om, name, "gauge", gauges
			       ? "An application gauge (rsw_gauge_set), by name."
			       : "An application counter (the sum of rsw_counter_add; it may go down), by name.");
		buf_printf(b, "%s{", name);
		labels(b, p);
		buf_puts(b, ",name=\"");
		prom_escape_label(b, c->name);
		buf_printf(b, "\"} %lld\n", c->value);
	}
}

void prom_write(struct buf *b, const struct prom_snapshot *p, int om)
{
	const struct sample *s = &p->s;
	if (p->have_sample) {
		gauge(b, om, p, "rsswatch_resident_bytes", "Resident memory (RSS) of the target, or the total over its set.", s->rss);
		gauge(b, om, p, "rsswatch_anon_bytes", "Resident anonymous memory.", s->anon);
		gauge(b, om, p, "rsswatch_file_bytes", "Resident file-backed memory.", s->file);
		gauge(b, om, p, "rsswatch_shmem_bytes", "Resident shared memory (shmem, tmpfs).", s->shmem);
		gauge(b, om, p, "rsswatch_swap_bytes", "Memory swapped out.", s->swap);
		gauge(b, om, p, "rsswatch_high_water_bytes", "The run's peak resident memory so far.", p->high_water);
		if (s->have & SAMPLE_GPU)
			gauge(b, om, p, "rsswatch_gpu_bytes", "GPU memory used by the target.", s->gpu);
		if (s->have & SAMPLE_CGROUP) {
			gauge(b, om, p, "rsswatch_cgroup_usage_bytes", "Memory charged to the target's cgroup.", s->cgroup);
			if (s->cgroup_limit && s->cgroup_limit != CG_UNLIMITED)
				gauge(b, om, p, "rsswatch_cgroup_limit_bytes", "The cgroup's memory limit.", s->cgroup_limit);
			if (s->have & SAMPLE_CGROUP_PEAK)
				gauge(b, om, p, "rsswatch_cgroup_peak_bytes", "The cgroup's peak charged memory.", s->cgroup_peak);
		}
		if (s->have & SAMPLE_PSI)
			pressure(b, om, p, "rsswatch_host_memory_pressure_seconds",
				 "Time some (or all, kind=full) tasks of the host stalled on memory (PSI).",
				 s->psi_some_total_us, s->psi_full_total_us, s->have & SAMPLE_PSI_FULL);
		if (s->have & SAMPLE_CG_PSI)
			pressure(b, om, p, "rsswatch_cgroup_memory_pressure_seconds",
				 "Time some (or all, kind=full) tasks of the target's cgroup stalled on memory (PSI).",
				 s->cg_psi_some_total_us, s->cg_psi_full_total_us,
				 s->have & SAMPLE_CG_PSI_FULL);
		if (s->have & SAMPLE_CPU) {
			family(b, om, "rsswatch_cpu_seconds", "counter", "CPU time of the target, by mode.");
			series_d(b, p, "rsswatch_cpu_seconds", "_total", ",mode=\"user\"", (double)s->cpu_user_ns / NS_PER_S);
			series_d(b, p, "rsswatch_cpu_seconds", "_total", ",mode=\"system\"", (double)s->cpu_sys_ns / NS_PER_S);
		}
		counter_u(b, om, p, "rsswatch_oom_kills", "OOM kills of the target or a member during the run.",
			  (uint64_t)p->oom_kills);
		if (p->eta_limit[0]) {
			family(b, om, "rsswatch_exhaustion_eta_seconds", "gauge",
			       "Projected time until memory reaches the nearest limit at its recent rate, by limit (cgroup, host); absent while memory is not rising toward one.");
			buf_puts(b, "rsswatch_exhaustion_eta_seconds{");
			labels(b, p);
			buf_puts(b, ",limit=\"");
			prom_escape_label(b, p->eta_limit);
			buf_printf(b, "\"} %.15g\n", p->eta_s);
		}
		app(b, om, p, 0);
		app(b, om, p, 1);
		gauge_d(b, om, p, "rsswatch_sample_duration_seconds",
			"Wall time the recorder spent on the last sample, from its first read to its hand-over.",
			p->sample_cost_s);
	}
	counter_u(b, om, p, "rsswatch_samples", "Samples taken in the run.", (uint64_t)p->samples);
	counter_u(b, om, p, "rsswatch_samples_dropped",
		  "Samples the store merged into their neighbours (the higher kept) while the database was unavailable or behind.",
		  (uint64_t)p->samples_dropped);
	family(b, om, "rsswatch_run_outcome", "gauge",
	       "1, labelled with how the run ended (running while it records; exited, signaled, oom_killed, stopped).");
	buf_puts(b, "rsswatch_run_outcome{");
	labels(b, p);
	buf_puts(b, ",outcome=\"");
	prom_escape_label(b, p->outcome[0] ? p->outcome : OUTCOME_RUNNING);
	buf_puts(b, "\"} 1\n");
	if (p->outcome[0]) {
		gauge_d(b, om, p, "rsswatch_run_end_timestamp_seconds",
			"When the run ended, in seconds since the epoch.", (double)p->ended_at / NS_PER_S);
		if (p->exit_code >= 0 && strcmp(p->outcome, OUTCOME_EXITED) == 0)
			gauge_d(b, om, p, "rsswatch_run_exit_code", "The target's exit status.",
				(double)p->exit_code);
		if (p->signal > 0)
			gauge_d(b, om, p, "rsswatch_run_signal", "The signal that ended the target.",
				(double)p->signal);
	}
	family(b, om, "rsswatch_recorder_cpu_seconds", "counter", "CPU time of rsswatch itself, by mode.");
	series_d(b, p, "rsswatch_recorder_cpu_seconds", "_total", ",mode=\"user\"", p->recorder_user_s);
	series_d(b, p, "rsswatch_recorder_cpu_seconds", "_total", ",mode=\"system\"", p->recorder_sys_s);
	if (om)
		buf_puts(b, "# EOF\n");
}

int prom_parse_listen(const char *s, struct sockaddr_storage *out, socklen_t *len)
{
	const char *colon;
	char host[64];
	size_t hl;
	if (!s)
		return -EINVAL;
	if (*s == '[') {
		const char *end = strchr(s, ']');
		if (!end || end[1] != ':')
			return -EINVAL;
		hl = (size_t)(end - s - 1);
		if (hl == 0 || hl >= sizeof(host))
			return -EINVAL;
		memcpy(host, s + 1, hl);
		colon = end + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return -EINVAL;
		hl = (size_t)(colon - s);
		if (hl == 0 || hl >= sizeof(host) || memchr(s, ':', hl))
			return -EINVAL;
		memcpy(host, s, hl);
	}
	host[hl] = '\0';
	const char *ps = colon + 1;
	if (*ps < '0' || *ps > '9')
		return -EINVAL;
	char *end;
	errno = 0;
	unsigned long port = strtoul(ps, &end, 10);
	if (errno || *end || port == 0 || port > 65535)
		return -EINVAL;
	struct sockaddr_storage ss;
	memset(&ss, 0, sizeof(ss));
	if (strcmp(host, "localhost") == 0)
		memcpy(host, "127.0.0.1", 10);
	struct sockaddr_in *v4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&ss;
	if (*s != '[' && inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET;
		v4->sin_port = htons((uint16_t)port);
		*len = sizeof(*v4);
	} else if (*s == '[' && inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*v6);
	} else {
		return -EINVAL;
	}
	*out = ss;
	return 0;
}
