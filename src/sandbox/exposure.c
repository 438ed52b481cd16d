/* Exposure: per sandbox, what it reaches and what reaches it (network and
 * its policy, published ports, host folders, the exchange folder) and which
 * of that widens access beyond the defaults (network off, no host folders,
 * nothing published). Records and timelines only: no runsc call. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/i18n.h"
#include "sandbox/cleanup.h"
#include "sandbox/sandbox.h"

/* Appends "text" with a space before all but the first; -1 when out of memory. */
static int word(struct sb_buf *b, const char *text)
{
	return (b->len && sb_buf_add(b, " ", 1) < 0) || sb_buf_add(b, text, strlen(text)) < 0 ? -1 : 0;
}

static char *text_of(struct sb_buf *b)
{
	char *t = sb_buf_steal(b, NULL);
	return t ? t : strdup("");
}

/* Connections the egress policy dropped, as the timeline counts them. */
static unsigned long long denied_count(struct sb_root *root, const char *name)
{
	struct sb_timeline_query q = { .flags = SB_TIMELINE_NO_OUTPUT };
	struct sb_timeline *t;
	unsigned long long n = 0;

	if (sb_timeline_read(&t, root, name, &q, NULL) < 0)
		return 0;
	for (size_t i = 0; i < t->count; i++)
		if (t->entries[i].kind == SB_TIMELINE_NETWORK && t->entries[i].text &&
		    !strncmp(t->entries[i].text, "denied", 6))
			n++;
	sb_timeline_free(t);
	return n;
}

static int fill(struct sb_exposure *x, struct sb_root *root, const struct sb_sandbox_info *s)
{
	const struct sb_record *r = &s->rec;
	struct sb_buf pub = { 0 }, rw = { 0 };
	char item[600];
	int rc = 0;

	snprintf(x->name, sizeof(x->name), "%s", r->name);
	snprintf(x->owner, sizeof(x->owner), "%s", r->owner ? r->owner : "");
	x->state = sb_sandbox_state_name(r->state);
	x->network = r->network;
	x->exchange = r->exchange;
	x->egress = r->network ? sb_sandbox_egress_text(root, r) : strdup("");
	if (r->network) {
		x->warn |= SB_EXPOSE_NETWORK;
		if (r->egress.mode == SB_EGRESS_DEFAULT)
			x->warn |= SB_EXPOSE_OPEN_EGRESS;
		x->denied = denied_count(root, r->name);
	}
	for (size_t i = 0; rc == 0 && i < r->n_publish; i++) {
		snprintf(item, sizeof(item), "%s:%u->%u", r->publish[i].address, r->publish[i].host_port,
			 r->publish[i].port);
		rc = word(&pub, item);
		if (!sb_publish_loopback(&r->publish[i]))
			x->warn |= SB_EXPOSE_PUBLISHED;
	}
	for (size_t i = 0; rc == 0 && i < r->n_mounts; i++) {
		const struct sb_sandbox_mount *m = &r->mounts[i];
		if (m->allow_sensitive) {
			x->n_sensitive++;
			x->warn |= SB_EXPOSE_SENSITIVE;
		}
		if (m->mode != SB_MOUNT_RW) {
			x->n_ro++;
			continue;
		}
		x->n_rw++;
		x->warn |= SB_EXPOSE_RW_MOUNT;
		snprintf(item, sizeof(item), "%.290s:%.290s", m->host, m->path);
		rc = word(&rw, item);
	}
	x->published = rc == 0 ? text_of(&pub) : NULL;
	x->rw_mounts = rc == 0 ? text_of(&rw) : NULL;
	sb_buf_clear(&pub);
	sb_buf_clear(&rw);
	return x->egress && x->published && x->rw_mounts ? 0 : -1;
}

int sb_exposure_list(struct sb_exposure **out, size_t *count, struct sb_root *root, struct sb_error *err)
{
	struct sb_sandbox_info *list;
	size_t n;
	int rc;

	*out = NULL;
	*count = 0;
	if ((rc = sb_sandbox_list(&list, &n, root, err)) < 0)
		return rc;
	struct sb_exposure *x = calloc(n + 1, sizeof(*x));
	for (size_t i = 0; x && i < n; i++)
		if (fill(&x[i], root, &list[i]) < 0) {
			sb_exposure_list_free(x, i + 1);
			x = NULL;
		}
	sb_sandbox_list_free(list, n);
	if (!x)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	*out = x;
	*count = n;
	return 0;
}

void sb_exposure_list_free(struct sb_exposure *list, size_t count)
{
	for (size_t i = 0; list && i < count; i++) {
		free(list[i].egress);
		free(list[i].published);
		free(list[i].rw_mounts);
	}
	free(list);
}
