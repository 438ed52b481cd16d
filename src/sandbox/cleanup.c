/* The cleanup plan: one list of everything stale, built from the dry runs
 * of reap, gc and image prune, the owners and each sandbox's disk usage; and
 * applying one of its items with the verb that does it (rm, expire, image rm,
 * image prune, gc). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/i18n.h"
#include "base/jsonfile.h"
#include "base/units.h"
#include "image/store.h"
#include "internal.h"
#include "sandbox/cleanup.h"
#include "sandbox/gc.h"
#include "sandbox/sandbox.h"

struct plan_build {
	struct sb_cleanup_plan *plan;
	size_t cap;
	struct sb_error *err;
};

static struct sb_cleanup_item *add(struct plan_build *b, enum sb_cleanup_kind kind, enum sb_cleanup_reason reason,
				   const char *name)
{
	struct sb_cleanup_plan *p = b->plan;

	if (p->count == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 16;
		void *items = realloc(p->items, cap * sizeof(*p->items));
		if (!items) {
			sb_error_set(b->err, SB_ERR_NOMEM, _("out of memory"));
			return NULL;
		}
		p->items = items;
		b->cap = cap;
	}
	struct sb_cleanup_item *it = &p->items[p->count++];
	memset(it, 0, sizeof(*it));
	it->kind = kind;
	it->reason = reason;
	snprintf(it->name, sizeof(it->name), "%s", name);
	return it;
}

/* Why a sandbox is stale (1), or not (0). expired: reap's dry run says it is due. */
static int classify(enum sb_cleanup_reason *why, char *detail, size_t size, const struct sb_sandbox_info *s,
		    int expired, const struct sb_owner *owners, size_t n_owners, long long horizon)
{
	char d1[32], d2[32];

	if (s->rec.state == SB_STATE_BROKEN) {
		*why = SB_STALE_BROKEN;
		snprintf(detail, size, _("broken: %s"), s->rec.reason ? s->rec.reason : "");
		return 1;
	}
	if (expired) {
		sb_units_format_duration(d1, sizeof(d1), s->idle_seconds);
		sb_units_format_duration(d2, sizeof(d2), s->rec.idle_timeout);
		*why = SB_STALE_EXPIRED;
		snprintf(detail, size, _("expired: idle %s (timeout %s)"), d1, d2);
		return 1;
	}
	if (s->rec.state == SB_STATE_STOPPED && !s->has_checkpoint) {
		*why = SB_STALE_NO_CHECKPOINT;
		snprintf(detail, size, "%s", _("stopped without a checkpoint: only its disk is kept"));
		return 1;
	}
	for (size_t i = 0; s->rec.owner && *s->rec.owner && i < n_owners; i++)
		if (owners[i].gone && !strcmp(owners[i].name, s->rec.owner)) {
			*why = SB_STALE_OWNER_GONE;
			snprintf(detail, size, _("owner %s is gone"), s->rec.owner);
			return 1;
		}
	if (horizon > 0 && s->expires_in > 0 && s->expires_in <= horizon) {
		sb_units_format_duration(d1, sizeof(d1), s->expires_in);
		*why = SB_STALE_EXPIRING;
		snprintf(detail, size, _("idle: expires in %s"), d1);
		return 1;
	}
	return 0;
}

static void fill_sandbox(struct sb_cleanup_item *it, const struct sb_sandbox_info *s, struct sb_root *root)
{
	struct sb_disk_usage u;

	if (it->reason == SB_STALE_BROKEN)
		it->action = "rm --force";
	else if ((it->reason == SB_STALE_EXPIRED || it->reason == SB_STALE_EXPIRING) &&
		 s->rec.expiry_action == SB_EXPIRY_STOP)
		it->action = "stop";
	else
		it->action = "rm";
	if (!strcmp(it->action, "stop"))
		it->keeps |= SB_KEEP_WORKSPACE;
	else if (sb_sandbox_disk_usage(&u, root, s->rec.name, NULL) == 0)
		it->bytes = u.total;
	if (s->rec.exchange)
		it->keeps |= SB_KEEP_EXCHANGE;
	if (s->rec.n_mounts)
		it->keeps |= SB_KEEP_HOST_FOLDERS;
	it->host_folders = s->rec.n_mounts;
	it->permanent = s->rec.kind == SB_KIND_PERMANENT;
}

static int due(const struct sb_reap_item *due, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(due[i].name, name))
			return 1;
	return 0;
}

