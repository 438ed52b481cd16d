#include "config.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/i18n.h"
#include "image/manifest.h"

enum doc_kind {
	DOC_MANIFEST,
	DOC_INDEX,
	DOC_SCHEMA1,
};

static const struct {
	const char *type;
	enum doc_kind kind;
} doc_types[] = {
	{ SB_MEDIA_OCI_MANIFEST, DOC_MANIFEST },
	{ SB_MEDIA_DOCKER_MANIFEST, DOC_MANIFEST },
	{ SB_MEDIA_OCI_INDEX, DOC_INDEX },
	{ SB_MEDIA_DOCKER_LIST, DOC_INDEX },
	{ "application/vnd.docker.distribution.manifest.v1+json", DOC_SCHEMA1 },
	{ "application/vnd.docker.distribution.manifest.v1+prettyjws", DOC_SCHEMA1 },
};

/* Layer tars sandbench can unpack (compression is taken from magic bytes). */
static const char *const layer_types[] = {
	SB_MEDIA_OCI_LAYER,
	SB_MEDIA_OCI_LAYER_GZIP,
	SB_MEDIA_OCI_LAYER_ZSTD,
	SB_MEDIA_DOCKER_LAYER,
	"application/vnd.oci.image.layer.nondistributable.v1.tar",
	"application/vnd.oci.image.layer.nondistributable.v1.tar+gzip",
	"application/vnd.oci.image.layer.nondistributable.v1.tar+zstd",
	"application/vnd.docker.image.rootfs.foreign.diff.tar.gzip",
};

static const char *const config_types[] = {
	SB_MEDIA_OCI_CONFIG,
	SB_MEDIA_DOCKER_CONFIG,
};

/* runsc runs on these two; the OCI name of the machine we were built for. */
#if defined(__x86_64__)
#define HOST_ARCH "amd64"
#elif defined(__aarch64__)
#define HOST_ARCH "arm64"
#else
#error "sandbench supports amd64 and arm64 hosts (like runsc)"
#endif

const char *sb_image_host_arch(void)
{
	return HOST_ARCH;
}

static int in_list(const char *s, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(s, list[i])) /* NOLINT(clang-analyzer-core.NonNullParamChecker): get_string's required */
			return 1;
	return 0;
}

static int load_json(json_t **out, const void *data, size_t len, const char *what, struct sb_error *err)
{
	json_error_t jerr;

	*out = json_loadb(data, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!*out)
		return sb_error_set(err, SB_ERR_FORMAT, _("%s is not valid JSON: %s (line %d)"), what, jerr.text,
				    jerr.line);
	if (!json_is_object(*out)) {
		json_decref(*out);
		*out = NULL;
		return sb_error_set(err, SB_ERR_FORMAT, _("%s is not a JSON object"), what);
	}
	return 0;
}

/* A string member: NULL when absent and optional; a wrong type is always an error. */
static int get_string(const char **out, json_t *obj, const char *key, int required, const char *what,
		      struct sb_error *err)
{
	json_t *v = json_object_get(obj, key);

	*out = NULL;
	if (!v && !required)
		return 0;
	if (!json_is_string(v))
		return sb_error_set(err, SB_ERR_FORMAT, _("%s: \"%s\" is missing or not a string"), what, key);
	*out = json_string_value(v);
	return 0;
}

static int dup_opt(char **out, const char *s, struct sb_error *err)
{
	*out = s ? strdup(s) : NULL;
	if (s && !*out)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	return 0;
}

static int parse_digest(char out[SB_DIGEST_STR_LEN], json_t *v, const char *what, struct sb_error *err)
{
	const char *s = json_string_value(v);

	if (!s)
		return sb_error_set(err, SB_ERR_FORMAT, _("%s: digest is missing or not a string"), what);
	if (!sb_digest_valid(s)) {
		if (strncmp(s, "sha256:", 7) != 0 && strchr(s, ':'))
			return sb_error_set(err, SB_ERR_FORMAT, _("%s: unsupported digest algorithm in '%s'"), what,
					    s);
		return sb_error_set(err, SB_ERR_FORMAT, _("%s: malformed digest '%s'"), what, s);
	}
	strcpy(out, s);
	return 0;
}

static void descriptor_clear(struct sb_descriptor *d)
{
	free(d->media_type);
	free(d->os);
	free(d->arch);
	free(d->variant);
	memset(d, 0, sizeof(*d));
}

