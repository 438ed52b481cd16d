/* Host mounts re-verified at every boot (internal.h). A sandbox with write
 * access to a folder above another sandbox's host mount can swap that mount
 * for a symlink or another folder while its owner is stopped; so every boot
 * walks the recorded path afresh, and what it binds is the folder it opened,
 * not a path that could change between the check and runsc's use of it. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "base/fs.h"
#include "base/i18n.h"

/* Why the part of host up to end could not be opened as a folder. */
static int walk_error(int dirfd, const char *name, const char *host, size_t end, int e, struct sb_error *err)
{
	struct stat st;
	int len = (int)end;

	if (e == ENOENT)
		return sb_error_set(err, SB_ERR_NOTFOUND, _("'%.*s' no longer exists"), len, host);
	if ((e == ENOTDIR || e == ELOOP) && fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return S_ISLNK(st.st_mode) ? sb_error_set(err, SB_ERR_UNSAFE, _("'%.*s' is a symbolic link now"), len, host)
					   : sb_error_set(err, SB_ERR_UNSAFE, _("'%.*s' is not a folder now"), len, host);
	return sb_error_errno(err, SB_ERR_IO, e, _("cannot open '%.*s'"), len, host);
}

/* An O_PATH fd of the folder at host, reached from "/" one component at a
 * time with O_NOFOLLOW: a symlink anywhere on the way is refused, not
 * followed. host must be absolute and normalised (no empty, "." or ".."
 * component), as create records it, so that the policy's checks of the path
 * text hold for what is opened. */
static int open_nofollow(int *out, const char *host, struct sb_error *err)
{
	const char *p = host + 1;
	size_t n = strlen(host);
	int fd;

	*out = -1;
	if (host[0] != '/' || (n > 1 && host[n - 1] == '/'))
		return sb_error_set(err, SB_ERR_UNSAFE, _("'%s' is not an absolute, normalised path"), host);
	if ((fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot open '/'"));
	while (*p) {
		size_t len = strcspn(p, "/");
		char name[NAME_MAX + 1];
		int next = -1, e = 0;
		if (len == 0 || len > NAME_MAX || (p[0] == '.' && (len == 1 || (len == 2 && p[1] == '.')))) {
			close(fd);
			return sb_error_set(err, SB_ERR_UNSAFE, _("'%s' is not an absolute, normalised path"), host);
		}
		memcpy(name, p, len);
		name[len] = '\0';
		if ((next = openat(fd, name, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC)) < 0)
			e = walk_error(fd, name, host, (size_t)(p - host) + len, errno, err);
		close(fd);
		if (e < 0)
			return e;
		fd = next;
		p += len + (p[len] == '/');
	}
	*out = fd;
	return 0;
}

int sb_mount_identify(unsigned long long *dev, unsigned long long *ino, const char *host, struct sb_error *err)
{
	struct stat st;
	int fd, rc = open_nofollow(&fd, host, err);

	if (rc < 0)
		return rc;
	if (fstat(fd, &st) < 0)
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot inspect '%s'"), host);
	close(fd);
	*dev = rc == 0 ? (unsigned long long)st.st_dev : 0;
	*ino = rc == 0 ? (unsigned long long)st.st_ino : 0;
	return rc;
}

/* Opens mount m's folder as it is now and checks it: no symlink on the way,
 * the identity recorded at create (if any), the mount policy. */
static int verify(int *out, struct stat *st, const struct sb_box *b, const struct sb_sandbox_mount *m,
		  struct sb_error *err)
{
	const struct sb_mount_policy policy = { .state_root = sb_root_path(b->root), .allow_sensitive = m->allow_sensitive };
	int fd, rc = open_nofollow(&fd, m->host, err);

	if (rc < 0)
		return rc;
	if (fstat(fd, st) < 0)
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot inspect '%s'"), m->host);
	else if ((m->dev || m->ino) && ((unsigned long long)st->st_dev != m->dev || (unsigned long long)st->st_ino != m->ino))
		rc = sb_error_set(err, SB_ERR_UNSAFE,
				  _("it is another folder than at create (device %llu, inode %llu; at create %llu, %llu)"),
				  (unsigned long long)st->st_dev, (unsigned long long)st->st_ino, m->dev, m->ino);
	else
		rc = sb_mount_check_host(m->host, fd, &policy, err);
	if (rc < 0)
		close(fd);
	else
		*out = fd;
	return rc;
}

/* Binds the folder open at fd (with what is mounted below it) at target: a
 * clone of it made before it is attached private (nothing propagates in or
 * out) and, for ro, read-only all the way down, so that the host enforces ro
 * too, not only runsc. */
static int bind_verified(const char *target, int fd, int ro, struct sb_error *err)
{
	struct mount_attr attr = { .attr_set = ro ? MOUNT_ATTR_RDONLY : 0, .propagation = MS_PRIVATE };
	int tree, rc = 0;

	if (mkdir(target, 0700) < 0 && errno != EEXIST)
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot make '%s'"), target);
	tree = open_tree(fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
	if (tree < 0 || mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof(attr)) < 0 ||
	    move_mount(tree, "", AT_FDCWD, target, MOVE_MOUNT_F_EMPTY_PATH) < 0)
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot bind the verified host folder at '%s'"), target);
	if (tree >= 0)
		close(tree);
	return rc;
}

/* A missing or replaced folder is a change of the mount; an I/O error is not. */
static int is_change(int rc)
{
	return rc == SB_ERR_UNSAFE || rc == SB_ERR_NOTFOUND;
}

/* Verifies and binds mount i at dir/mounts/<i>; *st is what was bound. */
static int stage_one(struct sb_box *b, size_t i, struct stat *st, struct sb_error *err)
{
	const struct sb_sandbox_mount *m = &b->rec.mounts[i];
	char num[24];
	int fd, rc;

	if ((rc = verify(&fd, st, b, m, err)) < 0)
		return is_change(rc) ? sb_error_wrap(err, _("mount changed: host folder '%s' (at '%s')"), m->host, m->path)
				     : sb_error_wrap(err, _("cannot verify host folder '%s' (at '%s')"), m->host, m->path);
	snprintf(num, sizeof(num), "%zu", i);
	if (!(b->mount_src[i] = sb_path_join(b->mounts, num)))
		rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	else
		rc = bind_verified(b->mount_src[i], fd, m->mode == SB_MOUNT_RO, err);
	close(fd);
	return rc;
}

/* Stages every mount; e is never NULL: a change is kept as the box's reason. */
static int stage_all(struct sb_box *b, struct stat *seen, struct sb_error *e)
{
	int rc = 0;

	if (mkdir(b->mounts, 0700) < 0 && errno != EEXIST)
		return sb_error_errno(e, SB_ERR_IO, errno, _("cannot make '%s'"), b->mounts);
	for (size_t i = 0; rc == 0 && i < b->rec.n_mounts; i++)
		rc = stage_one(b, i, &seen[i], e);
	if (is_change(rc) && !(b->mount_changed = strdup(e->msg)))
		rc = sb_error_set(e, SB_ERR_NOMEM, _("out of memory"));
	return rc;
}

int sb_box_stage_mounts(struct sb_box *b, struct sb_error *err)
{
	struct sb_error e;
	struct stat *seen;
	int rc;

	free(b->mount_changed);
	b->mount_changed = NULL;
	/* what an earlier boot of this box, or a crash, left staged */
	if ((rc = sb_box_unstage_mounts(b, err)) < 0 || b->rec.n_mounts == 0)
		return rc;
	seen = calloc(b->rec.n_mounts, sizeof(*seen));
	if (!seen || !(b->mount_src = calloc(b->rec.n_mounts + 1, sizeof(*b->mount_src)))) {
		free(seen);
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	if ((rc = stage_all(b, seen, &e)) < 0) {
		sb_box_unstage_mounts(b, NULL);
		if (err) {
			*err = e;
			sb_error_wrap(err, _("cannot boot sandbox '%s'"), b->rec.name);
		}
		free(seen);
		return rc;
	}
	/* trust on first use for records without identities (schema 1): the
	 * caller's state transition saves them */
	for (size_t i = 0; i < b->rec.n_mounts; i++) {
		b->rec.mounts[i].dev = (unsigned long long)seen[i].st_dev;
		b->rec.mounts[i].ino = (unsigned long long)seen[i].st_ino;
	}
	free(seen);
	return 0;
}

/* Unmounts whatever is stacked at path (several after a crash between boots). */
static int unmount_all(const char *path, struct sb_error *err)
{
	for (int n = 0; n < 16; n++) {
		if (umount2(path, UMOUNT_NOFOLLOW) == 0)
			continue;
		if (errno == EBUSY && umount2(path, MNT_DETACH | UMOUNT_NOFOLLOW) == 0)
			continue;
		/* EINVAL: nothing (more) mounted there */
		if (errno == EINVAL || errno == ENOENT)
			return 0;
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot unmount '%s'"), path);
	}
	return sb_error_set(err, SB_ERR_BUSY, _("cannot unmount '%s': too many mounts there"), path);
}

/* The staging folders stay between boots, empty: no journalled directory
 * changes on the restore path; rm removes them with the sandbox. */
int sb_box_unstage_mounts(struct sb_box *b, struct sb_error *err)
{
	struct dirent *de;
	DIR *d;
	int rc = 0;

	for (size_t i = 0; b->mount_src && b->mount_src[i]; i++)
		free(b->mount_src[i]);
	free(b->mount_src);
	b->mount_src = NULL;
	if (!(d = opendir(b->mounts)))
		return errno == ENOENT ? 0 : sb_error_errno(err, SB_ERR_IO, errno, _("cannot list '%s'"), b->mounts);
	while (rc == 0 && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char *path = sb_path_join(b->mounts, de->d_name);
		rc = path ? unmount_all(path, err) : sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		free(path);
	}
	closedir(d);
	return rc;
}

int sb_box_mounts_staged(const struct sb_box *b)
{
	DIR *d = opendir(b->mounts);
	struct dirent *de;
	int staged = 0;

	while (d && !staged && (de = readdir(d))) {
		struct statx stx;
		staged = de->d_name[0] != '.' &&
			 statx(dirfd(d), de->d_name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, 0, &stx) == 0 &&
			 (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
	}
	if (d)
		closedir(d);
	return staged;
}
