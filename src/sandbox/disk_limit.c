/* A sandbox's capped disk (--disk): its upper, overlay work directory and
 * workspace on a file system of their own. Project quotas would cap them in
 * place, but this kind of host's kernel has no quota format for ext4 or xfs,
 * and the overlay writes its upper with its mounter's (root's) credentials,
 * which pass a quota's hard limit (docs/security.md). A file system of fixed
 * size holds for every writer. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fs.h"
#include "base/i18n.h"
#include "base/loopmount.h"
#include "internal.h"

int sb_box_disk_attach(struct sb_box *b, struct sb_error *err)
{
	if (sb_fs_mount_point(b->disk))
		return 0;
	/* two openers at once mount it once */
	int fd = open(b->disk_image, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), rc;
	if (fd < 0)
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot open '%s'"), b->disk_image);
	while ((rc = flock(fd, LOCK_EX)) < 0 && errno == EINTR)
		;
	rc = rc < 0 ? sb_error_errno(err, SB_ERR_IO, errno, _("cannot lock '%s'"), b->disk_image)
	     : sb_fs_mount_point(b->disk) ? 0
					  : sb_loop_mount(b->disk_image, b->disk, err);
	close(fd);
	return rc;
}

int sb_box_disk_make(struct sb_box *b, struct sb_error *err)
{
	int rc = sb_box_set_paths(b, 1, err);

	if (rc == 0 && mkdir(b->disk, 0700) < 0)
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot create '%s'"), b->disk);
	if (rc == 0)
		rc = sb_loop_format(b->disk_image, b->rec.disk, err);
	if (rc == 0)
		rc = sb_box_disk_attach(b, err);
	if (rc < 0)
		sb_error_wrap(err, _("cannot make the disk of sandbox '%s'"), b->rec.name);
	return rc;
}

int sb_box_disk_detach(struct sb_box *b, struct sb_error *err)
{
	return b->capped ? sb_loop_umount(b->disk, err) : 0;
}
