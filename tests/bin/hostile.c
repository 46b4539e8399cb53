/* Processes that misbehave towards the recorder, for tests/t/t70-hostile.sh. Each runs
 * for at most 60 s, so that none can outlive a test that forgot it.
 *
 *   hostile shrink READY       an application with a page that it then keeps shrinking,
 *                              growing and scribbling over (while a recorder reads it)
 *   hostile stale READY        an application with a mark and a counter, then idle
 *                              (the test kills it with SIGKILL: its page stays)
 *   hostile victim READY GO END  an application that marks "victim mark 1", touches
 *                              READY, waits for GO, marks "victim mark 2", waits for END
 *                              and exits; prints "init N" (what rsw_init returned)
 *   hostile squat PATH         makes PATH a page-sized file with a valid header and a
 *                              mark "squatted" (0600, the caller's own)
 *   hostile flood MS           an application that writes marks ("flood N") as fast as
 *                              it can for MS milliseconds, then prints "marks N" (how
 *                              many it wrote) and exits
 *   hostile flip NAME A B READY  makes NAME a symlink to A, removes it, makes it a
 *                              symlink to B, removes it, in a loop (a directory
 *                              component that changes under a recorder making its
 *                              database's directories); touches READY once started
 *   hostile at PID CMD...      runs CMD as process PID (through ns_last_pid: root only)
 *                              and exits with its status; 99 when PID stays taken
 *   hostile shmflood PID N READY STOP  squats the page name of PID (a file of the
 *                              caller's), makes N empty files at its fallback names,
 *                              touches READY, then changes the page directory every
 *                              50 ms until STOP exists (a recorder that scans the
 *                              directory never finds it unchanged); removes them all
 *   hostile counters MS        an application that adds 1 to each of 64 counters as
 *                              fast as it can for MS milliseconds, then prints
 *                              "counter NAME VALUE" for each and exits
 *
 * The page directory is $RSSWATCH_SHM_DIR, as in the library. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rsswatch.h"
#include "lib/page.h"

#define LIFETIME_S 60

static void touch(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0)
		close(fd);
}

static int exists(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void page_path(char *buf, size_t n, pid_t pid)
{
	const char *dir = getenv(RSW_PAGE_DIR_ENV);
	snprintf(buf, n, "%s/%s%d", dir && *dir ? dir : RSW_PAGE_DIR_DEFAULT, RSW_PAGE_PREFIX,
		 (int)pid);
}

/* xorshift: cheap bytes that are not all zeros */
static uint64_t rnd_state = 88172645463325252ull;
static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* Shrinks and regrows its own page as fast as it can; every so often it scribbles over
 * the header, a counter slot and a mark slot, and runs the ring head far ahead. */
static int do_shrink(const char *ready)
{
	char path[4096];
	int e = rsw_init();
	if (e) {
		fprintf(stderr, "hostile: rsw_init: %s\n", strerror(-e));
		return 1;
	}
	rsw_mark("before the storm");
	rsw_counter_add("storm", 1);
	page_path(path, sizeof(path), getpid());
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		perror("hostile: open own page");
		return 1;
	}
	struct rsw_page *pg = mmap(NULL, sizeof(*pg), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (pg == MAP_FAILED) {
		perror("hostile: mmap");
		return 1;
	}
	touch(ready);
	time_t end = time(NULL) + LIFETIME_S;
	for (unsigned long i = 0; time(NULL) < end; i++) {
		if (ftruncate(fd, (off_t)(i % 3 == 0 ? 0 : 4096)) < 0 ||
		    ftruncate(fd, (off_t)sizeof(*pg)) < 0) {
			perror("hostile: ftruncate");
			return 1;
		}
		/* The header stays valid most of the time, so that readers get past it. */
		if (i % 7 == 0) {
			pg->hdr.magic = RSW_PAGE_MAGIC;
			pg->hdr.version = RSW_PAGE_VERSION;
			pg->hdr.size = (uint32_t)sizeof(*pg);
			pg->hdr.n_counters = RSW_PAGE_COUNTERS;
			pg->hdr.ring_slots = RSW_PAGE_RING_SLOTS;
			pg->hdr.name_size = RSW_PAGE_NAME_SIZE;
			pg->hdr.label_size = RSW_PAGE_LABEL_SIZE;
		}
		if (i % 11 == 0)
			pg->hdr.ring_head = rnd() % 3 ? rnd() : UINT64_MAX;
		if (i % 13 == 0)
			pg->hdr.ring_dropped = rnd();
		struct rsw_page_counter *c = &pg->counters[rnd() % RSW_PAGE_COUNTERS];
		if (i % 5 == 0) {
			c->state = RSW_SLOT_READY;
			c->kind = (uint32_t)(rnd() % 4);
			memset(c->name, 'A' + (int)(rnd() % 26), sizeof(c->name));	/* no NUL */
			c->value = rnd();
		}
		struct rsw_page_mark *m = &pg->ring[rnd() % RSW_PAGE_RING_SLOTS];
		if (i % 3 == 0) {
			m->seq = rnd() % 2 ? 2 * (pg->hdr.ring_head & 0xffff) + 2 : rnd();
			memset(m->label, '\033', sizeof(m->label));	/* no NUL either */
		}
	}
	return 0;
}

