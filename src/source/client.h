/* The recorder's side of the client library's shared page (lib/page.h): find the page
 * of a process, check that it is safe to use, and read its counters and marks.
 *
 * The page belongs to the application and is written while we read it, possibly by a
 * buggy or hostile program while the recorder runs as root. So: the file is opened
 * read-only, without following symlinks and without blocking (a FIFO planted there
 * cannot hang us), it must be a regular file with one link, owned by the expected uid,
 * mode 0600, of exactly the page's size, with the expected magic and version.
 *
 * The page is never mapped: its owner can shrink the file at any moment, and an access
 * to a mapping past the new end raises SIGBUS. Every read is a pread() of the bytes
 * needed into the reader's own memory (a short read means the file was truncated:
 * -EPROTO), and only those copies are parsed. The parsers below take bytes and do no
 * I/O, so that the unit tests and the fuzzer can feed them anything; nothing read is
 * used as a length, index or pointer without being bounded first. */
#ifndef RSW_SOURCE_CLIENT_H
#define RSW_SOURCE_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <sys/types.h>

#include "base/parse.h"

struct client_page;

struct client_counter {
	char name[COUNTER_NAME_SIZE];	/* terminated; 1..47 bytes of [A-Za-z0-9_.:-] */
	long long value;
	int is_gauge;		/* 1: set with rsw_gauge_set; 0: a sum of rsw_counter_add */
};

/* ---- Parsers: bytes in, no I/O -------------------------------------------------- */

/* What the reader uses of a page's header. */
struct client_header {
	pid_t pid;		/* the creator's getpid() */
	int64_t created_ns;	/* CLOCK_REALTIME at creation */
	int64_t created_boot_ns;	/* CLOCK_BOOTTIME at creation */
	uint64_t start_ticks;	/* the creator's start time (ticks after boot), 0: unknown */
	uint64_t pid_ino;	/* the creator's pidfs inode, 0: unknown */
	uint64_t ring_head;	/* mark tickets handed out */
	uint64_t ring_dropped;	/* marks given up by their writers */
};

/* Checks a copy of the header (len >= 128 bytes; any alignment). Returns 0, -ENOENT
 * (magic still 0: its creator has not finished), -EPROTO (short, bad magic, version or
 * table sizes). out is written only on success. */
int client_header_parse(const void *buf, size_t len, struct client_header *out);

/* Who a process is, beyond its pid (which the kernel reuses). */
struct client_ident {
	pid_t pid;
	uint64_t start_ticks;	/* /proc/PID/stat field 22: clock ticks after boot; 0: unknown */
	uint64_t pid_ino;	/* inode of a pidfd of it on pidfs (Linux 6.9+), unique for
				   the life of the system; 0: unknown */
};

/* Reads the identity of the process now running as pid. Returns 0, -ESRCH (no such
 * process) or -errno. */
int client_ident_read(pid_t pid, struct client_ident *out);

/* Whether the page of header h is that of process who, and not a stale page left by a
 * process that had the pid before: 0, or -ESTALE when its creator was another process.
 * Where both know their pidfs inode, it decides; else the start times (of ticks_per_s
 * ticks a second) must be the same, and the page must not be older than the target.
 * Two processes that started within the same tick with the same pid are told apart by
 * the inode only. */
int client_header_is_of(const struct client_header *h, const struct client_ident *who,
			long ticks_per_s);

/* Reads the counter table from two copies of it, the first (states) taken before the
 * second (table), each len bytes (at most the whole table; any alignment). A slot
 * counts when states shows it READY; its name, kind and value are then taken from
 * table, since a name is complete once its slot is READY. Slots with an invalid name
 * or kind are skipped. Returns how many were written to out (at most max). */
size_t client_counters_parse(const void *states, const void *table, size_t len,
			     struct client_counter *out, size_t max);

/* One mark slot (len >= 128 bytes, any alignment) as the holder of ticket t: 1 and
 * *ns, label (96 bytes, terminated) when the slot holds ticket t complete; 0 when not
 * yet (being written, not yet claimed, or given up); -1 when a newer ticket holds it.
 * The caller makes sure the slot did not change while it was copied. */
int client_mark_parse(const void *slot, size_t len, uint64_t t, int64_t *ns, char *label);

/* ---- The reader ------------------------------------------------------------------ */

/* Finds and opens the page of process pid whose owner must be uid. Its directory is
 * $RSSWATCH_SHM_DIR, else /dev/shm, its name rsswatch.PID; when someone took that name
 * first (a file of another owner, a symlink, a directory, a FIFO: squatting), the
 * library made its page under a fallback name rsswatch.PID.<16 hex digits>. That page
 * is not looked for among the directory's files (any user can make a hundred thousand
 * there): the target keeps it mapped, and its memory map (/proc/PID/maps) names it and
 * its inode; the newest such page that passes every check is taken
 * (client_page_squatted() then says so). What holds a name is looked at with fstatat()
 * first: a file of another owner is never opened. The cost is one fstatat(), and when
 * squatted one read of at most CLIENT_MAPS_MAX bytes of the target's map and at most
 * CLIENT_CANDIDATES_MAX pages tried, whatever other users make in the directory.
 * Returns 0, -ENOENT (none yet, or still being created: try again later), -EEXIST (the
 * name is taken by something not uid's, and no fallback page is there), -EPERM (uid's
 * file, but of the wrong mode or with more than one link), -EPROTO (bad size, magic or
 * version), -ESTALE (the page of another process that had this pid before: its creator
 * is not the process now running under the pid), -ESRCH (no process pid), other -errno
 * (-EACCES when we may not open it, -ENOMEM). *out is written only on success. */
