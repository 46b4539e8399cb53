#include "record/sampler.h"
#include "base/clock.h"
#include "base/parse.h"
#include "base/util.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

int sampler_open(struct sampler *s, pid_t pid)
{
	memset(s, 0, sizeof(*s));
	s->pid = pid;
	s->meminfo = (struct rfile)RFILE_INIT;
	proc_reader_init(&s->proc);
	int e = pid ? proc_reader_open(&s->proc, pid) : 0;
	if (e < 0)
		return e == -ENOENT ? -ESRCH : e;
	if ((e = rfile_open(&s->meminfo, "/proc/meminfo")) < 0) {
		proc_reader_close(&s->proc);
		return e;
	}
	/* /proc/PID/stat costs about three statm reads (docs/dev/BENCHMARKS.md), and its CPU
	 * times only move once a clock tick: at 1 kHz it is read every tenth sample. */
	s->stat_every_ns = (int64_t)proc_ticks_ns(1);
	if (s->stat_every_ns < 10 * NS_PER_MS)
		s->stat_every_ns = 10 * NS_PER_MS;
	s->psi_cg.f = (struct rfile)RFILE_INIT;
	s->smaps.f = (struct rfile)RFILE_INIT;
	/* No PSI on this kernel (or psi=0): no pressure figures, and no error. */
	s->psi_host_open = psi_reader_open_system(&s->psi_host) == 0;
	return 0;
}

int sampler_use_cgroup_psi(struct sampler *s, const char *cgdir)
{
	if (s->psi_cg_open)
		return 0;
	int e = psi_reader_open_cgroup(&s->psi_cg, cgdir);
	if (e < 0)
		return e;
	s->psi_cg_open = 1;
	return 0;
}

/* Re-reads the pressure files (at most every PSI_EVERY_NS). A failed read keeps the
 * last good figures; a file that turns out unreadable (EOPNOTSUPP) is dropped. */
static void read_psi(struct sampler *s, int64_t now)
{
	struct psi p;
	if (now < s->psi_next_ns)
		return;
	s->psi_next_ns = now + PSI_EVERY_NS;
	if (s->psi_host_open) {
		int e = psi_reader_read(&s->psi_host, &p);
		if (e == 0) {
			s->psi_host_last = p;
			s->psi_host_have = 1;
		} else if (e == -ENOENT) {
			psi_reader_close(&s->psi_host);
			s->psi_host_open = 0;
		}
	}
	if (s->psi_cg_open) {
		int e = psi_reader_read(&s->psi_cg, &p);
		if (e == 0) {
			s->psi_cg_last = p;
			s->psi_cg_have = 1;
		} else if (e == -ENOENT || e == -ENODEV) {
			psi_reader_close(&s->psi_cg);
			s->psi_cg_open = 0;
			s->psi_cg_have = 0;	/* the cgroup is gone */
		}
	}
}

/* One PSI reading into a sample's fields for it; returns the have bits it set. */
static unsigned psi_fields(const struct psi *p, unsigned some_bit, unsigned full_bit,
			   double *some_avg10, uint64_t *some_total, double *full_avg10,
			   uint64_t *full_total)
{
	*some_avg10 = psi_avg_pct(p->some.avg10);
	*some_total = p->some.total_us;
	if (!p->has_full)
		return some_bit;
	*full_avg10 = psi_avg_pct(p->full.avg10);
	*full_total = p->full.total_us;
	return some_bit | full_bit;
}

static void put_psi(struct sampler *s, struct sample *out)
{
	if (s->psi_host_have)
		out->have |= psi_fields(&s->psi_host_last, SAMPLE_PSI, SAMPLE_PSI_FULL,
					&out->psi_some_avg10, &out->psi_some_total_us,
					&out->psi_full_avg10, &out->psi_full_total_us);
	if (s->psi_cg_have)
		out->have |= psi_fields(&s->psi_cg_last, SAMPLE_CG_PSI, SAMPLE_CG_PSI_FULL,
					&out->cg_psi_some_avg10, &out->cg_psi_some_total_us,
					&out->cg_psi_full_avg10, &out->cg_psi_full_total_us);
}

