/* New images from a layer written on this machine: the layer blob (a plain
 * tar in, compressed by libarchive's raw format with a gzip or zstd filter,
 * the tar's own digest taken on the way), and the config and manifest that
 * put it on top of a parent image. */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "base/archive_dl.h"
#include "base/i18n.h"
#include "base/jsonfile.h"
#include "image/blob_store.h"
#include "image/commit.h"
#include "image/manifest.h"
#include "image/ref.h"
#include "internal.h"

static const struct compression {
	const char *name;
	const char *media_type;
	int (*add_filter)(struct archive *a);
} compressions[] = {
	[SB_LAYER_GZIP] = { "gzip", SB_MEDIA_OCI_LAYER_GZIP, archive_write_add_filter_gzip },
	[SB_LAYER_ZSTD] = { "zstd", SB_MEDIA_OCI_LAYER_ZSTD, archive_write_add_filter_zstd },
};

#define N_COMPRESSIONS (sizeof(compressions) / sizeof(compressions[0]))

int sb_layer_compression_parse(const char *s)
{
	for (size_t i = 0; s && i < N_COMPRESSIONS; i++)
		if (!strcmp(compressions[i].name, s))
			return (int)i;
	return -1;
}

struct sb_layer_writer {
	struct archive *z;                   /* raw format + filter: compresses what write gives it */
	struct archive_entry *e;
	struct sb_sha256 *diff;
	struct sb_blob_writer *blob;
	enum sb_layer_compression comp;
	unsigned long long size, tar_size;
	struct sb_error blob_err;            /* why the blob store refused the compressed bytes */
	int blob_failed;
};

static int nomem(struct sb_error *err)
{
	return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
}

static la_ssize_t compressed_out(struct archive *a, void *client, const void *buf, size_t len)
{
	struct sb_layer_writer *w = client;

	(void)a;
	if (sb_blob_writer_write(w->blob, buf, len, &w->blob_err) < 0) {
		w->blob_failed = 1;
		return -1;
	}
	w->size += len;
	return (la_ssize_t)len;
}

static int writer_fail(struct sb_layer_writer *w, struct sb_error *err)
{
	const char *msg = archive_error_string(w->z);

	if (w->blob_failed) {
		if (err)
			*err = w->blob_err;
		return w->blob_err.code;
	}
	return sb_error_set(err, SB_ERR_IO, _("cannot compress the layer (%s): %s"), compressions[w->comp].name,
			    msg ? msg : _("unknown archive error"));
}

int sb_layer_writer_open(struct sb_layer_writer **out, struct sb_root *root, enum sb_layer_compression c,
			 struct sb_error *err)
{
	struct sb_layer_writer *w = calloc(1, sizeof(*w));
	int rc;

	*out = NULL;
	if (!w)
		return nomem(err);
	w->comp = (size_t)c < N_COMPRESSIONS ? c : SB_LAYER_GZIP;
	if ((rc = sb_archive_load(err)) < 0 || (rc = sb_sha256_new(&w->diff, err)) < 0 ||
	    (rc = sb_blob_writer_open(&w->blob, root, NULL, err)) < 0) {
		sb_layer_writer_free(w);
		return rc;
	}
	if (!(w->z = archive_write_new()) || !(w->e = archive_entry_new())) {
		sb_layer_writer_free(w);
		return nomem(err);
	}
	archive_entry_set_mode(w->e, S_IFREG | 0644);
	/* unblocked: nothing may follow the end of the compressed stream */
	if (archive_write_set_format_raw(w->z) < ARCHIVE_OK || compressions[w->comp].add_filter(w->z) < ARCHIVE_OK ||
	    archive_write_set_bytes_per_block(w->z, 0) < ARCHIVE_OK ||
	    archive_write_open(w->z, w, NULL, compressed_out, NULL) < ARCHIVE_OK ||
	    archive_write_header(w->z, w->e) < ARCHIVE_OK) {
		rc = writer_fail(w, err);
		sb_layer_writer_free(w);
		return rc;
	}
	*out = w;
	return 0;
}

int sb_layer_writer_write(struct sb_layer_writer *w, const void *data, size_t len, struct sb_error *err)
{
	sb_sha256_update(w->diff, data, len);
	w->tar_size += len;
	while (len > 0) {
		la_ssize_t n = archive_write_data(w->z, data, len);
		if (n <= 0)
			return writer_fail(w, err);
		data = (const char *)data + n;
		len -= (size_t)n;
	}
	return 0;
}

