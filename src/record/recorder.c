#include "record/recorder_int.h"
#include "base/clock.h"
#include "base/fmt.h"
#include "base/parse.h"
#include "base/sysroot.h"
#include "base/util.h"
#include "record/gpus.h"
#include "record/target.h"

#include <linux/acct.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

int recorder_alive(const struct run *r)
{
	char boot[64];
	struct proc_stat ps;
	if (proc_read_boot_id(boot, sizeof(boot)) < 0 || strcmp(boot, r->boot_id) != 0)
		return 0;
	if (proc_read_stat(r->recorder_pid, &ps) < 0)
		return 0;
	return ps.starttime == r->recorder_start && ps.state != 'Z';
}

void recorder_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
}

/* A line for the sink (recorder.h); nothing without one. */
void rec_say(const struct recorder *rc, enum recorder_note kind, const char *fmt, ...)
{
	const struct recorder_sink *k = rc->opts->sink;
	char text[1024];
	va_list ap;
	if (!k || !k->note)
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	k->note(k->ctx, kind, text);
}

/* Words for a store error. */
static const char *store_words(struct recorder *rc, int e)
{
	return e == -ENOSPC ? "disk full" : e == -EBUSY ? "the database is locked by another "
							  "process" : store_errmsg(rc->st);
}

static void flush(struct recorder *rc)
{
	int e = store_flush(rc->st, rc->run);
	if (e < 0 && e != rc->store_error)
		rec_say(rc, RECORDER_NOTE, "rsswatch: cannot write to the database yet (%s); "
			"sampling goes on, the samples wait in memory (bounded: past about 30,000 "
			"the higher of each two is kept) and are written once it works again",
			store_words(rc, e));
	else if (e == 0 && rc->store_error < 0)
		rec_say(rc, RECORDER_NOTE, "rsswatch: writing to the database again");
	rc->store_error = e;
	rc->last_flush = mono_ns();
}

/* Memory near a limit: the cgroup's (90%), or the host's (5% available). */
static int near_limit(const struct recorder *rc, const struct sample *s)
{
	if (rc->warned)
		return 1;
	if ((s->have & SAMPLE_CGROUP) && s->cgroup_limit && s->cgroup_limit != CG_UNLIMITED &&
	    s->cgroup >= s->cgroup_limit / 10 * 9)
		return 1;
	return rc->run->mem_total && s->mem_available < rc->run->mem_total / 20;
}

/* --reset-peak: restarts the target's VmHWM (clear_refs 5), after noting its value. */
static void reset_hwm(struct recorder *rc)
{
	struct proc_status st;
	char path[64];
	if (proc_reader_read(&rc->sampler.proc, &st) < 0 ||
	    sysroot_path(path, sizeof(path), "/proc/%d/clear_refs", (int)rc->target->pid) < 0)
		return;
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return;
	if (write(fd, "5", 1) == 1)
		rc->hwm_reset_from = st.mem.hwm ? st.mem.hwm : 1;
	close(fd);
	proc_reader_invalidate(&rc->sampler.proc);
}

/* Sampling far behind its interval: a recorder starved of CPU, stalled, or slowed by
 * what it reads. The timer's expirations (ticks: how many since the last read, missed
 * ones included) are counted against the samples taken; a window of at least
 * BEHIND_WINDOW_NS and BEHIND_WINDOW_TICKS intervals with fewer than a quarter of
 * the samples asked is said once, in one line and one event, so that a collapse is
 * never silent. */
static void check_pace(struct recorder *rc, uint64_t ticks, int64_t now)
{
	int64_t window = BEHIND_WINDOW_TICKS * rc->opts->interval_ns;
	if (window < BEHIND_WINDOW_NS)
		window = BEHIND_WINDOW_NS;
	rc->pace_due += ticks ? ticks : 1;
	rc->pace_taken++;
	if (now - rc->pace_since < window)
		return;
	if (!rc->behind_said && rc->pace_taken * 4 < rc->pace_due) {
		char every[32], detail[128];
		double secs = (double)(now - rc->pace_since) / NS_PER_S;
		rc->behind_said = 1;
		fmt_duration(every, sizeof(every), rc->opts->interval_ns);
		rec_say(rc, RECORDER_NOTE, "rsswatch: warning: sampling fell behind: %llu samples "
			"in %.1fs where %llu were asked (every %s); the recorder is starved of CPU "
			"or stalled, and the run has gaps", (unsigned long long)rc->pace_taken, secs,
			(unsigned long long)rc->pace_due, every);
		snprintf(detail, sizeof(detail), "asked=%llu taken=%llu window_ms=%lld",
			 (unsigned long long)rc->pace_due, (unsigned long long)rc->pace_taken,
			 (long long)((now - rc->pace_since) / NS_PER_MS));
		store_add_event(rc->st, rc->run->id, real_ns(), "sampling_behind",
				rc->target->pid, detail);
	}
	rc->pace_due = rc->pace_taken = 0;
	rc->pace_since = now;
}

/* --warn: a warning ends when memory falls below this share of the threshold. */
#define WARN_REARM_PCT 90

/* Runs the user's command for an event, if there is one (record/hooks.h). comm NULL:
 * the target's name. */
void rec_fire_hook(struct recorder *rc, const char *event, pid_t pid, const char *comm,
		   uint64_t rss)
{
	if (!comm && rc->root >= 0)
		comm = rc->log.p[rc->root].comm;
	struct hook_facts f = { rc->run->id, pid, rss, rc->run->cgroup_limit, comm };
	hooks_fire(rc->opts->hooks, rc->st, event, &f);
}

