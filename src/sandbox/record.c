#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/fs.h"
#include "base/generation.h"
#include "base/i18n.h"
#include "base/jsonfile.h"
#include "base/log.h"
#include "base/units.h"
#include "internal.h"
#include "sandbox/record.h"

#define RECORD_MAX (1 << 20)

static const char *const kind_names[] = {
	[SB_KIND_DEFAULT] = "default", [SB_KIND_TEMPORARY] = "temporary", [SB_KIND_PERMANENT] = "permanent",
};
static const char *const state_names[] = {
	[SB_STATE_CREATED] = "created", [SB_STATE_RUNNING] = "running",
	[SB_STATE_STOPPED] = "stopped", [SB_STATE_BROKEN] = "broken", [SB_STATE_PAUSED] = "paused",
};
static const char *const expiry_names[] = {
	[SB_EXPIRY_DEFAULT] = "default", [SB_EXPIRY_RM] = "rm", [SB_EXPIRY_STOP] = "stop", [SB_EXPIRY_PAUSE] = "pause",
};
static const char *const mode_names[] = { [SB_MOUNT_RO] = "ro", [SB_MOUNT_RW] = "rw" };

const char *sb_enum_name(const char *const *t, size_t n, int v)
{
	return v >= 0 && (size_t)v < n ? t[v] : "unknown";
}

int sb_enum_parse(const char *const *t, size_t n, const char *s)
{
	for (size_t i = 0; s && i < n; i++)
		if (!strcmp(t[i], s))
			return (int)i;
	return -1;
}


const char *sb_sandbox_kind_name(enum sb_sandbox_kind k) { return sb_enum_name(kind_names, SB_ENUM_NAMES(kind_names), k); }
const char *sb_sandbox_state_name(enum sb_sandbox_state s) { return sb_enum_name(state_names, SB_ENUM_NAMES(state_names), s); }
const char *sb_expiry_action_name(enum sb_expiry_action a) { return sb_enum_name(expiry_names, SB_ENUM_NAMES(expiry_names), a); }
const char *sb_mount_mode_name(enum sb_mount_mode m) { return sb_enum_name(mode_names, SB_ENUM_NAMES(mode_names), m); }
int sb_sandbox_kind_parse(const char *s) { return sb_enum_parse(kind_names, SB_ENUM_NAMES(kind_names), s); }
int sb_sandbox_state_parse(const char *s) { return sb_enum_parse(state_names, SB_ENUM_NAMES(state_names), s); }
int sb_expiry_action_parse(const char *s) { return sb_enum_parse(expiry_names, SB_ENUM_NAMES(expiry_names), s); }
int sb_mount_mode_parse(const char *s) { return sb_enum_parse(mode_names, SB_ENUM_NAMES(mode_names), s); }

int sb_sandbox_state_live(enum sb_sandbox_state s)
{
	return s == SB_STATE_RUNNING || s == SB_STATE_PAUSED;
}

int sb_expiry_parse(enum sb_expiry_action *action, long long *stop_after, const char *text, struct sb_error *err)
{
	static const char tier[] = "pause,stop=";
	int a = sb_expiry_action_parse(text);

	*stop_after = 0;
	if (a > SB_EXPIRY_DEFAULT) {
		*action = a;
		return 0;
	}
	if (text && !strncmp(text, tier, sizeof(tier) - 1) && (*stop_after = sb_units_parse_duration(text + sizeof(tier) - 1)) > 0) {
		*action = SB_EXPIRY_PAUSE;
		return 0;
	}
	*stop_after = 0;
	return sb_error_set(err, SB_ERR_INVALID, _("expiry action '%s' is not rm, stop, pause or pause,stop=DURATION"),
			    text ? text : "");
}

const char *sb_expiry_format(char *buf, size_t size, enum sb_expiry_action action, long long stop_after)
{
	/* the largest unit that gives it exactly: the spelling parses back */
	static const struct {
		long long s;
		char unit;
	} units[] = { { 86400, 'd' }, { 3600, 'h' }, { 60, 'm' }, { 1, 's' } };

	if (action == SB_EXPIRY_PAUSE && stop_after > 0) {
		size_t i = 0;
		while (stop_after % units[i].s)
			i++;
		snprintf(buf, size, "pause,stop=%lld%c", stop_after / units[i].s, units[i].unit);
	} else
		snprintf(buf, size, "%s", sb_expiry_action_name(action));
	return buf;
}

