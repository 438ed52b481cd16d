#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "base/fs.h"
#include "base/i18n.h"
#include "base/root.h"

struct sb_root {
	char *path;
	int lock_fd;
};

/* The layout below the root; created on open. */
static const char *const root_dirs[] = {
	"runsc",
	"exchange",
	"images/blobs/sha256",
	"images/blobs/partial",
	"images/rootfs",
	"sandboxes",
};

int sb_root_open(struct sb_root **out, const char *path, struct sb_error *err)
{
	char real[PATH_MAX];
	struct sb_root *root;
	int rc;

	*out = NULL;
	if (!path || !*path)
		path = getenv("SANDBENCH_ROOT");
	if (!path || !*path)
		path = SB_DEFAULT_ROOT;
	rc = sb_fs_mkdirs(path, 0711, err);
	if (rc < 0) {
		sb_error_wrap(err, _("cannot use state root"));
		return rc;
	}
	if (!realpath(path, real))
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot resolve state root '%s'"), path);
	root = calloc(1, sizeof(*root));
	if (!root || !(root->path = strdup(real))) {
		free(root);
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	root->lock_fd = -1;
	for (size_t i = 0; i < sizeof(root_dirs) / sizeof(root_dirs[0]); i++) {
		char *dir = sb_root_file(root, root_dirs[i]);
		rc = dir ? sb_fs_mkdirs(dir, 0711, err) : sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		free(dir);
		if (rc < 0) {
			sb_root_close(root);
			return rc;
		}
	}
	*out = root;
	return 0;
}

void sb_root_close(struct sb_root *root)
{
	if (!root)
		return;
	if (root->lock_fd >= 0)
		close(root->lock_fd);
	free(root->path);
	free(root);
}

const char *sb_root_path(const struct sb_root *root)
{
	return root->path;
}

char *sb_root_file(const struct sb_root *root, const char *rel)
{
	return sb_path_join(root->path, rel);
}

char *sb_root_record_file(const struct sb_root *root, const char *name)
{
	char *rel = sb_strdupf("sandboxes/%s/sandbox.json", name);
	char *path = rel ? sb_root_file(root, rel) : NULL;

	free(rel);
	return path;
}

int sb_root_lock(struct sb_root *root, enum sb_lock_mode mode, struct sb_error *err)
{
	if (root->lock_fd < 0) {
		char *path = sb_root_file(root, "lock");
		if (!path)
			return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		root->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		int rc = root->lock_fd < 0
			 ? sb_error_errno(err, SB_ERR_IO, errno, _("cannot open lock file '%s'"), path)
			 : 0;
		free(path);
		if (rc < 0)
			return rc;
	}
	while (flock(root->lock_fd, mode == SB_LOCK_EXCLUSIVE ? LOCK_EX : LOCK_SH) < 0) {
		if (errno != EINTR)
			return sb_error_errno(err, SB_ERR_IO, errno, _("cannot lock state root '%s'"), root->path);
	}
	return 0;
}

void sb_root_unlock(struct sb_root *root)
{
	if (root->lock_fd >= 0)
		flock(root->lock_fd, LOCK_UN);
}
