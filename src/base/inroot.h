/* Reading files inside a tree that someone else controls (a sandbox's rootfs,
 * upper directory or workspace) from the host: the host never follows a path
 * such a tree can write. Every lookup is resolved by the kernel with the tree
 * as its root (openat2 RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS |
 * RESOLVE_NO_XDEV): absolute symlinks and ".." stay inside, /proc magic links
 * and other mounts are refused. Only regular files are opened (a FIFO, device
 * or socket is never opened at all), and their size is capped. */
#ifndef SB_INROOT_H
#define SB_INROOT_H

#include <stddef.h>
#include <sys/stat.h>

#include "base/error.h"

/* Reads the regular file at path inside the directory root (a trusted host
 * path) into *out (malloc'd, NUL-terminated; *len its length, len may be
 * NULL). Errors name the file: SB_ERR_NOTFOUND when it does not exist inside
 * the root (a symlink leading out of it leads nowhere), SB_ERR_UNSAFE when it
 * is not a regular file or the lookup met a magic link or a mount point,
 * SB_ERR_LIMIT when it holds more than cap bytes (nothing is returned then),
 * SB_ERR_PREREQ when the kernel has no openat2 (Linux 5.6). */
int sb_inroot_read(char **out, size_t *len, const char *root, const char *path, size_t cap,
		   struct sb_error *err);
/* The stat of what path names inside root (symlinks followed inside it),
 * without opening it: a FIFO or device is only looked at. The same errors as
 * sb_inroot_read, except that any file type is accepted. */
int sb_inroot_stat(struct stat *out, const char *root, const char *path, struct sb_error *err);

#endif
