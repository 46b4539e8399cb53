/* A synthetic run: a ramp to 600 MiB at 60 s, a spike, a fall, GPU and cgroup figures,
 * two marks (one label trying to inject a script) and two events. */
#ifndef RSW_TEST_SYNTH_H
#define RSW_TEST_SYNTH_H

#include <string.h>
#include "base/util.h"
#include "render/svg.h"

#define MIB (1024ULL * 1024)
#define NS 1000000000LL
#define T0 (1795919059LL * NS)

struct synth {
	struct run run;
	struct sample s[241];
	struct mark marks[3];
	struct event events[2];
};

static inline void synth_init(struct synth *y, int64_t id, const char *label, double scale)
{
	memset(y, 0, sizeof(*y));
	y->run.id = id;
	y->run.label = (char *)label;
	y->run.host = "host<1>";
	y->run.kernel = "6.18";
	y->run.target = "./bench --pw 12 \"<b>\"";
	y->run.mode = "command";
	y->run.pid = 4242;
	y->run.started_at = T0;
	y->run.ended_at = T0 + 120 * NS;
	y->run.interval_ns = NS / 2;
	y->run.samples = 241;
	strlcpy_rsw(y->run.outcome, OUTCOME_OOM_KILLED, sizeof(y->run.outcome));
	y->run.exit_code = -1;
	y->run.signal = 9;
	y->run.peak_gpu = -1;
	uint64_t peak = 0;
	double sum = 0;
	for (int i = 0; i <= 240; i++) {
		struct sample *s = &y->s[i];
		s->elapsed_ns = (int64_t)i * NS / 2;
		double mib = i <= 120 ? 5.0 * i : 600 - 2.0 * (i - 120);
		if (i == 150)
			mib = 900;	/* a one-sample spike */
		s->mem.rss = (uint64_t)(mib * scale * MIB);
		s->mem.anon = s->mem.rss / 10 * 8;
		s->mem.file = s->mem.rss / 10 * 1;
		s->mem.shmem = s->mem.rss - s->mem.anon - s->mem.file;
		s->mem.hwm = s->mem.rss > peak ? s->mem.rss : peak;
		s->have = SAMPLE_GPU | SAMPLE_CGROUP;
		s->gpu = (uint64_t)i * 2 * MIB;
		s->cgroup = s->mem.rss + 40 * MIB;
		if (s->mem.rss > peak) {
			peak = s->mem.rss;
			y->run.peak_rss_at = T0 + s->elapsed_ns;
		}
		sum += (double)s->mem.rss;
	}
	y->run.peak_rss = peak;
	y->run.sum_rss = sum;
	y->run.last_rss = y->s[240].mem.rss;
	y->run.peak_gpu = 480 * (int64_t)MIB;
	y->marks[0].t = T0 + 20 * NS;
	y->marks[0].label = "synthesis done";
	y->marks[1].t = T0 + 21 * NS;
	y->marks[1].label = "<script>alert(1)</script>";
	y->marks[2].t = T0 + 100 * NS;
	y->marks[2].label = "proving done";
	strlcpy_rsw(y->events[0].kind, "warn", sizeof(y->events[0].kind));
	y->events[0].t = T0 + 50 * NS;
	y->events[0].detail = "rss over 250M & rising";
	strlcpy_rsw(y->events[1].kind, "oom_kill", sizeof(y->events[1].kind));
	y->events[1].t = T0 + 120 * NS;
	y->events[1].pid = 4242;
	y->events[1].detail = "Killed process 4242 (bench)";
}

static inline struct chart_run chart_of(struct synth *y)
{
	struct chart_run c;
	memset(&c, 0, sizeof(c));
	c.run = &y->run;
	c.s = y->s;
	c.n = 241;
	c.marks = y->marks;
	c.nmarks = 3;
	c.events = y->events;
	c.nevents = 2;
	return c;
}

#endif
