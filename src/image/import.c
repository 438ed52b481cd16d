#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <jansson.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "image/blob_store.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "base/jsonfile.h"
#include "image/import.h"
#include "image/manifest.h"
#include "image/ref.h"
#include "internal.h"

#define DEFAULT_PATH "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* Layer media types by the compression found in the first bytes. */
static const struct {
	const unsigned char magic[4];
	size_t len;
	const char *media_type;
} compressions[] = {
	{ { 0x1f, 0x8b }, 2, SB_MEDIA_OCI_LAYER_GZIP },
	{ { 0x28, 0xb5, 0x2f, 0xfd }, 4, SB_MEDIA_OCI_LAYER_ZSTD },
};

struct import {
	struct sb_root *root;
	const char *path;
	const struct sb_image_import_opts *opts;
	struct sb_image_source *src;
	char name[SB_IMAGE_REF_MAX];         /* reference found in the input, "" when none */
};

static int same_ref(const char *a, const char *b)
{
	char ca[SB_IMAGE_REF_MAX], cb[SB_IMAGE_REF_MAX];

	return !strcmp(a, b) || (sb_image_canonical_ref(ca, a, NULL) == 0 && sb_image_canonical_ref(cb, b, NULL) == 0 && !strcmp(ca, cb));
}

static const char *layer_media_type(struct sb_root *root, const char *digest)
{
	char *path = sb_blob_path(root, digest);
	unsigned char head[4] = { 0 };
	int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	ssize_t n = fd >= 0 ? read(fd, head, sizeof(head)) : -1;

	if (fd >= 0)
		close(fd);
	free(path);
	for (size_t i = 0; n > 0 && i < sizeof(compressions) / sizeof(compressions[0]); i++)
		if ((size_t)n >= compressions[i].len && !memcmp(head, compressions[i].magic, compressions[i].len))
			return compressions[i].media_type;
	return SB_MEDIA_OCI_LAYER;
}

/* sha256 of the uncompressed layer (the config's diff_id). */
static int diff_id(char out[SB_DIGEST_STR_LEN], struct sb_root *root, const char *digest, struct sb_error *err)
{
	char *path = sb_blob_path(root, digest), *buf = malloc(1 << 16);
	struct archive *a = archive_read_new();
	struct sb_sha256 *h = NULL;
	struct archive_entry *e;
	la_ssize_t n = 0;
	int rc = sb_sha256_new(&h, err);

	if (rc < 0)
		goto out;
	if (!path || !buf || !a) {
		rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		goto out;
	}
	archive_read_support_filter_all(a);
	archive_read_support_format_raw(a);
	if (archive_read_open_filename(a, path, 1 << 16) != ARCHIVE_OK || archive_read_next_header(a, &e) != ARCHIVE_OK) {
		rc = sb_error_set(err, SB_ERR_FORMAT, _("cannot decompress layer %s: %s"), digest, archive_error_string(a));
		goto out;
	}
	while ((n = archive_read_data(a, buf, 1 << 16)) > 0)
		sb_sha256_update(h, buf, (size_t)n);
	if (n < 0)
		rc = sb_error_set(err, SB_ERR_FORMAT, _("cannot decompress layer %s: %s"), digest, archive_error_string(a));
	else
		sb_sha256_final(out, h);
out:
	sb_sha256_free(h);
	archive_read_free(a);
	free(buf);
	free(path);
	return rc;
}

static int put_json(char digest[SB_DIGEST_STR_LEN], unsigned long long *size, struct sb_root *root, json_t *doc,
		    struct sb_error *err)
{
	/* compact and sorted: the same input always gives the same digest */
	char *text = doc ? sb_json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	int rc;

	json_decref(doc);
	if (!text)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	*size = strlen(text);
	rc = sb_blob_put(digest, root, text, *size, err);
	free(text);
	return rc;
}

/* Writes an OCI manifest for a config and layers already in the store. */
static int put_manifest(char digest[SB_DIGEST_STR_LEN], struct sb_root *root, const char *config,
			unsigned long long config_size, json_t *layers, struct sb_error *err)
{
	unsigned long long size;

	return put_json(digest, &size, root,
			json_pack("{s:i, s:s, s:{s:s, s:s, s:I}, s:o}", "schemaVersion", 2, "mediaType",
				  SB_MEDIA_OCI_MANIFEST, "config", "mediaType", SB_MEDIA_OCI_CONFIG, "digest", config,
				  "size", (json_int_t)config_size, "layers", layers),
			err);
}

static json_t *layer_descriptor(struct sb_root *root, const char *digest, unsigned long long size)
{
	return json_pack("{s:s, s:s, s:I}", "mediaType", layer_media_type(root, digest), "digest", digest, "size",
			 (json_int_t)size);
}

