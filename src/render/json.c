#include "render/json.h"
#include "base/fmt.h"
#include "base/parse.h"
#include "base/utf8.h"
#include "render/procs.h"

#include <string.h>

void json_str(struct buf *b, const char *s)
{
	buf_putc(b, '"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		size_t l = utf8_seq(p);
		if (l == 0) {	/* not UTF-8 (a process may name itself anything) */
			buf_puts(b, "\\ufffd");
			continue;
		}
		if (l > 1) {
			buf_append(b, p, l);
			p += l - 1;
			continue;
		}
		switch (*p) {
		case '"': buf_puts(b, "\\\""); break;
		case '\\': buf_puts(b, "\\\\"); break;
		case '\n': buf_puts(b, "\\n"); break;
		case '\r': buf_puts(b, "\\r"); break;
		case '\t': buf_puts(b, "\\t"); break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				buf_printf(b, "\\u%04x", *p);
			else
				buf_putc(b, (char)*p);
		}
	}
	buf_putc(b, '"');
}

void json_time(struct buf *b, int64_t realtime_ns)
{
	char t[40];
	if (!realtime_ns) {
		buf_puts(b, "null");
		return;
	}
	json_str(b, fmt_iso8601(t, sizeof(t), realtime_ns));
}

static void json_opt_int(struct buf *b, long long v, int present)
{
	if (present)
		buf_printf(b, "%lld", v);
	else
		buf_puts(b, "null");
}

/* ns as seconds to the millisecond (as export writes CPU times), or null when negative
 * (not known). */
static void json_opt_secs(struct buf *b, int64_t ns)
{
	if (ns < 0)
		buf_puts(b, "null");
	else
		buf_printf(b, "%lld.%03lld", (long long)(ns / NS_PER_S),
			   (long long)(ns % NS_PER_S / 1000000));
}

/* A string, or null when it is NULL or empty (a field that was not known). */
static void json_opt_str(struct buf *b, const char *s)
{
	if (s && s[0])
		json_str(b, s);
	else
		buf_puts(b, "null");
}

void json_run(struct buf *b, const struct run *r)
{
	buf_putc(b, '{');
	json_run_fields(b, r);
	buf_putc(b, '}');
}

void json_number(struct buf *b, double v)
{
	if (v == (double)(long long)v && v > -9007199254740992.0 && v < 9007199254740992.0)
		buf_printf(b, "%lld", (long long)v);
	else if (v == v && v - v == 0)	/* finite */
		buf_printf(b, "%.17g", v);
	else
		buf_puts(b, "null");
}

void json_params(struct buf *b, const struct run_param *p, size_t n)
{
	buf_putc(b, '{');
	for (size_t i = 0; i < n; i++) {
		if (i)
			buf_putc(b, ',');
		json_str(b, p[i].key);
		buf_putc(b, ':');
		if (p[i].is_num)
			json_number(b, p[i].num);
		else
			json_str(b, p[i].value);
	}
	buf_putc(b, '}');
}