/* --listen: the sample, the run's totals and the application's counters, for scrapes. */
static void publish(struct recorder *rc, const struct sample *s)
{
	struct prom_snapshot p;
	memset(&p, 0, sizeof(p));
	p.have_sample = 1;
	p.run = rc->run->id;
	p.pid = rc->target->pid;
	if (rc->root >= 0)
		strlcpy_rsw(p.comm, rc->log.p[rc->root].comm, sizeof(p.comm));
	p.s = *s;
	p.high_water = rc->run->peak_rss;
	p.cgroup_peak = rc->run->peak_cgroup;
	p.samples = rc->run->samples;
	p.oom_kills = rc->run->oom_kills;
	p.samples_dropped = (int64_t)store_lost(rc->st).samples_merged;
	p.sample_cost_s = (double)(mono_ns() - rc->start_mono - s->elapsed_ns) / NS_PER_S;
	if (rc->eta.now.have) {
		strlcpy_rsw(p.eta_limit, eta_limit_key(rc->eta.now.limit), sizeof(p.eta_limit));
		p.eta_s = rc->eta.now.eta_s;
	}
	for (size_t i = 0; i < rc->ncounters && i < PROM_COUNTERS_MAX; i++, p.ncounters++) {
		strlcpy_rsw(p.counters[i].name, rc->counters[i].name, sizeof(p.counters[i].name));
		p.counters[i].value = rc->counters[i].value;
		p.counters[i].is_gauge = rc->counters[i].is_gauge;
	}
	metrics_server_update(rc->opts->metrics, &p);
}

/* --warn: an event and a line each time memory crosses the threshold, either way. */
static void check_warn(struct recorder *rc, const struct sample *s, int64_t t)
{
	const struct record_opts *o = rc->opts;
	char v[32], th[32], hms[16], why[64] = "";
	if (!o->warn_bytes && o->warn_pct <= 0)
		return;
	if (!rc->warn_at) {
		if (o->warn_bytes) {
			rc->warn_at = o->warn_bytes;
		} else if ((s->have & SAMPLE_CGROUP) && s->cgroup_limit && s->cgroup_limit != CG_UNLIMITED) {
			rc->warn_at = (uint64_t)((double)s->cgroup_limit * o->warn_pct / 100.0);
			rc->warn_cgroup = 1;
		} else if (rc->run->mem_total) {
			rc->warn_at = (uint64_t)((double)rc->run->mem_total * o->warn_pct / 100.0);
		}
		if (!rc->warn_at)
			return;
	}
	if (o->warn_pct > 0)
		snprintf(why, sizeof(why), " (%g%% of %s)", o->warn_pct,
			 rc->warn_cgroup ? "the cgroup limit" : "MemTotal");
	uint64_t cur = rc->warn_cgroup ? s->cgroup : s->mem.rss;
	const char *what = rc->warn_cgroup ? "cgroup usage" : "rss";
	/* Hysteresis: once over, back under only below WARN_REARM_PCT of the threshold,
	 * so that a target hovering around it makes one warn, not one per sample. */
	int above = rc->warned ? cur >= rc->warn_at / 100 * WARN_REARM_PCT : cur >= rc->warn_at;
	if (above == rc->warned)
		return;
	rc->warned = above;
	char detail[192];
	snprintf(detail, sizeof(detail), "%s %s %s %s%s", what, fmt_bytes(v, sizeof(v), cur),
		 above ? ">=" : "<", fmt_bytes(th, sizeof(th), rc->warn_at), why);
	store_add_event(rc->st, rc->run->id, t, above ? "warn" : "warn_clear", rc->target->pid, detail);
	if (above)
		rec_fire_hook(rc, "warn", rc->target->pid, NULL, cur);
	if (!o->quiet)
		rec_say(rc, above ? RECORDER_ALERT : RECORDER_NOTE, "%s %s: %s",
			fmt_hms(hms, sizeof(hms), t), above ? "WARNING memory over the threshold"
							: "memory back under the threshold", detail);
}

/* --pss, when a read is due: says once what a read costs a large target, then reads.
 * Errors are said once; PSS is then off for the rest of the run. */
static void read_pss(struct recorder *rc, int64_t now, struct sample *s)
{
	char v[32], ms[32];
	const char *who = rc->set_open ? "the processes" : "the target";
	if (!rc->pss_warned && s->mem.rss > PSS_WARN_RSS) {
		rc->pss_warned = 1;
		double gib = (double)s->mem.rss / (double)(1ULL << 30);
		rec_say(rc, RECORDER_NOTE, "rsswatch: warning: %s hold%s %s resident: each PSS "
			"read (smaps_rollup) costs about 9 ms per GiB (about %.0f ms here) and "
			"stalls %s mmap/munmap calls while it runs; reading it at most every %s",
			who, rc->set_open ? "" : "s", fmt_bytes(v, sizeof(v), s->mem.rss), gib * 9.0,
			rc->set_open ? "their" : "its",
			fmt_duration(ms, sizeof(ms), rc->opts->pss_interval_ns));
	}
	int e = sampler_read_pss(&rc->sampler, now, s);
	if (rc->pss_said || !rc->opts->sink)
		return;
	if (e < 0 && e != -ESRCH) {
		rc->pss_said = 1;
		rec_say(rc, RECORDER_NOTE, "rsswatch: cannot read the PSS of %s: %s%s; recording "
			"without it", who, errstr(e), e == -EACCES || e == -EPERM ? " "
			"(smaps_rollup needs ptrace-read permission on the process)" : "");
	} else if (e == 0 && rc->sampler.pss_nfailed) {
		rc->pss_said = 1;
		rec_say(rc, RECORDER_NOTE, "rsswatch: cannot read the PSS of %zu of the processes "
			"(%s): the PSS sum leaves them out", rc->sampler.pss_nfailed,
			errstr(rc->sampler.pss_err));
	}
}

