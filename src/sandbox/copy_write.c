/* cp's directory sink: entries written into a host folder, a sandbox's bound
 * folder or a stopped sandbox's overlay upper. The entries come from a
 * sandbox or an archive: every path is resolved beneath the target without
 * following a symlink (RESOLVE_NO_SYMLINKS), so a symlink an earlier entry
 * made can never carry a later one elsewhere. Files are written under a
 * temporary name and renamed into place: what is at the name (a file, a
 * symlink, a whiteout) is replaced, never written through. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "internal.h"
#include "base/fs.h"
#include "base/i18n.h"

#define TMP_TRIES 16

static int beneath(int dirfd, const char *rel, int flags, mode_t mode)
{
	struct open_how how = {
		.flags = (unsigned long long)(flags | O_CLOEXEC | O_NOFOLLOW), .mode = mode,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
	};
	int fd;

	do
		fd = (int)syscall(SYS_openat2, dirfd, rel, &how, sizeof(how));
	while (fd < 0 && (errno == EAGAIN || errno == EINTR));
	return fd;
}

static void tmp_name(char *buf, size_t size)
{
	unsigned int r = 0;

	if (getrandom(&r, sizeof(r), 0) != sizeof(r))
		r = (unsigned int)getpid() ^ (unsigned int)(size_t)buf;
	snprintf(buf, size, ".sbcp-%08x", r);
}

static int fail(struct sb_xdisk *d, struct sb_error *err, int e, const char *rel, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static int fail(struct sb_xdisk *d, struct sb_error *err, int e, const char *rel, const char *fmt, ...)
{
	/* with RESOLVE_NO_SYMLINKS a symlink on the way is ELOOP, or ENOTDIR
	 * where a directory is asked for */
	if (e == ELOOP || e == EXDEV || e == ENOTDIR)
		return sb_error_set(err, SB_ERR_UNSAFE,
				    _("'%s' in '%s' is refused: it lies below a symbolic link, a file or a mount point"), rel,
				    d->label);
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return sb_error_errno(err, SB_ERR_IO, e, "%s", msg);
}

/* mkdir in an overlay upper: a whiteout there is replaced, and the new
 * directory made opaque, so that none of what the image had below the
 * deleted one shows again. 0, or -1 with errno. */
static int mkdir_layered(int dirfd, const char *name, mode_t mode)
{
	struct stat st;
	int whiteout = fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && sb_overlay_whiteout(&st);

	if ((whiteout && unlinkat(dirfd, name, 0) < 0) || mkdirat(dirfd, name, mode) < 0)
		return -1;
	if (!whiteout)
		return 0;
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int rc = fd >= 0 ? fsetxattr(fd, SB_OVERLAY_OPAQUE, "y", 1, 0) : -1, e = errno;
	if (fd >= 0)
		close(fd);
	errno = e;
	return rc;
}

/* mkdir name in pfd; an existing directory is fine (merged). */
static int make_dir(struct sb_xdisk *d, int pfd, const char *name, const char *rel, mode_t mode, struct sb_error *err)
{
	struct stat st;
	int rc = d->layered ? mkdir_layered(pfd, name, mode) : mkdirat(pfd, name, mode);

	if (rc < 0 && errno == EEXIST) {
		if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode))
			return 0;
		return sb_error_set(err, SB_ERR_EXISTS, _("'%s' in '%s' exists and is not a directory"), rel, d->label);
	}
	if (rc < 0)
		return fail(d, err, errno, rel, _("cannot make '%s' in '%s'"), rel, d->label);
	if (d->root_owned && fchownat(pfd, name, 0, 0, AT_SYMLINK_NOFOLLOW) < 0)
		return fail(d, err, errno, rel, _("cannot set the owner of '%s' in '%s'"), rel, d->label);
	return 0;
}

