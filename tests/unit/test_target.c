/* Finding a target by pattern: the ancestry walk on a constructed /proc tree (a chain, a
 * parent outside the namespace, a missing parent, a loop), and on this machine, that
 * target_find_matches never returns this process or one of its ancestors. */
#include "testutil.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/sysroot.h"
#include "record/target.h"

static char root[32];

/* proc/PID/stat with the fields the parser reads: state (3), ppid (4), starttime (22). */
static void put_stat(int pid, int ppid, unsigned long long start)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/proc/%d", root, pid);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/proc/%d/stat", root, pid);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%d (p%d) S %d %d 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %llu 1000 10 0\n",
		pid, pid, ppid, pid, start);
	fclose(f);
}

static int setup_tree(void **state)
{
	(void)state;
	char path[PATH_MAX];
	snprintf(root, sizeof(root), "/tmp/rsw-target-XXXXXX");
	if (!mkdtemp(root))
		return -1;
	snprintf(path, sizeof(path), "%s/proc", root);
	if (mkdir(path, 0755) < 0)
		return -1;
	put_stat(1, 0, 5);
	put_stat(50, 1, 100);
	put_stat(60, 50, 200);
	put_stat(70, 60, 300);
	put_stat(80, 0, 400);	/* its parent is outside the pid namespace */
	put_stat(90, 999, 500);	/* its parent cannot be read */
	put_stat(200, 201, 600);	/* a loop no kernel makes */
	put_stat(201, 200, 601);
	sysroot_set(root);
	return 0;
}

static int teardown_tree(void **state)
{
	(void)state;
	sysroot_set(NULL);
	return remove_tree(root);
}

static void test_ancestry_chain(void **state)
{
	(void)state;
	struct proc_id *a;
	size_t n;
	target_ancestry(70, &a, &n);
	assert_int_equal(n, 4);
	static const pid_t pids[] = { 70, 60, 50, 1 };
	static const uint64_t starts[] = { 300, 200, 100, 5 };
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(a[i].pid, pids[i]);
		assert_int_equal(a[i].starttime, starts[i]);
	}
	free(a);
}

static void test_ancestry_ends(void **state)
{
	(void)state;
	struct proc_id *a;
	size_t n;
	target_ancestry(80, &a, &n);
	assert_int_equal(n, 1);
	assert_int_equal(a[0].pid, 80);
	free(a);
	target_ancestry(90, &a, &n);
	assert_int_equal(n, 1);
	assert_int_equal(a[0].pid, 90);
	free(a);
	target_ancestry(12345, &a, &n);
	assert_int_equal(n, 0);
	free(a);
	target_ancestry(200, &a, &n);
	assert_int_equal(n, ANCESTRY_MAX);
	assert_int_equal(a[n - 1].pid, 201);
	free(a);
}

static void test_ancestry_real(void **state)
{
	(void)state;
	struct proc_id *a;
	size_t n;
	target_ancestry(getpid(), &a, &n);
	assert_true(n >= 2);
	assert_int_equal(a[0].pid, getpid());
	assert_int_equal(a[1].pid, getppid());
	free(a);
}

/* With a pattern that matches everything: a child is found, the caller and its
 * ancestors are not. */
static void test_find_matches_skips_ancestors(void **state)
{
	(void)state;
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		pause();
		_exit(0);
	}
	regex_t re;
	assert_int_equal(regcomp(&re, ".", REG_EXTENDED | REG_NOSUB), 0);
	struct proc_match *m = NULL;
	size_t n = 0;
	/* the child is listed, with the command line it shares with us, once fork returns */
	assert_int_equal(target_find_matches(&re, &m, &n), 0);
	int found = 0;
	for (size_t i = 0; i < n; i++)
		found |= m[i].pid == child;
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	regfree(&re);
	assert_true(found);
	struct proc_id *a;
	size_t na;
	target_ancestry(getpid(), &a, &na);
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < na; j++)
			assert_int_not_equal(m[i].pid, a[j].pid);
	free(a);
	free(m);
}

/* PIDFD_GET_INFO's answers: the status once known; ESRCH (the moment of the reaping)
 * is asked again, not taken for an old kernel; the wait is bounded. */
