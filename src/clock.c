#include "config.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"

long long sb_clock_now(void)
{
	const char *env = getenv("SANDBENCH_NOW");
	char *end;

	if (env && *env) {
		long long v = strtoll(env, &end, 10);
		if (*end == '\0' && v > 0)
			return v;
	}
	return (long long)time(NULL);
}

static const struct {
	char suffix;
	long long seconds;
} units[] = {
	{ 's', 1 }, { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 },
};

long long sb_duration_parse(const char *s)
{
	char *end;
	long long v;

	if (!s || !isdigit((unsigned char)*s))
		return -1;
	v = strtoll(s, &end, 10);
	if (*end == '\0')
		return v;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (end[0] == units[i].suffix && end[1] == '\0')
			return v > (long long)1e12 / units[i].seconds ? -1 : v * units[i].seconds;
	return -1;
}
