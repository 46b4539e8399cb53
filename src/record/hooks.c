#include "record/hooks.h"
#include "base/clock.h"
#include "base/parse.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

void hooks_init(struct hooks *h)
{
	memset(h, 0, sizeof(*h));
	h->timeout_ns = HOOK_TIMEOUT_DEFAULT_NS;
}

static char *var(const char *name, const char *value)
{
	size_t n = strlen(name), m = strlen(value);
	char *s = malloc(n + m + 2);
	if (!s)
		return NULL;
	memcpy(s, name, n);
	s[n] = '=';
	memcpy(s + n + 1, value, m + 1);
	return s;
}

char **hooks_env(char *const *base, const char *event, const struct hook_facts *f,
		 const char *db_path)
{
	size_t n = 0, k = 0;
	while (base && base[n])
		n++;
	char **env = calloc(n + 8, sizeof(*env));
	if (!env)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (strncmp(base[i], "RSSWATCH_", 9) == 0)
			continue;	/* only the event's own facts, never stale ones */
		if (!(env[k++] = strdup(base[i])))
			goto fail;
	}
	char num[32];
	if (!(env[k++] = var("RSSWATCH_EVENT", event)))
		goto fail;
	snprintf(num, sizeof(num), "%d", (int)f->pid);
	if (!(env[k++] = var("RSSWATCH_PID", num)))
		goto fail;
	snprintf(num, sizeof(num), "%lld", (long long)f->run);
	if (!(env[k++] = var("RSSWATCH_RUN", num)))
		goto fail;
	snprintf(num, sizeof(num), "%llu", (unsigned long long)f->rss);
	if (!(env[k++] = var("RSSWATCH_RSS_BYTES", num)))
		goto fail;
	if (f->limit) {
		snprintf(num, sizeof(num), "%llu", (unsigned long long)f->limit);
		if (!(env[k++] = var("RSSWATCH_LIMIT_BYTES", num)))
			goto fail;
	}
	if (f->comm && !(env[k++] = var("RSSWATCH_COMM", f->comm)))
		goto fail;
	if (db_path && !(env[k++] = var("RSSWATCH_DB", db_path)))
		goto fail;
	env[k] = NULL;
	return env;
fail:
	hooks_env_free(env);
	return NULL;
}

void hooks_env_free(char **env)
{
	if (!env)
		return;
	for (char **p = env; *p; p++)
		free(*p);
	free(env);
}

static void store_status(struct hooks *h, struct store *st, int64_t run_id,
			 struct hook_job *j, const char *status)
{
	char detail[160];
	snprintf(detail, sizeof(detail), "on=%s event=%s status=%s ms=%lld", j->on, j->event,
		 status, (long long)((mono_ns() - j->started) / NS_PER_MS));
	store_add_event(st, run_id, real_ns(), "hook", j->pid, detail);
	(void)h;
	j->pid = 0;
}

/* The --on-warn runs left out since the last one, in one event. */
static void say_suppressed(struct hooks *h, struct store *st, int64_t run_id)
{
	char detail[96];
	if (!h->suppressed)
		return;
	snprintf(detail, sizeof(detail), "on=warn status=suppressed count=%llu min_interval_s=%d",
		 (unsigned long long)h->suppressed, (int)(HOOK_MIN_INTERVAL_NS / NS_PER_S));
	store_add_event(st, run_id, real_ns(), "hook", 0, detail);
	h->suppressed = 0;
}

