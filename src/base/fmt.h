/* Formatting of figures for people: binary units, durations, timestamps. Pure functions
 * writing into caller buffers (always terminated, truncated if too small). */
#ifndef RSW_BASE_FMT_H
#define RSW_BASE_FMT_H

#include <stddef.h>
#include <stdint.h>

enum unit { UNIT_B, UNIT_KIB, UNIT_MIB, UNIT_GIB, UNIT_TIB };

/* The unit a value is best shown in: the largest with a value of at least 1. */
enum unit unit_for(uint64_t bytes);
const char *unit_name(enum unit u);
double in_unit(uint64_t bytes, enum unit u);

/* "666.4 GiB", "12.0 MiB", "512 B". */
char *fmt_bytes(char *buf, size_t n, uint64_t bytes);
/* The number alone in a given unit, one decimal: "660.1". */
char *fmt_in_unit(char *buf, size_t n, uint64_t bytes, enum unit u);
/* "850ms", "12.3s", "4m05s", "1h02m03s", "3d04h". */
char *fmt_duration(char *buf, size_t n, int64_t ns);
/* A moment from the run's start, signed: "+850ms", "+4m05s"; "-1.2s" before it. */
char *fmt_offset(char *buf, size_t n, int64_t ns);
/* ISO 8601 UTC with milliseconds: "2026-11-29T17:03:01.123Z". */
char *fmt_iso8601(char *buf, size_t n, int64_t realtime_ns);
/* The same to the microsecond: "2026-11-29T17:03:01.123456Z". */
char *fmt_iso8601_us(char *buf, size_t n, int64_t realtime_ns);
/* Local wall-clock time "17:03:01". */
char *fmt_hms(char *buf, size_t n, int64_t realtime_ns);
/* The same to the millisecond: "17:03:01.347". */
char *fmt_hms_ms(char *buf, size_t n, int64_t realtime_ns);
/* Local date and time "2026-11-29 17:03". */
char *fmt_datetime(char *buf, size_t n, int64_t realtime_ns);

#endif
