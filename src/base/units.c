#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/units.h"

static const struct {
	char suffix;
	int shift;
} size_units[] = {
	{ 'k', 10 }, { 'm', 20 }, { 'g', 30 }, { 't', 40 },
};

long long sb_units_parse_size(const char *s)
{
	char *end;
	long long v;

	if (!s || !isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno)
		return -1;
	if (*end == '\0')
		return v;
	for (size_t i = 0; i < sizeof(size_units) / sizeof(size_units[0]); i++) {
		if (tolower((unsigned char)end[0]) != size_units[i].suffix)
			continue;
		/* accept "512m", "512M", "512MiB", "512mb" */
		const char *rest = end + 1;
		if (*rest == 'i' || *rest == 'I')
			rest++;
		if (*rest == 'b' || *rest == 'B')
			rest++;
		if (*rest || v > (1LL << (62 - size_units[i].shift)))
			return -1;
		return v << size_units[i].shift;
	}
	return -1;
}

static const struct {
	char suffix;
	long long seconds;
} duration_units[] = {
	{ 's', 1 }, { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 },
};

long long sb_units_parse_duration(const char *s)
{
	char *end;
	long long v;

	if (!s || !isdigit((unsigned char)*s))
		return -1;
	v = strtoll(s, &end, 10);
	if (*end == '\0')
		return v;
	for (size_t i = 0; i < sizeof(duration_units) / sizeof(duration_units[0]); i++)
		if (end[0] == duration_units[i].suffix && end[1] == '\0')
			return v > (long long)1e12 / duration_units[i].seconds ? -1 : v * duration_units[i].seconds;
	return -1;
}

void sb_units_format_size(char *buf, size_t size, unsigned long long bytes, enum sb_units_style style)
{
	static const char *const text[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	static const char *const compact[] = { "B", "K", "M", "G", "T" };
	double v = (double)bytes;
	size_t u = 0;

	while (v >= 1024 && u + 1 < sizeof(text) / sizeof(text[0])) {
		v /= 1024;
		u++;
	}
	if (style == SB_UNITS_COMPACT)
		snprintf(buf, size, u == 0 || v >= 10 ? "%.0f%s" : "%.1f%s", v, compact[u]);
	else
		snprintf(buf, size, u == 0 ? "%.0f %s" : "%.1f %s", v, text[u]);
}

void sb_units_format_duration(char *buf, size_t size, long long s)
{
	if (s < 0)
		snprintf(buf, size, "-");
	else if (s < 60)
		snprintf(buf, size, "%llds", s);
	else if (s < 3600)
		snprintf(buf, size, "%lldm%02llds", s / 60, s % 60);
	else if (s < 86400)
		snprintf(buf, size, "%lldh%02lldm", s / 3600, s / 60 % 60);
	else
		snprintf(buf, size, "%lldd%02lldh", s / 86400, s / 3600 % 24);
}
