#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fs.h"
#include "base/i18n.h"
#include "base/jsonfile.h"
#include "image/blob_store.h"
#include "image/manifest.h"
#include "internal.h"
#include "image/ref.h"
#include "image/store.h"

/* Shortest digest prefix accepted for an image (like docker's short ids). */
#define MIN_PREFIX 6

struct lookup {
	char digest[SB_DIGEST_STR_LEN];
	char ref[SB_IMAGE_REF_MAX];   /* the reference that matched, "" for a digest */
	int by_ref;                   /* matched a recorded reference (not just a digest) */
};

/* Moves a formatted reference (malloc'd, NULL when out of memory) into out. */
static int take_ref(char out[SB_IMAGE_REF_MAX], char *s, struct sb_error *err)
{
	int rc;

	if (!s)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	rc = strlen(s) < SB_IMAGE_REF_MAX ? 0 : sb_error_set(err, SB_ERR_INVALID, _("image reference '%s' is too long"), s);
	if (rc == 0)
		strcpy(out, s);
	free(s);
	return rc;
}

int sb_image_canonical_ref(char out[SB_IMAGE_REF_MAX], const char *name, struct sb_error *err)
{
	struct sb_image_ref ref;
	char *s;
	int rc;

	if ((rc = sb_image_ref_parse(&ref, name, err)) < 0)
		return rc;
	s = sb_image_ref_format(&ref);
	sb_image_ref_clear(&ref);
	return take_ref(out, s, err);
}

int sb_image_local_ref(char out[SB_IMAGE_REF_MAX], const char *name, struct sb_error *err)
{
	char *s;
	int rc;

	if ((rc = sb_image_ref_local(&s, name, err)) < 0)
		return rc;
	return take_ref(out, s, err);
}

static int find_prefix(struct lookup *out, json_t *images, const char *s, struct sb_error *err)
{
	size_t n = strlen(s), matches = 0;
	const char *digest;
	json_t *v;

	if (n < MIN_PREFIX || n > SB_DIGEST_HEX_LEN || strspn(s, "0123456789abcdef") != n)
		return SB_ERR_NOTFOUND;
	json_object_foreach(images, digest, v) {
		if (strncmp(sb_digest_hex(digest), s, n) != 0)
			continue;
		snprintf(out->digest, sizeof(out->digest), "%s", digest);
		matches++;
	}
	if (matches > 1)
		return sb_error_set(err, SB_ERR_INVALID, _("'%s' is the start of several image digests: give more of it"),
				    s);
	return matches ? 0 : SB_ERR_NOTFOUND;
}

/* The digest a reference names: a recorded reference, else the digest pinned in
 * it. 1 when found, 0 when not, negative on error. */
static int lookup_ref(struct lookup *out, json_t *db, const struct sb_image_ref *ref, struct sb_error *err)
{
	char *canonical = sb_image_ref_format(ref);
	const char *digest;

	if (!canonical)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	digest = json_string_value(json_object_get(sb_image_db_refs(db), canonical));
	out->by_ref = digest != NULL;
	if (!digest)
		digest = ref->digest;
	if (digest) {
		snprintf(out->ref, sizeof(out->ref), "%s", canonical);
		snprintf(out->digest, sizeof(out->digest), "%s", digest);
	}
	free(canonical);
	return digest != NULL;
}

/* A name without a registry may be one made here: "tools" finds
 * localhost/tools:latest when docker.io/library/tools:latest is not recorded.
 * 1 when found, else 0. */
static int lookup_local(struct lookup *out, json_t *db, const char *s)
{
	char name[SB_IMAGE_REF_MAX];
	const char *digest;

	if (strchr(s, '@') || sb_image_local_ref(name, s, NULL) < 0)
		return 0;
	digest = json_string_value(json_object_get(sb_image_db_refs(db), name));
	if (!digest)
		return 0;
	out->by_ref = 1;
	snprintf(out->ref, sizeof(out->ref), "%s", name);
	snprintf(out->digest, sizeof(out->digest), "%s", digest);
	return 1;
}

/* Finds what s names: a recorded reference, an installed digest (alone or
 * pinned in a reference), or a unique digest prefix. */
