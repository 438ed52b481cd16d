#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/fs.h"
#include "base/hooks.h"
#include "base/i18n.h"

char *sb_strdupf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	return n < 0 ? NULL : s;
}

char *sb_path_join(const char *a, const char *b)
{
	size_t la = strlen(a);

	while (la > 1 && a[la - 1] == '/')
		la--;
	while (*b == '/')
		b++;
	return sb_strdupf("%.*s/%s", (int)la, a, b);
}

int sb_fs_mkdirs(const char *path, mode_t mode, struct sb_error *err)
{
	char buf[PATH_MAX];
	size_t n = strlen(path);
	struct stat st;

	if (n == 0 || n >= sizeof(buf))
		return sb_error_set(err, SB_ERR_INVALID, _("invalid directory path '%s'"), path);
	/* every command opens the state root: the common case is one stat */
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return 0;
	if (sb_fault_point(SB_FAULT_WRITE, path) < 0)
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot create directory '%s'"), path);
	memcpy(buf, path, n + 1);
	for (char *p = buf + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char c = *p;
		*p = '\0';
		if (mkdir(buf, mode) < 0 && errno != EEXIST)
			return sb_error_errno(err, SB_ERR_IO, errno, _("cannot create directory '%s'"), buf);
		*p = c;
		if (c == '\0')
			break;
	}
	if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
		return sb_error_set(err, SB_ERR_IO, _("'%s' exists and is not a directory"), path);
	return 0;
}

ssize_t sb_fs_read_to_end(int fd, char *buf, size_t size, int timeout_ms)
{
	long long deadline = sb_clock_monotonic_ms() + timeout_ms;
	size_t len = 0;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		long long left = deadline - sb_clock_monotonic_ms();
		if (left <= 0 || poll(&p, 1, (int)left) == 0)
			return -1;
		ssize_t n = read(fd, buf + len, size - 1 - len);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0 || (len += (size_t)n) == size - 1)
			break;
	}
	buf[len] = '\0';
	return (ssize_t)len;
}

int sb_fs_fsync_dir(const char *dir, struct sb_error *err)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot open directory '%s'"), dir);
	if (fsync(fd) < 0 && errno != EINVAL) {
		int e = errno;
		close(fd);
		return sb_error_errno(err, SB_ERR_IO, e, _("cannot sync directory '%s'"), dir);
	}
	close(fd);
	return 0;
}

char *sb_path_search(const char *name)
{
	const char *path = getenv("PATH");

	if (!path)
		path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");
		char *cand = n > 0 ? sb_strdupf("%.*s/%s", (int)n, path, name) : NULL;
		struct stat st;
		if (cand && stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0)
			return cand;
		free(cand);
		path += n + (path[n] == ':');
	}
	return NULL;
}

int sb_fs_mount_point(const char *path)
{
	struct stat st, parent;
	char *up = sb_path_join(path, "..");
	int rc = up && lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && stat(up, &parent) == 0 && st.st_dev != parent.st_dev;

	free(up);
	return rc;
}

