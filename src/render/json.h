/* A minimal JSON writer for --json output: strings are escaped per RFC 8259, and bytes
 * that are not UTF-8 become U+FFFD, so the output is always valid JSON. */
#ifndef RSW_RENDER_JSON_H
#define RSW_RENDER_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "store/run.h"

void json_str(struct buf *b, const char *s);
/* An ISO 8601 UTC time string, or null when t is 0. */
void json_time(struct buf *b, int64_t realtime_ns);
/* A finite number as JSON: an integer without a fraction where it is one (exactly),
 * else with 17 significant digits; null for inf and nan. */
void json_number(struct buf *b, double v);
/* Parameters p[0..n) as one object: numbers as JSON numbers, other values as strings. */
void json_params(struct buf *b, const struct run_param *p, size_t n);
/* One run object with the fields of the CLI contract (man/rsswatch.1, JSON). */
void json_run(struct buf *b, const struct run *r);
/* The same fields without the enclosing braces, for objects that add more: the
 * columns of store_run_table that have an output, in its order, under their output
 * names and as their out says, and among them the fields that are no column of their
 * own (json_run_extra_names: params, duration_s, mean_rss_bytes). */
void json_run_fields(struct buf *b, const struct run *r);
extern const char *const json_run_extra_names[];	/* NULL-terminated */
/* The array of a run's OOM kills k[0..n) (show --json "oom"): pid, comm, time,
 * elapsed_s and the kernel's figures in bytes. A run recorded before kills were kept
 * one by one gives its target's kill from the run's own fields. */
void json_oom_kills(struct buf *b, const struct run *r, const struct oom_kill *k, size_t n);
/* The array of a set's processes p[0..n) (show --json "processes"); times in seconds of
 * the run's elapsed time, ended_s null for one alive at the end. */
void json_processes(struct buf *b, const struct proc_summary *p, size_t n);

#endif
