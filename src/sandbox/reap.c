/* Expiry of idle temporary sandboxes: no daemon, run from `sandbench reap`
 * (a systemd timer or --watch) and from the workbench. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "base/i18n.h"
#include "sandbox/sandbox.h"

static int apply(struct sb_root *root, const char *name, enum sb_expiry_action action, long long idle,
		 enum sb_timeline_source source, struct sb_error *err)
{
	char reason[128];

	snprintf(reason, sizeof(reason), _("expired after %lld s idle"), idle);
	if (action == SB_EXPIRY_STOP)
		return sb_box_stop_as(root, name, reason, source, err);
	if (action == SB_EXPIRY_PAUSE)
		return sb_box_pause_as(root, name, reason, source, err);
	return sb_sandbox_remove(root, name, 0, err);
}

static int busy(struct sb_root *root, const char *name)
{
	struct sb_box b;
	int running = sb_box_open(&b, root, name, BOX_LOCK_NONE, 0, NULL) == 0 && sb_box_exec_running(&b);

	sb_box_close(&b);
	return running;
}

int sb_sandbox_reap(struct sb_reap_item **items, size_t *count, struct sb_root *root, unsigned flags,
		    struct sb_error *err)
{
	struct sb_sandbox_info *list;
	size_t n;
	int rc;

	*items = NULL;
	*count = 0;
	if ((rc = sb_sandbox_list(&list, &n, root, err)) < 0)
		return rc;
	*items = calloc(n + 1, sizeof(**items));
	if (!*items) {
		sb_sandbox_list_free(list, n);
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	for (size_t i = 0; i < n; i++) {
		const struct sb_sandbox_info *s = &list[i];
		/* one running a command is active however long ago that command started */
		if (s->expires_in != 0 || s->rec.state == SB_STATE_BROKEN || busy(root, s->rec.name))
			continue;
		struct sb_reap_item *it = &(*items)[(*count)++];
		struct sb_error e2;
		snprintf(it->name, sizeof(it->name), "%s", s->rec.name);
		it->action = sb_sandbox_expiry_due(s);
		it->idle_seconds = s->idle_seconds;
		if (flags & SB_REAP_DRY_RUN)
			continue;
		/* a sandbox touched since the listing is no longer due */
		struct sb_sandbox_info now;
		if (sb_sandbox_inspect(&now, root, s->rec.name, &e2) < 0 || now.expires_in != 0) {
			sb_sandbox_info_clear(&now);
			(*count)--;
			continue;
		}
		sb_sandbox_info_clear(&now);
		it->rc = apply(root, it->name, it->action, it->idle_seconds, SB_TIMELINE_SANDBENCH, &e2);
		if (it->rc < 0)
			snprintf(it->message, sizeof(it->message), "%.255s", e2.msg);
	}
	sb_sandbox_list_free(list, n);
	return 0;
}

int sb_sandbox_expire(struct sb_root *root, const char *name, struct sb_error *err)
{
	struct sb_sandbox_info info;
	int rc = sb_sandbox_inspect(&info, root, name, err);

	if (rc < 0)
		return rc;
	/* expiring now is someone's act, not the reaper's */
	rc = apply(root, name, sb_sandbox_expiry_due(&info), info.idle_seconds, sb_timeline_actor(), err);
	sb_sandbox_info_clear(&info);
	return rc;
}
