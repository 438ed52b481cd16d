/* stop (checkpoint to disk) and restore (wake up from it). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "sandbox/sandbox.h"

int sb_box_open_in_state(struct sb_box *b, struct sb_root *root, const char *name, unsigned want, const char *verb,
			 struct sb_error *err)
{
	int rc = sb_box_open(b, root, name, BOX_LOCK_EXCLUSIVE, 1, err);

	/* a record that says running without a live runtime is stopped first */
	if (rc == 0)
		rc = sb_box_settle_if_gone(b, err);
	if (rc == 0 && !(want & (1u << b->rec.state)))
		rc = sb_error_set(err, SB_ERR_STATE, _("cannot %s sandbox '%s': it is %s"), verb, name,
				  sb_sandbox_state_name(b->rec.state));
	if (rc == 0)
		rc = sb_box_backend(b, err);
	return rc;
}

/* A backend that cannot checkpoint stops the sandbox and keeps its disk:
 * the next restore is a cold start, as after a host restart. */
static int stop_without_memory(struct sb_box *b, const char *reason, enum sb_timeline_source source,
			       struct sb_error *err)
{
	int rc = sb_box_teardown(b, 0, err);

	if (rc < 0)
		return rc;
	sb_fs_remove_tree(b->checkpoint, NULL);
	char *why = sb_strdupf(_("%s: the disk is kept, memory and processes are not (the backend '%s' cannot "
				 "checkpoint)"), reason ? reason : _("stopped by user"), b->be->name);
	rc = sb_record_transition_as(b->root, &b->rec, SB_STATE_STOPPED, why ? why : "", source, err);
	free(why);
	return rc;
}

