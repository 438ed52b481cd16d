#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/fs.h"
#include "base/hooks.h"
#include "base/i18n.h"
#include "base/loopmount.h"
#include "base/proc.h"

/* Another process may take the device LOOP_CTL_GET_FREE named before this one
 * configures it; each loss costs a retry. */
#define LOOP_TRIES 16

int sb_loop_format(const char *image, unsigned long long size, struct sb_error *err)
{
	int fd = open(image, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd < 0)
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot create '%s'"), image);
	int rc = ftruncate(fd, (off_t)size) < 0 ? sb_error_errno(err, SB_ERR_IO, errno, _("cannot size '%s'"), image) : 0;
	close(fd);
	if (rc < 0)
		return rc;
	/* -m 0: no blocks kept for root. A new sparse file reads as zeros: nothing
	 * to discard, and the journal need not be zeroed (nor, at the mount, the
	 * inode tables: noinit_itable), which would write 32 MiB of a 1 GiB disk */
	char *const argv[] = { "mkfs.ext4", "-q", "-F", "-m", "0", "-E", "nodiscard,lazy_journal_init=1", (char *)image, NULL };
	struct sb_proc_opts o = SB_PROC_OPTS_DEFAULT;
	struct sb_proc_result r;
	char line[256];

	if ((rc = sb_proc_run(&r, argv, &o, err)) < 0)
		return rc;
	if (r.status == 127)
		rc = sb_error_set(err, SB_ERR_PREREQ, _("cannot cap the disk: mkfs.ext4 is missing (install e2fsprogs)"));
	else if (r.status != 0)
		rc = sb_error_set(err, SB_ERR_IO, _("cannot format '%s': %s"), image, sb_proc_last_line(&r, line, sizeof(line)));
	sb_proc_result_clear(&r);
	return rc;
}

/* A free loop device configured on the image, as an open fd (-1 on failure). */
static int loop_attach(const char *image, struct sb_error *err)
{
	int ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC), rc = -1;

	if (ctl < 0)
		return sb_error_errno(err, errno == ENOENT ? SB_ERR_PREREQ : SB_ERR_IO, errno,
				      _("cannot cap the disk: this host has no loop devices (/dev/loop-control)"));
	int img = open(image, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (img < 0) {
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot open '%s'"), image);
		close(ctl);
		return rc;
	}
	struct loop_config cfg = { .fd = (unsigned)img, .info = { .lo_flags = LO_FLAGS_AUTOCLEAR } };
	snprintf((char *)cfg.info.lo_file_name, sizeof(cfg.info.lo_file_name), "%s", image);
	for (int i = 0; i < LOOP_TRIES && rc < 0; i++) {
		long n = ioctl(ctl, LOOP_CTL_GET_FREE);
		char dev[32];
		if (n < 0)
			break;
		snprintf(dev, sizeof(dev), "/dev/loop%ld", n);
		int fd = open(dev, O_RDWR | O_CLOEXEC);
		if (fd >= 0 && ioctl(fd, LOOP_CONFIGURE, &cfg) == 0) {
			rc = fd;
			break;
		}
		int e = errno;
		if (fd >= 0)
			close(fd);
		if (e != EBUSY)
			break;
	}
	if (rc < 0)
		sb_error_errno(err, SB_ERR_IO, errno, _("cannot attach '%s' to a loop device"), image);
	close(img);
	close(ctl);
	return rc < 0 ? SB_ERR_IO : rc;
}

/* The loop device already on image, as an open fd (it cannot detach while
 * held), or -1. An earlier mount of the image can outlive its mount point: in
 * the mount namespace of a process that has not ended yet, or unmounted
 * lazily while busy. A second device would mount a second file system on
 * the same blocks, each blind to what the other has not yet written; the
 * same device mounts the same one. */
static int loop_find(const char *image)
{
	DIR *d = opendir("/sys/block");
	struct dirent *de;
	struct stat st;
	int found = -1;

	if (!d || stat(image, &st) < 0) {
		if (d)
			closedir(d);
		return -1;
	}
	while (found < 0 && (de = readdir(d))) {
		struct loop_info64 info;
		char dev[sizeof("/dev/") + sizeof(de->d_name)];
		if (strncmp(de->d_name, "loop", 4))
			continue;
		snprintf(dev, sizeof(dev), "/dev/%s", de->d_name);
		int fd = open(dev, O_RDWR | O_CLOEXEC);
		/* not bound (or going): ENXIO */
		if (fd >= 0 && ioctl(fd, LOOP_GET_STATUS64, &info) == 0 && info.lo_device == st.st_dev &&
		    info.lo_inode == st.st_ino)
			found = fd;
		else if (fd >= 0)
			close(fd);
	}
	closedir(d);
	return found;
}

int sb_loop_mount(const char *image, const char *target, struct sb_error *err)
{
	int fd = loop_find(image);

	if (fd < 0)
		fd = loop_attach(image, err);

	if (fd < 0)
		return fd;
	char dev[32];
	struct stat st;
	int rc = fstat(fd, &st);
	snprintf(dev, sizeof(dev), "/dev/loop%u", rc == 0 ? minor(st.st_rdev) : 0);
	rc = rc < 0 || sb_fault_point(SB_FAULT_RUN, "mount disk") < 0 ? -1
									    : mount(dev, target, "ext4", MS_NODEV | MS_NOSUID, "noinit_itable");
	int e = errno;
	/* autoclear: the device goes with its last user, the mount, or now */
	close(fd);
	return rc < 0 ? sb_error_errno(err, SB_ERR_IO, e, _("cannot mount the disk of '%s' at '%s'"), image, target) : 0;
}

int sb_loop_umount(const char *path, struct sb_error *err)
{
	while (sb_fs_mount_point(path))
		if (umount2(path, UMOUNT_NOFOLLOW) < 0 &&
		    (errno != EBUSY || umount2(path, MNT_DETACH | UMOUNT_NOFOLLOW) < 0))
			return sb_error_errno(err, SB_ERR_IO, errno, _("cannot unmount '%s'"), path);
	return 0;
}
