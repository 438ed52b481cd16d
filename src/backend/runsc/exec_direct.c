/* exec without starting the runsc CLI (a Go start-up of 100-150 ms here):
 * what `runsc exec --process FILE` sends, traced on the measured builds
 * (direct.c, docs/pool.md):
 *   containerManager.Signal, signal 0 to the container (is it alive);
 *   containerManager.ExecuteAsync, the process with its stdin, stdout and
 *   stderr as SCM_RIGHTS, answered with its pid inside;
 *   containerManager.WaitPID on that pid, answered with its wait status.
 * It runs in the child that sb_proc_run made for `runsc exec` (its pre_exec
 * hook), with the stdio that child has: the caller's pipes and deadline work
 * as for the CLI, and where this path declines before anything ran the same
 * child goes on to exec the CLI. runsc's lock is held until the process is
 * started, as runsc's own is while it reads the container. The rlimits of the
 * process are not sent (runsc sends none either: the container's init's
 * apply). */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/fs.h"
#include "base/log.h"
#include "internal.h"

/* from the request to the process started: a live sandbox answers at once */
#define START_MS 10000
/* the child's exit status when the process was lost after it started: runsc
 * exec's own on a failure, which the callers read as "look whether the
 * sandbox died" (its memory cgroup ends it whole: WaitPID gets no answer) */
#define LOST_STATUS 128

/* The capabilities a process of ours can name (spec.c's defaults and what
 * execs add), by bit; another name leaves the exec to the CLI. */
static const struct {
	const char *name;
	int bit;
} cap_bits[] = {
	{ "CAP_KILL", 5 },
	{ "CAP_NET_BIND_SERVICE", 10 },
	{ "CAP_SYS_ADMIN", 21 },
	{ "CAP_AUDIT_WRITE", 29 },
};

/* The mask of a list of capability names; -1 for one not in the table. */
static int64_t cap_mask(const json_t *list)
{
	int64_t mask = 0;
	size_t i, j;
	json_t *v;

	json_array_foreach (list, i, v) {
		for (j = 0; j < sizeof(cap_bits) / sizeof(cap_bits[0]); j++)
			if (json_is_string(v) && !strcmp(json_string_value(v), cap_bits[j].name))
				break;
		if (j == sizeof(cap_bits) / sizeof(cap_bits[0]))
			return -1;
		mask |= (int64_t)1 << cap_bits[j].bit;
	}
	return mask;
}

/* ExecuteAsync's argument from an OCI process, as runsc builds it; NULL when
 * the process is one this path does not take: a terminal, a user other than
 * root (runsc gives such a user its stdio files first), a capability outside
 * the table. */
static json_t *exec_args(const json_t *proc, const char *id)
{
	const json_t *caps = json_object_get(proc, "capabilities"), *user = json_object_get(proc, "user");
	static const char *const sets[] = { "permitted", "inheritable", "effective", "bounding", "ambient" };
	int64_t m[5];

	if (json_is_true(json_object_get(proc, "terminal")) || json_integer_value(json_object_get(user, "uid")) != 0 ||
	    json_integer_value(json_object_get(user, "gid")) != 0 || json_array_size(json_object_get(user, "additionalGids")))
		return NULL;
	for (int i = 0; i < 5; i++)
		if ((m[i] = cap_mask(json_object_get(caps, sets[i]))) < 0)
			return NULL;
	return json_pack("{s:s, s:O, s:O, s:n, s:s, s:i, s:i, s:[], s:{s:I, s:I, s:I, s:I, s:I}, s:b, s:s, s:n, s:n}",
			 "filename", "", "argv", json_object_get(proc, "args"), "envv", json_object_get(proc, "env"),
			 "MountNamespace", "wd", json_string_value(json_object_get(proc, "cwd")), "KUID", 0, "KGID", 0,
			 "ExtraKGIDs", "Capabilities", "PermittedCaps", (json_int_t)m[0], "InheritableCaps",
			 (json_int_t)m[1], "EffectiveCaps", (json_int_t)m[2], "BoundingCaps", (json_int_t)m[3],
			 "AmbientCaps", (json_int_t)m[4], "StdioIsPty", 0, "ContainerID", id, "PIDNamespace", "Limits");
}

void sb_runsc_quick_init(struct sb_runsc_quick *q, const struct sb_runsc *rs, const char *build, const char *id,
			 const json_t *proc, const char *ipid_file)
{
	*q = (struct sb_runsc_quick){ .rs = rs, .build = build, .id = id, .ipid_file = ipid_file };
	q->args = proc ? exec_args(proc, id) : NULL;
}