static int parse_descriptor(struct sb_descriptor *d, json_t *obj, const char *what, struct sb_error *err)
{
	const char *type, *os = NULL, *arch = NULL, *variant = NULL;
	json_t *size = json_object_get(obj, "size"), *platform;
	int rc;

	memset(d, 0, sizeof(*d));
	if (!json_is_object(obj))
		return sb_error_set(err, SB_ERR_FORMAT, _("%s: a descriptor is not an object"), what);
	if ((rc = get_string(&type, obj, "mediaType", 1, what, err)) < 0 ||
	    (rc = parse_digest(d->digest, json_object_get(obj, "digest"), what, err)) < 0)
		return rc;
	if (!json_is_integer(size) || json_integer_value(size) < 0)
		return sb_error_set(err, SB_ERR_FORMAT, _("%s: descriptor %s has no valid size"), what, d->digest);
	d->size = (unsigned long long)json_integer_value(size);
	platform = json_object_get(obj, "platform");
	if (platform) {
		if (!json_is_object(platform))
			return sb_error_set(err, SB_ERR_FORMAT, _("%s: platform of %s is not an object"), what,
					    d->digest);
		if ((rc = get_string(&os, platform, "os", 1, what, err)) < 0 ||
		    (rc = get_string(&arch, platform, "architecture", 1, what, err)) < 0 ||
		    (rc = get_string(&variant, platform, "variant", 0, what, err)) < 0)
			return rc;
	}
	if ((rc = dup_opt(&d->media_type, type, err)) < 0 || (rc = dup_opt(&d->os, os, err)) < 0 ||
	    (rc = dup_opt(&d->arch, arch, err)) < 0 || (rc = dup_opt(&d->variant, variant, err)) < 0) {
		descriptor_clear(d);
		return rc;
	}
	return 0;
}

static int parse_descriptors(struct sb_descriptor **out, size_t *n, json_t *arr, const char *key, const char *what,
			     struct sb_error *err)
{
	size_t i, count;
	int rc;

	*out = NULL;
	*n = 0;
	if (!json_is_array(arr))
		return sb_error_set(err, SB_ERR_FORMAT, _("%s: \"%s\" is missing or not an array"), what, key);
	count = json_array_size(arr);
	if (count == 0)
		return 0;
	*out = calloc(count, sizeof(**out));
	if (!*out)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	for (i = 0; i < count; i++) {
		if ((rc = parse_descriptor(&(*out)[i], json_array_get(arr, i), what, err)) < 0)
			return rc;
		*n = i + 1;
	}
	return 0;
}

/* The document's kind from its mediaType, or from its shape when it has none
 * (older OCI manifests omit it). */
static int doc_kind(enum doc_kind *kind, json_t *doc, const char *type, const char *what, struct sb_error *err)
{
	if (!type) {
		if (json_object_get(doc, "manifests")) {
			*kind = DOC_INDEX;
			return 0;
		}
		if (json_object_get(doc, "layers") || json_object_get(doc, "config")) {
			*kind = DOC_MANIFEST;
			return 0;
		}
		return sb_error_set(err, SB_ERR_FORMAT, _("%s is neither an image manifest nor an index"), what);
	}
	for (size_t i = 0; i < sizeof(doc_types) / sizeof(doc_types[0]); i++) {
		if (!strcmp(type, doc_types[i].type)) {
			*kind = doc_types[i].kind;
			return 0;
		}
	}
	return sb_error_set(err, SB_ERR_FORMAT, _("%s has unsupported media type '%s'"), what, type);
}

static int parse_image(struct sb_image_manifest *m, json_t *doc, const char *what, struct sb_error *err)
{
	int rc;

	if ((rc = parse_descriptor(&m->config, json_object_get(doc, "config"), what, err)) < 0)
		return rc;
	if (!in_list(m->config.media_type, config_types, sizeof(config_types) / sizeof(config_types[0])))
		return sb_error_set(err, SB_ERR_FORMAT, _("%s is not a container image (config media type '%s')"),
				    what, m->config.media_type);
	if ((rc = parse_descriptors(&m->layers, &m->n_layers, json_object_get(doc, "layers"), "layers", what,
				    err)) < 0)
		return rc;
	for (size_t i = 0; i < m->n_layers; i++)
		if (!in_list(m->layers[i].media_type, layer_types, sizeof(layer_types) / sizeof(layer_types[0])))
			return sb_error_set(err, SB_ERR_FORMAT, _("%s: layer %s has unsupported media type '%s'"),
					    what, m->layers[i].digest, m->layers[i].media_type);
	return 0;
}

int sb_image_manifest_parse(struct sb_image_manifest *out, const void *data, size_t len, const char *what,
			    struct sb_error *err)
{
	json_t *doc, *version;
	const char *type;
	enum doc_kind kind = DOC_MANIFEST;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = load_json(&doc, data, len, what, err)) < 0)
		return rc;
	version = json_object_get(doc, "schemaVersion");
	if ((rc = get_string(&type, doc, "mediaType", 0, what, err)) < 0)
		goto out;
	if ((json_is_integer(version) && json_integer_value(version) == 1) ||
	    ((rc = doc_kind(&kind, doc, type, what, err)) == 0 && kind == DOC_SCHEMA1)) {
		rc = sb_error_set(err, SB_ERR_FORMAT, _("%s is a Docker schema1 manifest, which is not supported"),
				  what);
		goto out;
	}
	if (rc < 0)
		goto out;
	if (!json_is_integer(version) || json_integer_value(version) != 2) {
		rc = sb_error_set(err, SB_ERR_FORMAT, _("%s: schemaVersion is not 2"), what);
		goto out;
	}
	out->is_index = kind == DOC_INDEX;
	if ((rc = dup_opt(&out->media_type, type ? type : out->is_index ? SB_MEDIA_OCI_INDEX : SB_MEDIA_OCI_MANIFEST,
			  err)) < 0)
		goto out;
	if (out->is_index)
		rc = parse_descriptors(&out->manifests, &out->n_manifests, json_object_get(doc, "manifests"),
				       "manifests", what, err);
	else
		rc = parse_image(out, doc, what, err);
