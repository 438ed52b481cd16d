#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "base/fs.h"
#include "base/i18n.h"
#include "internal.h"
#include "base/hooks.h"

/* overlayfs splits its options at ',' and lowerdir at ':'; refuse such paths
 * rather than mount something else. */
static int safe_path(const char *p)
{
	return p[0] == '/' && !strpbrk(p, ",:\\");
}

int sb_overlay_mount(const char *target, const char *lower, const char *upper, const char *work, int volatile_,
		     struct sb_error *err)
{
	if (sb_fs_mount_point(target))
		return 0;
	if (!safe_path(target) || !safe_path(lower) || !safe_path(upper) || !safe_path(work))
		return sb_error_set(err, SB_ERR_INVALID, _("cannot mount the disk at '%s': paths must be absolute "
							   "and free of ',', ':' and '\\'"), target);
	char *opts = sb_strdupf("lowerdir=%s,upperdir=%s,workdir=%s%s", lower, upper, work, volatile_ ? ",volatile" : "");
	char *marker = sb_path_join(work, "work/incompat/volatile");
	if (!opts || !marker) {
		free(opts);
		free(marker);
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	/* overlayfs refuses to mount again over a volatile upper layer until this
	 * marker is gone: it cannot tell a clean unmount from a crash. The caller
	 * chose volatile knowing the disk is expendable. */
	if (volatile_)
		sb_fs_remove_tree(marker, NULL);
	free(marker);
	int rc = sb_fault_point(SB_FAULT_RUN, "mount overlay") < 0 ? -1 : mount("overlay", target, "overlay", MS_NODEV, opts);
	int e = errno;
	free(opts);
	if (rc < 0)
		return sb_error_errno(err, SB_ERR_IO, e, _("cannot mount the overlay disk at '%s'"), target);
	return 0;
}

int sb_overlay_umount(const char *target, struct sb_error *err)
{
	if (!sb_fs_mount_point(target))
		return 0;
	if (umount2(target, UMOUNT_NOFOLLOW) == 0)
		return 0;
	if (errno == EBUSY && umount2(target, MNT_DETACH | UMOUNT_NOFOLLOW) == 0)
		return 0;
	return sb_error_errno(err, SB_ERR_IO, errno, _("cannot unmount '%s'"), target);
}
