/* source/unwind.c: a user stack copied at a system call's exit (the registers and the
 * bytes from rsp upward), unwound in userspace with the modules' DWARF CFI, and its
 * frames named later, after the process may have exited. x86-64 only; on elfutils'
 * libdw (built without it, unwinder_new() gives -ENOSYS).
 *
 * Not thread-safe: one unwinder per thread that uses it. */
#ifndef RSW_SOURCE_UNWIND_H
#define RSW_SOURCE_UNWIND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The registers a walk starts from, in DWARF order (x86-64 psABI numbers 0-16):
 * rax rdx rcx rbx rsi rdi rbp rsp r8 r9 r10 r11 r12 r13 r14 r15 rip. */
#define UW_NREGS 17
#define UW_REG_SP 7
#define UW_REG_IP 16

#define UW_NO_MODULE UINT32_MAX

struct unwinder;

/* A frame that outlives its process. module is an id the unwinder interned for a file
 * and its build id (valid for the unwinder's life), off the frame's pc in that file's
 * own link-time addresses (pc - load bias: what addr2line -e FILE takes). For a return
 * address, the pc is the address minus one, inside the call instruction, so that it
 * names the call's line. With module UW_NO_MODULE (no file maps the pc, or the file
 * could not be read), off is the raw address. */
struct uw_frame {
	uint32_t module;
	uint64_t off;
};

/* 0 with *out, or -ENOMEM; -ENOSYS where built without libdw. */
int unwinder_new(struct unwinder **out);
/* Accepts NULL. */
void unwinder_free(struct unwinder *u);
/* Drops what the unwinder keeps of pid's memory map: call it when pid exits or execs
 * (after its last event was walked). Frames already returned and their modules stay
 * valid. */
void unwinder_forget(struct unwinder *u, pid_t pid);
/* pid mapped new code: its map is read again at its next walk, and the one it had is
 * kept where it cannot be (pid exited meanwhile: its code before the new is still
 * named). */
void unwinder_stale(struct unwinder *u, pid_t pid);

/* Unwinds the stack of pid from regs, with stack the copy of len bytes of its memory
 * from regs[UW_REG_SP] upward. Writes at most max frames into out, the first rip's,
 * each caller after it. Returns the count (>= 1), -EINVAL (max < 1), -ESRCH (the
 * unwinder holds no map of pid and /proc/PID/maps cannot be read), or -ENOMEM.
 *
 * The map of pid is read at its first walk and kept (a bounded number of pids, least
 * recently used dropped), so a walk after pid exited still works until
 * unwinder_forget(); it is read again when a pc lies in no module it knows (at most
 * every 10 ms), keeping the one it had where pid's can no longer be read. */
int unwinder_walk(struct unwinder *u, pid_t pid, const uint64_t regs[UW_NREGS],
		  const void *stack, size_t len, struct uw_frame *out, int max);

/* The file of module as the target's map named it, or NULL for an unknown id. */
const char *unwinder_module_path(const struct unwinder *u, uint32_t module);

/* Names frame f into buf (n bytes, NUL-terminated): one line per function, innermost
 * first (the inlined functions, then the function the pc lies in), lines separated by
 * '\n' with none at the end. A line is "name (file:line)", "name" (a symbol without
 * line information), or "file+0xoff" when nothing names it; "file+0xoff (module
 * changed)" when the file no longer has the build id it had at the walk; "0xADDR" for
 * UW_NO_MODULE. C++ and Rust names are demangled (Rust's legacy hash dropped) where
 * built with libiberty. Reads the module's file (and its separate debug information,
 * found by build id or .gnu_debuglink under /usr/lib/debug), not the process.
 * Returns the length written, -ENOBUFS (buf left as it was), -EINVAL (an unknown
 * module) or -ENOMEM. */
int unwinder_symbolize(struct unwinder *u, const struct uw_frame *f, char *buf, size_t n);

/* One line of /proc/PID/maps. path points into the line (not NUL-terminated). */
struct uw_map {
	uint64_t start, end, offset, inode;
	int exec;		/* the mapping is executable */
	const char *path;	/* NULL for an anonymous mapping or a pseudo-file ("[vdso]") */
	size_t path_len;
};

/* Parses line[0..len) (no newline): 0 with *out, or -EINVAL. A file's path must be
 * absolute; a file shown " (deleted)" has path NULL (it cannot be read again). */
int uw_maps_line_parse(const char *line, size_t len, struct uw_map *out);

#endif
