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

static void keep(json_t *set, const char *digest)
{
	if (digest)
		json_object_set_new(set, digest, json_true());
}

/* Blobs of an install in progress: its manifest, config and layers. */
static void keep_manifest(json_t *set, struct sb_root *root, const char *digest)
{
	struct sb_image_manifest m;
	size_t len;
	char *text;

	keep(set, digest);
	if (sb_blob_get(&text, &len, root, digest, SB_MANIFEST_MAX, NULL) < 0)
		return;
	if (sb_image_manifest_parse(&m, text, len, digest, NULL) == 0) {
		keep(set, m.config.digest);
		for (size_t i = 0; i < m.n_layers; i++)
			keep(set, m.layers[i].digest);
		sb_image_manifest_clear(&m);
	}
	free(text);
}

/* Images with no reference and no sandbox: dropped from the index (saved by the caller). */
static void drop_dangling(struct sb_image_prune_report *rep, json_t *db, json_t *users)
{
	json_t *images = sb_image_db_images(db), *v, *refs;
	const char *digest;
	void *tmp;

	json_object_foreach_safe(images, tmp, digest, v) {
		refs = sb_image_db_refs_of(db, digest);
		if (json_array_size(refs) == 0 && json_array_size(json_object_get(users, digest)) == 0) {
			sb_log("image: pruning unreferenced image %s", digest);
			json_object_del(images, digest);
			rep->images++;
		}
		json_decref(refs);
	}
}

/* Removes every entry of ROOT/rel whose "sha256:<name>" is not in set (all of
 * them when set is NULL); dot entries are skipped. */
static int sweep_dir(size_t *count, unsigned long long *bytes, struct sb_root *root, const char *rel, json_t *set,
		     struct sb_error *err)
{
	char *dir = sb_root_file(root, rel), digest[sizeof("sha256:") + 256];
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
		unsigned long long size = 0;
		struct stat st;
		char *path;
		if (de->d_name[0] == '.')
			continue;
		snprintf(digest, sizeof(digest), "sha256:%s", de->d_name);
		if (set && json_object_get(set, digest))
			continue;
		if (!(path = sb_path_join(dir, de->d_name))) {
			rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
			break;
		}
		if (lstat(path, &st) == 0 && !S_ISDIR(st.st_mode))
			size = (unsigned long long)st.st_size;
		else
			sb_fs_tree_size(&size, path, NULL);
		if ((rc = sb_fs_remove_tree(path, err)) == 0) {
			sb_log("image: pruned %s", path);
			(*count)++;
			*bytes += size;
		}
		free(path);
	}
	closedir(d);
	free(dir);
	return rc;
}

static int prune_locked(struct sb_image_prune_report *rep, struct sb_root *root, json_t *db, struct sb_error *err)
{
	json_t *users = NULL, *live = json_object(), *blobs = json_object(), *v, *layers;
	const char *digest;
	int rc;

	if (!live || !blobs) {
		rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		goto out;
	}
	if ((rc = sb_image_db_users(&users, root, err)) < 0)
		goto out;
	drop_dangling(rep, db, users);
	if (rep->images && (rc = sb_image_db_save(root, db, err)) < 0)
		goto out;
	if ((rc = sb_image_temp_sweep(root, live, &rep->rootfs, &rep->bytes, err)) < 0)
		goto out;
	json_object_foreach(live, digest, v)
		keep_manifest(blobs, root, digest);
	json_object_foreach(sb_image_db_images(db), digest, v) {
		keep(blobs, digest);
		keep(blobs, json_string_value(json_object_get(v, "config")));
		layers = json_object_get(v, "layers");
		for (size_t i = 0; i < json_array_size(layers); i++)
			keep(blobs, json_string_value(json_object_get(json_array_get(layers, i), "digest")));
	}
	if ((rc = sweep_dir(&rep->rootfs, &rep->bytes, root, "images/rootfs", sb_image_db_images(db), err)) < 0 ||
	    (rc = sweep_dir(&rep->blobs, &rep->bytes, root, "images/blobs/sha256", blobs, err)) < 0 ||
	    (rc = sweep_dir(&rep->partial, &rep->bytes, root, "images/blobs/partial", NULL, err)) < 0)
		goto out;
out:
	json_decref(users);
	json_decref(live);
	json_decref(blobs);
	return rc;
}

int sb_image_prune(struct sb_image_prune_report *out, struct sb_root *root, struct sb_error *err)
{
	json_t *db = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = sb_root_lock(root, SB_LOCK_EXCLUSIVE, err)) < 0)
		return rc;
	if ((rc = sb_image_db_load(&db, root, err)) == 0)
		rc = prune_locked(out, root, db, err);
	sb_root_unlock(root);
	json_decref(db);
	return rc;
}