/* Offers a figure for the run's peak (at CLOCK_REALTIME t). An exact figure equal to
 * a sampled peak confirms it: its source changes, not its time. */
void rec_run_peak(struct recorder *rc, uint64_t bytes, int64_t t, const char *source)
{
	struct run *r = rc->run;
	int confirms = peak_confirms(r->peak_rss, r->peak_source, bytes, source);
	if (bytes <= r->peak_rss && !confirms)
		return;
	if (!confirms) {
		r->peak_rss = bytes;
		r->peak_rss_at = t;
	}
	free(r->peak_source);
	r->peak_source = xstrdup(source);
}

void rec_kernel_peak(struct recorder *rc)
{
	struct kpeak_figures f;
	struct run *r = rc->run;
	if (!rc->kpeak)
		return;
	kpeak_read(rc->kpeak, &f);
	if (!f.peak || f.peak < r->peak_rss ||
	    (f.peak == r->peak_rss && r->peak_source &&
	     strcmp(r->peak_source, PEAK_FROM_PAGES) == 0))
		return;
	r->peak_rss = f.peak;
	r->peak_rss_at = f.peak_at + rc->real_off;
	free(r->peak_source);
	r->peak_source = xstrdup(PEAK_FROM_PAGES);
}

/* Offers a figure for process i's peak, and so for the run's: over a set, the run's
 * peak is never below the largest member's. */
void rec_proc_peak(struct recorder *rc, size_t i, uint64_t bytes, int64_t t, const char *source)
{
	uint64_t p = proclog_offer(&rc->log, i, bytes, source);
	if (p)
		rec_run_peak(rc, p, t, source);
}

/* A single process's own entry in the log: found at its first sample, its name as
 * it is now (it changes at exec), and its peak from the sample and from VmHWM. */
static void track_target(struct recorder *rc, const struct sample *s, int64_t t)
{
	struct run *r = rc->run;
	if (rc->root < 0) {
		struct proc_status st;
		memset(&st, 0, sizeof(st));
		st.ppid = rc->sampler.ppid;
		strlcpy_rsw(st.name, rc->sampler.name, sizeof(st.name));
		st.mem.hwm = s->mem.hwm;
		rc->root = (long)rec_proc_seen(rc, rc->target->pid, &st, s->elapsed_ns);
		if (rc->log.p[rc->root].hwm_before >= 0)
			r->hwm_before = rc->log.p[rc->root].hwm_before;
	}
	strlcpy_rsw(rc->log.p[rc->root].comm, rc->sampler.name, sizeof(rc->log.p[rc->root].comm));
	rec_proc_peak(rc, (size_t)rc->root, s->mem.rss, t, PEAK_FROM_SAMPLE);
	rec_proc_peak(rc, (size_t)rc->root, s->mem.hwm, t, PEAK_FROM_HWM);
}

/* At the target's first GPU use (the driver is mapped by then), the GPU probes go on
 * the libcuda.so it maps too, where that is not a file they are on (a command that
 * loads its own driver, not the one beside NVML), and from then on count. A driver
 * that names the process before it maps the library (a busy start) is looked for again,
 * at most ten times a second: a walk of its maps. */
static void probe_own_driver(struct recorder *rc, const struct sample *s, int64_t now)
{
	char why[256] = "";
	if (rc->gpu_own_probed || !rc->kpeak || !rc->opts->nvml || !(s->have & SAMPLE_GPU) ||
	    !s->gpu || rc->target->pid <= 0 || now < rc->gpu_own_next)
		return;
	int e = gpus_probe_mapped(rc->kpeak, rc->opts->kstacks, rc->target->pid, why,
				  sizeof(why));
	if (e == -ENOENT) {
		rc->gpu_own_next = now + NS_PER_S / 10;
		return;
	}
	rc->gpu_own_probed = 1;
	if (e == 0)
		return;
	if (!rc->sampler.gpu_probes)
		sampler_use_gpu_probes(&rc->sampler, rc->kpeak);
	rec_say(rc, RECORDER_NOTE, "rsswatch: GPU allocations from the driver's own calls "
		"(eBPF uprobes on %s)", why);
}

/* The run's GPU and cgroup peaks, and the cgroup's limit, from one sample. */
/* A GPU peak of bytes at t (CLOCK_REALTIME), from the probes or a read. The probes'
 * figure equal to a read's is the same level, at the time it was reached (a read that
 * a driver call overlapped can see it before the call returns). */
static void gpu_peak(struct run *r, uint64_t bytes, int64_t t, int probed)
{
	int timed = (int64_t)bytes == r->peak_gpu && probed && r->peak_gpu_source &&
		    strcmp(r->peak_gpu_source, GPU_FROM_READ) == 0;
	if ((int64_t)bytes <= r->peak_gpu && !timed)
		return;
	r->peak_gpu = (int64_t)bytes;
	r->peak_gpu_at = t;
	free(r->peak_gpu_source);
	r->peak_gpu_source = xstrdup(probed ? GPU_FROM_PROBES : GPU_FROM_READ);
}