static int import_rootfs(char digest[SB_DIGEST_STR_LEN], struct import *im, struct sb_error *err)
{
	char layer[SB_DIGEST_STR_LEN], diff[SB_DIGEST_STR_LEN], config[SB_DIGEST_STR_LEN];
	unsigned long long layer_size, config_size;
	int rc;

	if (!im->opts->name)
		return sb_error_set(err, SB_ERR_INVALID, _("'%s' is a plain rootfs tar: give the image a name with --name"),
				    im->path);
	if ((rc = sb_image_store_file(layer, &layer_size, im->root, im->path, NULL, im->opts->progress, err)) < 0)
		return rc;
	if (strcmp(layer_media_type(im->root, layer), SB_MEDIA_OCI_LAYER) == 0)
		memcpy(diff, layer, sizeof(diff));
	else if ((rc = diff_id(diff, im->root, layer, err)) < 0)
		return rc;
	if ((rc = put_json(config, &config_size, im->root,
			   json_pack("{s:s, s:s, s:{s:[s], s:[s]}, s:{s:s, s:[s]}}", "architecture",
				     sb_image_host_arch(), "os", "linux", "config", "Env", DEFAULT_PATH, "Cmd", "/bin/sh",
				     "rootfs", "type", "layers", "diff_ids", diff),
			   err)) < 0)
		return rc;
	return put_manifest(digest, im->root, config, config_size,
			    json_pack("[o]", layer_descriptor(im->root, layer, layer_size)), err);
}

/* Stores the blob a descriptor names, checking its size too. */
static int store_descriptor(struct import *im, const struct sb_descriptor *d, struct sb_error *err)
{
	char name[32 + SB_DIGEST_HEX_LEN];
	unsigned long long size;
	int rc;

	snprintf(name, sizeof(name), "blobs/sha256/%s", sb_digest_hex(d->digest));
	if ((rc = sb_image_source_blob(NULL, &size, im->src, name, d->digest, err)) < 0)
		return rc;
	if (size != d->size)
		return sb_error_set(err, SB_ERR_DIGEST, _("blob %s in '%s' has %llu bytes, its descriptor says %llu"),
				    d->digest, im->path, size, d->size);
	return 0;
}

static int load_manifest(struct sb_image_manifest *m, struct sb_root *root, const char *digest, struct sb_error *err)
{
	char what[128], *text;
	size_t len;
	int rc;

	if ((rc = sb_blob_get(&text, &len, root, digest, SB_MANIFEST_MAX, err)) < 0)
		return rc;
	snprintf(what, sizeof(what), _("manifest %s"), digest);
	rc = sb_image_manifest_parse(m, text, len, what, err);
	free(text);
	return rc;
}

/* Stores an image manifest (or an index, resolved to the host platform) and
 * everything it names; digest receives the image manifest's. */
static int store_image(char digest[SB_DIGEST_STR_LEN], struct import *im, const struct sb_descriptor *d,
		       struct sb_error *err)
{
	struct sb_image_manifest m;
	const struct sb_descriptor *pick;
	int rc;

	if ((rc = store_descriptor(im, d, err)) < 0 || (rc = load_manifest(&m, im->root, d->digest, err)) < 0)
		return rc;
	if (m.is_index) {
		rc = sb_image_index_select(&pick, &m, NULL, NULL, err);
		if (rc == 0)
			rc = store_image(digest, im, pick, err);
		sb_image_manifest_clear(&m);
		return rc;
	}
	rc = store_descriptor(im, &m.config, err);
	for (size_t i = 0; rc == 0 && i < m.n_layers; i++)
		rc = store_descriptor(im, &m.layers[i], err);
	if (rc == 0)
		memcpy(digest, d->digest, SB_DIGEST_STR_LEN);
	sb_image_manifest_clear(&m);
	return rc;
}

/* The name an index entry carries: a full reference, or a bare tag. */
static const char *entry_name(json_t *entry)
{
	json_t *ann = json_object_get(entry, "annotations");
	const char *full = json_string_value(json_object_get(ann, "io.containerd.image.name"));

	return full ? full : json_string_value(json_object_get(ann, "org.opencontainers.image.ref.name"));
}

/* A bare tag ("latest") goes after the input's base name ("busybox.oci.tar" ->
 * "busybox:latest"); a full reference stays. */
static void name_from_entry(struct import *im, const char *name)
{
	char *copy = strdup(im->path), *base, *dot;

	if (name && (strchr(name, ':') || strchr(name, '/'))) {
		snprintf(im->name, sizeof(im->name), "%s", name);
	} else if (name && copy) {
		base = basename(copy);
		if ((dot = strchr(base, '.')) != NULL)
			*dot = '\0';
		snprintf(im->name, sizeof(im->name), "%s:%s", base, name);
	}
	free(copy);
}

