#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "internal.h"
#include "base/clock.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "net/network.h"
#include "sandbox/pool.h"
#include "sandbox/sandbox.h"

/* Seconds until the due expiry action (0: due), -1: none is due ever. A
 * paused sandbox of pause,stop=D is stopped D after its pause or its last
 * activity, whichever came later; stop and pause need a live sandbox. */
static long long expires_in(const struct sb_record *r, long long idle, long long last_activity, long long now)
{
	if (r->kind != SB_KIND_TEMPORARY || r->idle_timeout <= 0)
		return -1;
	if (r->state == SB_STATE_PAUSED && r->expiry_action == SB_EXPIRY_PAUSE) {
		if (r->expiry_stop_after <= 0)
			return -1;
		long long at = (r->state_changed > last_activity ? r->state_changed : last_activity) + r->expiry_stop_after;
		return at > now ? at - now : 0;
	}
	if (r->expiry_action != SB_EXPIRY_RM && !sb_sandbox_state_live(r->state))
		return -1;
	return idle >= r->idle_timeout ? 0 : r->idle_timeout - idle;
}

enum sb_expiry_action sb_sandbox_expiry_due(const struct sb_sandbox_info *info)
{
	/* the second tier of pause,stop=D */
	if (info->rec.state == SB_STATE_PAUSED && info->rec.expiry_action == SB_EXPIRY_PAUSE)
		return SB_EXPIRY_STOP;
	return info->rec.expiry_action;
}

/* Derived fields from the record, the activity mtime and the clock. */
static void derive(struct sb_sandbox_info *info, long long now)
{
	struct stat st;
	char *act = sb_path_join(info->dir, "activity");
	char *ckpt = sb_path_join(info->dir, "checkpoint/checkpoint.img");

	info->last_activity = act && stat(act, &st) == 0 ? (long long)st.st_mtime : info->rec.created;
	info->idle_seconds = now > info->last_activity ? now - info->last_activity : 0;
	info->has_checkpoint = ckpt && stat(ckpt, &st) == 0;
	info->expires_in = expires_in(&info->rec, info->idle_seconds, info->last_activity, now);
	free(act);
	free(ckpt);
	/* a capped disk: its file system says what is used (nothing when not mounted) */
	struct statvfs vfs;
	char *disk = info->rec.disk ? sb_path_join(info->dir, SB_BOX_DISK) : NULL;
	if (disk && sb_fs_mount_point(disk) && statvfs(disk, &vfs) == 0) {
		info->disk_size = (unsigned long long)vfs.f_blocks * vfs.f_frsize;
		info->disk_used = (unsigned long long)(vfs.f_blocks - vfs.f_bfree) * vfs.f_frsize;
	}
	free(disk);
}

