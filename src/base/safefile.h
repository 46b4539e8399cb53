/* Files that another user must not be able to redirect, replace or read: the run
 * database with its directory, and the files written with -o.
 *
 * rsswatch often runs as root, and paths it is given (--db, $XDG_STATE_HOME, -o) may
 * lead through directories that other users can write. There a user can plant a
 * symlink where a file is about to be created or truncated, or create the file first
 * and keep it open. The checks below refuse such paths with a reason that names the
 * path and the fix; the writer below never opens an existing path for writing. */
#ifndef RSW_BASE_SAFEFILE_H
#define RSW_BASE_SAFEFILE_H

#include <stdio.h>
#include <sys/stat.h>

/* How safe_dir_open treats dir: open it; make what is missing of it (0700 each);
 * only check the part of it that exists, as directories on the way. */
enum safe_dir { SAFE_DIR_OPEN, SAFE_DIR_MAKE, SAFE_DIR_WAY };

/* Opens the directory dir by walking it one component at a time from "/" (a relative
 * dir from the current directory's path), each opened relative to the descriptor of
 * its parent (openat with O_DIRECTORY|O_NOFOLLOW; a missing one made with mkdirat,
 * SAFE_DIR_MAKE), as systemd's chase() does: no path is looked up twice, so a symlink
 * swapped in after a check is never followed. Every directory passed is checked on its
 * own descriptor (fstat): owned by root or the caller, not writable by group or others
 * unless sticky as /tmp is; dir itself may not be writable by others even when sticky.
 * A symlink on the way is followed only when root or the caller owns it, and what it
 * leads to is walked the same way. Returns the descriptor of dir (O_RDONLY, close on
 * exec; 0 for SAFE_DIR_WAY), or -EPERM with a one-line reason in why (the path and the
 * fix), or another -errno (why says which step failed). */
int safe_dir_open(const char *dir, enum safe_dir how, char *why, size_t n);

/* Checks that nobody but the caller (the effective uid) and root can change what dir
 * holds: dir and every directory on the way to it must be owned by root or the caller,
 * and not writable by group or others (a directory on the way may be, when it is
 * sticky as /tmp is, but dir itself may not); every symlink on the way must be owned
 * by root or the caller. Both the path as given and the real path it leads to are
 * walked. Returns 0, or -EPERM with a one-line reason in why (the path and the fix),
 * or another -errno when a step cannot be looked at (why says which). The walk is
 * safe_dir_open's. */
int safe_dir_check(const char *dir, char *why, size_t n);

/* The same for a directory still to be made: checks the deepest part of dir that
 * exists, as a directory on the way (sticky and writable by all is fine there), so
 * that nothing is made where another user decides. */
int safe_dir_check_way(const char *dir, char *why, size_t n);

/* Checks the file st describes (from fstat of the open file at path): a regular file,
 * owned by the caller (or by root, when root_ok: a reader may read root's database),
 * and not writable by group or others. Returns 0 or -EPERM with a reason in why. */
int safe_file_check(const struct stat *st, const char *path, int root_ok, char *why,
		    size_t n);

/* An output file written without ever opening an existing path for writing: the data
 * goes to a new file made with O_CREAT|O_EXCL in the target's directory (so a symlink
 * or a file planted at its name is never followed or reused), which replaces the
 * target by rename() when complete. A symlink at the target is refused unless root or
 * the caller owns it; then the file it leads to is replaced. "-" and /dev/stdout are
 * the caller's own standard output, written as it is. A character device of root's or
 * the caller's (/dev/null, a terminal) is written in place, after checking on the open
 * descriptor that it is still that device. Anything else that is not a regular file (a
 * FIFO, which another user could read from or leave without a reader, a socket, a
 * block device) is refused. */
struct safefile {
	FILE *f;
	char *path;		/* where the file goes */
	char *tmp;		/* the new file, renamed to path at the end; NULL: in place */
	int is_stdout;		/* f is stdout: flushed at the end, never closed */
	char why[256];		/* the reason, after a failure */
};

/* Opens the output for path with the given mode for a new file (less the umask).
 * Returns the stream, or NULL with errno set and a reason in sf->why. */
FILE *safefile_open(struct safefile *sf, const char *path, mode_t mode);

/* Finishes: with keep, flushes, syncs and moves the new file into place; without it
 * (an error happened), removes the new file and leaves the target as it was. Returns
 * 0 or -errno (the new file is then removed, and sf->why says why). */
int safefile_close(struct safefile *sf, int keep);

#endif
