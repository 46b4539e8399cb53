#include "render/summary.h"
#include "base/fmt.h"
#include "render/live.h"
#include "render/procs.h"

#include <string.h>

/* Who the run was: its id and label, parameters, target (a set's totals noted), when it
 * started, for how long and how often it sampled. */
static void summary_head(struct buf *b, const struct run *r)
{
	char a[48], c[48], d[48];
	int64_t end = r->ended_at ? r->ended_at : r->last_at ? r->last_at : r->started_at;
	buf_printf(b, "run       %lld", (long long)r->id);
	if (r->label[0]) {
		buf_puts(b, "  \"");
		buf_put_printable(b, r->label);
		buf_putc(b, '"');
	}
	if (r->series > 0)	/* record --follow: RUN "sID" is the series' last run */
		buf_printf(b, "  (series s%lld)", (long long)r->series);
	buf_putc(b, '\n');
	if (r->nparams) {
		buf_puts(b, "params   ");
		params_text(b, r->params, r->nparams);
		buf_putc(b, '\n');
	}
	int cgroup_mode = r->mode && strcmp(r->mode, "cgroup") == 0;
	buf_puts(b, cgroup_mode ? "target    memory cgroup " : "target    ");
	buf_put_printable(b, r->target);
	if (cgroup_mode)
		buf_puts(b, " (every process in it");
	else
		buf_printf(b, " (pid %d%s", (int)r->pid, r->tree ? " and its descendants" : "");
	if (r->host[0])
		buf_printf(b, " on %s", r->host);
	buf_puts(b, ")\n");
	if ((cgroup_mode || r->tree) && r->pss_interval_ns)
		buf_puts(b, "note      RSS is summed over the processes: pages they share count once "
			    "per process; PSS is available (--pss): it splits shared pages among "
			    "them, so its sum counts them once\n");
	else if (cgroup_mode || r->tree)
		buf_puts(b, "note      RSS is summed over the processes: pages they share count once "
			    "per process\n");
	buf_printf(b, "started   %s, ran %s, %lld sample%s every %s\n",
		   fmt_datetime(a, sizeof(a), r->started_at),
		   fmt_duration(c, sizeof(c), end - r->started_at), (long long)r->samples,
		   r->samples == 1 ? "" : "s",
		   fmt_duration(d, sizeof(d), r->interval_ns));
}

/* The run's peak is the eBPF engine's (its time is the kernel's). */
static int from_engine(const struct run *r)
{
	return r->peak_source && strcmp(r->peak_source, PEAK_FROM_PAGES) == 0;
}

/* The run's peak (where it came from, and the highest sample when the peak is above
 * it), an older peak above it, a set's largest process, and whether a set's peaks are
 * exact. */

static void summary_peaks(struct buf *b, const struct run *r, uint64_t max_sampled_rss)
{
	char a[48], c[48], d[48];
	int set = run_is_set(r);
	if (r->samples && !r->peak_rss_at) {
		/* a command killed while its exec loaded: no source had a figure of it */
		buf_puts(b, "peak      not known: no figure of its memory reached the recorder\n");
	} else if (r->samples) {
		/* the kernel's time is worth its milliseconds; a sample's is not */
		if (from_engine(r))
			buf_printf(b, "peak      %s at %s (+%.3fs)", fmt_bytes(a, sizeof(a), r->peak_rss),
				   fmt_hms_ms(c, sizeof(c), r->peak_rss_at),
				   (double)(r->peak_rss_at - r->started_at) / 1e9);
		else
			buf_printf(b, "peak      %s at %s (+%s)", fmt_bytes(a, sizeof(a), r->peak_rss),
				   fmt_hms(c, sizeof(c), r->peak_rss_at),
				   fmt_duration(d, sizeof(d), r->peak_rss_at - r->started_at));
		const char *from = run_peak_from(r, max_sampled_rss);
		if (from)
			buf_printf(b, ", %s", from);
		if (max_sampled_rss && r->peak_rss > max_sampled_rss)
			buf_printf(b, "; the highest sampled %s was %s", set ? "total" : "RSS",
				   fmt_bytes(a, sizeof(a), max_sampled_rss));
		buf_putc(b, '\n');
	}
	/* only an old peak above the run's own is worth a line */
	if (r->hwm_before >= 0 && (uint64_t)r->hwm_before > r->peak_rss) {
		buf_printf(b, "earlier   peak %s before recording (VmHWM when attached; not part of "
			      "this run)\n", fmt_bytes(a, sizeof(a), (uint64_t)r->hwm_before));
		/* VmHWM stays at the old peak: a rise and fall between two samples below it
		 * leaves no trace in /proc */
		if (run_blind_below_hwm(r))
			buf_printf(b, "blind     peaks between samples below the earlier %s high-water "
				      "mark cannot be seen; --reset-peak makes them visible (it also "
				      "lowers the target's own ru_maxrss)\n",
				   fmt_bytes(a, sizeof(a), (uint64_t)r->hwm_before));
	}
	if (set && r->peak_process_pid > 0) {
		buf_puts(b, "largest   ");
		buf_put_printable(b, r->peak_process_comm && r->peak_process_comm[0] ?
					     r->peak_process_comm : "?");
		buf_printf(b, " (pid %d), peak %s", (int)r->peak_process_pid,
			   fmt_bytes(a, sizeof(a), r->peak_process_rss));
		/* wait4 gives the tree's largest process's peak, but not whose it was */
		if (r->peak_source && strcmp(r->peak_source, PEAK_FROM_WAIT) == 0 &&
		    r->peak_rss > r->peak_process_rss)
			buf_printf(b, " as sampled; the %s from wait4 is a process of the tree "
				      "not sampled at its height (exit records, as root, say which)",
				   fmt_bytes(c, sizeof(c), r->peak_rss));
		buf_putc(b, '\n');
	}
	if (set && !r->exit_records && r->samples)
		buf_puts(b, "note      peaks of processes that ended between samples are sampled only "
			    "(not exact)\n");
}

