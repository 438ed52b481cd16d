#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "internal.h"
#include "base/clock.h"
#include "base/digest.h"
#include "sandbox/doctor.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "base/jsonfile.h"
#include "base/utf8.h"
#include "image/store.h"
#include "sandbox/pool.h"
#include "sandbox/sandbox.h"

/* Host mounts through the mount policy (mount_policy.h): host paths resolved,
 * sandbox paths normalised, sensitive host paths refused unless allowed, and
 * each folder's device and inode taken, which every boot checks again.
 * *out holds the resolved mounts (its strings belong to *held). */
static int resolve_mounts(struct sb_sandbox_mount **out, struct sb_mount **held, struct sb_root *root,
			  const struct sb_sandbox_spec *spec, struct sb_error *err)
{
	const struct sb_mount_policy policy = { .state_root = sb_root_path(root),
						.allow_sensitive = spec->allow_sensitive_mounts };
	int rc = 0;

	*out = calloc(spec->n_mounts + 1, sizeof(**out));
	*held = calloc(spec->n_mounts + 1, sizeof(**held));
	if (!*out || !*held)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	for (size_t i = 0; i < spec->n_mounts && rc == 0; i++) {
		const struct sb_sandbox_mount *m = &spec->mounts[i];
		rc = sb_mount_resolve(&(*held)[i], m->host ? m->host : "", m->path ? m->path : "", m->mode == SB_MOUNT_RW,
				      &policy, err);
		struct sb_sandbox_mount *o = &(*out)[i];
		*o = (struct sb_sandbox_mount){ (*held)[i].host, (*held)[i].path, m->mode, 0, 0, spec->allow_sensitive_mounts };
		if (rc == 0)
			rc = sb_mount_identify(&o->dev, &o->ino, o->host, err);
		if (rc < 0)
			sb_error_wrap(err, _("host mount '%s:%s'"), m->host ? m->host : "", m->path ? m->path : "");
	}
	return rc < 0 ? rc : sb_mount_check_overlaps(*held, spec->n_mounts, err);
}

static void free_mounts(struct sb_sandbox_mount *mounts, struct sb_mount *held, size_t n)
{
	for (size_t i = 0; held && i < n; i++)
		sb_mount_clear(&held[i]);
	free(held);
	free(mounts);
}

/* What of the image's config (the store's exec_config text) every process
 * of the sandbox gets, as docker gives it: Env, WorkingDir, User. A config
 * that does not parse gives nothing (the store verified it when it came in). */
static int image_config(struct sb_record *rec, const char *exec_config)
{
	json_t *cfg = exec_config ? json_loads(exec_config, 0, NULL) : NULL, *kept = json_object(), *env = json_array(), *v;
	size_t i;

	json_array_foreach (json_object_get(cfg, "Env"), i, v)
		if (json_is_string(v) && strchr(json_string_value(v), '=') && json_string_value(v)[0] != '=')
			env = sb_json_append(env, json_incref(v));
	if (!env || json_array_size(env))
		kept = sb_json_set(kept, "Env", env);
	else
		json_decref(env);
	for (const char *const *k = (const char *const[]){ "WorkingDir", "User", NULL }; kept && *k; k++) {
		const char *s = json_string_value(json_object_get(cfg, *k));
		if (s && *s)
			kept = sb_json_set(kept, *k, json_string(s));
	}
	json_decref(cfg);
	if (!kept)
		return -1;
	if (json_object_size(kept))
		rec->image_config = kept;
	else
		json_decref(kept);
	return 0;
}

/* Pins the image: its manifest digest goes into the record; the rootfs is
 * found again from the digest at every boot. with_config: its configuration
 * (Env, WorkingDir, User) too. */
static int resolve_image(struct sb_record *rec, struct sb_root *root, const char *image, int with_config,
			 struct sb_error *err)
{
	struct sb_image_info info;
	int rc;

