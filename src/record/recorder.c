#include "record/recorder.h"
#include "base/buf.h"
#include "base/clock.h"
#include "base/parse.h"
#include "base/util.h"
#include "record/sampler.h"
#include "record/target.h"
#include "render/live.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#define FLUSH_EVERY_NS NS_PER_S

enum stop_reason { RUNNING, TARGET_ENDED, SIGNALED, DURATION };

struct recorder {
	const struct record_opts *opts;
	const struct record_target *target;
	struct store *st;
	struct run *run;
	int sigfd, timerfd;
	struct sampler sampler;
	int64_t start_mono;
	int64_t last_flush;
	unsigned every, since_live;
	enum stop_reason stop;
	int sampler_open;	/* sampler needs closing */
	int store_error;	/* the last flush error, reported once */
	struct buf line;
};

void recorder_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
}

static void flush(struct recorder *rc)
{
	int e = store_flush(rc->st, rc->run);
	if (e < 0 && e != rc->store_error && rc->opts->live)
		fprintf(rc->opts->live, "rsswatch: cannot write samples yet (%s); keeping them "
			"in memory and trying again\n", e == -EBUSY ? "database busy"
							    : store_errmsg(rc->st));
	rc->store_error = e;
	rc->last_flush = mono_ns();
}

/* Takes one sample. Returns 0, or -ESRCH when the target is gone. */
static int take_sample(struct recorder *rc)
{
	struct sample s;
	int64_t now = mono_ns();
	int e = sampler_read(&rc->sampler, &s);
	if (e < 0)
		return e;
	s.elapsed_ns = now - rc->start_mono;

	struct run *r = rc->run;
	int64_t t = r->started_at + s.elapsed_ns;
	uint64_t peak = s.hwm > s.rss ? s.hwm : s.rss;
	if (peak > r->peak_rss) {
		r->peak_rss = peak;
		r->peak_rss_at = t;
	}
	r->samples++;
	r->sum_rss += (double)s.rss;
	r->last_rss = s.rss;
	r->last_at = t;
	store_add_sample(rc->st, r->id, &s);

	if (rc->opts->live && !rc->opts->quiet && ++rc->since_live >= rc->every) {
		rc->since_live = 0;
		buf_reset(&rc->line);
		live_line(&rc->line, t, &s);
		buf_putc(&rc->line, '\n');
		fputs(buf_str(&rc->line), rc->opts->live);
	}
	if (now - rc->last_flush >= FLUSH_EVERY_NS)
		flush(rc);
	return 0;
}

/* The target has exited (or is a zombie): find out how. */
static void target_ended(struct recorder *rc)
{
	struct run *r = rc->run;
	int ws = 0, e;
	/* A non-child's status is known once its parent reaps it; give that parent a
	 * moment, then say we do not know rather than guess. */
	for (int tries = 0; ; tries++) {
		e = pidfd_exit_status(rc->target->pidfd, rc->target->is_child, &ws);
		if (e != -EAGAIN || tries >= 200)
			break;
		poll(NULL, 0, 10);
	}
	r->ended_at = real_ns();
	if (e < 0) {
		strlcpy_rsw(r->outcome, OUTCOME_EXITED, sizeof(r->outcome));
		r->exit_code = -1;
	} else if (WIFSIGNALED(ws)) {
		strlcpy_rsw(r->outcome, OUTCOME_SIGNALED, sizeof(r->outcome));
		r->signal = WTERMSIG(ws);
	} else {
		strlcpy_rsw(r->outcome, OUTCOME_EXITED, sizeof(r->outcome));
		r->exit_code = WEXITSTATUS(ws);
	}
	rc->stop = TARGET_ENDED;
}

static void handle_signal(struct recorder *rc)
{
	struct signalfd_siginfo si;
	while (read(rc->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (!rc->target->is_child) {
			rc->stop = SIGNALED;
			continue;
		}
		/* A launched command: pass the signal on and record until it ends. A signal
		 * from the terminal (SI_KERNEL) reached the command's process group already;
		 * sending it again would deliver it twice. */
		if (si.ssi_code != SI_KERNEL)
			kill(rc->target->pid, (int)si.ssi_signo);
	}
}

static int setup(struct recorder *rc)
{
	int e = sampler_open(&rc->sampler, rc->target->pid);
	if (e < 0)
		return e;
	rc->sampler_open = 1;
	rc->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (rc->timerfd < 0)
		return -errno;
	/* Absolute deadlines start + k * interval: late wake-ups never accumulate. */
	int64_t first = rc->start_mono + rc->opts->interval_ns;
	struct itimerspec its = {
		.it_interval = { (time_t)(rc->opts->interval_ns / NS_PER_S),
				 (long)(rc->opts->interval_ns % NS_PER_S) },
		.it_value = { (time_t)(first / NS_PER_S), (long)(first % NS_PER_S) },
	};
	if (timerfd_settime(rc->timerfd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
		return -errno;
	return 0;
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

int record(const struct record_opts *opts, const struct record_target *target, int sigfd,
	   struct store *st, struct run *run)
{
	struct recorder rc;
	memset(&rc, 0, sizeof(rc));
	rc.opts = opts;
	rc.target = target;
	rc.st = st;
	rc.run = run;
	rc.sigfd = sigfd;
	rc.timerfd = -1;
	rc.start_mono = mono_ns();
	rc.last_flush = rc.start_mono;
	rc.every = opts->every;
	if (!rc.every)
		rc.every = opts->interval_ns >= NS_PER_S ? 1 : (unsigned)(NS_PER_S / opts->interval_ns);
	rc.since_live = rc.every - 1;	/* the first sample gets a line */

	int e = setup(&rc);
	if (e == 0 && take_sample(&rc) == -ESRCH)
		target_ended(&rc);	/* ended before the first sample */

	while (e == 0 && rc.stop == RUNNING) {
		struct pollfd pfd[3] = {
			{ rc.timerfd, POLLIN, 0 },
			{ target->pidfd, POLLIN, 0 },
			{ sigfd, POLLIN, 0 },
		};
		int n = poll(pfd, 3, poll_timeout_ms(&rc));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			e = -errno;
			break;
		}
		if (pfd[2].revents & POLLIN)
			handle_signal(&rc);
		if (pfd[1].revents & (POLLIN | POLLHUP)) {
			target_ended(&rc);
			break;
		}
		if (pfd[0].revents & POLLIN) {
			uint64_t ticks;
			if (read(rc.timerfd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN) {
				e = -errno;
				break;
			}
			/* -ESRCH: a zombie already; its pidfd becomes readable at once. */
			if (take_sample(&rc) == -ESRCH && rc.stop == RUNNING) {
				poll(&pfd[1], 1, 1000);
				target_ended(&rc);
			}
		}
		if (rc.stop == RUNNING && opts->duration_ns &&
		    mono_ns() - rc.start_mono >= opts->duration_ns)
			rc.stop = DURATION;
	}

	if (rc.stop == SIGNALED || rc.stop == DURATION || (e < 0 && rc.stop == RUNNING)) {
		strlcpy_rsw(run->outcome, OUTCOME_STOPPED, sizeof(run->outcome));
		run->ended_at = real_ns();
	}
	int fe;
	for (int tries = 0; (fe = store_run_finish(st, run)) == -EBUSY && tries < 5; tries++)
		;
	if (fe < 0 && e == 0)
		e = fe;
	if (rc.timerfd >= 0)
		close(rc.timerfd);
	if (rc.sampler_open)
		sampler_close(&rc.sampler);
	buf_release(&rc.line);
	return e;
}
