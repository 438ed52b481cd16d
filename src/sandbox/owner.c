/* Owners of sandboxes (--owner): when each was last seen, and whether it is
 * gone. The activity of its sandboxes says when an owner was seen; a
 * sandbox removed takes its activity with it, so ROOT/owners.json remembers
 * ({"owners": {NAME: {"seen": T, "removed": T}}}), written atomically under
 * the root's lock. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/i18n.h"
#include "base/jsonfile.h"
#include "base/utf8.h"
#include "sandbox/cleanup.h"
#include "sandbox/sandbox.h"
#include "sandbox/settings.h"

#define OWNERS_FILE "owners.json"
#define OWNERS_FILE_MAX (1 << 20)

int sb_owner_name_check(const char *owner, struct sb_error *err)
{
	size_t len = owner ? strlen(owner) : 0;

	if (len == 0)
		return sb_error_set(err, SB_ERR_INVALID, _("an owner's name must not be empty"));
	if (len >= SB_OWNER_MAX)
		return sb_error_set(err, SB_ERR_INVALID, _("an owner's name is at most %d bytes"), SB_OWNER_MAX - 1);
	if (!sb_utf8_valid(owner, len))
		return sb_error_set(err, SB_ERR_INVALID, _("an owner's name must be valid UTF-8"));
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)owner[i] < 0x20 || owner[i] == 0x7f)
			return sb_error_set(err, SB_ERR_INVALID, _("an owner's name must not contain control characters"));
	return 0;
}

static long long num(const json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

/* Loads the state file (missing: empty) and hands it to fn under the root's
 * lock; saves it when fn says it changed (returns 1). */
static int owners_update(struct sb_root *root, int (*fn)(json_t *owners, void *arg, struct sb_error *err), void *arg,
			 struct sb_error *err)
{
	char *path = sb_root_file(root, OWNERS_FILE);
	json_t *doc = NULL, *owners;
	int rc;

	if (!path)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	if ((rc = sb_root_lock(root, SB_LOCK_EXCLUSIVE, err)) < 0)
		goto out;
	rc = sb_json_load(&doc, path, OWNERS_FILE_MAX, err);
	if (rc == SB_ERR_NOTFOUND)
		rc = (doc = json_object()) ? 0 : sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	if (rc == 0 && !json_is_object(doc))
		rc = sb_error_set(err, SB_ERR_FORMAT, _("'%s' is not a JSON object"), path);
	if (rc == 0 && !json_is_object(json_object_get(doc, "owners")))
		rc = json_object_set_new(doc, "owners", json_object()) < 0 ? sb_error_set(err, SB_ERR_NOMEM, _("out of memory"))
			: 0;
	owners = rc == 0 ? json_object_get(doc, "owners") : NULL;
	if (rc == 0 && (rc = fn(owners, arg, err)) == 1)
		rc = sb_json_save(path, doc, err);
	sb_root_unlock(root);
out:
	json_decref(doc);
	free(path);
	return rc < 0 ? rc : 0;
}

struct owner_set {
	struct sb_owner *list;
	size_t count, cap;
};

static struct sb_owner *find(struct owner_set *s, const char *name)
{
	for (size_t i = 0; i < s->count; i++)
		if (!strcmp(s->list[i].name, name))
			return &s->list[i];
	return NULL;
}

/* Adds what the file remembers, and remembers what the sandboxes say. */
static int merge(json_t *owners, void *arg, struct sb_error *err)
{
	struct owner_set *s = arg;
	const char *name;
	json_t *v;
	int changed = 0;

	json_object_foreach(owners, name, v) {
		struct sb_owner *o = find(s, name);
		if (!o && strlen(name) < SB_OWNER_MAX && s->count < s->cap) {
			o = &s->list[s->count++];
			snprintf(o->name, sizeof(o->name), "%s", name);
		}
		if (!o)
			continue;
		if (num(v, "seen") > o->last_seen)
			o->last_seen = num(v, "seen");
		o->removed = num(v, "removed");
	}
	for (size_t i = 0; i < s->count; i++) {
		struct sb_owner *o = &s->list[i];
		json_t *e = json_object_get(owners, o->name);
		if (e && num(e, "seen") == o->last_seen)
			continue;
		json_t *n = json_pack("{s:I}", "seen", (json_int_t)o->last_seen);
		if (n && o->removed)
			n = sb_json_set(n, "removed", json_integer(o->removed));
		if (!n || json_object_set_new(owners, o->name, n) < 0)
			return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		changed = 1;
	}
	return changed;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct sb_owner *)a)->name, ((const struct sb_owner *)b)->name);
}