static int lookup(struct lookup *out, json_t *db, const char *s, struct sb_error *err)
{
	struct sb_image_ref ref;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (!strncmp(s, "sha256:", 7)) {
		if (!sb_digest_valid(s))
			return sb_error_set(err, SB_ERR_INVALID, _("'%s' is not a valid sha256 digest"), s);
		snprintf(out->digest, sizeof(out->digest), "%s", s);
		rc = 1;
	} else if (sb_image_ref_parse(&ref, s, NULL) == 0) {
		rc = lookup_ref(out, db, &ref, err);
		sb_image_ref_clear(&ref);
		if (rc == 0)
			rc = lookup_local(out, db, s);
	}
	if (rc < 0)
		return rc;
	if (rc == 0 && (rc = find_prefix(out, sb_image_db_images(db), s, err)) != SB_ERR_NOTFOUND)
		return rc;
	if (rc == SB_ERR_NOTFOUND || !json_object_get(sb_image_db_images(db), out->digest))
		return sb_error_set(err, SB_ERR_NOTFOUND, _("no image '%s' (pull or import it first)"), s);
	return 0;
}

static int resolve(struct sb_image_info *out, struct sb_root *root, const char *s, int with_users,
		   struct sb_error *err)
{
	json_t *db = NULL, *users = NULL;
	struct lookup found;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = sb_image_db_load(&db, root, err)) < 0)
		return rc;
	if ((rc = lookup(&found, db, s, err)) == 0 && (!with_users || (rc = sb_image_db_users(&users, root, err)) == 0))
		rc = sb_image_db_info(out, root, db, found.digest, found.ref[0] ? found.ref : NULL, users, err);
	json_decref(users);
	json_decref(db);
	return rc;
}

int sb_image_resolve(struct sb_image_info *out, struct sb_root *root, const char *ref_or_digest, struct sb_error *err)
{
	return resolve(out, root, ref_or_digest, 0, err);
}

int sb_image_read_exec_config(struct sb_image_info *out, struct sb_root *root, struct sb_error *err)
{
	char *text = NULL;
	size_t len;
	int rc = sb_blob_get(&text, &len, root, out->config_digest, SB_MANIFEST_MAX, err);
	json_t *doc = rc == 0 ? json_loadb(text, len, 0, NULL) : NULL;
	json_t *cfg = json_object_get(doc, "config");

	if (rc == 0 && json_is_object(cfg) && !(out->exec_config = sb_json_dumps(cfg, JSON_COMPACT | JSON_SORT_KEYS)))
		rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	json_decref(doc);
	free(text);
	return rc;
}

int sb_image_inspect(struct sb_image_info *out, struct sb_root *root, const char *ref_or_digest, struct sb_error *err)
{
	int rc = resolve(out, root, ref_or_digest, 1, err);

	if (rc == 0 && (rc = sb_image_read_exec_config(out, root, err)) < 0)
		sb_image_info_clear(out);
	return rc;
}