static int do_stale(const char *ready)
{
	int e = rsw_init();
	if (e) {
		fprintf(stderr, "hostile: rsw_init: %s\n", strerror(-e));
		return 1;
	}
	rsw_mark("stale mark");
	rsw_gauge_set("stale_gauge", 4242);
	touch(ready);
	sleep_ms(LIFETIME_S * 1000L);
	return 0;
}

static void await_file(const char *path, time_t end)
{
	while (!exists(path) && time(NULL) < end)
		sleep_ms(5);
}

static int do_victim(const char *ready, const char *go, const char *end_file)
{
	time_t end = time(NULL) + LIFETIME_S;
	int e = rsw_init();

	printf("init %d\n", e);
	fflush(stdout);
	rsw_mark("victim mark 1");
	rsw_gauge_set("victim_gauge", 17);
	touch(ready);
	await_file(go, end);
	rsw_mark("victim mark 2");
	await_file(end_file, end);
	return 0;
}

static int do_flood(const char *ms_s)
{
	struct timespec t0, t;
	long ms = strtol(ms_s, NULL, 10);
	unsigned long long n = 0;
	char label[32];
	if (ms <= 0 || ms > LIFETIME_S * 1000L || rsw_init() != 0)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int k = 0; k < 1000; k++) {
			snprintf(label, sizeof(label), "flood %llu", n);
			if (rsw_mark(label) == 0)
				n++;
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000L + (t.tv_nsec - t0.tv_nsec) / 1000000L < ms);
	printf("marks %llu\n", n);
	return 0;
}

/* The directory of the pages, as the library finds it. */
static const char *page_dir(void)
{
	const char *dir = getenv(RSW_PAGE_DIR_ENV);
	return dir && *dir ? dir : RSW_PAGE_DIR_DEFAULT;
}

static int do_shmflood(const char *pid_s, const char *n_s, const char *ready, const char *stop)
{
	long pid = strtol(pid_s, NULL, 10), n = strtol(n_s, NULL, 10), made = 0;
	char path[4096];
	int rc = 0;
	if (pid <= 0 || n < 0 || n > 1000000)
		return 2;
	snprintf(path, sizeof(path), "%s/%s%ld", page_dir(), RSW_PAGE_PREFIX, pid);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		fprintf(stderr, "hostile: cannot create %s: %s\n", path, strerror(errno));
		return 1;
	}
	close(fd);
	for (; made < n; made++) {
		snprintf(path, sizeof(path), "%s/%s%ld.%016llx", page_dir(), RSW_PAGE_PREFIX, pid,
			 (unsigned long long)made * 0x9e3779b97f4a7c15ull);
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0) {
			fprintf(stderr, "hostile: cannot create %s: %s\n", path, strerror(errno));
			rc = 1;
			break;
		}
		close(fd);
	}
	if (rc == 0)
		touch(ready);
	char poke[4096];
	snprintf(poke, sizeof(poke), "%s/hostile-poke.%ld", page_dir(), (long)getpid());
	time_t end = time(NULL) + LIFETIME_S;
	while (rc == 0 && !exists(stop) && time(NULL) < end) {
		touch(poke);
		unlink(poke);
		sleep_ms(50);
	}
	for (long k = 0; k < made; k++) {
		snprintf(path, sizeof(path), "%s/%s%ld.%016llx", page_dir(), RSW_PAGE_PREFIX, pid,
			 (unsigned long long)k * 0x9e3779b97f4a7c15ull);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/%s%ld", page_dir(), RSW_PAGE_PREFIX, pid);
	unlink(path);
	return rc;
}

#define HAMMERED 64

