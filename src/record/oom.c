#include "record/oom.h"
#include "base/buf.h"
#include "base/clock.h"
#include "base/util.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

void oom_kill_detail(const struct kmsg_oom *k, const char *memcg, char *out, size_t n)
{
	struct buf b = { 0 };
	static const struct {
		unsigned bit;
		const char *name;
		size_t off;
	} f[] = {
		{ KMSG_F_ANON_RSS, "anon_rss", offsetof(struct kmsg_oom, anon_rss) },
		{ KMSG_F_FILE_RSS, "file_rss", offsetof(struct kmsg_oom, file_rss) },
		{ KMSG_F_SHMEM_RSS, "shmem_rss", offsetof(struct kmsg_oom, shmem_rss) },
		{ KMSG_F_TOTAL_VM, "total_vm", offsetof(struct kmsg_oom, total_vm) },
		{ KMSG_F_PGTABLES, "pgtables", offsetof(struct kmsg_oom, pgtables) },
	};
	for (size_t i = 0; i < ARRAY_SIZE(f); i++) {
		if (!(k->have & f[i].bit))
			continue;
		uint64_t v = *(const uint64_t *)((const char *)k + f[i].off);
		buf_printf(&b, "%s%s=%llukB", b.len ? " " : "", f[i].name,
			   (unsigned long long)(v / 1024));
	}
	buf_printf(&b, "%smemcg=%s", b.len ? " " : "", memcg && memcg[0] ? memcg : "-");
	buf_printf(&b, " scope=%s", !(k->have & KMSG_F_SCOPE) ? "-" : k->memcg ? "cgroup" : "host");
	if (k->comm[0])
		buf_printf(&b, " comm=%s", k->comm);
	strlcpy_rsw(out, buf_str(&b), n);
	buf_release(&b);
}

static const char *kmsg_why(const struct oom_evidence *ev)
{
	if (ev->kmsg_err == -EPERM || ev->kmsg_err == -EACCES)
		return "kernel log not readable";
	if (ev->kmsg_err)
		return "kernel log not available";
	if (ev->kmsg_lost)
		return "kernel log records were lost";
	return NULL;
}

void oom_decide(const struct oom_evidence *ev, struct oom_verdict *out)
{
	memset(out, 0, sizeof(*out));
	if (ev->signal != SIGKILL)
		return;
	const char *why = kmsg_why(ev);
	if (ev->kill_seen) {
		out->oom = true;
		out->event_kind = "oom_kill";
		oom_kill_detail(&ev->kill, ev->memcg, out->detail, sizeof(out->detail));
		strlcpy_rsw(out->memcg, ev->memcg, sizeof(out->memcg));
		out->rss_known = (ev->kill.have & KMSG_F_ANON_RSS) != 0;
		out->anon_rss = ev->kill.anon_rss;
		if (!ev->kill.memcg && (ev->kill.have & KMSG_F_SCOPE))
			strlcpy_rsw(out->note, "the host ran out of memory", sizeof(out->note));
		return;
	}
	if (why && ev->cg_known && ev->cg_delta > 0) {
		/* No log line to name the victim, but its own cgroup counted the kill. */
		out->oom = true;
		out->event_kind = "oom_kill";
		snprintf(out->detail, sizeof(out->detail),
			 "evidence=cgroup cgroup_oom_kill=+%llu memcg=%s kmsg=%s",
			 (unsigned long long)ev->cg_delta, ev->cg_path ? ev->cg_path : "-",
			 ev->kmsg_err ? "unreadable" : "lost");
		if (ev->cg_path)
			strlcpy_rsw(out->memcg, ev->cg_path, sizeof(out->memcg));
		snprintf(out->note, sizeof(out->note),
			 "its memory cgroup counted %llu OOM kill%s meanwhile (%s)",
			 (unsigned long long)ev->cg_delta, ev->cg_delta == 1 ? "" : "s", why);
		return;
	}
	if (why) {
		if (ev->vm_known && ev->vm_delta > 0) {
			out->event_kind = "oom_suspect";
			snprintf(out->detail, sizeof(out->detail),
				 "evidence=host vmstat_oom_kill=+%llu kmsg=%s",
				 (unsigned long long)ev->vm_delta,
				 ev->kmsg_err ? "unreadable" : "lost");
			snprintf(out->note, sizeof(out->note),
				 "the host's OOM kill count rose by %llu meanwhile (%s): likely the "
				 "OOM killer", (unsigned long long)ev->vm_delta, why);
		} else if (!ev->vm_known && !ev->cg_known) {
			snprintf(out->note, sizeof(out->note),
				 "%s and no OOM kill counters: whether the OOM killer did it is "
				 "not known", why);
		}
		return;
	}
	/* The kernel log was read throughout and does not name the target. */
	uint64_t other = ev->cg_known && ev->cg_delta ? ev->cg_delta : ev->vm_known ? ev->vm_delta : 0;
	if (other)
		snprintf(out->note, sizeof(out->note),
			 "not the OOM killer: it killed %llu other process%s meanwhile",
			 (unsigned long long)other, other == 1 ? "" : "es");
}