out:
	json_decref(doc);
	if (rc < 0)
		sb_image_manifest_clear(out);
	return rc;
}

void sb_image_manifest_clear(struct sb_image_manifest *m)
{
	if (!m)
		return;
	free(m->media_type);
	descriptor_clear(&m->config);
	for (size_t i = 0; i < m->n_layers; i++)
		descriptor_clear(&m->layers[i]);
	free(m->layers);
	for (size_t i = 0; i < m->n_manifests; i++)
		descriptor_clear(&m->manifests[i]);
	free(m->manifests);
	memset(m, 0, sizeof(*m));
}

static int is_manifest_type(const char *type)
{
	for (size_t i = 0; i < sizeof(doc_types) / sizeof(doc_types[0]); i++)
		if (!strcmp(type, doc_types[i].type))
			return doc_types[i].kind != DOC_SCHEMA1;
	return 0;
}

int sb_image_index_select(const struct sb_descriptor **out, const struct sb_image_manifest *index, const char *os,
			  const char *arch, struct sb_error *err)
{
	char offered[512] = "";
	size_t used = 0;

	*out = NULL;
	if (!os)
		os = "linux";
	if (!arch)
		arch = sb_image_host_arch();
	for (size_t i = 0; i < index->n_manifests; i++) {
		const struct sb_descriptor *d = &index->manifests[i];
		/* "unknown/unknown" entries are build attestations, not images */
		if (!d->os || !d->arch || !is_manifest_type(d->media_type) || !strcmp(d->os, "unknown"))
			continue;
		/* the variant (arm64 v8) does not matter: the host runs them all */
		if (!strcmp(d->os, os) && !strcmp(d->arch, arch)) {
			*out = d;
			return 0;
		}
		if (used < sizeof(offered))
			used += (size_t)snprintf(offered + used, sizeof(offered) - used, "%s%s/%s%s%s",
						 used ? ", " : "", d->os, d->arch, d->variant ? "/" : "",
						 d->variant ? d->variant : "");
	}
	return sb_error_set(err, SB_ERR_NOTFOUND, _("the image has no %s/%s variant (it offers: %s)"), os, arch,
			    offered[0] ? offered : _("none"));
}

int sb_image_config_parse(struct sb_image_config *out, const void *data, size_t len, const char *what,
			  struct sb_error *err)
{
	const char *os, *arch, *variant, *created, *fstype;
	json_t *doc, *rootfs, *ids;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = load_json(&doc, data, len, what, err)) < 0)
		return rc;
	rootfs = json_object_get(doc, "rootfs");
	if ((rc = get_string(&os, doc, "os", 1, what, err)) < 0 ||
	    (rc = get_string(&arch, doc, "architecture", 1, what, err)) < 0 ||
	    (rc = get_string(&variant, doc, "variant", 0, what, err)) < 0 ||
	    (rc = get_string(&created, doc, "created", 0, what, err)) < 0)
		goto out;
	if (!json_is_object(rootfs)) {
		rc = sb_error_set(err, SB_ERR_FORMAT, _("%s: \"rootfs\" is missing or not an object"), what);
		goto out;
	}
	if ((rc = get_string(&fstype, rootfs, "type", 1, what, err)) < 0)
		goto out;
	if (strcmp(fstype, "layers") != 0) {
		rc = sb_error_set(err, SB_ERR_FORMAT, _("%s: unsupported rootfs type '%s'"), what, fstype);
		goto out;
	}
	ids = json_object_get(rootfs, "diff_ids");
	if (!json_is_array(ids)) {
		rc = sb_error_set(err, SB_ERR_FORMAT, _("%s: \"rootfs.diff_ids\" is missing or not an array"), what);
		goto out;
	}
	if ((rc = dup_opt(&out->os, os, err)) < 0 || (rc = dup_opt(&out->arch, arch, err)) < 0 ||
	    (rc = dup_opt(&out->variant, variant, err)) < 0 || (rc = dup_opt(&out->created, created, err)) < 0)
		goto out;
	out->diff_ids = calloc(json_array_size(ids) + 1, sizeof(*out->diff_ids));
	if (!out->diff_ids) {
		rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		goto out;
	}
	for (size_t i = 0; i < json_array_size(ids); i++) {
		if ((rc = parse_digest(out->diff_ids[i], json_array_get(ids, i), what, err)) < 0)
			goto out;
		out->n_diff_ids = i + 1;
	}
out:
	json_decref(doc);
	if (rc < 0)
		sb_image_config_clear(out);
	return rc;
}

void sb_image_config_clear(struct sb_image_config *c)
{
	if (!c)
		return;
	free(c->os);
	free(c->arch);
	free(c->variant);
	free(c->created);
	free(c->diff_ids);
	memset(c, 0, sizeof(*c));
}
