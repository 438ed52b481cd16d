/* Pulling images from OCI distribution registries (Docker Hub, ghcr, a local
 * docker-registry): manifests, indexes and blobs into the blob store, every
 * byte verified against its digest; and pushing images of the store to them. */
#ifndef SB_REGISTRY_H
#define SB_REGISTRY_H

#include <jansson.h>

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
	/* push: a blob larger than this goes up in chunks of this size (PATCH),
	 * a smaller one in one PUT; 0: SB_REGISTRY_CHUNK_DEFAULT */
	unsigned long long chunk_size;
};

#define SB_REGISTRY_CHUNK_DEFAULT (64ull << 20)

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

struct sb_registry_push_result {
	char digest[SB_DIGEST_STR_LEN];      /* the manifest pushed (the registry's digest of it) */
	char *reference;                     /* canonical destination */
	unsigned uploaded, existing, mounted;  /* blobs sent, found there, mounted from another repository */
	unsigned long long bytes;            /* blob bytes sent */
};

/* Pushes the installed image image (a reference or digest, as
 * sb_image_resolve takes it) to dest ("registry/name[:tag]"; NULL: the
 * image's own reference, which a localhost/ name is not): for the config and
 * each layer an existence check (HEAD), then a cross-repository mount when the
 * image was pulled from another repository of the same registry, else an
 * upload (one PUT, or PATCH chunks and a PUT for a blob above
 * opts->chunk_size); then the manifest's own bytes under dest's tag. Every
 * answer is checked (status, Location, the digest the registry reports);
 * server errors and dropped connections are retried a few times. The store
 * holds one platform of an image, so that platform's manifest is what goes
 * up. Auth, TLS and insecure as for pull. Nothing local is changed. */
int sb_registry_push(struct sb_registry_push_result *out, struct sb_root *root, const char *image, const char *dest,
		     const struct sb_registry_opts *opts, struct sb_error *err);
void sb_registry_push_result_clear(struct sb_registry_push_result *r);
/* The result as `sandbench image push --json` prints it. */
json_t *sb_registry_push_result_json(const struct sb_registry_push_result *r);

#endif
