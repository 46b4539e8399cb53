/* The application's shared page (librsswatch): finding it in a way no other user can
 * slow, and storing its marks and counters within their bounds. Part of the recorder
 * (recorder_int.h). */
#include "record/recorder_int.h"
#include "base/clock.h"
#include "base/fmt.h"
#include "base/parse.h"
#include "base/sysroot.h"
#include "base/util.h"
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

static void say_lost_marks(struct recorder *rc, int64_t elapsed)
{
	uint64_t n = rc->marks_lost + rc->marks_over - rc->marks_lost_said;
	if (!n)
		return;
	rec_say(rc, RECORDER_NOTE, "rsswatch: %llu marks of pid %d were not stored (more than "
		"256 between two samples, or more than %d a second)%s",
		(unsigned long long)n, (int)rc->target->pid, MARKS_PER_S,
		rc->marks_lost_said ? " since the last report" :
		"; further losses are reported at most every 10s");
	rc->marks_lost_said = rc->marks_lost + rc->marks_over;
	rc->marks_lost_say_at = elapsed + LOST_SAY_NS;
}

static void on_mark(void *ctx, long long realtime_ns, const char *label)
{
	struct recorder *rc = ctx;
	if (rc->mark_tokens < 1) {
		rc->marks_over++;
		return;
	}
	rc->mark_tokens -= 1;
	store_add_mark(rc->st, rc->run->id, realtime_ns, label);
}

/* The owner of a process: the owner of its /proc directory (its effective uid). */
static uid_t target_owner(pid_t pid)
{
	char path[64];
	struct stat sb;
	if (sysroot_path(path, sizeof(path), "/proc/%d", (int)pid) < 0 || stat(path, &sb) < 0)
		return (uid_t)-1;
	return sb.st_uid;
}

static const char *file_type_words(mode_t type)
{
	return type == S_IFREG ? "file" : type == S_IFDIR ? "directory" :
	       type == S_IFLNK ? "symbolic link" : type == S_IFIFO ? "FIFO" :
	       type == S_IFSOCK ? "socket" : "special file";
}

/* A launched command: who it is and who owns it, read now while it lives (a zombie
 * too), so that its page can be read after it has been reaped (rec_page_finish). */
void rec_page_init(struct recorder *rc)
{
	pid_t pid = rc->target->pid;
	if (!rc->target->is_child || pid <= 0)
		return;
	rc->page_owner = target_owner(pid);
	rc->page_who_ok = rc->page_owner != (uid_t)-1 &&
			  client_ident_read(pid, &rc->page_who) == 0;
}

/* Looks for the application's page (librsswatch) until it is found. Called from the
 * loop after a sample, never within one, at most every PAGE_RETRY_NS (while the page
 * directory changes; PAGE_SQUAT_RETRY_NS once the page's name is found taken), and
 * each look is bounded whatever other users make in the directory
 * (client_page_find: one fstatat, or one bounded read of the target's memory map). */
void rec_find_page(struct recorder *rc)
{
	pid_t pid = rc->target->pid;
	int64_t elapsed = mono_ns() - rc->start_mono;
	struct client_find f;
	if (rc->page || pid <= 0 || elapsed < rc->page_next_try)
		return;
	rc->page_next_try = elapsed + PAGE_RETRY_NS;
	if (!client_page_dir_changed(&rc->page_dir))
		return;
	/* The owner now: a launched command may have changed its user (setpriv, su) */
	uid_t owner = target_owner(pid);
	if (owner != (uid_t)-1)
		rc->page_owner = owner;
	int e = client_page_find(pid, owner, &f, &rc->page);
	if (f.squatted)
		rc->page_next_try = elapsed + PAGE_SQUAT_RETRY_NS;
	if (f.squatted && (e == 0 || e == -EEXIST) && !rc->squat_warned) {
		rc->squat_warned = 1;
		rec_say(rc, RECORDER_NOTE, "rsswatch: warning: %s took the name of the shared page "
			"of pid %d (a %s of uid %u); %s",
			f.squat_uid == owner ? "the target's own user" : "another user", (int)pid,
			file_type_words(f.squat_type), (unsigned)f.squat_uid, e == 0 ?
			"its marks and counters are read from the page it made instead" :
			"its marks and counters cannot be read unless it makes another page");
	}
	if (f.capped && !rc->find_capped_warned) {
		rc->find_capped_warned = 1;
		rec_say(rc, RECORDER_NOTE, "rsswatch: warning: the memory map of pid %d is longer "
			"than %d KiB or names more than %d fallback pages: its shared page was "
			"looked for in the first part only", (int)pid, CLIENT_MAPS_MAX / 1024,
			CLIENT_CANDIDATES_MAX);
	}
}

