/* JSON documents on disk: bounded reads, atomic writes. */
#ifndef SB_JSONFILE_H
#define SB_JSONFILE_H

#include <jansson.h>

#include "base/error.h"

/* Loads a JSON document of at most max bytes; a missing file is SB_ERR_NOTFOUND,
 * a malformed one SB_ERR_FORMAT naming the line. */
int sb_json_load(json_t **out, const char *path, size_t max, struct sb_error *err);
/* Serialises compactly-but-readably and writes atomically (see sb_fs_write_atomic). */
int sb_json_save(const char *path, const json_t *doc, struct sb_error *err);

#endif
