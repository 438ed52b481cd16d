/* The claim: a booted pool member becomes the sandbox a create asked for
 * (docs/pool.md). Its directory is renamed to the new name (the overlay
 * mount and runsc's open files move with it; runsc knows it by its id, which
 * stays), its record is the one create would have written (name, kind,
 * owner, labels, time), its network (network on) is renamed with it and its
 * identity is set: hostname inside the guest by its namer (pool_namer.c) or
 * an exec, /etc/hosts through the file of its own directory that the guest
 * sees bound read-only. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "internal.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "base/log.h"
#include "base/proc.h"
#include "sandbox/pool.h"
#include "sandbox/sandbox.h"

#define HOSTNAME_TIMEOUT_MS 5000

/* What a member can stand in for: a temporary sandbox (members boot with a
 * temporary's unsynced disk), the default exchange, no host mounts, no disk
 * cap, no service, no published port, the default egress policy. Network on
 * or off is the profile's, compared with the member's record. */
static int claimable(const struct sb_sandbox_spec *spec, const struct sb_settings *set)
{
	enum sb_sandbox_kind kind = spec->kind != SB_KIND_DEFAULT ? spec->kind : set->kind;

	return kind == SB_KIND_TEMPORARY && !spec->n_mounts && !spec->no_exchange && !spec->disk &&
	       !(spec->service && spec->service->command) && !spec->n_publish &&
	       (!spec->egress || spec->egress->mode == SB_EGRESS_DEFAULT);
}

static int matches(const struct sb_record *m, const struct sb_record *want, const struct sb_settings *set)
{
	return m->state == SB_STATE_RUNNING && !strcmp(m->image_digest, want->image_digest) && m->network == want->network &&
	       m->memory == want->memory && fabs(m->cpus - want->cpus) < 1e-9 && m->exchange && !m->n_mounts &&
	       !m->n_publish && !m->service.command && sb_pool_net_current(m, set);
}

/* The member's lock, taken without waiting (a busy member is being claimed
 * or removed), and its record; 0 when it can serve want. */
static int take_member(struct sb_box *m, struct sb_root *root, const char *name, const struct sb_record *want)
{
	if (sb_box_open(m, root, name, BOX_LOCK_NONE, 0, NULL) < 0)
		return -1;
	char *lock = sb_path_join(m->dir, "lock");
	m->lock_fd = lock ? open(lock, O_RDWR | O_CLOEXEC | O_NOFOLLOW) : -1;
	free(lock);
	if (m->lock_fd < 0 || flock(m->lock_fd, LOCK_EX | LOCK_NB) < 0 || sb_record_load(&m->rec, root, name, NULL) < 0)
		return -1;
	m->loaded = 1;
	return matches(&m->rec, want, &m->settings) && sb_box_gone(m) == SB_ALIVE ? 0 : -1;
}

/* The new identity inside: hostname by the namer or an exec (the spec fixed
 * it at boot), /etc/hosts by rewriting, in place, the file the guest has
 * bound read-only (a host file of the sandbox's own directory, never a
 * guest path). */
static int set_identity(struct sb_box *b, struct sb_error *err)
{
	char *hosts = sb_strdupf("127.0.0.1\tlocalhost\n::1\tlocalhost\n127.0.1.1\t%s\n", b->rec.name);
	int rc = hosts ? 0 : sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	int fd = rc == 0 ? open(b->hosts, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW) : -1;

	if (rc == 0 && (fd < 0 || write(fd, hosts, strlen(hosts)) != (ssize_t)strlen(hosts)))
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot write '%s'"), b->hosts);
	if (fd >= 0)
		close(fd);
	free(hosts);
	/* the member's namer, else an exec of the image's hostname */
	if (rc < 0 || (rc = sb_pool_namer_name(b, err)) <= 0 || (rc = sb_box_backend(b, err)) < 0)
		return rc;
	char *const argv[] = { "/bin/sh", "-c", "hostname \"$1\"",
			       "sh", b->rec.name, NULL };
	char *const env[] = { "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", NULL };
	/* sethostname needs CAP_SYS_ADMIN, which no other process of a sandbox gets */
	static const char *const caps[] = { "CAP_SYS_ADMIN", NULL };
	struct sb_backend_exec x = { .argv = argv, .env = env, .cwd = "/", .caps = caps, .proc = SB_PROC_OPTS_DEFAULT };
	struct sb_proc_result res;
	x.proc.timeout_ms = HOSTNAME_TIMEOUT_MS;
	memset(&res, 0, sizeof(res));
	rc = b->be->exec(&res, b->be_state, sb_box_target(b), &x, err);
	if (rc == 0 && res.status != 0)
		rc = sb_error_set(err, SB_ERR_RUNTIME, _("cannot set the hostname of sandbox '%s' (exit status %d)"),
				  b->rec.name, res.status);
	sb_proc_result_clear(&res);
	return rc;
}

