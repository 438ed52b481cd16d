#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"
#include "base/fs.h"
#include "base/generation.h"
#include "base/i18n.h"
#include "sandbox/sandbox.h"

int sb_box_destroy(struct sb_box *b, int force, struct sb_error *err)
{
	int rc = sb_box_teardown(b, force, err);

	/* the directory names the sandbox even when no record could be read */
	if (rc == 0)
		rc = sb_box_network_down(b, strrchr(b->dir, '/') + 1, err);
	if (rc == 0)
		rc = sb_box_disk_detach(b, err);
	if (rc == 0)
		rc = sb_fs_remove_tree(b->dir, err);
	sb_generation_bump(b->root, SB_GEN_SANDBOXES, NULL);   /* gone, or partly */
	return rc;
}

int sb_sandbox_remove(struct sb_root *root, const char *name, unsigned flags, struct sb_error *err)
{
	int force = (flags & SB_REMOVE_FORCE) != 0;
	struct sb_error e2, own;
	struct sb_box b;
	struct stat st;
	int rc;

	/* the record's reason quotes the failure, whether or not the caller wants it */
	if (!err)
		err = &own;
	if ((rc = sb_box_open(&b, root, name, BOX_LOCK_NONE, 0, err)) < 0)
		goto out;
	if (stat(b.dir, &st) < 0) {
		rc = sb_error_set(err, SB_ERR_NOTFOUND, _("no sandbox named '%s'"), name);
		goto out;
	}
	if ((rc = sb_box_lock(&b, BOX_LOCK_EXCLUSIVE, err)) < 0)
		goto out;
	rc = sb_record_load(&b.rec, root, name, err);
	b.loaded = rc == 0;
	if (rc < 0 && !force) {
		sb_error_wrap(err, _("cannot remove sandbox '%s' (use --force)"), name);
		goto out;
	}
	if (rc == 0 && b.rec.state == SB_STATE_BROKEN && !force) {
		rc = sb_error_set(err, SB_ERR_STATE, _("sandbox '%s' is broken (%s): remove it with --force"), name,
				  b.rec.reason);
		goto out;
	}
	sb_box_end_shells(&b);
	if ((rc = sb_box_destroy(&b, force, err)) < 0) {
		if (b.loaded) {
			char *why = sb_strdupf(_("remove failed: %s"), err->msg);
			sb_record_transition(root, &b.rec, SB_STATE_BROKEN, why ? why : err->msg, &e2);
			free(why);
		}
		sb_error_wrap(err, _("cannot remove sandbox '%s'"), name);
	}
out:
	sb_box_close(&b);
	return rc;
}
