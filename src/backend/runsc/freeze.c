/* pause and resume without starting the runsc CLI: what `runsc pause` and
 * `runsc resume` do, measured on the runsc builds of the table below
 * (docs/pause.md), done here in a few hundred microseconds instead of a Go
 * start-up of 30-50 ms:
 *   lock ROOT/runsc/ID_sandbox:ID.lock (flock, as runsc does), read the
 *   container's state file, require the status the operation starts from,
 *   call the sandbox over its control socket (urpc.c), write the new status,
 *   unlock.
 * The state file stays runsc's truth, so the CLI, `runsc list` (gc) and
 * this path can take turns on one sandbox. The status is the guard the
 * sentry relies on: its pauses nest and a resume of a sandbox that is not
 * paused panics it. Any other build (of the CLI or of the running sandbox),
 * any state file or peer that is not as measured, or a refusal before
 * anything was done, is left to the CLI; an answer that cannot be read after
 * the request went out is an error, never a success and never a second try. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "base/log.h"
#include "internal.h"

/* The runsc builds (sb_runsc_build_of: size and modification time of the
 * binary) whose pause and resume were traced (docs/pause.md): the same
 * requests and replies on the same abstract socket, the same lock and state
 * file. A build missing here uses the CLI. */
static const struct {
	const char *build;
	const char *what;
} measured_builds[] = {
	{ "runsc:24013136:1681030439.000000000", "Debian runsc 0.0~20221219.0-2+b3 amd64" },
};

/* What the CLI sends for each operation, in order: for pause, first the
 * liveness check `runsc pause` makes (signal 0 to the container); undo is
 * the call that takes the operation back when its status cannot be written. */
struct freeze_op {
	const char *verb, *from, *to;
	int check_alive;
	const char *method, *undo;
};

static const struct freeze_op freeze_ops[] = {
	{ "pause", "running", "paused", 1, "Lifecycle.Pause", "Lifecycle.Resume" },
	{ "resume", "paused", "running", 0, "Lifecycle.Resume", "Lifecycle.Pause" },
};

/* the container's state file is a few KB (its OCI spec); runsc's lock is
 * held for moments, longer only by another runsc: then the CLI waits */
#define STATE_MAX (1 << 20)
#define LOCK_WAIT_MS 1000

int sb_runsc_build_of(char *out, size_t size, const char *path)
{
	struct stat st;

	out[0] = '\0';
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return -1;
	snprintf(out, size, "runsc:%lld:%lld.%09ld", (long long)st.st_size, (long long)st.st_mtim.tv_sec,
		 st.st_mtim.tv_nsec);
	return 0;
}

static int measured(const char *build)
{
	for (size_t i = 0; build && i < sizeof(measured_builds) / sizeof(measured_builds[0]); i++)
		if (!strcmp(build, measured_builds[i].build))
			return 1;
	return 0;
}

/* Counts the occurrences of needle in text (len bytes, may hold NULs). */
static int occurrences(const char *text, size_t len, const char *needle, const char **first)
{
	size_t n = strlen(needle);
	int count = 0;

	*first = NULL;
	for (const char *p = text; (p = memmem(p, len - (size_t)(p - text), needle, n)); p += n) {
		if (!count)
			*first = p;
		count++;
	}
	return count;
}

int sb_runsc_state_edit(char **out, size_t *out_len, long *pid, const char *text, size_t len, const char *id,
			const char *from, const char *to)
{
	json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL);
	json_t *jpid = json_object_get(json_object_get(doc, "sandbox"), "pid");
	const char *status = json_string_value(json_object_get(doc, "status"));
	const char *cid = json_string_value(json_object_get(doc, "id"));
	char *was = sb_strdupf("\"status\":\"%s\"", from), *now = sb_strdupf("\"status\":\"%s\"", to);
	const char *at;
	int rc = SB_ERR_FORMAT;

	*out = NULL;
	*out_len = 0;
	*pid = 0;
	if (!was || !now)
		rc = SB_ERR_NOMEM;
	/* the status as runsc wrote it (compact, once in the file): replaced in
	 * place, every other byte kept as runsc wrote it */
	else if (json_is_object(doc) && cid && !strcmp(cid, id) && status && !strcmp(status, from) &&
		 json_is_integer(jpid) && json_integer_value(jpid) > 1 && occurrences(text, len, was, &at) == 1 &&
		 (*out = malloc(len - strlen(was) + strlen(now) + 1))) {
		size_t head = (size_t)(at - text), tail = len - head - strlen(was), nlen = strlen(now);
		memcpy(*out, text, head);
		memcpy(*out + head, now, nlen);
		memcpy(*out + head + nlen, at + strlen(was), tail);
		*out_len = head + nlen + tail;
		(*out)[*out_len] = '\0';
		*pid = (long)json_integer_value(jpid);
		rc = 0;
	} else if (json_is_object(doc) && status && strcmp(status, from))
		rc = SB_ERR_STATE;
	free(was);
	free(now);
	json_decref(doc);
	return rc;
}

/* runsc's lock of the container, as runsc takes it; -1 when it cannot be had
 * in a moment (or is missing: then the CLI says why). */
static int lock_state(const char *path)
{
	long long deadline = sb_clock_monotonic_ms() + LOCK_WAIT_MS;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	while (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) < 0) {
		struct timespec ts = { 0, 2000000 };
		if ((errno != EWOULDBLOCK && errno != EINTR) || sb_clock_monotonic_ms() > deadline) {
			close(fd);
			return -1;
		}
		nanosleep(&ts, NULL);
	}
	return fd;
}