/* The stale sandboxes (only the one named, when only is not NULL). */
static int plan_sandboxes(struct plan_build *b, struct sb_root *root, long long horizon, const char *only)
{
	struct sb_sandbox_info *list = NULL;
	struct sb_reap_item *expired = NULL;
	struct sb_owner *owners = NULL;
	size_t n = 0, n_expired = 0, n_owners = 0;
	int rc;

	if ((rc = sb_sandbox_reap(&expired, &n_expired, root, SB_REAP_DRY_RUN, b->err)) < 0 ||
	    (rc = sb_owner_list(&owners, &n_owners, root, b->err)) < 0 ||
	    (rc = sb_sandbox_list(&list, &n, root, b->err)) < 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		const struct sb_sandbox_info *s = &list[i];
		enum sb_cleanup_reason why;
		char detail[256];
		if (only && strcmp(only, s->rec.name))
			continue;
		if (!classify(&why, detail, sizeof(detail), s, due(expired, n_expired, s->rec.name), owners, n_owners,
			      horizon))
			continue;
		struct sb_cleanup_item *it = add(b, SB_CLEANUP_SANDBOX, why, s->rec.name);
		if (!it) {
			rc = SB_ERR_NOMEM;
			goto out;
		}
		snprintf(it->detail, sizeof(it->detail), "%s", detail);
		it->horizon = horizon;
		fill_sandbox(it, s, root);
	}
out:
	sb_sandbox_list_free(list, n);
	sb_owner_list_free(owners);
	free(expired);
	return rc;
}

/* Images no sandbox uses, once each (the listing has a row per reference). */
static int plan_images(struct plan_build *b, struct sb_root *root)
{
	struct sb_image_info *list;
	size_t n;
	int rc;

	if ((rc = sb_image_list(&list, &n, root, b->err)) < 0)
		return rc;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		const struct sb_image_info *im = &list[i];
		size_t j;
		for (j = 0; j < i && strcmp(list[j].digest, im->digest); j++)
			;
		if (j < i || im->n_used_by)
			continue;
		struct sb_cleanup_item *it = add(b, SB_CLEANUP_IMAGE, SB_STALE_UNUSED_IMAGE, im->ref[0] ? im->ref : im->digest);
		if (!it) {
			rc = SB_ERR_NOMEM;
			break;
		}
		snprintf(it->digest, sizeof(it->digest), "%s", im->digest);
		snprintf(it->detail, sizeof(it->detail), _("no sandbox uses it (references: %zu; its blobs go with prune)"),
			 im->n_refs);
		it->action = "image rm";
		it->bytes = im->size;
	}
	sb_image_list_free(list, n);
	return rc;
}

static int plan_prune(struct plan_build *b, struct sb_root *root)
{
	struct sb_image_prune_report r;
	int rc = sb_image_prune(&r, root, SB_IMAGE_PRUNE_DRY_RUN, b->err);

	if (rc < 0 || r.images + r.blobs + r.rootfs + r.partial == 0)
		return rc;
	struct sb_cleanup_item *it = add(b, SB_CLEANUP_PRUNE, SB_STALE_UNREFERENCED, _("image store"));
	if (!it)
		return SB_ERR_NOMEM;
	snprintf(it->detail, sizeof(it->detail), _("%zu blobs, %zu trees, %zu partial downloads of no image"), r.blobs,
		 r.rootfs, r.partial);
	it->action = "image prune";
	it->bytes = r.bytes;
	return 0;
}

static int listed(const struct sb_cleanup_plan *p, const char *name)
{
	for (size_t i = 0; i < p->count; i++)
		if (p->items[i].kind == SB_CLEANUP_SANDBOX && !strcmp(p->items[i].name, name))
			return 1;
	return 0;
}

static int plan_gc(struct plan_build *b, struct sb_root *root)
{
	struct sb_gc_item *items;
	size_t n;
	int rc;

	if ((rc = sb_gc(&items, &n, root, SB_GC_DRY_RUN, b->err)) < 0)
		return rc;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		if (!strcmp(items[i].kind, "sandbox") && listed(b->plan, items[i].name))
			continue;
		struct sb_cleanup_item *it = add(b, SB_CLEANUP_GC, SB_STALE_GC, items[i].name);
		if (!it) {
			rc = SB_ERR_NOMEM;
			break;
		}
		snprintf(it->gc_kind, sizeof(it->gc_kind), "%s", items[i].kind);
		snprintf(it->detail, sizeof(it->detail), "%s %s%s%.200s", items[i].kind, _(items[i].action),
			 items[i].message[0] ? ": " : "", items[i].message);
		it->action = "gc";
	}
	free(items);
	return rc;
}

int sb_cleanup_plan(struct sb_cleanup_plan **out, struct sb_root *root, long long horizon, struct sb_error *err)
{
	struct plan_build b = { .err = err };
	int rc;

	*out = NULL;
	if (!(b.plan = calloc(1, sizeof(*b.plan))))
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	if ((rc = plan_sandboxes(&b, root, horizon, NULL)) < 0 || (rc = plan_images(&b, root)) < 0 ||
	    (rc = plan_prune(&b, root)) < 0 || (rc = plan_gc(&b, root)) < 0) {
		sb_cleanup_plan_free(b.plan);
		return rc;
	}
	for (size_t i = 0; i < b.plan->count; i++)
		b.plan->bytes += b.plan->items[i].bytes;
	*out = b.plan;
	return 0;
}

