/* Safe paths and output files (src/base/safefile.c): directories another user could
 * change are refused, so are files another user owns or may write; the -o writer never
 * follows another user's symlink and never writes into an existing file. Runs as root
 * (files are given to another uid with chown). Each test works in a fresh temp dir. */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/safefile.h"
#include "base/util.h"

#define OTHER 65534	/* a uid that is neither root nor the caller */

static char dir[64];

static int setup(void **state)
{
	(void)state;
	strlcpy_rsw(dir, "/tmp/rsswatch-safefile-XXXXXX", sizeof(dir));
	assert_non_null(mkdtemp(dir));
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return remove_tree(dir);
}

static void in_dir(char *out, size_t n, const char *name)
{
	snprintf(out, n, "%s/%s", dir, name);
}

static void put(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

static int holds(const char *path, const char *text)
{
	char buf[256];
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	if (n < 0)
		return 0;
	buf[n] = '\0';
	return strcmp(buf, text) == 0;
}

static void test_dir_check(void **state)
{
	char why[512], p[PATH_MAX], q[PATH_MAX];
	(void)state;
	assert_int_equal(geteuid(), 0);
	assert_int_equal(safe_dir_check(dir, why, sizeof(why)), 0);
	assert_int_equal(safe_dir_check("/", why, sizeof(why)), 0);

	/* Writable by others, even when sticky as /tmp: the directory that holds the
	 * database may not be (another user could make its side files there). */
	assert_int_equal(chmod(dir, 0777), 0);
	assert_int_equal(safe_dir_check(dir, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, dir));
	assert_non_null(strstr(why, "chmod go-w"));
	assert_int_equal(chmod(dir, 01777), 0);
	assert_int_equal(safe_dir_check(dir, why, sizeof(why)), -EPERM);
	assert_int_equal(chmod(dir, 0770), 0);
	assert_int_equal(safe_dir_check(dir, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "its group"));
	/* ... but a sticky one on the way is fine: its entries are safe from others. */
	assert_int_equal(chmod(dir, 01777), 0);
	in_dir(p, sizeof(p), "mine");
	assert_int_equal(mkdir(p, 0700), 0);
	assert_int_equal(safe_dir_check(p, why, sizeof(why)), 0);
	/* Directories still to be made: the deepest part that exists is on the way. */
	in_dir(q, sizeof(q), "new/deeper");
	assert_int_equal(safe_dir_check_way(q, why, sizeof(why)), 0);
	assert_int_equal(chmod(dir, 0777), 0);
	assert_int_equal(safe_dir_check_way(q, why, sizeof(why)), -EPERM);
	assert_int_equal(chmod(dir, 0700), 0);

	/* Another user's directory, on the way or at the end. */
	in_dir(q, sizeof(q), "theirs");
	assert_int_equal(mkdir(q, 0755), 0);
	assert_int_equal(chown(q, OTHER, OTHER), 0);
	assert_int_equal(safe_dir_check(q, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "another user"));
	in_dir(q, sizeof(q), "theirs/sub");
	assert_int_equal(mkdir(q, 0700), 0);
	assert_int_equal(safe_dir_check(q, why, sizeof(why)), -EPERM);
	in_dir(q, sizeof(q), "theirs/new/x");
	assert_int_equal(safe_dir_check_way(q, why, sizeof(why)), -EPERM);

	/* A symlink: another user's is refused whatever it leads to; the caller's leads
	 * on, and where it leads is checked too. */
	in_dir(q, sizeof(q), "link");
	assert_int_equal(symlink(p, q), 0);
	assert_int_equal(safe_dir_check(q, why, sizeof(why)), 0);
	assert_int_equal(lchown(q, OTHER, OTHER), 0);
	assert_int_equal(safe_dir_check(q, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "symbolic link"));
	assert_int_equal(unlink(q), 0);
	in_dir(p, sizeof(p), "theirs");
	assert_int_equal(symlink(p, q), 0);
	assert_int_equal(safe_dir_check(q, why, sizeof(why)), -EPERM);	/* leads to theirs */

	/* Relative paths are walked from the current directory. */
	char cwd[PATH_MAX];
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(dir), 0);
	assert_int_equal(safe_dir_check("mine", why, sizeof(why)), 0);
	assert_int_equal(safe_dir_check("theirs", why, sizeof(why)), -EPERM);
	assert_int_equal(chdir(cwd), 0);
	assert_true(safe_dir_check("/no/such/dir", why, sizeof(why)) < 0);
}

static void test_file_check(void **state)
{
	char why[512], p[PATH_MAX];
	struct stat st;
	(void)state;
	in_dir(p, sizeof(p), "db");
	put(p, "x", 0600);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(safe_file_check(&st, p, 0, why, sizeof(why)), 0);
	assert_int_equal(chmod(p, 0666), 0);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(safe_file_check(&st, p, 0, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "every user"));
	assert_int_equal(chmod(p, 0644), 0);
	assert_int_equal(chown(p, OTHER, OTHER), 0);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(safe_file_check(&st, p, 1, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "another user"));
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(safe_file_check(&st, dir, 0, why, sizeof(why)), -EPERM);
}

