#include "config.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "base/clock.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "sandbox/sandbox.h"

/* runsc writes a container stdout that is a regular file from offset 0 unless it
 * is O_APPEND: without this, `sandbench exec ... > file` would overwrite the file's
 * start instead of continuing where the caller is. */
static void append_if_file(int fd)
{
	struct stat st;
	int fl;

	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (fl = fcntl(fd, F_GETFL)) >= 0 && !(fl & O_APPEND))
		fcntl(fd, F_SETFL, fl | O_APPEND);
}

/* A sandbox that died (its memory limit, a crash, a host restart) is
 * settled like any other whose runtime is gone. */
static int note_death(struct sb_box *b, enum sb_gone why, struct sb_error *err)
{
	struct sb_error ignored;
	const char *name = b->rec.name;
	int removed = 0;

	if (sb_box_lock(b, BOX_LOCK_EXCLUSIVE, &ignored) == 0) {
		struct sb_record now;
		if (sb_record_load(&now, b->root, name, &ignored) == 0 && now.state == SB_STATE_RUNNING && !strcmp(now.id, b->rec.id)) {
			sb_record_clear(&b->rec);
			b->rec = now;
			memset(&now, 0, sizeof(now));
			sb_box_settle(b, why, &removed, &ignored);
		}
		sb_record_clear(&now);
	}
	if (removed)
		return sb_error_set(err, SB_ERR_STATE, _("sandbox '%s' is gone: it was temporary and the host restarted"), name);
	return sb_error_set(err, SB_ERR_STATE, _("sandbox '%s' is no longer running: it died (memory limit or crash); "
						 "'sandbench restore %s' starts it again from its disk"), name, name);
}

int sb_sandbox_exec(struct sb_exec_result *out, struct sb_root *root, const char *name,
		    const struct sb_exec_opts *opts, struct sb_error *err)
{
	struct sb_proc_result res;
	struct sb_box b;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!opts->argv || !opts->argv[0])
		return sb_error_set(err, SB_ERR_INVALID, _("no command given to run in sandbox '%s'"), name ? name : "");
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

	struct sb_backend_exec x = {
		.argv = opts->argv, .env = opts->env, .cwd = opts->cwd ? opts->cwd : "/workspace",
		.proc = SB_PROC_OPTS_DEFAULT,
	};
	x.proc.timeout_ms = opts->timeout_ms > 0 ? opts->timeout_ms : 0;
	x.proc.stdin_fd = opts->stdin_fd;
	x.proc.stdout_fd = opts->stdout_fd;
	x.proc.stderr_fd = opts->stderr_fd;
	char *ipid_file = opts->timeout_ms > 0 ? sb_strdupf("%s/exec-%ld.ipid", b.sessions, (long)getpid()) : NULL;
	x.ipid_file = ipid_file;
	append_if_file(opts->stdout_fd);
	append_if_file(opts->stderr_fd);
	x.proc.capture_max = opts->capture_max ? opts->capture_max : 16 << 20;
	/* a running command is activity for as long as it runs: reap spares it */
	int guard = sb_box_exec_begin(&b);
	long long start = sb_clock_monotonic_ms();
	rc = b.be->exec(&res, b.be_state, sb_box_target(&b), &x, err);
	if (guard >= 0)
		close(guard);
	out->duration_ms = sb_clock_monotonic_ms() - start;
	out->exit_code = res.status;
	out->timed_out = res.timed_out;
	out->out = res.out;
	out->out_len = res.out_len;
	out->errout = res.errout;
	out->err_len = res.err_len;
	/* on a deadline only the host `runsc exec` was killed: the command
	 * inside would run on */
	if (rc == SB_ERR_TIMEOUT && ipid_file)
		sb_box_kill_inside(&b, ipid_file);
	if (ipid_file)
		unlink(ipid_file);
	free(ipid_file);
	if (rc == SB_ERR_TIMEOUT) {
		sb_error_set(err, SB_ERR_TIMEOUT, _("command in sandbox '%s' did not finish within %d s"), name,
			     (opts->timeout_ms + 999) / 1000);
		rc = 0;
	}
	/* a long command counts as activity until it ends */
	struct sb_error ignored;
	sb_box_touch(&b, &ignored);
	/* 128 is also runsc's own failure: the sandbox may have died under us */
	enum sb_gone why;
	if (rc == 0 && res.status == 128 && !res.timed_out && (why = sb_box_gone(&b)) != SB_ALIVE) {
		rc = note_death(&b, why, err);
		sb_exec_result_clear(out);
	}
out:
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