int sb_fs_write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len > 0) {
		ssize_t w = write(fd, p, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

int sb_fs_write_atomic(const char *path, const void *data, size_t len, mode_t mode,
		       struct sb_error *err)
{
	return sb_fs_replace(path, data, len, mode, 1, err);
}

int sb_fs_replace(const char *path, const void *data, size_t len, mode_t mode, int sync, struct sb_error *err)
{
	char *tmp = sb_strdupf("%s.tmp.%ld", path, (long)getpid());
	/* before the rename: once the file is in place, nothing may fail for want of memory */
	char *dir = sync ? strdup(path) : NULL;
	int fd, rc = 0;

	if (!tmp || (sync && !dir)) {
		free(tmp);
		free(dir);
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd < 0) {
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot write '%s'"), path);
		goto out;
	}
	if (sb_fault_point(SB_FAULT_WRITE, path) < 0 || sb_fs_write_all(fd, data, len) < 0 ||
	    (sync && fsync(fd) < 0)) {
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot write '%s'"), path);
		close(fd);
		unlink(tmp);
		goto out;
	}
	close(fd);
	if (rename(tmp, path) < 0) {
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot replace '%s'"), path);
		unlink(tmp);
		goto out;
	}
	if (!sync)
		goto out;
	char *slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = '\0';
	else if (slash)
		*slash = '\0';
	else
		strcpy(dir, ".");
	rc = sb_fs_fsync_dir(dir, err);
out:
	free(dir);
	free(tmp);
	return rc;
}

/* The writer's pid of a temp name sb_fs_replace makes ("X.tmp.PID"), or 0. */
static pid_t temp_writer(const char *name)
{
	const char *t = strstr(name, ".tmp.");
	char *end;

	if (!t || t == name)
		return 0;
	long pid = strtol(t + 5, &end, 10);
	return *end == '\0' && pid > 0 && end != t + 5 ? (pid_t)pid : 0;
}

int sb_fs_remove_stale_temps(unsigned *removed, const char *dir, int dry_run, struct sb_error *err)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	unsigned n = 0;

	if (removed)
		*removed = 0;
	if (!d)
		return errno == ENOENT ? 0 : sb_error_errno(err, SB_ERR_IO, errno, _("cannot list '%s'"), dir);
	while ((de = readdir(d))) {
		pid_t pid = temp_writer(de->d_name);
		struct stat st;
		/* a live writer (or another process that got its pid) keeps it */
		if (!pid || (kill(pid, 0) == 0 || errno != ESRCH) ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (dry_run || unlinkat(dirfd(d), de->d_name, 0) == 0)
			n++;
	}
	closedir(d);
	if (removed)
		*removed = n;
	return 0;
}

int sb_fs_write_changed(const char *path, const void *data, size_t len, mode_t mode, struct sb_error *err)
{
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, mode);
	char *old = fd >= 0 ? malloc(len + 1) : NULL;
	/* one byte more than wanted: a longer file differs */
	ssize_t n = old ? pread(fd, old, len + 1, 0) : -1;
	int same = old && n == (ssize_t)len && memcmp(old, data, len) == 0, rc = 0;

	free(old);
	if (fd < 0)
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot write '%s'"), path);
	if (!same && (sb_fault_point(SB_FAULT_WRITE, path) < 0 || ftruncate(fd, 0) < 0 ||
		      sb_fs_write_all(fd, data, len) < 0))
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot write '%s'"), path);
	if (close(fd) < 0 && rc == 0)
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot write '%s'"), path);
	return rc;
}

int sb_fs_read_file(char **out, size_t *len, const char *path, size_t max, struct sb_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t cap = 0, n = 0;
	char *buf = NULL;
	int rc = 0;

	*out = NULL;
	if (fd < 0)
		return sb_error_errno(err, errno == ENOENT ? SB_ERR_NOTFOUND : SB_ERR_IO, errno,
				      _("cannot read '%s'"), path);
	for (;;) {
		if (n + 1 >= cap) {
			/* one byte beyond max tells "too large" from "exactly max" */
			size_t ncap = cap ? cap * 2 : 4096;
			if (ncap > max + 2)
				ncap = max + 2;
			char *nb = realloc(buf, ncap);
			if (!nb) {
				rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
				break;
			}
			buf = nb;
			cap = ncap;
		}
		ssize_t r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot read '%s'"), path);
			break;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > max) {
			rc = sb_error_set(err, SB_ERR_LIMIT, _("'%s' is larger than %zu bytes"), path, max);
			break;
		}
	}
	close(fd);
	if (rc < 0) {
		free(buf);
		return rc;
	}
	buf[n] = '\0';
	*out = buf;
	if (len)
		*len = n;
	return 0;
}

/* Removes the children of the open directory dfd (device dev), then nothing else. */
/* A folder something is mounted on, a bind mount of the same file system
 * too (its st_dev is the parent's): removing below it would delete what is
 * mounted, e.g. a host folder bound for a sandbox. */
