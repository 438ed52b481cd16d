/* Path handling of the layer unpacker: entry names are checked, then resolved
 * inside the image root as if it were "/", so that a layer can write through
 * the symlinks of the layers below it (merged /usr) and never out of the root. */
#ifndef SB_UNPACK_PATH_H
#define SB_UNPACK_PATH_H

#include <limits.h>
#include <stddef.h>

#include "error.h"

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

#endif
