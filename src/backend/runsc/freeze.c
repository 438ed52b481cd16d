/* pause and resume without starting the runsc CLI: what `runsc pause` and
 * `runsc resume` do, measured on the runsc builds of the table below
 * (docs/pause.md), done here in a few hundred microseconds instead of a Go
 * start-up of 30-50 ms:
 *   lock ROOT/runsc/ID_sandbox:ID.lock (flock, as runsc does), read the
 *   container's state file, require the status the operation starts from
 *   (direct.c), call the sandbox over its control socket (urpc.c), write the
 *   new status, unlock.
 * The state file stays runsc's truth, so the CLI, `runsc list` (gc) and
 * this path can take turns on one sandbox. The status is the guard the
 * sentry relies on: its pauses nest and a resume of a sandbox that is not
 * paused panics it. Any other build (of the CLI or of the running sandbox),
 * any state file or peer that is not as measured, or a refusal before
 * anything was done, is left to the CLI; an answer that cannot be read after
 * the request went out is an error, never a success and never a second try. */
#include "config.h"

#include "base/clock.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "base/log.h"
#include "internal.h"

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

/* One operation on one container. */
struct freeze {
	const struct freeze_op *op;
	struct sb_runsc_direct d;
};

/* One call: 0 done, 1 refused by the sandbox before anything was done (the
 * CLI may try), or an error once the request went out. */
static int call(struct freeze *f, const char *method, json_t *arg, struct sb_error *err)
{
	struct sb_urpc_reply reply;
	int sent, rc = sb_urpc_call(&reply, &sent, f->d.sock, method, arg, NULL, 0, f->d.deadline, err);

	if (rc < 0 && !sent)
		return 1;
	if (rc < 0)
		return sb_error_wrap(err, _("runsc %s of '%s' without the CLI"), f->op->verb, f->d.id);
	if (!reply.success) {
		/* these methods fail only before they run: unknown, bad argument */
		sb_log("runsc %s %s: %s refused: %s", f->op->verb, f->d.id, method, reply.err);
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
		json_t *sig = json_pack("{s:s,s:i,s:i,s:i}", "CID", f->d.id, "Signo", 0, "PID", 0, "Mode", 0);
		rc = sig ? call(f, "containerManager.Signal", sig, err) : sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		json_decref(sig);
		if (rc != 0)
			return rc;
	}
	if ((rc = call(f, f->op->method, NULL, err)) != 0)
		return rc;
	if (sb_fs_replace(f->d.state_path, f->d.edited, f->d.edited_len, 0640, 0, err) < 0) {
		/* runsc's truth must not lie: take the operation back */
		if (call(f, f->op->undo, NULL, &e2) != 0)
			sb_log("runsc %s %s: done, its status unwritten, and not taken back: %s", f->op->verb, f->d.id, e2.msg);
		return sb_error_wrap(err, _("runsc %s of '%s' without the CLI"), f->op->verb, f->d.id);
	}
	return 0;
}

int sb_runsc_freeze_direct(struct sb_runsc *rs, const char *build, const struct sb_backend_sandbox *sb, int resume,
			   int timeout_ms, struct sb_error *err)
{
	struct freeze f = { .op = &freeze_ops[resume ? 1 : 0], .d = { .id = sb->rec->id, .lock_fd = -1, .sock = -1 } };
	long long t0 = sb_clock_monotonic_ms();
	const char *why;
	int rc;

	f.d.deadline = t0 + timeout_ms;
	if ((why = sb_runsc_direct_open(&f.d, rs, build, f.op->from, f.op->to)))
		rc = 1;
	else if ((rc = run_op(&f, err)) == 1)
		why = "the sandbox refused the call";
	sb_runsc_direct_close(&f.d);
	if (rc == 1)
		sb_log("runsc %s %s: through the CLI: %s", f.op->verb, f.d.id, why);
	else if (rc == 0)
		sb_log("runsc %s %s: direct, %lld ms", f.op->verb, f.d.id, sb_clock_monotonic_ms() - t0);
	return rc;
}