static json_t *egress_to_json(const struct sb_egress *e)
{
	json_t *allow = json_array();
	char rule[SB_EGRESS_RULE_MAX];

	for (size_t i = 0; i < e->n_rules; i++)
		allow = sb_json_append(allow, json_string(sb_egress_rule_format(rule, &e->rules[i])));
	return allow ? json_pack("{s:s, s:o}", "mode", sb_egress_mode_name(e->mode), "allow", allow) : NULL;
}

/* Records written before egress policies have none: the default. */
static int egress_from_json(struct sb_egress *out, const json_t *doc)
{
	const char *mode = "default";
	json_t *allow = NULL, *v;
	size_t i;

	memset(out, 0, sizeof(*out));
	if (!doc)
		return 0;
	if (json_unpack((json_t *)doc, "{s:s, s?o}", "mode", &mode, "allow", &allow) < 0 ||
	    sb_egress_mode_parse(mode) < 0 || (allow && !json_is_array(allow)))
		return -1;
	out->mode = sb_egress_mode_parse(mode);
	json_array_foreach(allow, i, v) {
		struct sb_egress_rule r;
		if (!json_is_string(v) || sb_egress_rule_parse(&r, json_string_value(v), NULL) < 0 ||
		    sb_egress_add_rule(out, &r) < 0) {
			sb_egress_clear(out);
			return -1;
		}
	}
	return 0;
}

/* A record that cannot be written whole is not written: a mount or a limit
 * silently missing would give the sandbox more than it was created with. */
json_t *sb_record_to_json(const struct sb_record *r)
{
	json_t *mounts = json_array(), *labels = json_object();

	for (size_t i = 0; i < r->n_mounts; i++) {
		const struct sb_sandbox_mount *m = &r->mounts[i];
		mounts = sb_json_append(mounts, json_pack("{s:s, s:s, s:s, s:I, s:I, s:b}", "host", m->host, "path", m->path,
							  "mode", sb_mount_mode_name(m->mode), "dev", (json_int_t)m->dev,
							  "ino", (json_int_t)m->ino, "allow_sensitive", m->allow_sensitive));
	}
	for (size_t i = 0; i < r->n_labels; i++)
		labels = sb_json_set(labels, r->labels[i].key, json_string(r->labels[i].value));
	/* "o" steals mounts and labels even when the pack fails, and fails on NULL */
	json_t *doc = json_pack("{s:i, s:s, s:s, s:s, s:I, s:{s:s, s:s}, s:s, s:I, s:s, s:b, s:o, s:b, s:{s:I, s:f, s:I},"
				" s:s, s:o, s:s, s:s, s:I, s:{s:s, s:s}}",
				"schema", SB_RECORD_SCHEMA, "backend", r->backend[0] ? r->backend : "runsc",
				"name", r->name, "id", r->id, "created", (json_int_t)r->created,
				"image", "ref", r->image_ref ? r->image_ref : "", "digest", r->image_digest,
				"kind", sb_sandbox_kind_name(r->kind), "idle_timeout", (json_int_t)r->idle_timeout,
				"expiry_action", sb_expiry_action_name(r->expiry_action), "network", r->network,
				"mounts", mounts, "exchange", r->exchange,
				"resources", "memory", (json_int_t)r->memory, "cpus", r->cpus, "disk", (json_int_t)r->disk,
				"owner", r->owner ? r->owner : "", "labels", labels,
				"state", sb_sandbox_state_name(r->state), "reason", r->reason ? r->reason : "",
				"state_changed", (json_int_t)r->state_changed,
				"runtime", "build", r->runtime_build ? r->runtime_build : "", "boot_id", r->boot_id);
	if (doc && r->expiry_stop_after > 0)
		doc = sb_json_set(doc, "expiry_stop_after", json_integer(r->expiry_stop_after));
	if (doc && r->image_config)
		doc = sb_json_set(doc, "image_config", json_incref(r->image_config));
	/* only for forks: records of other sandboxes stay as they were */
	if (doc && r->parent[0])
		doc = sb_json_set(doc, "parent", json_pack("{s:s, s:s}", "name", r->parent, "id", r->parent_id));
	doc = doc ? sb_json_set(doc, "egress", egress_to_json(&r->egress)) : NULL;
	return doc ? sb_record_service_to_json(doc, r) : NULL;
}

