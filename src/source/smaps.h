/* /proc/PID/smaps_rollup: the proportional set size (PSS: each page divided by the
 * number of processes that map it), the unique set size (USS: Private_Clean +
 * Private_Dirty, pages no other process maps) and SwapPss, for one process.
 *
 * Not for the hot path. The kernel walks every page table of the process to build this
 * file: about 9 ms per GiB resident (4 KiB pages) plus 0.4 us per mapping, under the
 * process's mmap lock, so the target's own mmap/munmap calls stall while it runs (0.55
 * ms -> 46 ms measured). It also needs ptrace-read permission on the process. Read it
 * only when asked, and rate-limited (record --pss). */
#ifndef RSW_SOURCE_SMAPS_H
#define RSW_SOURCE_SMAPS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/rfile.h"

/* Bytes. swap_pss is 0 on kernels before 4.15, which lack the line (have_swap_pss). */
struct smaps_rollup {
	uint64_t rss, pss, pss_anon, pss_file, pss_shmem;
	uint64_t shared_clean, shared_dirty, private_clean, private_dirty;
	uint64_t swap, swap_pss;
	int have_swap_pss;
};

/* USS: the pages only this process maps. */
static inline uint64_t smaps_uss(const struct smaps_rollup *r)
{
	return r->private_clean + r->private_dirty;
}

/* Parses the text: an optional "[rollup]" header line, then "Key:  N kB" lines. Rss,
 * Pss, Private_Clean and Private_Dirty are required; unknown keys are skipped (the
 * kernel adds them over time). Returns 0; -ENODATA for an empty text (a kernel thread
 * or a zombie has no mappings); -EINVAL when a required line is missing or a known
 * line is malformed or overflows; -ERANGE when a kB value overflows in bytes. */
int smaps_rollup_parse(const char *buf, size_t len, struct smaps_rollup *out);

/* Keeps /proc/PID/smaps_rollup open; each read makes the kernel walk the process's
 * page tables anew (see above). */
struct smaps_reader {
	struct rfile f;
};

/* Returns 0, -ENOENT / -ESRCH when the process is gone, -EACCES without ptrace-read
 * permission, or -errno. */
int smaps_reader_open(struct smaps_reader *r, pid_t pid);
/* Returns 0, -ESRCH when the process is gone (reaped, or a zombie: empty text), or
 * -errno. */
int smaps_reader_read(struct smaps_reader *r, struct smaps_rollup *out);
void smaps_reader_close(struct smaps_reader *r);

#endif
