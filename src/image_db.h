/* ROOT/images/refs.json, the image store's index (internal to the store):
 *   {"schema": 1,
 *    "refs":   {"<canonical ref>": "<manifest digest>"},
 *    "images": {"<manifest digest>": {"config", "platform", "created", "installed",
 *               "source", "size", "content_size", "layers": [{"digest", "mediaType", "size"}]}}}
 * Readers need no lock (the file is replaced atomically); writers hold the root
 * lock exclusively across load-modify-save. */
#ifndef SB_IMAGE_DB_H
#define SB_IMAGE_DB_H

#include <jansson.h>

#include "error.h"
#include "image_store.h"
#include "root.h"

/* Loads the index; a missing file is an empty index. */
int sb_image_db_load(json_t **out, struct sb_root *root, struct sb_error *err);
int sb_image_db_save(struct sb_root *root, json_t *db, struct sb_error *err);
/* The "refs" / "images" members of a loaded index. */
json_t *sb_image_db_refs(json_t *db);
json_t *sb_image_db_images(json_t *db);
/* Sorted references pointing at digest, as a JSON array of strings. */
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
 * (a JSON object used as a set) when not NULL. */
int sb_image_temp_sweep(struct sb_root *root, json_t *live, size_t *removed, unsigned long long *bytes,
			struct sb_error *err);
/* ROOT/images/rootfs/<hex> (malloc'd). */
char *sb_image_rootfs_path(const struct sb_root *root, const char *digest);

#endif