/* The directory that holds rel (made when missing) as an O_PATH fd. */
static int parent_of(int *out, struct sb_xdisk *d, const char *rel, const char **base, struct sb_error *err)
{
	const char *slash = strrchr(rel, '/');
	char *dir = slash ? strndup(rel, (size_t)(slash - rel)) : NULL;

	*base = slash ? slash + 1 : rel;
	*out = -1;
	if (!slash) {
		*out = fcntl(d->top, F_DUPFD_CLOEXEC, 0);
		return *out < 0 ? fail(d, err, errno, ".", _("cannot open '%s' in '%s'"), ".", d->label) : 0;
	}
	if (!dir)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	int fd = beneath(d->top, dir, O_PATH | O_DIRECTORY, 0), rc = 0;
	if (fd < 0 && errno == ENOENT) {
		/* an archive need not list a file's directories first */
		int pfd = fcntl(d->top, F_DUPFD_CLOEXEC, 0);
		for (char *c = dir, *next; rc == 0 && c; c = next) {
			next = strchr(c, '/');
			if (next)
				*next++ = '\0';
			if ((rc = make_dir(d, pfd, c, rel, 0755, err)) == 0) {
				int nfd = beneath(pfd, c, O_PATH | O_DIRECTORY, 0);
				rc = nfd < 0 ? fail(d, err, errno, rel, _("cannot open '%s' in '%s'"), rel, d->label) : 0;
				close(pfd);
				pfd = nfd;
			}
			if (next)
				next[-1] = '/';
		}
		fd = rc == 0 ? pfd : -1;
		if (rc < 0 && pfd >= 0)
			close(pfd);
	} else if (fd < 0) {
		rc = fail(d, err, errno, dir, _("cannot open '%s' in '%s'"), dir, d->label);
	}
	free(dir);
	*out = fd;
	return rc;
}

/* Puts the temporary tmp in pfd in place as name. */
static int place(struct sb_xdisk *d, int pfd, const char *tmp, const char *name, const char *rel, struct sb_error *err)
{
	if (renameat(pfd, tmp, pfd, name) == 0)
		return 0;
	int e = errno;
	const char *what = rel[0] ? rel : name;
	unlinkat(pfd, tmp, 0);
	if (e == EISDIR || e == ENOTEMPTY || e == EEXIST)
		return sb_error_set(err, SB_ERR_EXISTS, _("'%s' in '%s' is a directory: a file cannot replace it"), what,
				    d->label);
	return fail(d, err, e, what, _("cannot write '%s' in '%s'"), what, d->label);
}

static int begin_file(struct sb_xdisk *d, int pfd, const char *name, const struct sb_xentry *e, struct sb_error *err)
{
	char tmp[32];
	int fd = -1;

	for (int i = 0; fd < 0 && i < TMP_TRIES; i++) {
		tmp_name(tmp, sizeof(tmp));
		fd = openat(pfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		const char *what = e->path[0] ? e->path : d->name;
		return fail(d, err, errno, what, _("cannot write '%s' in '%s'"), what, d->label);
	}
	d->cur_tmp = strdup(tmp);
	d->cur_name = strdup(e->path[0] ? e->path : name);
	if (!d->cur_tmp || !d->cur_name) {
		close(fd);
		unlinkat(pfd, tmp, 0);
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	d->cur = fd;
	d->cur_dir = pfd;
	d->cur_perm = e->perm;
	d->cur_mtime = e->mtime;
	return 0;
}

static int end_file(struct sb_xdisk *d, struct sb_error *err)
{
	struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, { .tv_sec = d->cur_mtime } };
	mode_t perm = d->cur_perm & (d->drop_suid ? 0777 | S_ISVTX : 07777);
	int rc = 0;

	if ((d->root_owned && fchown(d->cur, 0, 0) < 0) || fchmod(d->cur, perm) < 0 || futimens(d->cur, ts) < 0)
		rc = fail(d, err, errno, d->cur_name, _("cannot write '%s' in '%s'"), d->cur_name, d->label);
	if (close(d->cur) < 0 && rc == 0)
		rc = fail(d, err, errno, d->cur_name, _("cannot write '%s' in '%s'"), d->cur_name, d->label);
	d->cur = -1;
	const char *slash = strrchr(d->cur_name, '/');
	if (rc == 0)
		rc = place(d, d->cur_dir, d->cur_tmp, d->cur_dir == d->parent && !d->merge ? d->name
						      : slash ? slash + 1 : d->cur_name, d->cur_name, err);
	else
		unlinkat(d->cur_dir, d->cur_tmp, 0);
	if (d->cur_dir != d->parent)
		close(d->cur_dir);
	d->cur_dir = -1;
	free(d->cur_tmp);
	free(d->cur_name);
	d->cur_tmp = d->cur_name = NULL;
	return rc;
}

static int make_link(struct sb_xdisk *d, int pfd, const char *name, const struct sb_xentry *e, struct sb_error *err)
{
	char tmp[32];
	int rc = -1, src = -1;
	struct stat st;
	const char *what = e->path[0] ? e->path : name;

	if (e->type == 0) {
		/* a hard link: to a file this copy wrote, beneath the target */
		src = beneath(d->top, e->link, O_PATH, 0);
		if (src < 0 || fstat(src, &st) < 0 || !S_ISREG(st.st_mode)) {
			if (src >= 0)
				close(src);
			return sb_error_set(err, SB_ERR_UNSAFE, _("the hard link '%s' in '%s' does not lead to a file of the copy"),
					    e->path, d->label);
		}
	}
	for (int i = 0; rc < 0 && i < TMP_TRIES; i++) {
		tmp_name(tmp, sizeof(tmp));
		rc = e->type == 0 ? linkat(src, "", pfd, tmp, AT_EMPTY_PATH) : symlinkat(e->link, pfd, tmp);
		if (rc < 0 && errno != EEXIST)
			break;
	}
	if (src >= 0)
		close(src);
	if (rc < 0)
		return fail(d, err, errno, what, _("cannot write '%s' in '%s'"), what, d->label);
	if (e->type == S_IFLNK) {
		struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, { .tv_sec = e->mtime } };
		if ((d->root_owned && fchownat(pfd, tmp, 0, 0, AT_SYMLINK_NOFOLLOW) < 0) ||
		    utimensat(pfd, tmp, ts, AT_SYMLINK_NOFOLLOW) < 0) {
			unlinkat(pfd, tmp, 0);
			return fail(d, err, errno, what, _("cannot write '%s' in '%s'"), what, d->label);
		}
	}
	return place(d, pfd, tmp, name, e->path, err);
}