static void track_peaks(struct recorder *rc, const struct sample *s, int64_t t)
{
	struct run *r = rc->run;
	if (s->have & SAMPLE_GPU)	/* a probed figure at its own time, a read's at the sample */
		gpu_peak(r, s->gpu, rc->sampler.gpu_taken_probed ?
			 rc->sampler.gpu_taken_at + rc->real_off : t, rc->sampler.gpu_taken_probed);
	if (s->have & SAMPLE_CGROUP) {
		uint64_t cg = (s->have & SAMPLE_CGROUP_PEAK) ? s->cgroup_peak : s->cgroup;
		if (cg > r->peak_cgroup) {
			r->peak_cgroup = cg;
			r->peak_cgroup_at = t;
		}
		if (s->cgroup_limit != CG_UNLIMITED)
			r->cgroup_limit = s->cgroup_limit;
	}
}

/* The thresholds (--warn, --warn-eta) and the hooks waiting to be reaped. */
static void check_alerts(struct recorder *rc, const struct sample *s, int64_t t)
{
	struct run *r = rc->run;
	check_warn(rc, s, t);
	int eta_warned = rc->eta.warned;
	eta_watch_sample(&rc->eta, s, t, rc->st, r, rc->target->pid);
	if (rc->eta.warned && !eta_warned) {
		char words[256];
		if (!rc->opts->quiet && rc->opts->sink) {
			eta_watch_words(&rc->eta, t, words, sizeof(words));
			rec_say(rc, RECORDER_ALERT, "%s", words);
		}
		rec_fire_hook(rc, "warn_eta", rc->target->pid, NULL, s->mem.rss);
	}
	hooks_poll(rc->opts->hooks, rc->st, r->id);
}

/* user + sys less the launch's CPU, split as the kernel splits the total now: it
 * divides a process's exact run time between user and system by the ticks it sampled
 * in each, which for a few ms can put all of it on either side. */
static void less_launch(const struct launch_facts *l, uint64_t *user, uint64_t *sys)
{
	uint64_t total = *user + *sys, before = l->pre_exec_user_ns + l->pre_exec_sys_ns;
	if (!total || !before)
		return;
	uint64_t left = total > before ? total - before : 0;
	*user = (uint64_t)((double)left * (double)*user / (double)total);
	*sys = left - *user;
}

void rec_cpu_from_exec(const struct recorder *rc, struct sample *s)
{
	if (rc->target->is_child && (s->have & SAMPLE_CPU))
		less_launch(&rc->target->launch, &s->cpu_user_ns, &s->cpu_sys_ns);
}

void rec_root_cpu_from_exec(struct recorder *rc)
{
	long i = rc->target->is_child ? proclog_find(&rc->log, rc->target->pid) : -1;
	if (i < 0)
		return;
	struct proc_summary *p = &rc->log.p[i];
	if (p->cpu_user_ns < 0 || p->cpu_sys_ns < 0)
		return;	/* not known */
	uint64_t user = (uint64_t)p->cpu_user_ns, sys = (uint64_t)p->cpu_sys_ns;
	less_launch(&rc->target->launch, &user, &sys);
	p->cpu_user_ns = (int64_t)user;
	p->cpu_sys_ns = (int64_t)sys;
}

/* The sample counted in the run and handed to the store, the exporter and the live
 * line. */
void rec_hand_over(struct recorder *rc, struct sample *s, int64_t t)
{
	struct run *r = rc->run;
	r->samples++;
	rc->prev_elapsed = rc->last_elapsed;
	rc->last_elapsed = s->elapsed_ns;
	r->sum_rss += (double)s->mem.rss;
	r->last_rss = s->mem.rss;
	r->last_at = t;
	rc->last = *s;
	store_add_sample(rc->st, r->id, s);
	if (rc->opts->metrics)
		publish(rc, s);
	const struct recorder_sink *k = rc->opts->sink;
	if (k && k->live && !rc->opts->quiet && ++rc->since_live >= rc->every) {
		struct recorder_live l = { t, s, rc->eta.now.have ? rc->eta.now.eta_s : -1,
					   eta_limit_name(rc->eta.now.limit), rc->counters,
					   rc->ncounters };
		rc->since_live = 0;
		k->live(k->ctx, &l);
	}
}

static int take_sample(struct recorder *rc)
{
	struct sample s;
	int64_t now = mono_ns();
	if (!rc->exits_filtered)
		rec_drain_exits(rc);	/* first: a member's last name is known when it leaves */
	int e = sampler_read(&rc->sampler, now, &s);
	if (e < 0) {
		if (rc->set_open && rc->target->pid <= 0)
			rc->set_end = e == -ESRCH && rc->set.procs_path &&
				      access(rc->set.procs_path, F_OK) < 0 ? -ENODEV : -ESRCH;
		return e;
	}
	s.elapsed_ns = now - rc->start_mono;
	rc->last_sample = now;
	if (rc->set_open) {
		/* the last counters of those that left, then all that ended so far */
		proclog_read_set(&rc->log, &rc->set, 0);
		proclog_add_ended(&rc->log, &s);
	}
	rec_cpu_from_exec(rc, &s);
	/* the processes that joined (at this sample, or from exit records) may be those
	 * of kill lines read before they were known */
	if (rc->npkills)
		rec_settle_kills(rc, 0);
	rec_cgroup_kills(rc, 0);
	if (sampler_pss_due(&rc->sampler, now))
		read_pss(rc, now, &s);

	struct run *r = rc->run;
	int64_t t = r->started_at + s.elapsed_ns;
	rec_kernel_peak(rc);	/* first: a sample of the same height keeps its time */
	/* Over a set, the sum of each member's VmHWM is no peak of the whole (they peak at
	 * different times): the sampled totals count, and each member's own peak
	 * (rec_store_members). */
	rec_run_peak(rc, s.mem.rss, t, PEAK_FROM_SAMPLE);
	if (!rc->set_open)
		track_target(rc, &s, t);
	track_peaks(rc, &s, t);
	probe_own_driver(rc, &s, now);
	if (rc->sampler.gpu_fresh)
		for (size_t i = 0; i < rc->sampler.ngpus; i++)
			store_add_gpu(rc->st, r->id, s.elapsed_ns, &rc->sampler.gpus[i]);
	if (rc->target->pid > 0)
		rec_poll_client(rc, s.elapsed_ns, 0);
	if (rc->set_open) {
		rec_store_members(rc, s.elapsed_ns, t);
		rec_set_status_bound(rc);
	}
	rec_fold_processes(rc, t, s.elapsed_ns);
	check_alerts(rc, &s, t);
	rec_hand_over(rc, &s, t);
	int urgent = near_limit(rc, &s);
	if (urgent)
		store_hurry(rc->st);	/* a shared writer too writes it at once */
	if (urgent || now - rc->last_flush >= FLUSH_EVERY_NS ||
	    store_pending(rc->st) >= FLUSH_EVERY_SAMPLES || store_filling(rc->st))
		flush(rc);
	rec_stages_tick(rc, now);
	return 0;
}