int sb_layer_writer_commit(struct sb_image_new_layer *out, struct sb_layer_writer *w, struct sb_error *err)
{
	int rc;

	memset(out, 0, sizeof(*out));
	if (archive_write_close(w->z) < ARCHIVE_OK)
		return writer_fail(w, err);
	if ((rc = sb_blob_writer_commit(out->digest, w->blob, err)) < 0)
		return rc;
	sb_sha256_final(out->diff_id, w->diff);
	sb_sha256_free(w->diff);
	w->diff = NULL;
	out->media_type = compressions[w->comp].media_type;
	out->size = w->size;
	out->tar_size = w->tar_size;
	return 0;
}

void sb_layer_writer_free(struct sb_layer_writer *w)
{
	if (!w)
		return;
	if (w->z)
		archive_write_free(w->z);
	if (w->e)
		archive_entry_free(w->e);
	sb_sha256_free(w->diff);
	sb_blob_writer_free(w->blob);
	free(w);
}

/* --change: what a Dockerfile instruction of the same name would set in the
 * config's "config" object. */
static int bad_change(struct sb_error *err, const char *word, const char *arg, const char *why)
{
	return sb_error_set(err, SB_ERR_INVALID, _("--change '%s %s': %s"), word, arg, why);
}

/* "K=V" split at the first '='; -1 without one or with an empty key. */
static int split_kv(char **key, const char **value, const char *arg)
{
	const char *eq = strchr(arg, '=');

	if (!eq || eq == arg || !(*key = strndup(arg, (size_t)(eq - arg))))
		return -1;
	*value = eq + 1;
	return 0;
}

static int change_env(json_t *cfg, const char *arg, struct sb_error *err)
{
	json_t *env = json_object_get(cfg, "Env"), *v;
	const char *value;
	char *key;
	size_t i;

	if (split_kv(&key, &value, arg) < 0)
		return bad_change(err, "ENV", arg, _("expected KEY=VALUE"));
	if (!json_is_array(env) && json_object_set_new(cfg, "Env", env = json_array()) < 0) {
		free(key);
		return nomem(err);
	}
	size_t klen = strlen(key);
	json_array_foreach (env, i, v) {
		const char *s = json_string_value(v);
		if (s && !strncmp(s, key, klen) && s[klen] == '=')
			break;
	}
	free(key);
	int rc = i < json_array_size(env) ? json_array_set_new(env, i, json_string(arg))
					  : json_array_append_new(env, json_string(arg));
	return rc < 0 ? nomem(err) : 0;
}

static int change_label(json_t *cfg, const char *arg, struct sb_error *err)
{
	json_t *labels = json_object_get(cfg, "Labels");
	const char *value;
	char *key;

	if (split_kv(&key, &value, arg) < 0)
		return bad_change(err, "LABEL", arg, _("expected KEY=VALUE"));
	if (!json_is_object(labels) && json_object_set_new(cfg, "Labels", labels = json_object()) < 0) {
		free(key);
		return nomem(err);
	}
	int rc = json_object_set_new(labels, key, json_string(value));
	free(key);
	return rc < 0 ? nomem(err) : 0;
}

static int change_workdir(json_t *cfg, const char *arg, struct sb_error *err)
{
	if (arg[0] != '/')
		return bad_change(err, "WORKDIR", arg, _("the directory must be absolute"));
	return json_object_set_new(cfg, "WorkingDir", json_string(arg)) < 0 ? nomem(err) : 0;
}

static int change_user(json_t *cfg, const char *arg, struct sb_error *err)
{
	if (strpbrk(arg, " \t"))
		return bad_change(err, "USER", arg, _("expected USER[:GROUP] without spaces"));
	return json_object_set_new(cfg, "User", json_string(arg)) < 0 ? nomem(err) : 0;
}

/* The exec form (a JSON array of strings) or the shell form (run by /bin/sh -c). */
static int set_command(json_t *cfg, const char *key, const char *word, const char *arg, struct sb_error *err)
{
	json_t *cmd, *v;
	size_t i;

	if (arg[0] != '[') {
		cmd = json_pack("[s, s, s]", "/bin/sh", "-c", arg);
	} else {
		cmd = json_loads(arg, 0, NULL);
		int ok = json_is_array(cmd) && json_array_size(cmd) > 0;
		json_array_foreach (cmd, i, v)
			ok = ok && json_is_string(v);
		if (!ok) {
			json_decref(cmd);
			return bad_change(err, word, arg, _("the exec form is a JSON array of strings"));
		}
	}
	return !cmd || json_object_set_new(cfg, key, cmd) < 0 ? nomem(err) : 0;
}

