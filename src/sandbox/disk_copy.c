/* A fork's disk: a sandbox's overlay upper (and workspace) copied as it is,
 * for ext4 has no reflinks. The tree is the guest's: every entry is reached
 * from its parent's fd without following anything (O_NOFOLLOW at every step,
 * the inode opened checked against the one listed), and the walk never
 * leaves the source's file system. Whiteouts (0:0 character devices) and
 * the opaque markers (trusted.overlay.* extended attributes) are what makes
 * the copy an overlay upper again, so they are copied with the rest. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "internal.h"
#include "base/i18n.h"

#define DEPTH_MAX 256
#define XATTR_CAP 65536

struct seen_link {
	dev_t dev;
	ino_t ino;
	char *path;                      /* of the first copy, relative to the top */
};

struct dcopy {
	dev_t dev;                       /* the source's file system */
	int dst_top;
	const char *label;
	unsigned long long *skipped;
	struct seen_link *links;
	size_t n_links, cap_links;
	char path[PATH_MAX];             /* of the entry at hand, relative to the top */
	char buf[1 << 16];
};

static int fail(struct dcopy *c, struct sb_error *err)
{
	return sb_error_errno(err, SB_ERR_IO, errno, _("cannot copy '/%s' of %s"), c->path, c->label);
}

/* Extended attributes of the open file s onto d; what d's file system does
 * not support is left out. */
static int copy_xattrs(struct dcopy *c, int s, int d, struct sb_error *err)
{
	char names[XATTR_CAP], *value = c->buf;
	ssize_t len = flistxattr(s, names, sizeof(names));

	if (len < 0)
		return errno == ENOTSUP ? 0 : fail(c, err);
	for (char *n = names; n < names + len; n += strlen(n) + 1) {
		ssize_t vlen = fgetxattr(s, n, value, sizeof(c->buf));
		if (vlen < 0 && errno == ENODATA)
			continue;
		if (vlen < 0 || (fsetxattr(d, n, value, (size_t)vlen, 0) < 0 && errno != ENOTSUP))
			return fail(c, err);
	}
	return 0;
}

/* Owner first (chown drops set-id bits and file capabilities), then the
 * attributes, the mode and the times. */
static int copy_meta(struct dcopy *c, int s, int d, const struct stat *st, struct sb_error *err)
{
	const struct timespec ts[2] = { st->st_atim, st->st_mtim };

	if (fchown(d, st->st_uid, st->st_gid) < 0)
		return fail(c, err);
	int rc = copy_xattrs(c, s, d, err);
	if (rc == 0 && (fchmod(d, st->st_mode & 07777) < 0 || futimens(d, ts) < 0))
		rc = fail(c, err);
	return rc;
}

