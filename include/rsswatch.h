/* rsswatch client library: stage marks and counters from inside an application, for
 * the rsswatch memory recorder to store beside its samples.
 *
 *   #include <rsswatch.h>        cc app.c $(pkg-config --cflags --libs rsswatch)
 *
 *   rsw_mark("synthesis done");
 *   rsw_counter_add("partitions_in_flight", 1);
 *   rsw_gauge_set("queue_depth", n);
 *
 * Contract of every function here:
 * - Returns 0 on success or a negative errno value; never logs, never aborts, never
 *   allocates memory. Errors may be ignored: a failed call changes nothing.
 * - Thread-safe and lock-free. After setup, no call makes a system call.
 * - Setup happens on the first call (or rsw_init()): the library creates the shared
 *   page "$RSSWATCH_SHM_DIR/rsswatch.<pid>" (default directory /dev/shm, mode 0600)
 *   that a recorder finds by pid, and removes it at exit. If another user holds that
 *   name, the page gets an unguessable name "rsswatch.<pid>.<16 hex digits>", where a
 *   recorder looks too. Calls work the same whether
 *   a recorder reads the page or not; without one they only update memory. If setup
 *   failed, every call returns that error at once (costing one load); a child made by
 *   fork() sets up its own page on its first call.
 * - The ABI is plain C: ints, long longs, const char * (NUL-terminated, UTF-8 for
 *   labels) and opaque pointers, so other languages can call it through their FFI.
 *
 * Units come from the name, as Prometheus names metrics: a counter or gauge whose name
 * ends in "_bytes" (or has "bytes" in it) is a size and is shown in KiB, MiB, GiB; one
 * ending in "_seconds" is a duration; any other is a plain count. So name a gauge of
 * the memory a cache holds "cache_bytes", not "cache".
 *
 * Limits: 64 counters and gauges in all; names of 1 to 47 bytes of [A-Za-z0-9_.:-];
 * mark labels of up to 95 bytes (longer ones are truncated at a UTF-8 boundary);
 * 256 marks in flight: a recorder that reads less often than that loses the oldest
 * marks and reports how many. */
#ifndef RSSWATCH_H
#define RSSWATCH_H

#ifdef __cplusplus
extern "C" {
#endif

/* long long is C99; gcc and clang accept it in C89 code marked __extension__. */
#if defined(__GNUC__)
#define RSW_EXTENSION __extension__
#else
#define RSW_EXTENSION
#endif

#if defined(__GNUC__) && __GNUC__ >= 4
#define RSW_PUBLIC __attribute__((visibility("default")))
#else
#define RSW_PUBLIC
#endif

#define RSW_NAME_MAX 47		/* bytes in a counter or gauge name */
#define RSW_LABEL_MAX 95	/* bytes of a mark label that are kept */
#define RSW_COUNTERS_MAX 64	/* counters and gauges together */
#define RSW_RING_SLOTS 256	/* marks a recorder can be behind without losing any */

/* Sets up now instead of at the first call: creates the shared page and registers the
 * exit and fork handlers. Call it at startup when marks will be made from signal
 * handlers (setup itself is not async-signal-safe; a handler that finds setup running
 * in another thread gets -EAGAIN). Calling it again is harmless and returns the result
 * of the first setup. Errors: those of open(2), ftruncate(2) and mmap(2) on the page,
 * -ENAMETOOLONG for a too long $RSSWATCH_SHM_DIR, -EEXIST when neither the page's
 * name nor any of the fallback names tried could be had. */
RSW_PUBLIC int rsw_init(void);

/* Records a stage marker with the current CLOCK_REALTIME time (taken by the library).
 * Async-signal-safe once set up. label: a non-empty string; bytes beyond RSW_LABEL_MAX
 * are dropped (the call still succeeds). Returns 0, -EINVAL (NULL or empty label),
 * -ENOBUFS (lost: the ring was lapped while this call was writing; very rare), or the
 * setup error. */
RSW_PUBLIC int rsw_mark(const char *label);

/* Adds delta (any sign) to the counter name, creating it at 0 on first use. Values wrap
 * around at 64 bits. Returns 0, -EINVAL (NULL, empty or a byte outside
 * [A-Za-z0-9_.:-]), -ENAMETOOLONG (over RSW_NAME_MAX bytes: names are never
 * truncated, so two long names cannot collide), -ENOSPC (RSW_COUNTERS_MAX names in use),
 * -EEXIST (name is a gauge), -EAGAIN (another thread was creating a name and did not
 * finish in time: possible only on first uses), or the setup error. */
RSW_EXTENSION RSW_PUBLIC int rsw_counter_add(const char *name, long long delta);

/* Sets the gauge name to value, creating it on first use. Errors as rsw_counter_add,
 * with -EEXIST when name is a counter. */
RSW_EXTENSION RSW_PUBLIC int rsw_gauge_set(const char *name, long long value);

/* Handles: look a name up once, then update it without the lookup (one atomic
 * instruction). A handle stays valid for the life of the process; in a child made by
 * fork() an inherited handle still works but updates a private copy that no recorder
 * sees, so look it up again there. The lookups return NULL on any error listed above;
 * the _h functions return -EINVAL for a NULL handle, so code need not check. */
typedef struct rsw_counter rsw_counter_t;
typedef struct rsw_gauge rsw_gauge_t;

RSW_PUBLIC rsw_counter_t *rsw_counter(const char *name);
RSW_EXTENSION RSW_PUBLIC int rsw_counter_add_h(rsw_counter_t *counter, long long delta);
RSW_PUBLIC rsw_gauge_t *rsw_gauge(const char *name);
RSW_EXTENSION RSW_PUBLIC int rsw_gauge_set_h(rsw_gauge_t *gauge, long long value);

#ifdef __cplusplus
}
#endif

#endif
