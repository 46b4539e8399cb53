#include "record/target.h"
#include "base/clock.h"
#include "base/sysroot.h"
#include "base/util.h"
#include "record/pattern.h"
#include "source/client.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* What a pattern is matched against is bounded (record/pattern.h). */
_Static_assert(sizeof(((struct proc_match *)0)->cmdline) <= PATTERN_SUBJECT_MAX &&
	       sizeof(((struct proc_match *)0)->name) <= PATTERN_SUBJECT_MAX,
	       "a pattern's subject is longer than PATTERN_SUBJECT_MAX");

static int by_start(const void *a, const void *b)
{
	const struct proc_match *x = a, *y = b;
	if (x->starttime != y->starttime)
		return x->starttime < y->starttime ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

void target_ancestry(pid_t pid, struct proc_id **out, size_t *n)
{
	struct proc_id *a = NULL;
	size_t cnt = 0, cap = 0, steps = 0;
	struct proc_stat ps;
	while (pid > 0 && steps++ < ANCESTRY_MAX) {
		if (proc_read_stat(pid, &ps) < 0) {
			/* Gone since its child was read? Then the child has a new parent (a
			 * subreaper or init, further up the same chain): go on from there. */
			if (cnt == 0 || proc_read_stat(a[cnt - 1].pid, &ps) < 0 ||
			    ps.starttime != a[cnt - 1].starttime || ps.ppid == pid)
				break;
			pid = ps.ppid;
			continue;
		}
		if (cnt == cap) {
			cap = cap ? cap * 2 : 16;
			a = xrealloc(a, cap * sizeof(*a));
		}
		a[cnt].pid = pid;
		a[cnt].starttime = ps.starttime;
		cnt++;
		if (pid == 1)
			break;
		pid = ps.ppid;
	}
	*out = a;
	*n = cnt;
}

static int is_in(const struct proc_id *ids, size_t n, pid_t pid, uint64_t starttime)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i].pid == pid && ids[i].starttime == starttime)
			return 1;
	return 0;
}

int target_candidate(pid_t pid, const struct proc_id *anc, size_t nanc, struct proc_match *pm)
{
	struct proc_stat ps;
	memset(pm, 0, sizeof(*pm));
	pm->pid = pid;
	/* The process may vanish at any step: then it simply does not match. */
	if (pid == getpid() || proc_read_stat(pid, &ps) < 0 || ps.state == 'Z' ||
	    is_in(anc, nanc, pid, ps.starttime))
		return 0;
	if (proc_read_cmdline(pid, pm->cmdline, sizeof(pm->cmdline)) < 0 || !pm->cmdline[0])
		return 0;
	strlcpy_rsw(pm->name, ps.comm, sizeof(pm->name));
	pm->starttime = ps.starttime;
	return 1;
}

int target_match_re(const regex_t *re, const struct proc_match *pm)
{
	return regexec(re, pm->name, 0, NULL, 0) == 0 || regexec(re, pm->cmdline, 0, NULL, 0) == 0;
}

int target_filter_ok(const struct proc_filter *f, pid_t pid)
{
	uid_t uid;
	if (!f)
		return 1;
	if (f->have_uid && (proc_read_uid(pid, &uid) < 0 || uid != f->uid))
		return 0;
	if (f->cgroup && proc_in_cgroup(pid, f->cgroup) != 1)
		return 0;
	return 1;
}

int target_matches(const regex_t *re, pid_t pid, const struct proc_id *anc, size_t nanc,
		   struct proc_match *pm)
{
	return target_candidate(pid, anc, nanc, pm) && target_match_re(re, pm);
}