static int change_cmd(json_t *cfg, const char *arg, struct sb_error *err)
{
	return set_command(cfg, "Cmd", "CMD", arg, err);
}

static int change_entrypoint(json_t *cfg, const char *arg, struct sb_error *err)
{
	return set_command(cfg, "Entrypoint", "ENTRYPOINT", arg, err);
}

/* "80", "80/tcp", "53/udp": one port each, as ExposedPorts keys. */
static int change_expose(json_t *cfg, const char *arg, struct sb_error *err)
{
	json_t *ports = json_object_get(cfg, "ExposedPorts");
	char *end, key[32];
	unsigned long port = strtoul(arg, &end, 10);

	if (end == arg || port == 0 || port > 65535 || (*end && strcmp(end, "/tcp") && strcmp(end, "/udp")))
		return bad_change(err, "EXPOSE", arg, _("expected PORT, PORT/tcp or PORT/udp"));
	snprintf(key, sizeof(key), "%lu%s", port, *end ? end : "/tcp");
	if (!json_is_object(ports) && json_object_set_new(cfg, "ExposedPorts", ports = json_object()) < 0)
		return nomem(err);
	return json_object_set_new(ports, key, json_object()) < 0 ? nomem(err) : 0;
}

static const struct change {
	const char *word;
	int (*apply)(json_t *cfg, const char *arg, struct sb_error *err);
} changes[] = {
	{ "ENV", change_env },   { "LABEL", change_label }, { "WORKDIR", change_workdir },
	{ "USER", change_user }, { "CMD", change_cmd },     { "ENTRYPOINT", change_entrypoint },
	{ "EXPOSE", change_expose },
};

static int apply_change(json_t *cfg, const char *spec, struct sb_error *err)
{
	size_t wlen = strcspn(spec, " \t");
	const char *arg = spec + wlen;

	arg += strspn(arg, " \t");
	for (size_t i = 0; i < sizeof(changes) / sizeof(changes[0]); i++) {
		if (strlen(changes[i].word) != wlen || strncasecmp(changes[i].word, spec, wlen))
			continue;
		if (!*arg)
			return sb_error_set(err, SB_ERR_INVALID, _("--change '%s': %s needs a value"), spec, changes[i].word);
		return changes[i].apply(cfg, arg, err);
	}
	return sb_error_set(err, SB_ERR_INVALID, _("--change '%s': unknown instruction (ENV, WORKDIR, CMD, ENTRYPOINT, USER, LABEL, EXPOSE)"),
			    spec);
}

static int apply_changes(json_t *cfg, char *const *specs, size_t n, struct sb_error *err)
{
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = apply_change(cfg, specs[i], err);
	return rc;
}

int sb_image_changes_check(char *const *specs, size_t n, struct sb_error *err)
{
	json_t *scratch = json_object();
	int rc = scratch ? apply_changes(scratch, specs, n, err) : nomem(err);

	json_decref(scratch);
	return rc;
}

static int load_doc(json_t **out, struct sb_root *root, const char *digest, const char *kind, struct sb_error *err)
{
	char *text = NULL;
	size_t len;
	int rc = sb_blob_get(&text, &len, root, digest, SB_MANIFEST_MAX, err);

	*out = rc == 0 ? json_loadb(text, len, 0, NULL) : NULL;
	free(text);
	if (rc == 0 && !json_is_object(*out)) {
		json_decref(*out);
		*out = NULL;
		rc = sb_error_set(err, SB_ERR_FORMAT, _("the %s %s is not a JSON object"), kind, digest);
	}
	return rc;
}

/* The parent's config with the layer's diff_id, a history entry and the changes. */
static int new_config(json_t *conf, const struct sb_image_new_layer *layer, const struct sb_image_commit_opts *o,
		      const char *now, struct sb_error *err)
{
	json_t *cfg = json_object_get(conf, "config"), *rootfs = json_object_get(conf, "rootfs");
	json_t *diff_ids = json_object_get(rootfs, "diff_ids"), *history = json_object_get(conf, "history");
	int rc;

	if (!json_is_array(diff_ids))
		return sb_error_set(err, SB_ERR_FORMAT, _("the parent image's config has no rootfs.diff_ids"));
	if (!json_is_object(cfg) && json_object_set_new(conf, "config", cfg = json_object()) < 0)
		return nomem(err);
	if ((rc = apply_changes(cfg, o->changes, o->n_changes, err)) < 0)
		return rc;
	if (!json_is_array(history) && json_object_set_new(conf, "history", history = json_array()) < 0)
		return nomem(err);
	json_t *h = json_pack("{s:s, s:s, s:s?}", "created", now, "created_by", o->created_by ? o->created_by : "",
			      "comment", o->message);
	if (h && !layer && json_object_set_new(h, "empty_layer", json_true()) < 0)
		return nomem(err);
	if (!h || json_array_append_new(history, h) < 0 ||
	    (layer && json_array_append_new(diff_ids, json_string(layer->diff_id)) < 0) ||
	    json_object_set_new(conf, "created", json_string(now)) < 0)
		return nomem(err);
	return 0;
}

