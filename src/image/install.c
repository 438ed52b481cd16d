#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "image/blob_store.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "base/jsonfile.h"
#include "internal.h"
#include "image/manifest.h"
#include "image/store.h"
#include "base/log.h"

/* Unpacks happen in ROOT/images/rootfs/.tmp-<hex>-XXXXXX, flocked by the
 * installer while it works: a temp dir nobody holds belongs to a dead install. */
#define TEMP_PREFIX ".tmp-"

struct layer_progress {
	const struct sb_progress *outer;
	const char *digest;
	int layer, layers;
};

/* Adds "layer i of n" to the unpacker's events, naming the layer by digest. */
static void forward_progress(void *user, const struct sb_progress_event *ev)
{
	const struct layer_progress *lp = user;
	struct sb_progress_event e = *ev;

	e.item = lp->digest;
	e.layer = lp->layer;
	e.layers = lp->layers;
	sb_progress_emit(lp->outer, &e);
}

/* The manifest digest a temp dir name carries; -1 when the name is not one. */
static int temp_digest(char out[SB_DIGEST_STR_LEN], const char *name)
{
	if (strncmp(name, TEMP_PREFIX, strlen(TEMP_PREFIX)) != 0)
		return -1;
	name += strlen(TEMP_PREFIX);
	if (strlen(name) < SB_DIGEST_HEX_LEN || name[SB_DIGEST_HEX_LEN] != '-')
		return -1;
	snprintf(out, SB_DIGEST_STR_LEN, "sha256:%.*s", SB_DIGEST_HEX_LEN, name);
	return sb_digest_valid(out) ? 0 : -1;
}

int sb_image_temp_sweep(struct sb_root *root, json_t *live, size_t *removed, unsigned long long *bytes, int dry_run,
			struct sb_error *err)
{
	char *dir = sb_root_file(root, "images/rootfs");
	char digest[SB_DIGEST_STR_LEN];
	struct dirent *de;
	int rc = 0;
	DIR *d;

	if (!dir)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	d = opendir(dir);
	if (!d) {
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot list '%s'"), dir);
		free(dir);
		return rc;
	}
	while (rc == 0 && (de = readdir(d)) != NULL) {
		unsigned long long size = 0;
		int fd;
		if (temp_digest(digest, de->d_name) < 0)
			continue;
		fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
			/* an install in progress: its blobs must stay */
			if (live && json_object_set_new(live, digest, json_true()) < 0)
				rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
			close(fd);
			continue;
		}
		char *path = sb_path_join(dir, de->d_name);
		if (!path) {
			rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		} else {
			sb_fs_tree_size(&size, path, NULL);
			if (!dry_run) {
				rc = sb_fs_remove_tree(path, err);
				sb_log("image: removed leftover unpack directory %s", path);
			}
		}
		if (rc == 0 && removed)
			(*removed)++;
		if (rc == 0 && bytes)
			*bytes += size;
		free(path);
		close(fd);
	}
	closedir(d);
	free(dir);
	return rc;
}

/* What install needs from the manifest and config blobs. */
struct image_doc {
	struct sb_image_manifest manifest;
	struct sb_image_config config;
};

static void image_doc_clear(struct image_doc *doc)
{
	sb_image_manifest_clear(&doc->manifest);
	sb_image_config_clear(&doc->config);
}

static int read_blob_doc(char **out, size_t *len, struct sb_root *root, const char *digest, const char *kind,
			 struct sb_error *err)
{
	int rc = sb_blob_get(out, len, root, digest, SB_MANIFEST_MAX, err);

	if (rc < 0)
		sb_error_wrap(err, _("cannot read the %s %s"), kind, digest);
	return rc;
}

static int load_image_doc(struct image_doc *doc, struct sb_root *root, const char *digest, struct sb_error *err)
{
	char what[128], *text = NULL;
	size_t len;
	int rc;

	memset(doc, 0, sizeof(*doc));
	if ((rc = read_blob_doc(&text, &len, root, digest, _("manifest"), err)) < 0)
		return rc;
	snprintf(what, sizeof(what), _("manifest %s"), digest);
	rc = sb_image_manifest_parse(&doc->manifest, text, len, what, err);
	free(text);
	if (rc < 0)
		return rc;
	if (doc->manifest.is_index)
		return sb_error_set(err, SB_ERR_INVALID, _("%s is an index, not an image: install one of its manifests"),
				    digest);
	if ((rc = read_blob_doc(&text, &len, root, doc->manifest.config.digest, _("config"), err)) < 0)
		return rc;
	snprintf(what, sizeof(what), _("image config %s"), doc->manifest.config.digest);
	rc = sb_image_config_parse(&doc->config, text, len, what, err);
	free(text);
	if (rc < 0)
		return rc;
	if (doc->config.n_diff_ids != doc->manifest.n_layers)
		return sb_error_set(err, SB_ERR_FORMAT, _("image %s: %zu layers but %zu diff_ids in its config"), digest,
				    doc->manifest.n_layers, doc->config.n_diff_ids);
	if (strcmp(doc->config.os, "linux") != 0 || strcmp(doc->config.arch, sb_image_host_arch()) != 0)
		return sb_error_set(err, SB_ERR_INVALID, _("image %s is for %s/%s, this host runs linux/%s"), digest,
				    doc->config.os, doc->config.arch, sb_image_host_arch());
	return 0;
}

