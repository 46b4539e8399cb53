/* User stacks unwound with DWARF CFI and named, on elfutils' libdw (unwind.h).
 *
 * A process's map is one Dwfl: each file it maps with code is reported as a module at
 * the addresses it occupies (dwfl_report_module), and the file is opened only when a
 * walk reaches it. A walk attaches the copied registers and stack as the state of one
 * thread (dwfl_attach_state): libdw reads the CFI of each module's .eh_frame (or
 * .debug_frame) and asks memory_read() for the words it needs, which come from the
 * copy alone. So nothing of the process is read but its maps and its files.
 *
 * The files are the target's, and the recorder is root: a file is opened through
 * /proc/PID/map_files (the very file mapped, whatever its path names now) or else by
 * its path, non-blocking, and used only when it is a regular file with the inode the
 * map named. A FIFO or a device at that path is never read.
 *
 * A frame outlives its process as (module, offset in the file's link-time addresses);
 * a module is a file and its build id, interned for the unwinder's life. Naming opens
 * the file again, apart from any process (an offline Dwfl per module, its separate
 * debug information found by libdw's standard search under /usr/lib/debug). */
#include "source/unwind.h"
#include "base/sysroot.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The maps of this many processes are kept, the least recently walked dropped. */
#define UW_PROCS 64
/* A map is read again, for a pc in no module it knows, at most this often. */
#define UW_REREAD_NS 10000000LL

static int parse_hex(const char **p, const char *end, uint64_t *out)
{
	uint64_t v = 0;
	const char *s = *p;
	int digits = 0;
	for (; s < end; s++, digits++) {
		int d;
		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else
			break;
		if (v >> 60)
			return -EINVAL;
		v = v << 4 | (uint64_t)d;
	}
	if (!digits)
		return -EINVAL;
	*p = s;
	*out = v;
	return 0;
}

static int expect(const char **p, const char *end, char c)
{
	if (*p >= end || **p != c)
		return -EINVAL;
	(*p)++;
	return 0;
}

