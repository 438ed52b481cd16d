/* Pulling images from OCI distribution registries (Docker Hub, ghcr, a local
 * docker-registry): manifests, indexes and blobs into the blob store, every
 * byte verified against its digest. */
#ifndef SB_REGISTRY_H
#define SB_REGISTRY_H

#include "base/digest.h"
#include "base/error.h"
#include "base/progress.h"
#include "base/root.h"

struct sb_registry_opts {
	/* File holding "user:password" (mode 0600 or stricter). NULL: the entry for
	 * the registry in ROOT/credentials.json, if any, else anonymous. */
	const char *creds_file;
	int insecure;              /* plain HTTP instead of HTTPS */
	const char *ca_file;       /* an extra CA to trust (PEM), or NULL */
	const struct sb_progress *progress;
};

/* Resolves ref (a tag, or pinned "name@sha256:...") to the image manifest for
 * the host platform and stores that manifest, its config and its layers in the
 * blob store. manifest_digest receives the image manifest's digest and
 * canonical (may be NULL) the canonical reference (malloc'd). */
int sb_registry_fetch(char manifest_digest[SB_DIGEST_STR_LEN], char **canonical, struct sb_root *root,
		      const char *ref, const struct sb_registry_opts *opts, struct sb_error *err);

/* sb_registry_fetch, then unpacks the image into the image store and records
 * the reference (sb_image_install): `sandbench image pull`. */
int sb_registry_pull(char manifest_digest[SB_DIGEST_STR_LEN], char **canonical, struct sb_root *root,
		     const char *ref, const struct sb_registry_opts *opts, struct sb_error *err);

#endif
