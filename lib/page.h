/* The shared page between an application (lib/) and the recorder (src/source/client.c).
 *
 * This header is internal: it is not installed, but both sides include it, so it must
 * compile as C89 -pedantic (lib) and as gnu11 (the tool). Only fixed-width types and
 * gcc/clang __atomic builtins are used. The layout is the contract between processes
 * built from different versions: change it only together with RSW_PAGE_VERSION.
 *
 * The page is a tmpfs file "<dir>/rsswatch.<pid>" (dir: $RSSWATCH_SHM_DIR, else
 * /dev/shm), mode 0600, owned by the application's effective uid, exactly
 * sizeof(struct rsw_page) bytes long. The application creates it zero-filled and
 * writes header.magic last, so a reader that sees the magic sees a complete header.
 *
 * Counters: slots claimed once, never freed. state goes FREE -> CLAIMING (one CAS
 * winner writes name and kind) -> READY (release store); name and kind never change
 * afterwards. value is a 64-bit two's complement integer updated with atomics.
 *
 * Marks: a lossy multi-producer ring. A producer takes ticket t from ring_head
 * (fetch-add), then owns slot t % RSW_RING_SLOTS by moving its seq from an even value
 * older than t to 2t+1 (CAS), writes the slot, and publishes it with seq = 2t+2
 * (release). So seq odd means "being written"; seq == 2t+2 means "holds ticket t,
 * complete". A producer that finds the slot still being written by an older ticket
 * (its writer stalled for a whole lap) gives up and increments ring_dropped; one that
 * finds a newer ticket there (it was lapped itself) just gives up. Producers never wait
 * for the reader: with no reader, the ring simply overwrites itself.
 *
 * A reader must treat every byte of the page as hostile (the application may be buggy
 * or malicious): indexes are taken modulo the table sizes, strings are terminated by the
 * reader, and no value read from the page is trusted as a length or a pointer. */
#ifndef RSW_LIB_PAGE_H
#define RSW_LIB_PAGE_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define RSW_PAGE_MAGIC 0x50575352u	/* "RSWP" in little-endian memory */
#define RSW_PAGE_VERSION 2u	/* 2: created_boot_ns, start_ticks and pid_ino */
#define RSW_PAGE_PREFIX "rsswatch."
#define RSW_PAGE_DIR_DEFAULT "/dev/shm"
#define RSW_PAGE_DIR_ENV "RSSWATCH_SHM_DIR"
/* The recorder that launches a command sets this to its own pid. A process whose
 * parent is that recorder leaves its page in place at exit instead of removing it:
 * a command shorter than the recorder's first look would otherwise take its marks and
 * counters with it. The recorder reads the page at the run's end and removes it. */
#define RSW_PAGE_KEEP_ENV "RSSWATCH_RECORDER_PID"
/* A page whose name another user took first goes to "rsswatch.<pid>.<16 hex digits>",
 * an unguessable fallback made with O_EXCL. */
#define RSW_PAGE_FALLBACK_DIGITS 16
#define RSW_PIDFS_MAGIC 0x50494446u	/* statfs f_type of pidfs, where pidfds live */

#define RSW_PAGE_COUNTERS 64
#define RSW_PAGE_NAME_SIZE 48	/* names up to 47 bytes and a NUL */
#define RSW_PAGE_RING_SLOTS 256	/* a power of two */
#define RSW_PAGE_LABEL_SIZE 96	/* labels up to 95 bytes and a NUL */

#define RSW_SLOT_FREE 0u
#define RSW_SLOT_CLAIMING 1u
#define RSW_SLOT_READY 2u

#define RSW_KIND_COUNTER 1u
#define RSW_KIND_GAUGE 2u

struct rsw_page_header {
	/* First cache line: written once at creation, read-only afterwards. */
	uint32_t magic;		/* RSW_PAGE_MAGIC, stored last (release) */
	uint32_t version;	/* RSW_PAGE_VERSION */
	uint32_t size;		/* sizeof(struct rsw_page) */
	int32_t pid;		/* getpid() of the creator, in its own PID namespace */
	uint32_t n_counters;	/* RSW_PAGE_COUNTERS */
	uint32_t ring_slots;	/* RSW_PAGE_RING_SLOTS */
	uint32_t name_size;	/* RSW_PAGE_NAME_SIZE */
	uint32_t label_size;	/* RSW_PAGE_LABEL_SIZE */
	int64_t created_ns;	/* CLOCK_REALTIME at creation */
	/* Who made the page, so that a reader can tell a stale page (left by a process
	 * that died without removing it) from the page of the process now using that
	 * pid. pid_ino decides where both sides know it; else a page whose creator
	 * started at another time than the target, or before it, is not the target's.
	 * (Version 2.) */
	int64_t created_boot_ns;	/* CLOCK_BOOTTIME at creation */
	uint64_t start_ticks;	/* the creator's start time: field 22 of /proc/self/stat,
				   clock ticks after boot; 0 when /proc could not say */
	uint64_t pid_ino;	/* inode number of a pidfd of the creator on pidfs (Linux
				   6.9+): never reused while the system runs; 0: unknown */
	/* Second cache line: the producers' shared tickets. */
	uint64_t ring_head;	/* tickets handed out so far */
	uint64_t ring_dropped;	/* marks given up because their slot was still busy */
	char pad1[48];
};