/* Opens name in dir as the very inode st describes, never following it. */
static int open_same(struct dcopy *c, int dir, const char *name, int flags, const struct stat *st,
		     struct sb_error *err)
{
	struct stat now;
	int fd = openat(dir, name, flags | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return fail(c, err);
	if (fstat(fd, &now) < 0 || now.st_dev != st->st_dev || now.st_ino != st->st_ino) {
		close(fd);
		errno = ESTALE;
		return fail(c, err);
	}
	return fd;
}

static int copy_data(struct dcopy *c, int s, int d, struct sb_error *err)
{
	for (;;) {
		ssize_t n = copy_file_range(s, NULL, d, NULL, 1 << 30, 0);
		if (n == 0)
			return 0;
		if (n > 0)
			continue;
		if (errno != EXDEV && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
			return fail(c, err);
		break;
	}
	/* no in-kernel copy between these two: through a buffer */
	for (;;) {
		ssize_t n = read(s, c->buf, sizeof(c->buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return fail(c, err);
		if (n == 0)
			return 0;
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(d, c->buf + off, (size_t)(n - off));
			if (w < 0 && errno != EINTR)
				return fail(c, err);
			off += w > 0 ? w : 0;
		}
	}
}

/* A second name of an inode copied before becomes a hard link to that copy.
 * 1: linked; 0: first of its inode (remembered); <0: error. */
static int link_seen(struct dcopy *c, int ddir, const char *name, const struct stat *st, struct sb_error *err)
{
	if (st->st_nlink < 2)
		return 0;
	for (size_t i = 0; i < c->n_links; i++)
		if (c->links[i].dev == st->st_dev && c->links[i].ino == st->st_ino)
			return linkat(c->dst_top, c->links[i].path, ddir, name, 0) < 0 ? fail(c, err) : 1;
	if (c->n_links == c->cap_links) {
		size_t cap = c->cap_links ? c->cap_links * 2 : 64;
		struct seen_link *l = realloc(c->links, cap * sizeof(*l));
		if (!l)
			return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		c->links = l;
		c->cap_links = cap;
	}
	if (!(c->links[c->n_links].path = strdup(c->path)))
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	c->links[c->n_links].dev = st->st_dev;
	c->links[c->n_links++].ino = st->st_ino;
	return 0;
}

static int copy_file(struct dcopy *c, int sdir, int ddir, const char *name, const struct stat *st,
		     struct sb_error *err)
{
	int rc = link_seen(c, ddir, name, st, err), s, d;

	if (rc != 0)
		return rc < 0 ? rc : 0;
	if ((s = open_same(c, sdir, name, O_RDONLY, st, err)) < 0)
		return s;
	if ((d = openat(ddir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) < 0)
		rc = fail(c, err);
	if (rc == 0 && (rc = copy_data(c, s, d, err)) == 0)
		rc = copy_meta(c, s, d, st, err);
	close(s);
	if (d >= 0)
		close(d);
	return rc;
}

/* Symlinks, whiteouts and FIFOs: made by name; owner and times set by name
 * without following. */
static int copy_node(struct dcopy *c, int sdir, int ddir, const char *name, const struct stat *st,
		     struct sb_error *err)
{
	const struct timespec ts[2] = { st->st_atim, st->st_mtim };
	char target[PATH_MAX];

	if (S_ISLNK(st->st_mode)) {
		ssize_t n = readlinkat(sdir, name, target, sizeof(target) - 1);
		if (n < 0)
			return fail(c, err);
		target[n] = '\0';
		if (symlinkat(target, ddir, name) < 0)
			return fail(c, err);
	} else if (mknodat(ddir, name, st->st_mode & (S_IFMT | 07777), S_ISCHR(st->st_mode) ? makedev(0, 0) : 0) < 0) {
		return fail(c, err);
	}
	if (fchownat(ddir, name, st->st_uid, st->st_gid, AT_SYMLINK_NOFOLLOW) < 0 ||
	    (!S_ISLNK(st->st_mode) && fchmodat(ddir, name, st->st_mode & 07777, 0) < 0) ||
	    utimensat(ddir, name, ts, AT_SYMLINK_NOFOLLOW) < 0)
		return fail(c, err);
	return 0;
}

static int copy_tree(struct dcopy *c, int s, int d, int depth, struct sb_error *err);

static int copy_dir(struct dcopy *c, int sdir, int ddir, const char *name, const struct stat *st, int depth,
		    struct sb_error *err)
{
	int s, d = -1, rc = 0;

	if (depth >= DEPTH_MAX) {
		errno = ELOOP;
		return fail(c, err);
	}
	if ((s = open_same(c, sdir, name, O_RDONLY | O_DIRECTORY, st, err)) < 0)
		return s;
	if (mkdirat(ddir, name, 0700) < 0 ||
	    (d = openat(ddir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		rc = fail(c, err);
	if (rc == 0 && (rc = copy_tree(c, s, d, depth + 1, err)) == 0)
		rc = copy_meta(c, s, d, st, err);
	close(s);
	if (d >= 0)
		close(d);
	return rc;
}

static int copy_entry(struct dcopy *c, int s, int d, const char *name, int depth, struct sb_error *err)
{
	struct stat st;

	if (fstatat(s, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return fail(c, err);
	/* something mounted there is not the disk */
	if (st.st_dev != c->dev) {
		(*c->skipped)++;
		return 0;
	}
	switch (st.st_mode & S_IFMT) {
	case S_IFDIR:
		return copy_dir(c, s, d, name, &st, depth, err);
	case S_IFREG:
		return copy_file(c, s, d, name, &st, err);
	case S_IFLNK:
	case S_IFIFO:
		return copy_node(c, s, d, name, &st, err);
	case S_IFCHR:
		/* overlayfs's whiteout; no other device is made on the host */
		if (st.st_rdev == makedev(0, 0))
			return copy_node(c, s, d, name, &st, err);
		/* fall through */
	default:
		(*c->skipped)++;
		return 0;
	}
}

static int copy_tree(struct dcopy *c, int s, int d, int depth, struct sb_error *err)
{
	int fd = fcntl(s, F_DUPFD_CLOEXEC, 0), rc = 0;
	DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
	size_t len = strlen(c->path);
	struct dirent *de;

	if (!dir) {
		if (fd >= 0)
			close(fd);
		return fail(c, err);
	}
	while (rc == 0 && (errno = 0, de = readdir(dir))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (snprintf(c->path + len, sizeof(c->path) - len, "%s%s", len ? "/" : "", de->d_name) >=
		    (int)(sizeof(c->path) - len)) {
			errno = ENAMETOOLONG;
			rc = fail(c, err);
			break;
		}
		rc = copy_entry(c, s, d, de->d_name, depth, err);
		c->path[len] = '\0';
	}
	if (rc == 0 && errno != 0)
		rc = fail(c, err);
	closedir(dir);
	return rc;
}

int sb_disk_copy(unsigned long long *skipped, int src, int dst, const char *label, struct sb_error *err)
{
	struct dcopy *c = calloc(1, sizeof(*c));
	struct stat st;
	int s = openat(src, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), d = openat(dst, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc;

	*skipped = 0;
	if (!c) {
		rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	} else {
		c->label = label;
		c->skipped = skipped;
		c->dst_top = d;
		rc = s < 0 || d < 0 || fstat(s, &st) < 0 ? fail(c, err) : 0;
		c->dev = rc == 0 ? st.st_dev : 0;
		if (rc == 0 && (rc = copy_tree(c, s, d, 0, err)) == 0)
			rc = copy_meta(c, s, d, &st, err);
		for (size_t i = 0; i < c->n_links; i++)
			free(c->links[i].path);
		free(c->links);
	}
	free(c);
	if (s >= 0)
		close(s);
	if (d >= 0)
		close(d);
	return rc;
}
