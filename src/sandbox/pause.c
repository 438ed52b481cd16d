/* pause and resume: the runtime freezes every process of a running sandbox
 * and lets them carry on, memory kept in RAM (no checkpoint). The file
 * dir/paused exists whenever the container may be frozen: made before the
 * freeze, removed after the resume or the teardown. It is the cheap test of
 * the hot paths (an input to a session, an exec) and tells teardown to resume
 * first: `runsc delete -force` of a paused container panics in this runsc. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "sandbox/sandbox.h"

#define PAUSED_MARK "paused"

static int mark(struct sb_box *b, int on, struct sb_error *err)
{
	char *path = sb_path_join(b->dir, PAUSED_MARK);
	int fd = -1, e = 0;

	if (!path)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	if (on && (fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600)) < 0)
		e = errno;
	if (!on && unlink(path) < 0 && errno != ENOENT)
		e = errno;
	if (fd >= 0)
		close(fd);
	free(path);
	return e ? sb_error_errno(err, SB_ERR_IO, e, _("cannot mark sandbox '%s' paused"), b->rec.name) : 0;
}

int sb_box_paused_mark(const struct sb_box *b)
{
	char *path = sb_path_join(b->dir, PAUSED_MARK);
	struct stat st;
	int on = path && lstat(path, &st) == 0;

	free(path);
	return on;
}

void sb_box_unfreeze(struct sb_box *b)
{
	struct sb_error ignored;

	if (!sb_box_paused_mark(b) || b->container_stopped || sb_box_backend(b, NULL) < 0 || !b->be->resume)
		return;
	/* fails harmlessly when the container is not (or no longer) frozen */
	b->be->resume(b->be_state, sb_box_target(b), &ignored);
}

void sb_box_unmark_paused(struct sb_box *b)
{
	mark(b, 0, NULL);
}

int sb_box_pause_locked(struct sb_box *b, const char *reason, enum sb_timeline_source source, struct sb_error *err)
{
	struct sb_error e2;
	int rc;

	if (!b->be->pause || !b->be->resume)
		return sb_error_set(err, SB_ERR_STATE, _("sandbox '%s' runs on a backend that cannot pause it"), b->rec.name);
	if ((rc = mark(b, 1, err)) < 0)
		return rc;
	if ((rc = b->be->pause(b->be_state, sb_box_target(b), err)) < 0) {
		mark(b, 0, NULL);
		sb_error_wrap(err, _("cannot pause sandbox '%s'"), b->rec.name);
		return rc;
	}
	if ((rc = sb_record_transition_as(b->root, &b->rec, SB_STATE_PAUSED, reason, source, err)) < 0 &&
	    b->be->resume(b->be_state, sb_box_target(b), &e2) == 0)
		mark(b, 0, NULL);
	return rc;
}

int sb_box_resume_locked(struct sb_box *b, const char *reason, enum sb_timeline_source source, struct sb_error *err)
{
	struct sb_error e2;
	int rc;

	if (!b->be->resume)
		return sb_error_set(err, SB_ERR_STATE, _("sandbox '%s' runs on a backend that cannot resume it"), b->rec.name);
	if ((rc = b->be->resume(b->be_state, sb_box_target(b), err)) < 0) {
		sb_error_wrap(err, _("cannot resume sandbox '%s'"), b->rec.name);
		return rc;
	}
	/* woken: the idle clock starts again, or the reaper would pause it at once */
	sb_box_touch(b, &e2);
	if ((rc = sb_record_transition_as(b->root, &b->rec, SB_STATE_RUNNING, reason, source, err)) == 0)
		mark(b, 0, NULL);
	return rc;
}

int sb_box_pause_as(struct sb_root *root, const char *name, const char *reason, enum sb_timeline_source source,
		    struct sb_error *err)
{
	struct sb_box b;
	int rc = sb_box_open_in_state(&b, root, name, 1u << SB_STATE_RUNNING, _("pause"), err);

	if (rc == 0)
		rc = sb_box_pause_locked(&b, reason, source, err);
	sb_box_close(&b);
	return rc;
}

int sb_sandbox_pause(struct sb_root *root, const char *name, struct sb_error *err)
{
	return sb_box_pause_as(root, name, _("paused by user: processes frozen, memory kept"), sb_timeline_actor(), err);
}

int sb_sandbox_resume(struct sb_root *root, const char *name, struct sb_error *err)
{
	struct sb_box b;
	int rc = sb_box_open_in_state(&b, root, name, 1u << SB_STATE_PAUSED, _("resume"), err);

	if (rc == 0)
		rc = sb_box_resume_locked(&b, _("resumed by user"), sb_timeline_actor(), err);
	sb_box_close(&b);
	return rc;
}

int sb_sandbox_wake(int *woken, struct sb_root *root, const char *name, const char *why, struct sb_error *err)
{
	struct sb_box b;
	struct stat st;
	int rc;

	if (woken)
		*woken = 0;
	if ((rc = sb_sandbox_name_check(name, err)) < 0)
		return rc;
	/* the common case, a sandbox that is not paused, costs one lstat */
	char *rel = sb_strdupf("sandboxes/%s/" PAUSED_MARK, name), *path = rel ? sb_root_file(root, rel) : NULL;
	int paused = path && lstat(path, &st) == 0;
	free(rel);
	free(path);
	if (!paused)
		return 0;
	if ((rc = sb_box_open(&b, root, name, BOX_LOCK_EXCLUSIVE, 1, err)) == 0)
		rc = sb_box_settle_if_gone(&b, err);
	if (rc == 0 && b.rec.state == SB_STATE_PAUSED && (rc = sb_box_backend(&b, err)) == 0) {
		char *reason = sb_strdupf(_("resumed transparently: %s"), why);
		rc = sb_box_resume_locked(&b, reason ? reason : why, sb_timeline_actor(), err);
		free(reason);
		if (rc == 0 && woken)
			*woken = 1;
	}
	sb_box_close(&b);
	return rc;
}
