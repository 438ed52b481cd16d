/* A set of strings (relative paths), each with a few flag bits. The unpacker
 * records what a layer wrote in one, so its memory grows with the number of
 * entries of a layer, never with their bytes. */
#ifndef SB_PATHSET_H
#define SB_PATHSET_H

#include <stddef.h>

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
