/* OCI and Docker schema2 image manifests, indexes (manifest lists) and configs:
 * strict parsing and host-platform selection, shared by import and pull. */
#ifndef SB_IMAGE_MANIFEST_H
#define SB_IMAGE_MANIFEST_H

#include <stddef.h>

#include "base/digest.h"
#include "base/error.h"

#define SB_MEDIA_OCI_MANIFEST "application/vnd.oci.image.manifest.v1+json"
#define SB_MEDIA_OCI_INDEX "application/vnd.oci.image.index.v1+json"
#define SB_MEDIA_OCI_CONFIG "application/vnd.oci.image.config.v1+json"
#define SB_MEDIA_OCI_LAYER "application/vnd.oci.image.layer.v1.tar"
#define SB_MEDIA_OCI_LAYER_GZIP "application/vnd.oci.image.layer.v1.tar+gzip"
#define SB_MEDIA_OCI_LAYER_ZSTD "application/vnd.oci.image.layer.v1.tar+zstd"
#define SB_MEDIA_DOCKER_MANIFEST "application/vnd.docker.distribution.manifest.v2+json"
#define SB_MEDIA_DOCKER_LIST "application/vnd.docker.distribution.manifest.list.v2+json"
#define SB_MEDIA_DOCKER_CONFIG "application/vnd.docker.container.image.v1+json"
#define SB_MEDIA_DOCKER_LAYER "application/vnd.docker.image.rootfs.diff.tar.gzip"

/* The Accept header value for manifest requests: without the OCI types a
 * registry answers 404 for OCI content, without any it downgrades to schema1. */
#define SB_MANIFEST_ACCEPT \
	SB_MEDIA_OCI_INDEX ", " SB_MEDIA_OCI_MANIFEST ", " SB_MEDIA_DOCKER_LIST ", " SB_MEDIA_DOCKER_MANIFEST

/* Manifests, indexes and configs are small; anything bigger is refused. */
#define SB_MANIFEST_MAX (4u << 20)

struct sb_descriptor {
	char *media_type;
	char digest[SB_DIGEST_STR_LEN];
	unsigned long long size;
	/* platform of an index entry (NULL when absent) */
	char *os, *arch, *variant;
};

/* Either an image manifest (is_index == 0: config + layers) or an index /
 * manifest list (is_index == 1: manifests). */
struct sb_image_manifest {
	int is_index;
	char *media_type;
	struct sb_descriptor config;
	struct sb_descriptor *layers;
	size_t n_layers;
	struct sb_descriptor *manifests;
	size_t n_manifests;
};

struct sb_image_config {
	char *os, *arch, *variant;
	char *created;                       /* RFC 3339, NULL when absent */
	char (*diff_ids)[SB_DIGEST_STR_LEN];
	size_t n_diff_ids;
};

/* Parses a manifest or index; what names the document in errors (e.g. its
 * digest). Bad JSON, unknown media types, schema1, non-sha256 digests and missing
 * fields are SB_ERR_FORMAT. */
int sb_image_manifest_parse(struct sb_image_manifest *out, const void *data, size_t len, const char *what,
			    struct sb_error *err);
void sb_image_manifest_clear(struct sb_image_manifest *m);

/* The index entry for os/arch (NULL: the host platform, linux/<this machine>);
 * SB_ERR_NOTFOUND listing the platforms offered when there is none. */
int sb_image_index_select(const struct sb_descriptor **out, const struct sb_image_manifest *index, const char *os,
			  const char *arch, struct sb_error *err);

/* The host platform in OCI terms ("linux", "amd64"). */
const char *sb_image_host_arch(void);

int sb_image_config_parse(struct sb_image_config *out, const void *data, size_t len, const char *what,
			  struct sb_error *err);
void sb_image_config_clear(struct sb_image_config *c);

#endif
