/* fork: a new sandbox from another's disk and, when it has them, its memory
 * and processes: the source's checkpoint image is restored a second time,
 * into the fork, under the fork's own container id. Keeping the source's id
 * is not possible with this runsc: its control socket is an abstract socket
 * named after the container id alone ("creating control server socket ...:
 * address already in use" whatever the --root), so two sandboxes of one id
 * never run at once. Under a new id runsc does not list the restored
 * processes, but what sandbench kills by pid (an exec past its deadline, a
 * session's shell) is started after the restore, under the fork's id
 * (test-fork proves both). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "base/clock.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "sandbox/doctor.h"
#include "sandbox/sandbox.h"

/* The source, locked: running or stopped (a dead runtime counts as stopped). */
static int open_source(struct sb_box *src, struct sb_root *root, const char *name, struct sb_error *err)
{
	int rc = sb_box_open(src, root, name, BOX_LOCK_EXCLUSIVE, 1, err);

	if (rc == 0)
		rc = sb_box_settle_if_gone(src, err);
	if (rc == 0 && src->rec.state != SB_STATE_RUNNING && src->rec.state != SB_STATE_STOPPED)
		rc = sb_error_set(err, SB_ERR_STATE, _("cannot fork sandbox '%s': it is %s"), name,
				  sb_sandbox_state_name(src->rec.state));
	if (rc == 0)
		rc = sb_box_backend(src, err);
	return rc;
}

/* The fork's record: the source's, with its own name, id, time, kind and
 * state, and its parent. */
static int fork_record(struct sb_record *out, const struct sb_box *src, const char *name, enum sb_sandbox_kind kind,
		       const struct sb_settings *set, struct sb_error *err)
{
	json_t *doc = sb_record_to_json(&src->rec);
	int rc = doc ? sb_record_from_json(out, doc, err) : sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));

	json_decref(doc);
	if (rc < 0 || (rc = sb_box_new_id(out->id, err)) < 0)
		return rc;
	snprintf(out->name, sizeof(out->name), "%s", name);
	snprintf(out->parent, sizeof(out->parent), "%s", src->rec.name);
	snprintf(out->parent_id, sizeof(out->parent_id), "%s", src->rec.id);
	out->created = out->state_changed = sb_clock_now();
	out->state = SB_STATE_CREATED;
	/* the source's host ports are its own: a fork publishes none */
	free(out->publish);
	out->publish = NULL;
	out->n_publish = 0;
	if (kind != SB_KIND_DEFAULT && kind != out->kind) {
		out->kind = kind;
		out->idle_timeout = kind == SB_KIND_PERMANENT ? 0 : set->idle_timeout;
	}
	free(out->reason);
	return (out->reason = strdup(_("forking"))) ? 0 : sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
}

/* One of the source's directories copied into the fork's (made empty by
 * sb_box_make_dirs). */
