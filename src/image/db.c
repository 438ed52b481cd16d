#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fs.h"
#include "base/generation.h"
#include "base/i18n.h"
#include "internal.h"
#include "base/jsonfile.h"

#define DB_FILE "images/refs.json"
#define DB_MAX (64u << 20)
#define RECORD_MAX (1u << 20)
/* Set in an index whose names of local images are under localhost/. */
#define LOCAL_NAMES "local_names"

/* Images made here were once recorded under Docker's default registry (a
 * name without one became "docker.io/..."): the bootstrapped default was
 * "docker.io/sandbench/default:latest". Their names move to localhost/ as the
 * index is loaded (a writer's next save keeps that): only names of images
 * whose recorded source is not a pull, and never onto a name that is taken.
 * Once: the index then says LOCAL_NAMES, and a docker.io name given since is
 * the user's. The images are pinned by digest, so sandboxes made from them
 * are unchanged. */
static int move_local_names(json_t *db)
{
	json_t *refs = sb_image_db_refs(db), *images = sb_image_db_images(db), *old, *v;
	const char *ref, *source;
	int rc;

	if (json_is_true(json_object_get(db, LOCAL_NAMES)))
		return 0;
	old = json_array();
	rc = old && json_object_set_new(db, LOCAL_NAMES, json_true()) == 0 ? 0 : SB_ERR_NOMEM;

	json_object_foreach(refs, ref, v) {
		source = json_string_value(json_object_get(json_object_get(images, json_string_value(v)), "source"));
		if (rc == 0 && source && strncmp(source, "pull ", 5) != 0 && !strncmp(ref, "docker.io/", 10) &&
		    json_array_append_new(old, json_string(ref)) < 0)
			rc = SB_ERR_NOMEM;
	}
	for (size_t i = 0; rc == 0 && i < json_array_size(old); i++) {
		const char *name = json_string_value(json_array_get(old, i)) + strlen("docker.io/");
		char *local = sb_strdupf("localhost/%s", name + (strncmp(name, "library/", 8) ? 0 : 8));
		v = json_object_get(refs, json_string_value(json_array_get(old, i)));
		if (!local || (!json_object_get(refs, local) && json_object_set(refs, local, v) < 0))
			rc = SB_ERR_NOMEM;
		else if (json_equal(json_object_get(refs, local), v))
			json_object_del(refs, json_string_value(json_array_get(old, i)));
		free(local);
	}
	json_decref(old);
	return rc;
}

int sb_image_db_load(json_t **out, struct sb_root *root, struct sb_error *err)
{
	char *path = sb_root_file(root, DB_FILE);
	json_t *db = NULL, *schema;
	int rc;

	*out = NULL;
	if (!path)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	rc = sb_json_load(&db, path, DB_MAX, err);
	if (rc == SB_ERR_NOTFOUND) {
		db = json_pack("{s:i, s:{}, s:{}, s:b}", "schema", 1, "refs", "images", LOCAL_NAMES, 1);
		rc = db ? 0 : sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	} else if (rc == 0) {
		schema = json_object_get(db, "schema");
		if (!json_is_integer(schema) || json_integer_value(schema) != 1 ||
		    !json_is_object(json_object_get(db, "refs")) || !json_is_object(json_object_get(db, "images")))
			rc = sb_error_set(err, SB_ERR_FORMAT, _("'%s' is not a schema 1 image index"), path);
		else if (move_local_names(db) < 0)
			rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	free(path);
	if (rc < 0) {
		json_decref(db);
		return rc;
	}
	*out = db;
	return 0;
}

int sb_image_db_save(struct sb_root *root, json_t *db, struct sb_error *err)
{
	char *path = sb_root_file(root, DB_FILE);
	int rc;

	if (!path)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	if ((rc = sb_json_save(path, db, err)) == 0)
		sb_generation_bump(root, SB_GEN_IMAGES, NULL);
	free(path);
	return rc;
}

json_t *sb_image_db_refs(json_t *db)
{
	return json_object_get(db, "refs");
}

json_t *sb_image_db_images(json_t *db)
{
	return json_object_get(db, "images");
}

static int cmp_json_strings(const void *a, const void *b)
{
	return strcmp(json_string_value(*(json_t *const *)a), json_string_value(*(json_t *const *)b));
}

/* Sorts an array of JSON strings in place. */
static void sort_strings(json_t *arr)
{
	size_t n = json_array_size(arr);
	json_t **items = n ? malloc(n * sizeof(json_t *)) : NULL;

	if (!items)
		return;
	for (size_t i = 0; i < n; i++)
		items[i] = json_incref(json_array_get(arr, i));
	qsort(items, n, sizeof(json_t *), cmp_json_strings);
	json_array_clear(arr);
	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr, items[i]);
	free(items);
}

json_t *sb_image_db_refs_of(json_t *db, const char *digest)
{
	json_t *arr = json_array(), *v;
	const char *ref;

	json_object_foreach(sb_image_db_refs(db), ref, v)
		if (json_is_string(v) && !strcmp(json_string_value(v), digest))
			arr = sb_json_append(arr, json_string(ref));
	sort_strings(arr);
	return arr;
}

char *sb_image_rootfs_path(const struct sb_root *root, const char *digest)
{
	return sb_strdupf("%s/images/rootfs/%s", sb_root_path(root), sb_digest_hex(digest));
}

