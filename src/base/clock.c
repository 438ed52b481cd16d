#include "config.h"

#include <time.h>

#include "base/clock.h"
#include "base/hooks.h"

/* The injected time of a test build, else 0. */
static long long injected(void)
{
	return sb_hooks.now ? sb_hooks.now() : 0;
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
