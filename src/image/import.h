/* `image import`: OCI image layouts (directories), OCI archives, `docker save`
 * tars (old and new format) and plain rootfs tars (gzip, zstd or none, told
 * apart by their magic bytes) into the image store. Every blob is verified
 * against its digest on the way in; nothing is held whole in memory. */
#ifndef SB_IMAGE_IMPORT_H
#define SB_IMAGE_IMPORT_H

#include "base/digest.h"
#include "base/error.h"
#include "image/store.h"
#include "base/progress.h"
#include "base/root.h"

struct sb_image_import_opts {
	/* Reference to record. NULL: the name the input carries (index.json
	 * annotation, docker RepoTags; a bare tag is put after the file's base
	 * name). Required for a rootfs tar. When the input holds several images it
	 * also chooses the one whose name matches. Either is recorded as made here
	 * (sb_image_local_ref: without a registry it goes under localhost/). */
	const char *name;
	const char *source;                  /* recorded as the image's source; NULL: "import PATH" */
	const struct sb_progress *progress;
};

struct sb_image_import_result {
	char digest[SB_DIGEST_STR_LEN];      /* manifest digest of the installed image */
	char ref[SB_IMAGE_REF_MAX];          /* the reference recorded, "" when none */
	const char *format;                  /* "oci", "docker-save" or "rootfs" */
};

int sb_image_import(struct sb_image_import_result *out, struct sb_root *root, const char *path,
		    const struct sb_image_import_opts *opts, struct sb_error *err);

#endif
