/* The client library (lib/) and its reader (src/source/client.c) together: discovery,
 * counters and gauges, the mark ring, and the checks that refuse unsafe pages.
 * Every test works in a private $RSSWATCH_SHM_DIR. Tests that need a fresh page (or a
 * dead process) run the library in a fork() child that reports through its exit status
 * and waits on a pipe while the parent reads its page. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rsswatch.h"
#include "base/clock.h"
#include "source/client.h"
#include "source/proc.h"
#include "lib/page.h"

static char shm_dir[] = "/tmp/rsswatch-test-client.XXXXXX";

static void page_path(pid_t pid, char *buf, size_t n)
{
	int w = snprintf(buf, n, "%s/rsswatch.%ld", shm_dir, (long)pid);
	assert_true(w > 0 && (size_t)w < n);
}

/* Collects drained marks. */
struct marks {
	size_t n;
	char label[1200][RSW_PAGE_LABEL_SIZE];
	long long ns[1200];
};

static void collect(void *ctx, long long ns, const char *label)
{
	struct marks *m = ctx;

	if (m->n < 1200) {
		snprintf(m->label[m->n], sizeof(m->label[0]), "%s", label);
		m->ns[m->n] = ns;
	}
	m->n++;
}

static struct client_page *open_self(void)
{
	struct client_page *p = NULL;
	struct marks *m = calloc(1, sizeof(*m));

	assert_non_null(m);
	assert_int_equal(client_page_open(getpid(), geteuid(), &p), 0);
	/* Start from the present: earlier tests left marks in this process's ring. */
	assert_true(client_page_drain_marks(p, collect, m) >= 0);
	free(m);
	return p;
}

static long long counter_value(struct client_page *p, const char *name, int *is_gauge)
{
	struct client_counter c[RSW_COUNTERS_MAX + 1];
	size_t n = client_page_counters(p, c, RSW_COUNTERS_MAX + 1), i;

	for (i = 0; i < n; i++)
		if (strcmp(c[i].name, name) == 0) {
			if (is_gauge)
				*is_gauge = c[i].is_gauge;
			return c[i].value;
		}
	fail_msg("counter %s not found", name);
	return 0;
}

static void test_discovery(void **state)
{
	struct client_page *p = NULL;
	struct stat st;
	char path[PATH_MAX];

	(void)state;
	assert_int_equal(rsw_init(), 0);
	assert_int_equal(rsw_init(), 0);
	page_path(getpid(), path, sizeof(path));
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(st.st_uid, geteuid());
	assert_int_equal(st.st_size, sizeof(struct rsw_page));
	assert_int_equal(client_page_open(getpid(), geteuid(), &p), 0);
	assert_int_equal(rsw_counter_add("discovered", 3), 0);
	assert_int_equal(counter_value(p, "discovered", NULL), 3);
	client_page_close(p);
	p = NULL;
	assert_int_equal(client_page_open(999999999, geteuid(), &p), -ENOENT);
	assert_null(p);
	assert_int_equal(client_page_open(0, 0, &p), -EINVAL);
	client_page_close(NULL);
}

static void test_counters_and_gauges(void **state)
{
	struct client_page *p = open_self();
	rsw_counter_t *c;
	rsw_gauge_t *g;
	int is_gauge = -1;

	(void)state;
	assert_int_equal(rsw_counter_add("items", 5), 0);
	assert_int_equal(rsw_counter_add("items", -2), 0);
	assert_int_equal(counter_value(p, "items", &is_gauge), 3);
	assert_int_equal(is_gauge, 0);
	assert_int_equal(rsw_gauge_set("depth", 42), 0);
	assert_int_equal(rsw_gauge_set("depth", -7), 0);
	assert_int_equal(counter_value(p, "depth", &is_gauge), -7);
	assert_int_equal(is_gauge, 1);
	assert_int_equal(rsw_gauge_set("big", 9000000000000000000LL), 0);
	assert_true(counter_value(p, "big", NULL) == 9000000000000000000LL);

	c = rsw_counter("items");
	assert_non_null(c);
	assert_int_equal(rsw_counter_add_h(c, 10), 0);
	assert_int_equal(counter_value(p, "items", NULL), 13);
	g = rsw_gauge("depth");
	assert_non_null(g);
	assert_int_equal(rsw_gauge_set_h(g, 5), 0);
	assert_int_equal(counter_value(p, "depth", NULL), 5);

	/* A name has one kind. */
	assert_int_equal(rsw_gauge_set("items", 1), -EEXIST);
	assert_int_equal(rsw_counter_add("depth", 1), -EEXIST);
	assert_null(rsw_counter("depth"));
	assert_null(rsw_gauge("items"));
	assert_int_equal(counter_value(p, "items", NULL), 13);
	assert_int_equal(rsw_counter_add_h(NULL, 1), -EINVAL);
	assert_int_equal(rsw_gauge_set_h(NULL, 1), -EINVAL);
	client_page_close(p);
}

static void test_names(void **state)
{
	struct client_page *p = open_self();
	char name[64];

	(void)state;
	memset(name, 'n', sizeof(name));
	name[RSW_NAME_MAX] = '\0';	/* 47 bytes: the longest */
	assert_int_equal(rsw_counter_add(name, 1), 0);
	assert_int_equal(counter_value(p, name, NULL), 1);
	name[RSW_NAME_MAX] = 'n';
	name[RSW_NAME_MAX + 1] = '\0';	/* 48: rejected, never truncated */
	assert_int_equal(rsw_counter_add(name, 1), -ENAMETOOLONG);
	assert_int_equal(rsw_gauge_set(name, 1), -ENAMETOOLONG);
	assert_null(rsw_counter(name));
	assert_int_equal(rsw_counter_add("", 1), -EINVAL);
	assert_int_equal(rsw_counter_add(NULL, 1), -EINVAL);
	assert_int_equal(rsw_counter_add("has space", 1), -EINVAL);
	assert_int_equal(rsw_counter_add("quote\"", 1), -EINVAL);
	assert_int_equal(rsw_counter_add("ok.name:with-all_chars9", 1), 0);
	assert_int_equal(rsw_mark(""), -EINVAL);
	assert_int_equal(rsw_mark(NULL), -EINVAL);
	client_page_close(p);
}

struct adder {
	int id;
	long n;
	int errors;
};

static void *adder_main(void *arg)
{
	struct adder *a = arg;
	rsw_counter_t *h = rsw_counter("shared");
	char own[16];
	long i;

	snprintf(own, sizeof(own), "thread%d", a->id);
	for (i = 0; i < a->n; i++) {
		/* Half by name, half through the handle; each thread also owns a name. */
		if (i & 1)
			a->errors += rsw_counter_add_h(h, 1) != 0;
		else
			a->errors += rsw_counter_add("shared", 1) != 0;
		if (i % 1000 == 0)
			a->errors += rsw_counter_add(own, 1) != 0;
	}
	return NULL;
}