void sb_cleanup_plan_free(struct sb_cleanup_plan *plan)
{
	if (!plan)
		return;
	free(plan->items);
	free(plan);
}

/* A sandbox is looked at again: what was stale may have been touched since. */
static int apply_sandbox(struct sb_cleanup_item *it, struct sb_root *root, struct sb_error *err)
{
	struct sb_cleanup_plan now = { 0 };
	struct plan_build b = { .plan = &now, .err = err };
	int rc = plan_sandboxes(&b, root, it->horizon, it->name);

	if (rc == 0 && now.count == 0)
		rc = sb_error_set(err, SB_ERR_STATE, _("sandbox '%s' is no longer stale: left alone"), it->name);
	free(now.items);
	if (rc < 0)
		return rc;
	if (!strcmp(it->action, "stop"))
		return sb_sandbox_expire(root, it->name, err);
	return sb_sandbox_remove(root, it->name, !strcmp(it->action, "rm --force") ? SB_REMOVE_FORCE : 0, err);
}

static int apply_gc(struct sb_cleanup_item *it, struct sb_root *root, struct sb_error *err)
{
	struct sb_gc_item *items;
	size_t n;
	int rc = sb_gc(&items, &n, root, 0, err);

	if (rc < 0)
		return rc;
	snprintf(it->message, sizeof(it->message), "%s", _("already reconciled"));
	for (size_t i = 0; i < n; i++) {
		if (strcmp(items[i].kind, it->gc_kind) || strcmp(items[i].name, it->name))
			continue;
		rc = items[i].rc;
		if (rc < 0)
			sb_error_set(err, rc, "%.255s", items[i].message);
		else
			snprintf(it->message, sizeof(it->message), "%s", _(items[i].action));
	}
	free(items);
	return rc;
}

int sb_cleanup_apply(struct sb_cleanup_item *item, struct sb_root *root)
{
	struct sb_image_prune_report r;
	struct sb_image_removal rm;
	struct sb_error err = { 0 };
	int rc;

	item->message[0] = '\0';
	switch (item->kind) {
	case SB_CLEANUP_SANDBOX:
		rc = apply_sandbox(item, root, &err);
		break;
	case SB_CLEANUP_IMAGE:
		rc = sb_image_remove(&rm, root, item->digest, 0, &err);
		if (rc == 0)
			sb_image_removal_clear(&rm);
		break;
	case SB_CLEANUP_PRUNE:
		rc = sb_image_prune(&r, root, 0, &err);
		break;
	default:
		rc = apply_gc(item, root, &err);
		break;
	}
	item->applied = 1;
	item->rc = rc;
	if (rc < 0)
		snprintf(item->message, sizeof(item->message), "%s", err.msg);
	return rc;
}

const char *sb_cleanup_reason_name(enum sb_cleanup_reason reason)
{
	static const char *const names[] = {
		[SB_STALE_EXPIRED] = "expired", [SB_STALE_EXPIRING] = "expiring", [SB_STALE_BROKEN] = "broken",
		[SB_STALE_NO_CHECKPOINT] = "no-checkpoint", [SB_STALE_OWNER_GONE] = "owner-gone",
		[SB_STALE_UNUSED_IMAGE] = "unused-image", [SB_STALE_UNREFERENCED] = "unreferenced", [SB_STALE_GC] = "gc",
	};
	return (size_t)reason < sizeof(names) / sizeof(names[0]) ? names[reason] : "unknown";
}

json_t *sb_cleanup_item_json(const struct sb_cleanup_item *it)
{
	static const char *const kinds[] = { "sandbox", "image", "prune", "gc" };
	json_t *keeps = json_array();

	if (it->keeps & SB_KEEP_WORKSPACE)
		keeps = sb_json_append(keeps, json_string("workspace"));
	if (it->keeps & SB_KEEP_EXCHANGE)
		keeps = sb_json_append(keeps, json_string("exchange"));
	if (it->keeps & SB_KEEP_HOST_FOLDERS)
		keeps = sb_json_append(keeps, json_string("host-folders"));
	json_t *doc = json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:o, s:I, s:b}", "kind", kinds[it->kind % 4], "reason",
				sb_cleanup_reason_name(it->reason), "name", it->name, "detail", it->detail, "action",
				it->action ? it->action : "", "bytes", (json_int_t)it->bytes, "keeps", keeps,
				"host_folders", (json_int_t)it->host_folders, "permanent", it->permanent);
	if (doc && it->applied) {
		doc = sb_json_set(doc, "ok", json_boolean(it->rc == 0));
		doc = sb_json_set(doc, "message", json_string(it->message));
	}
	return doc;
}