int uw_maps_line_parse(const char *line, size_t len, struct uw_map *out)
{
	const char *p = line, *end = line + len;
	struct uw_map m = { 0 };
	uint64_t major, minor;
	if (parse_hex(&p, end, &m.start) < 0 || expect(&p, end, '-') < 0 ||
	    parse_hex(&p, end, &m.end) < 0 || expect(&p, end, ' ') < 0 || m.end <= m.start)
		return -EINVAL;
	if (end - p < 5 || p[4] != ' ')
		return -EINVAL;
	m.exec = p[2] == 'x';
	p += 5;
	if (parse_hex(&p, end, &m.offset) < 0 || expect(&p, end, ' ') < 0 ||
	    parse_hex(&p, end, &major) < 0 || expect(&p, end, ':') < 0 ||
	    parse_hex(&p, end, &minor) < 0 || expect(&p, end, ' ') < 0)
		return -EINVAL;
	uint64_t ino = 0;
	int digits = 0;
	for (; p < end && *p >= '0' && *p <= '9'; p++, digits++) {
		if (ino > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		ino = ino * 10 + (uint64_t)(*p - '0');
	}
	if (!digits || (p < end && *p != ' '))
		return -EINVAL;
	m.inode = ino;
	while (p < end && *p == ' ')
		p++;
	static const char deleted[] = " (deleted)";
	size_t n = (size_t)(end - p), dn = sizeof(deleted) - 1;
	if (n && *p == '/' && ino && !(n >= dn && memcmp(end - dn, deleted, dn) == 0)) {
		m.path = p;
		m.path_len = n;
	}
	*out = m;
	return 0;
}

#ifndef HAVE_DW

int unwinder_new(struct unwinder **out)
{
	(void)out;
	return -ENOSYS;
}

void unwinder_free(struct unwinder *u)
{
	(void)u;
}

void unwinder_stale(struct unwinder *u, pid_t pid)
{
	(void)u;
	(void)pid;
}

void unwinder_forget(struct unwinder *u, pid_t pid)
{
	(void)u;
	(void)pid;
}

int unwinder_walk(struct unwinder *u, pid_t pid, const uint64_t regs[UW_NREGS],
		  const void *stack, size_t len, struct uw_frame *out, int max)
{
	(void)u, (void)pid, (void)regs, (void)stack, (void)len, (void)out, (void)max;
	return -ENOSYS;
}

const char *unwinder_module_path(const struct unwinder *u, uint32_t module)
{
	(void)u;
	(void)module;
	return NULL;
}

int unwinder_symbolize(struct unwinder *u, const struct uw_frame *f, char *buf, size_t n)
{
	(void)u, (void)f, (void)buf, (void)n;
	return -ENOSYS;
}

#else

#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#ifdef HAVE_IBERTY
#include <libiberty/demangle.h>
#endif

#include "base/buf.h"

#define BUILD_ID_MAX 64

/* A file and its build id, interned: what a frame's module number names. The offline
 * Dwfl that names its frames is made at the first naming (state 0: not yet; 1: made;
 * -1: the file cannot be read; -2: it has another build id now). */
struct module {
	char *path;
	unsigned char id[BUILD_ID_MAX];
	int id_len;
	int state;
	Dwfl *dwfl;
	Dwfl_Module *mod;
};

/* One file of a process's map: where it lies and how to open it. id is its module
 * once a walk reached it (UW_NO_MODULE before). */
struct pmod {
	uint64_t low, high;		/* the whole file's mappings */
	uint64_t first_start, first_end;	/* its first mapping: its map_files name */
	uint64_t inode;
	char *path;
	uint32_t id;
	pid_t pid;
};

/* A process's map, and the walk in progress over it. */
struct proc {
	pid_t pid;			/* 0: a free slot */
	uint64_t used;
	int64_t read_at;
	Dwfl *dwfl;
	struct pmod *mods;
	size_t nmods;
	struct unwinder *u;
	const uint64_t *regs;
	const unsigned char *stack;
	size_t len;
	struct uw_frame *out;
	int max, n, unknown;
	int stale;			/* read the map again before the next walk */
};

struct unwinder {
	struct proc procs[UW_PROCS];
	uint64_t clock;
	struct module *mods;
	size_t nmods, cap;
};

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The target's file, opened without following it anywhere else: the mapped file
 * itself through map_files while the process lives, else the path, if it still is a
 * regular file with the inode mapped. -1 when neither. */
static int open_pmod(const struct pmod *m)
{
	char path[PATH_MAX];
	int fd = -1;
	if (sysroot_path(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", (int)m->pid,
			 (unsigned long long)m->first_start, (unsigned long long)m->first_end) == 0)
		fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		fd = open(m->path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_ino != m->inode) {
		close(fd);
		return -1;
	}
	return fd;
}

static int proc_find_elf(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base,
			 char **file_name, Elf **elfp)
{
	(void)mod, (void)name, (void)base;
	const struct pmod *m = *userdata;
	int fd = open_pmod(m);
	if (fd < 0)
		return -1;
	*file_name = strdup(m->path);
	*elfp = NULL;
	return fd;
}

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
};