/* The other figures of a run with samples: GPU and cgroup peaks, the smallest time to
 * exhaustion projected, the mean and the last RSS. */
static void summary_figures(struct buf *b, const struct run *r)
{
	char a[48], c[48], d[48];
	/* GPUs watched (NVML), none of their memory used: no peak to time */
	if (r->peak_gpu == 0)
		buf_puts(b, "gpu       no GPU memory used\n");
	else if (r->peak_gpu > 0 && r->peak_gpu_source &&
		 strcmp(r->peak_gpu_source, GPU_FROM_PROBES) == 0)
		/* the probes' time is the kernel's: worth its milliseconds */
		buf_printf(b, "gpu peak  %s at %s (+%.3fs), from the driver's allocations\n",
			   fmt_bytes(a, sizeof(a), (uint64_t)r->peak_gpu),
			   fmt_hms_ms(c, sizeof(c), r->peak_gpu_at),
			   (double)(r->peak_gpu_at - r->started_at) / 1e9);
	else if (r->peak_gpu > 0)
		buf_printf(b, "gpu peak  %s at %s (+%s)\n", fmt_bytes(a, sizeof(a), (uint64_t)r->peak_gpu),
			   fmt_hms(c, sizeof(c), r->peak_gpu_at),
			   fmt_duration(d, sizeof(d), r->peak_gpu_at - r->started_at));
	if (r->peak_cgroup) {
		buf_printf(b, "cgroup    peak %s", fmt_bytes(a, sizeof(a), r->peak_cgroup));
		if (r->cgroup_limit)
			buf_printf(b, " of a %s limit", fmt_bytes(c, sizeof(c), r->cgroup_limit));
		buf_printf(b, " at %s (", fmt_hms(d, sizeof(d), r->peak_cgroup_at));
		buf_put_printable(b, r->cgroup ? r->cgroup : "");
		buf_printf(b, "), %s\n", r->peak_cgroup_exact ? "the cgroup's own peak"
							  : "the highest usage sampled");
	}
	/* The kernel's peak file of a cgroup recorded with -g may hold its whole history. */
	if (r->cgroup_peak_before)
		buf_printf(b, "earlier   cgroup peak %s before recording (the kernel's all-time "
			      "figure, covering more than this run)\n",
			   fmt_bytes(a, sizeof(a), r->cgroup_peak_before));
	if (r->min_eta_limit[0])
		buf_printf(b, "eta       smallest projection: full in ~%s (%s) at %s (+%s)\n",
			   fmt_duration(a, sizeof(a), r->min_eta_ns),
			   strcmp(r->min_eta_limit, "cgroup") == 0 ? "cgroup limit" : "MemAvailable",
			   fmt_hms(c, sizeof(c), r->min_eta_at),
			   fmt_duration(d, sizeof(d), r->min_eta_at - r->started_at));
	buf_printf(b, "mean      %s, last %s\n",
		   fmt_bytes(a, sizeof(a), (uint64_t)run_mean_rss(r)),
		   fmt_bytes(c, sizeof(c), r->last_rss));
}

void summary_text(struct buf *b, const struct run *r, uint64_t max_sampled_rss,
		  const struct oom_kill *kills, size_t nkills)
{
	summary_head(b, r);
	summary_peaks(b, r, max_sampled_rss);
	if (r->samples)
		summary_figures(b, r);
	buf_puts(b, "outcome   ");
	outcome_words(b, r);
	struct buf k = { 0 };
	oom_kills_words(&k, r, kills, nkills);
	if (k.len)
		buf_printf(b, "; %s", buf_str(&k));
	buf_release(&k);
	buf_putc(b, '\n');
}

void params_text(struct buf *b, const struct run_param *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		buf_printf(b, " %s=", p[i].key);
		buf_put_printable(b, p[i].value);
	}
}
