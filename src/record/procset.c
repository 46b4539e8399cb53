#include "record/procset.h"
#include "base/sysroot.h"
#include "base/util.h"
#include "source/cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/kcmp.h>

static void init(struct procset *ps, procset_cb cb, void *ctx)
{
	memset(ps, 0, sizeof(*ps));
	ps->procs = (struct rfile)RFILE_INIT;
	ps->cn.fd = -1;
	ps->cb = cb;
	ps->ctx = ctx;
	ps->status_reuse = UINT_MAX;
	ps->note_all = 1;
	ps->clean_reads = 1;
}

int procset_open_tree(struct procset *ps, pid_t root, int use_cn, procset_cb cb, void *ctx)
{
	init(ps, cb, ctx);
	ps->kind = PROCSET_TREE;
	ps->root = root;
	ps->walk = 1;
	if (use_cn && proccn_open(&ps->cn) < 0)
		ps->cn.fd = -1;		/* no connector: walk at every sample */
	return 0;
}

int procset_open_cgroup(struct procset *ps, const char *cgdir, int use_cn, procset_cb cb,
			void *ctx)
{
	char path[PATH_MAX];
	init(ps, cb, ctx);
	ps->kind = PROCSET_CGROUP;
	if (use_cn && proccn_open(&ps->cn) < 0)
		ps->cn.fd = -1;
	(void)proccn_forks_only(&ps->cn);	/* else the others come, and are ignored */
	if (snprintf(path, sizeof(path), "%s/cgroup.procs", cgdir) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	int e = rfile_open_abs(&ps->procs, path);
	if (e == 0)
		ps->procs_path = xstrdup(path);
	return e;
}

static void list_add(struct procset *ps, pid_t pid)
{
	if (ps->nlist == ps->caplist) {
		ps->caplist = ps->caplist ? ps->caplist * 2 : 64;
		ps->list = xrealloc(ps->list, ps->caplist * sizeof(*ps->list));
	}
	ps->list[ps->nlist++] = pid;
}

/* "12 345 \n": the pids of a children file, appended to the list. */
static void add_children(struct procset *ps, const char *buf, size_t len)
{
	uint64_t v = 0;
	int in = 0;
	for (size_t i = 0; i <= len; i++) {
		char c = i < len ? buf[i] : ' ';
		if (c >= '0' && c <= '9') {
			if (v < INT32_MAX)
				v = v * 10 + (uint64_t)(c - '0');
			in = 1;
		} else {
			if (in && v > 0 && v <= INT32_MAX)
				list_add(ps, (pid_t)v);
			v = 0;
			in = 0;
		}
	}
}

/* Children forked by threads other than the main one (members with threads only). */
static void add_thread_children(struct procset *ps, pid_t pid)
{
	char path[PATH_MAX];
	if (sysroot_path(path, sizeof(path), "/proc/%d/task", (int)pid) < 0)
		return;
	DIR *d = opendir(path);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		char *end, *buf;
		size_t len;
		long tid = strtol(de->d_name, &end, 10);
		if (*end || tid <= 0 || tid == pid)
			continue;
		char rel[96];
		snprintf(rel, sizeof(rel), "/proc/%d/task/%ld/children", (int)pid, tid);
		if (read_file(rel, &buf, &len) == 0) {
			add_children(ps, buf, len);
			free(buf);
		}
	}
	closedir(d);
}

/* The index of member pid in ps->m (sorted by pid), or where it would go: *found says
 * which. */
