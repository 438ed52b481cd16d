/* The test builds' seams (src/base/hooks.h), set from the environment at
 * start: $SANDBENCH_NOW (unix seconds) moves the wall clock so that expiry is
 * testable without waiting, $SANDBENCH_BOOT_ID stands for another host boot.
 * Linked into tests/sandbench-test and the test programs that inject time;
 * never into the installed sandbench. */
#include "config.h"

#include <stdlib.h>

#include "base/hooks.h"

static long long env_now(void)
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

static const char *env_boot_id(void)
{
	const char *env = getenv("SANDBENCH_BOOT_ID");

	return env && *env ? env : NULL;
}

__attribute__((constructor)) static void hooks_install(void)
{
	sb_hooks.now = env_now;
	sb_hooks.boot_id = env_boot_id;
}