static int info_from(struct sb_sandbox_info *out, struct sb_root *root, const char *name, struct sb_record *rec,
		     long long now, struct sb_error *err)
{
	char *rel = sb_strdupf("sandboxes/%s", name);

	memset(out, 0, sizeof(*out));
	out->dir = rel ? sb_root_file(root, rel) : NULL;
	out->workspace = out->dir ? sb_path_join(out->dir, rec->disk ? SB_BOX_DISK "/workspace" : "workspace") : NULL;
	free(rel);
	if (!out->workspace) {
		sb_sandbox_info_clear(out);
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	out->rec = *rec;
	memset(rec, 0, sizeof(*rec));
	derive(out, now);
	return 0;
}

int sb_box_info(struct sb_sandbox_info *out, struct sb_box *b, struct sb_error *err)
{
	b->loaded = 0;
	return info_from(out, b->root, b->rec.name, &b->rec, sb_clock_now(), err);
}

/* An unreadable record still shows up: broken, with the cause as reason. */
static int broken_record(struct sb_record *rec, const char *name, const char *cause)
{
	memset(rec, 0, sizeof(*rec));
	snprintf(rec->name, sizeof(rec->name), "%.63s", name);
	rec->state = SB_STATE_BROKEN;
	rec->kind = SB_KIND_PERMANENT;
	rec->expiry_action = SB_EXPIRY_RM;
	rec->image_ref = strdup("");
	rec->owner = strdup("");
	rec->reason = strdup(cause);
	return rec->image_ref && rec->owner && rec->reason ? 0 : -1;
}

/* The backend of listed sandboxes, opened on the first running one. */
struct lister {
	const struct sb_backend_ops *be;
	void *be_state;
};

static void lister_close(struct lister *l)
{
	if (l->be)
		l->be->close(l->be_state);
}

/* A listed record that says running without a live runtime is settled under
 * its own lock (stopped, or removed when temporary and the host restarted),
 * so that no listing shows a dead sandbox as running. -1: drop it. */
static int settle_listed(struct sb_sandbox_info *info, struct sb_root *root, struct lister *l)
{
	struct sb_error e;
	struct sb_box b;

	if (!sb_sandbox_state_live(info->rec.state))
		return 0;
	if (!l->be && (sb_backend_find(&l->be, info->rec.backend, NULL) < 0 || l->be->open(&l->be_state, root, NULL) < 0)) {
		l->be = NULL;
		return 0;
	}
	if (sb_sandbox_gone(&info->rec, info->dir, l->be, l->be_state) == SB_ALIVE)
		return 0;
	int rc = sb_box_open(&b, root, info->rec.name, BOX_LOCK_EXCLUSIVE, 1, &e);
	if (rc == 0)
		rc = sb_box_settle_if_gone(&b, &e);
	if (rc == 0) {
		sb_record_clear(&info->rec);
		info->rec = b.rec;
		b.loaded = 0;
		memset(&b.rec, 0, sizeof(b.rec));
		derive(info, sb_clock_now());
	}
	sb_box_close(&b);
	return rc == SB_ERR_NOTFOUND ? -1 : 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct sb_sandbox_info *)a)->rec.name, ((const struct sb_sandbox_info *)b)->rec.name);
}

int sb_sandbox_list(struct sb_sandbox_info **out, size_t *count, struct sb_root *root, struct sb_error *err)
{
	char *dir = sb_root_file(root, "sandboxes");
	DIR *d = dir ? opendir(dir) : NULL;
	struct sb_sandbox_info *list = NULL;
	size_t n = 0, cap = 0;
	long long now = sb_clock_now();
	struct lister l = { 0 };
	struct dirent *de;
	int rc = 0;

	*out = NULL;
	*count = 0;
	if (!d) {
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot list sandboxes in '%s'"), dir ? dir : "");
		free(dir);
		return rc;
	}
	while ((de = readdir(d))) {
		struct sb_record rec;
		struct sb_error e2;
		if (sb_sandbox_name_check(de->d_name, NULL) < 0)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			struct sb_sandbox_info *grown = realloc(list, cap * sizeof(*list));
			if (!grown) {
				rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
				break;
			}
			list = grown;
		}
		int lrc = sb_record_load(&rec, root, de->d_name, &e2);
		/* a claim renames a pool member's directory, then writes its new
		 * record: until then it is still the pool's */
		if (lrc == 0 && sb_pool_member_name(rec.name)) {
			sb_record_clear(&rec);
			continue;
		}
		if (lrc < 0) {
			/* a directory without record is a create in progress or a crash: show it */
			if (broken_record(&rec, de->d_name, lrc == SB_ERR_NOTFOUND
					  ? _("no record: being created, or left half-made (rm --force removes it)")
					  : e2.msg) < 0) {
				sb_record_clear(&rec);
				rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
				break;
			}
		}
		if ((rc = info_from(&list[n], root, de->d_name, &rec, now, err)) < 0) {
			sb_record_clear(&rec);
			break;
		}
		if (settle_listed(&list[n], root, &l) < 0) {
			sb_sandbox_info_clear(&list[n]);
			continue;
		}
		n++;
	}
	lister_close(&l);
	closedir(d);
	free(dir);
	if (rc < 0) {
		sb_sandbox_list_free(list, n);
		return rc;
	}
	if (n)   /* qsort wants a non-NULL base even for no elements */
		qsort(list, n, sizeof(*list), by_name);
	*out = list;
	*count = n;
	return 0;
}