int target_find_matches(const regex_t *re, struct proc_match **out, size_t *n)
{
	char path[PATH_MAX];
	if (sysroot_path(path, sizeof(path), "/proc") < 0)
		return -ENAMETOOLONG;
	DIR *d = opendir(path);
	if (!d)
		return -errno;
	struct proc_match *m = NULL;
	size_t cnt = 0, cap = 0;
	pid_t self = getpid();
	/* Walked before the scan: later, the chain can only lose members (an orphan goes
	 * to a subreaper or init above it), so the scan meets no ancestor missing here. */
	struct proc_id *anc;
	size_t nanc;
	target_ancestry(self, &anc, &nanc);
	struct dirent *de;
	while ((de = readdir(d))) {
		char *end;
		long v = strtol(de->d_name, &end, 10);
		if (*end || v <= 0 || v > INT32_MAX || (pid_t)v == self)
			continue;
		struct proc_match pm;
		if (!target_matches(re, (pid_t)v, anc, nanc, &pm))
			continue;
		if (cnt == cap) {
			cap = cap ? cap * 2 : 8;
			m = xrealloc(m, cap * sizeof(*m));
		}
		m[cnt++] = pm;
	}
	closedir(d);
	free(anc);
	if (cnt)
		qsort(m, cnt, sizeof(*m), by_start);
	*out = m;
	*n = cnt;
	return 0;
}

/* What the child of target_launch() tells its parent through a pipe that closes at
 * the exec. */
enum { LAUNCH_SETUP = 1, LAUNCH_EXEC, LAUNCH_EXEC_FAILED };
#define LAUNCH_MSG 6	/* int64_t: the kind and its values */

pid_t target_launch(char *const argv[], const sigset_t *orig_mask,
		    int (*pre_exec)(void *ctx), void *ctx, const struct launch_hold *hold,
		    int *setup_failed, struct launch_facts *facts)
{
	int pfd[2], go[2] = { -1, -1 };
	*setup_failed = 0;
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -errno;
	if (hold && pipe2(go, O_CLOEXEC) < 0) {
		int e = -errno;
		close(pfd[0]);
		close(pfd[1]);
		return e;
	}
	/* The command's page stays for us to read when it ends. Set here, not in the
	 * child: setenv may allocate, which a child of a threaded process must not. */
	if (client_pages_kept_for_me() < 0) {
		/* without it a command shorter than the first look loses its marks */
	}
	pid_t pid = fork();
	if (pid < 0) {
		int e = -errno;
		close(pfd[0]);
		close(pfd[1]);
		if (hold) {
			close(go[0]);
			close(go[1]);
		}
		return e;
	}
	if (pid == 0) {
		static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD, SIGPIPE };
		for (size_t i = 0; i < ARRAY_SIZE(sigs); i++)
			signal(sigs[i], SIG_DFL);
		close(pfd[0]);
		/* kind LAUNCH_EXEC: about to exec, value the footprint so far (KiB), then
		 * the times (real, monotonic) and the CPU used (user, system; ns);
		 * LAUNCH_SETUP or LAUNCH_EXEC_FAILED: value the errno */
		int64_t msg[LAUNCH_MSG] = { LAUNCH_SETUP };
		int se = pre_exec ? pre_exec(ctx) : 0;
		if (hold) {	/* the parent's hold ends when it closes its end */
			char c;
			close(go[1]);
			while (read(go[0], &c, 1) < 0 && errno == EINTR)
				;
		}
		if (se == 0) {
			struct rusage ru;
			sigprocmask(SIG_SETMASK, orig_mask, NULL);
			msg[0] = LAUNCH_EXEC;
			msg[2] = real_ns();	/* clock_gettime: safe after fork */
			msg[3] = mono_ns();
			/* the CPU after the clocks: what the command is said to use is then
			 * within the time it is said to run */
			if (getrusage(RUSAGE_SELF, &ru) == 0) {
				msg[1] = ru.ru_maxrss;
				msg[4] = (int64_t)tv_ns(&ru.ru_utime);
				msg[5] = (int64_t)tv_ns(&ru.ru_stime);
			}
			if (write(pfd[1], msg, sizeof(msg)) < 0) {
				/* the parent then knows no footprint: wait4's peak is not used */
			}
			execvp(argv[0], argv);
			msg[0] = LAUNCH_EXEC_FAILED;
			se = -errno;
		}
		msg[1] = -se;
		if (write(pfd[1], msg, sizeof(msg)) < 0) {
			/* the parent will see a closed pipe and an exit status of 127 */
		}
		_exit(127);
	}
	close(pfd[1]);
	if (hold) {
		close(go[0]);
		hold->fn(hold->ctx, pid);
		close(go[1]);
	}
	int64_t msg[LAUNCH_MSG] = { 0 };
	ssize_t n;
	*facts = (struct launch_facts){ .pre_exec_rss = UINT64_MAX };
	for (;;) {
		do
			n = read(pfd[0], msg, sizeof(msg));
		while (n < 0 && errno == EINTR);
		if (n != (ssize_t)sizeof(msg) || msg[0] != LAUNCH_EXEC)
			break;
		facts->pre_exec_rss = msg[1] > 0 ? (uint64_t)msg[1] * 1024 : 0;
		facts->exec_at = msg[2];
		facts->exec_mono = msg[3];
		facts->pre_exec_user_ns = msg[4] > 0 ? (uint64_t)msg[4] : 0;
		facts->pre_exec_sys_ns = msg[5] > 0 ? (uint64_t)msg[5] : 0;
	}
	close(pfd[0]);
	if (n == (ssize_t)sizeof(msg)) {
		waitpid(pid, NULL, 0);
		*setup_failed = msg[0] == LAUNCH_SETUP;
		return msg[1] > 0 ? (pid_t)-msg[1] : -EIO;
	}
	if (facts->exec_at <= 0) {	/* the child could not write: the parent's time, later */
		facts->exec_at = real_ns();
		facts->exec_mono = 0;
	}
	return pid;
}