static int dup_into(char **dst, const char *s)
{
	*dst = strdup(s ? s : "");
	return *dst ? 0 : -1;
}

static int copy_fixed(char *dst, size_t size, const char *s)
{
	if (!s || strlen(s) >= size)
		return -1;
	memcpy(dst, s, strlen(s) + 1);
	return 0;
}

/* Env a list of strings, WorkingDir and User strings: what exec takes it for. */
static int image_config_valid(const json_t *c)
{
	json_t *env = json_object_get(c, "Env"), *v;
	size_t i;

	if (!json_is_object(c) || (env && !json_is_array(env)))
		return 0;
	json_array_foreach (env, i, v)
		if (!json_is_string(v) || !strchr(json_string_value(v), '='))
			return 0;
	for (const char *const *k = (const char *const[]){ "WorkingDir", "User", NULL }; *k; k++)
		if (json_object_get(c, *k) && !json_is_string(json_object_get(c, *k)))
			return 0;
	return 1;
}

int sb_record_from_json(struct sb_record *out, const json_t *doc, struct sb_error *err)
{
	const char *name = NULL, *id = NULL, *ref = NULL, *digest = NULL, *kind = NULL, *expiry = NULL;
	const char *owner = "", *state = NULL, *reason = "", *backend = "runsc", *build = "", *boot_id = "";
	const char *parent = "", *parent_id = "";
	json_int_t schema = 0, created = 0, idle = 0, memory = 0, disk = 0, changed = 0, stop_after = 0;
	double cpus = 0;
	int network = 0, exchange = 1;
	json_t *mounts = NULL, *labels = NULL, *egress = NULL, *config = NULL, *tier;
	json_error_t jerr;

	memset(out, 0, sizeof(*out));
	if (json_unpack_ex((json_t *)doc, &jerr, 0,
			   "{s:I, s:s, s:s, s:I, s:{s:s, s:s}, s:s, s:I, s:s, s:b, s:o, s:b, s:{s:I, s:F, s?I},"
			   " s?s, s?o, s:s, s?s, s?I, s?s, s?{s?s, s?s}, s?o, s?{s:s, s:s}}",
			   "schema", &schema, "name", &name, "id", &id, "created", &created,
			   "image", "ref", &ref, "digest", &digest, "kind", &kind, "idle_timeout", &idle,
			   "expiry_action", &expiry, "network", &network, "mounts", &mounts, "exchange", &exchange,
			   "resources", "memory", &memory, "cpus", &cpus, "disk", &disk, "owner", &owner, "labels", &labels,
			   "state", &state, "reason", &reason, "state_changed", &changed, "backend", &backend,
			   "runtime", "build", &build, "boot_id", &boot_id, "egress", &egress,
			   "parent", "name", &parent, "id", &parent_id) < 0)
		return sb_error_set(err, SB_ERR_FORMAT, _("sandbox record is malformed: %s"), jerr.text);
	/* schema 1 (wave 1) lacks the backend, the runtime and the mounts'
	 * identities: read as runsc, unknown, unrecorded; saved as schema 2 */
	if (schema < 1 || schema > SB_RECORD_SCHEMA)
		return sb_error_set(err, SB_ERR_FORMAT, _("sandbox record '%s' has schema %lld; this sandbench reads schemas 1 to %d"),
				    name, (long long)schema, SB_RECORD_SCHEMA);
	out->schema = SB_RECORD_SCHEMA;
	out->created = created;
	out->idle_timeout = idle;
	out->memory = memory > 0 ? (unsigned long long)memory : 0;
	out->disk = disk > 0 ? (unsigned long long)disk : 0;
	out->cpus = cpus;
	out->network = network;
	out->exchange = exchange;
	out->state_changed = changed;
	int k = sb_sandbox_kind_parse(kind), e = sb_expiry_action_parse(expiry), s = sb_sandbox_state_parse(state);
	if (k <= SB_KIND_DEFAULT || e <= SB_EXPIRY_DEFAULT || s < 0 || !json_is_array(mounts) ||
	    (labels && !json_is_object(labels)) || copy_fixed(out->name, sizeof(out->name), name) < 0 ||
	    copy_fixed(out->id, sizeof(out->id), id) < 0 ||
	    copy_fixed(out->image_digest, sizeof(out->image_digest), digest) < 0 ||
	    copy_fixed(out->backend, sizeof(out->backend), backend) < 0 ||
	    copy_fixed(out->boot_id, sizeof(out->boot_id), boot_id) < 0 ||
	    copy_fixed(out->parent, sizeof(out->parent), parent) < 0 ||
	    copy_fixed(out->parent_id, sizeof(out->parent_id), parent_id) < 0)
		return sb_error_set(err, SB_ERR_FORMAT, _("sandbox record '%s' has an invalid kind, state, id or mount list"), name);
	if ((tier = json_object_get(doc, "expiry_stop_after")) &&
	    (!json_is_integer(tier) || (stop_after = json_integer_value(tier)) <= 0 || e != SB_EXPIRY_PAUSE))
		return sb_error_set(err, SB_ERR_FORMAT, _("sandbox record '%s' has an invalid expiry_stop_after"), name);
	if ((config = json_object_get(doc, "image_config")) && !image_config_valid(config))
		return sb_error_set(err, SB_ERR_FORMAT, _("sandbox record '%s' has an invalid image_config"), name);
	if (egress_from_json(&out->egress, egress) < 0)
		return sb_error_set(err, SB_ERR_FORMAT, _("sandbox record '%s' has an invalid egress policy"), name);
	out->image_config = json_incref(config);
	if (sb_record_service_from_json(out, doc) < 0) {
		sb_record_clear(out);
		return sb_error_set(err, SB_ERR_FORMAT, _("sandbox record '%s' has an invalid service or published port"), name);
	}
	out->kind = k;
	out->expiry_action = e;
	out->expiry_stop_after = stop_after;
	out->state = s;
	if (dup_into(&out->image_ref, ref) < 0 || dup_into(&out->owner, owner) < 0 || dup_into(&out->reason, reason) < 0 ||
	    dup_into(&out->runtime_build, build) < 0)
		goto nomem;
	out->mounts = calloc(json_array_size(mounts) + 1, sizeof(*out->mounts));
	out->labels = calloc(json_object_size(labels) + 1, sizeof(*out->labels));
	if (!out->mounts || !out->labels)
		goto nomem;
	size_t i;
	json_t *m;
	json_array_foreach(mounts, i, m) {
		const char *host, *path, *mode;
		json_int_t dev = 0, ino = 0;
		int sensitive = 0;
		if (json_unpack(m, "{s:s, s:s, s:s, s?I, s?I, s?b}", "host", &host, "path", &path, "mode", &mode, "dev", &dev,
				"ino", &ino, "allow_sensitive", &sensitive) < 0 ||
		    sb_mount_mode_parse(mode) < 0) {
			sb_record_clear(out);
			return sb_error_set(err, SB_ERR_FORMAT, _("sandbox record '%s' has a malformed mount"), name);
		}
		struct sb_sandbox_mount *dst = &out->mounts[out->n_mounts++];
		dst->mode = sb_mount_mode_parse(mode);
		dst->dev = (unsigned long long)dev;
		dst->ino = (unsigned long long)ino;
		dst->allow_sensitive = sensitive;
		if (dup_into(&dst->host, host) < 0 || dup_into(&dst->path, path) < 0)
			goto nomem;
	}
	const char *key;
	json_t *val;
	json_object_foreach((json_t *)labels, key, val) {
		struct sb_sandbox_label *l = &out->labels[out->n_labels++];
		if (dup_into(&l->key, key) < 0 || dup_into(&l->value, json_string_value(val)) < 0)
			goto nomem;
	}
	return 0;
nomem:
	sb_record_clear(out);
	return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
}