/* A Docker layer type in an OCI manifest under its OCI name (the same bytes). */
static int oci_layers(json_t *layers, struct sb_error *err)
{
	json_t *l;
	size_t i;

	json_array_foreach (layers, i, l) {
		const char *mt = json_string_value(json_object_get(l, "mediaType"));
		if (mt && !strcmp(mt, SB_MEDIA_DOCKER_LAYER) &&
		    json_object_set_new(l, "mediaType", json_string(SB_MEDIA_OCI_LAYER_GZIP)) < 0)
			return nomem(err);
	}
	return 0;
}

static int put_json(char digest[SB_DIGEST_STR_LEN], size_t *size, struct sb_root *root, json_t *doc,
		    struct sb_error *err)
{
	char *text = sb_json_dumps(doc, JSON_COMPACT);
	int rc = text ? sb_blob_put(digest, root, text, *size = strlen(text), err) : nomem(err);

	free(text);
	return rc;
}

static int new_manifest(char digest[SB_DIGEST_STR_LEN], struct sb_root *root, json_t *parent_manifest,
			const char *config, size_t config_size, const struct sb_image_new_layer *layer,
			const char *parent, struct sb_error *err)
{
	json_t *layers = json_deep_copy(json_object_get(parent_manifest, "layers"));
	size_t size;
	int rc = json_is_array(layers) ? oci_layers(layers, err)
				       : sb_error_set(err, SB_ERR_FORMAT, _("the parent image's manifest has no layers"));

	if (rc == 0 && layer && json_array_append_new(layers, json_pack("{s:s, s:s, s:I}", "mediaType", layer->media_type,
							       "digest", layer->digest, "size",
							       (json_int_t)layer->size)) < 0)
		rc = nomem(err);
	if (rc < 0) {
		json_decref(layers);
		return rc;
	}
	json_t *m = json_pack("{s:i, s:s, s:{s:s, s:s, s:I}, s:o, s:{s:s}}", "schemaVersion", 2, "mediaType",
			      SB_MEDIA_OCI_MANIFEST, "config", "mediaType", SB_MEDIA_OCI_CONFIG, "digest", config, "size",
			      (json_int_t)config_size, "layers", layers, "annotations",
			      "org.opencontainers.image.base.digest", parent);
	rc = m ? put_json(digest, &size, root, m, err) : nomem(err);
	json_decref(m);
	return rc;
}

int sb_image_commit(char digest[SB_DIGEST_STR_LEN], struct sb_root *root, const struct sb_image_new_layer *layer,
		    const struct sb_image_commit_opts *o, struct sb_error *err)
{
	json_t *manifest = NULL, *conf = NULL;
	char config[SB_DIGEST_STR_LEN], now[32], *ref = NULL;
	size_t config_size;
	int rc = o->ref ? sb_image_ref_local(&ref, o->ref, err) : 0;

	sb_image_now_rfc3339(now, sizeof(now));
	if (rc == 0)
		rc = load_doc(&manifest, root, o->parent, _("manifest"), err);
	if (rc == 0) {
		const char *cd = json_string_value(json_object_get(json_object_get(manifest, "config"), "digest"));
		rc = cd && sb_digest_valid(cd) ? load_doc(&conf, root, cd, _("config"), err)
					       : sb_error_set(err, SB_ERR_FORMAT, _("the manifest %s names no config"), o->parent);
	}
	if (rc == 0 && (rc = new_config(conf, layer, o, now, err)) == 0 &&
	    (rc = put_json(config, &config_size, root, conf, err)) == 0)
		rc = new_manifest(digest, root, manifest, config, config_size, layer, o->parent, err);
	if (rc == 0)
		rc = sb_image_install_child(root, ref, digest, o->source, o->parent, NULL, err);
	sb_root_unlock(root); /* install returns early without releasing it on some errors */
	json_decref(manifest);
	json_decref(conf);
	free(ref);
	return rc;
}