/* The top of a new target: a file or link goes to its name at once; a
 * directory is filled under a temporary name. */
static int begin_top(struct sb_xdisk *d, const struct sb_xentry *e, struct sb_error *err)
{
	char tmp[32];
	int rc = -EEXIST;

	if (d->merge) {
		if (e->type != S_IFDIR)
			return sb_error_set(err, SB_ERR_INVALID, _("'%s' is a directory: a file cannot be copied onto it"), d->label);
		return 1;
	}
	if (e->type == S_IFREG)
		return begin_file(d, d->parent, d->name, e, err);
	if (e->type != S_IFDIR) {
		int lrc = make_link(d, d->parent, d->name, e, err);
		return lrc < 0 ? lrc : 1;
	}
	for (int i = 0; rc == -EEXIST && i < TMP_TRIES; i++) {
		tmp_name(tmp, sizeof(tmp));
		rc = mkdirat(d->parent, tmp, 0700) < 0 ? -errno : 0;
	}
	if (rc < 0)
		return fail(d, err, -rc, d->name, _("cannot make '%s' in '%s'"), d->name, d->label);
	if (!(d->tmp = strdup(tmp)))
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	d->top_perm = e->perm;
	d->top = beneath(d->parent, tmp, O_PATH | O_DIRECTORY, 0);
	return d->top < 0 ? fail(d, err, errno, d->name, _("cannot open '%s' in '%s'"), d->name, d->label) : 1;
}

/* at or below a mount point of the sandbox: the write would vanish under it */
static const char *fenced(const struct sb_xdisk *d, const char *rel)
{
	for (char **f = d->fences; f && *f; f++) {
		size_t n = strlen(*f);
		if (!strncmp(rel, *f, n) && (rel[n] == '\0' || rel[n] == '/'))
			return *f;
	}
	return NULL;
}