static size_t slot_of(const struct procset *ps, pid_t pid, int *found)
{
	size_t lo = 0, hi = ps->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (ps->pids[mid] == pid) {
			*found = 1;
			return mid;
		}
		if (ps->pids[mid] < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = 0;
	return lo;
}

static struct procset_member *find(const struct procset *ps, pid_t pid)
{
	int found;
	size_t i = slot_of(ps, pid, &found);
	return found ? &ps->m[i] : NULL;
}

/* A pidset (procset.h): Fibonacci hashing spreads consecutive pids. */
static size_t pidset_slot(const struct pidset *p, pid_t pid)
{
	size_t mask = p->cap - 1, i = ((size_t)(uint32_t)pid * 2654435761u) & mask;
	while (p->slot[i] && p->slot[i] != pid)
		i = (i + 1) & mask;
	return i;
}

static int pidset_has(const struct pidset *p, pid_t pid)
{
	return p->cap && p->slot[pidset_slot(p, pid)] == pid;
}

static void pidset_add(struct pidset *p, pid_t pid)
{
	if (pid <= 0 || pidset_has(p, pid))
		return;
	if (2 * (p->n + 1) > p->cap) {	/* at most half full */
		struct pidset old = *p;
		p->cap = old.cap ? 2 * old.cap : 64;
		p->slot = xcalloc(p->cap, sizeof(*p->slot));
		for (size_t i = 0; i < old.cap; i++)
			if (old.slot[i])
				p->slot[pidset_slot(p, old.slot[i])] = old.slot[i];
		free(old.slot);
	}
	p->slot[pidset_slot(p, pid)] = pid;
	p->n++;
}

static void pidset_clear(struct pidset *p)
{
	if (p->n)
		memset(p->slot, 0, p->cap * sizeof(*p->slot));
	p->n = 0;
}

/* A member, the root, or a process forked by one since the read before last. */
static int held(const struct procset *ps, pid_t tgid)
{
	return (ps->kind == PROCSET_TREE && tgid == ps->root) || find(ps, tgid) ||
	       pidset_has(&ps->forked[0], tgid) || pidset_has(&ps->forked[1], tgid);
}

int procset_may_hold(const struct procset *ps, pid_t tgid)
{
	return !ps->filtering || held(ps, tgid);
}

/* One connector event: a new process (child pid == tgid) of a held parent (any, before
 * the first read: the members are not known yet) is noted in forked[0]; a tree keeps
 * it for the fork pass of procset_read (every new process, while the set does not
 * filter: its parent may be found by the read); a member's thread start or exit
 * invalidates its cached status. */
static void on_event(void *ctx, const struct proccn_event *ev)
{
	struct procset *ps = ctx;
	struct procset_member *m;
	if (ev->kind == PROCCN_FORK && ev->pid == ev->tgid) {
		int ours = ps->note_all || held(ps, ev->ptgid);
		if (ours)
			pidset_add(&ps->forked[0], ev->tgid);
		if (ps->kind != PROCSET_TREE || (ps->filtering && !ours))
			return;		/* the fork pass would not list it */
		if (ps->nforks == ps->capforks) {
			ps->capforks = ps->capforks ? ps->capforks * 2 : 64;
			ps->forks = xrealloc(ps->forks, ps->capforks * sizeof(*ps->forks));
		}
		ps->forks[ps->nforks].parent = ev->ptgid;
		ps->forks[ps->nforks].child = ev->tgid;
		ps->nforks++;
		return;
	}
	/* a thread's start, an exec, or any exit (a thread's, or the leader's while others
	 * run) */
	if ((m = find(ps, ev->tgid))) {
		proc_reader_invalidate(&m->proc);
		if (ev->kind == PROCCN_EXEC)
			m->mm_asked = 0;	/* its own address space now */
	}
}

/* The fork pass: in the order they happened, forks whose parent is in the set (a
 * member, or a child accepted earlier in this pass) list their child. Run once the
 * listed pids were read, so a parent found by this sample's walk counts, and a child
 * whose parent has exited meanwhile (an orphan) still joins. Returns whether it listed
 * any. */
static int fork_pass(struct procset *ps)
{
	size_t first = ps->nlist;
	for (size_t i = 0; i < ps->nforks; i++) {
		pid_t parent = ps->forks[i].parent;
		int in = find(ps, parent) != NULL;
		for (size_t j = first; !in && j < ps->nlist; j++)
			in = ps->list[j] == parent;
		for (size_t j = 0; !in && j < ps->nrecent; j++)
			in = ps->recent[j] == parent;
		if (in)
			list_add(ps, ps->forks[i].child);
	}
	ps->nforks = 0;
	/* Kept for the next pass: a child that was reaped before it could be opened
	 * (so never a member) may have forked after this drain. */
	ps->nrecent = ps->nlist - first;
	ps->recent = xrealloc(ps->recent, (ps->nrecent ? ps->nrecent : 1) * sizeof(*ps->recent));
	memcpy(ps->recent, ps->list + first, ps->nrecent * sizeof(*ps->recent));
	return ps->nlist > first;
}

/* Drains the connector into the list (after the root). On a loss, this sample walks
 * and every member's status is re-read; on another error the connector is dropped. */
static void drain_events(struct procset *ps)
{
	int e = proccn_drain(&ps->cn, on_event, ps);
	if (e == 0)
		return;
	ps->walk = 1;
	ps->filtering = 0;	/* a fork may be missing: two reads must pass */
	ps->clean_reads = 0;
	ps->note_all = 0;
	ps->cn_lost++;
	for (size_t i = 0; i < ps->n; i++)
		proc_reader_invalidate(&ps->m[i].proc);
	if (e != -ENOBUFS) {
		proccn_close(&ps->cn);
		for (size_t i = 0; i < ps->n; i++)
			proc_reader_use_thread_events(&ps->m[i].proc, 0);
	}
}

/* The member for pid, made (with its files open) when new; NULL when the process
 * cannot be opened (gone already). The pointer is valid until the next call. */
static struct procset_member *member(struct procset *ps, pid_t pid, int *is_new)
{
	int found;
	size_t lo = slot_of(ps, pid, &found);
	*is_new = 0;
	if (found)
		return &ps->m[lo];
	struct procset_member nm;
	memset(&nm, 0, sizeof(nm));
	nm.pid = pid;
	nm.children = (struct rfile)RFILE_INIT;
	nm.smaps.f = (struct rfile)RFILE_INIT;
	if (proc_reader_open(&nm.proc, pid) < 0)
		return NULL;
	proc_reader_max_reuse(&nm.proc, ps->status_reuse);
	if (ps->kind == PROCSET_TREE) {
		char rel[64];
		snprintf(rel, sizeof(rel), "/proc/%d/task/%d/children", (int)pid, (int)pid);
		rfile_open(&nm.children, rel);	/* missing: no children seen */
		if (ps->cn.fd >= 0)
			proc_reader_use_thread_events(&nm.proc, 1);
	}
	if (ps->n == ps->cap) {
		ps->cap = ps->cap ? ps->cap * 2 : 16;
		ps->m = xrealloc(ps->m, ps->cap * sizeof(*ps->m));
		ps->pids = xrealloc(ps->pids, ps->cap * sizeof(*ps->pids));
	}
	memmove(&ps->m[lo + 1], &ps->m[lo], (ps->n - lo) * sizeof(*ps->m));
	memmove(&ps->pids[lo + 1], &ps->pids[lo], (ps->n - lo) * sizeof(*ps->pids));
	ps->m[lo] = nm;
	ps->pids[lo] = pid;
	ps->n++;
	*is_new = 1;
	return &ps->m[lo];
}

static void member_close(struct procset_member *m)
{
	proc_reader_close(&m->proc);
	rfile_close(&m->children);
	smaps_reader_close(&m->smaps);
}

/* Re-reads a live member's context counters where the caller asked (and for a new
 * one). A failed read keeps the last figures. */
static void read_context(struct procset *ps, struct procset_member *m, int is_new)
{
	struct proc_stat st;
	struct proc_io io;
	if ((ps->read_stat || is_new || !m->have_stat) &&
	    proc_reader_read_stat(&m->proc, &st) == 0) {
		m->stat = st;
		m->have_stat = 1;
	}
	if ((ps->read_io || is_new) && proc_reader_read_io(&m->proc, &io) == 0) {
		m->io = io;
		m->have_io = 1;
	}
}

/* A member has left: its last counters stay in the member, for the caller to take
 * until the next read drops it (a dead member is never summed again; the caller keeps
 * the sum of those that left: procset.h). A zombie's stat still reads, with its final
 * counters. */
static void left_context(struct procset_member *m, int zombie)
{
	struct proc_stat st;
	if (zombie && proc_reader_read_stat(&m->proc, &st) == 0) {
		m->stat = st;
		m->have_stat = 1;
	}
}

static void add_context(const struct procset_member *m, struct procset_totals *out)
{
	if (m->have_stat) {
		out->minflt += m->stat.minflt;
		out->majflt += m->stat.majflt;
		out->utime += m->stat.utime;
		out->stime += m->stat.stime;
		out->have_stat = 1;
	}
	if (m->have_io) {
		out->read_bytes += m->io.read_bytes;
		out->write_bytes += m->io.write_bytes;
		out->have_io = 1;
	}
}

static int read_procs(struct procset *ps)
{
	size_t count = 0;
	int e = 0;
	if (ps->procs.fd >= 0)
		close(ps->procs.fd);
	ps->procs.fd = -1;
	if ((e = rfile_open_abs(&ps->procs, ps->procs_path)) == 0)
		e = rfile_read(&ps->procs);
	if (e < 0)
		return e == -ENOENT ? -ENODEV : e;
	if ((e = cg_procs_parse(ps->procs.buf, ps->procs.len, ps->list, ps->caplist, &count)) < 0)
		return e;
	if (count > ps->caplist) {
		ps->caplist = count * 2;
		ps->list = xrealloc(ps->list, ps->caplist * sizeof(*ps->list));
		if ((e = cg_procs_parse(ps->procs.buf, ps->procs.len, ps->list, ps->caplist, &count)) < 0)
			return e;
	}
	ps->nlist = count < ps->caplist ? count : ps->caplist;
	return 0;
}

/* Two reads of one address space, taken a moment apart: the same figures, or figures
 * that moved between the reads (the pages of a busy process change while its two
 * status files are read; under a sanitizer often by megabytes). */
static int close_figures(const struct proc_status *x, const struct proc_status *y)
{
	uint64_t hi = x->mem.rss > y->mem.rss ? x->mem.rss : y->mem.rss;
	uint64_t lo = x->mem.rss > y->mem.rss ? y->mem.rss : x->mem.rss;
	return hi - lo <= hi / 4 + ((uint64_t)1 << 20);
}

/* Processes that share one address space (a vfork child before its exec, posix_spawn,
 * a CLONE_VM helper such as a leak checker's tracer) hold the same pages: summed, a
 * 10 GiB parent spawning a command would read as 20 GiB. Such a child counts once:
 * its figures are taken out of the totals and read as 0. A child is asked about its
 * parent (kcmp KCMP_VM) when their figures are first close, and the answer is kept
 * until it runs a new program: an exec event, a new name, or, for a shared one,
 * figures that drifted apart, asks again. So a thousand forked children cost a
 * thousand kcmp calls once, not at every sample. A fork's child has a copy, not the
 * same address space, and counts. Without kcmp nothing is merged. */
static void dedupe_shared_mm(struct procset *ps, struct procset_totals *out)
{
	if (out->nprocs < 2 || ps->no_kcmp)
		return;
	for (size_t i = 0; i < ps->n; i++) {
		struct procset_member *b = &ps->m[i];
		if (b->gen != ps->gen || b->dead || !b->st.mem.rss)
			continue;
		struct procset_member *p = find(ps, b->st.ppid);
		if (!p || p == b || p->gen != ps->gen || p->dead)
			continue;
		int close = close_figures(&p->st, &b->st);
		if (b->mm_asked && strcmp(b->mm_name, b->st.name) != 0)
			b->mm_asked = 0;	/* a new program */
		if (b->mm_asked && b->mm_shared && !close)
			b->mm_asked = 0;
		if (!b->mm_asked) {
			b->mm_shared = 0;
			if (!close)
				continue;
			long r = syscall(SYS_kcmp, p->pid, b->pid, KCMP_VM, 0, 0);
			if (r < 0 && (errno == ENOSYS || errno == EPERM)) {
				ps->no_kcmp = 1;
				return;
			}
			b->mm_asked = 1;
			b->mm_shared = r == 0;
			strlcpy_rsw(b->mm_name, b->st.name, sizeof(b->mm_name));
		}
		if (!b->mm_shared)
			continue;
		mem_figures_sub(&out->mem, &b->st.mem);
		memset(&b->st.mem, 0, sizeof(b->st.mem));
	}
}

/* This sample's list of pids to read: a cgroup's procs file; or a tree's root, the
 * members it has (they stay until they die, see procset.h) and, from the connector,
 * the forks since the last sample. Returns 0 or -errno. */
static int list_members(struct procset *ps)
{
	ps->nlist = 0;
	if (ps->kind == PROCSET_CGROUP)
		return read_procs(ps);
	list_add(ps, ps->root);
	if (ps->cn.fd >= 0)
		drain_events(ps);
	ps->walking = ps->walk || ps->cn.fd < 0;
	ps->walk = 0;
	if (ps->walking)
		ps->walks++;
	for (size_t i = 0; i < ps->n; i++)
		if (!ps->m[i].dead)
			list_add(ps, ps->m[i].pid);
	return 0;
}

static void add_member(const struct procset_member *m, struct procset_totals *out)
{
	add_context(m, out);
	mem_figures_add(&out->mem, &m->st.mem);
	out->threads += m->st.threads;
	out->nprocs++;
}

/* Reads one listed member. Returns 1 when it was read and counted, 0 when it was
 * skipped (gone before it could be opened, listed twice, or dead now). */
static int read_member(struct procset *ps, pid_t pid, struct procset_totals *out)
{
	int is_new;
	struct procset_member *m = member(ps, pid, &is_new);
	if (!m || m->gen == ps->gen)
		return 0;
	m->gen = ps->gen;
	if (m->dead)
		return 0;
	if (proc_reader_read(&m->proc, &m->st) < 0) {
		/* a zombie, or reaped: gone (reported once, when it had been seen) */
		m->dead = 1;
		left_context(m, 1);
		if (!is_new && ps->cb)
			ps->cb(ps->ctx, m->pid, 0, &m->st);
		return 0;
	}
	read_context(ps, m, is_new);	/* first: a new one's start time is in its stat */
	if (is_new && ps->cb)
		ps->cb(ps->ctx, m->pid, 1, &m->st);
	add_member(m, out);
	if (ps->kind == PROCSET_TREE && ps->walking) {
		uint32_t threads = m->st.threads;
		if (m->children.fd >= 0 && rfile_read(&m->children) == 0)
			add_children(ps, m->children.buf, m->children.len);
		if (threads > 1)
			add_thread_children(ps, pid);	/* m may move: the list grew */
	}
	return 1;
}

/* Members no longer listed have left: they are reported, and kept dead until the next
 * read, so that the caller sees them leave (procset.h). */
static void sweep_members(struct procset *ps)
{
	size_t k = 0;
	for (size_t i = 0; i < ps->n; i++) {
		struct procset_member *m = &ps->m[i];
		if (m->gen != ps->gen && m->dead) {
			member_close(m);
			continue;
		}
		if (m->gen != ps->gen) {
			m->dead = 1;
			/* still alive maybe (left a cgroup): its counters as last read */
			left_context(m, 0);
			if (ps->cb)
				ps->cb(ps->ctx, m->pid, 0, &m->st);
		}
		if (k != i) {
			ps->m[k] = *m;
			ps->pids[k] = ps->pids[i];
		}
		k++;
	}
	ps->n = k;
}

/* After a read: forked[] moves on a generation. The set filters once two reads have
 * passed with no event lost, the first to know the members whose forks the second's
 * generation notes: what either notes is all a record may need. The time before the
 * first read counts as one, as every fork is noted then. */
static void next_generation(struct procset *ps)
{
	ps->note_all = 0;
	struct pidset older = ps->forked[1];
	ps->forked[1] = ps->forked[0];
	ps->forked[0] = older;
	pidset_clear(&ps->forked[0]);
	if (ps->clean_reads < 2)
		ps->clean_reads++;
	ps->filtering = ps->cn.fd >= 0 && ps->clean_reads == 2;
}

void procset_take_events(struct procset *ps)
{
	if (ps->cn.fd >= 0)
		drain_events(ps);
}

int procset_read(struct procset *ps, struct procset_totals *out)
{
	int root_ok = 0;
	memset(out, 0, sizeof(*out));
	ps->gen++;
	int e = list_members(ps);
	if (e < 0)
		return e;
	/* The list grows while it is walked (a tree's children are appended; then the
	 * children of this sample's forks). */
	for (size_t i = 0; i < ps->nlist || (ps->nforks && fork_pass(ps)); i++) {
		pid_t pid = ps->list[i];
		if (read_member(ps, pid, out) && pid == ps->root)
			root_ok = 1;
	}
	dedupe_shared_mm(ps, out);
	ps->read_stat = ps->read_io = 0;
	sweep_members(ps);
	next_generation(ps);
	if (ps->kind == PROCSET_TREE ? !root_ok : out->nprocs == 0)
		return -ESRCH;
	return 0;
}

int procset_read_pss(struct procset *ps, struct procset_pss *out)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < ps->n; i++) {
		struct procset_member *m = &ps->m[i];
		struct smaps_rollup r;
		int e;
		if (m->dead || m->gen != ps->gen)
			continue;
		if (m->mm_shared)
			continue;	/* its parent's address space: counted there */
		if (m->smaps.f.fd < 0 && !m->smaps_err) {
			if ((e = smaps_reader_open(&m->smaps, m->pid)) < 0) {
				if (e != -ENOENT && e != -ESRCH)
					m->smaps_err = e;
			}
		}
		if (m->smaps_err) {
			out->nfailed++;
			out->err = m->smaps_err;
			continue;
		}
		if (m->smaps.f.fd < 0 || (e = smaps_reader_read(&m->smaps, &r)) < 0)
			continue;	/* gone meanwhile */
		out->pss += r.pss;
		out->uss += smaps_uss(&r);
		out->swap_pss += r.swap_pss;
		out->nread++;
	}
	return 0;
}