void sb_runsc_quick_clear(struct sb_runsc_quick *q)
{
	json_decref(q->args);
	q->args = NULL;
}

/* One call on d's socket (it takes arg): 0 and *result (NULL: any result),
 * 1 refused before anything ran (the CLI may try), or an error once the
 * request went out. */
static int call(long long *result, struct sb_runsc_direct *d, const char *method, json_t *arg, const int *files,
		size_t n_files, struct sb_error *err)
{
	struct sb_urpc_reply reply;
	int sent, rc = sb_urpc_call(&reply, &sent, d->sock, method, arg, files, n_files, d->deadline, err);

	json_decref(arg);
	if (rc < 0)
		return sent ? rc : 1;
	if (!reply.success || (result && !reply.has_result)) {
		sb_log("runsc exec %s: %s refused: %s", d->id, method, reply.err);
		return 1;
	}
	if (result)
		*result = reply.result;
	return 0;
}

/* Starts the process on the child's stdio: 0 and *pid, 1, or an error. */
static int start(long long *pid, struct sb_runsc_direct *d, json_t *args, struct sb_error *err)
{
	int rc = call(NULL, d, "containerManager.Signal",
		      json_pack("{s:s, s:i, s:i, s:i}", "CID", d->id, "Signo", 0, "PID", 0, "Mode", 0), NULL, 0, err);

	return rc ? rc : call(pid, d, "containerManager.ExecuteAsync", json_incref(args), (const int[]){ 0, 1, 2 }, 3, err);
}

/* The pid inside where runsc's --internal-pid-file puts it (kill reads it),
 * written as runsc writes it: plainly (no fault point of the test build: this
 * child stands for runsc's process, which has none). */
static void write_ipid(const char *path, long long pid)
{
	char text[32];
	int n = snprintf(text, sizeof(text), "%lld", pid);
	int fd = path ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600) : -1;

	if (path && (fd < 0 || sb_fs_write_all(fd, text, (size_t)n) < 0))
		sb_log("runsc exec: cannot write '%s'", path);
	if (fd >= 0)
		close(fd);
}

/* Closes what exec would (the close-on-exec descriptors) but the log: this
 * child execs nothing when it runs the process itself, and the read ends of
 * its own pipes left open here would keep a guest that writes to a reader
 * gone from ever seeing EPIPE. */
static void close_as_exec_would(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		int fd = atoi(de->d_name), flags = fd > 2 ? fcntl(fd, F_GETFD) : -1;
		if (fd > 2 && fd != dirfd(d) && fd != sb_log_fd() && flags >= 0 && (flags & FD_CLOEXEC))
			close(fd);
	}
	closedir(d);
}

int sb_runsc_quick_child(void *arg)
{
	const struct sb_runsc_quick *q = arg;
	struct sb_runsc_direct d = { .id = q->id, .lock_fd = -1, .sock = -1 };
	long long t0 = sb_clock_monotonic_ms(), pid, ws;
	const char *why = q->args ? NULL : "a process this path does not take";
	struct sb_error err;
	int rc = 1;

	d.deadline = t0 + START_MS;
	close_as_exec_would();
	if (!why && !(why = sb_runsc_direct_open(&d, q->rs, q->build, "running", "running")) &&
	    (rc = start(&pid, &d, q->args, &err)) == 1)
		why = "the sandbox refused the call";
	if (rc == 1) {
		sb_runsc_direct_close(&d);
		sb_log("runsc exec %s: through the CLI: %s", q->id, why);
		return 0;
	}
	/* from here on the request went out: never the CLI too */
	if (rc == 0) {
		close(d.lock_fd);
		d.lock_fd = -1;
		write_ipid(q->ipid_file, pid);
		/* the caller's deadline ends this child, as it would the CLI */
		d.deadline = LLONG_MAX / 2;
		rc = call(&ws, &d, "containerManager.WaitPID", json_pack("{s:I, s:s}", "PID", pid, "CID", d.id), NULL, 0,
			  &err);
	}
	if (rc != 0) {
		sb_log("runsc exec %s: direct, lost: %s", q->id, rc < 0 ? err.msg : "WaitPID refused");
		_exit(LOST_STATUS);
	}
	int status = WIFEXITED((int)ws) ? WEXITSTATUS((int)ws) : 128 + WTERMSIG((int)ws);
	sb_log("runsc exec %s: direct, %lld ms, status %d", q->id, sb_clock_monotonic_ms() - t0, status);
	_exit(status);
}
