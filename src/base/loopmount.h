/* File systems in image files, mounted through a loop device: a fixed-size
 * disk of its own for whatever is written below the mount point. */
#ifndef SB_LOOPMOUNT_H
#define SB_LOOPMOUNT_H

#include "base/error.h"

/* Makes image (new: O_EXCL, mode 0600, sparse) size bytes long and formats
 * it as ext4 with no blocks reserved for root (everything that writes to it
 * is root: the cap must hold for them). SB_ERR_PREREQ when mkfs.ext4 is
 * missing. */
int sb_loop_format(const char *image, unsigned long long size, struct sb_error *err);
/* Mounts the ext4 of image at target (nodev, nosuid) through a free loop
 * device that detaches itself at the unmount, or through the one image is
 * still on (an earlier mount that lives on elsewhere: the same file system,
 * not a second one on its blocks). SB_ERR_PREREQ when this host has no loop
 * devices. */
int sb_loop_mount(const char *image, const char *target, struct sb_error *err);
/* Unmounts path until nothing is mounted there (lazily when busy); nothing
 * mounted is not an error. */
int sb_loop_umount(const char *path, struct sb_error *err);

#endif
