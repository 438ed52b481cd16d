/* Internal to src/image/: only its own files include this header. */
#ifndef SB_IMAGE_INTERNAL_H
#define SB_IMAGE_INTERNAL_H

#include <jansson.h>
#include <stddef.h>
#include <limits.h>

#include "base/error.h"
#include "image/store.h"
#include "base/root.h"
#include "base/digest.h"
#include "base/progress.h"

/* ROOT/images/refs.json, the image store's index (internal to the store):
 *   {"schema": 1,
 *    "local_names": true (images made here are named under localhost/),
 *    "refs":   {"<canonical ref>": "<manifest digest>"},
 *    "images": {"<manifest digest>": {"config", "platform", "created", "installed",
 *               "source", "size", "content_size", "layers": [{"digest", "mediaType", "size"}]}}}
 * Readers need no lock (the file is replaced atomically); writers hold the root
 * lock exclusively across load-modify-save. */
/* Loads the index; a missing file is an empty index. */
int sb_image_db_load(json_t **out, struct sb_root *root, struct sb_error *err);
int sb_image_db_save(struct sb_root *root, json_t *db, struct sb_error *err);
/* The "refs" / "images" members of a loaded index. */
json_t *sb_image_db_refs(json_t *db);
json_t *sb_image_db_images(json_t *db);
/* Sorted references pointing at digest, as a JSON array of strings; NULL when out of memory. */
json_t *sb_image_db_refs_of(json_t *db, const char *digest);
/* Fills info for the image digest (which must be in the index); ref is the
 * reference to report (NULL: its first). users maps digest -> array of sandbox
 * names (NULL: used_by left empty). */
int sb_image_db_info(struct sb_image_info *out, struct sb_root *root, json_t *db, const char *digest,
		     const char *ref, json_t *users, struct sb_error *err);
/* digest -> [sandbox names] from ROOT/sandboxes/NAME/sandbox.json "image.digest"
 * (records that cannot be read are skipped). */
int sb_image_db_users(json_t **out, struct sb_root *root, struct sb_error *err);
/* Under the exclusive root lock (installs make their temp dirs under the
 * shared one): removes unpack temp dirs of dead installs (counting them in *removed and
 * *bytes when not NULL); the manifest digests of live ones are added to live
 * (a JSON object used as a set) when not NULL. dry_run: only counts them. */
int sb_image_temp_sweep(struct sb_root *root, json_t *live, size_t *removed, unsigned long long *bytes, int dry_run,
			struct sb_error *err);
/* Calls fn for each entry of ROOT/rel (dot ones left out) with its name and
 * path, until one fails; a missing directory has none. */
int sb_image_dir_each(struct sb_root *root, const char *rel,
		      int (*fn)(void *arg, const char *name, const char *path, struct sb_error *err), void *arg,
		      struct sb_error *err);
/* The build cache's entries under the exclusive root lock (build_cache.h):
 * with all, every one is removed and counted in *dropped; else each whose
 * image is in images (the index's "images") is added to users (digest ->
 * [names], as sb_image_db_users makes it) as "build cache", and those whose
 * image is gone are removed. */
int sb_image_cache_sweep(json_t *users, size_t *dropped, struct sb_root *root, json_t *images, int all,
			 int dry_run, struct sb_error *err);
/* Now, UTC, as "2026-01-02T03:04:05Z" (size >= 21). */
void sb_image_now_rfc3339(char *buf, size_t size);
/* ROOT/images/rootfs/<hex> (malloc'd). */
char *sb_image_rootfs_path(const struct sb_root *root, const char *digest);

/* What `image import` reads from (internal to import): a directory (OCI image
 * layout, unpacked `docker save`) or a tar file (OCI archive, `docker save`, or
 * a plain rootfs tar), behind one interface. Files of an archive go into the
 * blob store in one streaming pass, verified against their names when they are
 * blobs/sha256/<hex>; a directory's files are copied and verified on demand. */
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

/* Secure, streaming extraction of one OCI image layer (a tar, plain, gzip or
 * zstd) into an image root, with OCI whiteouts. */
#define SB_UNPACK_DEFAULT_MAX_BYTES (64ULL << 30)   /* 64 GiB of file data */
#define SB_UNPACK_DEFAULT_MAX_ENTRIES 2000000ULL

struct sb_unpack_limits {
	unsigned long long max_bytes;    /* total uncompressed file bytes; 0: default */
	unsigned long long max_entries;  /* archive entries, whiteouts included; 0: default */
};