/* The thread libdw walks is the copy: its registers and its stack, nothing else. */
static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_arg)
{
	(void)dwfl;
	if (*thread_arg)
		return 0;
	*thread_arg = arg;
	return ((struct proc *)arg)->pid;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_arg)
{
	(void)dwfl, (void)tid;
	*thread_arg = arg;
	return true;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	(void)dwfl;
	const struct proc *p = arg;
	uint64_t sp = p->regs[UW_REG_SP];
	if (addr < sp || addr - sp > p->len || p->len - (addr - sp) < sizeof(*result))
		return false;
	memcpy(result, p->stack + (addr - sp), sizeof(*result));
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	const struct proc *p = arg;
	Dwarf_Word regs[UW_NREGS];
	for (int i = 0; i < UW_NREGS; i++)
		regs[i] = p->regs[i];
	if (!dwfl_thread_state_registers(thread, 0, UW_NREGS, regs))
		return false;
	dwfl_thread_state_register_pc(thread, regs[UW_REG_IP]);
	return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

static void proc_drop_map(struct proc *p)
{
	if (p->dwfl)
		dwfl_end(p->dwfl);
	for (size_t i = 0; i < p->nmods; i++)
		free(p->mods[i].path);
	free(p->mods);
	p->dwfl = NULL;
	p->mods = NULL;
	p->nmods = 0;
}

/* Adds line's mapping to the map being read: a file's mappings, in order from its
 * offset 0, make one module; one with code makes the module count. */
static int add_mapping(struct proc *p, const struct uw_map *m, size_t *cap, int *has_code)
{
	struct pmod *last = p->nmods ? &p->mods[p->nmods - 1] : NULL;
	if (last && m->inode == last->inode && m->start >= last->high && m->offset != 0 &&
	    strlen(last->path) == m->path_len && memcmp(last->path, m->path, m->path_len) == 0) {
		last->high = m->end;
		*has_code |= m->exec;
		return 0;
	}
	if (last && !*has_code) {	/* the one before had no code: not a module */
		free(last->path);
		p->nmods--;
	}
	*has_code = m->exec;
	if (m->offset != 0)	/* a file mapped from its middle: no ELF header there */
		return 0;
	if (p->nmods == *cap) {
		size_t c = *cap ? *cap * 2 : 32;
		struct pmod *n = realloc(p->mods, c * sizeof(*n));
		if (!n)
			return -ENOMEM;
		p->mods = n;
		*cap = c;
	}
	char *path = strndup(m->path, m->path_len);
	if (!path)
		return -ENOMEM;
	p->mods[p->nmods++] = (struct pmod){ m->start, m->end, m->start, m->end, m->inode, path,
					      UW_NO_MODULE, p->pid };
	return 0;
}

/* Reads /proc/PID/maps into a new Dwfl for p. 0, -ESRCH or -ENOMEM. */
static int proc_read_map_anew(struct proc *p)
{
	char path[PATH_MAX];
	p->read_at = now_ns();
	if (sysroot_path(path, sizeof(path), "/proc/%d/maps", (int)p->pid) < 0)
		return -ESRCH;
	FILE *f = fopen(path, "re");
	if (!f)
		return -ESRCH;
	char *line = NULL;
	size_t lcap = 0, cap = 0;
	ssize_t len;
	int has_code = 0, err = 0;
	while (!err && (len = getline(&line, &lcap, f)) > 0) {
		if (line[len - 1] == '\n')
			len--;
		struct uw_map m;
		if (uw_maps_line_parse(line, (size_t)len, &m) == 0 && m.path)
			err = add_mapping(p, &m, &cap, &has_code);
		else
			has_code = 1;	/* an anonymous mapping ends the file before it */
	}
	if (!err && p->nmods && !has_code) {
		free(p->mods[p->nmods - 1].path);
		p->nmods--;
	}
	free(line);
	fclose(f);
	if (err)
		goto fail;
	if (!p->nmods) {	/* a process reaped, or one without files */
		err = -ESRCH;
		goto fail;
	}
	p->dwfl = dwfl_begin(&proc_callbacks);
	if (!p->dwfl) {
		err = -ENOMEM;
		goto fail;
	}
	dwfl_report_begin(p->dwfl);
	for (size_t i = 0; i < p->nmods; i++) {
		struct pmod *m = &p->mods[i];
		const char *base = strrchr(m->path, '/');
		Dwfl_Module *mod = dwfl_report_module(p->dwfl, base ? base + 1 : m->path, m->low,
						      m->high);
		void **ud;
		if (mod && dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL))
			*ud = m;
	}
	dwfl_report_end(p->dwfl, NULL, NULL);
	if (!dwfl_attach_state(p->dwfl, NULL, p->pid, &thread_callbacks, p)) {
		err = -ESRCH;	/* no module could be read: nothing to walk with */
		goto fail;
	}
	return 0;
fail:
	proc_drop_map(p);
	return err;
}

/* Reads p's map again, keeping the one it had where the new one cannot be read: a
 * process that exited (its map now empty) is still walked with its last map, until
 * unwinder_forget(). 0, -ESRCH or -ENOMEM. */
