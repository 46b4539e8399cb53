#include "render/live.h"
#include "base/fmt.h"
#include "base/parse.h"
#include "render/counters.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

void live_line(struct buf *b, int64_t realtime_ns, const struct sample *s)
{
	char t[16], rss[32], hwm[32], avail[32], anon[16], file[16], shmem[16];
	enum unit u = unit_for(s->mem.rss);
	if (u == UNIT_B)
		u = UNIT_KIB;
	buf_printf(b, "%s rss %s %s (anon %s, file %s, shmem %s) hwm %s",
		   fmt_hms(t, sizeof(t), realtime_ns),
		   fmt_in_unit(rss, sizeof(rss), s->mem.rss, u), unit_name(u),
		   fmt_in_unit(anon, sizeof(anon), s->mem.anon, u),
		   fmt_in_unit(file, sizeof(file), s->mem.file, u),
		   fmt_in_unit(shmem, sizeof(shmem), s->mem.shmem, u),
		   fmt_bytes(hwm, sizeof(hwm), s->mem.hwm));
	if (s->mem.swap)
		buf_printf(b, " swap %s", fmt_bytes(avail, sizeof(avail), s->mem.swap));
	if (s->have & SAMPLE_PSS) {
		buf_printf(b, " pss %s", fmt_bytes(avail, sizeof(avail), s->pss));
		buf_printf(b, " uss %s", fmt_bytes(avail, sizeof(avail), s->uss));
	}
	if (s->have & SAMPLE_GPU)
		buf_printf(b, " gpu %s", fmt_bytes(avail, sizeof(avail), s->gpu));
	if (s->have & SAMPLE_CGROUP) {
		/* "cg 60.1/64.0 MiB": usage and limit in the unit of the limit */
		uint64_t top = s->cgroup_limit && s->cgroup_limit != UINT64_MAX ? s->cgroup_limit
										 : s->cgroup;
		enum unit cu = unit_for(top);
		if (cu == UNIT_B)
			cu = UNIT_KIB;
		buf_printf(b, " cg %s", fmt_in_unit(anon, sizeof(anon), s->cgroup, cu));
		if (s->cgroup_limit && s->cgroup_limit != UINT64_MAX)
			buf_printf(b, "/%s", fmt_in_unit(file, sizeof(file), s->cgroup_limit, cu));
		buf_printf(b, " %s", unit_name(cu));
	}
	buf_printf(b, " avail %s", fmt_bytes(avail, sizeof(avail), s->mem_available));
}

void live_eta(struct buf *b, double eta_s, const char *limit)
{
	char d[32];
	if (eta_s < 0)
		return;
	double ns = eta_s * NS_PER_S;
	buf_printf(b, ", full in ~%s (%s)", fmt_duration(d, sizeof(d), ns > 9e18 ? INT64_MAX : (int64_t)ns),
		   limit);
}

void live_context(struct buf *b, const struct sample *prev, const struct sample *s)
{
	if (!(prev->have & s->have & SAMPLE_CPU) || s->elapsed_ns <= prev->elapsed_ns)
		return;
	double dt = (double)(s->elapsed_ns - prev->elapsed_ns);
	uint64_t cpu = s->cpu_user_ns + s->cpu_sys_ns, cpu0 = prev->cpu_user_ns + prev->cpu_sys_ns;
	double pct = cpu > cpu0 ? (double)(cpu - cpu0) * 100.0 / dt : 0;
	double maj = s->majflt > prev->majflt ? (double)(s->majflt - prev->majflt) * NS_PER_S / dt : 0;
	if (dt >= LIVE_CPU_MIN_NS)
		buf_printf(b, " cpu %.0f%%", pct);
	buf_printf(b, " majflt %.0f/s", maj);
}

void live_counter(struct buf *b, const char *name, long long value)
{
	char v[48];
	buf_put_printable(b, name);
	buf_printf(b, "=%s", counter_value_text(v, sizeof(v), name, value));
}

const char *signal_name(int sig, char *buf, size_t n)
{
	const char *abbrev = sigabbrev_np(sig);
	if (abbrev)
		snprintf(buf, n, "SIG%s", abbrev);
	else
		snprintf(buf, n, "signal %d", sig);
	return buf;
}