void sampler_use_gpu(struct sampler *s, struct nvml *n, int64_t every_ns, int64_t origin_ns)
{
	s->nvml = n;
	s->gpu_every_ns = every_ns > 0 ? every_ns : 1;
	s->gpu_origin_ns = origin_ns;
	s->gpu_next_ns = INT64_MIN;	/* the first sample reads */
}

void sampler_use_gpu_probes(struct sampler *s, struct kpeak *k)
{
	s->gpu_probes = k;
	s->gpu_anchored = 0;
	s->gpu_pre.have = 0;
	s->gpu_extra_min = 0;
}

/* Keeps the probes' total high before the first anchor: a later equal one is the same
 * peak, held. */
static void keep_pre(struct sampler *s, uint64_t high, int64_t at)
{
	if (!s->gpu_pre.have || high > s->gpu_pre.bytes)
		s->gpu_pre = (struct gpu_high){ 1, high, at };
}

/* Folds a figure of the probes, reached at `at`, into w. A read's equal figure gives
 * way to it: the read saw a level the probes know the time of (a read that a call
 * overlapped may see it before the call returns). */
static void fold_probed(struct gpu_reading *w, uint64_t bytes, int64_t at)
{
	if (!w->have || bytes > w->bytes || (bytes == w->bytes && !w->probed)) {
		w->have = 1;
		w->bytes = bytes;
		w->at = at;
		w->probed = 1;
	}
}

/* The figure a read would have given with the probes' total at high, by the anchor. */
static uint64_t anchored(const struct sampler *s, uint64_t high)
{
	int64_t v = (int64_t)s->gpu_anchor_read + ((int64_t)high - s->gpu_anchor_live);
	return v > 0 ? (uint64_t)v : 0;
}

/* Folds the probes' highest total since the last fold into w, as the figure a read
 * would have given then (see struct sampler). Before the first anchor it is kept in
 * gpu_pre instead, for the anchor to come or, if none comes, the end. */
static void fold_probes(struct sampler *s, struct gpu_reading *w)
{
	uint64_t high;
	int64_t at;
	if (!s->gpu_probes)
		return;
	kpeak_gpu_window(s->gpu_probes, &high, &at);
	if (s->gpu_anchored)
		fold_probed(w, anchored(s, high), at);
	else
		keep_pre(s, high, at);
}

/* One read of the devices and of the target's use of them: with a process set (--tree,
 * -g), the use of every member the last sample saw. Returns 0, or -errno when NVML
 * would not answer (r is then not written). */
static int read_gpus(struct sampler *s, int64_t now, struct gpu_reading *r)
{
	struct gpu_device dev[SAMPLER_MAX_GPUS];
	struct gpu_usage use;
	const pid_t *pids = &s->pid;
	size_t npids = 1;
	if (s->set) {
		pids = s->set->list;
		npids = s->set->nlist;
	}
	int n = nvml_read_devices(s->nvml, dev, SAMPLER_MAX_GPUS);
	if (n < 0)
		return n;
	int e = nvml_read_usage(s->nvml, pids, npids, &use);
	if (e < 0)
		return e;
	r->ndev = 0;
	for (int i = 0; i < n && r->ndev < SAMPLER_MAX_GPUS; i++) {
		/* A device that is lost or failed this time is stored as unknown (used and
		 * total 0, the target's use NULL), so readers do not carry its last value on. */
		int ok = dev[i].present && !dev[i].err;
		struct gpu_figures *g = &r->dev[r->ndev++];
		g->device = dev[i].index;
		g->used_bytes = ok ? dev[i].used : 0;
		g->total_bytes = ok ? dev[i].total : 0;
		g->target_known = ok && !(use.unknown_mask & (1ULL << (dev[i].index % 64)));
		g->target_bytes = dev[i].index < NVML_MAX_DEVICES ? use.per_device[dev[i].index] : 0;
	}
	r->have = use.known;
	r->bytes = use.bytes;
	r->at = now;
	return 0;
}