static int is_mount_root(int dfd, const char *name, dev_t dev, const struct stat *st)
{
	struct statx stx;

	if (st->st_dev != dev)
		return 1;
	return statx(dfd, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, 0, &stx) == 0 &&
	       (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) && (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
}

static int remove_dir(int parent, const char *name, int fd, dev_t dev, const char *path, struct sb_error *err);

static int remove_children(int dfd, dev_t dev, const char *path, struct sb_error *err)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;
	int rc = 0;

	if (!d) {
		close(dfd);
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot list '%s'"), path);
	}
	while (rc == 0 && (errno = 0, de = readdir(d)) != NULL) {
		struct stat st;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno == ENOENT)
				continue;
			rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot inspect '%s/%s'"), path, de->d_name);
			break;
		}
		if (S_ISDIR(st.st_mode)) {
			if (is_mount_root(dirfd(d), de->d_name, dev, &st)) {
				rc = sb_error_set(err, SB_ERR_BUSY,
						  _("'%s/%s' is a mount point; refusing to remove below it"),
						  path, de->d_name);
				break;
			}
			int cfd = openat(dirfd(d), de->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (cfd < 0) {
				rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot open '%s/%s'"), path, de->d_name);
				break;
			}
			/* directories without write or search permission still need emptying */
			fchmod(cfd, 0700);
			char *sub = sb_path_join(path, de->d_name);
			if (sub) {
				rc = remove_dir(dirfd(d), de->d_name, cfd, dev, sub, err);
				free(sub);
			} else {
				close(cfd);
				rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
			}
		} else if (unlinkat(dirfd(d), de->d_name, 0) < 0 && errno != ENOENT) {
			rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot remove '%s/%s'"), path, de->d_name);
		}
	}
	if (rc == 0 && errno != 0)
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot list '%s'"), path);
	closedir(d);
	return rc;
}

/* Empties the directory name of parent (open as fd, which this closes) and
 * removes it. An entry made meanwhile (a session holder touching its files
 * as its shell ends) leaves it not empty: it is emptied again, twice at most. */
static int remove_dir(int parent, const char *name, int fd, dev_t dev, const char *path, struct sb_error *err)
{
	for (int tries = 1;; tries++) {
		int rc = remove_children(fd, dev, path, err);
		if (rc < 0)
			return rc;
		if (unlinkat(parent, name, AT_REMOVEDIR) == 0 || errno == ENOENT)
			return 0;
		if (errno != ENOTEMPTY || tries == 3 ||
		    (fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
			return sb_error_errno(err, errno == EBUSY ? SB_ERR_BUSY : SB_ERR_IO, errno, _("cannot remove '%s'"),
					      path);
	}
}

int sb_fs_remove_tree(const char *path, struct sb_error *err)
{
	sb_fault_point(SB_FAULT_STEP, path);
	return sb_fs_remove_tree_at(AT_FDCWD, path, err);
}

int sb_fs_remove_tree_at(int dirfd, const char *path, struct sb_error *err)
{
	struct stat st;
	int fd;

	if (fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno == ENOENT)
			return 0;
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot inspect '%s'"), path);
	}
	if (!S_ISDIR(st.st_mode)) {
		if (unlinkat(dirfd, path, 0) < 0 && errno != ENOENT)
			return sb_error_errno(err, SB_ERR_IO, errno, _("cannot remove '%s'"), path);
		return 0;
	}
	fd = openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot open '%s'"), path);
	return remove_dir(dirfd, path, fd, st.st_dev, path, err);
}

static int tree_size(int dfd, unsigned long long *total, const char *path, struct sb_error *err)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;

	if (!d) {
		close(dfd);
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot list '%s'"), path);
	}
	while ((de = readdir(d)) != NULL) {
		struct stat st;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISREG(st.st_mode)) {
			*total += (unsigned long long)st.st_size;
		} else if (S_ISDIR(st.st_mode)) {
			int cfd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), rc;
			if (cfd >= 0 && (rc = tree_size(cfd, total, path, err)) < 0) {
				closedir(d);
				return rc;
			}
		}
	}
	closedir(d);
	return 0;
}

int sb_fs_tree_size(unsigned long long *out, const char *path, struct sb_error *err)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	*out = 0;
	if (fd < 0)
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot open '%s'"), path);
	return tree_size(fd, out, path, err);
}
