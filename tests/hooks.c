/* The test builds' seams (src/base/hooks.h), set from the environment at
 * start: $SANDBENCH_NOW (unix seconds) moves the wall clock so that expiry is
 * testable without waiting, $SANDBENCH_BOOT_ID stands for another host boot,
 * and $SANDBENCH_FAULT=N:kill|fail strikes at the Nth fault point of the
 * command: SIGKILL there, or fail it (ENOSPC for a write, EIO for a program;
 * a step that can only be interrupted goes on). $SANDBENCH_FAULT_LOG names a
 * file that gets one line per fault point ("N kind what"), to count them.
 * $SANDBENCH_BACKEND_WITHOUT=checkpoint,host-mounts,live-stats,network takes
 * those capabilities from the backend, to try the paths of a lesser one.
 * Linked into tests/sandbench-test and the test programs that inject time;
 * never into the installed sandbench. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend.h"
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

static struct {
	pid_t pid;      /* the command's own process: forked helpers do not count */
	long at, n;
	int kill;
	int log;
} fault = { .log = -1 };

static int env_fault(enum sb_fault_kind kind, const char *what)
{
	static const char *const kinds[] = { "run", "write", "step" };

	if (getpid() != fault.pid)
		return 0;
	fault.n++;
	if (fault.log >= 0)
		dprintf(fault.log, "%ld %s %s\n", fault.n, kinds[kind], what);
	if (fault.n != fault.at)
		return 0;
	if (fault.kill)
		kill(getpid(), SIGKILL);
	return kind == SB_FAULT_WRITE ? ENOSPC : kind == SB_FAULT_RUN ? EIO : 0;
}

static void fault_install(void)
{
	const char *spec = getenv("SANDBENCH_FAULT"), *log = getenv("SANDBENCH_FAULT_LOG");
	char *end = NULL;

	if (spec && *spec) {
		fault.at = strtol(spec, &end, 10);
		fault.kill = !strcmp(end, ":kill");
		if (fault.at <= 0 || (!fault.kill && strcmp(end, ":fail")))
			fault.at = 0;
	}
	if (log && *log)
		fault.log = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fault.at || fault.log >= 0) {
		fault.pid = getpid();
		sb_hooks.fault = env_fault;
	}
}

static const struct {
	const char *name;
	unsigned cap;
} cap_names[] = {
	{ "checkpoint", SB_BACKEND_CAP_CHECKPOINT },
	{ "host-mounts", SB_BACKEND_CAP_HOST_MOUNTS },
	{ "live-stats", SB_BACKEND_CAP_LIVE_STATS },
	{ "network", SB_BACKEND_CAP_NET_NAT },
};

static unsigned env_backend_caps(unsigned caps)
{
	const char *without = getenv("SANDBENCH_BACKEND_WITHOUT");

	for (size_t i = 0; without && i < sizeof(cap_names) / sizeof(cap_names[0]); i++)
		if (strstr(without, cap_names[i].name))
			caps &= ~cap_names[i].cap;
	return caps;
}

__attribute__((constructor)) static void hooks_install(void)
{
	sb_hooks.backend_caps = env_backend_caps;
	sb_hooks.now = env_now;
	sb_hooks.boot_id = env_boot_id;
	fault_install();
}