	if (!image || !*image)
		return sb_error_set(err, SB_ERR_INVALID, _("no image given"));
	if ((rc = sb_image_resolve(&info, root, image, err)) < 0)
		return rc;
	if (with_config && (rc = sb_image_read_exec_config(&info, root, err)) < 0) {
		sb_image_info_clear(&info);
		return rc;
	}
	memcpy(rec->image_digest, info.digest, sizeof(rec->image_digest));
	if (!(rec->image_ref = strdup(info.ref)) || (with_config && image_config(rec, info.exec_config) < 0))
		rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	sb_image_info_clear(&info);
	return rc;
}

static char *dup_or_empty(const char *s)
{
	return strdup(s ? s : "");
}

static int check_text(const char *s, const char *what, struct sb_error *err)
{
	if (s && !sb_utf8_valid(s, strlen(s)))
		return sb_error_set(err, SB_ERR_INVALID, _("the %s is not valid UTF-8"), what);
	return 0;
}

/* What the record keeps as text must be UTF-8: JSON cannot hold anything else. */
/* ext4's own structures take about a megabyte of a small disk */
#define DISK_MIN (16ULL << 20)

static int check_spec(const struct sb_sandbox_spec *spec, struct sb_error *err)
{
	int rc = check_text(spec->owner, _("owner of the sandbox"), err);

	if (rc == 0 && spec->disk && spec->disk < DISK_MIN)
		rc = sb_error_set(err, SB_ERR_INVALID, _("a disk cap of %llu bytes is too small: give at least 16M"),
				  spec->disk);

	for (size_t i = 0; rc == 0 && i < spec->n_mounts; i++)
		if ((rc = check_text(spec->mounts[i].host, _("host path of a mount"), err)) == 0)
			rc = check_text(spec->mounts[i].path, _("sandbox path of a mount"), err);
	for (size_t i = 0; rc == 0 && i < spec->n_labels; i++)
		if ((rc = check_text(spec->labels[i].key, _("key of a label"), err)) == 0)
			rc = check_text(spec->labels[i].value, _("value of a label"), err);
	return rc;
}

int sb_box_new_id(char id[SB_SANDBOX_ID_LEN], struct sb_error *err)
{
	unsigned char rnd[8];

	if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot make a sandbox id"));
	snprintf(id, SB_SANDBOX_ID_LEN, "sb-%02x%02x%02x%02x%02x%02x%02x%02x", rnd[0], rnd[1], rnd[2], rnd[3], rnd[4],
		 rnd[5], rnd[6], rnd[7]);
	return 0;
}

#define SERVICE_INTERVAL_DEFAULT 10

/* The service and published ports of the spec into rec, whose kind and
 * network are not settled yet: a service makes the sandbox permanent unless
 * asked otherwise (refused: a reaper would end it while it serves), a
 * published port turns the network on. */