static void test_writer(void **state)
{
	struct safefile sf;
	char p[PATH_MAX], v[PATH_MAX], l[PATH_MAX];
	struct stat a, b;
	FILE *f;
	(void)state;
	in_dir(p, sizeof(p), "out.html");
	in_dir(v, sizeof(v), "victim");
	in_dir(l, sizeof(l), "planted");

	/* A new file. */
	assert_non_null(f = safefile_open(&sf, p, 0644));
	fputs("one", f);
	assert_int_equal(safefile_close(&sf, 1), 0);
	assert_true(holds(p, "one"));
	assert_int_equal(stat(p, &a), 0);
	assert_int_equal(a.st_mode & 0022, 0);

	/* An existing one is replaced, not written into: whoever kept it open (or made
	 * it, to read what comes) still has the old file. */
	int fd = open(p, O_RDONLY);
	assert_true(fd >= 0);
	assert_non_null(f = safefile_open(&sf, p, 0644));
	fputs("two", f);
	assert_int_equal(safefile_close(&sf, 1), 0);
	assert_true(holds(p, "two"));
	assert_int_equal(fstat(fd, &a), 0);
	assert_int_equal(stat(p, &b), 0);
	assert_true(a.st_ino != b.st_ino);
	close(fd);

	/* A failed write leaves the target as it was, and no temp file behind. */
	assert_non_null(f = safefile_open(&sf, p, 0644));
	fputs("three", f);
	assert_int_equal(safefile_close(&sf, 0), 0);
	assert_true(holds(p, "two"));
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "test -z \"$(ls -A '%s' | grep '^\\.')\"", dir);
	assert_int_equal(system(cmd), 0);

	/* Another user's symlink: refused, its target untouched. */
	put(v, "keep", 0600);
	assert_int_equal(symlink(v, l), 0);
	assert_int_equal(lchown(l, OTHER, OTHER), 0);
	errno = 0;
	assert_null(safefile_open(&sf, l, 0644));
	assert_int_equal(errno, EPERM);
	assert_non_null(strstr(sf.why, "symbolic link"));
	assert_true(holds(v, "keep"));
	/* The caller's own symlink: what it leads to is replaced; the link stays. */
	assert_int_equal(lchown(l, 0, 0), 0);
	assert_non_null(f = safefile_open(&sf, l, 0644));
	fputs("through", f);
	assert_int_equal(safefile_close(&sf, 1), 0);
	assert_int_equal(lstat(l, &a), 0);
	assert_true(S_ISLNK(a.st_mode));
	assert_true(holds(v, "through"));

	/* A character device of root's: written in place. A directory: refused. */
	assert_non_null(f = safefile_open(&sf, "/dev/null", 0644));
	fputs("nothing", f);
	assert_int_equal(safefile_close(&sf, 1), 0);
	assert_null(safefile_open(&sf, dir, 0644));
	assert_int_equal(errno, EISDIR);
	in_dir(p, sizeof(p), "no/such/dir/out.svg");
	assert_null(safefile_open(&sf, p, 0644));
	assert_int_equal(errno, ENOENT);
}

/* Outputs are regular files: a FIFO, anyone's, is refused at once (it would not block:
 * nothing reads it here), and so is a FIFO behind the caller's own symlink, and a
 * socket; "-" and /dev/stdout are standard output, never opened by name. */
static void test_writer_not_regular(void **state)
{
	struct safefile sf;
	char p[PATH_MAX], l[PATH_MAX];
	struct stat st;
	(void)state;
	in_dir(p, sizeof(p), "fifo");
	in_dir(l, sizeof(l), "to-fifo");
	assert_int_equal(mkfifo(p, 0666), 0);
	for (int owner = 0; owner < 2; owner++) {
		assert_int_equal(lchown(p, owner ? OTHER : 0, owner ? OTHER : 0), 0);
		errno = 0;
		assert_null(safefile_open(&sf, p, 0600));
		assert_int_equal(errno, EPERM);
		assert_non_null(strstr(sf.why, "FIFO"));
	}
	assert_int_equal(symlink(p, l), 0);
	assert_null(safefile_open(&sf, l, 0600));
	assert_int_equal(errno, EPERM);
	assert_int_equal(lstat(p, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));	/* left as it was */

	in_dir(p, sizeof(p), "sock");
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	assert_true(strlen(p) < sizeof(sa.sun_path));
	strlcpy_rsw(sa.sun_path, p, sizeof(sa.sun_path));
	assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_null(safefile_open(&sf, p, 0600));
	assert_int_equal(errno, EPERM);
	assert_non_null(strstr(sf.why, "socket"));
	close(s);

	FILE *f;
	assert_ptr_equal(f = safefile_open(&sf, "-", 0600), stdout);
	assert_int_equal(safefile_close(&sf, 1), 0);
	assert_ptr_equal(f = safefile_open(&sf, "/dev/stdout", 0600), stdout);
	assert_int_equal(safefile_close(&sf, 1), 0);

	/* the mode asked for, less the umask: 0600 stays 0600 */
	in_dir(p, sizeof(p), "new.csv");
	assert_non_null(f = safefile_open(&sf, p, 0600));
	assert_int_equal(safefile_close(&sf, 1), 0);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_dir_check, setup, teardown),
		cmocka_unit_test_setup_teardown(test_file_check, setup, teardown),
		cmocka_unit_test_setup_teardown(test_writer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_writer_not_regular, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