struct rsw_page_counter {	/* one cache line */
	uint32_t state;		/* RSW_SLOT_* */
	uint32_t kind;		/* RSW_KIND_*, valid once state is READY */
	char name[RSW_PAGE_NAME_SIZE];
	uint64_t value;
};

struct rsw_page_mark {		/* two cache lines */
	uint64_t seq;		/* 2t+1 while ticket t is written, 2t+2 once complete */
	int64_t realtime_ns;	/* CLOCK_REALTIME when the mark was made */
	char label[RSW_PAGE_LABEL_SIZE];
	char pad[16];
};

struct rsw_page {
	struct rsw_page_header hdr;
	struct rsw_page_counter counters[RSW_PAGE_COUNTERS];
	struct rsw_page_mark ring[RSW_PAGE_RING_SLOTS];
};

/* The layout is fixed: 128 + 64 * 64 + 256 * 128 bytes. */
typedef char rsw_page_layout_check[(sizeof(struct rsw_page_header) == 128 &&
	sizeof(struct rsw_page_counter) == 64 && sizeof(struct rsw_page_mark) == 128 &&
	sizeof(struct rsw_page) == 36992) ? 1 : -1];

/* Appends one mark; the producer side of the ring, shared by the library and by the
 * recorder's "rsswatch mark -p PID". label[0..len) must hold no NUL and len must be
 * below RSW_PAGE_LABEL_SIZE. Lock-free, no system call, async-signal-safe.
 * Returns 0, or -ENOBUFS when the mark was lost because its slot was still busy
 * (the ring was lapped while a writer stalled); a reader counts such marks as lost. */
static __inline__ int rsw_page_put_mark(struct rsw_page *pg, int64_t realtime_ns,
	const char *label, size_t len)
{
	uint64_t t, mine, s;
	struct rsw_page_mark *m;

	t = __atomic_fetch_add(&pg->hdr.ring_head, 1, __ATOMIC_RELAXED);
	m = &pg->ring[t & (RSW_PAGE_RING_SLOTS - 1)];
	mine = 2 * t + 1;
	s = __atomic_load_n(&m->seq, __ATOMIC_RELAXED);
	for (;;) {
		if (s >= mine)
			return -ENOBUFS;	/* lapped by a newer ticket */
		if (s & 1) {
			__atomic_fetch_add(&pg->hdr.ring_dropped, 1, __ATOMIC_RELAXED);
			return -ENOBUFS;
		}
		if (__atomic_compare_exchange_n(&m->seq, &s, mine, 0, __ATOMIC_ACQ_REL,
				__ATOMIC_RELAXED))
			break;
	}
	/* Order the claim before the data, as a seqlock writer does. */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&m->realtime_ns, realtime_ns, __ATOMIC_RELAXED);
	memcpy(m->label, label, len);
	m->label[len] = '\0';	/* what follows it is never read */
	__atomic_store_n(&m->seq, mine + 1, __ATOMIC_RELEASE);
	return 0;
}

/* A counter name: 1..RSW_PAGE_NAME_SIZE-1 bytes of [A-Za-z0-9_.:-], so that it can be
 * a CSV column, a JSON key or part of a Prometheus metric name without escaping.
 * Returns its length, 0 when it is not a valid name, or -1 when it is too long.
 * On the library's hot path: one table lookup per byte. */
static __inline__ int rsw_page_name_len(const char *s)
{
	/* Bit c of this set: byte c may appear in a name. */
	static const uint32_t allowed[4] = { 0, 0x07ff6000u, 0x87fffffeu, 0x07fffffeu };
	int n;

	for (n = 0; s[n]; n++) {
		unsigned char c = (unsigned char)s[n];
		if (n >= RSW_PAGE_NAME_SIZE - 1)
			return -1;
		if (c >= 128 || !((allowed[c >> 5] >> (c & 31)) & 1))
			return 0;
	}
	return n;
}

/* The length a mark label is stored with: at most RSW_PAGE_LABEL_SIZE-1 bytes, cut
 * back to the start of a UTF-8 sequence so that a truncated label stays valid text. */
static __inline__ size_t rsw_page_label_len(const char *label)
{
	size_t n = strnlen(label, RSW_PAGE_LABEL_SIZE - 1);

	if (n == RSW_PAGE_LABEL_SIZE - 1 && label[n])
		while (n > 0 && ((unsigned char)label[n] & 0xC0) == 0x80)
			n--;
	return n;
}

#endif