static void handle_signal(struct recorder *rc)
{
	struct signalfd_siginfo si;
	while (read(rc->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (!rc->target->is_child) {
			rc->stop = SIGNALED;
			rc->stop_signo = (int)si.ssi_signo;
			continue;
		}
		/* A launched command: pass the signal on and record until it ends. A signal
		 * from the terminal (SI_KERNEL) reached the command's process group already;
		 * sending it again would deliver it twice. */
		if (si.ssi_code != SI_KERNEL)
			kill(rc->target->pid, (int)si.ssi_signo);
	}
}

/* GPU memory has no high-water mark: a spike between two samples is seen only by a
 * read during it. When GPU reads are due more often than samples, they get their own
 * timer, on deadlines start + k * gpu_interval as the sampler expects; otherwise (and
 * without NVML) there is no timer and a sample reads when one is due. */
static int gpu_timer_open(struct recorder *rc)
{
	int64_t every = rc->opts->gpu_interval_ns, first = rc->start_mono + every;
	rc->gpufd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (rc->gpufd < 0)
		return -errno;
	struct itimerspec its = {
		.it_interval = { (time_t)(every / NS_PER_S), (long)(every % NS_PER_S) },
		.it_value = { (time_t)(first / NS_PER_S), (long)(first % NS_PER_S) },
	};
	if (timerfd_settime(rc->gpufd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
		return -errno;
	return 0;
}

/* The kernel's exit records: the caller's listener taken over (opened before a command
 * was launched) or one opened now. They need root (CAP_NET_ADMIN) and the real machine,
 * not a fixture. */
static void open_exit_records(struct recorder *rc)
{
	struct taskstats_listener *given = rc->opts->exit_listener;
	if (given && taskstats_fd(given) >= 0) {
		rc->ts = *given;	/* taken over: the caller's copy is left closed */
		*given = (struct taskstats_listener)TASKSTATS_LISTENER_INIT;
	}
	if (taskstats_fd(&rc->ts) >= 0 && (*sysroot() || rc->opts->no_exit_records))
		taskstats_close(&rc->ts);
	rc->run->exit_records = !*sysroot() && !rc->opts->no_exit_records &&
				(taskstats_fd(&rc->ts) >= 0 || taskstats_open(&rc->ts) == 0);
}

/* A tree or a cgroup: its set of processes, and the room for their exit records. */
static int open_set(struct recorder *rc, unsigned reuse)
{
	int e;
	/* fork events are the real machine's: not for a fixture tree */
	int use_cn = !rc->opts->no_proccn && !*sysroot();
	if (rc->target->set_cgroup_dir)
		/* the connector only to tell others' exit records */
		e = procset_open_cgroup(&rc->set, rc->target->set_cgroup_dir,
					use_cn && rc->run->exit_records, rec_on_proc, rc);
	else
		e = procset_open_tree(&rc->set, rc->target->pid, use_cn, rec_on_proc, rc);
	if (e < 0)
		return e;
	rc->set.status_reuse = reuse;
	rc->set_open = 1;
	rc->pending = xmalloc(PENDING_EXITS * sizeof(*rc->pending));
	rc->retry = xmalloc(PENDING_EXITS * sizeof(*rc->retry));
	rc->cappending = PENDING_EXITS;
	rc->doubt = xmalloc(DOUBT_EXITS * sizeof(*rc->doubt));
	if (rc->run->exit_records) {
		rc->early = xmalloc(EARLY_EXITS * sizeof(*rc->early));
		rc->capearly = EARLY_EXITS;
	}
	sampler_use_set(&rc->sampler, &rc->set);
	return 0;
}

/* What a sample reads besides the target: PSS, GPUs, the cgroup and its pressure. */
static void use_sources(struct recorder *rc)
{
	if (rc->opts->pss_interval_ns)
		sampler_use_pss(&rc->sampler, rc->opts->pss_interval_ns);
	if (rc->opts->nvml)
		sampler_use_gpu(&rc->sampler, rc->opts->nvml, rc->opts->gpu_interval_ns,
				rc->start_mono);
	if (rc->target->cg && rc->target->cg_sample) {
		rc->run->peak_cgroup_exact = sampler_use_cgroup(&rc->sampler, rc->target->cg,
								rc->target->cg_reset_peak);
		if (rc->sampler.cg_peak_before != UINT64_MAX)
			rc->run->cgroup_peak_before = rc->sampler.cg_peak_before;
	}
	if (rc->target->psi_cgroup_dir)
		sampler_use_cgroup_psi(&rc->sampler, rc->target->psi_cgroup_dir);	/* none: fine */
	struct oom_watch *early = rc->opts->oom_watch;
	if (early && early->open) {
		rc->oom = *early;	/* taken over: the caller's copy is left closed */
		memset(early, 0, sizeof(*early));
		early->kmsg.fd = -1;
	} else {
		oom_watch_open(&rc->oom, rc->target->cg, !rc->opts->no_kmsg);
	}
}

/* The sampling timer: absolute deadlines start + k * interval, so that late wake-ups
 * never accumulate; and the GPU's own where its reads are due more often. */
static int open_timers(struct recorder *rc)
{
	rc->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (rc->timerfd < 0)
		return -errno;
	int64_t first = rc->start_mono + rc->opts->interval_ns;
	struct itimerspec its = {
		.it_interval = { (time_t)(rc->opts->interval_ns / NS_PER_S),
				 (long)(rc->opts->interval_ns % NS_PER_S) },
		.it_value = { (time_t)(first / NS_PER_S), (long)(first % NS_PER_S) },
	};
	if (timerfd_settime(rc->timerfd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
		return -errno;
	if (rc->opts->nvml && rc->opts->gpu_interval_ns < rc->opts->interval_ns)
		return gpu_timer_open(rc);
	return 0;
}

/* The target in the eBPF engine: an attached one from its next page change (a launched
 * one was adopted at its fork), and with a tree every child it forks; a cgroup's
 * processes as they move in or out, and their children. The members found already are
 * tracked as they are found (rec_on_proc). */
static void track_in_engine(struct recorder *rc)
{
	struct kpeak *k = rc->kpeak;
	if (!k)
		return;
	if (rc->target->tree || rc->target->set_cgroup_dir)
		kpeak_follow_forks(k, 1);
	if (rc->target->set_cgroup_dir && rc->target->cg &&
	    kpeak_watch_cgroup(k, rc->target->set_cgroup_dir, rc->target->cg->version) < 0) {
		/* without the moves in and out, its total would keep a process moved out */
		rc->kpeak = NULL;
		return;
	}
	if (rc->target->pid > 0 && !rc->target->is_child)
		kpeak_track(k, rc->target->pid);
	if (rc->opts->nvml && kpeak_gpu_files(k) > 0)
		sampler_use_gpu_probes(&rc->sampler, k);
	rec_stages_begin(rc);
}

/* Everything the loop needs, open, and the run's clock started. 0 or -errno. */
static int setup(struct recorder *rc)
{
	/* The slow parts first (netlink round trips, a thread, a walk of /proc), so that
	 * the run's clock starts with its files open and its first sample. */
	open_exit_records(rc);
	if (store_writer_start(rc->st) < 0)
		flush(rc);	/* no thread: writes wait on the database (never fails here) */
	rec_note_untracked(rc, 0);
	int64_t now = mono_ns(), exec = rc->target->is_child ? rc->target->launch.exec_mono : 0;
	rc->real_off = real_ns() - now;
	/* a launched command's clock starts at its exec, as its run's start does: a
	 * sample's time is then when it was read, and its CPU over the time since */
	rc->start_mono = exec > 0 && exec <= now ? exec : now;
	rc->start_boot = boottime_ns() - (now - rc->start_mono);
	/* The first sample goes to the store at once: the run's row then holds the
	 * target's pid (a launched command's is not known before) and a first figure for
	 * ls, mark -p and a reader, from the start rather than after the first batch. */
	rc->last_flush = rc->start_mono - FLUSH_EVERY_NS;
	int e = sampler_open(&rc->sampler, rc->target->pid);
	if (e < 0)
		return e;
	/* A cached status can hide a VmHWM that rose and fell back (source/proc.h): it is
	 * read afresh at least once a second (a large set: rec_set_status_bound). */
	unsigned reuse = rec_status_reuse_for(rc->opts->interval_ns, NS_PER_S);
	proc_reader_max_reuse(&rc->sampler.proc, reuse);
	if (rc->opts->reset_peak && rc->target->pid > 0 && !rc->target->is_child)
		reset_hwm(rc);
	rc->sampler_open = 1;
	if (rc->target->set_cgroup_dir || rc->target->tree) {
		if ((e = open_set(rc, reuse)) < 0)
			return e;
	} else if (rc->run->exit_records && rc->target->pid > 0) {
		/* One process: the host's other exits are of no use; without the filter
		 * (it failed) they are read and ignored, as before. */
		rc->exits_filtered = taskstats_only(&rc->ts, rc->target->pid) == 0;
	}
	use_sources(rc);
	track_in_engine(rc);
	rec_stacks_begin(rc);
	return open_timers(rc);
}

/* A GPU poll: the highest GPU figures since the last sample (record/sampler.h). */
static void gpu_tick(struct recorder *rc)
{
	uint64_t ticks;
	if (read(rc->gpufd, &ticks, sizeof(ticks)) == (ssize_t)sizeof(ticks))
		sampler_poll_gpu(&rc->sampler, mono_ns());
}

static int poll_timeout_ms(const struct recorder *rc)
{
	if (!rc->opts->duration_ns)
		return -1;
	int64_t left = rc->start_mono + rc->opts->duration_ns - mono_ns();
	if (left <= 0)
		return 0;
	return (int)(left / NS_PER_MS + 1);
}

/* The files the loop waits on, in an epoll set (a poll of them all at every sample
 * would ask each one, at 1 kHz a sixth of the recorder's time): their index is the
 * event's data. The exit records' socket is there only when it is filtered to the one
 * target (taskstats_only): then it is drained when it has something, not at every
 * sample. For a set every exit on the host comes: it is there one-shot, read into
 * early[] at most every EARLY_EVERY_NS, and drained at samples. */
enum { LOOP_TIMER, LOOP_TARGET, LOOP_SIGNAL, LOOP_OOM, LOOP_GPU, LOOP_EXITS, LOOP_STACKS,
       LOOP_NFDS };

static int loop_open(struct recorder *rc)
{
	int fds[LOOP_NFDS] = { rc->timerfd, rc->target->pidfd, rc->sigfd, oom_watch_fd(&rc->oom),
			       rc->gpufd, rc->exits_filtered || rc->early ? taskstats_fd(&rc->ts) : -1,
			       rc->stacks ? kstacks_fd(rc->opts->kstacks) : -1 };
	int ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		return -errno;
	for (unsigned k = 0; k < LOOP_NFDS; k++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = k };
		if (k == LOOP_EXITS && !rc->exits_filtered)
			ev.events |= EPOLLONESHOT;
		if (fds[k] >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, fds[k], &ev) < 0) {
			int e = -errno;
			close(ep);
			return e;
		}
	}
	rc->early_armed = fds[LOOP_EXITS] >= 0;
	return ep;
}

/* Arms the set's exit records in the loop's epoll set ep again, once EARLY_EVERY_NS
 * passed since the last read and early[] has room. Returns how long until it may be
 * armed (ms), or -1 when there is nothing to wait for. */
static int arm_exits(struct recorder *rc, int ep)
{
	if (!rc->early || rc->early_armed || taskstats_fd(&rc->ts) < 0 ||
	    EARLY_EXITS_MAX - rc->nearly < TASKSTATS_DGRAM_RECS)
		return -1;
	int64_t left = rc->early_rearm - mono_ns();
	if (left > 0)
		return (int)(left / NS_PER_MS + 1);
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT, .data.u32 = LOOP_EXITS };
	if (epoll_ctl(ep, EPOLL_CTL_MOD, taskstats_fd(&rc->ts), &ev) == 0)
		rc->early_armed = 1;
	return -1;
}

/* The loop's wait: until the duration's end or the exit records may be armed again. */
static int wait_ms(struct recorder *rc, int ep)
{
	int a = poll_timeout_ms(rc), b = arm_exits(rc, ep);
	return a < 0 ? b : b < 0 || a < b ? a : b;
}

/* The recorder's state before set-up: nothing open, the clocks started. */
static void recorder_init(struct recorder *rc, const struct record_opts *opts,
			  const struct record_target *target, int sigfd, struct store *st,
			  struct run *run)
{
	memset(rc, 0, sizeof(*rc));
	rc->oom.kmsg.fd = -1;
	rc->oom.kmsg_err = -EBADF;
	rc->opts = opts;
	rc->kpeak = opts->kpeak;
	rc->target = target;
	rc->st = st;
	rc->run = run;
	rc->sigfd = sigfd;
	rc->timerfd = -1;
	rc->root = -1;
	rc->ts = (struct taskstats_listener)TASKSTATS_LISTENER_INIT;
	proclog_init(&rc->log);
	rc->gpufd = -1;
	rc->start_mono = mono_ns();
	rc->last_flush = rc->start_mono;
	rc->mark_tokens = MARKS_BURST;
	eta_watch_init(&rc->eta, opts->interval_ns, opts->warn_eta_ns);
	rc->every = opts->every;
	if (!rc->every)
		rc->every = opts->interval_ns >= NS_PER_S ? 1 : (unsigned)(NS_PER_S / opts->interval_ns);
	rc->since_live = rc->every - 1;	/* the first sample gets a line */
	rec_page_init(rc);
}

/* The target is gone: a zombie's pidfd turns readable at once, a cgroup is empty. */
static void gone_now(struct recorder *rc)
{
	if (rc->target->pidfd < 0) {
		rec_cgroup_ended(rc);
		return;
	}
	struct pollfd pfd = { rc->target->pidfd, POLLIN, 0 };
	poll(&pfd, 1, ZOMBIE_PIDFD_WAIT_MS);
	rec_target_ended(rc);
}

/* A tick of the sampling timer: one sample (ticks counts the missed ones too). */
static int on_tick(struct recorder *rc)
{
	uint64_t ticks;
	if (read(rc->timerfd, &ticks, sizeof(ticks)) != (ssize_t)sizeof(ticks)) {
		if (errno != EAGAIN)
			return -errno;
		ticks = 1;
	}
	check_pace(rc, ticks, mono_ns());
	/* -ESRCH: a zombie already; its pidfd becomes readable at once. */
	if (take_sample(rc) == -ESRCH && rc->stop == RUNNING)
		gone_now(rc);
	if (rc->stop == RUNNING)
		rec_find_page(rc);	/* after the sample, never within it */
	return 0;
}

/* What one wake-up found ready (a bit per LOOP_* file), in the order that keeps a
 * member's exit record before its sample and a signal before the target's end. */
static int on_ready(struct recorder *rc, unsigned ready)
{
	if ((ready & (1u << LOOP_EXITS)) && rc->exits_filtered)
		rec_drain_exits(rc);	/* the target's own: at once (level-triggered) */
	else if (ready & (1u << LOOP_EXITS))
		rec_collect_exits(rc);
	if (ready & (1u << LOOP_GPU))
		gpu_tick(rc);
	if (ready & (1u << LOOP_STACKS))
		rec_drain_stacks(rc);	/* at once: a walk needs the process's maps */
	if (ready & (1u << LOOP_OOM))
		rec_drain_kills(rc);
	else
		rec_drain_victims(rc);	/* the log may be unreadable: the engine's come anyway */
	if (ready & (1u << LOOP_SIGNAL))
		handle_signal(rc);
	if (ready & (1u << LOOP_TARGET)) {
		rec_target_ended(rc);
		return 0;
	}
	return (ready & (1u << LOOP_TIMER)) ? on_tick(rc) : 0;
}

/* The loop: until the target ends, a signal, or the duration's end. */
static int run_loop(struct recorder *rc)
{
	int ep = loop_open(rc), e = ep < 0 ? ep : 0;
	while (e == 0 && rc->stop == RUNNING) {
		struct epoll_event evs[LOOP_NFDS];
		unsigned ready = 0;
		int n = epoll_wait(ep, evs, LOOP_NFDS, wait_ms(rc, ep));
		if (n < 0) {
			if (errno != EINTR)
				e = -errno;
			continue;
		}
		for (int k = 0; k < n; k++)
			if (evs[k].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
				ready |= 1u << evs[k].data.u32;
		e = on_ready(rc, ready);
		if (rc->stop == RUNNING && rc->opts->duration_ns &&
		    mono_ns() - rc->start_mono >= rc->opts->duration_ns)
			rc->stop = DURATION;
	}
	if (ep >= 0)
		close(ep);
	return e;
}

/* Whether the stop needs a sample of its own. At -d's end, not when the last tick
 * fell on or after the end (a slow sample under load once made -d 1s at 100ms take
 * 12); at a signal, not when one was begun within the last millisecond. */
static int last_sample_stale(const struct recorder *rc)
{
	if (rc->stop == DURATION)
		return rc->last_sample < rc->start_mono + rc->opts->duration_ns;
	return rc->stop == SIGNALED && mono_ns() - rc->last_sample >= NS_PER_MS;
}

/* Stopped with the target alive (a signal, -d): one more sample, unless one was just
 * taken, so that what rose since the last (VmHWM keeps a spike) is not lost to the
 * interval: Ctrl-C on a recording at 1 m kept nothing of its last minute. Then the
 * cgroup's peak and the GPU reads since the last sample: the last moments are often the
 * highest, and an OOM-killed command dies between two samples. */
static void last_figures(struct recorder *rc, int e)
{
	struct run *run = rc->run;
	if (e == 0 && last_sample_stale(rc))
		take_sample(rc);	/* -ESRCH: it ended meanwhile; the last sample stands */
	if (!rc->sampler_open)
		return;
	uint64_t cg_peak;
	if (sampler_cgroup_peak(&rc->sampler, &cg_peak) && cg_peak > run->peak_cgroup) {
		run->peak_cgroup = cg_peak;
		run->peak_cgroup_at = run->ended_at ? run->ended_at : real_ns();
	}
	uint64_t gpu_hi;
	int64_t gpu_hi_at;
	int probed;
	if (sampler_gpu_pending(&rc->sampler, &gpu_hi, &gpu_hi_at, &probed))
		gpu_peak(run, gpu_hi, gpu_hi_at + rc->real_off, probed);
}

/* Everything the recording held, but the run (the caller's). */
static void release(struct recorder *rc)
{
	if (rc->timerfd >= 0)
		close(rc->timerfd);
	if (rc->gpufd >= 0)
		close(rc->gpufd);
	if (rc->sampler_open)
		sampler_close(&rc->sampler);
	oom_watch_close(&rc->oom);
	taskstats_close(&rc->ts);
	if (rc->set_open)
		procset_close(&rc->set, 0);
	free(rc->pending);
	free(rc->retry);
	free(rc->pkills);
	free(rc->kwait);
	free(rc->early);
	free(rc->doubt);
	client_page_close(rc->page);
	client_dir_watch_close(&rc->page_dir);
	proclog_release(&rc->log);
	rec_stages_release(rc);
	rec_stacks_release(rc);
	if (rc->stop == TARGET_ENDED && rc->target->pid > 0)
		client_page_remove_stale(rc->target->pid);
}

/* Whether the process of this pidfd has ended (the pidfd is readable then). */
static int pidfd_ended(int pidfd)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };
	return pidfd >= 0 && poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

int record(const struct record_opts *opts, const struct record_target *target, int sigfd,
	   struct store *st, struct run *run, int *store_err)
{
	struct recorder rc;
	recorder_init(&rc, opts, target, sigfd, st, run);
	int e = setup(&rc);
	if (e == -ESRCH && !rc.sampler_open && pidfd_ended(target->pidfd))
		rec_target_ended(&rc);	/* between the attach and the first read of it */
	else if (e == 0 && take_sample(&rc) == -ESRCH) {
		if (target->pidfd < 0)
			rec_cgroup_ended(&rc);
		else
			rec_target_ended(&rc);	/* ended before the first sample */
	}
	if (e == 0)
		rec_find_page(&rc);
	rc.pace_since = mono_ns();
	if (e == 0)
		e = run_loop(&rc);
	last_figures(&rc, e);
	rec_page_finish(&rc);
	rec_settle_end(&rc, e);
	rec_stacks_end(&rc);
	int fe = rec_write_end(&rc);
	if (store_err)
		*store_err = fe;
	release(&rc);
	/* A stop signal read in the pass that found the target ended: the run is the
	 * target's end, and the stop is still to be done by the caller (record --follow
	 * and the agent would wait for the next instance, deaf to it). It is blocked and
	 * sent to this thread, so it waits on this thread's signalfd again. */
	if (rc.stop == TARGET_ENDED && rc.stop_signo)
		pthread_kill(pthread_self(), rc.stop_signo);
	return e;
}