/* The member as the new sandbox: record (member's id, boot and runtime kept),
 * a timeline that starts with this create, identity, activity now. */
static int become(struct sb_box *b, struct sb_record *rec, const struct sb_record *member, struct sb_error *err)
{
	memcpy(rec->id, member->id, sizeof(rec->id));
	memcpy(rec->backend, member->backend, sizeof(rec->backend));
	memcpy(rec->boot_id, member->boot_id, sizeof(rec->boot_id));
	/* the image's configuration: the member's, of the same digest */
	rec->image_config = json_incref(member->image_config);
	free(rec->runtime_build);
	if (!(rec->runtime_build = strdup(member->runtime_build ? member->runtime_build : "")))
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	b->rec = *rec;
	memset(rec, 0, sizeof(*rec));
	b->loaded = 1;
	for (const char *const *f = (const char *const[]){ "timeline.jsonl", "timeline.jsonl.1", NULL }; *f; f++) {
		char *path = sb_path_join(b->dir, *f);
		if (path && unlink(path) < 0 && errno != ENOENT)
			sb_log("pool: cannot remove '%s': %s", path, strerror(errno));
		free(path);
	}
	int rc = sb_box_network_claim(b, member->name, err);
	if (rc == 0)
		rc = set_identity(b, err);
	if (rc == 0)
		rc = sb_record_transition(b->root, &b->rec, SB_STATE_RUNNING, _("created"), err);
	return rc < 0 ? rc : sb_box_touch(b, err);
}

/* Renames member to rec's name and makes it that sandbox. 1: done; 0: it
 * could not serve (rolled back, logged); 2: it was used up doing so (rolled
 * back, logged); negative: the name is taken. */
static int claim_member(struct sb_sandbox_info *out, struct sb_box *m, struct sb_record *rec, struct sb_error *err)
{
	struct sb_box b;
	struct sb_error e;
	int rc = sb_box_open(&b, m->root, rec->name, BOX_LOCK_NONE, 0, err);

	if (rc == 0 && renameat2(AT_FDCWD, m->dir, AT_FDCWD, b.dir, RENAME_NOREPLACE) < 0)
		rc = errno == EEXIST ? sb_error_set(err, SB_ERR_EXISTS, _("a sandbox named '%s' already exists"), rec->name)
				     : sb_error_errno(err, SB_ERR_IO, errno, _("cannot create sandbox '%s'"), rec->name);
	if (rc < 0) {
		sb_box_close(&b);
		return rc;
	}
	b.lock_fd = m->lock_fd;
	m->lock_fd = -1;
	if (become(&b, rec, &m->rec, &e) < 0) {
		sb_log("pool: claim of '%s' as '%s' failed: %s", strrchr(m->dir, '/') + 1, b.rec.name, e.msg);
		sb_box_roll_back(&b, &e);
		sb_box_close(&b);
		return 2;
	}
	rc = out ? sb_box_info(out, &b, err) : 0;
	sb_box_close(&b);
	return rc < 0 ? rc : 1;
}

/* 1: claimed; 2: members were used up but none claimed; 0: none tried. */
static int claim_locked(struct sb_sandbox_info *out, struct sb_root *root, struct sb_record *rec, struct sb_error *err)
{
	char *dir = sb_root_file(root, "sandboxes");
	DIR *d = dir ? opendir(dir) : NULL;
	struct dirent *de;
	int rc = 0, used = 0;

	free(dir);
	while (d && (rc == 0 || rc == 2) && (de = readdir(d))) {
		struct sb_box m;
		if (!sb_pool_member_name(de->d_name))
			continue;
		if (take_member(&m, root, de->d_name, rec) == 0)
			used |= (rc = claim_member(out, &m, rec, err)) == 2;
		sb_box_close(&m);
	}
	if (rc == 0 && used)
		rc = 2;
	if (d)
		closedir(d);
	return rc;
}

int sb_pool_claim(struct sb_sandbox_info *out, struct sb_root *root, const struct sb_sandbox_spec *spec,
		  struct sb_error *err)
{
	char *profiles = sb_root_file(root, "pool/profiles.json");
	struct sb_settings set;
	struct sb_record rec;
	struct stat st;
	int rc = profiles && stat(profiles, &st) == 0 ? 0 : -1;

	free(profiles);
	/* no pool, or a request no member can serve: create boots (and reports
	 * what is wrong with the request, such as an unknown image) */
	if (rc < 0 || sb_settings_load(&set, root, NULL) < 0 || !claimable(spec, &set))
		return 0;
	memset(&rec, 0, sizeof(rec));
	if (sb_box_new_record(&rec, root, spec, &set, NULL) < 0) {
		sb_record_clear(&rec);
		return 0;
	}
	if ((rc = sb_root_lock(root, SB_LOCK_SHARED, err)) == 0) {
		rc = claim_locked(out, root, &rec, err);
		sb_root_unlock(root);
	}
	sb_record_clear(&rec);
	return rc;
}