static int choose_entry(size_t *out, const char *path, const char *what, const char *const *names, size_t n,
			const char *wanted, struct sb_error *err)
{
	char list[512] = "";
	size_t used = 0;

	if (n == 1) {
		*out = 0;
		return 0;
	}
	for (size_t i = 0; wanted && i < n; i++) {
		if (names[i] && same_ref(names[i], wanted)) {
			*out = i;
			return 0;
		}
	}
	for (size_t i = 0; i < n && used < sizeof(list); i++)
		used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s", i ? ", " : "",
					 names[i] ? names[i] : _("(unnamed)"));
	if (n == 0)
		return sb_error_set(err, SB_ERR_FORMAT, _("%s of '%s' lists no image"), what, path);
	return sb_error_set(err, SB_ERR_INVALID, _("'%s' holds %zu images (%s): choose one with --name"), path, n, list);
}

/* RepoTags[0] of the only manifest.json entry, if any (new docker save names). */
static const char *docker_tag(json_t *manifest_json)
{
	json_t *tags = json_object_get(json_array_get(manifest_json, 0), "RepoTags");

	return json_array_size(manifest_json) == 1 ? json_string_value(json_array_get(tags, 0)) : NULL;
}

/* A small JSON file of the input, as text (*text may be NULL) and parsed. */
static int load_json_file(json_t **out, char **text_out, size_t *len_out, struct import *im, const char *name,
			  struct sb_error *err)
{
	json_error_t jerr;
	size_t len;
	char *text;
	int rc;

	*out = NULL;
	if ((rc = sb_image_source_read(&text, &len, im->src, name, err)) < 0)
		return rc;
	*out = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!*out) {
		free(text);
		return sb_error_set(err, SB_ERR_FORMAT, _("%s in '%s' is not valid JSON: %s (line %d)"), name,
				    im->path, jerr.text, jerr.line);
	}
	if (text_out) {
		*text_out = text;
		*len_out = len;
	} else {
		free(text);
	}
	return 0;
}

static int import_oci(char digest[SB_DIGEST_STR_LEN], struct import *im, struct sb_error *err)
{
	struct sb_image_manifest index = { 0 };
	json_t *layout = NULL, *doc = NULL, *docker = NULL;
	const char **names = NULL;
	char *text = NULL;
	size_t pick, len;
	int rc;

	if ((rc = load_json_file(&layout, NULL, NULL, im, "oci-layout", err)) < 0 ||
	    (rc = load_json_file(&doc, &text, &len, im, "index.json", err)) < 0)
		goto out;
	if (!json_is_string(json_object_get(layout, "imageLayoutVersion"))) {
		rc = sb_error_set(err, SB_ERR_FORMAT, _("'%s' has no valid oci-layout file"), im->path);
		goto out;
	}
	if ((rc = sb_image_manifest_parse(&index, text, len, "index.json", err)) < 0)
		goto out;
	if (!index.is_index) {
		rc = sb_error_set(err, SB_ERR_FORMAT, _("index.json of '%s' is not an image index"), im->path);
		goto out;
	}
	names = calloc(index.n_manifests + 1, sizeof(*names));
	if (!names) {
		rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		goto out;
	}
	for (size_t i = 0; i < index.n_manifests; i++)
		names[i] = entry_name(json_array_get(json_object_get(doc, "manifests"), i));
	if ((rc = choose_entry(&pick, im->path, "index.json", names, index.n_manifests, im->opts->name, err)) < 0)
		goto out;
	/* a new-format docker save names its image in manifest.json */
	if (sb_image_source_has(im->src, "manifest.json") &&
	    load_json_file(&docker, NULL, NULL, im, "manifest.json", NULL) == 0 &&
	    !(names[pick] && strchr(names[pick], ':')) && docker_tag(docker))
		snprintf(im->name, sizeof(im->name), "%s", docker_tag(docker));
	else
		name_from_entry(im, names[pick]);
	rc = store_image(digest, im, &index.manifests[pick], err);
out:
	free(names);
	free(text);
	sb_image_manifest_clear(&index);
	json_decref(layout);
	json_decref(doc);
	json_decref(docker);
	return rc;
}