static int disk_begin(struct sb_xsink *s, const struct sb_xentry *e, struct sb_error *err)
{
	struct sb_xdisk *d = (struct sb_xdisk *)s;
	const char *base, *f;
	int pfd, rc;

	if (!e->path[0])
		return begin_top(d, e, err);
	if (d->top < 0)
		return sb_error_set(err, SB_ERR_INVALID, _("'%s' would receive a tree where it takes a file"), d->label);
	if ((f = fenced(d, e->path)))
		return sb_error_set(err, SB_ERR_INVALID, _("'%s' in '%s' is a mount point in the sandbox: copy into it directly"),
				    f, d->label);
	if ((rc = parent_of(&pfd, d, e->path, &base, err)) < 0)
		return rc;
	if (e->type == S_IFREG) {
		if ((rc = begin_file(d, pfd, base, e, err)) < 0)
			close(pfd);
		return rc;
	}
	if (e->type == S_IFDIR)
		rc = make_dir(d, pfd, base, e->path, e->perm & (d->drop_suid ? 0777 | S_ISVTX : 07777), err);
	else
		rc = make_link(d, pfd, base, e, err);
	close(pfd);
	return rc < 0 ? rc : 1;
}

static int disk_data(struct sb_xsink *s, const void *buf, size_t len, struct sb_error *err)
{
	struct sb_xdisk *d = (struct sb_xdisk *)s;
	const char *p = buf;

	while (len > 0) {
		ssize_t w = write(d->cur, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return fail(d, err, errno, d->cur_name, _("cannot write '%s' in '%s'"), d->cur_name, d->label);
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

static int disk_end(struct sb_xsink *s, struct sb_error *err)
{
	return end_file((struct sb_xdisk *)s, err);
}

int sb_xdisk_init(struct sb_xdisk *d, int parent, const char *name, int merge, struct sb_error *err)
{
	memset(d, 0, sizeof(*d));
	d->sink = (struct sb_xsink){ disk_begin, disk_data, disk_end };
	d->parent = parent;
	d->top = d->cur = d->cur_dir = -1;
	d->merge = merge;
	if (merge && (d->top = fcntl(parent, F_DUPFD_CLOEXEC, 0)) < 0)
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot open '%s'"), name);
	if (!(d->name = strdup(name)))
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	d->label = d->name;
	return 0;
}

int sb_xdisk_finish(struct sb_xdisk *d, struct sb_error *err)
{
	struct stat st;

	if (!d->tmp)
		return 0;
	if (fchmodat(d->parent, d->tmp, d->top_perm & (d->drop_suid ? 0777 | S_ISVTX : 07777), 0) < 0 ||
	    (d->root_owned && fchownat(d->parent, d->tmp, 0, 0, AT_SYMLINK_NOFOLLOW) < 0))
		return fail(d, err, errno, d->name, _("cannot make '%s' in '%s'"), d->name, d->label);
	/* over a whiteout the new directory hides what the image had there */
	if (d->layered && fstatat(d->parent, d->name, &st, AT_SYMLINK_NOFOLLOW) == 0 && sb_overlay_whiteout(&st)) {
		int fd = openat(d->parent, d->tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int rc = fd >= 0 ? fsetxattr(fd, SB_OVERLAY_OPAQUE, "y", 1, 0) : -1;
		if (fd >= 0)
			close(fd);
		if (rc < 0 || unlinkat(d->parent, d->name, 0) < 0)
			return fail(d, err, errno, d->name, _("cannot make '%s' in '%s'"), d->name, d->label);
	}
	if (renameat2(d->parent, d->tmp, d->parent, d->name, RENAME_NOREPLACE) < 0)
		return errno == EEXIST ? sb_error_set(err, SB_ERR_EXISTS, _("'%s' appeared while it was copied"), d->label)
				       : fail(d, err, errno, d->name, _("cannot make '%s' in '%s'"), d->name, d->label);
	free(d->tmp);
	d->tmp = NULL;
	return 0;
}

void sb_xdisk_clear(struct sb_xdisk *d)
{
	if (!d)
		return;
	if (d->cur >= 0) {
		close(d->cur);
		unlinkat(d->cur_dir, d->cur_tmp, 0);
	}
	if (d->cur_dir >= 0 && d->cur_dir != d->parent)
		close(d->cur_dir);
	if (d->top >= 0)
		close(d->top);
	if (d->tmp)
		sb_fs_remove_tree_at(d->parent, d->tmp, NULL);
	if (d->parent >= 0)
		close(d->parent);
	free(d->tmp);
	free(d->name);
	free(d->cur_tmp);
	free(d->cur_name);
	for (char **f = d->fences; f && *f; f++)
		free(*f);
	free(d->fences);
	memset(d, 0, sizeof(*d));
	d->parent = d->top = d->cur = d->cur_dir = -1;
}