/* "killed by the OOM killer (memory cgroup /x) at 02:25:07, anon-rss 629.6 GiB; peak
 * 666.4 GiB at 02:24:19": what the kernel said, then the run's peak beside it. */
static void oom_words(struct buf *b, const struct run *r)
{
	char t[16], v[32];
	buf_puts(b, "killed by the OOM killer");
	if (r->oom_memcg && r->oom_memcg[0]) {
		buf_puts(b, " (memory cgroup ");	/* its name is whoever made it chose */
		buf_put_printable(b, r->oom_memcg);
		buf_putc(b, ')');
	}
	if (r->oom_at)
		buf_printf(b, " at %s", fmt_hms(t, sizeof(t), r->oom_at));
	if (r->oom_rss_known)
		buf_printf(b, ", anon-rss %s", fmt_bytes(v, sizeof(v), r->oom_anon_rss));
	if (r->outcome_note && r->outcome_note[0])
		buf_printf(b, "; %s", r->outcome_note);
	if (r->samples && r->peak_rss_at)
		buf_printf(b, "; peak %s at %s", fmt_bytes(v, sizeof(v), r->peak_rss),
			   fmt_hms(t, sizeof(t), r->peak_rss_at));
}

void outcome_short(struct buf *b, const struct run *r)
{
	char sig[32];
	if (strcmp(r->outcome, OUTCOME_OOM_KILLED) == 0)
		buf_puts(b, "killed by the OOM killer");
	else if (strcmp(r->outcome, OUTCOME_EXITED) == 0 && r->exit_code >= 0)
		buf_printf(b, "exited with %d", r->exit_code);
	else if (strcmp(r->outcome, OUTCOME_EXITED) == 0)
		buf_puts(b, "exited");
	else if (strcmp(r->outcome, OUTCOME_SIGNALED) == 0)
		buf_printf(b, "killed by %s", signal_name(r->signal, sig, sizeof(sig)));
	else if (strcmp(r->outcome, OUTCOME_STOPPED) == 0)
		buf_puts(b, "still running (recording stopped)");
	else if (strcmp(r->outcome, OUTCOME_INTERRUPTED) == 0)
		buf_puts(b, "recording interrupted");
	else if (strcmp(r->outcome, OUTCOME_RUNNING) == 0)
		buf_puts(b, "recording");
	else
		buf_puts(b, r->outcome);
}

void outcome_words(struct buf *b, const struct run *r)
{
	char sig[32];
	if (strcmp(r->outcome, OUTCOME_OOM_KILLED) == 0) {
		oom_words(b, r);
		return;
	}
	if (strcmp(r->outcome, OUTCOME_EXITED) == 0 && r->exit_code < 0 && r->outcome_note &&
	    r->outcome_note[0]) {
		buf_puts(b, r->outcome_note);	/* -g: "the cgroup became empty" */
		return;
	}
	if (strcmp(r->outcome, OUTCOME_EXITED) == 0) {
		if (r->exit_code >= 0)
			buf_printf(b, "exited with %d", r->exit_code);
		else
			buf_puts(b, "exited (status not known: its parent had not reaped it)");
	} else if (strcmp(r->outcome, OUTCOME_SIGNALED) == 0) {
		buf_printf(b, "killed by %s", signal_name(r->signal, sig, sizeof(sig)));
	} else if (strcmp(r->outcome, OUTCOME_STOPPED) == 0) {
		buf_puts(b, "still running (recording stopped)");
	} else if (strcmp(r->outcome, OUTCOME_INTERRUPTED) == 0) {
		buf_puts(b, "recording interrupted (the recorder ended without finishing it)");
	} else if (strcmp(r->outcome, OUTCOME_RUNNING) == 0) {
		buf_puts(b, "recording");
	} else {
		buf_puts(b, r->outcome);
	}
	/* What the evidence said when it was partial (a SIGKILL with OOM kills counted
	 * meanwhile and no kernel log readable, ...). */
	if (r->outcome_note && r->outcome_note[0])
		buf_printf(b, "; %s", r->outcome_note);
}
