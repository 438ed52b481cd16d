/* Content-addressed blobs under ROOT/images/blobs/sha256/<hex>, shared by all
 * images. A blob is only ever visible under its name once its content has been
 * verified against it. */
#ifndef SB_BLOB_STORE_H
#define SB_BLOB_STORE_H

#include <stddef.h>

#include "base/digest.h"
#include "base/error.h"
#include "base/root.h"

struct sb_blob_writer;

/* Path of the blob (which may not exist). */
char *sb_blob_path(const struct sb_root *root, const char *digest);
/* 1 when the blob is in the store. */
int sb_blob_exists(const struct sb_root *root, const char *digest);

/* Starts writing a blob. With an expected digest the bytes go to a partial file
 * kept across failures, so a later writer for the same digest resumes: see
 * sb_blob_writer_offset. Writers of the same expected digest take turns (the
 * call waits while another process or writer holds it: never open two for one
 * digest at once in one thread). Without one (NULL) the digest is computed on
 * commit. */
int sb_blob_writer_open(struct sb_blob_writer **out, struct sb_root *root, const char *expected,
			struct sb_error *err);
/* Bytes already present from an earlier, interrupted writer (0 when fresh). */
unsigned long long sb_blob_writer_offset(const struct sb_blob_writer *w);
/* Drops what an earlier writer left and starts from byte 0 (a server that
 * ignores Range). */
int sb_blob_writer_restart(struct sb_blob_writer *w, struct sb_error *err);
int sb_blob_writer_write(struct sb_blob_writer *w, const void *data, size_t len, struct sb_error *err);
/* Verifies and moves the blob into the store; digest receives its name. A
 * mismatch is SB_ERR_DIGEST and the partial content is discarded. */
int sb_blob_writer_commit(char digest[SB_DIGEST_STR_LEN], struct sb_blob_writer *w, struct sb_error *err);
/* Releases the writer; uncommitted content is kept for resume when an expected
 * digest was given, discarded otherwise. */
void sb_blob_writer_free(struct sb_blob_writer *w);

/* Stores a small in-memory blob (manifest, config). */
int sb_blob_put(char digest[SB_DIGEST_STR_LEN], struct sb_root *root, const void *data, size_t len,
		struct sb_error *err);
/* Reads a small blob (at most max bytes) and verifies it against its name. */
int sb_blob_get(char **out, size_t *len, const struct sb_root *root, const char *digest, size_t max,
		struct sb_error *err);

#endif
