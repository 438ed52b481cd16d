#include "config.h"

#include <stdlib.h>
#include <time.h>

#include "base/clock.h"

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

long long sb_clock_monotonic_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
