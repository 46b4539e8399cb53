#include "metrics/prom.h"
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

/* One exposition being written: either one recording's snapshot (record --listen:
 * its series labelled run, pid, comm) or the agent's targets (each series labelled
 * target="NAME" only, so that the number of series is bounded by the number of
 * targets, never by the pids or names of the processes that come and go). A family's
 * # HELP and # TYPE lines are written once, before its first series: a family with no
 * series at all (say, GPU memory where no target has any) is left out. */
struct pw {
	struct buf *b;
	int om;
	const struct prom_snapshot *one;	/* record --listen, or NULL */
	const struct prom_target *t;	/* the agent's, when one is NULL */
	size_t n;			/* 1 for one */
	const char *name, *type, *help;	/* the family being written */
	int started;			/* its header is out */
};

static const struct prom_snapshot *snap_at(const struct pw *w, size_t i)
{
	return w->one ? w->one : &w->t[i].snap;
}

/* The labels every series has: run, pid, comm; or the agent's target. */
static void labels(struct pw *w, size_t i)
{
	if (!w->one) {
		buf_puts(w->b, "target=\"");
		prom_escape_label(w->b, w->t[i].name);
		buf_putc(w->b, '"');
		return;
	}
	const struct prom_snapshot *p = w->one;
	buf_printf(w->b, "run=\"%lld\",pid=\"%d\",comm=\"", (long long)p->run, (int)p->pid);
	prom_comm_label(w->b, p->comm);
	buf_putc(w->b, '"');
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

/* The next family; its header waits for its first series. */
static void fam(struct pw *w, const char *name, const char *type, const char *help)
{
	w->name = name;
	w->type = type;
	w->help = help;
	w->started = 0;
}

/* Opens a series of the current family: "NAME_SFX{labels EXTRA", after the family's
 * header when this is its first. */
static void series_open(struct pw *w, size_t i, const char *extra)
{
	if (!w->started++)
		family(w->b, w->om, w->name, w->type, w->help);
	buf_printf(w->b, "%s%s{", w->name, strcmp(w->type, "counter") == 0 ? "_total" : "");
	labels(w, i);
	if (extra)
		buf_puts(w->b, extra);
}

static void series_u(struct pw *w, size_t i, const char *extra, uint64_t v)
{
	series_open(w, i, extra);
	buf_printf(w->b, "} %llu\n", (unsigned long long)v);
}

static void series_d(struct pw *w, size_t i, const char *extra, double v)
{
	series_open(w, i, extra);
	buf_printf(w->b, "} %.15g\n", v);
}

/* A gauge of the sample: get says whether a snapshot has it, and its value. */
typedef int (*sample_get)(const struct prom_snapshot *p, uint64_t *v);

static void sample_gauge(struct pw *w, const char *name, const char *help, sample_get get)
{
	fam(w, name, "gauge", help);
	for (size_t i = 0; i < w->n; i++) {
		uint64_t v;
		const struct prom_snapshot *p = snap_at(w, i);
		if (p->have_sample && get(p, &v))
			series_u(w, i, NULL, v);
	}
}

#define GETTER(fn, cond, value) \
	static int fn(const struct prom_snapshot *p, uint64_t *v) \
	{ \
		const struct sample *s = &p->s; \
		(void)s; \
		*v = (value); \
		return (cond); \
	}
GETTER(get_hwm, 1, p->high_water)
GETTER(get_cg_limit, (s->have & SAMPLE_CGROUP) && s->cgroup_limit && s->cgroup_limit != CG_UNLIMITED,
       s->cgroup_limit)
GETTER(get_cg_peak, (s->have & SAMPLE_CGROUP) && (s->have & SAMPLE_CGROUP_PEAK),
       p->cgroup_peak > s->cgroup_peak ? p->cgroup_peak : s->cgroup_peak)
#undef GETTER

/* The families of the sample's columns that have one of their own (store/run.h:
 * store_sample_table's prom without prom_label), in the table's order: the column's
 * help is the family's, and each series its value as stored, where the sample has it
 * (its NULL rule). */
static void sample_columns(struct pw *w)
{
	const struct store_table *t = &store_sample_table;
	for (size_t k = 0; k < t->ncols; k++) {
		const struct store_column *c = &t->cols[k];
		if (!c->prom || c->prom_label)
			continue;
		fam(w, c->prom, c->prom_type == PROM_COUNTER ? "counter" : "gauge", c->help);
		for (size_t i = 0; i < w->n; i++) {
			const struct prom_snapshot *p = snap_at(w, i);
			if (p->have_sample && !store_column_null(c, &p->s))
				series_u(w, i, NULL, (uint64_t)store_column_i64(c, &p->s));
		}
	}
}

/* A PSI stall-time counter family: kind="some", and kind="full" when read. cg: the
 * target's cgroup's, else the host's. */
static void pressure(struct pw *w, int cg, const char *name, const char *help)
{
	fam(w, name, "counter", help);
	for (size_t i = 0; i < w->n; i++) {
		const struct prom_snapshot *p = snap_at(w, i);
		const struct sample *s = &p->s;
		if (!p->have_sample || !(s->have & (cg ? SAMPLE_CG_PSI : SAMPLE_PSI)))
			continue;
		series_d(w, i, ",kind=\"some\"",
			 (double)(cg ? s->cg_psi_some_total_us : s->psi_some_total_us) / 1e6);
		if (s->have & (cg ? SAMPLE_CG_PSI_FULL : SAMPLE_PSI_FULL))
			series_d(w, i, ",kind=\"full\"",
				 (double)(cg ? s->cg_psi_full_total_us : s->psi_full_total_us) / 1e6);
	}
}

static void app(struct pw *w, int gauges)
{
	fam(w, gauges ? "rsswatch_app_value" : "rsswatch_app_accumulated", "gauge", gauges
	    ? "An application gauge (rsw_gauge_set), by name."
	    : "An application counter (the sum of rsw_counter_add; it may go down), by name.");
	for (size_t i = 0; i < w->n; i++) {
		const struct prom_snapshot *p = snap_at(w, i);
		if (!p->have_sample)
			continue;
		for (size_t k = 0; k < p->ncounters; k++) {
			const struct prom_counter *c = &p->counters[k];
			if (!c->is_gauge != !gauges)
				continue;
			series_open(w, i, ",name=\"");
			prom_escape_label(w->b, c->name);
			buf_printf(w->b, "\"} %lld\n", c->value);
		}
	}
}

/* The run's own families: every snapshot of record --listen; an agent's target once it
 * has had an instance. */
static int has_run(const struct pw *w, const struct prom_snapshot *p)
{
	return w->one || p->run > 0;
}

static void run_families(struct pw *w)
{
	fam(w, "rsswatch_samples", "counter", "Samples taken in the run.");
	for (size_t i = 0; i < w->n; i++)
		if (has_run(w, snap_at(w, i)))
			series_u(w, i, NULL, (uint64_t)snap_at(w, i)->samples);
	fam(w, "rsswatch_samples_dropped", "counter",
	    "Samples the store merged into their neighbours (the higher kept) while the database was unavailable or behind.");
	for (size_t i = 0; i < w->n; i++)
		if (has_run(w, snap_at(w, i)))
			series_u(w, i, NULL, (uint64_t)snap_at(w, i)->samples_dropped);
	fam(w, "rsswatch_run_outcome", "gauge",
	    "1, labelled with how the run ended (running while it records; exited, signaled, oom_killed, stopped).");
	for (size_t i = 0; i < w->n; i++) {
		const struct prom_snapshot *p = snap_at(w, i);
		if (!has_run(w, p))
			continue;
		series_open(w, i, ",outcome=\"");
		prom_escape_label(w->b, p->outcome[0] ? p->outcome : OUTCOME_RUNNING);
		buf_puts(w->b, "\"} 1\n");
	}
	fam(w, "rsswatch_run_end_timestamp_seconds", "gauge", "When the run ended, in seconds since the epoch.");
	for (size_t i = 0; i < w->n; i++) {
		const struct prom_snapshot *p = snap_at(w, i);
		if (has_run(w, p) && p->outcome[0])
			series_d(w, i, NULL, (double)p->ended_at / NS_PER_S);
	}
	fam(w, "rsswatch_run_exit_code", "gauge", "The target's exit status.");
	for (size_t i = 0; i < w->n; i++) {
		const struct prom_snapshot *p = snap_at(w, i);
		if (has_run(w, p) && p->outcome[0] && p->exit_code >= 0 &&
		    strcmp(p->outcome, OUTCOME_EXITED) == 0)
			series_d(w, i, NULL, (double)p->exit_code);
	}
	fam(w, "rsswatch_run_signal", "gauge", "The signal that ended the target.");
	for (size_t i = 0; i < w->n; i++) {
		const struct prom_snapshot *p = snap_at(w, i);
		if (has_run(w, p) && p->outcome[0] && p->signal > 0)
			series_d(w, i, NULL, (double)p->signal);
	}
}

/* Every family of the snapshots, in one order: the sample's own columns, then the
 * figures of the run so far and those that take more than a column (tests/t/t39-metrics.sh
 * and t73 hold the names; test_prom holds the families the column table names). */
static void write_families(struct pw *w)
{
	sample_columns(w);
	sample_gauge(w, "rsswatch_high_water_bytes", "The run's peak resident memory so far.", get_hwm);
	sample_gauge(w, "rsswatch_cgroup_limit_bytes", "The cgroup's memory limit.", get_cg_limit);
	sample_gauge(w, "rsswatch_cgroup_peak_bytes", "The peak memory charged to the cgroup during the run so far.", get_cg_peak);
	/* the series the column table names with a prom_label */
	pressure(w, 0, "rsswatch_host_memory_pressure_seconds",
		 "Time some (or all, kind=full) tasks of the host stalled on memory (PSI).");
	pressure(w, 1, "rsswatch_cgroup_memory_pressure_seconds",
		 "Time some (or all, kind=full) tasks of the target's cgroup stalled on memory (PSI).");
	fam(w, "rsswatch_cpu_seconds", "counter", "CPU time of the target, by mode.");
	for (size_t i = 0; i < w->n; i++) {
		const struct prom_snapshot *p = snap_at(w, i);
		if (!p->have_sample || !(p->s.have & SAMPLE_CPU))
			continue;
		series_d(w, i, ",mode=\"user\"", (double)p->s.cpu_user_ns / NS_PER_S);
		series_d(w, i, ",mode=\"system\"", (double)p->s.cpu_sys_ns / NS_PER_S);
	}
	fam(w, "rsswatch_oom_kills", "counter", "OOM kills of the target or a member during the run.");
	for (size_t i = 0; i < w->n; i++)
		if (snap_at(w, i)->have_sample)
			series_u(w, i, NULL, (uint64_t)snap_at(w, i)->oom_kills);
	fam(w, "rsswatch_exhaustion_eta_seconds", "gauge",
	    "Projected time until memory reaches the nearest limit at its recent rate, by limit (cgroup, host); absent while memory is not rising toward one.");
	for (size_t i = 0; i < w->n; i++) {
		const struct prom_snapshot *p = snap_at(w, i);
		if (!p->have_sample || !p->eta_limit[0])
			continue;
		series_open(w, i, ",limit=\"");
		prom_escape_label(w->b, p->eta_limit);
		buf_printf(w->b, "\"} %.15g\n", p->eta_s);
	}
	app(w, 0);
	app(w, 1);
	fam(w, "rsswatch_sample_duration_seconds", "gauge",
	    "Wall time the recorder spent on the last sample, from its first read to its hand-over.");
	for (size_t i = 0; i < w->n; i++)
		if (snap_at(w, i)->have_sample)
			series_d(w, i, NULL, snap_at(w, i)->sample_cost_s);
	run_families(w);
}

void prom_write(struct buf *b, const struct prom_snapshot *p, int om)
{
	struct pw w = { .b = b, .om = om, .one = p, .n = 1 };
	write_families(&w);
	fam(&w, "rsswatch_recorder_cpu_seconds", "counter", "CPU time of rsswatch itself, by mode.");
	series_d(&w, 0, ",mode=\"user\"", p->recorder_user_s);
	series_d(&w, 0, ",mode=\"system\"", p->recorder_sys_s);
	if (om)
		buf_puts(b, "# EOF\n");
}

void prom_write_agent(struct buf *b, const struct prom_target *t, size_t n,
		      const struct prom_agent *a, int om)
{
	struct pw w = { .b = b, .om = om, .t = t, .n = n };
	write_families(&w);
	fam(&w, "rsswatch_agent_target_up", "gauge",
	    "1 while an instance of the target is recorded, 0 while the agent waits for one.");
	for (size_t i = 0; i < n; i++)
		series_u(&w, i, NULL, (uint64_t)!!t[i].up);
	fam(&w, "rsswatch_agent_target_run", "gauge",
	    "The run id of the target's current (or last) instance in the database; 0 before the first.");
	for (size_t i = 0; i < n; i++)
		series_u(&w, i, NULL, (uint64_t)(t[i].snap.run > 0 ? t[i].snap.run : 0));
	fam(&w, "rsswatch_agent_instances", "counter",
	    "Instances of the target the agent has recorded (each one a run).");
	for (size_t i = 0; i < n; i++)
		series_u(&w, i, NULL, t[i].instances);
	fam(&w, "rsswatch_agent_restarts", "counter",
	    "Instances of the target after its first: restarts seen by the agent.");
	for (size_t i = 0; i < n; i++)
		series_u(&w, i, NULL, t[i].restarts);
	family(b, om, "rsswatch_agent_targets", "gauge", "Targets the agent watches.");
	buf_printf(b, "rsswatch_agent_targets %zu\n", n);
	family(b, om, "rsswatch_agent_cpu_seconds", "counter", "CPU time of the agent itself (all its threads), by mode.");
	buf_printf(b, "rsswatch_agent_cpu_seconds_total{mode=\"user\"} %.15g\n", a->user_s);
	buf_printf(b, "rsswatch_agent_cpu_seconds_total{mode=\"system\"} %.15g\n", a->sys_s);
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