int sb_record_load(struct sb_record *out, struct sb_root *root, const char *name, struct sb_error *err)
{
	char *path = sb_root_record_file(root, name);
	json_t *doc = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!path)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	rc = sb_json_load(&doc, path, RECORD_MAX, err);
	free(path);
	if (rc == SB_ERR_NOTFOUND)
		return sb_error_set(err, SB_ERR_NOTFOUND, _("no sandbox named '%s'"), name);
	if (rc < 0) {
		sb_error_wrap(err, _("cannot read sandbox '%s'"), name);
		return rc;
	}
	rc = sb_record_from_json(out, doc, err);
	json_decref(doc);
	return rc;
}

int sb_record_save(struct sb_root *root, const struct sb_record *rec, struct sb_error *err)
{
	char *path = sb_root_record_file(root, rec->name);
	json_t *doc = sb_record_to_json(rec);
	int rc;

	if (!path || !doc)
		rc = sb_error_set(err, SB_ERR_NOMEM, _("cannot write the record of sandbox '%s': out of memory"), rec->name);
	/* a temporary sandbox does not survive a host restart (the first command
	 * after one removes it), so its record needs no fsyncs: two per restore */
	else if ((rc = sb_json_save_sync(path, doc, rec->kind != SB_KIND_TEMPORARY, err)) == 0)
		sb_generation_bump(root, SB_GEN_SANDBOXES, NULL);
	json_decref(doc);
	free(path);
	return rc;
}

