/* New images made on this machine from a layer written here (sandbench
 * commit): the layer is streamed into the blob store compressed while its
 * uncompressed digest (the diff_id) is taken on the way; the parent's config
 * gets the layer's diff_id, a history entry and the requested changes, a new
 * OCI manifest lists the parent's layers and the new one, and the result is
 * installed as an ordinary pinned image that records its parent. */
#ifndef SB_IMAGE_COMMIT_H
#define SB_IMAGE_COMMIT_H

#include <stddef.h>

#include "base/digest.h"
#include "base/error.h"
#include "base/root.h"
#include "image/store.h"

enum sb_layer_compression {
	SB_LAYER_GZIP,
	SB_LAYER_ZSTD,
};

/* "gzip", "zstd"; -1 for another name. */
int sb_layer_compression_parse(const char *s);

struct sb_layer_writer;

/* What a finished layer is. */
struct sb_image_new_layer {
	char digest[SB_DIGEST_STR_LEN];      /* of the compressed blob, as stored */
	char diff_id[SB_DIGEST_STR_LEN];     /* of the uncompressed tar */
	const char *media_type;              /* SB_MEDIA_OCI_LAYER_GZIP / _ZSTD */
	unsigned long long size;             /* compressed bytes */
	unsigned long long tar_size;         /* uncompressed bytes */
};

/* A layer blob being written: the plain tar goes in through write. */
int sb_layer_writer_open(struct sb_layer_writer **out, struct sb_root *root, enum sb_layer_compression c,
			 struct sb_error *err);
int sb_layer_writer_write(struct sb_layer_writer *w, const void *data, size_t len, struct sb_error *err);
/* Ends the compressed stream and puts the blob in the store. */
int sb_layer_writer_commit(struct sb_image_new_layer *out, struct sb_layer_writer *w, struct sb_error *err);
/* Discards an uncommitted blob. */
void sb_layer_writer_free(struct sb_layer_writer *w);

struct sb_image_commit_opts {
	const char *parent;                  /* manifest digest of the image below the new layer */
	const char *ref;                     /* what to name the result (sb_image_ref_local); NULL: none */
	const char *message;                 /* the history entry's comment; NULL: none */
	const char *created_by;              /* the history entry's created_by */
	const char *source;                  /* shown by inspect ("commit NAME") */
	char *const *changes;                /* "ENV K=V", "WORKDIR D", "CMD ...", "USER U", "LABEL K=V" */
	size_t n_changes;
};

/* Checks changes without applying them: SB_ERR_INVALID naming the first bad one. */
int sb_image_changes_check(char *const *changes, size_t n, struct sb_error *err);

/* Writes the config and manifest of parent + layer (NULL: the config
 * changes only, a history entry with empty_layer) and installs the image
 * (the layer is unpacked by the store's own unpacker on top of the parent's
 * layers). digest receives the new manifest digest. The caller may hold the
 * root lock shared (to keep prune from the new blobs); it is released. */
int sb_image_commit(char digest[SB_DIGEST_STR_LEN], struct sb_root *root, const struct sb_image_new_layer *layer,
		    const struct sb_image_commit_opts *o, struct sb_error *err);

#endif