int sb_box_stop_locked(struct sb_box *b, const char *reason, enum sb_timeline_source source, struct sb_error *err)
{
	const char *name = b->rec.name;
	struct sb_error e2;
	int rc;

	/* checkpointed from running: runsc's checkpoint of a frozen container is not one we rely on */
	if (b->rec.state == SB_STATE_PAUSED &&
	    (rc = sb_box_resume_locked(b, _("resumed to be stopped"), source, err)) < 0)
		return rc;
	/* a live exec'd pty at checkpoint time makes the restore fail */
	sb_box_end_shells(b);
	if (!(sb_backend_caps(b->be) & SB_BACKEND_CAP_CHECKPOINT))
		return stop_without_memory(b, reason, source, err);
	/* the image the last restore consumed; first, so its space is free for the new one */
	sb_fs_remove_tree(b->checkpoint_used, &e2);
	/* checkpoint.img is opened O_EXCL: always a fresh directory */
	if ((rc = sb_fs_remove_tree(b->checkpoint_tmp, err)) < 0 || (rc = sb_fs_mkdirs(b->checkpoint_tmp, 0700, err)) < 0)
		return rc;
	if ((rc = b->be->checkpoint(b->be_state, sb_box_target(b), b->checkpoint_tmp, err)) < 0) {
		/* runsc keeps the container running when the checkpoint fails: nothing changed */
		sb_fs_remove_tree(b->checkpoint_tmp, &e2);
		sb_error_wrap(err, _("cannot stop sandbox '%s'"), name);
		return rc;
	}
	/* the container is stopped now; whatever fails from here leaves it broken */
	b->container_stopped = 1;
	if ((rc = sb_box_teardown(b, 0, err)) < 0 || (rc = sb_fs_remove_tree(b->checkpoint, err)) < 0 ||
	    (rename(b->checkpoint_tmp, b->checkpoint) < 0 &&
	     (rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot keep the checkpoint of '%s'"), name)) < 0)) {
		char *why = sb_strdupf(_("stop failed after the checkpoint: %s"), err->msg);
		sb_record_transition_as(b->root, &b->rec, SB_STATE_BROKEN, why ? why : err->msg, source, &e2);
		free(why);
		return rc;
	}
	/* the record's atomic save fsyncs this directory, the rename above included
	 * (a permanent sandbox's: a temporary one does not outlive a host restart) */
	char *why = sb_strdupf(_("%s: memory and processes checkpointed to disk"), reason ? reason : _("stopped by user"));
	rc = sb_record_transition_as(b->root, &b->rec, SB_STATE_STOPPED, why ? why : "", source, err);
	free(why);
	return rc;
}

int sb_box_stop_as(struct sb_root *root, const char *name, const char *reason, enum sb_timeline_source source,
		   struct sb_error *err)
{
	struct sb_error own;
	struct sb_box b;
	int rc;

	/* the record's reason quotes the failure, whether or not the caller wants it */
	if (!err)
		err = &own;
	if ((rc = sb_box_open_in_state(&b, root, name, 1u << SB_STATE_RUNNING | 1u << SB_STATE_PAUSED, _("stop"), err)) == 0)
		rc = sb_box_stop_locked(&b, reason, source, err);
	sb_box_close(&b);
	return rc;
}

int sb_sandbox_stop(struct sb_root *root, const char *name, const char *reason, struct sb_error *err)
{
	return sb_box_stop_as(root, name, reason, sb_timeline_actor(), err);
}

int sb_box_restore_locked(struct sb_box *b, const char *warm_reason, int *restored, struct sb_error *err)
{
	struct sb_root *root = b->root;
	struct sb_error e2;
	struct stat st;
	int rc;

	char *img = sb_path_join(b->checkpoint, "checkpoint.img");
	int warm = img && stat(img, &st) == 0;
	char *fallback = NULL;
	free(img);
	if (restored)
		*restored = 0;
	/* another build's memory image may not load, or load wrong */
	const char *build = b->be->build(b->be_state);
	if (warm && b->rec.runtime_build && b->rec.runtime_build[0] && strcmp(b->rec.runtime_build, build) != 0) {
		warm = 0;
		fallback = sb_strdupf(_("the checkpoint was taken by another runtime build (%s; now %s): cold start from "
					"the kept disk"), b->rec.runtime_build, build);
	}
	rc = sb_box_boot(b, warm ? b->checkpoint : NULL, err);
	/* a changed host mount refuses any boot, cold too */
	if (rc < 0 && warm && !b->mount_changed) {
		/* e.g. a process held a host pipe at checkpoint time: the memory image
		 * cannot be loaded, the disk still can */
		fallback = sb_strdupf(_("checkpoint could not be restored (%s); cold start from the kept disk"), err->msg);
		warm = 0;
		rc = sb_box_boot(b, NULL, err);
	}
	if (rc < 0) {
		/* roll back to stopped: the checkpoint and the disk are untouched; a
		 * changed host mount is the reason, checked again at the next restore */
		sb_box_teardown(b, 1, &e2);
		char *why = b->mount_changed ? NULL : sb_strdupf(_("restore failed: %s"), err->msg);
		sb_record_transition(root, &b->rec, SB_STATE_STOPPED, b->mount_changed ? b->mount_changed : why ? why : err->msg, &e2);
		free(why);
		free(fallback);
		return rc;
	}
	/* the memory image is consumed and must never be restored again (stale
	 * memory over a newer disk): renamed out of the way, which the record
	 * save's directory fsync makes durable (a temporary sandbox's is not
	 * synced: a host restart removes it); the next stop or rm deletes it,
	 * off restore's path (deleting it here cost 1.4-1.9 ms of each restore) */
	if (rename(b->checkpoint, b->checkpoint_used) < 0 && errno != ENOENT)
		sb_fs_remove_tree(b->checkpoint, &e2);
	sb_box_touch(b, &e2);
	if (restored)
		*restored = warm;
	rc = sb_record_transition(root, &b->rec, SB_STATE_RUNNING,
				  fallback ? fallback
				  : warm ? (warm_reason ? warm_reason : _("restored from checkpoint: processes and memory carried on"))
					 : _("cold start from the kept disk: there was no checkpoint, processes started afresh"),
				  err);
	free(fallback);
	return rc;
}

int sb_sandbox_restore(struct sb_root *root, const char *name, struct sb_error *err)
{
	struct sb_error own;
	struct sb_box b;
	int rc;

	/* the record's reason quotes the failure, whether or not the caller wants it */
	if (!err)
		err = &own;
	if ((rc = sb_box_open_in_state(&b, root, name, 1u << SB_STATE_STOPPED, _("restore"), err)) == 0)
		rc = sb_box_restore_locked(&b, NULL, NULL, err);
	sb_box_close(&b);
	return rc;
}
