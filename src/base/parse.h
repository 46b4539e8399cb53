/* Strict parsing of numbers, durations and sizes given by users or read from the kernel.
 * Every function takes the whole string (or a pointer and length), rejects trailing
 * garbage, signs where none belong and overflow, and writes *out only on success.
 * Return 0 or -EINVAL / -ERANGE. */
#ifndef RSW_BASE_PARSE_H
#define RSW_BASE_PARSE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define NS_PER_US 1000LL
#define NS_PER_MS 1000000LL
#define NS_PER_S 1000000000LL

/* Bytes that hold the name of an application's counter or gauge: up to 47 bytes and a
 * NUL, as the client library takes them (RSW_NAME_MAX) and its page stores them
 * (RSW_PAGE_NAME_SIZE; source/client.c asserts that they agree). */
#define COUNTER_NAME_SIZE 48

/* Unsigned decimal in s[0..len): digits only, at least one. */
int parse_u64_n(const char *s, size_t len, uint64_t *out);
int parse_u64(const char *s, uint64_t *out);
/* Optional leading '-'. */
int parse_i64(const char *s, int64_t *out);

/* A process id: decimal, 1..INT32_MAX. 0, negatives and non-numbers are -EINVAL. */
int parse_pid(const char *s, pid_t *out);

/* A duration: a decimal number (fraction allowed) and a unit: us, ms, s, m, h.
 * A bare number means seconds. "0" is valid here (callers check their own range).
 * Negative values, unknown units and values beyond 100 years are rejected. */
int parse_duration_ns(const char *s, int64_t *out);

/* An age, as retention takes it (gc --keep 30d): a decimal number (fraction allowed) and
 * a unit that must be given: s, m, h, d (24 h) or w (7 d). "0s" is valid; negative
 * values, a bare number, unknown units and values beyond 100 years are rejected. */
int parse_age_ns(const char *s, int64_t *out);

/* A size: a decimal number (fraction allowed) and an optional unit K, M, G, T, with an
 * optional "i" and/or "B" (KiB, KB, K all mean 1024). A bare number means bytes. */
int parse_size(const char *s, uint64_t *out);

/* The value part [v, end) of a "Key:   123 kB" line: blanks, digits, and an optional
 * unit that must be "kB" (applied). Returns 0, -EINVAL or -ERANGE. */
int kv_value_u64(const char *v, const char *end, uint64_t *out);

/* In a "Key:   value kB" text such as /proc/PID/status or /proc/meminfo, find the line
 * starting with key (which includes the colon) and parse its value. The unit, when
 * present, must be "kB" and is applied. Returns 0, -ENOENT (no such key) or -EINVAL. */
int kv_find_u64(const char *buf, size_t len, const char *key, uint64_t *out);

#endif
