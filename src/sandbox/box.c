#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "base/clock.h"
#include "base/digest.h"
#include "base/fs.h"
#include "base/generation.h"
#include "base/i18n.h"
#include "base/name.h"
#include "base/proc.h"
#include "sandbox/pool.h"
#include "sandbox/sandbox.h"

#define SESSION_END_MS 3000

int sb_pool_member_name(const char *name)
{
	return name && !strncmp(name, SB_POOL_PREFIX, strlen(SB_POOL_PREFIX));
}

/* The warm pool's members carry a prefix users cannot give (pool.h): every
 * name a user gives is checked here; the box layer takes both. */
int sb_sandbox_name_check(const char *name, struct sb_error *err)
{
	int rc = sb_name_check(name, _("sandbox name"), err);

	if (rc == 0 && sb_pool_member_name(name))
		return sb_error_set(err, SB_ERR_INVALID, _("sandbox names starting with '%s' are reserved for the warm pool"),
				    SB_POOL_PREFIX);
	return rc;
}

int sb_box_name_check(const char *name, struct sb_error *err)
{
	return sb_name_check(name, _("sandbox name"), err);
}

/* Paths below ROOT/sandboxes/<name>, by field; on_disk: below disk/ when
 * the sandbox's disk is capped (disk_limit.c). */
static const struct {
	size_t offset;
	const char *rel;
	int on_disk;
} box_paths[] = {
	{ offsetof(struct sb_box, rootfs), "rootfs", 0 },
	{ offsetof(struct sb_box, upper), "upper", 1 },
	{ offsetof(struct sb_box, work), "work", 1 },
	{ offsetof(struct sb_box, workspace), "workspace", 1 },
	{ offsetof(struct sb_box, checkpoint), "checkpoint", 0 },
	{ offsetof(struct sb_box, checkpoint_tmp), "checkpoint.tmp", 0 },
	{ offsetof(struct sb_box, checkpoint_used), "checkpoint.used", 0 },
	{ offsetof(struct sb_box, activity), "activity", 0 },
	{ offsetof(struct sb_box, exec_lock), "exec.lock", 0 },
	{ offsetof(struct sb_box, shells), "shells", 0 },
	{ offsetof(struct sb_box, hosts), "hosts", 0 },
	{ offsetof(struct sb_box, resolv), "resolv.conf", 0 },
	{ offsetof(struct sb_box, mounts), "mounts", 0 },
	{ offsetof(struct sb_box, disk), SB_BOX_DISK, 0 },
	{ offsetof(struct sb_box, disk_image), SB_BOX_DISK_IMAGE, 0 },
};

int sb_box_set_paths(struct sb_box *b, int capped, struct sb_error *err)
{
	b->capped = capped;
	for (size_t i = 0; i < sizeof(box_paths) / sizeof(box_paths[0]); i++) {
		char **field = (char **)((char *)b + box_paths[i].offset);
		free(*field);
		*field = capped && box_paths[i].on_disk ? sb_strdupf("%s/" SB_BOX_DISK "/%s", b->dir, box_paths[i].rel)
							: sb_path_join(b->dir, box_paths[i].rel);
		if (!*field)
			return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	return 0;
}

int sb_box_open(struct sb_box *b, struct sb_root *root, const char *name, enum box_lock lock, int load,
		struct sb_error *err)
{
	int rc;

	memset(b, 0, sizeof(*b));
	b->root = root;
	b->lock_fd = -1;
	if ((rc = sb_box_name_check(name, err)) < 0)
		return rc;
	char *rel = sb_strdupf("sandboxes/%s", name);
	b->dir = rel ? sb_root_file(root, rel) : NULL;
	free(rel);
	if (!b->dir)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	char *image = sb_path_join(b->dir, SB_BOX_DISK_IMAGE);
	struct stat st;
	rc = image ? sb_box_set_paths(b, lstat(image, &st) == 0, err) : sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	free(image);
	if (rc < 0)
		return rc;
	/* after a host restart: what needs the disk finds it (a failure here
	 * leaves disk/ empty, and sb_box_boot says why) */
	if (b->capped)
		sb_box_disk_attach(b, NULL);
	if ((rc = sb_settings_load(&b->settings, root, err)) < 0)
		return rc;
	if (lock != BOX_LOCK_NONE && (rc = sb_box_lock(b, lock, err)) < 0)
		return rc;
	if (load) {
		if ((rc = sb_record_load(&b->rec, root, name, err)) < 0)
			return rc;
		b->loaded = 1;
	}
	return 0;
}

int sb_box_lock(struct sb_box *b, enum box_lock lock, struct sb_error *err)
{
	const char *name = strrchr(b->dir, '/') + 1;
	char *path = sb_path_join(b->dir, "lock");

	b->lock_fd = path ? open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600) : -1;
	free(path);
	if (b->lock_fd < 0)
		return errno == ENOENT ? sb_error_set(err, SB_ERR_NOTFOUND, _("no sandbox named '%s'"), name)
				       : sb_error_errno(err, SB_ERR_IO, errno, _("cannot lock sandbox '%s'"), name);
	while (flock(b->lock_fd, lock == BOX_LOCK_EXCLUSIVE ? LOCK_EX : LOCK_SH) < 0)
		if (errno != EINTR)
			return sb_error_errno(err, SB_ERR_IO, errno, _("cannot lock sandbox '%s'"), name);
	return 0;
}

