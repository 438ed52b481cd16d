/* Sandboxes whose runtime is gone while their record says running: the host
 * restarted (the boot id of their last boot is not this boot's) or their
 * sandbox process died. Such a sandbox is stopped, its disk kept, and
 * restore cold-starts it; a temporary one whose host restarted is removed,
 * since its disk had no syncs (its upper may be torn). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "base/fs.h"
#include "base/host.h"
#include "base/i18n.h"
#include "base/log.h"
#include "internal.h"
#include "sandbox/sandbox.h"

enum sb_gone sb_sandbox_gone(const struct sb_record *rec, const char *dir, const struct sb_backend_ops *be,
			     void *be_state)
{
	char boot[SB_HOST_BOOT_ID_LEN];

	if (!sb_sandbox_state_live(rec->state))
		return SB_ALIVE;
	if (rec->boot_id[0] && sb_host_boot_id(boot, NULL) == 0 && strcmp(boot, rec->boot_id) != 0)
		return SB_GONE_RESTART;
	struct sb_backend_sandbox t = { .rec = rec, .dir = dir };
	if (be->alive(be_state, &t))
		return SB_ALIVE;
	return be->out_of_memory && be->out_of_memory(be_state, &t) ? SB_GONE_MEMORY : SB_GONE_DIED;
}

const char *sb_gone_reason(enum sb_gone why)
{
	switch (why) {
	case SB_GONE_RESTART:
		return _("the host restarted: its processes are gone, its disk is kept; restore cold-starts it");
	case SB_GONE_DIED:
		return _("the sandbox died (crash or kill): its disk is kept; restore cold-starts it");
	case SB_GONE_MEMORY:
		return _("it used more memory than its limit (--memory) and the host ended it whole: its disk is kept; "
			 "restore cold-starts it");
	default:
		return "";
	}
}

enum sb_gone sb_box_gone(struct sb_box *b)
{
	if (!b->loaded || !sb_sandbox_state_live(b->rec.state) || sb_box_backend(b, NULL) < 0)
		return SB_ALIVE;
	return sb_sandbox_gone(&b->rec, b->dir, b->be, b->be_state);
}

/* The ids of the sandbox's sessions whose holder still lives (it holds its
 * lock file exclusively: the session module's test), ", "-separated; NULL
 * when none (malloc'd). */
static char *live_sessions(const char *dir)
{
	char *path = sb_path_join(dir, "sessions"), *list = NULL;
	DIR *d = path ? opendir(path) : NULL;
	struct dirent *de;

	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char *lock = sb_strdupf("%s/%s/lock", path, de->d_name);
		int fd = lock ? open(lock, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) : -1;
		int live = fd >= 0 && flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK;
		if (fd >= 0)
			close(fd);
		free(lock);
		char *more = live ? sb_strdupf("%s%s%s", list ? list : "", list ? ", " : "", de->d_name) : NULL;
		if (more) {
			free(list);
			list = more;
		}
	}
	if (d)
		closedir(d);
	free(path);
	return list;
}

int sb_box_settle(struct sb_box *b, enum sb_gone why, int *removed, struct sb_error *err)
{
	struct sb_error ignored;
	/* the sessions it ended, named where the user reads why */
	char *sessions = why == SB_GONE_MEMORY ? live_sessions(b->dir) : NULL;
	char *reason = sessions ? sb_strdupf(_("%s; sessions ended: %s"), sb_gone_reason(why), sessions) : NULL;

	free(sessions);
	*removed = 0;
	/* what is left of it: a deleted container's state, a mounted disk, cgroups */
	sb_box_end_shells(b);
	sb_box_teardown(b, 1, &ignored);
	if (why == SB_GONE_RESTART && b->rec.kind == SB_KIND_TEMPORARY) {
		sb_log("removing temporary sandbox '%s': %s", b->rec.name, _("the host restarted and its disk had no syncs"));
		*removed = 1;
		free(reason);
		return sb_box_destroy(b, 1, err);
	}
	int rc = sb_record_transition_as(b->root, &b->rec, SB_STATE_STOPPED, reason ? reason : sb_gone_reason(why),
					 SB_TIMELINE_SANDBENCH, err);
	free(reason);
	return rc;
}

int sb_box_settle_if_gone(struct sb_box *b, struct sb_error *err)
{
	enum sb_gone why = sb_box_gone(b);
	int removed, rc;

	if (why == SB_ALIVE)
		return 0;
	if ((rc = sb_box_settle(b, why, &removed, err)) < 0)
		return rc;
	return removed ? sb_error_set(err, SB_ERR_NOTFOUND, _("sandbox '%s' was temporary and the host restarted: it is "
							   "removed"), b->rec.name)
		       : 0;
}