/* Folds one device's figures g into the highest so far, w (same device). A known
 * figure beats an unknown one (a lower bound); a device that failed this read (total
 * 0) leaves used and total as they were. */
static void fold_device(struct gpu_figures *w, const struct gpu_figures *g)
{
	if (g->target_known && !w->target_known) {
		w->target_known = 1;
		w->target_bytes = g->target_bytes;
	} else if (g->target_known == w->target_known && g->target_bytes > w->target_bytes) {
		w->target_bytes = g->target_bytes;
	}
	if (g->total_bytes) {
		if (!w->total_bytes || g->used_bytes > w->used_bytes)
			w->used_bytes = g->used_bytes;
		w->total_bytes = g->total_bytes;
	}
}

/* Folds read r into the highest figures w since the last sample. */
static void fold_reading(struct gpu_reading *w, const struct gpu_reading *r)
{
	if (r->have && (!w->have || r->bytes > w->bytes)) {
		w->have = 1;
		w->bytes = r->bytes;
		w->at = r->at;
		w->probed = r->probed;
	}
	for (size_t i = 0; i < r->ndev; i++) {
		size_t j = 0;
		while (j < w->ndev && w->dev[j].device != r->dev[i].device)
			j++;
		if (j == w->ndev) {
			if (j == SAMPLER_MAX_GPUS)
				continue;
			w->dev[w->ndev++] = r->dev[i];
			continue;
		}
		fold_device(&w->dev[j], &r->dev[i]);
	}
}

/* Anchors the probes' total to read r, taken between the probes' figures before and
 * after. Only a read that no driver call overlapped anchors: a call under way may have
 * changed the driver's figure and not yet the probes' (or the other way round). One
 * that calls overlapped but none was under way at either end still bounds what the
 * driver charges besides the blocks from below: its figure counted at most the highest
 * total the probes had meanwhile. Before the first anchor such a read is tried again
 * soon, not a GPU interval later: the calls of a start come in a burst. */
static void anchor(struct sampler *s, const struct gpu_reading *r, const struct kpeak_gpu *before,
		   const struct kpeak_gpu *after, int64_t now)
{
	if (!before->inflight && before->calls == after->calls) {
		/* the driver's figure holds at least the blocks it handed out: a read
		 * below them did not see the processes (another pid namespace's NVML),
		 * or not yet */
		s->gpu_anchored = 1;
		s->gpu_anchor_read = after->live > 0 && r->bytes < (uint64_t)after->live ?
				     (uint64_t)after->live : r->bytes;
		s->gpu_anchor_live = after->live;
		if (s->gpu_pre.have)	/* what came before the first anchor */
			fold_probed(&s->gpu_win, anchored(s, s->gpu_pre.bytes), s->gpu_pre.at);
		s->gpu_pre.have = 0;
		return;
	}
	if (s->gpu_anchored)
		return;
	if (!before->inflight && !after->inflight) {
		uint64_t high;	/* the highest since the fold just before the read */
		int64_t at;
		kpeak_gpu_window(s->gpu_probes, &high, &at);
		keep_pre(s, high, at);
		if (r->bytes > high && r->bytes - high > s->gpu_extra_min)
			s->gpu_extra_min = r->bytes - high;
	}
	if (s->gpu_next_ns > now + GPU_ANCHOR_RETRY_NS)
		s->gpu_next_ns = now + GPU_ANCHOR_RETRY_NS;
}

