#include "render/live.h"
#include "base/fmt.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

void live_line(struct buf *b, int64_t realtime_ns, const struct sample *s)
{
	char t[16], rss[32], hwm[32], avail[32], anon[16], file[16], shmem[16];
	enum unit u = unit_for(s->rss);
	if (u == UNIT_B)
		u = UNIT_KIB;
	buf_printf(b, "%s rss %s %s (anon %s, file %s, shmem %s) hwm %s",
		   fmt_hms(t, sizeof(t), realtime_ns),
		   fmt_in_unit(rss, sizeof(rss), s->rss, u), unit_name(u),
		   fmt_in_unit(anon, sizeof(anon), s->anon, u),
		   fmt_in_unit(file, sizeof(file), s->file, u),
		   fmt_in_unit(shmem, sizeof(shmem), s->shmem, u),
		   fmt_bytes(hwm, sizeof(hwm), s->hwm));
	if (s->swap)
		buf_printf(b, " swap %s", fmt_bytes(avail, sizeof(avail), s->swap));
	if (s->have & SAMPLE_GPU)
		buf_printf(b, " gpu %s", fmt_bytes(avail, sizeof(avail), s->gpu));
	buf_printf(b, " avail %s", fmt_bytes(avail, sizeof(avail), s->mem_available));
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

void outcome_words(struct buf *b, const struct run *r)
{
	char sig[32];
	if (strcmp(r->outcome, OUTCOME_EXITED) == 0) {
		if (r->exit_code >= 0)
			buf_printf(b, "exited with %d", r->exit_code);
		else
			buf_puts(b, "exited (status not known: its parent had not reaped it)");
	} else if (strcmp(r->outcome, OUTCOME_SIGNALED) == 0) {
		buf_printf(b, "killed by %s", signal_name(r->signal, sig, sizeof(sig)));
	} else if (strcmp(r->outcome, OUTCOME_OOM_KILLED) == 0) {
		buf_puts(b, "killed by the OOM killer");
	} else if (strcmp(r->outcome, OUTCOME_STOPPED) == 0) {
		buf_puts(b, "still running (recording stopped)");
	} else if (strcmp(r->outcome, OUTCOME_INTERRUPTED) == 0) {
		buf_puts(b, "recording interrupted (the recorder ended without finishing it)");
	} else if (strcmp(r->outcome, OUTCOME_RUNNING) == 0) {
		buf_puts(b, "recording");
	} else {
		buf_puts(b, r->outcome);
	}
}
