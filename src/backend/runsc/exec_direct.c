/* A short exec without starting the runsc CLI (a Go start-up of 100-150 ms
 * here): what `runsc exec --process FILE` sends for a process that neither
 * reads nor writes, traced on the measured builds (direct.c, docs/pool.md):
 *   containerManager.Signal, signal 0 to the container (is it alive);
 *   containerManager.ExecuteAsync, the process with its stdin, stdout and
 *   stderr as SCM_RIGHTS, answered with its pid inside;
 *   containerManager.WaitPID on that pid, answered with its wait status.
 * runsc's lock is held until the process is started, as runsc's own is while
 * it reads the container. The rlimits of the process file are not sent (runsc
 * sends none either: the container's init's apply). */
#include "config.h"

#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/i18n.h"
#include "base/log.h"
#include "internal.h"

/* The capabilities a process file of ours can name (spec.c's defaults and
 * what execs add), by bit; another name leaves the exec to the CLI. */
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
 * the process is one this path does not take (a terminal, another cap). */
static json_t *exec_args(const json_t *proc, const char *id)
{
	const json_t *caps = json_object_get(proc, "capabilities"), *user = json_object_get(proc, "user");
	int64_t m[5];
	static const char *const sets[] = { "permitted", "inheritable", "effective", "bounding", "ambient" };

	if (json_is_true(json_object_get(proc, "terminal")))
		return NULL;
	for (int i = 0; i < 5; i++)
		if ((m[i] = cap_mask(json_object_get(caps, sets[i]))) < 0)
			return NULL;
	json_t *gids = json_object_get(user, "additionalGids");
	/* "o" steals even when the pack fails */
	return json_pack("{s:s, s:O, s:O, s:n, s:s, s:I, s:I, s:o, s:{s:I, s:I, s:I, s:I, s:I}, s:b, s:s, s:n, s:n}",
			 "filename", "", "argv", json_object_get(proc, "args"), "envv", json_object_get(proc, "env"),
			 "MountNamespace", "wd", json_string_value(json_object_get(proc, "cwd")),
			 "KUID", json_integer_value(json_object_get(user, "uid")), "KGID",
			 json_integer_value(json_object_get(user, "gid")), "ExtraKGIDs",
			 gids ? json_incref(gids) : json_array(), "Capabilities", "PermittedCaps", (json_int_t)m[0],
			 "InheritableCaps", (json_int_t)m[1], "EffectiveCaps", (json_int_t)m[2], "BoundingCaps",
			 (json_int_t)m[3], "AmbientCaps", (json_int_t)m[4], "StdioIsPty", 0, "ContainerID", id,
			 "PIDNamespace", "Limits");
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
		return sent ? sb_error_wrap(err, _("runsc exec in '%s' without the CLI"), d->id) : 1;
	if (!reply.success || (result && !reply.has_result)) {
		sb_log("runsc exec %s: %s refused: %s", d->id, method, reply.err);
		return 1;
	}
	if (result)
		*result = reply.result;
	return 0;
}

/* Starts the process and waits for it: 0 and *status, 1, or an error. */
static int run(int *status, struct sb_runsc_direct *d, json_t *args, struct sb_error *err)
{
	long long pid, ws;
	int rc = call(NULL, d, "containerManager.Signal",
		      json_pack("{s:s, s:i, s:i, s:i}", "CID", d->id, "Signo", 0, "PID", 0, "Mode", 0), NULL, 0, err);
	int null = rc == 0 ? open("/dev/null", O_RDWR | O_CLOEXEC) : -1;

	if (rc != 0) {
		json_decref(args);
		return rc;
	}
	if (null < 0) {
		json_decref(args);
		return 1;
	}
	rc = call(&pid, d, "containerManager.ExecuteAsync", args, (const int[]){ null, null, null }, 3, err);
	close(null);
	if (rc != 0)
		return rc;
	close(d->lock_fd);
	d->lock_fd = -1;
	/* from here on it runs: any failure is an error, never the CLI again */
	if ((rc = call(&ws, d, "containerManager.WaitPID", json_pack("{s:I, s:s}", "PID", pid, "CID", d->id), NULL, 0,
		       err)) != 0)
		return rc < 0 ? rc : sb_error_set(err, SB_ERR_RUNTIME, _("runsc exec in '%s': its process was lost"), d->id);
	*status = WIFEXITED((int)ws) ? WEXITSTATUS((int)ws) : 128 + WTERMSIG((int)ws);
	return 0;
}

int sb_runsc_exec_direct(int *status, struct sb_runsc *rs, const char *build, const struct sb_backend_sandbox *sb,
			 const json_t *proc, int timeout_ms, struct sb_error *err)
{
	struct sb_runsc_direct d = { .id = sb->rec->id, .lock_fd = -1, .sock = -1 };
	long long t0 = sb_clock_monotonic_ms();
	json_t *args = exec_args(proc, sb->rec->id);
	const char *why = args ? NULL : "a process this path does not take";
	int rc = 1;

	d.deadline = t0 + timeout_ms;
	if (!why && !(why = sb_runsc_direct_open(&d, rs, build, "running", "running"))) {
		rc = run(status, &d, args, err);
		args = NULL;
		if (rc == 1)
			why = "the sandbox refused the call";
	}
	json_decref(args);
	sb_runsc_direct_close(&d);
	if (rc == 1)
		sb_log("runsc exec %s: through the CLI: %s", sb->rec->id, why);
	else if (rc == 0)
		sb_log("runsc exec %s: direct, %lld ms, status %d", sb->rec->id, sb_clock_monotonic_ms() - t0, *status);
	return rc;
}