/* Applies the layer at layer_path to the directory root_fd, on top of what
 * earlier layers left there. Compression is detected from the magic bytes.
 *
 * Every entry's parent is resolved inside the root as if it were "/" (see
 * unpack_path.h), so a layer writes through the symlinks of the layers below
 * (lib -> usr/lib) but nothing is ever written, linked or removed outside
 * the root. ".wh.NAME" removes NAME of the layers below; "DIR/.wh..wh..opq"
 * removes what DIR held before this layer (wherever the marker is in the
 * archive); what the layer itself wrote stays in both cases (OCI); other
 * ".wh..wh.*" (aufs) entries are ignored. A non-directory replacing a
 * directory of the same layer is refused (libarchive fixes directories up by
 * path when the layer ends). Modes (setuid included), numeric
 * owners (names are never looked up on the host), user.* and
 * security.capability xattrs and mtimes are kept; device nodes are skipped
 * (a device file on the host disk would bypass the sandbox). The image root
 * holds setuid files of the image: its parent must not be open to other users.
 *
 * Memory stays bounded whatever the layer size (it grows with the number of
 * entries). The call changes the working directory of the process while it
 * runs and restores it: not for multi-threaded callers.
 *
 * Errors: SB_ERR_UNSAFE for hostile entries (message names the entry),
 * SB_ERR_LIMIT when limits (NULL: defaults) are exceeded, SB_ERR_FORMAT for a
 * corrupt archive or an unsupported compression, SB_ERR_IO / SB_ERR_NOSPACE.
 * On error the root is left partly written: the caller discards it.
 * progress gets SB_PROGRESS_UNPACK events: done/total are compressed bytes
 * read / the layer's file size. */
int sb_unpack_layer(int root_fd, const char *layer_path, const struct sb_unpack_limits *limits,
		    const struct sb_progress *progress, struct sb_error *err);

/* Path handling of the layer unpacker: entry names are checked, then resolved
 * inside the image root as if it were "/", so that a layer can write through
 * the symlinks of the layers below it (merged /usr) and never out of the root. */
/* Symlinks followed while resolving one path, like the kernel's MAXSYMLINKS. */
#define SB_UNPACK_MAX_HOPS 40

/* Normalizes the name of an archive entry into out (PATH_MAX bytes): "." and
 * empty components are dropped, "" is the root itself. An absolute name, a
 * ".." component or an over-long name is refused with SB_ERR_UNSAFE; what
 * names the entry in the message. */
int sb_unpack_clean_name(char *out, const char *name, const char *what, struct sb_error *err);

/* Resolves the relative path inside the directory root_fd, following every
 * symlink in it: an absolute target restarts at the root, ".." stops at the
 * root, at most SB_UNPACK_MAX_HOPS links. Components that do not exist (or
 * exist below a non-directory) are kept as written. out (PATH_MAX bytes)
 * receives a relative path free of symlinks and of "..": "" is the root.
 * SB_ERR_UNSAFE on a loop or an over-long result, SB_ERR_IO otherwise. */
int sb_unpack_resolve(char *out, int root_fd, const char *path, struct sb_error *err);

/* gzip layers are inflated in a thread of their own while the extraction
 * reads the plain tar from a socket: inflating is the larger half of the work
 * and runs on another core beside the file writes. */
struct sb_gunzip;

/* Starts inflating gz_fd (read from its current offset; the caller keeps it
 * open until sb_gunzip_finish); *tar_fd receives the plain stream, to be read
 * to its end or closed by the caller. */
int sb_gunzip_start(struct sb_gunzip **out, int *tar_fd, int gz_fd, const char *what, struct sb_error *err);
/* Compressed bytes consumed so far (for progress). */
unsigned long long sb_gunzip_consumed(struct sb_gunzip *g);
/* Waits for the thread (closing *tar_fd first makes it stop early) and frees g;
 * SB_ERR_FORMAT when the gzip stream was corrupt or truncated. NULL is fine. */
int sb_gunzip_finish(struct sb_gunzip *g, struct sb_error *err);

/* A set of strings (relative paths), each with a few flag bits. The unpacker
 * records what a layer wrote in one, so its memory grows with the number of
 * entries of a layer, never with their bytes. */
struct sb_pathset;

/* NULL when out of memory. */
struct sb_pathset *sb_pathset_new(void);
void sb_pathset_free(struct sb_pathset *set);
/* Adds path[0..len) or ORs flags into its existing bits. Returns 1 when the
 * path was new, 0 when it was present, SB_ERR_NOMEM. */
int sb_pathset_add(struct sb_pathset *set, const char *path, size_t len, unsigned flags);
/* The flag bits of path[0..len), or -1 when it is not in the set. */
int sb_pathset_get(const struct sb_pathset *set, const char *path, size_t len);

#endif
