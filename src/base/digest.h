/* sha256 digests in OCI form ("sha256:<64 hex>"), streaming. */
#ifndef SB_DIGEST_H
#define SB_DIGEST_H

#include <stddef.h>

#include "base/error.h"

#define SB_DIGEST_HEX_LEN 64
/* "sha256:" + 64 hex + NUL */
#define SB_DIGEST_STR_LEN (7 + SB_DIGEST_HEX_LEN + 1)

struct sb_sha256;

int sb_sha256_new(struct sb_sha256 **out, struct sb_error *err);
void sb_sha256_free(struct sb_sha256 *h);
void sb_sha256_update(struct sb_sha256 *h, const void *data, size_t len);
/* Writes "sha256:<hex>" into out; the hasher may be updated no further. */
void sb_sha256_final(char out[SB_DIGEST_STR_LEN], struct sb_sha256 *h);
/* One-shot digest of a buffer. */
int sb_sha256_buffer(char out[SB_DIGEST_STR_LEN], const void *data, size_t len, struct sb_error *err);
int sb_sha256_file(char out[SB_DIGEST_STR_LEN], const char *path, struct sb_error *err);

/* True when s is "sha256:" followed by exactly 64 lowercase hex digits. */
int sb_digest_valid(const char *s);
/* The hex part of a valid digest. */
const char *sb_digest_hex(const char *digest);

#endif