/* Marks the directory holding the image trees as the top of hierarchies for
 * the ext4 Orlov allocator (chattr +T), so that each new tree goes to a
 * lightly used block group rather than its parent's. ext4 without a journal
 * skips the inodes freed in the last 30-60 s one by one on every allocation,
 * and the parent's group is where the trees removed just before freed
 * theirs: unpacking there made file creation the bulk of a pull (Debian +
 * python3 image: 3.6 s instead of 1.0 s). A hint only: filesystems without
 * the flag refuse it and nothing changes. */
static void mark_topdir(int fd, const char *path)
{
	int flags;

	if (ioctl(fd, FS_IOC_GETFLAGS, &flags) < 0 || (flags & FS_TOPDIR_FL))
		return;
	flags |= FS_TOPDIR_FL;
	if (ioctl(fd, FS_IOC_SETFLAGS, &flags) < 0)
		sb_log("image: cannot mark %s as a top directory: %s", path, strerror(errno));
}

/* The trees hold the images' setuid files: no other user may reach them. */
static int prepare_parent(const char *parent, struct sb_error *err)
{
	int fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc = 0;

	if (fd < 0 || fchmod(fd, 0700) < 0)
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot restrict '%s'"), parent);
	else
		mark_topdir(fd, parent);
	if (fd >= 0)
		close(fd);
	return rc;
}

/* Unpacks every layer into a fresh temp dir; on success *tmp_out (path) and
 * *lock_fd (flocked dir) belong to the caller. */
static int unpack_all(char **tmp_out, int *lock_fd, struct sb_root *root, const char *digest,
		      const struct image_doc *doc, const struct sb_progress *progress, struct sb_error *err)
{
	char *tmp, *parent;
	struct layer_progress lp = { progress, NULL, 0, (int)doc->manifest.n_layers };
	struct sb_progress fwd = { forward_progress, &lp };
	int fd = -1, rc;

	for (size_t i = 0; i < doc->manifest.n_layers; i++)
		if (!sb_blob_exists(root, doc->manifest.layers[i].digest))
			return sb_error_set(err, SB_ERR_NOTFOUND, _("image %s: layer %s is not in the blob store"),
					    digest, doc->manifest.layers[i].digest);
	/* after the checks, whose early return would leak it */
	if (!(parent = sb_root_file(root, "images/rootfs")))
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	rc = prepare_parent(parent, err);
	free(parent);
	if (rc < 0)
		return rc;
	tmp = sb_strdupf("%s/images/rootfs/" TEMP_PREFIX "%s-XXXXXX", sb_root_path(root), sb_digest_hex(digest));
	if (!tmp)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	if (!mkdtemp(tmp)) {
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot create '%s'"), tmp);
		free(tmp);
		return rc;
	}
	fd = open(tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || flock(fd, LOCK_EX) < 0 || fchmod(fd, 0755) < 0)
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot prepare '%s'"), tmp);
	for (size_t i = 0; rc == 0 && i < doc->manifest.n_layers; i++) {
		const char *layer = doc->manifest.layers[i].digest;
		char *path = sb_blob_path(root, layer);
		lp.layer = (int)i + 1;
		lp.digest = layer;
		rc = path ? sb_unpack_layer(fd, path, NULL, &fwd, err) : sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		if (rc < 0)
			sb_error_wrap(err, _("cannot unpack layer %zu/%zu (%s) of image %s"), i + 1,
				      doc->manifest.n_layers, layer, digest);
		free(path);
	}
	/* the rename below publishes the tree: its contents must be on disk first */
	if (rc == 0 && syncfs(fd) < 0)
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot sync '%s'"), tmp);
	if (rc < 0) {
		struct sb_error ignored;
		if (sb_fs_remove_tree(tmp, &ignored) < 0)
			sb_log("image: cannot remove %s: %s", tmp, ignored.msg);
		if (fd >= 0)
			close(fd);
		free(tmp);
		return rc;
	}
	*tmp_out = tmp;
	*lock_fd = fd;
	return 0;
}

void sb_image_now_rfc3339(char *buf, size_t size)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	(void)strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm); /* callers give 32 bytes for 21 */
}

static json_t *image_meta(const struct image_doc *doc, const char *source, const char *parent,
			  unsigned long long size)
{
	json_t *layers = json_array();
	unsigned long long content = 0;
	char installed[32], platform[128];

	for (size_t i = 0; i < doc->manifest.n_layers; i++) {
		const struct sb_descriptor *l = &doc->manifest.layers[i];
		content += l->size;
		layers = sb_json_append(layers, json_pack("{s:s, s:s, s:I}", "digest", l->digest, "mediaType",
							  l->media_type, "size", (json_int_t)l->size));
	}
	sb_image_now_rfc3339(installed, sizeof(installed));
	snprintf(platform, sizeof(platform), "%s/%s%s%s", doc->config.os, doc->config.arch,
		 doc->config.variant ? "/" : "", doc->config.variant ? doc->config.variant : "");
	return json_pack("{s:s, s:s, s:s?, s:s, s:s?, s:s?, s:I, s:I, s:o}", "config", doc->manifest.config.digest,
			 "platform", platform, "created", doc->config.created, "installed", installed, "source",
			 source, "parent", parent, "size", (json_int_t)size, "content_size", (json_int_t)content,
			 "layers", layers);
}

