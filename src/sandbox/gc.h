/* gc: reconciles what the records say with what exists on the host (runsc
 * containers, overlay mounts, cgroups, network objects, half-made sandbox
 * directories) after crashes, kills and reboots. It never removes a permanent
 * sandbox that still has a record: such a sandbox is marked broken instead. */
#ifndef SB_GC_H
#define SB_GC_H

#include <stddef.h>

#include "base/error.h"
#include "base/root.h"

enum sb_gc_flags {
	SB_GC_DRY_RUN = 1 << 0,   /* report what would be done, change nothing */
};

struct sb_gc_item {
	char kind[16];            /* "sandbox", "container", "mount", "lease", "netns", "veth", "bridge" */
	char name[256];           /* the sandbox, container id, path or interface */
	const char *action;       /* what was (or would be) done (N_ string: translate for display) */
	int rc;                   /* 0, or the negative error of the action */
	char message[1024];       /* the error when rc < 0, or more about the finding */
};

/* Reconciles the root; *items lists every finding (free() it). */
int sb_gc(struct sb_gc_item **items, size_t *count, struct sb_root *root, unsigned flags, struct sb_error *err);

#endif
