/* What `image import` reads from (internal to import): a directory (OCI image
 * layout, unpacked `docker save`) or a tar file (OCI archive, `docker save`, or
 * a plain rootfs tar), behind one interface. Files of an archive go into the
 * blob store in one streaming pass, verified against their names when they are
 * blobs/sha256/<hex>; a directory's files are copied and verified on demand. */
#ifndef SB_IMAGE_SOURCE_H
#define SB_IMAGE_SOURCE_H

#include <stddef.h>

#include "digest.h"
#include "error.h"
#include "progress.h"
#include "root.h"

enum sb_image_source_kind {
	SB_SOURCE_OCI,       /* oci-layout + index.json (an OCI layout, archive, or new docker save) */
	SB_SOURCE_DOCKER,    /* manifest.json only (old docker save) */
	SB_SOURCE_ROOTFS,    /* a plain (possibly compressed) rootfs tar */
};

struct sb_image_source;

int sb_image_source_open(struct sb_image_source **out, struct sb_root *root, const char *path,
			 const struct sb_progress *progress, struct sb_error *err);
void sb_image_source_close(struct sb_image_source *src);
enum sb_image_source_kind sb_image_source_kind(const struct sb_image_source *src);
/* 1 when the source has the (top-level, small) file name. */
int sb_image_source_has(const struct sb_image_source *src, const char *name);
/* Reads a small file (index.json, manifest.json, a docker config) whole. */
int sb_image_source_read(char **out, size_t *len, struct sb_image_source *src, const char *name,
			 struct sb_error *err);
/* Puts the file name of the source into the blob store: verified against
 * expected (SB_ERR_DIGEST on mismatch) or, with NULL, named by its content.
 * digest and size receive what is stored (either may be NULL). */
int sb_image_source_blob(char digest[SB_DIGEST_STR_LEN], unsigned long long *size, struct sb_image_source *src,
			 const char *name, const char *expected, struct sb_error *err);
/* Streams a whole file into the blob store (a rootfs tar as a layer). */
int sb_image_store_file(char digest[SB_DIGEST_STR_LEN], unsigned long long *size, struct sb_root *root,
			const char *path, const char *expected, const struct sb_progress *progress,
			struct sb_error *err);

#endif
