/* exec without starting the runsc CLI (a Go start-up of 100-150 ms here):
 * what `runsc exec --process FILE` sends, traced on the measured builds
 * (direct.c, docs/pool.md):
 *   containerManager.Signal, signal 0 to the container (is it alive);
 *   containerManager.ExecuteAsync, the process with its stdin, stdout and
 *   stderr as SCM_RIGHTS, answered with its pid inside;
 *   containerManager.WaitPID on that pid, answered with its wait status.
 * The caller prepares it (lock, socket, requests); it runs in the child
 * that sb_proc_run made for `runsc exec` (its pre_exec hook), with the stdio
 * that child has: the caller's pipes and deadline work as for the CLI, and
 * where the sandbox refuses the call before anything ran the same child
 * goes on to exec the CLI. runsc's lock is held until the process is
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

/* The requests of the child, encoded here: it can allocate nothing. The
 * pid of WaitPID is known there only, so that request is head, pid, "}}"
 * (the id is one of ours: [a-z0-9-], sb_runsc_direct_open). */
static const char *encode(struct sb_runsc_quick *q, json_t *args)
{
	json_t *sig = json_pack("{s:s, s:i, s:i, s:i}", "CID", q->id, "Signo", 0, "PID", 0, "Mode", 0);
	int rc = sig ? sb_urpc_encode(&q->signal_req, "containerManager.Signal", sig, NULL) : SB_ERR_NOMEM;

	json_decref(sig);
	if (rc < 0 || sb_urpc_encode(&q->exec_req, "containerManager.ExecuteAsync", args, NULL) < 0 ||
	    !(q->wait_head = sb_strdupf("{\"method\":\"containerManager.WaitPID\",\"arg\":{\"CID\":\"%s\",\"PID\":", q->id)))
		return "out of memory";
	return NULL;
}

int sb_runsc_quick_init(struct sb_runsc_quick *q, const struct sb_runsc *rs, const char *build, const char *id,
			const json_t *proc, const char *ipid_file)
{
	struct sb_runsc_direct d = { .id = id, .lock_fd = -1, .sock = -1 };
	json_t *args = proc ? exec_args(proc, id) : NULL;
	const char *why = args ? sb_runsc_direct_open(&d, rs, build, "running", "running")
			       : "a process this path does not take";

	*q = (struct sb_runsc_quick){ .id = id, .ipid_file = ipid_file, .sock = -1, .lock_fd = -1 };
	if (!why)
		why = encode(q, args);
	json_decref(args);
	if (why) {
		sb_runsc_direct_close(&d);
		sb_runsc_quick_clear(q);
		sb_log("runsc exec %s: through the CLI: %s", id, why);
		return 0;
	}
	/* the lock and the socket go to the child; runsc's lock is held until
	 * the process is started, as runsc's own is while it reads the container */
	q->sock = d.sock;
	q->lock_fd = d.lock_fd;
	d.sock = d.lock_fd = -1;
	sb_runsc_direct_close(&d);
	return 1;
}

void sb_runsc_quick_forked(void *arg)
{
	struct sb_runsc_quick *q = arg;

	/* the child has them: the lock is released when it lets go of it */
	close(q->sock);
	close(q->lock_fd);
	q->sock = q->lock_fd = -1;
}

void sb_runsc_quick_clear(struct sb_runsc_quick *q)
{
	if (q->sock >= 0)
		close(q->sock);
	if (q->lock_fd >= 0)
		close(q->lock_fd);
	free(q->signal_req);
	free(q->exec_req);
	free(q->wait_head);
	q->signal_req = q->exec_req = q->wait_head = NULL;
	q->sock = q->lock_fd = -1;
}

/* From here on the child: async-signal-safe calls only (the caller may have
 * threads, and one of them may have held malloc's or stdio's lock at the
 * fork). */

/* One exchange of the child: 0 and *r, 1 refused before anything ran (the
 * CLI may try, *why says why), or -1 lost once the request went out. */
static int call(struct sb_urpc_reply *r, const char **why, const struct sb_runsc_quick *q, const char *req,
		const int *files, size_t n_files, long long deadline, char *buf)
{
	int sent, rc = sb_urpc_exchange(r, &sent, q->sock, req, files, n_files, deadline, buf);

	if (rc < 0 && !sent) {
		*why = "the sandbox did not take the request";
		return 1;
	}
	if (rc < 0) {
		*why = rc == SB_URPC_TIMEOUT ? "no answer in time" : "no answer";
		return -1;
	}
	if (!r->success) {
		*why = r->err;
		return 1;
	}
	return 0;
}

/* The pid inside where runsc's --internal-pid-file puts it (kill reads it),
 * written as runsc writes it: plainly (no fault point of the test build: this
 * child stands for runsc's process, which has none). */