static int copy_dir(unsigned long long *skipped, const char *from, const char *to, const char *label,
		    struct sb_error *err)
{
	int s = open(from, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), d = open(to, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	unsigned long long n = 0;
	int rc = s < 0 || d < 0 ? sb_error_errno(err, SB_ERR_IO, errno, _("cannot open '%s'"), s < 0 ? from : to)
				: sb_disk_copy(&n, s, d, label, err);

	*skipped += n;
	if (s >= 0)
		close(s);
	if (d >= 0)
		close(d);
	return rc;
}

/* The source's checkpoint image, hard-linked into the fork's checkpoint
 * directory: both restore from the same read-only files. 1 when there is
 * one, 0 when the source has none. */
static int link_checkpoint(const struct sb_box *src, const struct sb_box *dst, struct sb_error *err)
{
	DIR *d = opendir(src->checkpoint);
	struct dirent *de;
	int rc = 0, found = 0;

	if (!d)
		return errno == ENOENT ? 0 : sb_error_errno(err, SB_ERR_IO, errno, _("cannot open '%s'"), src->checkpoint);
	if ((rc = sb_fs_mkdirs(dst->checkpoint, 0700, err)) < 0) {
		closedir(d);
		return rc;
	}
	while (rc == 0 && (de = readdir(d))) {
		struct stat st;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			continue;
		char *from = sb_path_join(src->checkpoint, de->d_name), *to = sb_path_join(dst->checkpoint, de->d_name);
		if (!from || !to)
			rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		else if (link(from, to) < 0)
			rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot link the checkpoint of '%s'"), src->rec.name);
		found |= !strcmp(de->d_name, "checkpoint.img");
		free(from);
		free(to);
	}
	closedir(d);
	return rc < 0 ? rc : found;
}

/* The fork's disk and memory image, taken while the source is stopped: the
 * memory matches the disk. */
static int take_copy(struct sb_box *src, struct sb_box *dst, struct sb_fork_report *rep, struct sb_error *err)
{
	int rc = copy_dir(&rep->skipped, src->upper, dst->upper, src->rec.name, err);

	/* a temporary source's too: the processes carried over may use it */
	if (rc == 0)
		rc = copy_dir(&rep->skipped, src->workspace, dst->workspace, src->rec.name, err);
	if (rc == 0)
		rc = link_checkpoint(src, dst, err);
	return rc < 0 ? rc : 0;
}

static int fork_locked(struct sb_sandbox_info *out, struct sb_fork_report *rep, struct sb_root *root,
		       const char *source, const char *name, enum sb_sandbox_kind kind, struct sb_error *err)
{
	struct sb_box src, dst;
	struct sb_error e2;
	int rc, made = 0;

	memset(&dst, 0, sizeof(dst));
	dst.lock_fd = -1;
	if ((rc = open_source(&src, root, source, err)) < 0 || (rc = sb_box_open(&dst, root, name, BOX_LOCK_NONE, 0, err)) < 0)
		goto out;
	/* the refusal comes before the source is touched */
	if (mkdir(dst.dir, 0700) < 0) {
		rc = errno == EEXIST ? sb_error_set(err, SB_ERR_EXISTS, _("a sandbox named '%s' already exists"), name)
				     : sb_error_errno(err, SB_ERR_IO, errno, _("cannot create sandbox '%s'"), name);
		goto out;
	}
	made = 1;
	if ((rc = sb_box_lock(&dst, BOX_LOCK_EXCLUSIVE, err)) < 0 ||
	    (rc = fork_record(&dst.rec, &src, name, kind, &dst.settings, err)) < 0 ||
	    (rc = sb_box_make_dirs(&dst, err)) < 0 || (rc = sb_record_save(root, &dst.rec, err)) < 0)
		goto out;
	dst.loaded = 1;
	if (src.rec.state == SB_STATE_RUNNING) {
		char *why = sb_strdupf(_("forked as '%s'"), name);
		rc = why ? sb_box_stop_locked(&src, why, sb_timeline_actor(), err)
			 : sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		free(why);
		if (rc < 0)
			goto out;
		rep->source_checkpointed = 1;
	}
	rc = take_copy(&src, &dst, rep, err);
	/* the source runs on whatever became of the copy */
	if (rep->source_checkpointed) {
		if (sb_box_restore_locked(&src, _("forked: restored from checkpoint, processes and memory carried on"), NULL,
					  &e2) == 0)
			rep->source_restored = 1;
		else
			snprintf(rep->source_error, sizeof(rep->source_error), "%s", e2.msg);
	}
	if (rc < 0)
		goto out;
	/* restore does the rest: the memory image, or a cold start from the copied
	 * disk when there is none or it does not load */
	char *why = sb_strdupf(_("forked from '%s': its processes and memory carried on"), source);
	if ((rc = sb_record_transition(root, &dst.rec, SB_STATE_STOPPED, _("forked"), err)) == 0 &&
	    (rc = sb_box_touch(&dst, err)) == 0 && (rc = sb_box_backend(&dst, err)) == 0)
		rc = why ? sb_box_restore_locked(&dst, why, &rep->memory, err)
			 : sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	free(why);
	if (rc == 0 && out)
		rc = sb_box_info(out, &dst, err);
out:
	if (rc < 0 && made) {
		sb_error_wrap(err, _("cannot fork sandbox '%s'"), source);
		sb_box_roll_back(&dst, err);
	}
	sb_box_close(&dst);
	sb_box_close(&src);
	return rc;
}

int sb_sandbox_fork(struct sb_sandbox_info *out, struct sb_fork_report *report, struct sb_root *root,
		    const char *source, const char *name, enum sb_sandbox_kind kind, struct sb_error *err)
{
	struct sb_fork_report own_report;
	struct sb_error own;
	int rc;

	if (out)
		memset(out, 0, sizeof(*out));
	if (!report)
		report = &own_report;
	memset(report, 0, sizeof(*report));
	/* the record's reason quotes the failure, whether or not the caller wants it */
	if (!err)
		err = &own;
	if ((rc = sb_sandbox_name_check(source, err)) < 0 || (rc = sb_sandbox_name_check(name, err)) < 0)
		return rc;
	if (!strcmp(source, name))
		return sb_error_set(err, SB_ERR_EXISTS, _("a sandbox named '%s' already exists"), name);
	/* fail closed, and shared like create: image removal waits for forks */
	if ((rc = sb_doctor_require(root, err)) == 0 && (rc = sb_root_lock(root, SB_LOCK_SHARED, err)) == 0) {
		rc = fork_locked(out, report, root, source, name, kind, err);
		sb_root_unlock(root);
	}
	return rc;
}
