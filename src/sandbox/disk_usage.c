/* The disk of one sandbox: what removing it frees. A sandbox writes its
 * upper and workspace, so the walk never follows a link (lstat, O_NOFOLLOW
 * relative to an open directory) and stays on the folder's file system (the
 * rootfs mount point holds the image, which removal does not free). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fs.h"
#include "base/i18n.h"
#include "internal.h"
#include "sandbox/cleanup.h"
#include "sandbox/sandbox.h"

/* Past this depth a tree is not walked further (each level holds a file
 * descriptor); what lies below is not counted. */
#define USAGE_DEPTH_MAX 128

struct usage_walk {
	dev_t dev;
	struct { dev_t dev; ino_t ino; } *seen; /* inodes with several links, counted once */
	size_t n_seen, cap_seen;
};

/* 1 when the inode was counted before; -1 when out of memory. */
static int seen_before(struct usage_walk *w, const struct stat *st)
{
	for (size_t i = 0; i < w->n_seen; i++)
		if (w->seen[i].dev == st->st_dev && w->seen[i].ino == st->st_ino)
			return 1;
	if (w->n_seen == w->cap_seen) {
		size_t cap = w->cap_seen ? w->cap_seen * 2 : 64;
		void *p = realloc(w->seen, cap * sizeof(*w->seen));
		if (!p)
			return -1;
		w->seen = p;
		w->cap_seen = cap;
	}
	w->seen[w->n_seen].dev = st->st_dev;
	w->seen[w->n_seen++].ino = st->st_ino;
	return 0;
}

/* Which field an entry of the sandbox's folder counts in. */
static unsigned long long *field_of(struct sb_disk_usage *u, const char *name)
{
	static const struct { const char *name; size_t off; } parts[] = {
		{ "upper", offsetof(struct sb_disk_usage, upper) },
		{ "work", offsetof(struct sb_disk_usage, upper) },
		{ "workspace", offsetof(struct sb_disk_usage, workspace) },
		{ SB_BOX_DISK_IMAGE, offsetof(struct sb_disk_usage, upper) }, /* a capped disk: upper and workspace in one */
		{ "checkpoint", offsetof(struct sb_disk_usage, checkpoint) },
		{ "sessions", offsetof(struct sb_disk_usage, sessions) },
	};

	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		if (!strcmp(parts[i].name, name))
			return (unsigned long long *)((char *)u + parts[i].off);
	return &u->other;
}

/* top: the sandbox's folder, whose entries count in their own fields; below it, all in *total. */
static int walk(struct usage_walk *w, int dfd, struct sb_disk_usage *top, unsigned long long *total, int depth,
		struct sb_error *err)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;
	int rc = 0;

	if (!d) {
		close(dfd);
		return depth ? 0 : sb_error_errno(err, SB_ERR_IO, errno, _("cannot list a sandbox's folder"));
	}
	while (rc == 0 && (de = readdir(d)) != NULL) {
		struct stat st;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || st.st_dev != w->dev)
			continue;
		unsigned long long *f = top ? field_of(top, de->d_name) : total;
		int again = st.st_nlink > 1 && !S_ISDIR(st.st_mode) ? seen_before(w, &st) : 0;
		if (again < 0)
			rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		else if (!again)
			*f += (unsigned long long)st.st_blocks * 512;
		if (rc == 0 && S_ISDIR(st.st_mode) && depth < USAGE_DEPTH_MAX) {
			int cfd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (cfd >= 0)
				rc = walk(w, cfd, NULL, f, depth + 1, err);
		}
	}
	closedir(d);
	return rc;
}

static int usage_of_dir(struct sb_disk_usage *out, const char *dir, struct sb_error *err)
{
	struct usage_walk w = { 0 };
	struct stat st;
	int fd, rc;

	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 || fstat(fd, &st) < 0) {
		rc = sb_error_errno(err, errno == ENOENT ? SB_ERR_NOTFOUND : SB_ERR_IO, errno, _("cannot open '%s'"), dir);
		if (fd >= 0)
			close(fd);
		return rc;
	}
	w.dev = st.st_dev;
	out->other = (unsigned long long)st.st_blocks * 512;
	rc = walk(&w, fd, out, &out->other, 0, err);
	free(w.seen);
	out->total = out->upper + out->workspace + out->checkpoint + out->sessions + out->other;
	return rc;
}

int sb_sandbox_disk_usage(struct sb_disk_usage *out, struct sb_root *root, const char *name, struct sb_error *err)
{
	char *rel, *dir;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = sb_sandbox_name_check(name, err)) < 0)
		return rc;
	rel = sb_strdupf("sandboxes/%s", name);
	dir = rel ? sb_root_file(root, rel) : NULL;
	free(rel);
	rc = dir ? usage_of_dir(out, dir, err) : sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	free(dir);
	return rc;
}