static int proc_read_map(struct proc *p)
{
	struct proc had = *p;
	p->dwfl = NULL;
	p->mods = NULL;
	p->nmods = 0;
	int err = proc_read_map_anew(p);
	if (err < 0 && had.dwfl) {
		p->dwfl = had.dwfl;
		p->mods = had.mods;
		p->nmods = had.nmods;
		return err;	/* read_at is the try's: the next one waits as long */
	}
	proc_drop_map(&had);
	return err;
}

static struct proc *proc_find(struct unwinder *u, pid_t pid)
{
	for (int i = 0; i < UW_PROCS; i++)
		if (u->procs[i].pid == pid)
			return &u->procs[i];
	return NULL;
}

static struct proc *proc_slot(struct unwinder *u, pid_t pid)
{
	struct proc *p = proc_find(u, pid);
	if (p)
		return p;
	p = &u->procs[0];
	for (int i = 0; i < UW_PROCS; i++) {
		if (!u->procs[i].pid) {
			p = &u->procs[i];
			break;
		}
		if (u->procs[i].used < p->used)
			p = &u->procs[i];
	}
	proc_drop_map(p);
	p->pid = pid;
	p->u = u;
	p->read_at = 0;
	p->stale = 0;
	return p;
}

/* The number of module (path, build id), interned. UW_NO_MODULE without memory. */
static uint32_t intern(struct unwinder *u, const char *path, const unsigned char *id, int id_len)
{
	if (id_len < 0 || id_len > BUILD_ID_MAX)
		id_len = 0;
	for (size_t i = 0; i < u->nmods; i++)
		if (u->mods[i].id_len == id_len && memcmp(u->mods[i].id, id, (size_t)id_len) == 0 &&
		    strcmp(u->mods[i].path, path) == 0)
			return (uint32_t)i;
	if (u->nmods == u->cap) {
		size_t c = u->cap ? u->cap * 2 : 32;
		struct module *n = realloc(u->mods, c * sizeof(*n));
		if (!n)
			return UW_NO_MODULE;
		u->mods = n;
		u->cap = c;
	}
	struct module *m = &u->mods[u->nmods];
	memset(m, 0, sizeof(*m));
	m->path = strdup(path);
	if (!m->path)
		return UW_NO_MODULE;
	memcpy(m->id, id, (size_t)id_len);
	m->id_len = id_len;
	return (uint32_t)u->nmods++;
}

/* The frame of pc in p's map. */
static struct uw_frame frame_at(struct proc *p, Dwarf_Addr pc)
{
	struct uw_frame f = { UW_NO_MODULE, pc };
	Dwfl_Module *mod = dwfl_addrmodule(p->dwfl, pc);
	void **ud;
	Dwarf_Addr bias;
	if (!mod || !dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL) || !*ud ||
	    !dwfl_module_getelf(mod, &bias)) {
		p->unknown++;
		return f;
	}
	struct pmod *m = *ud;
	if (m->id == UW_NO_MODULE) {
		const unsigned char *bits = NULL;
		GElf_Addr vaddr;
		int n = dwfl_module_build_id(mod, &bits, &vaddr);
		m->id = intern(p->u, m->path, bits, n > 0 ? n : 0);
		if (m->id == UW_NO_MODULE)
			return f;
	}
	f.module = m->id;
	f.off = pc - bias;
	return f;
}

