/* The recorder's side of the client library's shared page (lib/page.h): find the page
 * of a process, check that it is safe to use, and read its counters and marks.
 *
 * The page belongs to the application and is written while we read it, possibly by a
 * buggy or hostile program while the recorder runs as root. So: the file is opened
 * without following symlinks and without blocking (a FIFO planted there cannot hang
 * us), it must be a regular file with one link, owned by the expected uid, mode 0600,
 * of exactly the page's size, with the expected magic and version; nothing read from it
 * is used as a length, index or pointer without being bounded first.
 *
 * Remaining risk: the owner can shrink the file while it is mapped; an access past the
 * new end raises SIGBUS. Each call re-checks the size with fstat first, which narrows
 * but cannot close that window. */
#ifndef RSW_SOURCE_CLIENT_H
#define RSW_SOURCE_CLIENT_H

#include <stddef.h>
#include <sys/types.h>

struct client_page;

struct client_counter {
	char name[48];		/* terminated; 1..47 bytes of [A-Za-z0-9_.:-] */
	long long value;
	int is_gauge;		/* 1: set with rsw_gauge_set; 0: a sum of rsw_counter_add */
};

/* Finds and maps the page of process pid whose owner must be uid. Its directory is
 * $RSSWATCH_SHM_DIR, else /dev/shm. Returns 0, -ENOENT (none yet, or still being
 * created: try again later), -EPERM (wrong owner, mode or file type, a symlink, more
 * than one link), -EPROTO (bad size, magic or version), other -errno (-EACCES when we
 * may not open it, -ENOMEM). *out is written only on success. */
int client_page_open(pid_t pid, uid_t uid, struct client_page **out);

/* Calls cb for each new mark since the last call, in ticket order; label is
 * terminated, at most 95 bytes, valid only during the call. The first call after open
 * delivers the marks still in the ring. Returns the number of marks lost since the last
 * call (>= 0): overwritten before we read them (the ring holds 256), or given up by
 * their writer. A mark whose writer is still writing stops the drain there and is
 * delivered by a later call; if it stays unfinished for over a second it is counted as
 * lost. Returns -EPROTO if the file was truncated. */
typedef void (*client_mark_cb)(void *ctx, long long realtime_ns, const char *label);
int client_page_drain_marks(struct client_page *p, client_mark_cb cb, void *ctx);

/* Copies up to max counters and gauges, in the page's (stable) slot order; returns how
 * many. Slots with an invalid name are skipped. */
size_t client_page_counters(struct client_page *p, struct client_counter *out, size_t max);

/* Appends a mark to the page from outside the process ("rsswatch mark -p PID"), with
 * the current CLOCK_REALTIME time, through the same lock-free path the library uses.
 * Labels over 95 bytes are truncated at a UTF-8 boundary. Returns 0, -EINVAL (NULL or
 * empty label), -ENOBUFS (lost to a stalled writer), -EPROTO (file truncated). */
int client_page_mark(struct client_page *p, const char *label);

/* Removes the page of pid if no process pid exists. Returns 0, -ENOENT (no page),
 * -EBUSY (the process exists), -EPERM (not a regular file or symlink), other -errno. */
int client_page_remove_stale(pid_t pid);

/* Unmaps and frees; accepts NULL. */
void client_page_close(struct client_page *p);

#endif
