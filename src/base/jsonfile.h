/* JSON documents on disk: bounded reads, atomic writes; building documents
 * that are complete or not at all. */
#ifndef SB_JSONFILE_H
#define SB_JSONFILE_H

#include <jansson.h>

#include "base/error.h"

/* Loads a JSON document of at most max bytes; a missing file is SB_ERR_NOTFOUND,
 * a malformed one SB_ERR_FORMAT naming the line. */
int sb_json_load(json_t **out, const char *path, size_t max, struct sb_error *err);
/* Serialises compactly-but-readably and writes atomically (see sb_fs_write_atomic). */
int sb_json_save(const char *path, const json_t *doc, struct sb_error *err);
/* sync 0: without the fsyncs (see sb_fs_replace). */
int sb_json_save_sync(const char *path, const json_t *doc, int sync, struct sb_error *err);

/* Building: jansson's json_array_append_new and json_object_set_new drop the
 * value when they fail (out of memory), and a document missing a mount or a
 * limit must never pass for complete. These take value over and return the
 * container, or release both and return NULL when the container or value is
 * NULL or adding fails, so that a chain of them ends in NULL if any step did:
 * a = sb_json_append(a, json_string(s)). */
json_t *sb_json_append(json_t *array, json_t *value);
/* json_dumps, but NULL when any part could not be written out: jansson's
 * own ignores a failed append of an object key (2.14's dump.c), which can
 * turn {"memory": ..} into {"": ..}, valid JSON without its limit. */
char *sb_json_dumps(const json_t *doc, size_t flags);
json_t *sb_json_set(json_t *object, const char *key, json_t *value);

#endif