static void write_ipid(const struct sb_runsc_quick *q, long long pid)
{
	char num[SB_LOG_DECIMAL];
	const char *text = sb_log_decimal(num, pid);
	int fd = q->ipid_file ? open(q->ipid_file, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600) : -1;

	if (q->ipid_file && (fd < 0 || sb_fs_write_all(fd, text, strlen(text)) < 0))
		sb_log_safe((const char *const[]){ "runsc exec ", q->id, ": cannot write '", q->ipid_file, "'",
						   NULL });
	if (fd >= 0)
		close(fd);
}

/* Closes what exec would (the close-on-exec descriptors) but the log and
 * what q hands over: this child execs nothing when it runs the process
 * itself, and the read ends of its own pipes left open here would keep a
 * guest that writes to a reader gone from ever seeing EPIPE. */
static void close_as_exec_would(const struct sb_runsc_quick *q)
{
	int dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char buf[4096];
	ssize_t n;

	while (dir >= 0 && (n = getdents64(dir, buf, sizeof(buf))) > 0) {
		for (ssize_t off = 0; off < n;) {
			const struct dirent64 *de = (const struct dirent64 *)(const void *)(buf + off);
			int fd = 0;
			off += de->d_reclen;
			for (const char *c = de->d_name; *c >= '0' && *c <= '9' && fd < INT_MAX / 10; c++)
				fd = fd * 10 + (*c - '0');
			int flags = fd > 2 ? fcntl(fd, F_GETFD) : -1;
			if (fd != dir && fd != sb_log_fd() && fd != q->sock && fd != q->lock_fd && flags >= 0 &&
			    (flags & FD_CLOEXEC))
				close(fd);
		}
	}
	if (dir >= 0)
		close(dir);
}

/* The child exits with the process's status; lost, with LOST_STATUS. */
_Noreturn static void finish(const struct sb_runsc_quick *q, const char *why, long long t0, long long ws)
{
	char ms[SB_LOG_DECIMAL], st[SB_LOG_DECIMAL];
	int status = WIFEXITED((int)ws) ? WEXITSTATUS((int)ws) : 128 + WTERMSIG((int)ws);

	if (why) {
		sb_log_safe((const char *const[]){ "runsc exec ", q->id, ": direct, lost: ", why, NULL });
		_exit(LOST_STATUS);
	}
	sb_log_safe((const char *const[]){ "runsc exec ", q->id, ": direct, ",
					   sb_log_decimal(ms, sb_clock_monotonic_ms() - t0),
					   q->detach ? " ms, detached" : " ms, status ",
					   q->detach ? "" : sb_log_decimal(st, status), NULL });
	_exit(status);
}

int sb_runsc_quick_child(void *arg)
{
	const struct sb_runsc_quick *q = arg;
	long long t0 = sb_clock_monotonic_ms();
	char buf[SB_URPC_REPLY_MAX], req[256], num[SB_LOG_DECIMAL];
	struct sb_urpc_reply r;
	const char *why = NULL;
	int rc;

	close_as_exec_would(q);
	if ((rc = call(&r, &why, q, q->signal_req, NULL, 0, t0 + START_MS, buf)) == 0 &&
	    (rc = call(&r, &why, q, q->exec_req, (const int[]){ 0, 1, 2 }, 3, t0 + START_MS, buf)) == 0 &&
	    !r.has_result) {
		why = "no pid in the answer";
		rc = -1;
	}
	if (rc == 1 && q->detach)
		finish(q, why, t0, 0);
	if (rc == 1) {
		sb_log_safe((const char *const[]){ "runsc exec ", q->id,
						   ": through the CLI: the sandbox refused the call: ", why, NULL });
		close(q->sock);
		close(q->lock_fd); /* releases runsc's lock for the CLI */
		return 0;
	}
	/* from here on the request went out: never the CLI too */
	if (rc < 0)
		finish(q, why, t0, 0);
	close(q->lock_fd);
	long long pid = r.result;
	write_ipid(q, pid);
	if (q->detach)
		finish(q, NULL, t0, 0);
	const char *digits = sb_log_decimal(num, pid);
	size_t head = strlen(q->wait_head), nd = strlen(digits);
	if (head + nd + 3 > sizeof(req))
		finish(q, "the request is too long", t0, 0);
	stpcpy(stpcpy(stpcpy(req, q->wait_head), digits), "}}");
	/* the caller's deadline ends this child, as it would the CLI */
	rc = call(&r, &why, q, req, NULL, 0, LLONG_MAX / 2, buf);
	if (rc == 0 && !r.has_result)
		why = "no wait status in the answer";
	finish(q, rc == 0 && r.has_result ? NULL : why, t0, r.result);
	return 0;
}