static int on_frame(Dwfl_Frame *state, void *arg)
{
	struct proc *p = arg;
	Dwarf_Addr pc;
	bool activation;
	if (!dwfl_frame_pc(state, &pc, &activation) || (!pc && p->n))
		return DWARF_CB_ABORT;
	/* a return address names the instruction after the call: step back into it */
	if (!activation && pc)
		pc--;
	p->out[p->n++] = frame_at(p, pc);
	return p->n < p->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

static int walk_once(struct proc *p, const uint64_t regs[UW_NREGS], const void *stack,
		     size_t len, struct uw_frame *out, int max)
{
	p->regs = regs;
	p->stack = stack;
	p->len = len;
	p->out = out;
	p->max = max;
	p->n = 0;
	p->unknown = 0;
	/* its end (an error, or a frame without CFI) ends the walk: the frames so far */
	dwfl_getthread_frames(p->dwfl, p->pid, on_frame, p);
	p->regs = NULL;
	p->stack = NULL;
	if (!p->n)
		out[p->n++] = (struct uw_frame){ UW_NO_MODULE, regs[UW_REG_IP] };
	return p->n;
}

int unwinder_walk(struct unwinder *u, pid_t pid, const uint64_t regs[UW_NREGS],
		  const void *stack, size_t len, struct uw_frame *out, int max)
{
	if (max < 1 || pid <= 0)
		return -EINVAL;
	struct proc *p = proc_slot(u, pid);
	p->used = ++u->clock;
	int err;
	if (p->dwfl && p->stale)
		proc_read_map(p);	/* where it cannot, the map it had stays */
	p->stale = 0;
	if (!p->dwfl && (err = proc_read_map(p)) < 0) {
		p->pid = 0;
		return err;
	}
	int n = walk_once(p, regs, stack, len, out, max);
	/* a pc in no file it knew: code mapped since (dlopen); the map once more */
	if (p->unknown && now_ns() - p->read_at >= UW_REREAD_NS && proc_read_map(p) == 0)
		n = walk_once(p, regs, stack, len, out, max);
	/* else gone or unchanged: the walk with the map it had stands */
	return n;
}

void unwinder_stale(struct unwinder *u, pid_t pid)
{
	struct proc *p = proc_find(u, pid);
	if (p)
		p->stale = 1;
}

void unwinder_forget(struct unwinder *u, pid_t pid)
{
	struct proc *p = proc_find(u, pid);
	if (p) {
		proc_drop_map(p);
		p->pid = 0;
	}
}

int unwinder_new(struct unwinder **out)
{
	struct unwinder *u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	*out = u;
	return 0;
}

void unwinder_free(struct unwinder *u)
{
	if (!u)
		return;
	for (int i = 0; i < UW_PROCS; i++)
		proc_drop_map(&u->procs[i]);
	for (size_t i = 0; i < u->nmods; i++) {
		if (u->mods[i].dwfl)
			dwfl_end(u->mods[i].dwfl);
		free(u->mods[i].path);
	}
	free(u->mods);
	free(u);
}

const char *unwinder_module_path(const struct unwinder *u, uint32_t module)
{
	return module < u->nmods ? u->mods[module].path : NULL;
}

/* --- naming --- */

static char *debuginfo_path;	/* NULL: libdw's default, ":.debug:/usr/lib/debug" */

static const Dwfl_Callbacks file_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

/* m's file for naming, at its link-time addresses, if it still has its build id. */
static void module_open(struct module *m)
{
	m->state = -1;
	int fd = open(m->path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return;
	}
	m->dwfl = dwfl_begin(&file_callbacks);
	if (!m->dwfl) {
		close(fd);
		return;
	}
	dwfl_report_begin(m->dwfl);
	const char *base = strrchr(m->path, '/');
	/* base 0: an ET_DYN file's addresses are its own; fd is the library's from here */
	m->mod = dwfl_report_elf(m->dwfl, base ? base + 1 : m->path, m->path, fd, 0, false);
	dwfl_report_end(m->dwfl, NULL, NULL);
	if (!m->mod) {
		close(fd);
		return;
	}
	const unsigned char *bits = NULL;
	GElf_Addr vaddr;
	int n = dwfl_module_build_id(m->mod, &bits, &vaddr);
	if (n != m->id_len || (n > 0 && memcmp(bits, m->id, (size_t)n) != 0)) {
		m->state = -2;
		return;
	}
	m->state = 1;
}

/* name, demangled where it is a C++ or Rust symbol, printable. */
static void put_name(struct buf *b, const char *name)
{
	char *d = NULL;
#ifdef HAVE_IBERTY
	if (name[0] == '_' && (name[1] == 'Z' || name[1] == 'R'))
		d = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
#endif
	buf_put_printable(b, d ? d : name);
	free(d);
}

static const char *file_base(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;
	return s ? s + 1 : path;
}

/* A function's name in the debug information: its linkage name (which says which
 * overload, which crate) where it has one, else its plain name. */
static const char *die_function_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *s = NULL;
	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &a) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a))
		s = dwarf_formstring(&a);
	return s ? s : dwarf_diename(die);
}