/* The timeline entry of a transition; its failure fails nothing (the record
 * is saved), it is logged. The caller holds the sandbox's lock. */
static void note_transition(struct sb_root *root, const struct sb_record *rec, enum sb_timeline_source source)
{
	struct sb_timeline_entry e = SB_TIMELINE_ENTRY_INIT(SB_TIMELINE_LIFECYCLE, source);
	struct sb_settings set;
	struct sb_error why;

	e.text = sb_sandbox_state_name(rec->state);
	e.detail = rec->reason;
	if (sb_settings_load(&set, root, &why) < 0 || sb_timeline_add(root, rec->name, &set, 1, &e, NULL, &why) < 0)
		sb_log("no timeline entry for sandbox '%s' going %s: %s", rec->name, e.text, why.msg);
}

int sb_record_transition_as(struct sb_root *root, struct sb_record *rec, enum sb_sandbox_state state,
			    const char *reason, enum sb_timeline_source source, struct sb_error *err)
{
	char *copy = strdup(reason ? reason : "");
	int rc;

	if (!copy)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	free(rec->reason);
	rec->reason = copy;
	rec->state = state;
	rec->state_changed = sb_clock_now();
	if ((rc = sb_record_save(root, rec, err)) == 0)
		note_transition(root, rec, source);
	return rc;
}

int sb_record_transition(struct sb_root *root, struct sb_record *rec, enum sb_sandbox_state state,
			 const char *reason, struct sb_error *err)
{
	return sb_record_transition_as(root, rec, state, reason, sb_timeline_actor(), err);
}

void sb_record_clear(struct sb_record *rec)
{
	if (!rec)
		return;
	for (size_t i = 0; rec->mounts && i < rec->n_mounts; i++) {
		free(rec->mounts[i].host);
		free(rec->mounts[i].path);
	}
	for (size_t i = 0; rec->labels && i < rec->n_labels; i++) {
		free(rec->labels[i].key);
		free(rec->labels[i].value);
	}
	free(rec->mounts);
	free(rec->labels);
	free(rec->image_ref);
	free(rec->owner);
	free(rec->reason);
	free(rec->runtime_build);
	json_decref(rec->image_config);
	sb_egress_clear(&rec->egress);
	sb_record_service_clear(rec);
	memset(rec, 0, sizeof(*rec));
}