#define CLIENT_MAPS_MAX (512 * 1024)	/* bytes of /proc/PID/maps read, at most */
#define CLIENT_CANDIDATES_MAX 8	/* fallback pages of the map tried, at most */
struct client_find {
	int squatted;		/* the pid's own name is held by what uid did not make there */
	uid_t squat_uid;	/* ... whose owner is this */
	mode_t squat_type;	/* ... of this type (S_IFREG, S_IFDIR, S_IFLNK, ...) */
	int capped;		/* the map was longer than CLIENT_MAPS_MAX, or named more
				   than CLIENT_CANDIDATES_MAX fallback pages: the rest unread */
};
/* f (NULL: not wanted) is written whatever the result. */
int client_page_find(pid_t pid, uid_t uid, struct client_find *f, struct client_page **out);
/* Asks the processes this one launches to leave their pages at exit for it to read
 * (lib/page.h, RSW_PAGE_KEEP_ENV): sets the variable to this process's pid in its
 * environment, which children inherit. 0 or -errno. */
int client_pages_kept_for_me(void);
/* The same for the process who (NULL: read it for pid), which may have ended: a page
 * its creator left at exit for the recorder that launched it (RSW_PAGE_KEEP_ENV) is
 * found by its own name after the process is gone (fallback names need the process's
 * map, so they are not looked for without a live process). */
int client_page_find_of(pid_t pid, uid_t uid, const struct client_ident *who,
			struct client_find *f, struct client_page **out);
int client_page_open(pid_t pid, uid_t uid, struct client_page **out);

/* One line of /proc/PID/maps (line[0..len), without its newline; any bytes): 1 when it
 * maps, shared, a file whose name (after the last '/') is a fallback name of pid, and
 * out then holds that name (terminated), the inode and the device; else 0. */
struct client_map_page {
	uint64_t ino;
	unsigned dev_major, dev_minor;
	char name[64];		/* "rsswatch.<pid>.<16 hex digits>" */
};
int client_maps_line_parse(const char *line, size_t len, pid_t pid, struct client_map_page *out);
/* A cheap test to make before client_page_open() while no page is found: 0 when the
 * page directory is as it was at the last call and has not changed for a second (so
 * that a file made within the same clock tick as that look cannot hide), 1 when it may
 * hold a new page (or cannot be looked at). One fstat of the directory, kept open
 * (O_PATH) from the first call, instead of an open and a check. A zeroed watch is
 * ready; client_dir_watch_close() closes its directory. */
struct client_dir_watch {
	struct timespec mtime;
	int have;
	int dirfd_plus1;	/* the directory's O_PATH descriptor + 1; 0: not open */
};
int client_page_dir_changed(struct client_dir_watch *w);
void client_dir_watch_close(struct client_dir_watch *w);
/* The same checks on a file already open for reading (taken over on success: closed
 * by client_page_close), for the process who (NULL: read it for pid). For tests and
 * the fuzzer. */
int client_page_open_fd(int fd, pid_t pid, uid_t uid, const struct client_ident *who,
			struct client_page **out);
/* 1 when the page was found under a fallback name because the pid's own name was
 * taken (the recorder warns about it), else 0. */
int client_page_squatted(const struct client_page *p);

/* Calls cb for each new mark since the last call, in ticket order; label is
 * terminated, at most 95 bytes, valid only during the call. The first call after open
 * delivers the marks still in the ring. Returns the number of marks lost since the last
 * call (>= 0): overwritten before we read them (the ring holds 256), or given up by
 * their writer. A mark whose writer is still writing stops the drain there and is
 * delivered by a later call; if it stays unfinished for over a second it is counted as
 * lost. Returns -EPROTO if the file was truncated or its header became invalid. */
typedef void (*client_mark_cb)(void *ctx, long long realtime_ns, const char *label);
int client_page_drain_marks(struct client_page *p, client_mark_cb cb, void *ctx);

/* Copies up to max counters and gauges, in the page's (stable) slot order; returns how
 * many. Slots with an invalid name are skipped; 0 when the file was truncated. */
size_t client_page_counters(struct client_page *p, struct client_counter *out, size_t max);

/* Removes the page of pid if no process pid exists. Returns 0, -ENOENT (no page),
 * -EBUSY (the process exists), -EPERM (not a regular file or symlink), other -errno. */
int client_page_remove_stale(pid_t pid);

/* Closes and frees; accepts NULL. */
void client_page_close(struct client_page *p);

#endif
