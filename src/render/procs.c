#include "render/procs.h"
#include "base/fmt.h"
#include "base/parse.h"
#include "render/live.h"

#include <stdio.h>
#include <string.h>

int run_is_set(const struct run *r)
{
	return r->tree || (r->mode && strcmp(r->mode, "cgroup") == 0);
}

const char *peak_source_words(const char *src)
{
	static const struct {
		const char *source, *words;
	} words[] = {
		{ PEAK_FROM_SAMPLE, "from a sample" },
		{ PEAK_FROM_HWM, "from VmHWM" },
		{ PEAK_FROM_EXIT, "from the exit record" },
		{ PEAK_FROM_WAIT, "from wait4" },
		{ PEAK_FROM_OOM, "from the OOM report" },
		{ PEAK_FROM_PAGES, "from the kernel's page counts" },
	};
	for (size_t i = 0; src && i < sizeof(words) / sizeof(words[0]); i++)
		if (strcmp(src, words[i].source) == 0)
			return words[i].words;
	return NULL;
}

const char *run_peak_from(const struct run *r, uint64_t max_sampled)
{
	const char *from = peak_source_words(r->peak_source);
	if (from)
		return from;
	if (r->oom_at && r->peak_rss_at == r->oom_at && r->peak_rss > max_sampled)
		return peak_source_words(PEAK_FROM_OOM);
	if (max_sampled && r->peak_rss > max_sampled)
		return peak_source_words(PEAK_FROM_HWM);
	return NULL;
}

void run_peak_words(struct buf *b, const struct run *r, uint64_t max_sampled)
{
	char a[32];
	const char *from = run_peak_from(r, max_sampled);
	if (max_sampled && r->peak_rss > max_sampled)
		buf_printf(b, "highest sample %s; ", fmt_bytes(a, sizeof(a), max_sampled));
	buf_printf(b, "peak %s", fmt_bytes(a, sizeof(a), r->peak_rss > max_sampled ? r->peak_rss : max_sampled));
	if (from)
		buf_printf(b, " %s", from);
}

void proc_ended_words(struct buf *b, const struct proc_summary *p)
{
	char sig[32];
	if (strcmp(p->ended, PROC_EXITED) == 0 && p->exit_code >= 0)
		buf_printf(b, "exited %d", p->exit_code);
	else if (strcmp(p->ended, PROC_SIGNALED) == 0 && p->signal > 0)
		buf_printf(b, "killed by %s", signal_name(p->signal, sig, sizeof(sig)));
	else if (strcmp(p->ended, PROC_OOM_KILLED) == 0)
		buf_puts(b, "OOM-killed");
	else if (p->ended[0])
		buf_put_printable(b, p->ended);	/* "exited", "running", "gone", or newer words */
	else
		buf_puts(b, "-");
}

/* s for a table cell of width columns: printable, cut with "..." when longer (each byte
 * of UTF-8 counts as a column: process names are short and mostly ASCII). */
static void cell(struct buf *b, const char *s, size_t width)
{
	struct buf t = { 0 };
	buf_put_printable(&t, s);
	if (t.len > width) {
		t.len = width > 3 ? width - 3 : 0;
		buf_puts(&t, "...");
	}
	buf_printf(b, "%-*s", (int)width, buf_str(&t));
	buf_release(&t);
}

/* How the processes left out of the table ended, counted: "150 exited 0, 3 gone". */
static void ended_counts(struct buf *b, const struct proc_summary *p, size_t n)
{
	static const char *const kinds[] = { "exited 0", "exited non-zero", "killed by a signal",
					     "OOM-killed", "still running", "gone",
					     "moved out of the cgroup", "other" };
	size_t cnt[sizeof(kinds) / sizeof(kinds[0])] = { 0 };
	for (size_t i = 0; i < n; i++) {
		const char *e = p[i].ended;
		size_t k = strcmp(e, PROC_EXITED) == 0 ? (p[i].exit_code == 0 ? 0 : 1)
			 : strcmp(e, PROC_SIGNALED) == 0 ? 2
			 : strcmp(e, PROC_OOM_KILLED) == 0 ? 3
			 : strcmp(e, PROC_RUNNING) == 0 ? 4
			 : strcmp(e, PROC_GONE) == 0 ? 5
			 : strcmp(e, PROC_LEFT) == 0 ? 6 : 7;
		cnt[k]++;
	}
	const char *sep = "";
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		if (!cnt[k])
			continue;
		buf_printf(b, "%s%zu %s", sep, cnt[k], kinds[k]);
		sep = ", ";
	}
}

void procs_rest_words(struct buf *b, const struct proc_summary *p, size_t n, const char *sep)
{
	char v[32];
	/* Largest first: the first has the largest peak of them. Their peaks are not
	 * added up: they came at different times (a build's compilers one after another),
	 * so their sum says nothing of what they held at once. */
	buf_printf(b, "%zu more process%s: ", n, n == 1 ? "" : "es");
	if (n == 1)
		buf_printf(b, "peak %s", fmt_bytes(v, sizeof(v), p[0].peak_rss));
	else
		buf_printf(b, "the largest of them peaked at %s",
			   fmt_bytes(v, sizeof(v), p[0].peak_rss));
	buf_printf(b, "%s(", sep);
	ended_counts(b, p, n);
	buf_putc(b, ')');
}

const char *proc_cpu_words(char *v, size_t n, const struct proc_summary *p)
{
	if (p->cpu_user_ns < 0 || p->cpu_sys_ns < 0) {
		snprintf(v, n, "-");
		return v;
	}
	double s = (double)(p->cpu_user_ns + p->cpu_sys_ns) / NS_PER_S;
	snprintf(v, n, s < 100 ? "%.2f" : s < 10000 ? "%.1f" : "%.0f", s);
	return v;
}