static void test_concurrent_counters(void **state)
{
	enum { THREADS = 8, ADDS = 1000000 };
	struct client_page *p = open_self();
	pthread_t t[THREADS];
	struct adder a[THREADS];
	char own[16];
	int i;

	(void)state;
	for (i = 0; i < THREADS; i++) {
		a[i].id = i;
		a[i].n = ADDS;
		a[i].errors = 0;
		assert_int_equal(pthread_create(&t[i], NULL, adder_main, &a[i]), 0);
	}
	for (i = 0; i < THREADS; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		assert_int_equal(a[i].errors, 0);
	}
	assert_int_equal(counter_value(p, "shared", NULL), (long long)THREADS * ADDS);
	for (i = 0; i < THREADS; i++) {
		snprintf(own, sizeof(own), "thread%d", i);
		assert_int_equal(counter_value(p, own, NULL), ADDS / 1000);
	}
	client_page_close(p);
}

/* Runs fn in a fork() child with a fresh library state; the child writes one byte to
 * ready when done, then waits for a byte on go before exiting with fn's result
 * (through exit(), so its exit handler runs, or _exit() when keep_file is set). */
struct child {
	pid_t pid;
	int ready, go;
};

static void child_start(struct child *c, int (*fn)(void), int keep_file)
{
	int r[2], g[2];
	char b = 0;

	assert_int_equal(pipe(r), 0);
	assert_int_equal(pipe(g), 0);
	c->pid = fork();
	assert_true(c->pid >= 0);
	if (c->pid == 0) {
		int rc;

		close(r[0]);
		close(g[1]);
		rc = fn();
		if (write(r[1], &b, 1) != 1 || read(g[0], &b, 1) != 1)
			rc = 99;
		if (keep_file)
			_exit(rc);
		exit(rc);
	}
	close(r[1]);
	close(g[0]);
	c->ready = r[0];
	c->go = g[1];
	assert_int_equal(read(c->ready, &b, 1), 1);
}