static int fill_service(struct sb_record *rec, const struct sb_sandbox_spec *spec, struct sb_error *err)
{
	const struct sb_service *s = spec->service;

	if (s && s->command) {
		if (spec->kind == SB_KIND_TEMPORARY)
			return sb_error_set(err, SB_ERR_INVALID,
					    _("a service sandbox is permanent: --service cannot go with --temporary"));
		if (!*s->command || (s->health && !*s->health))
			return sb_error_set(err, SB_ERR_INVALID, _("--service and --health need a command"));
		if (s->interval < 0 || s->interval > 86400)
			return sb_error_set(err, SB_ERR_INVALID, _("--health-interval must be from 1 s to 1 day"));
		rec->kind = SB_KIND_PERMANENT;
		rec->service.interval = s->interval ? s->interval : SERVICE_INTERVAL_DEFAULT;
		rec->service.restart = s->restart;
		rec->service.command = strdup(s->command);
		rec->service.health = s->health ? strdup(s->health) : NULL;
		if (!rec->service.command || (s->health && !rec->service.health))
			return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	if (!spec->n_publish)
		return 0;
	if (spec->network == 0)
		return sb_error_set(err, SB_ERR_INVALID, _("--publish needs network on"));
	rec->network = 1;
	if (!(rec->publish = calloc(spec->n_publish, sizeof(*rec->publish))))
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	for (size_t i = 0; i < spec->n_publish; i++) {
		for (size_t j = 0; j < i; j++)
			if (spec->publish[j].host_port == spec->publish[i].host_port &&
			    !strcmp(spec->publish[j].address, spec->publish[i].address))
				return sb_error_set(err, SB_ERR_INVALID, _("host port %s:%u is published twice"),
						    spec->publish[i].address, spec->publish[i].host_port);
		rec->publish[rec->n_publish++] = spec->publish[i];
	}
	return 0;
}

/* The record of a new sandbox: the spec over the configured defaults. */
static int fill_record(struct sb_record *rec, const struct sb_sandbox_spec *spec, const struct sb_settings *set,
		       struct sb_error *err)
{
	int rc = sb_box_new_id(rec->id, err);

	if (rc < 0)
		return rc;
	rec->schema = SB_RECORD_SCHEMA;
	snprintf(rec->backend, sizeof(rec->backend), "%s", sb_backend_default()->name);
	strcpy(rec->name, spec->name);
	rec->created = sb_clock_now();
	rec->kind = spec->kind != SB_KIND_DEFAULT ? spec->kind : set->kind;
	rec->idle_timeout = rec->kind == SB_KIND_PERMANENT ? 0 : spec->idle_timeout > 0 ? spec->idle_timeout
											  : set->idle_timeout;
	rec->expiry_action = spec->expiry_action != SB_EXPIRY_DEFAULT ? spec->expiry_action : set->expiry_action;
	rec->expiry_stop_after = spec->expiry_action != SB_EXPIRY_DEFAULT ? spec->expiry_stop_after : set->expiry_stop_after;
	rec->network = spec->network >= 0 ? spec->network : set->network;
	if ((rc = fill_service(rec, spec, err)) < 0)
		return rc;
	if (spec->egress && spec->egress->mode != SB_EGRESS_DEFAULT && !rec->network)
		return sb_error_set(err, SB_ERR_INVALID, _("an allow-list or --deny-all needs network on"));
	unsigned caps = sb_backend_caps(sb_backend_default());
	if (rec->network && !(caps & SB_BACKEND_CAP_NET_NAT))
		return sb_error_set(err, SB_ERR_PREREQ, _("the backend '%s' has no network for sandboxes: use --network off"),
				    rec->backend);
	if (spec->n_mounts && !(caps & SB_BACKEND_CAP_HOST_MOUNTS))
		return sb_error_set(err, SB_ERR_PREREQ, _("the backend '%s' cannot bind host folders into a sandbox"),
				    rec->backend);
	if (spec->egress && sb_egress_copy(&rec->egress, spec->egress) < 0)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	rec->exchange = !spec->no_exchange;
	rec->memory = spec->memory ? spec->memory : set->memory;
	rec->disk = spec->disk;
	rec->cpus = spec->cpus > 0 ? spec->cpus : set->cpus;
	rec->owner = dup_or_empty(spec->owner);
	rec->reason = strdup(_("creating"));
	rec->state = SB_STATE_CREATED;
	rec->state_changed = rec->created;
	rec->mounts = calloc(spec->n_mounts + 1, sizeof(*rec->mounts));
	rec->labels = calloc(spec->n_labels + 1, sizeof(*rec->labels));
	if (!rec->owner || !rec->reason || !rec->mounts || !rec->labels)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	for (size_t i = 0; i < spec->n_mounts; i++, rec->n_mounts++) {
		rec->mounts[i].host = strdup(spec->mounts[i].host);
		rec->mounts[i].path = strdup(spec->mounts[i].path);
		rec->mounts[i].mode = spec->mounts[i].mode;
		rec->mounts[i].dev = spec->mounts[i].dev;
		rec->mounts[i].ino = spec->mounts[i].ino;
		rec->mounts[i].allow_sensitive = spec->mounts[i].allow_sensitive;
		if (!rec->mounts[i].host || !rec->mounts[i].path)
			return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	for (size_t i = 0; i < spec->n_labels; i++, rec->n_labels++) {
		rec->labels[i].key = strdup(spec->labels[i].key);
		rec->labels[i].value = dup_or_empty(spec->labels[i].value);
		if (!rec->labels[i].key || !rec->labels[i].value)
			return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	return 0;
}

int sb_box_new_record(struct sb_record *rec, struct sb_root *root, const struct sb_sandbox_spec *spec,
		      const struct sb_settings *set, struct sb_error *err)
{
	int rc = fill_record(rec, spec, set, err);

	return rc < 0 ? rc : resolve_image(rec, root, spec->image, 0, err);
}

int sb_box_make_dirs(struct sb_box *b, struct sb_error *err)
{
	int rc = b->rec.disk && !b->capped ? sb_box_disk_make(b, err) : 0;
	char *bundle = sb_path_join(b->dir, "bundle");
	const char *const dirs[] = { b->upper, b->work, b->rootfs, b->workspace, bundle, b->shells };

	for (size_t i = 0; rc == 0 && i < sizeof(dirs) / sizeof(dirs[0]); i++)
		rc = dirs[i] ? sb_fs_mkdirs(dirs[i], 0700, err) : sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	free(bundle);
	if (rc < 0)
		return rc;
	/* the workspace is the sandbox's own: root inside may write it; the
	 * overlay's / takes upper's mode, which users other than root inside
	 * (an image's USER, exec --user) must be able to enter. The sandbox's
	 * directory (0700) keeps both from the host's other users. */
	const char *const open_dirs[] = { b->workspace, b->upper };
	for (size_t i = 0; i < 2; i++)
		if (chmod(open_dirs[i], 0755) < 0)
			return sb_error_errno(err, SB_ERR_IO, errno, _("cannot prepare '%s'"), open_dirs[i]);
	return 0;
}

/* An image that carries files in /workspace (sandbench commit
 * --include-workspace) starts the new sandbox's workspace with them: the
 * workspace folder is bound over that directory, which would hide them.
 * Copied like cp copies a tree: nothing followed, special files left out,
 * set-id bits dropped (the folder is on the host). */
static int seed_workspace(struct sb_box *b, struct sb_error *err)
{
	char *lower = sb_box_lower(b), *src = lower ? sb_path_join(lower, "workspace") : NULL;
	struct sb_copy_result res = { 0 };
	struct sb_vnode top = { .fd = -1, .lower = -1 };
	struct stat st;
	struct sb_xdisk d;
	struct sb_xmeter m;
	int rc = src ? 0 : sb_error_set(err, SB_ERR_NOMEM, _("out of memory")), fd;

	if (rc < 0 || lstat(src, &st) < 0 || !S_ISDIR(st.st_mode))
		goto out;
	if ((fd = open(b->workspace, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) {
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot open '%s'"), b->workspace);
		goto out;
	}
	if ((rc = sb_xdisk_init(&d, fd, b->workspace, 1, err)) < 0)
		goto out;
	d.drop_suid = 1;
	sb_xmeter_init(&m, &d.sink, &res, 0, "/workspace");
	if ((rc = sb_vnode_host(&top, src, err)) == 0 && (rc = sb_xwalk(&m.sink, &top, err)) == 0)
		rc = sb_xdisk_finish(&d, err);
	sb_xdisk_clear(&d);
out:
	if (rc < 0)
		sb_error_wrap(err, _("cannot start the workspace with the image's /workspace"));
	sb_vnode_clear(&top);
	sb_copy_result_clear(&res);
	free(src);
	free(lower);
	return rc;
}

void sb_box_roll_back(struct sb_box *b, const struct sb_error *cause)
{
	struct sb_error e2;

	if (sb_box_destroy(b, 1, &e2) == 0)
		return;
	char *reason = sb_strdupf(_("create failed: %s; cleanup failed: %s"), cause->msg, e2.msg);
	if (b->rec.name[0])
		sb_record_transition(b->root, &b->rec, SB_STATE_BROKEN, reason ? reason : cause->msg, &e2);
	free(reason);
}

static int create_locked(struct sb_sandbox_info *out, struct sb_root *root, const struct sb_sandbox_spec *spec,
			 struct sb_error *err)
{
	struct sb_error own;
	struct sb_box b;
	int rc;

	/* the record's reason quotes the failure, whether or not the caller wants it */
	if (!err)
		err = &own;
	if ((rc = sb_box_open(&b, root, spec->name, BOX_LOCK_NONE, 0, err)) < 0)
		goto out;
	if ((rc = check_spec(spec, err)) < 0 || (rc = fill_record(&b.rec, spec, &b.settings, err)) < 0 ||
	    (rc = resolve_image(&b.rec, root, spec->image, 1, err)) < 0)
		goto out;
	if (mkdir(b.dir, 0700) < 0) {
		rc = errno == EEXIST ? sb_error_set(err, SB_ERR_EXISTS, _("a sandbox named '%s' already exists"), spec->name)
				     : sb_error_errno(err, SB_ERR_IO, errno, _("cannot create sandbox '%s'"), spec->name);
		goto out;
	}
	/* from here on the directory is ours: every failure rolls back */
	if ((rc = sb_box_lock(&b, BOX_LOCK_EXCLUSIVE, err)) < 0 || (rc = sb_box_make_dirs(&b, err)) < 0 || (rc = seed_workspace(&b, err)) < 0 ||
	    (rc = sb_record_save(root, &b.rec, err)) < 0 ||
	    (rc = sb_box_touch(&b, err)) < 0 || (rc = sb_box_boot(&b, NULL, err)) < 0 ||
	    (rc = sb_record_transition(root, &b.rec, SB_STATE_RUNNING, _("created"), err)) < 0) {
		sb_box_roll_back(&b, err);
		goto out;
	}
	b.loaded = 1;
	rc = out ? sb_box_info(out, &b, err) : 0;
out:
	sb_box_close(&b);
	return rc;
}

int sb_box_create(struct sb_sandbox_info *out, struct sb_root *root, const struct sb_sandbox_spec *spec,
		  struct sb_error *err)
{
	int rc;

	if (out)
		memset(out, 0, sizeof(*out));
	struct sb_sandbox_spec resolved = *spec;
	struct sb_sandbox_mount *mounts;
	struct sb_mount *held;
	if ((rc = resolve_mounts(&mounts, &held, root, spec, err)) < 0) {
		free_mounts(mounts, held, spec->n_mounts);
		return rc;
	}
	resolved.mounts = mounts;
	/* fail closed: nothing is made when a prerequisite is missing; shared lock:
	 * creates run in parallel, image removal (exclusive) waits for them */
	if ((rc = sb_doctor_require(root, err)) == 0 && (rc = sb_root_lock(root, SB_LOCK_SHARED, err)) == 0) {
		rc = create_locked(out, root, &resolved, err);
		sb_root_unlock(root);
	}
	free_mounts(mounts, held, spec->n_mounts);
	return rc;
}

int sb_sandbox_create(struct sb_sandbox_info *out, struct sb_root *root, const struct sb_sandbox_spec *spec,
		      struct sb_error *err)
{
	int rc;

	if (out)
		memset(out, 0, sizeof(*out));
	if ((rc = sb_sandbox_name_check(spec->name, err)) < 0 || (rc = check_spec(spec, err)) < 0)
		return rc;
	/* a warm member of the pool when one matches; then the pool is topped up
	 * in the background (failures there are the refill's, not the caller's) */
	if ((rc = sb_pool_claim(out, root, spec, err)) < 0)
		return rc;
	int used = rc;
	rc = used == 1 ? 0 : sb_box_create(out, root, spec, err);
	if (used)
		sb_pool_refill_detached(root);
	return rc;
}