void json_run_fields(struct buf *b, const struct run *r)
{
	buf_printf(b, "\"id\":%lld,\"label\":", (long long)r->id);
	json_str(b, r->label);
	buf_puts(b, ",\"params\":");
	json_params(b, r->params, r->nparams);
	buf_puts(b, ",\"series\":");
	json_opt_int(b, r->series, r->series > 0);
	buf_puts(b, ",\"host\":");
	json_str(b, r->host);
	buf_puts(b, ",\"kernel\":");
	json_str(b, r->kernel);
	buf_puts(b, ",\"target\":");
	json_str(b, r->target);
	buf_puts(b, ",\"mode\":");
	json_str(b, r->mode);
	buf_printf(b, ",\"pid\":%d,\"started_at\":", (int)r->pid);
	json_time(b, r->started_at);
	buf_puts(b, ",\"ended_at\":");
	json_time(b, r->ended_at);
	buf_printf(b, ",\"duration_s\":%.3f", (double)((r->ended_at ? r->ended_at : r->last_at ? r->last_at : r->started_at) - r->started_at) / NS_PER_S);
	buf_printf(b, ",\"interval_s\":%.6g,\"samples\":%lld,\"outcome\":",
		   (double)r->interval_ns / NS_PER_S, (long long)r->samples);
	json_str(b, r->outcome);
	buf_puts(b, ",\"exit_code\":");
	json_opt_int(b, r->exit_code, r->exit_code >= 0);
	buf_puts(b, ",\"signal\":");
	json_opt_int(b, r->signal, r->signal > 0);
	buf_printf(b, ",\"oom_kills\":%lld", (long long)r->oom_kills);
	buf_printf(b, ",\"peak_rss_bytes\":%llu,\"peak_rss_at\":", (unsigned long long)r->peak_rss);
	json_time(b, r->peak_rss_at);
	buf_puts(b, ",\"peak_source\":");
	json_opt_str(b, r->peak_source);
	buf_puts(b, ",\"hwm_before_bytes\":");
	json_opt_int(b, r->hwm_before, r->hwm_before >= 0);
	buf_puts(b, ",\"cgroup_peak_before_bytes\":");
	json_opt_int(b, (long long)r->cgroup_peak_before, r->cgroup_peak_before > 0);
	int largest = r->peak_process_pid > 0;
	buf_puts(b, ",\"peak_process_rss_bytes\":");
	json_opt_int(b, (long long)r->peak_process_rss, largest);
	buf_puts(b, ",\"peak_process_pid\":");
	json_opt_int(b, r->peak_process_pid, largest);
	buf_puts(b, ",\"peak_process_comm\":");
	json_opt_str(b, largest ? r->peak_process_comm : NULL);
	buf_printf(b, ",\"exit_records\":%s", r->exit_records ? "true" : "false");
	buf_printf(b, ",\"mean_rss_bytes\":%.0f,\"last_rss_bytes\":%llu,\"peak_gpu_bytes\":",
		   run_mean_rss(r), (unsigned long long)r->last_rss);
	json_opt_int(b, r->peak_gpu, r->peak_gpu >= 0);
	buf_printf(b, ",\"mem_total_bytes\":%llu", (unsigned long long)r->mem_total);
	buf_puts(b, ",\"outcome_note\":");
	json_str(b, r->outcome_note ? r->outcome_note : "");
	buf_puts(b, ",\"cgroup\":");
	json_opt_str(b, r->cgroup);
	buf_puts(b, ",\"cgroup_limit_bytes\":");
	json_opt_int(b, (long long)r->cgroup_limit, r->cgroup_limit != 0);
	buf_puts(b, ",\"peak_cgroup_bytes\":");
	json_opt_int(b, (long long)r->peak_cgroup, r->peak_cgroup != 0);
	buf_printf(b, ",\"peak_cgroup_exact\":%s",
		   r->peak_cgroup && r->peak_cgroup_exact ? "true" : "false");
	/* the smallest time to exhaustion projected while recording (record/eta.h) */
	int eta = r->min_eta_limit[0] != '\0';
	buf_puts(b, ",\"min_eta_s\":");
	if (eta)
		buf_printf(b, "%.1f", (double)r->min_eta_ns / NS_PER_S);
	else
		buf_puts(b, "null");
	buf_puts(b, ",\"min_eta_at\":");
	json_time(b, eta ? r->min_eta_at : 0);
	buf_puts(b, ",\"min_eta_limit\":");
	json_opt_str(b, eta ? r->min_eta_limit : NULL);
}

/* One kill: what the kernel said, figures in bytes (0 where its line lacked them). */
static void json_kill(struct buf *b, const struct run *r, const struct oom_kill *k)
{
	buf_printf(b, "{\"pid\":%d,\"comm\":", (int)k->pid);
	json_str(b, k->comm);
	buf_puts(b, ",\"time\":");
	json_time(b, k->t);
	buf_printf(b, ",\"elapsed_s\":%.3f", (double)(k->t - r->started_at) / NS_PER_S);
	buf_printf(b, ",\"anon_rss_bytes\":%llu,\"file_rss_bytes\":%llu,\"shmem_rss_bytes\":%llu,"
		      "\"total_vm_bytes\":%llu,\"memcg\":", (unsigned long long)k->anon_rss,
		   (unsigned long long)k->file_rss, (unsigned long long)k->shmem_rss,
		   (unsigned long long)k->total_vm);
	json_opt_str(b, k->memcg);
	buf_putc(b, '}');
}