static int copy_strings(char ***out, size_t *n, json_t *arr)
{
	size_t count = json_array_size(arr);

	*out = NULL;
	*n = 0;
	if (!count)
		return 0;
	*out = calloc(count, sizeof(**out));
	if (!*out)
		return -1;
	for (size_t i = 0; i < count; i++) {
		if (!((*out)[i] = strdup(json_string_value(json_array_get(arr, i)))))
			return -1;
		*n = i + 1;
	}
	return 0;
}

/* A copy of obj's string member key, NULL when absent; *lost set when it is
 * there but cannot be copied (an image's info never lacks a part unsaid). */
static char *dup_member(json_t *obj, const char *key, int *lost)
{
	const char *s = json_string_value(json_object_get(obj, key));
	char *copy = s ? strdup(s) : NULL;

	*lost |= s && !copy;
	return copy;
}

static int fill_layers(struct sb_image_info *out, json_t *layers)
{
	size_t n = json_array_size(layers);
	int lost = 0;

	if (!n)
		return 0;
	out->layers = calloc(n, sizeof(*out->layers));
	if (!out->layers)
		return -1;
	for (size_t i = 0; i < n; i++) {
		json_t *l = json_array_get(layers, i);
		const char *d = json_string_value(json_object_get(l, "digest"));
		snprintf(out->layers[i].digest, sizeof(out->layers[i].digest), "%s", d ? d : "");
		out->layers[i].media_type = dup_member(l, "mediaType", &lost);
		out->layers[i].size = (unsigned long long)json_integer_value(json_object_get(l, "size"));
		out->n_layers = i + 1;
	}
	return lost ? -1 : 0;
}

int sb_image_db_info(struct sb_image_info *out, struct sb_root *root, json_t *db, const char *digest,
		     const char *ref, json_t *users, struct sb_error *err)
{
	json_t *meta = json_object_get(sb_image_db_images(db), digest);
	json_t *refs = sb_image_db_refs_of(db, digest);
	const char *config = json_string_value(json_object_get(meta, "config"));
	int fail, lost = 0;

	memset(out, 0, sizeof(*out));
	if (!meta || !refs) {
		json_decref(refs);
		return meta ? sb_error_set(err, SB_ERR_NOMEM, _("out of memory"))
			    : sb_error_set(err, SB_ERR_NOTFOUND, _("no image %s"), digest);
	}
	if (!ref && json_array_size(refs))
		ref = json_string_value(json_array_get(refs, 0));
	snprintf(out->ref, sizeof(out->ref), "%s", ref ? ref : "");
	snprintf(out->digest, sizeof(out->digest), "%s", digest);
	snprintf(out->config_digest, sizeof(out->config_digest), "%s", config ? config : "");
	out->rootfs = sb_image_rootfs_path(root, digest);
	out->platform = dup_member(meta, "platform", &lost);
	out->created = dup_member(meta, "created", &lost);
	out->installed = dup_member(meta, "installed", &lost);
	out->source = dup_member(meta, "source", &lost);
	const char *parent = json_string_value(json_object_get(meta, "parent"));
	snprintf(out->parent, sizeof(out->parent), "%s", parent ? parent : "");
	out->size = (unsigned long long)json_integer_value(json_object_get(meta, "size"));
	out->content_size = (unsigned long long)json_integer_value(json_object_get(meta, "content_size"));
	fail = lost || !out->rootfs || fill_layers(out, json_object_get(meta, "layers")) < 0 ||
	       copy_strings(&out->refs, &out->n_refs, refs) < 0 ||
	       copy_strings(&out->used_by, &out->n_used_by, json_object_get(users, digest)) < 0;
	json_decref(refs);
	if (fail) {
		sb_image_info_clear(out);
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	return 0;
}

/* Adds name to users[digest] when the record names an image digest; a record
 * that cannot be read names none. SB_ERR_NOMEM when out of memory: a user left
 * out would let its image go. */
static int add_user(json_t *users, struct sb_root *root, const char *name)
{
	char *path = sb_root_record_file(root, name);
	json_t *rec = NULL, *list;
	const char *digest;
	int rc = path ? sb_json_load(&rec, path, RECORD_MAX, NULL) : SB_ERR_NOMEM;

	if (rc == 0) {
		digest = json_string_value(json_object_get(json_object_get(rec, "image"), "digest"));
		if (digest && sb_digest_valid(digest)) {
			list = json_object_get(users, digest);
			/* a failed set releases the new list: never append to it then */
			if ((!list && json_object_set_new(users, digest, list = json_array()) < 0) ||
			    json_array_append_new(list, json_string(name)) < 0)
				rc = SB_ERR_NOMEM;
		}
	}
	json_decref(rec);
	free(path);
	return rc == SB_ERR_NOMEM ? rc : 0;
}

int sb_image_db_users(json_t **out, struct sb_root *root, struct sb_error *err)
{
	char *dir = sb_root_file(root, "sandboxes");
	json_t *users = json_object(), *list;
	const char *digest;
	struct dirent *de;
	int rc = 0;
	DIR *d;

	*out = NULL;
	if (!dir || !users) {
		free(dir);
		json_decref(users);
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	d = opendir(dir);
	if (!d && errno != ENOENT) {
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot list '%s'"), dir);
		free(dir);
		json_decref(users);
		return rc;
	}
	while (rc == 0 && d && (de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			rc = add_user(users, root, de->d_name);
	if (d)
		closedir(d);
	free(dir);
	if (rc < 0) {
		json_decref(users);
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	json_object_foreach(users, digest, list)
		sort_strings(list);
	*out = users;
	return 0;
}