/* What dead installs left is cleaned by the next one; failing to clean it
 * does not fail this install (prune retries). */
static void sweep_quietly(struct sb_root *root)
{
	struct sb_error err;

	if (sb_image_temp_sweep(root, NULL, NULL, NULL, 0, &err) < 0)
		sb_log("image: %s", err.msg);
}

/* Under the exclusive lock: publishes the unpacked tree (unless another
 * install got there first) and records the image and its reference. */
static int commit(struct sb_root *root, const char *ref_name, const char *digest, const struct image_doc *doc,
		  const char *tmp, const char *source, const char *base, struct sb_error *err)
{
	char *rootfs = sb_image_rootfs_path(root, digest), *parent = sb_root_file(root, "images/rootfs");
	unsigned long long size = 0;
	json_t *db = NULL, *images, *meta;
	int rc;

	if (!rootfs || !parent) {
		rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		goto out;
	}
	if (tmp && rename(tmp, rootfs) < 0) {
		if (errno != EEXIST && errno != ENOTEMPTY) {
			rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot rename '%s' to '%s'"), tmp, rootfs);
			goto out;
		}
		sb_fs_remove_tree(tmp, NULL); /* a concurrent install of the same image won */
	}
	if (tmp && (rc = sb_fs_fsync_dir(parent, err)) < 0)
		goto out;
	sweep_quietly(root);
	if ((rc = sb_image_db_load(&db, root, err)) < 0)
		goto out;
	images = sb_image_db_images(db);
	if (!json_object_get(images, digest)) {
		if ((rc = sb_fs_tree_size(&size, rootfs, err)) < 0)
			goto out;
		meta = image_meta(doc, source, base, size);
		if (!meta || json_object_set_new(images, digest, meta) < 0) {
			rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
			goto out;
		}
	}
	if (ref_name && json_object_set_new(sb_image_db_refs(db), ref_name, json_string(digest)) < 0) {
		rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		goto out;
	}
	rc = sb_image_db_save(root, db, err);
out:
	json_decref(db);
	free(rootfs);
	free(parent);
	return rc;
}

int sb_image_install_child(struct sb_root *root, const char *ref_name, const char *manifest_digest,
			   const char *source, const char *parent, const struct sb_progress *progress,
			   struct sb_error *err)
{
	char *rootfs = NULL, *tmp = NULL, canonical[SB_IMAGE_REF_MAX];
	struct image_doc doc;
	struct stat st;
	int rc, lock_fd = -1;

	if (!sb_digest_valid(manifest_digest))
		return sb_error_set(err, SB_ERR_INVALID, _("'%s' is not a manifest digest"), manifest_digest);
	if (ref_name && (rc = sb_image_canonical_ref(canonical, ref_name, err)) < 0)
		return rc;
	if ((rc = load_image_doc(&doc, root, manifest_digest, err)) < 0)
		goto out;
	rootfs = sb_image_rootfs_path(root, manifest_digest);
	if (!rootfs) {
		rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		goto out;
	}
	/* Shared while a temp dir is made and locked: the sweep (exclusive) must
	 * not take it for a dead one in between. */
	if ((rc = sb_root_lock(root, SB_LOCK_SHARED, err)) < 0)
		goto out;
	/* the fast path: an image is unpacked once, whatever points at it */
	if (lstat(rootfs, &st) < 0 || !S_ISDIR(st.st_mode))
		rc = unpack_all(&tmp, &lock_fd, root, manifest_digest, &doc, progress, err);
	if (rc == 0 && (rc = sb_root_lock(root, SB_LOCK_EXCLUSIVE, err)) == 0)
		rc = commit(root, ref_name ? canonical : NULL, manifest_digest, &doc, tmp, source, parent, err);
	sb_root_unlock(root);
	if (rc == 0)
		sb_progress_emit(progress, &(struct sb_progress_event){ .phase = SB_PROGRESS_DONE, .item = manifest_digest });
out:
	if (rc < 0 && tmp)
		sb_fs_remove_tree(tmp, NULL);
	if (lock_fd >= 0)
		close(lock_fd);
	free(tmp);
	free(rootfs);
	image_doc_clear(&doc);
	return rc;
}

int sb_image_install_from(struct sb_root *root, const char *ref_name, const char *manifest_digest,
			  const char *source, const struct sb_progress *progress, struct sb_error *err)
{
	return sb_image_install_child(root, ref_name, manifest_digest, source, NULL, progress, err);
}

int sb_image_install(struct sb_root *root, const char *ref_name, const char *manifest_digest,
		     const struct sb_progress *progress, struct sb_error *err)
{
	return sb_image_install_from(root, ref_name, manifest_digest, NULL, progress, err);
}
