/* The state root: where sandbench keeps everything (see DESIGN.md, "State root"). */
#ifndef SB_ROOT_H
#define SB_ROOT_H

#include "base/error.h"

struct sb_root;

enum sb_lock_mode {
	SB_LOCK_SHARED,
	SB_LOCK_EXCLUSIVE,
};

/* Opens (creating the layout when needed) the state root at path; NULL means
 * $SANDBENCH_ROOT, else the built-in default /var/lib/sandbench. */
int sb_root_open(struct sb_root **out, const char *path, struct sb_error *err);
void sb_root_close(struct sb_root *root);
/* Absolute, canonical path of the root. */
const char *sb_root_path(const struct sb_root *root);
/* A malloc'd path below the root: sb_root_file(root, "images/refs.json"). */
char *sb_root_file(const struct sb_root *root, const char *rel);
/* ROOT/sandboxes/<name>/sandbox.json, where a sandbox's record is (malloc'd;
 * NULL when out of memory). In the root's layout because the image store (which
 * images are in use) and the network (which leases are orphans) read records
 * too. name is one path component (see sb_name_check). */
char *sb_root_record_file(const struct sb_root *root, const char *name);
/* flock on ROOT/lock for mutating operations; waits for it. Locks do not nest:
 * sb_root_lock on a root that holds the lock changes its mode. */
int sb_root_lock(struct sb_root *root, enum sb_lock_mode mode, struct sb_error *err);
void sb_root_unlock(struct sb_root *root);

#endif