/* The owners of the sandboxes with their latest activity. */
static int from_sandboxes(struct owner_set *s, size_t extra, struct sb_root *root, struct sb_error *err)
{
	struct sb_sandbox_info *list;
	size_t n;
	int rc;

	if ((rc = sb_sandbox_list(&list, &n, root, err)) < 0)
		return rc;
	s->cap = n + extra;
	if (!(s->list = calloc(s->cap + 1, sizeof(*s->list)))) {
		sb_sandbox_list_free(list, n);
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	for (size_t i = 0; i < n; i++) {
		const char *owner = list[i].rec.owner;
		if (!owner || !*owner || strlen(owner) >= SB_OWNER_MAX)
			continue;
		struct sb_owner *o = find(s, owner);
		if (!o) {
			o = &s->list[s->count++];
			snprintf(o->name, sizeof(o->name), "%s", owner);
		}
		o->sandboxes++;
		if (list[i].last_activity > o->last_seen)
			o->last_seen = list[i].last_activity;
	}
	sb_sandbox_list_free(list, n);
	return 0;
}

/* How many owners the state file holds at most (its size bounds it). */
static size_t file_owners(struct sb_root *root)
{
	char *path = sb_root_file(root, OWNERS_FILE);
	json_t *doc = NULL;
	size_t n = 0;

	if (path && sb_json_load(&doc, path, OWNERS_FILE_MAX, NULL) == 0)
		n = json_object_size(json_object_get(doc, "owners"));
	json_decref(doc);
	free(path);
	return n;
}

int sb_owner_list(struct sb_owner **out, size_t *count, struct sb_root *root, struct sb_error *err)
{
	struct owner_set s = { 0 };
	struct sb_settings cfg;
	long long now = sb_clock_now();
	int rc;

	*out = NULL;
	*count = 0;
	if ((rc = sb_settings_load(&cfg, root, err)) < 0)
		return rc;
	/* owners the file gains between the count and the merge wait for the next listing */
	if ((rc = from_sandboxes(&s, file_owners(root) + 64, root, err)) < 0)
		return rc;
	if ((rc = owners_update(root, merge, &s, err)) < 0) {
		free(s.list);
		return rc;
	}
	for (size_t i = 0; i < s.count; i++) {
		struct sb_owner *o = &s.list[i];
		o->gone = (o->removed && o->removed >= o->last_seen) || now - o->last_seen >= cfg.owner_gone_after;
	}
	qsort(s.list, s.count, sizeof(*s.list), by_name);
	*out = s.list;
	*count = s.count;
	return 0;
}

void sb_owner_list_free(struct sb_owner *list)
{
	free(list);
}

static int mark_removed(json_t *owners, void *arg, struct sb_error *err)
{
	const char *name = arg;
	json_t *e = json_object_get(owners, name);

	if (!e && (!(e = json_object()) || json_object_set_new(owners, name, e) < 0))
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	if (json_object_set_new(e, "removed", json_integer(sb_clock_now())) < 0)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	return 1;
}

int sb_owner_remove(struct sb_root *root, const char *owner, struct sb_error *err)
{
	struct sb_owner *list;
	size_t n, i;
	int rc;

	if ((rc = sb_owner_name_check(owner, err)) < 0 || (rc = sb_owner_list(&list, &n, root, err)) < 0)
		return rc;
	for (i = 0; i < n && strcmp(list[i].name, owner); i++)
		;
	sb_owner_list_free(list);
	if (i == n)
		return sb_error_set(err, SB_ERR_NOTFOUND, _("unknown owner '%s' (see 'sandbench owner ls')"), owner);
	return owners_update(root, mark_removed, (void *)owner, err);
}