static void free_strings(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void sb_image_info_clear(struct sb_image_info *info)
{
	if (!info)
		return;
	free(info->rootfs);
	free(info->platform);
	free(info->created);
	free(info->installed);
	free(info->source);
	free(info->exec_config);
	for (size_t i = 0; i < info->n_layers; i++)
		free(info->layers[i].media_type);
	free(info->layers);
	free_strings(info->refs, info->n_refs);
	free_strings(info->used_by, info->n_used_by);
	memset(info, 0, sizeof(*info));
}

/* By reference; images without one last, by digest. */
static int cmp_info(const void *a, const void *b)
{
	const struct sb_image_info *x = a, *y = b;

	if (!x->ref[0] != !y->ref[0])
		return x->ref[0] ? -1 : 1;
	if (x->ref[0])
		return strcmp(x->ref, y->ref);
	return strcmp(x->digest, y->digest);
}

int sb_image_list(struct sb_image_info **out, size_t *count, struct sb_root *root, struct sb_error *err)
{
	json_t *db = NULL, *users = NULL, *images, *refs, *v;
	struct sb_image_info *list = NULL;
	const char *key;
	size_t n = 0;
	int rc;

	*out = NULL;
	*count = 0;
	if ((rc = sb_image_db_load(&db, root, err)) < 0 || (rc = sb_image_db_users(&users, root, err)) < 0)
		goto out;
	images = sb_image_db_images(db);
	refs = sb_image_db_refs(db);
	list = calloc(json_object_size(images) + json_object_size(refs) + 1, sizeof(*list));
	if (!list) {
		rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		goto out;
	}
	/* a row per reference (of an installed image), then the images without one */
	json_object_foreach(refs, key, v) {
		if (!json_object_get(images, json_string_value(v)))
			continue;
		if ((rc = sb_image_db_info(&list[n], root, db, json_string_value(v), key, users, err)) < 0)
			goto out;
		n++;
	}
	json_object_foreach(images, key, v) {
		json_t *own = sb_image_db_refs_of(db, key);
		size_t tagged = json_array_size(own);
		json_decref(own);
		if (!own) {
			/* not "untagged": the image would be listed twice */
			rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
			goto out;
		}
		if (tagged)
			continue;
		if ((rc = sb_image_db_info(&list[n], root, db, key, NULL, users, err)) < 0)
			goto out;
		n++;
	}
	qsort(list, n, sizeof(*list), cmp_info);
	*out = list;
	*count = n;
	list = NULL;
out:
	sb_image_list_free(list, n);
	json_decref(users);
	json_decref(db);
	return rc;
}

void sb_image_list_free(struct sb_image_info *list, size_t count)
{
	for (size_t i = 0; list && i < count; i++)
		sb_image_info_clear(&list[i]);
	free(list);
}

static char *join_names(json_t *names)
{
	size_t len = 1;
	char *s;

	for (size_t i = 0; i < json_array_size(names); i++)
		len += strlen(json_string_value(json_array_get(names, i))) + 2;
	s = calloc(1, len);
	for (size_t i = 0; s && i < json_array_size(names); i++) {
		if (i)
			strcat(s, ", ");
		strcat(s, json_string_value(json_array_get(names, i)));
	}
	return s;
}

/* Drops the image's entry (saved first: a crash then leaves a rootfs without
 * an entry, which prune removes) and its rootfs. */
static int drop_image(struct sb_root *root, json_t *db, const char *digest, struct sb_error *err)
{
	char *rootfs = sb_image_rootfs_path(root, digest);
	int rc;

	if (!rootfs)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	json_object_del(sb_image_db_images(db), digest);
	if ((rc = sb_image_db_save(root, db, err)) == 0 && (rc = sb_fs_remove_tree(rootfs, err)) < 0)
		sb_error_wrap(err, _("image %s is removed but its files are not (prune retries)"), digest);
	free(rootfs);
	return rc;
}

static int remove_locked(struct sb_image_removal *out, struct sb_root *root, json_t *db, const char *s, int force,
			 struct sb_error *err)
{
	json_t *refs = sb_image_db_refs(db), *users = NULL, *left, *names;
	struct lookup found;
	char *list;
	int rc;

	if ((rc = lookup(&found, db, s, err)) < 0)
		return rc;
	snprintf(out->digest, sizeof(out->digest), "%s", found.digest);
	if (found.by_ref) {
		json_object_del(refs, found.ref);
	} else {
		/* a digest names the image: all its references go with it */
		json_t *all = sb_image_db_refs_of(db, found.digest);
		for (size_t i = 0; i < json_array_size(all); i++)
			json_object_del(refs, json_string_value(json_array_get(all, i)));
		json_decref(all);
	}
	left = sb_image_db_refs_of(db, found.digest);
	rc = left ? 0 : sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	if (rc == 0 && json_array_size(left) > 0) {
		rc = sb_image_db_save(root, db, err);
		goto out;
	}
	if (rc < 0 || (rc = sb_image_db_users(&users, root, err)) < 0)
		goto out;
	names = json_object_get(users, found.digest);
	if (json_array_size(names) > 0 && !force) {
		list = join_names(names);
		rc = sb_error_set(err, SB_ERR_BUSY,
				  _("image '%s' is used by sandbox(es) %s: remove them first, or use --force (which breaks them)"),
				  s, list ? list : "?");
		free(list);
		goto out;
	}
	for (size_t i = 0; i < json_array_size(names); i++) {
		char **grown = realloc(out->broken, (out->n_broken + 1) * sizeof(*grown));
		if (!grown) {
			rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
			goto out;
		}
		out->broken = grown;
		if (!(out->broken[out->n_broken] = strdup(json_string_value(json_array_get(names, i))))) {
			rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
			goto out;
		}
		out->n_broken++;
	}
	if ((rc = drop_image(root, db, found.digest, err)) == 0)
		out->removed_image = 1;
out:
	json_decref(left);
	json_decref(users);
	return rc;
}

int sb_image_remove(struct sb_image_removal *out, struct sb_root *root, const char *ref_or_digest, int force,
		    struct sb_error *err)
{
	json_t *db = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = sb_root_lock(root, SB_LOCK_EXCLUSIVE, err)) < 0)
		return rc;
	if ((rc = sb_image_db_load(&db, root, err)) == 0)
		rc = remove_locked(out, root, db, ref_or_digest, force, err);
	sb_root_unlock(root);
	json_decref(db);
	if (rc < 0)
		sb_image_removal_clear(out);
	return rc;
}

void sb_image_removal_clear(struct sb_image_removal *r)
{
	if (!r)
		return;
	free_strings(r->broken, r->n_broken);
	memset(r, 0, sizeof(*r));
}