static int child_finish(struct child *c)
{
	int status;
	char b = 0;

	assert_int_equal(write(c->go, &b, 1), 1);
	close(c->go);
	close(c->ready);
	assert_int_equal(waitpid(c->pid, &status, 0), c->pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static rsw_counter_t *parent_handle;

static int child_uses_lib(void)
{
	int bad = 0;

	/* The handle was looked up in the parent: here it must not reach its page. */
	bad |= rsw_counter_add_h(parent_handle, 1000) != 0;
	bad |= rsw_counter_add("child_items", 41) != 0;
	bad |= rsw_counter_add("child_items", 1) != 0;
	bad |= rsw_gauge_set("child_gauge", -5) != 0;
	bad |= rsw_mark("child started") != 0;
	bad |= rsw_mark("child done") != 0;
	return bad;
}

static void test_fork_child(void **state)
{
	struct client_page *self = open_self(), *p = NULL;
	struct marks *m = calloc(1, sizeof(*m));
	struct child c;
	struct stat st;
	char path[PATH_MAX];
	long long before, now = real_ns();

	(void)state;
	assert_non_null(m);
	parent_handle = rsw_counter("parent_only");
	assert_non_null(parent_handle);
	before = counter_value(self, "parent_only", NULL);
	child_start(&c, child_uses_lib, 0);
	assert_int_equal(client_page_open(c.pid, geteuid(), &p), 0);
	assert_int_equal(counter_value(p, "child_items", NULL), 42);
	assert_int_equal(counter_value(p, "child_gauge", NULL), -5);
	assert_int_equal(client_page_drain_marks(p, collect, m), 0);
	assert_int_equal(m->n, 2);
	assert_string_equal(m->label[0], "child started");
	assert_string_equal(m->label[1], "child done");
	assert_true(m->ns[0] >= now - 1000000000LL && m->ns[0] <= m->ns[1]);
	assert_true(m->ns[1] <= real_ns());
	client_page_close(p);
	assert_int_equal(child_finish(&c), 0);
	/* The child's exit handler removed its page; the parent's is untouched. */
	page_path(c.pid, path, sizeof(path));
	assert_int_equal(lstat(path, &st), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(counter_value(self, "parent_only", NULL), before);
	assert_int_equal(rsw_counter_add_h(parent_handle, 1), 0);
	assert_int_equal(counter_value(self, "parent_only", NULL), before + 1);
	client_page_close(self);
	free(m);
}

static int child_fills_table(void)
{
	char name[16];
	int i, bad = 0;

	for (i = 0; i < RSW_COUNTERS_MAX; i++) {
		snprintf(name, sizeof(name), "c%d", i);
		bad |= rsw_counter_add(name, i) != 0;
	}
	bad |= rsw_counter_add("one_too_many", 1) != -ENOSPC;
	bad |= rsw_gauge_set("one_too_many", 1) != -ENOSPC;
	bad |= rsw_counter("one_too_many") != NULL;
	bad |= rsw_counter_add("c7", 100) != 0;	/* existing names still work */
	return bad;
}

static void test_table_full(void **state)
{
	struct client_counter c[RSW_COUNTERS_MAX + 8];
	struct client_page *p = NULL;
	struct child ch;
	size_t n, i;
	long long sum = 0;

	(void)state;
	child_start(&ch, child_fills_table, 0);
	assert_int_equal(client_page_open(ch.pid, geteuid(), &p), 0);
	n = client_page_counters(p, c, RSW_COUNTERS_MAX + 8);
	assert_int_equal(n, RSW_COUNTERS_MAX);
	for (i = 0; i < n; i++)
		sum += c[i].value;
	assert_int_equal(sum, 63 * 64 / 2 + 100);
	assert_int_equal(counter_value(p, "c7", NULL), 107);
	assert_int_equal(client_page_counters(p, c, 5), 5);
	client_page_close(p);
	assert_int_equal(child_finish(&ch), 0);
}

static void test_ring_wrap(void **state)
{
	struct client_page *p = open_self();
	struct marks *m = calloc(1, sizeof(*m));
	char label[32];
	int batch, i;

	(void)state;
	assert_non_null(m);
	/* 3 laps and a bit of the 256-slot ring, read every 200 marks: nothing lost. */
	for (batch = 0; batch < 4; batch++) {
		m->n = 0;
		for (i = 0; i < 200; i++) {
			snprintf(label, sizeof(label), "wrap %d", batch * 200 + i);
			assert_int_equal(rsw_mark(label), 0);
		}
		assert_int_equal(client_page_drain_marks(p, collect, m), 0);
		assert_int_equal(m->n, 200);
		for (i = 0; i < 200; i++) {
			snprintf(label, sizeof(label), "wrap %d", batch * 200 + i);
			assert_string_equal(m->label[i], label);
			if (i)
				assert_true(m->ns[i] >= m->ns[i - 1]);
		}
	}
	m->n = 0;
	assert_int_equal(client_page_drain_marks(p, collect, m), 0);
	assert_int_equal(m->n, 0);
	client_page_close(p);
	free(m);
}

static void test_overrun(void **state)
{
	struct client_page *p = open_self();
	struct marks *m = calloc(1, sizeof(*m));
	char label[32];
	int i;

	(void)state;
	assert_non_null(m);
	for (i = 0; i < 1000; i++) {
		snprintf(label, sizeof(label), "over %d", i);
		assert_int_equal(rsw_mark(label), 0);
	}
	/* The ring keeps the newest 256; the 744 before them are reported lost. */
	assert_int_equal(client_page_drain_marks(p, collect, m), 1000 - RSW_RING_SLOTS);
	assert_int_equal(m->n, RSW_RING_SLOTS);
	for (i = 0; i < RSW_RING_SLOTS; i++) {
		snprintf(label, sizeof(label), "over %d", 1000 - RSW_RING_SLOTS + i);
		assert_string_equal(m->label[i], label);
	}
	m->n = 0;
	assert_int_equal(client_page_drain_marks(p, collect, m), 0);
	assert_int_equal(m->n, 0);
	/* Exactly one lap ahead is not an overrun. */
	for (i = 0; i < RSW_RING_SLOTS; i++)
		assert_int_equal(rsw_mark("lap"), 0);
	assert_int_equal(client_page_drain_marks(p, collect, m), 0);
	assert_int_equal(m->n, RSW_RING_SLOTS);
	client_page_close(p);
	free(m);
}

/* A second, independent view of this process's page, as another process would have. */
static struct rsw_page *map_self(void)
{
	char path[PATH_MAX];
	struct rsw_page *pg;
	int fd;

	page_path(getpid(), path, sizeof(path));
	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	pg = mmap(NULL, sizeof(*pg), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(pg != MAP_FAILED);
	close(fd);
	return pg;
}

static void test_torn_read(void **state)
{
	struct client_page *p = open_self();
	struct marks *m = calloc(1, sizeof(*m));
	struct rsw_page *pg = map_self();
	struct rsw_page_mark *slot;
	uint64_t t, saved;

	(void)state;
	assert_non_null(m);
	assert_int_equal(rsw_mark("first"), 0);
	assert_int_equal(rsw_mark("second"), 0);
	t = __atomic_load_n(&pg->hdr.ring_head, __ATOMIC_ACQUIRE) - 2;
	slot = &pg->ring[t % RSW_RING_SLOTS];
	saved = slot->seq;
	assert_true(saved == 2 * t + 2);

	/* "first" is being written (odd seq): nothing is delivered, nothing lost, and
	 * "second" waits behind it so that order is kept. */
	__atomic_store_n(&slot->seq, 2 * t + 1, __ATOMIC_RELEASE);
	assert_int_equal(client_page_drain_marks(p, collect, m), 0);
	assert_int_equal(m->n, 0);
	assert_int_equal(client_page_drain_marks(p, collect, m), 0);
	assert_int_equal(m->n, 0);
	/* The write completes: both arrive, in order. */
	__atomic_store_n(&slot->seq, saved, __ATOMIC_RELEASE);
	assert_int_equal(client_page_drain_marks(p, collect, m), 0);
	assert_int_equal(m->n, 2);
	assert_string_equal(m->label[0], "first");
	assert_string_equal(m->label[1], "second");

	/* A slot already taken by a newer ticket (the reader was lapped while reading):
	 * that mark is counted lost, the next one still arrives. */
	m->n = 0;
	assert_int_equal(rsw_mark("third"), 0);
	assert_int_equal(rsw_mark("fourth"), 0);
	t = __atomic_load_n(&pg->hdr.ring_head, __ATOMIC_ACQUIRE) - 2;
	slot = &pg->ring[t % RSW_RING_SLOTS];
	__atomic_store_n(&slot->seq, 2 * (t + RSW_RING_SLOTS) + 1, __ATOMIC_RELEASE);
	assert_int_equal(client_page_drain_marks(p, collect, m), 1);
	assert_int_equal(m->n, 1);
	assert_string_equal(m->label[0], "fourth");
	__atomic_store_n(&slot->seq, 2 * t + 2, __ATOMIC_RELEASE);	/* as it was */

	/* A writer that took a ticket and gave up (its slot was busy) bumps
	 * ring_dropped: the reader skips that ticket at once instead of waiting. */
	m->n = 0;
	__atomic_fetch_add(&pg->hdr.ring_head, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&pg->hdr.ring_dropped, 1, __ATOMIC_RELAXED);
	assert_int_equal(rsw_mark("fifth"), 0);
	assert_int_equal(client_page_drain_marks(p, collect, m), 1);
	assert_int_equal(m->n, 1);
	assert_string_equal(m->label[0], "fifth");
	munmap(pg, sizeof(*pg));
	client_page_close(p);
	free(m);
}

/* Concurrent producers and a concurrent reader: every label must arrive whole (it is
 * rebuilt from its own numbers and compared), per-producer order is kept, and
 * delivered + lost accounts for every mark made. */
enum { PRODUCERS = 2, PER_PRODUCER = 30000 };

static void make_label(char *buf, size_t n, int who, int seq)
{
	char fill[64];
	size_t len = (size_t)(seq % 60);

	memset(fill, 'a' + seq % 26, len);
	fill[len] = '\0';
	snprintf(buf, n, "p%d:%d:%s", who, seq, fill);
}

static void *producer_main(void *arg)
{
	int who = (int)(intptr_t)arg, i;
	char label[RSW_LABEL_MAX + 1];

	for (i = 0; i < PER_PRODUCER; i++) {
		make_label(label, sizeof(label), who, i);
		rsw_mark(label);	/* -ENOBUFS is allowed: counted lost by the reader */
	}
	return NULL;
}

struct checker {
	long delivered;
	int last[PRODUCERS];
	int bad;
};

static void check_mark(void *ctx, long long ns, const char *label)
{
	struct checker *c = ctx;
	char want[RSW_LABEL_MAX + 1];
	int who, seq;
	char *end;

	(void)ns;
	c->delivered++;
	if (label[0] != 'p') {
		c->bad++;
		return;
	}
	who = (int)strtol(label + 1, &end, 10);
	if (*end != ':' || who < 0 || who >= PRODUCERS) {
		c->bad++;
		return;
	}
	seq = (int)strtol(end + 1, &end, 10);
	make_label(want, sizeof(want), who, seq);
	if (strcmp(want, label) != 0 || seq <= c->last[who])
		c->bad++;
	c->last[who] = seq;
}

static void test_concurrent_marks(void **state)
{
	struct client_page *p = open_self();
	struct checker c;
	pthread_t t[PRODUCERS];
	long lost = 0, total = PRODUCERS * PER_PRODUCER;
	int64_t deadline;
	int i, rc;

	(void)state;
	memset(&c, 0, sizeof(c));
	for (i = 0; i < PRODUCERS; i++)
		c.last[i] = -1;
	for (i = 0; i < PRODUCERS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, producer_main,
			(void *)(intptr_t)i), 0);
	deadline = mono_ns() + 60LL * 1000000000LL;
	while (c.delivered + lost < total && mono_ns() < deadline) {
		rc = client_page_drain_marks(p, check_mark, &c);
		assert_true(rc >= 0);
		lost += rc;
	}
	for (i = 0; i < PRODUCERS; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
	assert_int_equal(c.bad, 0);
	assert_int_equal(c.delivered + lost, total);
	assert_true(c.delivered > 0);
	print_message("# concurrent marks: %ld delivered, %ld lost\n", c.delivered, lost);
	client_page_close(p);
}

static volatile sig_atomic_t handler_calls, handler_ok;

static void on_signal(int sig)
{
	(void)sig;
	handler_calls++;
	if (rsw_mark("from a signal handler") == 0)
		handler_ok++;
}

static void test_signal_mark(void **state)
{
	struct client_page *p = open_self();
	struct marks *m = calloc(1, sizeof(*m));
	struct sigaction sa;
	struct itimerval it;
	long from_handler = 0, lost = 0, normal = 0;
	size_t i;
	int k, rc;

	(void)state;
	assert_non_null(m);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGUSR1, &sa, NULL), 0);
	assert_int_equal(sigaction(SIGALRM, &sa, NULL), 0);

	assert_int_equal(raise(SIGUSR1), 0);
	assert_int_equal(handler_ok, 1);
	assert_int_equal(client_page_drain_marks(p, collect, m), 0);
	assert_int_equal(m->n, 1);
	assert_string_equal(m->label[0], "from a signal handler");

	/* Signals landing in the middle of the producer path of this same thread. */
	handler_calls = handler_ok = 0;
	memset(&it, 0, sizeof(it));
	it.it_interval.tv_usec = 100;
	it.it_value.tv_usec = 100;
	assert_int_equal(setitimer(ITIMER_REAL, &it, NULL), 0);
	for (k = 0; k < 200 || handler_calls < 20; k++) {
		assert_int_equal(rsw_mark("from the main flow"), 0);
		normal++;
		if (k % 64 == 0) {
			m->n = 0;
			rc = client_page_drain_marks(p, collect, m);
			assert_true(rc >= 0);
			lost += rc;
			for (i = 0; i < m->n && i < 1200; i++)
				from_handler += strcmp(m->label[i], "from a signal handler") == 0;
		}
	}
	memset(&it, 0, sizeof(it));
	assert_int_equal(setitimer(ITIMER_REAL, &it, NULL), 0);
	m->n = 0;
	rc = client_page_drain_marks(p, collect, m);
	assert_true(rc >= 0);
	lost += rc;
	for (i = 0; i < m->n && i < 1200; i++)
		from_handler += strcmp(m->label[i], "from a signal handler") == 0;
	assert_int_equal(lost, 0);
	assert_int_equal(from_handler, handler_ok);
	assert_int_equal(handler_ok, handler_calls);
	signal(SIGALRM, SIG_DFL);
	signal(SIGUSR1, SIG_DFL);
	client_page_close(p);
	free(m);
}

/* Labels over the limit are cut at a UTF-8 boundary; the reader terminates them. */
static void test_long_labels(void **state)
{
	struct client_page *p = open_self();
	struct marks *m = calloc(1, sizeof(*m));
	char label[RSW_LABEL_MAX + 8];
	long long before = real_ns();

	(void)state;
	assert_non_null(m);
	assert_int_equal(rsw_mark("short"), 0);
	assert_int_equal(rsw_mark(""), -EINVAL);
	assert_int_equal(rsw_mark(NULL), -EINVAL);
	/* 94 bytes then a 2-byte UTF-8 character that would cross the 95-byte limit:
	 * the label is cut before the character, not inside it. */
	memset(label, 'x', 94);
	memcpy(label + 94, "\xc3\xa9yz", 5);
	assert_int_equal(rsw_mark(label), 0);
	label[95] = '\0';
	memset(label, 'y', 95);
	assert_int_equal(rsw_mark(label), 0);
	assert_int_equal(client_page_drain_marks(p, collect, m), 0);
	assert_int_equal(m->n, 3);
	assert_string_equal(m->label[0], "short");
	assert_true(m->ns[0] >= before && m->ns[0] <= real_ns());
	assert_int_equal(strlen(m->label[1]), 94);
	assert_int_equal(strlen(m->label[2]), 95);
	client_page_close(p);
	free(m);
}

static int child_replaces_stale(void)
{
	char path[PATH_MAX], victim[PATH_MAX];
	struct stat st;
	int fd, bad = 0;

	/* A stale regular file where the page goes, then a symlink to a file that must
	 * survive untouched. */
	snprintf(path, sizeof(path), "%s/rsswatch.%ld", shm_dir, (long)getpid());
	snprintf(victim, sizeof(victim), "%s/victim.%ld", shm_dir, (long)getpid());
	fd = open(victim, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	bad |= fd < 0 || write(fd, "keep", 4) != 4;
	close(fd);
	bad |= symlink(victim, path) != 0;
	bad |= rsw_counter_add("after_stale", 7) != 0;
	bad |= lstat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 4096;
	bad |= stat(victim, &st) != 0 || st.st_size != 4;
	unlink(victim);
	return bad;
}

static int child_replaces_junk(void)
{
	char path[PATH_MAX];
	int fd, bad = 0;

	snprintf(path, sizeof(path), "%s/rsswatch.%ld", shm_dir, (long)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
	bad |= fd < 0 || write(fd, "junk", 4) != 4;
	close(fd);
	bad |= rsw_counter_add("after_stale", 8) != 0;
	return bad;
}

static void test_stale(void **state)
{
	struct client_page *p = NULL;
	struct child c;
	struct stat st;
	char path[PATH_MAX];

	(void)state;
	/* The library replaces what is in its way; the child dies without its exit
	 * handler, as a killed process would, leaving the page behind. */
	child_start(&c, child_replaces_stale, 1);
	assert_int_equal(client_page_open(c.pid, geteuid(), &p), 0);
	assert_int_equal(counter_value(p, "after_stale", NULL), 7);
	client_page_close(p);
	assert_int_equal(child_finish(&c), 0);
	page_path(c.pid, path, sizeof(path));
	assert_int_equal(lstat(path, &st), 0);
	/* Its process is gone: the page left behind is nobody's. */
	assert_int_equal(client_page_open(c.pid, geteuid(), &p), -ESRCH);
	assert_int_equal(client_page_remove_stale(c.pid), 0);
	assert_int_equal(lstat(path, &st), -1);
	assert_int_equal(client_page_remove_stale(c.pid), -ENOENT);

	child_start(&c, child_replaces_junk, 1);
	assert_int_equal(client_page_open(c.pid, geteuid(), &p), 0);
	assert_int_equal(counter_value(p, "after_stale", NULL), 8);
	client_page_close(p);
	assert_int_equal(child_finish(&c), 0);
	assert_int_equal(client_page_remove_stale(c.pid), 0);

	/* A live process's page is never removed. */
	assert_int_equal(client_page_remove_stale(getpid()), -EBUSY);
	page_path(getpid(), path, sizeof(path));
	assert_int_equal(lstat(path, &st), 0);
}

/* A process that only waits to be killed: a live pid for made-up pages. */
static pid_t idle_start(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);	/* not even a failed test leaves it */
		for (;;)
			pause();
	}
	return pid;
}

static void idle_stop(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static int64_t boot_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Writes a file of the given size and magic at the page name of pid, with a header
 * that says pid made it now (as the library of a live process pid would). */
static void fake_page(pid_t pid, off_t size, uint32_t magic, mode_t mode)
{
	char path[PATH_MAX];
	struct rsw_page pg;
	struct client_ident who;
	int fd;

	page_path(pid, path, sizeof(path));
	unlink(path);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	memset(&pg, 0, sizeof(pg));
	pg.hdr.magic = magic;
	pg.hdr.version = RSW_PAGE_VERSION;
	pg.hdr.size = sizeof(pg);
	pg.hdr.pid = pid;
	pg.hdr.n_counters = RSW_PAGE_COUNTERS;
	pg.hdr.ring_slots = RSW_PAGE_RING_SLOTS;
	pg.hdr.name_size = RSW_PAGE_NAME_SIZE;
	pg.hdr.label_size = RSW_PAGE_LABEL_SIZE;
	pg.hdr.created_boot_ns = boot_ns();
	if (client_ident_read(pid, &who) == 0) {
		pg.hdr.start_ticks = who.start_ticks;
		pg.hdr.pid_ino = who.pid_ino;
	}
	if (size > 0)
		assert_int_equal(write(fd, &pg, (size_t)size), size);
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

static void test_refused(void **state)
{
	struct client_page *p = NULL;
	char path[PATH_MAX], other[PATH_MAX];
	pid_t fake = idle_start();

	(void)state;
	assert_int_equal(geteuid(), 0);	/* chown needs root */
	page_path(getpid(), path, sizeof(path));

	/* Another owner: the name is taken by another user (and no fallback page). */
	assert_int_equal(chown(path, 65534, 65534), 0);
	assert_int_equal(client_page_open(getpid(), 0, &p), -EEXIST);
	assert_null(p);
	assert_int_equal(client_page_open(getpid(), 65534, &p), 0);
	client_page_close(p);
	p = NULL;
	assert_int_equal(chown(path, 0, 0), 0);
	/* A mode other than 0600. */
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(client_page_open(getpid(), 0, &p), -EPERM);
	assert_int_equal(chmod(path, 0600), 0);
	/* A second link to it. */
	page_path(fake, other, sizeof(other));
	assert_int_equal(link(path, other), 0);
	assert_int_equal(client_page_open(getpid(), 0, &p), -EPERM);
	assert_int_equal(client_page_open(fake, 0, &p), -EPERM);
	assert_int_equal(unlink(other), 0);
	/* A symlink to a valid page: never followed. */
	assert_int_equal(symlink(path, other), 0);
	assert_int_equal(client_page_open(fake, 0, &p), -EEXIST);
	assert_int_equal(unlink(other), 0);
	/* A FIFO: refused, without blocking in open(). */
	assert_int_equal(mkfifo(other, 0600), 0);
	assert_int_equal(client_page_open(fake, 0, &p), -EEXIST);
	assert_int_equal(unlink(other), 0);
	/* A directory. */
	assert_int_equal(mkdir(other, 0600), 0);
	assert_true(client_page_open(fake, 0, &p) < 0);
	assert_int_equal(rmdir(other), 0);
	assert_null(p);

	/* Headers: empty (being created), unfinished, wrong size, wrong magic/version. */
	fake_page(fake, 0, 0, 0600);
	assert_int_equal(client_page_open(fake, 0, &p), -ENOENT);
	fake_page(fake, sizeof(struct rsw_page), 0, 0600);
	assert_int_equal(client_page_open(fake, 0, &p), -ENOENT);
	fake_page(fake, 100, RSW_PAGE_MAGIC, 0600);
	assert_int_equal(client_page_open(fake, 0, &p), -EPROTO);
	fake_page(fake, sizeof(struct rsw_page), 0x12345678, 0600);
	assert_int_equal(client_page_open(fake, 0, &p), -EPROTO);
	fake_page(fake, sizeof(struct rsw_page), RSW_PAGE_MAGIC, 0600);
	assert_int_equal(client_page_open(fake, 0, &p), 0);
	client_page_close(p);
	p = NULL;
	/* Truncated after opening: calls refuse (the reader never maps the page, so no
	 * access can fault). */
	assert_int_equal(client_page_open(fake, 0, &p), 0);
	assert_int_equal(truncate(other, 4096), 0);
	assert_int_equal(client_page_drain_marks(p, collect, NULL), -EPROTO);
	assert_int_equal(client_page_counters(p, NULL, 10), 0);
	client_page_close(p);
	unlink(other);
	idle_stop(fake);
}

/* Hostile content: a reader must not trust indexes, strings or states. */
static void test_hostile_page(void **state)
{
	struct client_counter c[RSW_COUNTERS_MAX];
	struct client_page *p = NULL;
	struct marks *m = calloc(1, sizeof(*m));
	struct rsw_page *pg;
	char path[PATH_MAX];
	int fd, i;
	pid_t fake = idle_start();

	(void)state;
	assert_non_null(m);
	fake_page(fake, sizeof(struct rsw_page), RSW_PAGE_MAGIC, 0600);
	page_path(fake, path, sizeof(path));
	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	pg = mmap(NULL, sizeof(*pg), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(pg != MAP_FAILED);
	close(fd);
	for (i = 0; i < RSW_PAGE_COUNTERS; i++) {
		pg->counters[i].state = RSW_SLOT_READY;
		pg->counters[i].kind = RSW_KIND_COUNTER;
		memset(pg->counters[i].name, 'A', RSW_PAGE_NAME_SIZE);	/* no NUL */
	}
	memcpy(pg->counters[3].name, "ok", 3);
	memcpy(pg->counters[4].name, "bad name", 9);
	pg->counters[5].kind = 77;
	memcpy(pg->counters[5].name, "badkind", 8);
	for (i = 0; i < RSW_PAGE_RING_SLOTS; i++) {
		pg->ring[i].seq = 2 * (uint64_t)i + 2;
		memset(pg->ring[i].label, 'L', RSW_PAGE_LABEL_SIZE);	/* no NUL */
	}
	pg->hdr.ring_head = RSW_PAGE_RING_SLOTS;
	assert_int_equal(client_page_open(fake, 0, &p), 0);
	assert_int_equal(client_page_counters(p, c, RSW_COUNTERS_MAX), 62);
	assert_int_equal(strlen(c[0].name), RSW_NAME_MAX);
	assert_string_equal(c[3].name, "ok");
	assert_int_equal(client_page_drain_marks(p, collect, m), 0);
	assert_int_equal(m->n, RSW_PAGE_RING_SLOTS);
	assert_int_equal(strlen(m->label[0]), RSW_LABEL_MAX);
	/* A head far in the future: everything before the last lap is lost. */
	m->n = 0;
	pg->hdr.ring_head = UINT64_C(1) << 40;
	assert_int_equal(client_page_drain_marks(p, collect, m), INT32_MAX);
	/* And one moved backwards: resynchronised, nothing delivered. */
	pg->hdr.ring_head = 5;
	assert_int_equal(client_page_drain_marks(p, collect, m), 0);
	client_page_close(p);
	munmap(pg, sizeof(*pg));
	unlink(path);
	free(m);
	idle_stop(fake);
}

static int remove_dir(void **state)
{
	(void)state;
	return remove_tree(shm_dir);
}

/* A page left by a process that died, found under the same pid by a later process:
 * its creator's pid, start time or creation time gives it away. */
static void test_stale_owner(void **state)
{
	struct client_page *p = NULL;
	struct client_header h;
	char path[PATH_MAX];
	struct rsw_page pg;
	pid_t fake = idle_start();
	int fd;

	(void)state;
	/* The pure check: tick 500 at 100 ticks a second is 5 s after boot. */
	struct client_ident who = { 42, 500, 0 };
	memset(&h, 0, sizeof(h));
	h.pid = 42;
	h.start_ticks = 500;
	h.created_boot_ns = 5000000000LL;
	assert_int_equal(client_header_is_of(&h, &who, 100), 0);
	who.pid = 43;
	assert_int_equal(client_header_is_of(&h, &who, 100), -ESTALE);
	who.pid = 42;
	who.start_ticks = 501;
	assert_int_equal(client_header_is_of(&h, &who, 100), -ESTALE);
	who.start_ticks = 500;
	h.created_boot_ns = 4999999999LL;	/* made before the target started */
	assert_int_equal(client_header_is_of(&h, &who, 100), -ESTALE);
	h.start_ticks = 0;	/* a creator that could not read /proc: the time decides */
	assert_int_equal(client_header_is_of(&h, &who, 100), -ESTALE);
	h.created_boot_ns = 5000000000LL;
	assert_int_equal(client_header_is_of(&h, &who, 100), 0);
	who.start_ticks = 0;	/* nothing known of the target but its pid */
	assert_int_equal(client_header_is_of(&h, &who, 100), 0);
	/* Two processes that started in the same tick: the pidfs inode tells them apart,
	 * and decides alone where both sides know it. */
	who.start_ticks = 500;
	h.start_ticks = 500;
	h.pid_ino = 7;
	who.pid_ino = 8;
	assert_int_equal(client_header_is_of(&h, &who, 100), -ESTALE);
	who.pid_ino = 7;
	h.created_boot_ns = 0;
	assert_int_equal(client_header_is_of(&h, &who, 100), 0);
	who.pid_ino = 0;	/* the recorder's kernel has no pidfs: times decide */
	assert_int_equal(client_header_is_of(&h, &who, 100), -ESTALE);

	/* The same on files, for a live process. */
	page_path(fake, path, sizeof(path));
	fake_page(fake, sizeof(struct rsw_page), RSW_PAGE_MAGIC, 0600);
	assert_int_equal(client_page_open(fake, geteuid(), &p), 0);
	client_page_close(p);
	p = NULL;
	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &pg, sizeof(pg), 0), sizeof(pg));
	pg.hdr.pid = fake + 1;
	assert_int_equal(pwrite(fd, &pg, sizeof(pg), 0), sizeof(pg));
	assert_int_equal(client_page_open(fake, geteuid(), &p), -ESTALE);
	pg.hdr.pid = fake;
	pg.hdr.pid_ino++;
	assert_int_equal(pwrite(fd, &pg, sizeof(pg), 0), sizeof(pg));
	assert_int_equal(client_page_open(fake, geteuid(), &p), -ESTALE);
	pg.hdr.pid_ino = 0;
	pg.hdr.start_ticks++;
	assert_int_equal(pwrite(fd, &pg, sizeof(pg), 0), sizeof(pg));
	assert_int_equal(client_page_open(fake, geteuid(), &p), -ESTALE);
	pg.hdr.start_ticks = 0;
	pg.hdr.created_boot_ns = 1;
	assert_int_equal(pwrite(fd, &pg, sizeof(pg), 0), sizeof(pg));
	assert_int_equal(client_page_open(fake, geteuid(), &p), -ESTALE);
	assert_null(p);
	close(fd);
	/* The pid's process is gone. */
	idle_stop(fake);
	assert_int_equal(client_page_open(fake, geteuid(), &p), -ESRCH);
	unlink(path);
}

/* Squatting: a directory made at the child's page name before it sets up (a user
 * can do that for any pid to come, and nobody else can remove it). */
static int child_squatted_by_dir(void)
{
	char path[PATH_MAX];
	int bad = 0;

	snprintf(path, sizeof(path), "%s/rsswatch.%ld", shm_dir, (long)getpid());
	bad |= mkdir(path, 0755) != 0;
	bad |= rsw_init() != 0;
	bad |= rsw_mark("squatted but heard") != 0;
	bad |= rsw_gauge_set("squat_gauge", 5) != 0;
	return bad;
}

/* ... and a file of another user in a sticky directory, against a victim that is not
 * root (root may remove any file, so it simply takes its name back). */
static int child_squatted_by_file(void)
{
	char path[PATH_MAX];
	int fd, bad = 0;

	snprintf(path, sizeof(path), "%s/rsswatch.%ld", shm_dir, (long)getpid());
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	bad |= fd < 0 || fchown(fd, 65533, 65533) != 0;
	close(fd);
	bad |= setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0;
	bad |= rsw_init() != 0;
	bad |= rsw_gauge_set("squat_gauge", 6) != 0;
	return bad;
}

static void test_squatted(void **state)
{
	struct client_page *p = NULL;
	struct marks *m = calloc(1, sizeof(*m));
	struct child c;
	char path[PATH_MAX];
	DIR *d;
	struct dirent *de;
	int fallbacks = 0;

	(void)state;
	assert_non_null(m);
	child_start(&c, child_squatted_by_dir, 0);
	assert_int_equal(client_page_open(c.pid, geteuid(), &p), 0);
	assert_int_equal(client_page_squatted(p), 1);
	assert_int_equal(counter_value(p, "squat_gauge", NULL), 5);
	assert_int_equal(client_page_drain_marks(p, collect, m), 0);
	assert_int_equal(m->n, 1);
	assert_string_equal(m->label[0], "squatted but heard");
	client_page_close(p);
	p = NULL;
	/* The fallback is a file "rsswatch.PID." and 16 hex digits, removed at exit. */
	snprintf(path, sizeof(path), "rsswatch.%ld.", (long)c.pid);
	d = opendir(shm_dir);
	assert_non_null(d);
	while ((de = readdir(d)))
		if (strncmp(de->d_name, path, strlen(path)) == 0 &&
		    strlen(de->d_name) == strlen(path) + 16)
			fallbacks++;
	closedir(d);
	assert_int_equal(fallbacks, 1);
	assert_int_equal(child_finish(&c), 0);
	/* The squatter's directory is no page: left alone. */
	assert_int_equal(client_page_remove_stale(c.pid), -EPERM);
	page_path(c.pid, path, sizeof(path));
	assert_int_equal(rmdir(path), 0);

	assert_int_equal(chmod(shm_dir, 01777), 0);
	child_start(&c, child_squatted_by_file, 0);
	/* The squatter's file is refused as the page of a process of uid 65534. */
	assert_int_equal(client_page_open(c.pid, 65534, &p), 0);
	assert_int_equal(client_page_squatted(p), 1);
	assert_int_equal(counter_value(p, "squat_gauge", NULL), 6);
	client_page_close(p);
	assert_int_equal(child_finish(&c), 0);
	assert_int_equal(chmod(shm_dir, 0700), 0);
	page_path(c.pid, path, sizeof(path));
	unlink(path);
	free(m);
}

/* A line of /proc/PID/maps names a fallback page of pid only when shared, with an
 * inode, and with a last path component that is exactly a fallback name. */
static void test_maps_line(void **state)
{
	struct client_map_page m;
	const char *ok = "7f1c2a3b4000-7f1c2a3bd000 rw-s 00000000 00:1a 123456                     "
			 "/dev/shm/rsswatch.4242.0123456789abcdef";
	char buf[256];
	size_t n = strlen(ok);

	(void)state;
	memset(&m, 0, sizeof(m));
	assert_int_equal(client_maps_line_parse(ok, n, 4242, &m), 1);
	assert_int_equal(m.ino, 123456);
	assert_int_equal(m.dev_major, 0);
	assert_int_equal(m.dev_minor, 0x1a);
	assert_string_equal(m.name, "rsswatch.4242.0123456789abcdef");
	/* another pid's, a cut line, one byte short, private, deleted, no inode, anonymous */
	assert_int_equal(client_maps_line_parse(ok, n, 424, &m), 0);
	assert_int_equal(client_maps_line_parse(ok, n - 1, 4242, &m), 0);
	assert_int_equal(client_maps_line_parse(ok, 40, 4242, &m), 0);
	snprintf(buf, sizeof(buf), "%s", ok);
	buf[29] = 'p';
	assert_int_equal(client_maps_line_parse(buf, n, 4242, &m), 0);
	snprintf(buf, sizeof(buf), "%s (deleted)", ok);
	assert_int_equal(client_maps_line_parse(buf, strlen(buf), 4242, &m), 0);
	snprintf(buf, sizeof(buf), "1000-2000 rw-s 00000000 00:1a 0 /dev/shm/rsswatch.4242.0123456789abcdef");
	assert_int_equal(client_maps_line_parse(buf, strlen(buf), 4242, &m), 0);
	snprintf(buf, sizeof(buf), "1000-2000 rw-s 00000000 00:00 0 ");
	assert_int_equal(client_maps_line_parse(buf, strlen(buf), 4242, &m), 0);
	/* upper-case digits are not the library's; a file merely named like a page in
	 * another directory is still a candidate (its inode and owner decide) */
	snprintf(buf, sizeof(buf), "1000-2000 r--s 00000000 fd:01 77 /x/rsswatch.4242.0123456789ABCDEF");
	assert_int_equal(client_maps_line_parse(buf, strlen(buf), 4242, &m), 0);
	snprintf(buf, sizeof(buf), "1000-2000 r--s 00000000 fd:01 77 /x/rsswatch.4242.0123456789abcdef");
	assert_int_equal(client_maps_line_parse(buf, strlen(buf), 4242, &m), 1);
	assert_int_equal(m.dev_major, 0xfd);
	/* garbage: no crash, no match */
	for (size_t k = 0; k < n; k++)
		assert_int_equal(client_maps_line_parse(ok + k, n - k - 1, 4242, &m), 0);
}

/* A squatted name: what holds it is reported, and no file of another owner is taken
 * for a page, however many there are at fallback names. */
static void test_find_squat(void **state)
{
	struct client_page *p = NULL;
	struct client_find f;
	char path[PATH_MAX];
	pid_t fake = idle_start();

	(void)state;
	page_path(fake, path, sizeof(path));
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(client_page_find(fake, 0, &f, &p), -EEXIST);
	assert_int_equal(f.squatted, 1);
	assert_int_equal(f.squat_uid, geteuid());
	assert_int_equal(f.squat_type, S_IFDIR);
	assert_int_equal(f.capped, 0);
	assert_null(p);
	assert_int_equal(rmdir(path), 0);
	/* nothing there: not squatted */
	assert_int_equal(client_page_find(fake, 0, &f, &p), -ENOENT);
	assert_int_equal(f.squatted, 0);
	idle_stop(fake);
}

/* The parsers on bytes at odd addresses, short buffers and garbage. */
static void test_parsers(void **state)
{
	static unsigned char raw[sizeof(struct rsw_page) + 1];
	struct rsw_page *pg = calloc(1, sizeof(*pg));
	struct client_header h;
	struct client_counter c[4];
	char label[RSW_PAGE_LABEL_SIZE];
	int64_t ns = 0;
	unsigned char *odd = raw + 1;	/* misaligned on purpose */

	(void)state;
	assert_non_null(pg);
	pg->hdr.version = RSW_PAGE_VERSION;
	pg->hdr.size = sizeof(*pg);
	pg->hdr.pid = 4242;
	pg->hdr.n_counters = RSW_PAGE_COUNTERS;
	pg->hdr.ring_slots = RSW_PAGE_RING_SLOTS;
	pg->hdr.name_size = RSW_PAGE_NAME_SIZE;
	pg->hdr.label_size = RSW_PAGE_LABEL_SIZE;
	pg->hdr.ring_head = 9;
	memcpy(odd, pg, sizeof(*pg));
	assert_int_equal(client_header_parse(odd, sizeof(*pg), &h), -ENOENT);	/* no magic yet */
	pg->hdr.magic = RSW_PAGE_MAGIC;
	memcpy(odd, pg, sizeof(*pg));
	assert_int_equal(client_header_parse(odd, sizeof(pg->hdr) - 1, &h), -EPROTO);
	assert_int_equal(client_header_parse(odd, sizeof(pg->hdr), &h), 0);
	assert_int_equal(h.pid, 4242);
	assert_int_equal(h.ring_head, 9);
	pg->hdr.label_size = 4096;
	memcpy(odd, pg, sizeof(*pg));
	assert_int_equal(client_header_parse(odd, sizeof(pg->hdr), &h), -EPROTO);

	/* Counters: READY in the first copy counts, with the name of the second. */
	pg->counters[0].state = RSW_SLOT_READY;
	pg->counters[0].kind = RSW_KIND_GAUGE;
	memcpy(pg->counters[0].name, "depth", 6);
	pg->counters[0].value = (uint64_t)-5;
	pg->counters[1].state = RSW_SLOT_CLAIMING;
	memcpy(pg->counters[1].name, "half", 5);
	pg->counters[1].kind = RSW_KIND_COUNTER;
	memcpy(odd, pg->counters, sizeof(pg->counters));
	assert_int_equal(client_counters_parse(odd, odd, sizeof(pg->counters), c, 4), 1);
	assert_string_equal(c[0].name, "depth");
	assert_int_equal(c[0].value, -5);
	assert_int_equal(c[0].is_gauge, 1);
	/* A table shorter than one slot yields nothing; max bounds the output. */
	assert_int_equal(client_counters_parse(odd, odd, 63, c, 4), 0);
	assert_int_equal(client_counters_parse(odd, odd, sizeof(pg->counters), c, 0), 0);

	/* A mark slot: complete for its ticket, not yet, or taken by a newer one; the
	 * label is terminated even when the slot holds none. */
	pg->ring[3].seq = 2 * 3 + 2;
	pg->ring[3].realtime_ns = 77;
	memset(pg->ring[3].label, 'L', sizeof(pg->ring[3].label));
	memcpy(odd, &pg->ring[3], sizeof(pg->ring[3]));
	assert_int_equal(client_mark_parse(odd, sizeof(pg->ring[3]), 3, &ns, label), 1);
	assert_int_equal(ns, 77);
	assert_int_equal(strlen(label), RSW_LABEL_MAX);
	assert_int_equal(client_mark_parse(odd, sizeof(pg->ring[3]), 4, &ns, label), 0);
	assert_int_equal(client_mark_parse(odd, sizeof(pg->ring[3]), 2, &ns, label), -1);
	assert_int_equal(client_mark_parse(odd, sizeof(pg->ring[3]) - 1, 3, &ns, label), 0);
	free(pg);
}

/* client_page_dir_changed(): 1 at the first look, while the directory changed less
 * than 2 s ago, and after any change; 0 only for an old, unchanged directory. */
static void test_dir_changed(void **state)
{
	(void)state;
	struct client_dir_watch w = { { 0, 0 }, 0, 0 };
	struct timespec old[2] = { { time(NULL) - 10, 0 }, { time(NULL) - 10, 0 } };
	assert_int_equal(utimensat(AT_FDCWD, shm_dir, old, 0), 0);
	assert_int_equal(client_page_dir_changed(&w), 1);	/* the first look */
	assert_int_equal(client_page_dir_changed(&w), 0);	/* old and unchanged */
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/new-file", shm_dir);
	int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(client_page_dir_changed(&w), 1);	/* a file was made */
	assert_int_equal(client_page_dir_changed(&w), 1);	/* still under 2 s old */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(utimensat(AT_FDCWD, shm_dir, old, 0), 0);
	assert_int_equal(client_page_dir_changed(&w), 1);
	assert_int_equal(client_page_dir_changed(&w), 0);
	/* one descriptor of the directory, kept from the first look, closed at the end */
	int dfd = w.dirfd_plus1 - 1;
	assert_true(dfd >= 0);
	assert_true(fcntl(dfd, F_GETFD) >= 0);
	client_dir_watch_close(&w);
	assert_int_equal(w.dirfd_plus1, 0);
	assert_true(fcntl(dfd, F_GETFD) < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_discovery),
		cmocka_unit_test(test_counters_and_gauges),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_concurrent_counters),
		cmocka_unit_test(test_fork_child),
		cmocka_unit_test(test_table_full),
		cmocka_unit_test(test_ring_wrap),
		cmocka_unit_test(test_overrun),
		cmocka_unit_test(test_torn_read),
		cmocka_unit_test(test_concurrent_marks),
		cmocka_unit_test(test_signal_mark),
		cmocka_unit_test(test_long_labels),
		cmocka_unit_test(test_stale),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_hostile_page),
		cmocka_unit_test(test_parsers),
		cmocka_unit_test(test_stale_owner),
		cmocka_unit_test(test_squatted),
		cmocka_unit_test(test_maps_line),
		cmocka_unit_test(test_find_squat),
		cmocka_unit_test(test_dir_changed),
	};

	if (!mkdtemp(shm_dir) || setenv("RSSWATCH_SHM_DIR", shm_dir, 1) != 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, remove_dir);
}
