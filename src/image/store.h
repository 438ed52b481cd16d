/* The image store: images pinned by manifest digest, unpacked once into
 * ROOT/images/rootfs/<hex>/ (the read-only lower layer of every sandbox made
 * from them), and the references (name:tag) that point at them, kept with each
 * image's metadata in ROOT/images/refs.json. The blobs themselves live in the
 * blob store (blob_store.h). */
#ifndef SB_IMAGE_STORE_H
#define SB_IMAGE_STORE_H

#include <jansson.h>
#include <stddef.h>

#include "base/digest.h"
#include "base/error.h"
#include "base/progress.h"
#include "base/root.h"

#define SB_IMAGE_REF_MAX 512

struct sb_image_layer {
	char digest[SB_DIGEST_STR_LEN];
	char *media_type;
	unsigned long long size;             /* bytes of the (compressed) blob */
};

struct sb_image_info {
	char ref[SB_IMAGE_REF_MAX];          /* canonical reference; "" when only known by digest */
	char digest[SB_DIGEST_STR_LEN];      /* manifest digest: what sandboxes pin */
	char *rootfs;                        /* absolute path of the unpacked image */
	char config_digest[SB_DIGEST_STR_LEN];
	char *platform;                      /* "linux/amd64" */
	char *created;                       /* from the image config, may be NULL */
	char *installed;                     /* RFC 3339 UTC time of the install */
	char *source;                        /* where it came from ("import ...", "pull ...") */
	char parent[SB_DIGEST_STR_LEN];      /* the image it was committed on top of; "" for none */
	char *exec_config;                   /* inspect only: the config's process defaults (Env, Cmd,
					      * WorkingDir, User, Labels, ...) as compact JSON; NULL: none */
	unsigned long long size;             /* bytes of the unpacked rootfs */
	unsigned long long content_size;     /* bytes of the layer blobs */
	struct sb_image_layer *layers;
	size_t n_layers;
	char **refs;                         /* every reference pointing at this image */
	size_t n_refs;
	char **used_by;                      /* sandboxes created from it (names) */
	size_t n_used_by;
};

/* Installs an image whose manifest, config and layers are already verified in
 * the blob store: unpacks the layers in order into a temporary directory next
 * to its rootfs and renames it into place, so a failure or kill never leaves a
 * half image that looks complete (leftovers are cleaned by the next install or
 * prune). An image already unpacked is not unpacked again. Then records
 * ref_name (NULL for none; recorded in canonical form) -> manifest_digest. source says where
 * the image came from (shown by inspect; NULL: unknown).
 * Holds the root lock shared while unpacking and exclusively for its final
 * step, and returns with the lock released: a caller holding it shared (to keep
 * prune away from blobs it just wrote) may call this directly. */
int sb_image_install(struct sb_root *root, const char *ref_name, const char *manifest_digest,
		     const struct sb_progress *progress, struct sb_error *err);
/* Same, recording source. */
int sb_image_install_from(struct sb_root *root, const char *ref_name, const char *manifest_digest,
			  const char *source, const struct sb_progress *progress, struct sb_error *err);

/* Installs like sb_image_install_from, recording parent (a manifest digest,
 * NULL for none) as the image it was made from. */
int sb_image_install_child(struct sb_root *root, const char *ref_name, const char *manifest_digest,
			   const char *source, const char *parent, const struct sb_progress *progress,
			   struct sb_error *err);

/* The canonical form of a reference, as the store records it
 * ("python:3.12" -> "docker.io/library/python:3.12"). */
int sb_image_canonical_ref(char out[SB_IMAGE_REF_MAX], const char *name, struct sb_error *err);
/* The canonical name of an image made on this machine (bootstrap, import,
 * commit, build): sb_image_ref_local ("tools" -> "localhost/tools:latest"),
 * into a buffer. Lookups of a name without a registry find it as well. */
int sb_image_local_ref(char out[SB_IMAGE_REF_MAX], const char *name, struct sb_error *err);

/* Finds an installed image by reference ("python:3.12", canonical or not,
 * "name@sha256:..."), by manifest digest, or by a unique prefix of at least 6
 * hex digits of it. A name without a registry that is not recorded under
 * docker.io is looked up under localhost/ (images made here). SB_ERR_NOTFOUND
 * when there is none. */
int sb_image_resolve(struct sb_image_info *out, struct sb_root *root, const char *ref_or_digest,
		     struct sb_error *err);
/* Fills exec_config of a resolved image: its config's "config" member
 * (what a process starts with) as compact JSON; NULL when it has none. */
int sb_image_read_exec_config(struct sb_image_info *out, struct sb_root *root, struct sb_error *err);
/* resolve plus the sandboxes using it (used_by) and exec_config. */
int sb_image_inspect(struct sb_image_info *out, struct sb_root *root, const char *ref_or_digest,
		     struct sb_error *err);
void sb_image_info_clear(struct sb_image_info *info);
/* An image as JSON, the same for ls, inspect and results. New reference. */
json_t *sb_image_info_json(const struct sb_image_info *info);

/* A row per reference, sorted, then the images without any (by digest), all
 * with used_by filled: what `image ls` shows. */
int sb_image_list(struct sb_image_info **out, size_t *count, struct sb_root *root, struct sb_error *err);
void sb_image_list_free(struct sb_image_info *list, size_t count);

struct sb_image_removal {
	char digest[SB_DIGEST_STR_LEN];      /* the image the reference pointed at */
	int removed_image;                   /* 1: its last reference went, so did its rootfs */
	char **broken;                       /* with force: sandboxes that used it (now broken) */
	size_t n_broken;
};

/* Removes a reference, or (given a digest) the image with all its references.
 * When the last reference of an image goes, the image goes: refused with
 * SB_ERR_BUSY naming the sandboxes while one uses it, unless force, which
 * removes it anyway and lists those sandboxes in out->broken (they can no
 * longer be started or restored). Blobs are left to prune. */
int sb_image_remove(struct sb_image_removal *out, struct sb_root *root, const char *ref_or_digest, int force,
		    struct sb_error *err);
void sb_image_removal_clear(struct sb_image_removal *r);

struct sb_image_prune_report {
	size_t images;                       /* images with no reference that no sandbox uses */
	size_t blobs;                        /* blobs no remaining image refers to */
	size_t rootfs;                       /* unpacked trees of no image, leftover unpack dirs */
	size_t partial;                      /* partial downloads */
	size_t cache_entries;                /* build cache entries dropped (SB_IMAGE_PRUNE_BUILD_CACHE) */
	unsigned long long bytes;            /* freed */
};

enum sb_image_prune_flags {
	/* drop image build's step cache first: the intermediate images it kept go too */
	SB_IMAGE_PRUNE_BUILD_CACHE = 1 << 0,
	/* remove nothing: the same report, of what would go now */
	SB_IMAGE_PRUNE_DRY_RUN = 1 << 1,
};

/* Removes images nothing points at (no reference, no sandbox, no entry of
 * image build's step cache), then blobs no remaining image refers to,
 * rootfs directories of no image, dead temporary unpack directories and
 * partial downloads. Blobs of an install in progress are kept. flags:
 * sb_image_prune_flags. */
int sb_image_prune(struct sb_image_prune_report *out, struct sb_root *root, unsigned flags, struct sb_error *err);

#endif