void json_oom_kills(struct buf *b, const struct run *r, const struct oom_kill *k, size_t n)
{
	buf_putc(b, '[');
	for (size_t i = 0; i < n; i++) {
		if (i)
			buf_putc(b, ',');
		json_kill(b, r, &k[i]);
	}
	if (!n && r->oom_at) {
		/* A run recorded before kills had their own table (schema 8): the target's
		 * kill from the run's own fields; the rest was not kept. */
		buf_printf(b, "{\"pid\":%d,\"comm\":null,\"time\":", (int)r->pid);
		json_time(b, r->oom_at);
		buf_printf(b, ",\"elapsed_s\":%.3f,\"anon_rss_bytes\":",
			   (double)(r->oom_at - r->started_at) / NS_PER_S);
		json_opt_int(b, (long long)r->oom_anon_rss, r->oom_rss_known);
		buf_puts(b, ",\"file_rss_bytes\":null,\"shmem_rss_bytes\":null,"
			    "\"total_vm_bytes\":null,\"memcg\":");
		json_opt_str(b, r->oom_memcg);
		buf_putc(b, '}');
	}
	buf_putc(b, ']');
}

void json_processes(struct buf *b, const struct proc_summary *p, size_t n)
{
	buf_putc(b, '[');
	for (size_t i = 0; i < n; i++) {
		buf_printf(b, "%s{\"pid\":%d,\"ppid\":%d,\"comm\":", i ? "," : "", (int)p[i].pid,
			   (int)p[i].ppid);
		json_str(b, p[i].comm);
		buf_printf(b, ",\"started_s\":%.3f,\"ended_s\":", (double)p[i].first_ns / NS_PER_S);
		if (p[i].end_ns >= 0)
			buf_printf(b, "%.3f", (double)p[i].end_ns / NS_PER_S);
		else
			buf_puts(b, "null");
		buf_printf(b, ",\"peak_rss_bytes\":%llu,\"peak_exact\":%s,\"peak_source\":",
			   (unsigned long long)p[i].peak_rss,
			   peak_is_exact(p[i].peak_source) ? "true" : "false");
		json_opt_str(b, p[i].peak_source);
		buf_puts(b, ",\"hwm_before_bytes\":");
		json_opt_int(b, p[i].hwm_before, p[i].hwm_before >= 0);
		buf_puts(b, ",\"ended\":");
		json_opt_str(b, p[i].ended);
		buf_puts(b, ",\"exit_code\":");
		json_opt_int(b, p[i].exit_code, p[i].exit_code >= 0);
		buf_puts(b, ",\"signal\":");
		json_opt_int(b, p[i].signal, p[i].signal > 0);
		buf_puts(b, ",\"cpu_user_s\":");
		json_opt_secs(b, p[i].cpu_user_ns);
		buf_puts(b, ",\"cpu_sys_s\":");
		json_opt_secs(b, p[i].cpu_sys_ns);
		buf_puts(b, ",\"minflt\":");
		json_opt_int(b, p[i].minflt, p[i].minflt >= 0);
		buf_puts(b, ",\"majflt\":");
		json_opt_int(b, p[i].majflt, p[i].majflt >= 0);
		buf_puts(b, ",\"read_bytes\":");
		json_opt_int(b, p[i].read_bytes, p[i].read_bytes >= 0);
		buf_puts(b, ",\"write_bytes\":");
		json_opt_int(b, p[i].write_bytes, p[i].write_bytes >= 0);
		buf_putc(b, '}');
	}
	buf_putc(b, ']');
}