int procset_descendants(pid_t root, size_t *nprocs, uint64_t *rss)
{
	struct procset ps;
	init(&ps, NULL, NULL);
	list_add(&ps, root);
	*nprocs = 0;
	*rss = 0;
	/* The list grows as it is walked; a bound keeps a fork storm from holding us. */
	for (size_t i = 0; i < ps.nlist && i < 100000; i++) {
		char rel[64], *buf;
		size_t len;
		struct proc_reader pr;
		struct proc_status st;
		snprintf(rel, sizeof(rel), "/proc/%d/task/%d/children", (int)ps.list[i],
			 (int)ps.list[i]);
		if (read_file(rel, &buf, &len) == 0) {
			add_children(&ps, buf, len);
			free(buf);
		} else if (i == 0) {
			free(ps.list);
			return -ESRCH;
		}
		if (i == 0 || proc_reader_open(&pr, ps.list[i]) < 0)
			continue;
		if (proc_reader_read(&pr, &st) == 0) {
			(*nprocs)++;
			*rss += st.mem.rss;
		}
		proc_reader_close(&pr);
	}
	free(ps.list);
	return 0;
}

int procset_has(const struct procset *ps, pid_t pid)
{
	return find(ps, pid) != NULL;
}

int procset_starttime(const struct procset *ps, pid_t pid, uint64_t *ticks)
{
	const struct procset_member *m = find(ps, pid);
	if (!m || !m->have_stat)
		return -ENOENT;
	*ticks = m->stat.starttime;
	return 0;
}

void procset_close(struct procset *ps, int report)
{
	for (size_t i = 0; i < ps->n; i++) {
		if (report && !ps->m[i].dead && ps->cb)
			ps->cb(ps->ctx, ps->m[i].pid, 0, &ps->m[i].st);
		member_close(&ps->m[i]);
	}
	free(ps->m);
	free(ps->pids);
	free(ps->list);
	free(ps->forks);
	free(ps->recent);
	free(ps->forked[0].slot);
	free(ps->forked[1].slot);
	rfile_close(&ps->procs);
	free(ps->procs_path);
	proccn_close(&ps->cn);
	memset(ps, 0, sizeof(*ps));
	ps->procs.fd = -1;
	ps->cn.fd = -1;
}

int procset_live(const struct procset *ps, pid_t pid)
{
	const struct procset_member *m = find(ps, pid);
	return m && !m->dead;
}
