#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/i18n.h"
#include "base/inroot.h"

/* openat2 says EAGAIN when a rename raced the lookup; a few retries, then busy */
#define LOOKUP_TRIES 8

static int lookup_error(struct sb_error *err, int e, const char *root, const char *path)
{
	switch (e) {
	case ENOENT:
	case ENOTDIR:
		return sb_error_set(err, SB_ERR_NOTFOUND, _("'%s' does not exist inside '%s'"), path, root);
	case ELOOP:
		return sb_error_set(err, SB_ERR_UNSAFE,
				    _("'%s' inside '%s' is refused: its lookup met a /proc magic link or too many symbolic links"),
				    path, root);
	case EXDEV:
		return sb_error_set(err, SB_ERR_UNSAFE, _("'%s' inside '%s' is refused: its lookup crossed into another mount"),
				    path, root);
	case ENOSYS:
	case E2BIG:
		return sb_error_set(err, SB_ERR_PREREQ,
				    _("cannot look up '%s' inside '%s': the kernel has no openat2 (Linux 5.6 or later is needed)"),
				    path, root);
	case EAGAIN:
		return sb_error_set(err, SB_ERR_BUSY, _("'%s' inside '%s' kept changing while it was looked up"), path, root);
	default:
		return sb_error_errno(err, SB_ERR_IO, e, _("cannot look up '%s' inside '%s'"), path, root);
	}
}

/* An O_PATH descriptor of path resolved inside root: nothing is opened yet,
 * so a FIFO cannot block and a device cannot act. */
static int open_path(int *out, const char *root, const char *path, struct sb_error *err)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
	};
	const char *rel = path + strspn(path, "/");
	int dfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC), fd = -1, e;

	*out = -1;
	if (dfd < 0)
		return sb_error_errno(err, errno == ENOENT ? SB_ERR_NOTFOUND : SB_ERR_IO, errno,
				      _("cannot open the directory '%s'"), root);
	for (int i = 0; i < LOOKUP_TRIES; i++) {
		fd = (int)syscall(SYS_openat2, dfd, *rel ? rel : ".", &how, sizeof(how));
		if (fd >= 0 || (errno != EAGAIN && errno != EINTR))
			break;
	}
	e = errno;
	close(dfd);
	if (fd < 0)
		return lookup_error(err, e, root, path);
	*out = fd;
	return 0;
}

static const char *type_name(mode_t mode)
{
	if (S_ISDIR(mode))
		return _("a directory");
	if (S_ISFIFO(mode))
		return _("a FIFO");
	if (S_ISSOCK(mode))
		return _("a socket");
	if (S_ISCHR(mode) || S_ISBLK(mode))
		return _("a device");
	if (S_ISLNK(mode))
		return _("a symbolic link");
	return _("a special file");
}

int sb_inroot_stat(struct stat *out, const char *root, const char *path, struct sb_error *err)
{
	int fd, rc;

	if ((rc = open_path(&fd, root, path, err)) < 0)
		return rc;
	rc = fstat(fd, out) < 0 ? sb_error_errno(err, SB_ERR_IO, errno, _("cannot look up '%s' inside '%s'"), path, root) : 0;
	close(fd);
	return rc;
}

/* Reads fd to its end, refusing more than cap bytes. */
static int read_capped(char **out, size_t *len, int fd, size_t cap, const char *root, const char *path,
		       struct sb_error *err)
{
	size_t size = 0, n = 0;
	char *buf = NULL;

	for (;;) {
		if (n + 1 >= size) {
			/* one byte beyond cap tells "too large" from "exactly cap" */
			size_t nsize = size ? size * 2 : 4096;
			char *nb = realloc(buf, nsize > cap + 2 ? cap + 2 : nsize);
			if (!nb) {
				free(buf);
				return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
			}
			buf = nb;
			size = nsize > cap + 2 ? cap + 2 : nsize;
		}
		ssize_t r = read(fd, buf + n, size - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			free(buf);
			return sb_error_errno(err, SB_ERR_IO, e, _("cannot read '%s' inside '%s'"), path, root);
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > cap) {
			free(buf);
			return sb_error_set(err, SB_ERR_LIMIT, _("'%s' inside '%s' is larger than %zu bytes: refused"), path,
					    root, cap);
		}
	}
	buf[n] = '\0';
	*out = buf;
	if (len)
		*len = n;
	return 0;
}

int sb_inroot_read(char **out, size_t *len, const char *root, const char *path, size_t cap, struct sb_error *err)
{
	struct stat st, again;
	char self[64];
	int pfd, fd, rc;

	*out = NULL;
	if ((rc = open_path(&pfd, root, path, err)) < 0)
		return rc;
	if (fstat(pfd, &st) < 0) {
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot look up '%s' inside '%s'"), path, root);
		close(pfd);
		return rc;
	}
	if (!S_ISREG(st.st_mode)) {
		close(pfd);
		return sb_error_set(err, SB_ERR_UNSAFE, _("'%s' inside '%s' is %s, not a regular file: refused"), path, root,
				    type_name(st.st_mode));
	}
	/* opens the very inode looked up (our own descriptor, not the tree's path) */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	rc = fd < 0 ? sb_error_errno(err, SB_ERR_IO, errno, _("cannot open '%s' inside '%s'"), path, root) : 0;
	close(pfd);
	if (rc == 0 && (fstat(fd, &again) < 0 || again.st_dev != st.st_dev || again.st_ino != st.st_ino ||
			!S_ISREG(again.st_mode)))
		rc = sb_error_set(err, SB_ERR_UNSAFE, _("'%s' inside '%s' changed while it was opened: refused"), path, root);
	if (rc == 0)
		rc = read_capped(out, len, fd, cap, root, path, err);
	if (fd >= 0)
		close(fd);
	return rc;
}
