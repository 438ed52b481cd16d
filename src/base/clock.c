#include "config.h"

#include <stdlib.h>
#include <time.h>

#include "base/clock.h"

/* $SANDBENCH_NOW when it is a positive number, else 0. */
static long long injected(void)
{
	const char *env = getenv("SANDBENCH_NOW");
	char *end;

	if (env && *env) {
		long long v = strtoll(env, &end, 10);
		if (*end == '\0' && v > 0)
			return v;
	}
	return 0;
}

long long sb_clock_now(void)
{
	long long v = injected();

	return v ? v : (long long)time(NULL);
}

long long sb_clock_now_ms(void)
{
	struct timespec ts;
	long long v = injected();

	if (v)
		return v * 1000;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

long long sb_clock_monotonic_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