const char *proc_count_words(char *v, size_t n, int64_t count)
{
	if (count < 0)
		snprintf(v, n, "-");
	else if (count < 1000000)
		snprintf(v, n, "%lld", (long long)count);
	else if (count < 1000000000)
		snprintf(v, n, "%.1fM", (double)count / 1e6);
	else
		snprintf(v, n, "%.1fG", (double)count / 1e9);
	return v;
}

void procs_table(struct buf *b, const struct proc_summary *p, size_t n, size_t top)
{
	char st[32], en[32], v[32], cpu[32], maj[32];
	int exact = 0, context = 0;
	if (!n)
		return;
	size_t shown = n < top ? n : top;
	buf_printf(b, "\nprocesses (%zu, largest peak first)\n", n);
	buf_printf(b, "  %7s  %-16s  %-9s  %-9s  %10s   %6s  %6s  %s\n", "PID", "COMMAND", "START", "END",
		   "PEAK", "CPU s", "MAJFLT", "ENDED");
	for (size_t i = 0; i < shown; i++) {
		int x = peak_is_exact(p[i].peak_source);
		exact |= x;
		context |= p[i].cpu_user_ns >= 0 || p[i].majflt >= 0;
		buf_printf(b, "  %7d  ", (int)p[i].pid);
		cell(b, p[i].comm, 16);
		snprintf(st, sizeof(st), "+%s", fmt_duration(v, sizeof(v), p[i].first_ns));
		if (p[i].end_ns >= 0)
			snprintf(en, sizeof(en), "+%s", fmt_duration(v, sizeof(v), p[i].end_ns));
		else
			snprintf(en, sizeof(en), "-");
		buf_printf(b, "  %-9s  %-9s  %10s%c  %6s  %6s  ", st, en,
			   fmt_bytes(v, sizeof(v), p[i].peak_rss), x ? '*' : ' ',
			   proc_cpu_words(cpu, sizeof(cpu), &p[i]),
			   proc_count_words(maj, sizeof(maj), p[i].majflt));
		proc_ended_words(b, &p[i]);
		buf_putc(b, '\n');
	}
	if (shown < n) {
		buf_puts(b, "  ... and ");
		procs_rest_words(b, p + shown, n - shown, "\n      ");
		buf_putc(b, '\n');
	}
	if (exact)
		buf_puts(b, "  * exact peak (exit record, wait4 or OOM report); the others are sampled\n");
	if (context)
		buf_puts(b, "  CPU s: user and system time over the process's life; MAJFLT: page "
			    "faults that waited for I/O\n");
}

/* "python3 (pid 5123) at +1.2s, anon-rss 199.6 MiB" */
static void kill_words(struct buf *b, const struct run *r, const struct oom_kill *k)
{
	char t[32], v[32];
	buf_put_printable(b, k->comm[0] ? k->comm : "?");
	buf_printf(b, " (pid %d) at +%s", (int)k->pid, fmt_duration(t, sizeof(t), k->t - r->started_at));
	if (k->anon_rss)
		buf_printf(b, ", anon-rss %s", fmt_bytes(v, sizeof(v), k->anon_rss));
}

/* The kills oom_kills_words names: all, or all but the target's own when its outcome
 * says it already. Sets *first and *largest (by anon-rss) among them; returns how many. */
/* The run ended with its target's OOM kill: that kill is told by the outcome. A -g run
 * (no target process) ended oom_killed tells its kills here. */
static int target_oom_killed(const struct run *r)
{
	return strcmp(r->outcome, OUTCOME_OOM_KILLED) == 0 && r->pid > 0;
}

static size_t named_kills(const struct run *r, const struct oom_kill *k, size_t n,
			  const struct oom_kill **first, const struct oom_kill **largest)
{
	int root_killed = target_oom_killed(r);
	size_t named = 0;
	*first = *largest = NULL;
	for (size_t i = 0; i < n; i++) {
		if (root_killed && k[i].pid == r->pid)
			continue;
		named++;
		if (!*first)
			*first = &k[i];
		if (!*largest || k[i].anon_rss > (*largest)->anon_rss)
			*largest = &k[i];
	}
	return named;
}

size_t oom_kills_other(const struct run *r, const struct oom_kill *k, size_t n)
{
	const struct oom_kill *first, *largest;
	size_t named = named_kills(r, k, n, &first, &largest);
	/* Kills counted (cgroup or vmstat counters) whose report the kernel log lacked. */
	size_t counted = r->oom_kills > 0 ? (size_t)r->oom_kills : 0;
	if (target_oom_killed(r) && counted)
		counted--;
	return counted > named ? counted : named;
}

void oom_kills_words(struct buf *b, const struct run *r, const struct oom_kill *k, size_t n)
{
	char t[32];
	int root_killed = target_oom_killed(r);
	const struct oom_kill *first, *largest;
	size_t named = named_kills(r, k, n, &first, &largest);
	size_t total = oom_kills_other(r, k, n);
	if (!total)
		return;
	const char *other = root_killed ? " other" : "";
	buf_printf(b, "%zu%s process%s OOM-killed", total, other, total == 1 ? "" : "es");
	/* the rest were counted by the cgroup: their kernel lines were lost or unread */
	if (named < total)
		buf_printf(b, named ? " (the kernel log named %zu)" : " (the kernel log named "
			   "none)", named);
	if (!named)
		return;
	if (total == 1) {
		buf_puts(b, ": ");
	} else if (first == largest) {
		buf_puts(b, named == 1 ? ", one named: " : ", the first and largest: ");
	} else {
		buf_printf(b, ", the first at +%s; the largest: ",
			   fmt_duration(t, sizeof(t), first->t - r->started_at));
	}
	kill_words(b, r, largest);
}
