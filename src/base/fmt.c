#include "base/fmt.h"
#include "base/parse.h"

#include <stdio.h>
#include <time.h>

static const char *const unit_names[] = { "B", "KiB", "MiB", "GiB", "TiB" };

enum unit unit_for(uint64_t bytes)
{
	enum unit u = UNIT_B;
	while (u < UNIT_TIB && bytes >= (1ULL << (10 * (u + 1))))
		u++;
	return u;
}

const char *unit_name(enum unit u)
{
	return unit_names[u];
}

double in_unit(uint64_t bytes, enum unit u)
{
	return (double)bytes / (double)(1ULL << (10 * u));
}

char *fmt_bytes(char *buf, size_t n, uint64_t bytes)
{
	enum unit u = unit_for(bytes);
	if (u == UNIT_B)
		snprintf(buf, n, "%llu B", (unsigned long long)bytes);
	else
		snprintf(buf, n, "%.1f %s", in_unit(bytes, u), unit_names[u]);
	return buf;
}

char *fmt_in_unit(char *buf, size_t n, uint64_t bytes, enum unit u)
{
	snprintf(buf, n, "%.1f", in_unit(bytes, u));
	return buf;
}

char *fmt_duration(char *buf, size_t n, int64_t ns)
{
	if (ns < 0)
		ns = 0;
	int64_t ms = ns / 1000000;
	int64_t s = ns / NS_PER_S;
	if (ms < 1000)
		snprintf(buf, n, "%lldms", (long long)ms);
	else if (s < 60)
		snprintf(buf, n, "%.1fs", (double)ms / 1000.0);
	else if (s < 3600)
		snprintf(buf, n, "%lldm%02llds", (long long)(s / 60), (long long)(s % 60));
	else if (s < 86400)
		snprintf(buf, n, "%lldh%02lldm%02llds", (long long)(s / 3600),
			 (long long)(s / 60 % 60), (long long)(s % 60));
	else
		snprintf(buf, n, "%lldd%02lldh", (long long)(s / 86400), (long long)(s / 3600 % 24));
	return buf;
}

char *fmt_offset(char *buf, size_t n, int64_t ns)
{
	char d[32];
	fmt_duration(d, sizeof(d), ns < 0 ? (ns == INT64_MIN ? INT64_MAX : -ns) : ns);
	snprintf(buf, n, "%c%s", ns < 0 ? '-' : '+', d);
	return buf;
}

/* Whole seconds and the fraction in units of unit_ns (never negative). */
static void split(int64_t ns, int64_t unit_ns, time_t *sec, int *frac)
{
	*sec = (time_t)(ns / NS_PER_S);
	*frac = (int)(ns % NS_PER_S / unit_ns);
	if (*frac < 0) {
		*frac += (int)(NS_PER_S / unit_ns);
		(*sec)--;
	}
}

char *fmt_iso8601(char *buf, size_t n, int64_t realtime_ns)
{
	time_t sec;
	int ms;
	struct tm tm;
	split(realtime_ns, 1000000, &sec, &ms);
	gmtime_r(&sec, &tm);
	snprintf(buf, n, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
	return buf;
}

char *fmt_iso8601_us(char *buf, size_t n, int64_t realtime_ns)
{
	time_t sec;
	int us;
	struct tm tm;
	split(realtime_ns, 1000, &sec, &us);
	gmtime_r(&sec, &tm);
	snprintf(buf, n, "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, us);
	return buf;
}

char *fmt_hms_ms(char *buf, size_t n, int64_t realtime_ns)
{
	time_t sec;
	int ms;
	struct tm tm;
	split(realtime_ns, 1000000, &sec, &ms);
	localtime_r(&sec, &tm);
	snprintf(buf, n, "%02d:%02d:%02d.%03d", tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
	return buf;
}

char *fmt_hms(char *buf, size_t n, int64_t realtime_ns)
{
	time_t sec = (time_t)(realtime_ns / NS_PER_S);
	struct tm tm;
	localtime_r(&sec, &tm);
	snprintf(buf, n, "%02d:%02d:%02d", tm.tm_hour, tm.tm_min, tm.tm_sec);
	return buf;
}

char *fmt_datetime(char *buf, size_t n, int64_t realtime_ns)
{
	time_t sec = (time_t)(realtime_ns / NS_PER_S);
	struct tm tm;
	localtime_r(&sec, &tm);
	snprintf(buf, n, "%04d-%02d-%02d %02d:%02d", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min);
	return buf;
}