int target_pidfd_open(pid_t pid)
{
	long fd = syscall(SYS_pidfd_open, pid, 0);
	return fd < 0 ? -errno : (int)fd;
}

/* PIDFD_GET_INFO (Linux 6.15+), declared here because older headers lack it. The first
 * 64 bytes of the structure (its version 0) hold everything used here. */
struct rsw_pidfd_info {
	uint64_t mask;
	uint64_t cgroupid;
	uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
	int32_t exit_code;
};
#define RSW_PIDFD_INFO_EXIT (1ULL << 3)
#define RSW_PIDFD_GET_INFO _IOWR(0xFF, 11, struct rsw_pidfd_info)

int target_exit_status(int pidfd, int is_child, int *wstatus, struct rusage *ru)
{
	if (ru)
		memset(ru, 0, sizeof(*ru));
	if (is_child) {
		siginfo_t si;
		struct rusage r;
		memset(&si, 0, sizeof(si));
		memset(&r, 0, sizeof(r));
		/* The raw system call takes a fifth argument, the rusage that wait4 gives. */
		if (syscall(SYS_waitid, 3 /* P_PIDFD */, pidfd, &si, WEXITED, &r) < 0)
			return -errno;
		if (ru)
			*ru = r;
		*wstatus = si.si_code == CLD_EXITED ? W_EXITCODE(si.si_status, 0)
						    : (si.si_status & 0x7f);
		return 0;
	}
	struct rsw_pidfd_info info;
	memset(&info, 0, sizeof(info));
	info.mask = RSW_PIDFD_INFO_EXIT;
	int err = ioctl(pidfd, RSW_PIDFD_GET_INFO, &info) < 0 ? errno : 0;
	return target_info_status(err, info.mask, info.exit_code, wstatus);
}

int target_info_status(int err, uint64_t mask, int32_t exit_code, int *wstatus)
{
	if (err == ENOTTY || err == EINVAL)
		return -EOPNOTSUPP;
	if (err)
		return -err;	/* ESRCH: ask again (target.h) */
	if (!(mask & RSW_PIDFD_INFO_EXIT))
		return -EAGAIN;
	*wstatus = exit_code;
	return 0;
}

int target_exit_ask_again(int e, int tries)
{
	if (e == -ESRCH)
		return tries < EXIT_STATUS_ESRCH_TRIES;
	return e == -EAGAIN && tries < EXIT_STATUS_TRIES;
}