int sampler_poll_gpu(struct sampler *s, int64_t now)
{
	struct gpu_reading r;
	struct kpeak_gpu before, after;
	if (!s->nvml || now < s->gpu_next_ns)
		return 0;
	/* The next deadline of the grid after now: reads stay on the caller's timer
	 * however late this one was. */
	if (now < s->gpu_origin_ns)
		s->gpu_next_ns = s->gpu_origin_ns;
	else
		s->gpu_next_ns = s->gpu_origin_ns +
				 ((now - s->gpu_origin_ns) / s->gpu_every_ns + 1) * s->gpu_every_ns;
	if (s->gpu_probes) {
		fold_probes(s, &s->gpu_win);	/* up to this read, against the last anchor */
		kpeak_gpu_read(s->gpu_probes, &before);
	}
	memset(&r, 0, sizeof(r));
	if (read_gpus(s, now, &r) < 0)
		return 0;
	if (s->gpu_probes && r.have) {
		kpeak_gpu_read(s->gpu_probes, &after);
		anchor(s, &r, &before, &after, now);
	}
	s->gpu_last = r;
	fold_reading(&s->gpu_win, &r);
	s->gpu_nread++;
	return 1;
}

int sampler_gpu_pending(struct sampler *s, uint64_t *bytes, int64_t *at, int *probed)
{
	fold_probes(s, &s->gpu_win);
	if (!s->gpu_anchored && s->gpu_pre.have && s->gpu_pre.bytes)
		/* no read ever anchored: the least the driver's figure can have been */
		fold_probed(&s->gpu_win, s->gpu_pre.bytes + s->gpu_extra_min, s->gpu_pre.at);
	if (!(s->gpu_nread || s->gpu_win.probed) || !s->gpu_win.have)
		return 0;
	*bytes = s->gpu_win.bytes;
	*at = s->gpu_win.at;
	*probed = s->gpu_win.probed;
	return 1;
}

/* The GPU figures of a sample: the highest since the last one, after a read if one
 * is due. The window then restarts from the latest read. */
static void take_gpus(struct sampler *s, int64_t now, struct sample *out)
{
	sampler_poll_gpu(s, now);
	fold_probes(s, &s->gpu_win);
	s->gpu_fresh = s->gpu_nread > 0;
	if (s->gpu_win.have) {
		out->have |= SAMPLE_GPU;
		out->gpu = s->gpu_win.bytes;
		s->gpu_taken_at = s->gpu_win.at;
		s->gpu_taken_probed = s->gpu_win.probed;
	}
	memcpy(s->gpus, s->gpu_win.dev, s->gpu_win.ndev * sizeof(s->gpus[0]));
	s->ngpus = s->gpu_win.ndev;
	s->gpu_win = s->gpu_last;
	s->gpu_nread = 0;
}

int sampler_use_cgroup(struct sampler *s, struct cg_reader *cg, int reset_peak)
{
	s->cg = cg;
	s->cg_reset = reset_peak && cg_reader_reset_peak(cg) == 0;
	/* A cgroup made for the run has no history; another one's peak is the run's own
	 * only from a reset at the start. */
	s->cg_peak_exact = cg->owned || s->cg_reset;
	struct cg_sample c;
	memset(&c, 0, sizeof(c));
	s->cg_peak_before = UINT64_MAX;
	if (!s->cg_peak_exact && cg_reader_read(cg, &c) == 0 && (c.have & CG_S_PEAK))
		s->cg_peak_before = c.peak;
	return s->cg_peak_exact;
}

/* Whether the peak in c is one the run reached. A peak with history counts once it
 * rises above its value at the start: it was then reached during the run. */
static int run_peak_of(struct sampler *s, const struct cg_sample *c)
{
	if (!(c->have & CG_S_PEAK) || !(s->cg_peak_exact || c->peak > s->cg_peak_before))
		return 0;
	s->cg_peak_rose |= !s->cg_peak_exact;
	return 1;
}

int sampler_cgroup_peak(struct sampler *s, uint64_t *peak)
{
	struct cg_sample c;
	memset(&c, 0, sizeof(c));
	if (!s->cg || cg_reader_read(s->cg, &c) < 0 || !run_peak_of(s, &c))
		return 0;
	*peak = c.peak;
	return 1;
}

