#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "base/buf.h"
#include "base/clock.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "base/log.h"
#include "sandbox/sandbox.h"

/* The command as a shell would read it back: arguments quoted where needed. */
static char *command_text(char *const *argv)
{
	struct sb_buf b = { 0 };
	int rc = 0;

	for (char *const *a = argv; rc == 0 && *a; a++) {
		const char *s = *a;
		if (a != argv)
			rc = sb_buf_add(&b, " ", 1);
		if (*s && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_@%+=:,./-") == strlen(s)) {
			rc = rc < 0 ? rc : sb_buf_add(&b, s, strlen(s));
			continue;
		}
		rc = rc < 0 ? rc : sb_buf_add(&b, "'", 1);
		for (const char *p = s; rc == 0 && *p; p++)
			rc = *p == '\'' ? sb_buf_add(&b, "'\\''", 4) : sb_buf_add(&b, p, 1);
		rc = rc < 0 ? rc : sb_buf_add(&b, "'", 1);
	}
	if (rc < 0) {
		sb_buf_clear(&b);
		return NULL;
	}
	return b.data ? sb_buf_steal(&b, NULL) : strdup("");
}

/* What the secrets of an exec need: their redactor, their "NAME=VALUE" for
 * the backend and their names for the timeline. */
struct secrets {
	struct sb_redact *redact;
	char **env;
	const char **names;
};

static void secrets_clear(struct secrets *s)
{
	for (size_t i = 0; s->env && s->env[i]; i++) {
		explicit_bzero(s->env[i], strlen(s->env[i]));
		free(s->env[i]);
	}
	free(s->env);
	free(s->names);
	sb_redact_free(s->redact);
	memset(s, 0, sizeof(*s));
}

