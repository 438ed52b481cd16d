#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/fs.h"
#include "base/log.h"
#include "base/i18n.h"
#include "internal.h"
#include "base/hooks.h"

/* how long an unmount waits for the last user of a sandbox's root file
 * system (runsc's gofer) to let go */
#define UMOUNT_WAIT_MS 5000

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
	/* which of the four is missing, when one is */
	const char *const dirs[] = { target, lower, upper, work };
	for (size_t i = 0; rc < 0 && e == ENOENT && i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (access(dirs[i], F_OK) < 0)
			return sb_error_set(err, SB_ERR_IO, _("cannot mount the overlay disk at '%s': '%s' is missing"), target,
					    dirs[i]);
	if (rc < 0)
		return sb_error_errno(err, SB_ERR_IO, e, _("cannot mount the overlay disk at '%s'"), target);
	return 0;
}

int sb_overlay_umount(const char *target, struct sb_error *err)
{
	long long start = sb_clock_monotonic_ms();

	/* busy while runsc's gofer, killed with its sandbox, is still ending. A
	 * lazy unmount at once would leave this overlay alive, detached, on the
	 * upper and work directories that the next boot mounts a new overlay on
	 * (two on one upper: undefined, and a restore right after a stop found
	 * its directories missing). So it waits for the gofer, and only past the
	 * deadline unmounts lazily. */
	while (sb_fs_mount_point(target)) {
		if (umount2(target, UMOUNT_NOFOLLOW) == 0)
			continue;
		if (errno != EBUSY)
			return sb_error_errno(err, SB_ERR_IO, errno, _("cannot unmount '%s'"), target);
		if (sb_clock_monotonic_ms() - start > UMOUNT_WAIT_MS) {
			sb_log("overlay: '%s' still busy after %d ms: unmounted lazily", target, UMOUNT_WAIT_MS);
			if (umount2(target, MNT_DETACH | UMOUNT_NOFOLLOW) < 0)
				return sb_error_errno(err, SB_ERR_IO, errno, _("cannot unmount '%s'"), target);
			return 0;
		}
		struct timespec ts = { 0, 2000000 };
		nanosleep(&ts, NULL);
	}
	if (sb_clock_monotonic_ms() - start > 1)
		sb_log("overlay: '%s' unmounted after %lld ms", target, sb_clock_monotonic_ms() - start);
	return 0;
}