/* One pread per cgroup file; the cgroup may be gone (-ENODEV): then no figures. */
static void read_cgroup(struct sampler *s, struct sample *out)
{
	struct cg_sample c;
	memset(&c, 0, sizeof(c));
	if (cg_reader_read(s->cg, &c) < 0 || !(c.have & CG_S_USAGE))
		return;
	out->have |= SAMPLE_CGROUP;
	out->cgroup = c.usage;
	out->cgroup_limit = (c.have & CG_S_LIMIT) ? c.limit : CG_UNLIMITED;
	s->cg_oom_known = (c.have & CG_S_OOM_KILL) != 0;
	s->cg_oom_kill = c.oom_kill;
	if (run_peak_of(s, &c)) {
		out->have |= SAMPLE_CGROUP_PEAK;
		out->cgroup_peak = c.peak > c.usage ? c.peak : c.usage;
	}
	if (s->cg_reset && cg_reader_reset_peak(s->cg) < 0)
		s->cg_reset = 0;
}

void sampler_use_pss(struct sampler *s, int64_t every_ns)
{
	s->pss_every_ns = every_ns;
	s->pss_next_ns = 0;
}

int sampler_pss_due(const struct sampler *s, int64_t now)
{
	return s->pss_every_ns > 0 && !s->pss_err && now >= s->pss_next_ns;
}

int sampler_read_pss(struct sampler *s, int64_t now, struct sample *out)
{
	int64_t t0 = mono_ns();
	int e;
	s->pss_next_ns = now + s->pss_every_ns;
	if (s->set) {
		struct procset_pss p;
		procset_read_pss(s->set, &p);
		s->pss_nfailed = p.nfailed;
		if (p.nfailed && !p.nread) {
			s->pss_err = p.err;	/* none readable: off */
			return p.err;
		}
		if (!p.nread)
			return -ESRCH;
		out->pss = p.pss;
		out->uss = p.uss;
		out->swap_pss = p.swap_pss;
	} else {
		struct smaps_rollup r;
		if (s->smaps.f.fd < 0 && (e = smaps_reader_open(&s->smaps, s->pid)) < 0) {
			if (e == -ENOENT || e == -ESRCH)
				return -ESRCH;
			s->pss_err = e;
			return e;
		}
		if ((e = smaps_reader_read(&s->smaps, &r)) < 0) {
			if (e != -ESRCH)
				s->pss_err = e;
			return e;
		}
		out->pss = r.pss;
		out->uss = smaps_uss(&r);
		out->swap_pss = r.swap_pss;
	}
	out->have |= SAMPLE_PSS;
	out->pss_read_us = (mono_ns() - t0) / 1000;
	return 0;
}

void sampler_use_set(struct sampler *s, struct procset *set)
{
	s->set = set;
}

/* Whether the context counters are due at now (stat, io), and the next deadlines. For
 * a set of n members a round of stat reads costs about n x 5 us: rounds come at most
 * every n ms (up to a second), so that they stay under about 0.5% of a CPU however
 * large the set (a 1,000-process tree: once a second). */
static void context_due(struct sampler *s, int64_t now, size_t members, int *stat, int *io)
{
	int64_t every = s->stat_every_ns;
	if ((int64_t)members * NS_PER_MS > every)
		every = (int64_t)members * NS_PER_MS > NS_PER_S ? NS_PER_S
							       : (int64_t)members * NS_PER_MS;
	*stat = now >= s->stat_next_ns;
	if (*stat)
		s->stat_next_ns = now + every;
	*io = now >= s->io_next_ns;
	if (*io)
		s->io_next_ns = now + IO_EVERY_NS;
}

static void put_context(struct sample *out, const struct proc_stat *st, int have_stat,
			const struct proc_io *io, int have_io)
{
	if (have_stat) {
		out->have |= SAMPLE_CPU;
		out->cpu_user_ns = proc_ticks_ns(st->utime);
		out->cpu_sys_ns = proc_ticks_ns(st->stime);
		out->minflt = st->minflt;
		out->majflt = st->majflt;
	}
	if (have_io) {
		out->have |= SAMPLE_IO;
		out->read_bytes = io->read_bytes;
		out->write_bytes = io->write_bytes;
	}
}