void oom_watch_open(struct oom_watch *w, struct cg_reader *cg, int read_log)
{
	memset(w, 0, sizeof(*w));
	w->open = true;
	w->kmsg.fd = -1;
	w->kmsg_err = read_log ? kmsg_reader_open(&w->kmsg, 0) : -EPERM;
	w->vm_known = vmstat_read_oom_kill(&w->vm_start) == 0;
	w->cg = cg;
	struct cg_sample s;
	if (cg && cg_reader_read(cg, &s) == 0 && (s.have & CG_S_OOM_KILL)) {
		w->cg_known = true;
		w->cg_start = s.oom_kill;
	}
}

int oom_watch_fd(const struct oom_watch *w)
{
	return w->kmsg_err ? -1 : w->kmsg.fd;
}

void oom_watch_drain(struct oom_watch *w, oom_kill_cb cb, void *ctx)
{
	int e;
	if (w->kmsg_err)
		return;
	while ((e = kmsg_reader_next(&w->kmsg, &w->rec)) == 0 || e == -EINVAL) {
		struct kmsg_oom o;
		if (e < 0)
			continue;
		int64_t now = mono_ns();
		kmsg_clock_note(&w->clock, w->rec.usec, now);
		if (kmsg_oom_parse(w->rec.text, w->rec.text_len, &o) < 0)
			continue;
		if (o.kind == KMSG_OOM_CONTEXT) {
			w->ctx_pid = o.pid;
			strlcpy_rsw(w->ctx_memcg, o.oom_memcg, sizeof(w->ctx_memcg));
		} else if (o.kind == KMSG_OOM_KILLED) {
			/* usec is on printk's clock: carry it over to wall-clock time */
			int64_t ago = now - kmsg_clock_mono(&w->clock, w->rec.usec);
			int64_t t = real_ns() - (ago > 0 ? ago : 0);
			cb(ctx, &o, w->ctx_pid == o.pid ? w->ctx_memcg : "", t);
			w->ctx_pid = 0;	/* a later kill of the pid has a context of its own */
		}
	}
	if (e != -EAGAIN) {
		/* a read error: stop reading, and say the log was not available */
		kmsg_reader_close(&w->kmsg);
		w->kmsg_err = e;
	}
}

void oom_watch_counters(struct oom_watch *w, struct oom_evidence *ev)
{
	uint64_t v;
	struct cg_sample s;
	ev->kmsg_err = w->kmsg_err;
	ev->kmsg_lost = w->kmsg.lost;
	ev->vm_known = w->vm_known && vmstat_read_oom_kill(&v) == 0;
	ev->vm_delta = ev->vm_known && v > w->vm_start ? v - w->vm_start : 0;
	ev->cg_known = w->cg_known && cg_reader_read(w->cg, &s) == 0 && (s.have & CG_S_OOM_KILL);
	ev->cg_delta = ev->cg_known && s.oom_kill > w->cg_start ? s.oom_kill - w->cg_start : 0;
}

void oom_watch_close(struct oom_watch *w)
{
	kmsg_reader_close(&w->kmsg);
	w->open = false;
}