/* Stores counter k's value when it is due (at most COUNTERS_PER_S rows a second;
 * final: the run's end, all that wait). */
static void store_counter(struct recorder *rc, size_t k, int64_t elapsed, int final)
{
	if (!rc->counter_dirty[k] ||
	    (!final && elapsed - rc->counter_at[k] < NS_PER_S / COUNTERS_PER_S))
		return;
	store_add_counter(rc->st, rc->run->id, elapsed, rc->counters[k].name, rc->counters[k].value);
	rc->counter_dirty[k] = 0;
	rc->counter_at[k] = elapsed;
	rc->counter_rows++;
}

/* The application's own marks and counters, once its page is found (rec_find_page).
 * final: the run's end (every counter's last value is stored). */
void rec_poll_client(struct recorder *rc, int64_t elapsed, int final)
{
	if (!rc->page)
		return;
	rc->mark_tokens += (double)(elapsed - rc->mark_tokens_at) * MARKS_PER_S / NS_PER_S;
	if (rc->mark_tokens > MARKS_BURST)
		rc->mark_tokens = MARKS_BURST;
	rc->mark_tokens_at = elapsed;
	uint64_t over = rc->marks_over;
	int lost = client_page_drain_marks(rc->page, on_mark, rc);
	if (lost > 0)
		rc->marks_lost += (uint64_t)lost;
	if ((lost > 0 || rc->marks_over > over) && elapsed >= rc->marks_lost_say_at)
		say_lost_marks(rc, elapsed);
	struct client_counter c[CLIENT_COUNTERS_MAX];
	size_t n = client_page_counters(rc->page, c, CLIENT_COUNTERS_MAX);
	uint64_t coalesced = rc->counters_coalesced;
	for (size_t i = 0; i < n; i++) {
		/* Stored when a value changes; readers carry it forward. */
		size_t k;
		for (k = 0; k < rc->ncounters; k++)
			if (strcmp(rc->counters[k].name, c[i].name) == 0)
				break;
		if (k < rc->ncounters && rc->counters[k].value == c[i].value)
			continue;
		if (k == rc->ncounters) {
			if (k == CLIENT_COUNTERS_MAX)
				continue;
			rc->ncounters++;
			rc->counter_at[k] = INT64_MIN / 2;	/* the first value: at once */
		} else if (rc->counter_dirty[k]) {
			rc->counters_coalesced++;	/* replaced before it was stored */
		}
		rc->counters[k] = c[i];
		rc->counter_dirty[k] = 1;
	}
	for (size_t k = 0; k < rc->ncounters; k++)
		store_counter(rc, k, elapsed, final);
	if (!coalesced && rc->counters_coalesced)
		rec_say(rc, RECORDER_NOTE, "rsswatch: counters of pid %d changed more than %d "
			"times a second: each is stored at most %d times a second, its last value "
			"always (the values in between are counted, not stored)", (int)rc->target->pid,
			COUNTERS_PER_S, COUNTERS_PER_S);
}

/* The application's page at the run's end: marks and counters written just before the
 * target ended are still in it; what was coalesced or lost is stored as events. */
void rec_page_finish(struct recorder *rc)
{
	struct run *run = rc->run;
	int64_t at = run->ended_at ? run->ended_at : real_ns();
	/* A launched command that ended before any look found its page left the page for
	 * us (RSW_PAGE_KEEP_ENV): its marks and counters are read now; release() removes
	 * the file. */
	if (!rc->page && rc->page_who_ok && rc->stop == TARGET_ENDED)
		client_page_find_of(rc->target->pid, rc->page_owner, &rc->page_who, NULL,
				    &rc->page);
	if (rc->page)
		rec_poll_client(rc, mono_ns() - rc->start_mono, 1);
	say_lost_marks(rc, 0);
	if (rc->counters_coalesced) {
		char detail[96];
		snprintf(detail, sizeof(detail), "coalesced=%llu stored=%llu per_s=%d",
			 (unsigned long long)rc->counters_coalesced,
			 (unsigned long long)rc->counter_rows, COUNTERS_PER_S);
		store_add_event(rc->st, run->id, at, "counters_coalesced", rc->target->pid, detail);
	}
	if (rc->marks_lost || rc->marks_over) {
		char detail[96];
		snprintf(detail, sizeof(detail), "count=%llu overrun=%llu over_rate=%llu",
			 (unsigned long long)(rc->marks_lost + rc->marks_over),
			 (unsigned long long)rc->marks_lost, (unsigned long long)rc->marks_over);
		store_add_event(rc->st, run->id, at, "marks_lost", rc->target->pid, detail);
	}
}