static int secrets_open(struct secrets *s, const struct sb_exec_opts *opts, struct sb_error *err)
{
	int rc;

	memset(s, 0, sizeof(*s));
	if (!opts->n_secrets)
		return 0;
	if ((rc = sb_redact_new(&s->redact, opts->secrets, opts->n_secrets, err)) < 0)
		return rc;
	s->env = calloc(opts->n_secrets + 1, sizeof(*s->env));
	s->names = calloc(opts->n_secrets + 1, sizeof(*s->names));
	for (size_t i = 0; s->env && s->names && i < opts->n_secrets; i++) {
		const struct sb_secret *k = &opts->secrets[i];
		/* a variable's name, which the marks in the timeline show */
		size_t len = strlen(k->name);
		if (strspn(k->name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") != len ||
		    (k->name[0] >= '0' && k->name[0] <= '9')) {
			secrets_clear(s);
			return sb_error_set(err, SB_ERR_INVALID,
					    _("secret name '%s': letters, digits and _ only, not starting with a digit"), k->name);
		}
		s->names[i] = k->name;
		if (!(s->env[i] = sb_strdupf("%s=%s", k->name, k->value)))
			break;
	}
	if (!s->env || !s->names || !s->env[opts->n_secrets - 1]) {
		secrets_clear(s);
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	return 0;
}

/* The exec's timeline entry; failing to write it fails nothing, it is logged. */
static void record_exec(struct sb_box *b, const struct sb_exec_opts *opts, const char *cwd, const struct sb_proc_result *res,
			int rc, long long duration_ms, const struct secrets *sec, const struct sb_error *err)
{
	struct sb_timeline_entry e = SB_TIMELINE_ENTRY_INIT(SB_TIMELINE_EXEC, opts->source);
	char *text = command_text(opts->argv);
	struct sb_error why;

	e.text = text ? text : opts->argv[0];
	e.cwd = cwd;
	e.duration_ms = duration_ms;
	e.timed_out = res->timed_out;
	if (rc == 0 || res->timed_out) {
		e.exit_code = res->status;
		e.out_bytes = (long long)(res->out_total + res->err_total);
		e.out = res->out ? res->out : "";
		e.out_len = res->out_len;
		e.err = res->errout ? res->errout : "";
		e.err_len = res->err_len;
	} else {
		e.detail = err->msg;
	}
	e.secrets = sec->names;
	if (sb_timeline_add(b->root, b->rec.name, &b->settings, 0, &e, sec->redact, &why) < 0)
		sb_log("no timeline entry for an exec in sandbox '%s': %s", b->rec.name, why.msg);
	free(text);
}

/* A sandbox that died (its memory limit, a crash, a host restart) is
 * settled like any other whose runtime is gone; one that another command
 * stopped or removed meanwhile (exec holds no lock while it runs) is not. */
static int note_death(struct sb_box *b, enum sb_gone why, struct sb_error *err)
{
	struct sb_error ignored;
	const char *name = b->rec.name;
	int removed = 0, moved = 1;

	if (sb_box_lock(b, BOX_LOCK_EXCLUSIVE, &ignored) == 0) {
		struct sb_record now;
		if (why != SB_ALIVE && sb_record_load(&now, b->root, name, &ignored) == 0 &&
		    now.state == SB_STATE_RUNNING && !strcmp(now.id, b->rec.id)) {
			sb_record_clear(&b->rec);
			b->rec = now;
			memset(&now, 0, sizeof(now));
			sb_box_settle(b, why, &removed, &ignored);
			moved = 0;
		}
		sb_record_clear(&now);
	}
	if (moved)
		return sb_error_set(err, SB_ERR_STATE, _("sandbox '%s' was stopped or removed as the command started"), name);
	if (removed)
		return sb_error_set(err, SB_ERR_STATE, _("sandbox '%s' is gone: it was temporary and the host restarted"), name);
	if (why == SB_GONE_MEMORY)
		return sb_error_set(err, SB_ERR_STATE, _("sandbox '%s' ended: %s"), name, b->rec.reason);
	return sb_error_set(err, SB_ERR_STATE, _("sandbox '%s' is no longer running: it died (crash or kill); "
						 "'sandbench restore %s' starts it again from its disk"), name, name);
}

/* Whether another command stopped or removed the sandbox while this exec
 * started: it waits for such a command (it holds the lock) to finish. */
static int stopped_meanwhile(struct sb_box *b)
{
	struct sb_error ignored;
	struct sb_record now;
	int moved = 1;

	int rc = sb_box_lock(b, BOX_LOCK_SHARED, &ignored);

	if (rc == 0 && sb_record_load(&now, b->root, b->rec.name, &ignored) == 0) {
		moved = now.state != SB_STATE_RUNNING || strcmp(now.id, b->rec.id) != 0;
		sb_record_clear(&now);
	} else if (rc < 0 && rc != SB_ERR_NOTFOUND) {
		moved = 0;
	}
	if (b->lock_fd >= 0)
		close(b->lock_fd);
	b->lock_fd = -1;
	return moved;
}

/* The end of the command's stderr waits this long for more (hold_tail_ms):
 * a command that ends meanwhile loses no time; one that goes quiet after a
 * line on stderr shows it this much later. */
#define HOLD_TAIL_MS 100

/* The held end of the command's stderr goes on to fd, but for runsc's own
 * last line when the sandbox went away under the exec ("urpc method ...
 * failed: EOF"): that goes to the log, and the error says what happened. */
static void pass_held(struct sb_proc_result *res, int fd, int runsc_failed, const char *name)
{
	size_t n = res->held_len, start;

	if (!res->held)
		return;
	if (runsc_failed) {
		while (n && res->held[n - 1] == '\n')
			n--;
		for (start = n; start && res->held[start - 1] != '\n'; start--)
			;
		sb_log("runsc exec in sandbox '%s' failed: %.*s", name, (int)(n - start), res->held + start);
		size_t cut = res->held_len - start;
		if (res->errout && res->err_len >= cut && !memcmp(res->errout + res->err_len - cut, res->held + start, cut))
			res->errout[res->err_len -= cut] = '\0';
		n = start;
	}
	if (fd >= 0 && n)
		sb_fs_write_all(fd, res->held, n);
	free(res->held);
	res->held = NULL;
	res->held_len = 0;
}

/* Each stream goes to the caller's fd through a pipe, so that the timeline
 * sees it too; what is kept of it then is only what the timeline needs (a
 * redacted copy may grow: marks are longer than short values). */
static size_t capture_size(const struct sb_exec_opts *opts, const struct sb_settings *set)
{
	if (opts->stdout_fd >= 0 && opts->stderr_fd >= 0)
		return 2 * set->timeline_output + (64 << 10);
	return opts->capture_max ? opts->capture_max : 16 << 20;
}

int sb_sandbox_exec(struct sb_exec_result *out, struct sb_root *root, const char *name,
		    const struct sb_exec_opts *opts, struct sb_error *err)
{
	struct sb_proc_result res;
	struct sb_error own;
	struct secrets sec;
	struct sb_box b;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!err)
		err = &own;
	if (!opts->argv || !opts->argv[0])
		return sb_error_set(err, SB_ERR_INVALID, _("no command given to run in sandbox '%s'"), name ? name : "");
	if ((rc = sb_sandbox_wake(NULL, root, name, _("a command is run in it"), err)) < 0)
		return rc;
	if ((rc = secrets_open(&sec, opts, err)) < 0)
		return rc;
	/* the lock is held only to read a consistent record: execs run in parallel
	 * with each other and with other sandboxes' transitions */
	rc = sb_box_open(&b, root, name, BOX_LOCK_SHARED, 1, err);
	if (rc == 0 && b.rec.state != SB_STATE_RUNNING)
		rc = sb_error_set(err, SB_ERR_STATE, _("sandbox '%s' is %s, not running%s"), name,
				  sb_sandbox_state_name(b.rec.state),
				  b.rec.state == SB_STATE_STOPPED ? _(": restore it first") : "");
	if (rc == 0)
		rc = sb_box_backend(&b, err);
	if (rc == 0)
		rc = sb_box_touch(&b, err);
	if (b.lock_fd >= 0) {
		close(b.lock_fd);
		b.lock_fd = -1;
	}
	if (rc < 0)
		goto out;

	struct sb_box_proc bp;
	if ((rc = sb_box_proc_make(&bp, &b, opts->env, opts->cwd, opts->user, err)) < 0)
		goto out;
	struct sb_backend_exec x = {
		.argv = opts->argv, .env = sb_box_proc_env(&bp), .secret_env = sec.env, .cwd = bp.cwd,
		.user = bp.has_user ? &bp.user : NULL, .proc = SB_PROC_OPTS_DEFAULT,
	};
	x.proc.timeout_ms = opts->timeout_ms > 0 ? opts->timeout_ms : 0;
	x.proc.stdin_fd = opts->stdin_fd;
	x.proc.stdout_fd = opts->stdout_fd;
	x.proc.stderr_fd = opts->stderr_fd;
	x.proc.tee = 1;
	x.proc.hold_tail_ms = HOLD_TAIL_MS;
	x.proc.capture_max = capture_size(opts, &b.settings);
	char *ipid_file = opts->timeout_ms > 0 ? sb_strdupf("%s/exec-%ld.ipid", b.shells, (long)getpid()) : NULL;
	x.ipid_file = ipid_file;
	/* a running command is activity for as long as it runs: reap spares it */
	int guard = sb_box_exec_begin(&b);
	long long start = sb_clock_monotonic_ms();
	memset(&res, 0, sizeof(res));
	rc = b.be->exec(&res, b.be_state, sb_box_target(&b), &x, err);
	if (guard >= 0)
		close(guard);
	out->duration_ms = sb_clock_monotonic_ms() - start;
	out->exit_code = res.status;
	out->timed_out = res.timed_out;
	out->out_bytes = res.out_total + res.err_total;
	/* on a deadline or an interrupt (sb_proc_interrupt) only the host
	 * `runsc exec` was killed: the command inside would run on */
	if (rc == SB_ERR_TIMEOUT && ipid_file)
		sb_box_kill_inside(&b, ipid_file);
	if (rc == SB_ERR_INTERRUPTED && ipid_file) {
		/* the kill is the interrupt's own clean-up: it runs, then the
		 * interrupt holds again for the caller */
		sb_proc_interrupt(0);
		sb_box_kill_inside(&b, ipid_file);
		sb_proc_interrupt(1);
	}
	if (ipid_file)
		unlink(ipid_file);
	free(ipid_file);
	if (rc == SB_ERR_TIMEOUT) {
		sb_error_set(err, SB_ERR_TIMEOUT, _("command in sandbox '%s' did not finish within %d s"), name,
			     (opts->timeout_ms + 999) / 1000);
		rc = 0;
	}
	/* 128 is also runsc's own failure: the sandbox may have died under us,
	 * or another command stopped it as this one started */
	enum sb_gone why = SB_ALIVE;
	int dead = rc == 0 && res.status == 128 && !res.timed_out &&
		   ((why = sb_box_gone(&b)) != SB_ALIVE || stopped_meanwhile(&b));
	pass_held(&res, opts->stderr_fd, dead, name);
	/* a long command counts as activity until it ends */
	struct sb_error ignored;
	sb_box_touch(&b, &ignored);
	if (!opts->unrecorded)
		record_exec(&b, opts, x.cwd, &res, rc, out->duration_ms, &sec, err);
	/* what went to the caller's fds is not the result's */
	if (opts->stdout_fd >= 0 && res.out)
		res.out[res.out_len = 0] = '\0';
	if (opts->stderr_fd >= 0 && res.errout)
		res.errout[res.err_len = 0] = '\0';
	out->out = res.out;
	out->out_len = res.out_len;
	out->errout = res.errout;
	out->err_len = res.err_len;
	if (dead) {
		rc = note_death(&b, why, err);
		sb_exec_result_clear(out);
	}
	sb_box_proc_clear(&bp);
out:
	secrets_clear(&sec);
	sb_box_close(&b);
	return rc;
}

void sb_exec_result_clear(struct sb_exec_result *r)
{
	if (!r)
		return;
	free(r->out);
	free(r->errout);
	memset(r, 0, sizeof(*r));
}