/* One container's files and socket while an operation runs. */
struct freeze {
	const struct freeze_op *op;
	const char *id;
	char *lock_path, *state_path;
	char *text, *edited;
	size_t len, edited_len;
	long pid;
	int lock_fd, sock;
	long long deadline;
};

static void freeze_clear(struct freeze *f)
{
	if (f->sock >= 0)
		close(f->sock);
	if (f->lock_fd >= 0)
		close(f->lock_fd); /* releases the flock */
	free(f->lock_path);
	free(f->state_path);
	free(f->text);
	free(f->edited);
}

/* Locks, reads and checks the state file, connects and checks the peer:
 * NULL, or why the CLI should do it. Nothing has been sent yet. */
static const char *prepare(struct freeze *f, const struct sb_runsc *rs, const char *build)
{
	const char *dir = sb_runsc_state_dir(rs);
	char name[128], peer_build[96];
	pid_t peer;
	struct sb_error e;

	if (!measured(build))
		return "not a runsc build whose protocol was measured";
	if (!f->id[0] || strspn(f->id, "abcdefghijklmnopqrstuvwxyz0123456789-") != strlen(f->id) || strlen(f->id) > 64)
		return "not a container id of ours";
	f->lock_path = sb_strdupf("%s/%s_sandbox:%s.lock", dir, f->id, f->id);
	f->state_path = sb_strdupf("%s/%s_sandbox:%s.state", dir, f->id, f->id);
	if (!f->lock_path || !f->state_path)
		return "out of memory";
	if ((f->lock_fd = lock_state(f->lock_path)) < 0)
		return "runsc's lock of the container is missing or held";
	if (sb_fs_read_file(&f->text, &f->len, f->state_path, STATE_MAX, NULL) < 0)
		return "its state file cannot be read";
	int rc = sb_runsc_state_edit(&f->edited, &f->edited_len, &f->pid, f->text, f->len, f->id, f->op->from, f->op->to);
	if (rc == SB_ERR_STATE)
		return f->op->check_alive ? "runsc says it is not running" : "runsc says it is not paused";
	if (rc < 0)
		return "its state file is not as measured";
	snprintf(name, sizeof(name), "runsc-sandbox.%s", f->id);
	if (sb_urpc_connect(&f->sock, &peer, name, &e) < 0)
		return "its control socket does not answer";
	/* the socket's owner is the sandbox of the state file, started from a
	 * measured build: a binary replaced since runs on under "(deleted)" */
	char *exe = sb_strdupf("/proc/%ld/exe", (long)peer);
	int built = exe && sb_runsc_build_of(peer_build, sizeof(peer_build), exe) == 0;
	free(exe);
	if ((long)peer != f->pid)
		return "its control socket belongs to another process";
	if (!built || !measured(peer_build))
		return "the sandbox runs another runsc build";
	return NULL;
}

/* One call: 0 done, 1 refused by the sandbox before anything was done (the
 * CLI may try), or an error once the request went out. */
static int call(struct freeze *f, const char *method, json_t *arg, struct sb_error *err)
{
	struct sb_urpc_reply reply;
	int sent, rc = sb_urpc_call(&reply, &sent, f->sock, method, arg, f->deadline, err);

	if (rc < 0 && !sent)
		return 1;
	if (rc < 0)
		return sb_error_wrap(err, _("runsc %s of '%s' without the CLI"), f->op->verb, f->id);
	if (!reply.success) {
		/* these methods fail only before they run: unknown, bad argument */
		sb_log("runsc %s %s: %s refused: %s", f->op->verb, f->id, method, reply.err);
		return 1;
	}
	return 0;
}

/* Sends the operation's calls and writes the new status. 0, 1 (the CLI), or
 * an error. */
static int run_op(struct freeze *f, struct sb_error *err)
{
	struct sb_error e2;
	int rc = 0;

	if (f->op->check_alive) {
		json_t *sig = json_pack("{s:s,s:i,s:i,s:i}", "CID", f->id, "Signo", 0, "PID", 0, "Mode", 0);
		rc = sig ? call(f, "containerManager.Signal", sig, err) : sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		json_decref(sig);
		if (rc != 0)
			return rc;
	}
	if ((rc = call(f, f->op->method, NULL, err)) != 0)
		return rc;
	if (sb_fs_replace(f->state_path, f->edited, f->edited_len, 0640, 0, err) < 0) {
		/* runsc's truth must not lie: take the operation back */
		if (call(f, f->op->undo, NULL, &e2) != 0)
			sb_log("runsc %s %s: done, its status unwritten, and not taken back: %s", f->op->verb, f->id, e2.msg);
		return sb_error_wrap(err, _("runsc %s of '%s' without the CLI"), f->op->verb, f->id);
	}
	return 0;
}

int sb_runsc_freeze_direct(struct sb_runsc *rs, const char *build, const struct sb_backend_sandbox *sb, int resume,
			   int timeout_ms, struct sb_error *err)
{
	struct freeze f = { .op = &freeze_ops[resume ? 1 : 0], .id = sb->rec->id, .lock_fd = -1, .sock = -1 };
	long long t0 = sb_clock_monotonic_ms();
	const char *why;
	int rc;

	f.deadline = t0 + timeout_ms;
	if ((why = prepare(&f, rs, build)))
		rc = 1;
	else if ((rc = run_op(&f, err)) == 1)
		why = "the sandbox refused the call";
	freeze_clear(&f);
	if (rc == 1)
		sb_log("runsc %s %s: through the CLI: %s", f.op->verb, f.id, why);
	else if (rc == 0)
		sb_log("runsc %s %s: direct, %lld ms", f.op->verb, f.id, sb_clock_monotonic_ms() - t0);
	return rc;
}
