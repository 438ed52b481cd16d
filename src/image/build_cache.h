/* image build's step cache: ROOT/images/build-cache/<sha256 of a key>, each
 * file holding the digest of the image a step made. It belongs to the image
 * store so that prune counts it as a user of those images (the intermediate
 * images have no name): a prune keeps what the next build would reuse, and
 * `image prune --build-cache` drops the cache first, on purpose. */
#ifndef SB_IMAGE_BUILD_CACHE_H
#define SB_IMAGE_BUILD_CACHE_H

#include "base/digest.h"
#include "base/error.h"
#include "base/root.h"

/* 1 and the image's digest when the cache has key and the image is still
 * installed; 0 when it has not. */
int sb_image_cache_get(char digest[SB_DIGEST_STR_LEN], struct sb_root *root, const char *key);
/* Remembers key -> digest; failing to fails nothing (the step runs again). */
void sb_image_cache_put(struct sb_root *root, const char *key, const char *digest);

#endif
