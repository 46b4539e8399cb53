/* Application counters and gauges as people read them. Their unit comes from the name,
 * as Prometheus names metrics: a name that ends in "_bytes" (or has "bytes" in it, as
 * "bytes_held" does) is a size, one that ends in "_seconds" a duration; anything else
 * is a plain count. Pure. */
#ifndef RSW_RENDER_COUNTERS_H
#define RSW_RENDER_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

enum counter_unit { COUNTER_PLAIN, COUNTER_BYTES, COUNTER_SECONDS };

enum counter_unit counter_unit_of(const char *name);

/* value in the unit of name into out (n bytes): "300.0 MiB", "1m30s", "-12", "42";
 * returns out. */
const char *counter_value_text(char *out, size_t n, const char *name, long long value);

/* One counter or gauge of a run: its values in time order, each holding until the next
 * (elapsed ns from the run's start). The arrays are owned by whoever filled them. */
struct counter_series {
	char name[48];
	int64_t *t;
	long long *v;
	size_t n, cap;
};

/* Appends a value to the series called name in *s (n of them; a new series at the end
 * when none has that name). For store_each_counter. */
void counter_series_add(struct counter_series **s, size_t *n, const char *name, int64_t t,
			long long v);
void counter_series_free(struct counter_series *s, size_t n);

#endif
