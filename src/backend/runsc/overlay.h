/* A sandbox's disk: an overlay whose lower layer is the image rootfs (shared,
 * read-only) and whose upper/work dirs belong to the sandbox. */
#ifndef SB_OVERLAY_H
#define SB_OVERLAY_H

#include "base/error.h"

/* Mounts target (idempotent: an overlay already there is fine). volatile:
 * no syncs to the upper layer, so unmounting costs no filesystem-wide sync
 * (~100 ms on a busy host); for disks that a host crash may lose anyway. */
int sb_overlay_mount(const char *target, const char *lower, const char *upper, const char *work, int volatile_,
		     struct sb_error *err);
/* Unmounts target if mounted; busy mounts are detached lazily. */
int sb_overlay_umount(const char *target, struct sb_error *err);
/* 1 when something is mounted at path (its device differs from its parent's). */
int sb_overlay_mounted(const char *path);

#endif
