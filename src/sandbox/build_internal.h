/* image build's parts (build.c drives, build_copy.c writes COPY's layers). */
#ifndef SB_SANDBOX_BUILD_INTERNAL_H
#define SB_SANDBOX_BUILD_INTERNAL_H

#include "base/digest.h"
#include "base/error.h"
#include "base/root.h"
#include "image/commit.h"

struct sb_build_copy {
	int context;                     /* the context directory (O_PATH) */
	const char *rootfs;              /* the parent image's unpacked tree: which parents exist */
	char **ignore;                   /* .dockerignore's patterns, in order ("!" negates) */
	size_t n_ignore;
	char *const *srcs;               /* relative to the context */
	size_t n_srcs;
	const char *dest;                /* absolute */
};

/* .dockerignore of the context (none: no patterns). */
int sb_build_ignore_load(char ***patterns, size_t *n, const char *context, struct sb_error *err);
/* The digest of what the layer holds without its times, storing nothing
 * (the cache key's part: content, names, modes, owners, link targets). */
int sb_build_copy_digest(char digest[SB_DIGEST_STR_LEN], const struct sb_build_copy *c, struct sb_error *err);
/* The layer itself, in the blob store. */
int sb_build_copy_layer(struct sb_image_new_layer *out, struct sb_root *root, const struct sb_build_copy *c,
			struct sb_error *err);

#endif