void sb_sandbox_list_free(struct sb_sandbox_info *list, size_t count)
{
	for (size_t i = 0; list && i < count; i++)
		sb_sandbox_info_clear(&list[i]);
	free(list);
}

void sb_sandbox_info_clear(struct sb_sandbox_info *info)
{
	if (!info)
		return;
	sb_record_clear(&info->rec);
	free(info->dir);
	free(info->workspace);
	memset(info, 0, sizeof(*info));
}

int sb_sandbox_inspect(struct sb_sandbox_info *out, struct sb_root *root, const char *name, struct sb_error *err)
{
	struct sb_record rec;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = sb_sandbox_name_check(name, err)) < 0 || (rc = sb_record_load(&rec, root, name, err)) < 0)
		return rc;
	rc = info_from(out, root, name, &rec, sb_clock_now(), err);
	sb_record_clear(&rec);
	struct lister l = { 0 };
	if (rc == 0 && settle_listed(out, root, &l) < 0) {
		sb_sandbox_info_clear(out);
		rc = sb_error_set(err, SB_ERR_NOTFOUND, _("no sandbox named '%s': it was temporary and the host restarted"),
				  name);
	}
	lister_close(&l);
	if (rc == 0 && out->rec.network)
		sb_network_address(out->address, root, name, NULL);
	return rc;
}

int sb_sandbox_touch(struct sb_root *root, const char *name, struct sb_error *err)
{
	struct sb_box b;
	int rc = sb_box_open(&b, root, name, BOX_LOCK_SHARED, 1, err);

	if (rc == 0)
		rc = sb_box_touch(&b, err);
	sb_box_close(&b);
	return rc;
}

int sb_sandbox_extend(struct sb_root *root, const char *name, long long seconds, struct sb_error *err)
{
	struct sb_box b;
	int rc = sb_box_open(&b, root, name, BOX_LOCK_EXCLUSIVE, 1, err);

	if (rc == 0 && b.rec.kind != SB_KIND_TEMPORARY)
		rc = sb_error_set(err, SB_ERR_STATE, _("sandbox '%s' is permanent: it never expires"), name);
	if (rc == 0 && seconds <= 0)
		rc = sb_error_set(err, SB_ERR_INVALID, _("cannot extend sandbox '%s' by %lld seconds"), name, seconds);
	if (rc == 0) {
		b.rec.idle_timeout += seconds;
		if ((rc = sb_record_save(root, &b.rec, err)) == 0)
			rc = sb_box_touch(&b, err);
	}
	sb_box_close(&b);
	return rc;
}

int sb_sandbox_stats(struct sb_sandbox_stats *out, struct sb_root *root, const char *name, struct sb_error *err)
{
	struct sb_box b;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = sb_box_open(&b, root, name, BOX_LOCK_NONE, 1, err)) < 0)
		goto out;
	if (b.rec.state != SB_STATE_RUNNING) {
		rc = sb_error_set(err, SB_ERR_STATE, _("sandbox '%s' is %s, not running"), name,
				  sb_sandbox_state_name(b.rec.state));
		goto out;
	}
	struct sb_backend_stats st;
	if ((rc = sb_box_backend(&b, err)) < 0)
		goto out;
	if (!(sb_backend_caps(b.be) & SB_BACKEND_CAP_LIVE_STATS)) {
		rc = sb_error_set(err, SB_ERR_PREREQ, _("the backend '%s' gives no live figures of a sandbox"), b.be->name);
		goto out;
	}
	if ((rc = b.be->stats(&st, b.be_state, sb_box_target(&b), err)) < 0)
		goto out;
	*out = (struct sb_sandbox_stats){
		.memory_usage = st.memory_usage, .memory_limit = st.memory_limit, .cpu_ns = st.cpu_ns, .pids = st.pids,
	};
out:
	sb_box_close(&b);
	return rc;
}