static void put_line(struct buf *b, const char *name, const char *file, int line)
{
	if (b->len)
		buf_putc(b, '\n');
	put_name(b, name);
	if (file && line > 0) {
		buf_puts(b, " (");
		put_name(b, file_base(file));
		buf_printf(b, ":%d)", line);
	}
}

/* The functions at addr, innermost first, from the debug information: each inlined
 * call, at the line it was reached from, then the function it was inlined into. 0
 * when there is none for addr. */
static int put_scopes(struct buf *b, Dwfl_Module *mod, Dwarf_Addr addr, const char *symname)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(mod, addr, &bias);
	if (!cu)
		return 0;
	const char *file = NULL;
	int line = 0;
	Dwfl_Line *l = dwfl_module_getsrc(mod, addr);
	if (l)
		file = dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);
	/* the innermost function at addr, then the chain of what contains that very
	 * instance (dwarf_getscopes goes on through an inlined function's abstract
	 * definition, not through the function it was inlined into) */
	Dwarf_Die *scopes = NULL, inner;
	int ns = dwarf_getscopes(cu, addr - bias, &scopes), found = 0;
	for (int i = 0; i < ns && !found; i++) {
		int tag = dwarf_tag(&scopes[i]);
		if (tag == DW_TAG_inlined_subroutine || tag == DW_TAG_subprogram) {
			inner = scopes[i];
			found = 1;
		}
	}
	free(scopes);
	scopes = NULL;
	ns = found ? dwarf_getscopes_die(&inner, &scopes) : 0;
	Dwarf_Files *files = NULL;
	size_t nfiles = 0;
	int put = 0;
	for (int i = 0; i < ns; i++) {
		int tag = dwarf_tag(&scopes[i]);
		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;
		const char *name = die_function_name(&scopes[i]);
		if (!name)
			name = tag == DW_TAG_subprogram && symname ? symname : "??";
		put_line(b, name, file, line);
		put++;
		if (tag == DW_TAG_subprogram)
			break;
		/* the caller's place: where this inlined call was made */
		Dwarf_Attribute a;
		Dwarf_Word idx = 0, cl = 0;
		file = NULL;
		line = 0;
		if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &a), &cl) == 0 &&
		    cl <= INT_MAX)
			line = (int)cl;
		if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &a), &idx) == 0 &&
		    (files || dwarf_getsrcfiles(cu, &files, &nfiles) == 0) && idx < nfiles)
			file = dwarf_filesrc(files, idx, NULL, NULL);
	}
	free(scopes);
	return put;
}

int unwinder_symbolize(struct unwinder *u, const struct uw_frame *f, char *buf, size_t n)
{
	struct buf b = { 0 };
	if (f->module == UW_NO_MODULE) {
		buf_printf(&b, "0x%llx", (unsigned long long)f->off);
	} else if (f->module >= u->nmods) {
		return -EINVAL;
	} else {
		struct module *m = &u->mods[f->module];
		if (!m->state)
			module_open(m);
		/* an ET_DYN file is reported at 0, an ET_EXEC one at its own addresses */
		Dwarf_Addr bias = 0;
		if (m->state == 1)
			dwfl_module_getelf(m->mod, &bias);
		Dwarf_Addr addr = f->off + bias;
		GElf_Off symoff;
		GElf_Sym sym;
		const char *symname = m->state == 1 ? dwfl_module_addrinfo(m->mod, addr, &symoff,
									    &sym, NULL, NULL, NULL)
						    : NULL;
		if (m->state != 1 || !put_scopes(&b, m->mod, addr, symname)) {
			if (symname) {
				put_line(&b, symname, NULL, 0);
			} else {
				put_name(&b, file_base(m->path));
				buf_printf(&b, "+0x%llx", (unsigned long long)f->off);
				if (m->state == -2)
					buf_puts(&b, " (module changed)");
			}
		}
	}
	int len = (int)b.len;
	if (b.len >= n) {
		buf_release(&b);
		return -ENOBUFS;
	}
	memcpy(buf, buf_str(&b), b.len + 1);
	buf_release(&b);
	return len;
}

#endif