void sb_box_close(struct sb_box *b)
{
	if (!b)
		return;
	if (b->lock_fd >= 0)
		close(b->lock_fd);
	for (size_t i = 0; i < sizeof(box_paths) / sizeof(box_paths[0]); i++)
		free(*(char **)((char *)b + box_paths[i].offset));
	free(b->dir);
	free(b->lower);
	free(b->exchange);
	for (size_t i = 0; b->mount_src && b->mount_src[i]; i++)
		free(b->mount_src[i]);
	free(b->mount_src);
	free(b->mount_changed);
	if (b->be)
		b->be->close(b->be_state);
	sb_record_clear(&b->rec);
	sb_netinfo_clear(&b->net);
	memset(b, 0, sizeof(*b));
	b->lock_fd = -1;
}

int sb_box_backend(struct sb_box *b, struct sb_error *err)
{
	const struct sb_backend_ops *be;
	int rc;

	if (b->be)
		return 0;
	if ((rc = sb_backend_find(&be, b->rec.backend, err)) < 0 || (rc = be->open(&b->be_state, b->root, err)) < 0)
		return rc;
	b->be = be;
	return 0;
}

const struct sb_backend_sandbox *sb_box_target(struct sb_box *b)
{
	if (!b->lower && b->rec.image_digest[0])
		b->lower = sb_box_lower(b);
	if (!b->exchange && b->rec.exchange)
		b->exchange = sb_root_file(b->root, "exchange");
	b->target = (struct sb_backend_sandbox){
		.rec = &b->rec, .dir = b->dir, .lower = b->lower, .rootfs = b->rootfs, .upper = b->upper,
		.work = b->work, .workspace = b->workspace, .exchange = b->rec.exchange ? b->exchange : NULL,
		.hosts = b->hosts, .resolv = b->rec.network ? b->net.resolv_conf : b->resolv,
		.net = b->rec.network ? &b->net : NULL, .timeout_ms = b->settings.runsc_timeout_ms,
		.mount_sources = (const char *const *)b->mount_src,
	};
	return &b->target;
}

char *sb_box_lower(const struct sb_box *b)
{
	char *rel = sb_strdupf("images/rootfs/%s", sb_digest_hex(b->rec.image_digest));
	char *path = rel ? sb_root_file(b->root, rel) : NULL;

	free(rel);
	return path;
}