static int do_counters(const char *ms_s)
{
	rsw_counter_t *h[HAMMERED];
	long long v[HAMMERED] = { 0 };
	struct timespec t0, t;
	char name[32];
	long ms = strtol(ms_s, NULL, 10);
	if (ms <= 0 || ms > LIFETIME_S * 1000L || rsw_init() != 0)
		return 1;
	for (int k = 0; k < HAMMERED; k++) {
		snprintf(name, sizeof(name), "hammer_%02d", k);
		if (!(h[k] = rsw_counter(name)))
			return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 100; i++)
			for (int k = 0; k < HAMMERED; k++)
				if (rsw_counter_add_h(h[k], 1) == 0)
					v[k]++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000L + (t.tv_nsec - t0.tv_nsec) / 1000000L < ms);
	for (int k = 0; k < HAMMERED; k++)
		printf("counter hammer_%02d %lld\n", k, v[k]);
	return 0;
}

static int do_squat(const char *path)
{
	struct rsw_page *pg = calloc(1, sizeof(*pg));
	if (!pg)
		return 1;
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		fprintf(stderr, "hostile: cannot create %s: %s\n", path, strerror(errno));
		return 1;
	}
	pg->hdr.magic = RSW_PAGE_MAGIC;
	pg->hdr.version = RSW_PAGE_VERSION;
	pg->hdr.size = (uint32_t)sizeof(*pg);
	pg->hdr.n_counters = RSW_PAGE_COUNTERS;
	pg->hdr.ring_slots = RSW_PAGE_RING_SLOTS;
	pg->hdr.name_size = RSW_PAGE_NAME_SIZE;
	pg->hdr.label_size = RSW_PAGE_LABEL_SIZE;
	rsw_page_put_mark(pg, 1, "squatted", 8);
	ssize_t w = write(fd, pg, sizeof(*pg));
	close(fd);
	free(pg);
	return w == (ssize_t)sizeof(*pg) ? 0 : 1;
}

static int do_flip(const char *name, const char *a, const char *b, const char *ready)
{
	struct timespec t0, t;
	unsigned long n = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 256; i++, n++) {
			(void)symlink(n % 2 ? b : a, name);
			unlink(name);
			if (n == 0)
				touch(ready);
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < LIFETIME_S);
	return 0;
}

/* Forks until the child gets pid want (the kernel hands out ns_last_pid + 1 next, unless
 * another process forks first or want is taken), then runs argv in it. */
static int do_at(const char *want_s, char **argv)
{
	char *end;
	long want = strtol(want_s, &end, 10);
	if (*end || want < 2) {
		fprintf(stderr, "hostile at: bad pid '%s'\n", want_s);
		return 2;
	}
	for (int tries = 0; tries < 200; tries++) {
		int fd = open("/proc/sys/kernel/ns_last_pid", O_RDWR | O_CLOEXEC);
		if (fd < 0) {
			perror("hostile at: /proc/sys/kernel/ns_last_pid");
			return 99;
		}
		char text[24];
		int n = snprintf(text, sizeof(text), "%ld", want - 1);
		if (write(fd, text, (size_t)n) != n) {
			perror("hostile at: write ns_last_pid");
			close(fd);
			return 99;
		}
		close(fd);
		pid_t p = fork();
		if (p < 0) {
			perror("hostile at: fork");
			return 99;
		}
		if (p == 0) {
			if (getpid() != (pid_t)want)
				_exit(0);
			execvp(argv[0], argv);
			perror("hostile at: exec");
			_exit(127);
		}
		int st;
		while (waitpid(p, &st, 0) < 0 && errno == EINTR)
			;
		if (p == (pid_t)want)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	}
	fprintf(stderr, "hostile at: pid %ld stayed taken\n", want);
	return 99;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";
	if (strcmp(cmd, "shrink") == 0 && argc == 3)
		return do_shrink(argv[2]);
	if (strcmp(cmd, "stale") == 0 && argc == 3)
		return do_stale(argv[2]);
	if (strcmp(cmd, "victim") == 0 && argc == 5)
		return do_victim(argv[2], argv[3], argv[4]);
	if (strcmp(cmd, "squat") == 0 && argc == 3)
		return do_squat(argv[2]);
	if (strcmp(cmd, "flood") == 0 && argc == 3)
		return do_flood(argv[2]);
	if (strcmp(cmd, "shmflood") == 0 && argc == 6)
		return do_shmflood(argv[2], argv[3], argv[4], argv[5]);
	if (strcmp(cmd, "counters") == 0 && argc == 3)
		return do_counters(argv[2]);
	if (strcmp(cmd, "flip") == 0 && argc == 6)
		return do_flip(argv[2], argv[3], argv[4], argv[5]);
	if (strcmp(cmd, "at") == 0 && argc >= 4)
		return do_at(argv[2], argv + 3);
	fputs("usage: hostile shrink READY | stale READY | victim READY GO END | squat PATH |"
	      " flood MS | flip NAME A B READY | at PID CMD... | shmflood PID N READY STOP |"
	      " counters MS\n", stderr);
	return 2;
}