void hooks_fire(struct hooks *h, struct store *st, const char *event,
		const struct hook_facts *f)
{
	if (!h)
		return;
	int oom = strcmp(event, "oom_kill") == 0;
	const char *cmd = oom ? h->on_oom : h->on_warn;
	if (!cmd)
		return;
	char detail[160];
	if (!oom) {
		int64_t now = mono_ns();
		if (h->last_warn && now - h->last_warn < HOOK_MIN_INTERVAL_NS) {
			h->suppressed++;
			return;
		}
		say_suppressed(h, st, f->run);
		h->last_warn = now;
	}
	struct hook_job *j = NULL;
	for (size_t i = 0; i < HOOKS_MAX_RUNNING && !j; i++)
		if (!h->jobs[i].pid)
			j = &h->jobs[i];
	if (!j) {
		snprintf(detail, sizeof(detail), "on=%s event=%s status=skipped reason=%d still running",
			 oom ? "oom" : "warn", event, HOOKS_MAX_RUNNING);
		store_add_event(st, f->run, real_ns(), "hook", 0, detail);
		return;
	}
	/* Everything the child needs is made before the fork: the recorder has other
	 * threads, so the child may only make async-signal-safe calls before its exec. */
	char **env = hooks_env(environ, event, f, h->db_path);
	int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	char *argv[] = { "sh", "-c", (char *)cmd, NULL };
	pid_t pid = env && devnull >= 0 ? fork() : -1;
	if (pid == 0) {
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		struct sigaction dfl;
		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		sigaction(SIGPIPE, &dfl, NULL);	/* ignored here; an ignore would be inherited */
		setpgid(0, 0);	/* a timeout ends the command and all it started */
		dup2(devnull, 0);
		execve("/bin/sh", argv, env);
		_exit(127);
	}
	int err = errno;
	if (devnull >= 0)
		close(devnull);
	hooks_env_free(env);
	if (pid < 0) {
		snprintf(detail, sizeof(detail), "on=%s event=%s status=failed reason=%s",
			 oom ? "oom" : "warn", event, strerror(env ? err : ENOMEM));
		store_add_event(st, f->run, real_ns(), "hook", 0, detail);
		return;
	}
	setpgid(pid, pid);	/* also from here: no race with the first kill */
	j->pid = pid;
	j->on = oom ? "oom" : "warn";
	snprintf(j->event, sizeof(j->event), "%s", event);
	j->started = mono_ns();
	j->deadline = j->started + h->timeout_ns;
	j->termed = 0;
}

/* Looks at one running command once: reaps it, or signals it when overdue. Returns 1
 * while it still runs. */
static int check(struct hooks *h, struct store *st, int64_t run_id, struct hook_job *j)
{
	int ws;
	pid_t r = waitpid(j->pid, &ws, WNOHANG);
	char status[64];
	if (r == j->pid) {
		if (WIFEXITED(ws))
			snprintf(status, sizeof(status), "%d", WEXITSTATUS(ws));
		else
			snprintf(status, sizeof(status), "%s signal=%d",
				 j->termed ? "timeout" : "signal", WTERMSIG(ws));
		store_status(h, st, run_id, j, status);
		return 0;
	}
	if (r < 0) {	/* reaped elsewhere: nothing more to know */
		store_status(h, st, run_id, j, "unknown");
		return 0;
	}
	int64_t now = mono_ns();
	if (!j->termed && now >= j->deadline) {
		kill(-j->pid, SIGTERM);
		j->termed = 1;
	} else if (j->termed && now >= j->deadline + HOOK_KILL_GRACE_NS) {
		kill(-j->pid, SIGKILL);
	}
	return 1;
}

void hooks_poll(struct hooks *h, struct store *st, int64_t run_id)
{
	if (!h)
		return;
	for (size_t i = 0; i < HOOKS_MAX_RUNNING; i++)
		if (h->jobs[i].pid)
			check(h, st, run_id, &h->jobs[i]);
}

void hooks_finish(struct hooks *h, struct store *st, int64_t run_id)
{
	if (!h)
		return;
	say_suppressed(h, st, run_id);
	h->last_warn = 0;	/* a next run (--follow) starts afresh */
	for (;;) {
		int running = 0;
		for (size_t i = 0; i < HOOKS_MAX_RUNNING; i++)
			if (h->jobs[i].pid)
				running += check(h, st, run_id, &h->jobs[i]);
		if (!running)
			return;
		poll(NULL, 0, 5);
	}
}