int sb_box_exec_begin(struct sb_box *b)
{
	int fd = open(b->exec_lock, O_RDONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);

	if (fd >= 0 && flock(fd, LOCK_SH) < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

int sb_box_exec_running(struct sb_box *b)
{
	int fd = open(b->exec_lock, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	int busy = fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK;

	if (fd >= 0)
		close(fd);
	return busy;
}

void sb_box_touch_existing(struct sb_box *b)
{
	struct timespec ts[2] = { { .tv_sec = sb_clock_now() }, { .tv_sec = sb_clock_now() } };

	if (utimensat(AT_FDCWD, b->activity, ts, AT_SYMLINK_NOFOLLOW) == 0)
		sb_generation_bump(b->root, SB_GEN_SANDBOXES, NULL);
}

int sb_box_touch(struct sb_box *b, struct sb_error *err)
{
	struct timespec ts[2] = { { .tv_sec = sb_clock_now() }, { .tv_sec = sb_clock_now() } };
	int fd = open(b->activity, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);

	if (fd < 0 || futimens(fd, ts) < 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return sb_error_errno(err, SB_ERR_IO, e, _("cannot record activity of sandbox '%s'"), b->rec.name);
	}
	close(fd);
	sb_generation_bump(b->root, SB_GEN_SANDBOXES, NULL);
	return 0;
}

/* hosts, and with network off a resolv.conf (the network module makes the
 * one for network on): files of the sandbox's own directory that the backend
 * binds read-only. Nothing is written into the guest's tree, whose /etc the
 * guest may have replaced with a symlink to a host folder. */
static int write_host_files(struct sb_box *b, struct sb_error *err)
{
	static const char resolv_off[] = "# network is off for this sandbox\n";
	char *hosts = sb_strdupf("127.0.0.1\tlocalhost\n::1\tlocalhost\n127.0.1.1\t%s\n", b->rec.name);
	int rc;

	if (!hosts)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	/* before every boot: written only when they differ, which they rarely do */
	rc = sb_fs_write_changed(b->hosts, hosts, strlen(hosts), 0644, err);
	if (rc == 0 && !b->rec.network)
		rc = sb_fs_write_changed(b->resolv, resolv_off, strlen(resolv_off), 0644, err);
	free(hosts);
	return rc;
}

int sb_box_boot(struct sb_box *b, const char *image_path, struct sb_error *err)
{
	/* first: a host mount that changed refuses the boot before anything is set up */
	int rc = b->capped ? sb_box_disk_attach(b, err) : 0;

	if (rc == 0)
		rc = sb_box_stage_mounts(b, err);

	if (rc < 0)
		return rc;
	rc = sb_box_network_up(b, err);
	if (rc == 0)
		rc = write_host_files(b, err);
	if (rc == 0)
		rc = sb_box_backend(b, err);
	if (rc < 0) {
		sb_error_wrap(err, _("cannot prepare sandbox '%s'"), b->rec.name);
		return rc;
	}
	if ((rc = b->be->boot(b->be_state, sb_box_target(b), image_path, err)) < 0)
		return rc;
	/* what this boot ran on; the caller's state transition saves it */
	char *build = strdup(b->be->build(b->be_state));
	if (build) {
		free(b->rec.runtime_build);
		b->rec.runtime_build = build;
	}
	sb_host_boot_id(b->rec.boot_id, NULL);
	/* a restored service runs on inside the checkpoint with its supervisor;
	 * a cold boot runs it again */
	if (!image_path && (rc = sb_box_service_start(b, err)) < 0) {
		sb_box_teardown(b, 1, NULL);
		return rc;
	}
	return 0;
}

int sb_box_teardown(struct sb_box *b, int force, struct sb_error *err)
{
	int rc = sb_box_backend(b, err);

	if (rc < 0)
		return rc;
	/* runsc's delete -force of a frozen container panics: thaw it first */
	sb_box_unfreeze(b);
	rc = b->be->teardown(b->be_state, sb_box_target(b),
			     (force ? SB_TEARDOWN_FORCE : 0) | (b->container_stopped ? SB_TEARDOWN_STOPPED : 0), err);
	if (rc == 0 || force)
		sb_box_unmark_paused(b);
	/* after the runtime, whose gofer serves the staged folders */
	if (rc < 0 && !force)
		return rc;
	int urc = sb_box_unstage_mounts(b, rc < 0 ? NULL : err);
	return rc < 0 ? rc : urc;
}

static unsigned long long start_time(pid_t pid)
{
	unsigned long long t = 0;

	return sb_proc_stat(pid, NULL, &t) == 0 ? t : 0;
}

void sb_box_kill_inside(struct sb_box *b, const char *ipid_file)
{
	if (sb_box_backend(b, NULL) == 0)
		b->be->kill(b->be_state, sb_box_target(b), ipid_file);
}

/* Shell files: shells/<pid> holding "<start time> <stem>" (the start time
 * guards against a reused pid). */
void sb_box_end_shells(struct sb_box *b)
{
	DIR *d = opendir(b->shells);
	struct dirent *de;
	struct pollfd pfd[64];
	int n = 0;

	if (!d)
		return;
	while ((de = readdir(d)) && n < 64) {
		char *end, *text = NULL, *path;
		long pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0 || !(path = sb_path_join(b->shells, de->d_name)))
			continue;
		int got = sb_fs_read_file(&text, NULL, path, 4096, NULL);
		/* taken before the end, so that a session holder that sees its shell
		 * end knows that a stop ended it (sb_shell_ended_by_stop) */
		unlink(path);
		if (got == 0 && strtoull(text, &end, 10) == start_time((pid_t)pid)) {
			int fd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
			if (fd >= 0) {
				end += strspn(end, " ");
				end[strcspn(end, "\n")] = '\0';
				/* the host `runsc exec` exits as soon as its process
				 * inside is gone: its exit means the pty is released */
				char *ipid_file = *end ? sb_strdupf("%s.ipid", end) : NULL;
				if (ipid_file)
					sb_box_kill_inside(b, ipid_file);
				free(ipid_file);
				pfd[n++] = (struct pollfd){ .fd = fd, .events = POLLIN };
			}
		}
		free(text);
		free(path);
	}
	closedir(d);
	/* the host side follows its process inside; what remains after the grace
	 * period is killed. A pidfd turns readable when its process exits. */
	for (int i = 0; i < n; i++) {
		if (poll(&pfd[i], 1, SESSION_END_MS) <= 0)
			syscall(SYS_pidfd_send_signal, pfd[i].fd, SIGKILL, NULL, 0);
		close(pfd[i].fd);
	}
}