static void test_exit_status_answers(void **state)
{
	(void)state;
	int ws = -1;
	const uint64_t exit_bit = 1ULL << 3;
	assert_int_equal(target_info_status(0, exit_bit, 7 << 8, &ws), 0);
	assert_int_equal(ws, 7 << 8);
	ws = -1;
	assert_int_equal(target_info_status(0, 0, 0, &ws), -EAGAIN);
	assert_int_equal(target_info_status(ESRCH, 0, 0, &ws), -ESRCH);
	assert_int_equal(target_info_status(ENOTTY, 0, 0, &ws), -EOPNOTSUPP);
	assert_int_equal(target_info_status(EINVAL, 0, 0, &ws), -EOPNOTSUPP);
	assert_int_equal(target_info_status(EBADF, 0, 0, &ws), -EBADF);
	assert_int_equal(ws, -1);	/* written only with a status */
	assert_true(target_exit_ask_again(-ESRCH, 0));
	assert_true(target_exit_ask_again(-ESRCH, EXIT_STATUS_ESRCH_TRIES - 1));
	assert_false(target_exit_ask_again(-ESRCH, EXIT_STATUS_ESRCH_TRIES));
	assert_true(target_exit_ask_again(-EAGAIN, EXIT_STATUS_TRIES - 1));
	assert_false(target_exit_ask_again(-EAGAIN, EXIT_STATUS_TRIES));
	assert_false(target_exit_ask_again(0, 0));
	assert_false(target_exit_ask_again(-EOPNOTSUPP, 0));
}

/* A real race: a parent reaps each of its children at once while this process, not
 * their parent, asks for the status as soon as the pidfd is readable. Each status is
 * had within the bounded wait: none is lost to an ESRCH at the moment of the reaping. */
static void test_exit_status_race(void **state)
{
	(void)state;
	enum { N = 100 };
	int p[2];
	assert_int_equal(pipe(p), 0);
	pid_t b = fork();
	assert_true(b >= 0);
	if (b == 0) {
		close(p[0]);
		for (int i = 0; i < N; i++) {
			pid_t c = fork();
			if (c == 0) {
				usleep(5000);	/* long enough to be opened */
				_exit(i & 127);
			}
			if (write(p[1], &c, sizeof(c)) != (ssize_t)sizeof(c))
				_exit(1);
			waitpid(c, NULL, 0);
			usleep(2000);
		}
		_exit(0);
	}
	close(p[1]);
	int known = 0, unsupported = 0;
	for (int i = 0; i < N; i++) {
		pid_t c;
		assert_int_equal(read(p[0], &c, sizeof(c)), (ssize_t)sizeof(c));
		int fd = target_pidfd_open(c);
		if (fd < 0)
			continue;	/* reaped before it could be opened */
		struct pollfd pf = { fd, POLLIN, 0 };
		poll(&pf, 1, 5000);
		int ws = -1, e;
		for (int tries = 0;; tries++) {
			e = target_exit_status(fd, 0, &ws, NULL);
			if (!target_exit_ask_again(e, tries))
				break;
			poll(NULL, 0, EXIT_STATUS_POLL_MS);
		}
		close(fd);
		if (e == -EOPNOTSUPP)
			unsupported++;
		else if (e == 0 && WIFEXITED(ws) && WEXITSTATUS(ws) == (i & 127))
			known++;
		else
			fail_msg("instance %d: %d, status %d", i, e, ws);
	}
	close(p[0]);
	waitpid(b, NULL, 0);
	if (unsupported && !known)
		skip();	/* a kernel before 6.15 */
	if (unsupported)
		fail_msg("%d of %d statuses taken for a kernel that cannot tell", unsupported,
			 unsupported + known);
	assert_true(known > N / 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_ancestry_chain, setup_tree, teardown_tree),
		cmocka_unit_test_setup_teardown(test_ancestry_ends, setup_tree, teardown_tree),
		cmocka_unit_test(test_ancestry_real),
		cmocka_unit_test(test_exit_status_answers),
		cmocka_unit_test(test_exit_status_race),
		cmocka_unit_test(test_find_matches_skips_ancestors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