static int import_docker(char digest[SB_DIGEST_STR_LEN], struct import *im, struct sb_error *err)
{
	json_t *doc = NULL, *entry, *layers_in, *layers = NULL;
	char config[SB_DIGEST_STR_LEN], layer[SB_DIGEST_STR_LEN];
	unsigned long long config_size, size;
	const char **names = NULL, *config_path;
	struct sb_image_config cfg;
	size_t pick, n, len;
	char *text;
	int rc;

	if ((rc = load_json_file(&doc, NULL, NULL, im, "manifest.json", err)) < 0)
		return rc;
	n = json_array_size(doc);
	names = calloc(n + 1, sizeof(*names));
	if (!json_is_array(doc) || !names) {
		rc = names ? sb_error_set(err, SB_ERR_FORMAT, _("manifest.json of '%s' is not a list"), im->path)
			   : sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		names[i] = json_string_value(json_array_get(json_object_get(json_array_get(doc, i), "RepoTags"), 0));
	if ((rc = choose_entry(&pick, im->path, "manifest.json", names, n, im->opts->name, err)) < 0)
		goto out;
	entry = json_array_get(doc, pick);
	config_path = json_string_value(json_object_get(entry, "Config"));
	layers_in = json_object_get(entry, "Layers");
	if (!config_path || !json_is_array(layers_in)) {
		rc = sb_error_set(err, SB_ERR_FORMAT, _("manifest.json of '%s' has no Config or Layers"), im->path);
		goto out;
	}
	if (names[pick])
		snprintf(im->name, sizeof(im->name), "%s", names[pick]);
	/* the config must be a valid image config before it names our image */
	if ((rc = sb_image_source_blob(config, &config_size, im->src, config_path, NULL, err)) < 0 ||
	    (rc = sb_blob_get(&text, &len, im->root, config, SB_MANIFEST_MAX, err)) < 0)
		goto out;
	rc = sb_image_config_parse(&cfg, text, len, config_path, err);
	free(text);
	sb_image_config_clear(&cfg);
	if (rc < 0)
		goto out;
	layers = json_array();
	for (size_t i = 0; rc == 0 && i < json_array_size(layers_in); i++) {
		const char *path = json_string_value(json_array_get(layers_in, i));
		if (!path)
			rc = sb_error_set(err, SB_ERR_FORMAT, _("manifest.json of '%s' has a bad layer entry"), im->path);
		else if ((rc = sb_image_source_blob(layer, &size, im->src, path, NULL, err)) == 0 &&
			 !(layers = sb_json_append(layers, layer_descriptor(im->root, layer, size))))
			rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	if (rc == 0)
		rc = put_manifest(digest, im->root, config, config_size, json_incref(layers), err);
out:
	json_decref(layers);
	json_decref(doc);
	free(names);
	return rc;
}

static const struct {
	enum sb_image_source_kind kind;
	const char *format;
	int (*run)(char digest[SB_DIGEST_STR_LEN], struct import *im, struct sb_error *err);
} importers[] = {
	{ SB_SOURCE_OCI, "oci", import_oci },
	{ SB_SOURCE_DOCKER, "docker-save", import_docker },
	{ SB_SOURCE_ROOTFS, "rootfs", import_rootfs },
};

int sb_image_import(struct sb_image_import_result *out, struct sb_root *root, const char *path,
		    const struct sb_image_import_opts *opts, struct sb_error *err)
{
	static const struct sb_image_import_opts defaults = { 0 };
	struct import im = { .root = root, .path = path, .opts = opts ? opts : &defaults };
	char *source = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	/* made here, not pulled: a name without a registry goes under localhost/ */
	if (im.opts->name && (rc = sb_image_local_ref(out->ref, im.opts->name, err)) < 0)
		return rc;
	/* shared: prune (exclusive) must not take the blobs before install records them */
	if ((rc = sb_root_lock(root, SB_LOCK_SHARED, err)) < 0)
		return rc;
	if ((rc = sb_image_source_open(&im.src, root, path, im.opts->progress, err)) < 0)
		goto out;
	for (size_t i = 0; i < sizeof(importers) / sizeof(importers[0]); i++) {
		if (importers[i].kind != sb_image_source_kind(im.src))
			continue;
		out->format = importers[i].format;
		rc = importers[i].run(out->digest, &im, err);
	}
	if (rc < 0)
		goto out;
	/* an input's own name that is not a valid reference is dropped, not fatal */
	if (!out->ref[0] && im.name[0] && sb_image_local_ref(out->ref, im.name, NULL) < 0)
		out->ref[0] = '\0';
	source = im.opts->source ? strdup(im.opts->source) : sb_strdupf("import %s", path);
	rc = source ? sb_image_install_from(root, out->ref[0] ? out->ref : NULL, out->digest, source,
					    im.opts->progress, err)
		    : sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
out:
	sb_root_unlock(root);
	sb_image_source_close(im.src);
	free(source);
	return rc;
}
