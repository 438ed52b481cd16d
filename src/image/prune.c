#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image/blob_store.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "internal.h"
#include "image/manifest.h"
#include "image/store.h"
#include "base/log.h"

/* A blob the sweep must spare; out of memory is an error, or it would go. */
static int keep(json_t *set, const char *digest, struct sb_error *err)
{
	if (digest && json_object_set_new(set, digest, json_true()) < 0)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	return 0;
}

/* Blobs of an install in progress: its manifest, config and layers (those of
 * a manifest not stored yet, or not a manifest, are not there to keep). */
static int keep_manifest(json_t *set, struct sb_root *root, const char *digest, struct sb_error *err)
{
	struct sb_image_manifest m;
	size_t len;
	char *text;
	int rc;

	if ((rc = keep(set, digest, err)) < 0)
		return rc;
	if ((rc = sb_blob_get(&text, &len, root, digest, SB_MANIFEST_MAX, NULL)) < 0)
		return rc == SB_ERR_NOMEM ? sb_error_set(err, rc, _("out of memory")) : 0;
	rc = sb_image_manifest_parse(&m, text, len, digest, NULL);
	free(text);
	if (rc < 0)
		return rc == SB_ERR_NOMEM ? sb_error_set(err, rc, _("out of memory")) : 0;
	rc = keep(set, m.config.digest, err);
	for (size_t i = 0; rc == 0 && i < m.n_layers; i++)
		rc = keep(set, m.layers[i].digest, err);
	sb_image_manifest_clear(&m);
	return rc;
}

/* Images with no reference and no sandbox: dropped from the index (saved by the caller). */
static int drop_dangling(struct sb_image_prune_report *rep, json_t *db, json_t *users, struct sb_error *err)
{
	json_t *images = sb_image_db_images(db), *v, *refs;
	const char *digest;
	void *tmp;

	json_object_foreach_safe(images, tmp, digest, v) {
		if (!(refs = sb_image_db_refs_of(db, digest)))
			return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		if (json_array_size(refs) == 0 && json_array_size(json_object_get(users, digest)) == 0) {
			sb_log("image: pruning unreferenced image %s", digest);
			json_object_del(images, digest);
			rep->images++;
		}
		json_decref(refs);
	}
	return 0;
}

int sb_image_dir_each(struct sb_root *root, const char *rel,
		      int (*fn)(void *arg, const char *name, const char *path, struct sb_error *err), void *arg,
		      struct sb_error *err)
{
	char *dir = sb_root_file(root, rel);
	struct dirent *de;
	int rc = 0;
	DIR *d;

	if (!dir)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	if (!(d = opendir(dir))) {
		rc = errno == ENOENT ? 0 : sb_error_errno(err, SB_ERR_IO, errno, _("cannot list '%s'"), dir);
		free(dir);
		return rc;
	}
	while (rc == 0 && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		char *path = sb_path_join(dir, de->d_name);
		rc = path ? fn(arg, de->d_name, path, err) : sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		free(path);
	}
	closedir(d);
	free(dir);
	return rc;
}

struct sweep {
	size_t *count;
	unsigned long long *bytes;
	json_t *set;
	int dry_run;             /* count, remove nothing */
};

static int sweep_one(void *arg, const char *name, const char *path, struct sb_error *err)
{
	struct sweep *s = arg;
	char digest[sizeof("sha256:") + 256];
	unsigned long long size = 0;
	struct stat st;
	int rc = 0;

	snprintf(digest, sizeof(digest), "sha256:%s", name);
	if (s->set && json_object_get(s->set, digest))
		return 0;
	if (lstat(path, &st) == 0 && !S_ISDIR(st.st_mode))
		size = (unsigned long long)st.st_size;
	else
		sb_fs_tree_size(&size, path, NULL);
	if (s->dry_run || (rc = sb_fs_remove_tree(path, err)) == 0) {
		if (!s->dry_run)
			sb_log("image: pruned %s", path);
		(*s->count)++;
		*s->bytes += size;
	}
	return rc;
}

/* Removes every entry of ROOT/rel whose "sha256:<name>" is not in set (all of
 * them when set is NULL); dot entries are skipped. */
static int sweep_dir(size_t *count, unsigned long long *bytes, struct sb_root *root, const char *rel, json_t *set,
		     int dry_run, struct sb_error *err)
{
	struct sweep s = { count, bytes, set, dry_run };

	return sb_image_dir_each(root, rel, sweep_one, &s, err);
}

/* A dry run makes the same walk, counting instead of removing (the index is
 * only changed in memory, so the blobs of the images it would drop count too). */
static int prune_locked(struct sb_image_prune_report *rep, struct sb_root *root, json_t *db, unsigned flags,
			struct sb_error *err)
{
	int dry_run = (flags & SB_IMAGE_PRUNE_DRY_RUN) != 0;
	json_t *users = NULL, *live = json_object(), *blobs = json_object(), *v, *layers;
	const char *digest;
	int rc;

	if (!live || !blobs) {
		rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		goto out;
	}
	if ((rc = sb_image_db_users(&users, root, err)) < 0 ||
	    (rc = sb_image_cache_sweep(users, &rep->cache_entries, root, sb_image_db_images(db),
					  (flags & SB_IMAGE_PRUNE_BUILD_CACHE) != 0, dry_run, err)) < 0)
		goto out;
	if ((rc = drop_dangling(rep, db, users, err)) < 0)
		goto out;
	if (rep->images && !dry_run && (rc = sb_image_db_save(root, db, err)) < 0)
		goto out;
	if ((rc = sb_image_temp_sweep(root, live, &rep->rootfs, &rep->bytes, dry_run, err)) < 0)
		goto out;
	json_object_foreach(live, digest, v)
		if ((rc = keep_manifest(blobs, root, digest, err)) < 0)
			goto out;
	json_object_foreach(sb_image_db_images(db), digest, v) {
		layers = json_object_get(v, "layers");
		if ((rc = keep(blobs, digest, err)) < 0 ||
		    (rc = keep(blobs, json_string_value(json_object_get(v, "config")), err)) < 0)
			goto out;
		for (size_t i = 0; i < json_array_size(layers); i++)
			if ((rc = keep(blobs, json_string_value(json_object_get(json_array_get(layers, i), "digest")), err)) < 0)
				goto out;
	}
	if ((rc = sweep_dir(&rep->rootfs, &rep->bytes, root, "images/rootfs", sb_image_db_images(db), dry_run, err)) < 0 ||
	    (rc = sweep_dir(&rep->blobs, &rep->bytes, root, "images/blobs/sha256", blobs, dry_run, err)) < 0 ||
	    (rc = sweep_dir(&rep->partial, &rep->bytes, root, "images/blobs/partial", NULL, dry_run, err)) < 0)
		goto out;
out:
	json_decref(users);
	json_decref(live);
	json_decref(blobs);
	return rc;
}

int sb_image_prune(struct sb_image_prune_report *out, struct sb_root *root, unsigned flags, struct sb_error *err)
{
	json_t *db = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = sb_root_lock(root, SB_LOCK_EXCLUSIVE, err)) < 0)
		return rc;
	if ((rc = sb_image_db_load(&db, root, err)) == 0)
		rc = prune_locked(out, root, db, flags, err);
	sb_root_unlock(root);
	json_decref(db);
	return rc;
}