/* A single process's counters, where due. A failed read keeps the last figures (io
 * that is not permitted stays unknown). */
static void read_context(struct sampler *s, int64_t now, struct sample *out)
{
	int stat, io;
	struct proc_stat st;
	struct proc_io pio;
	context_due(s, now, 1, &stat, &io);
	if (stat && proc_reader_read_stat(&s->proc, &st) == 0) {
		s->stat_last = st;
		s->have_stat = 1;
	}
	if (io && proc_reader_read_io(&s->proc, &pio) == 0) {
		s->io_last = pio;
		s->have_io = 1;
	}
	put_context(out, &s->stat_last, s->have_stat, &s->io_last, s->have_io);
}

/* The set's totals as a process status. -ESRCH: the set is empty or its cgroup gone. */
static int read_set(struct sampler *s, int64_t now, struct proc_status *ps,
		    struct proc_stat *st, struct proc_io *io, int *have_stat, int *have_io)
{
	struct procset_totals t;
	context_due(s, now, s->set->n, &s->set->read_stat, &s->set->read_io);
	int e = procset_read(s->set, &t);
	if (e < 0)
		return e == -ENODEV ? -ESRCH : e;
	memset(ps, 0, sizeof(*ps));
	ps->mem = t.mem;
	ps->threads = t.threads;
	s->nprocs = t.nprocs;
	memset(st, 0, sizeof(*st));
	st->minflt = t.minflt;
	st->majflt = t.majflt;
	st->utime = t.utime;
	st->stime = t.stime;
	io->read_bytes = t.read_bytes;
	io->write_bytes = t.write_bytes;
	*have_stat = t.have_stat;
	*have_io = t.have_io;
	return 0;
}

#define MEMINFO_EVERY_NS (100 * NS_PER_MS)

int sampler_read(struct sampler *s, int64_t now, struct sample *out)
{
	struct proc_status ps;
	struct proc_stat set_stat;
	memset(&set_stat, 0, sizeof(set_stat));
	struct proc_io set_io = { 0, 0, 0, 0 };
	int set_have_stat = 0, set_have_io = 0;
	int e = s->set ? read_set(s, now, &ps, &set_stat, &set_io, &set_have_stat, &set_have_io)
		       : proc_reader_read(&s->proc, &ps);
	if (e < 0)
		return e;
	if (!s->set) {
		strlcpy_rsw(s->name, ps.name, sizeof(s->name));
		s->ppid = ps.ppid;
	}
	/* The host's available memory moves slowly next to 1 kHz sampling, and costs as
	 * much to read as a process's status: at most every MEMINFO_EVERY_NS. */
	if (now >= s->mem_next_ns && rfile_read(&s->meminfo) == 0) {
		meminfo_parse(s->meminfo.buf, s->meminfo.len, &s->mem_last);
		s->mem_next_ns = now + MEMINFO_EVERY_NS;
	}
	const struct meminfo mi = s->mem_last;
	memset(out, 0, sizeof(*out));
	out->mem = ps.mem;
	out->threads = ps.threads;
	out->mem_available = mi.available;
	if (s->set)
		put_context(out, &set_stat, set_have_stat, &set_io, set_have_io);
	else if (s->pid)
		read_context(s, now, out);
	if (s->cg)
		read_cgroup(s, out);
	s->gpu_fresh = 0;
	if (s->nvml)
		take_gpus(s, now, out);
	read_psi(s, now);
	put_psi(s, out);
	return 0;
}

void sampler_close(struct sampler *s)
{
	proc_reader_close(&s->proc);
	rfile_close(&s->meminfo);
	smaps_reader_close(&s->smaps);
	if (s->psi_host_open)
		psi_reader_close(&s->psi_host);
	if (s->psi_cg_open)
		psi_reader_close(&s->psi_cg);
	s->psi_host_open = s->psi_cg_open = 0;
}
