/* The walk of a sandbox's overlay upper that diff and commit share: every
 * entry of the upper, in name order, depth first, with the image's entry of
 * the same name beside it; whiteouts and opaque directories as overlayfs
 * writes them. Nothing is followed: every entry is looked at with
 * fstatat(NOFOLLOW) and every directory opened by one component beneath
 * its parent (sb_lookup_at). The backend's mount points are left out. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "base/i18n.h"

#define MAX_DEPTH 256

/* Where the backend binds something over the root file system: what the
 * upper has there (mount points runsc made) is not the guest's change. */
static const char *const mount_points[] = {
	"/workspace", "/exchange", "/etc/hosts", "/etc/resolv.conf", "/proc", "/sys", "/dev", "/tmp", NULL,
};

static int nomem(struct sb_error *err)
{
	return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
}

static int is_mount_point(const struct sb_upper_walk *w, const char *path)
{
	for (const char *const *m = mount_points; *m; m++)
		if (!strcmp(*m, path))
			return 1;
	for (size_t i = 0; w->rec && i < w->rec->n_mounts; i++)
		if (!strcmp(w->rec->mounts[i].path, path))
			return 1;
	return 0;
}

int sb_dir_names(char ***names, size_t *n, int fd, struct sb_error *err)
{
	struct sb_vnode v = { .fd = fd, .lower = -1, .area = -1, .path = (char *)"?" };

	*names = NULL;
	*n = 0;
	return fd < 0 ? 0 : sb_vnode_list(names, n, &v, err);
}

/* The union of two sorted name lists (sorted). */
static int merge_names(char ***out, size_t *n, char **a, size_t na, char **b, size_t nb)
{
	size_t i = 0, j = 0, k = 0;
	char **m = calloc(na + nb + 1, sizeof(*m));

	if (!m)
		return -1;
	while (i < na || j < nb) {
		int c = i == na ? 1 : j == nb ? -1 : strcmp(a[i], b[j]);
		const char *s = c <= 0 ? a[i] : b[j];
		if (!(m[k++] = strdup(s))) {
			sb_names_free(m, k);
			return -1;
		}
		i += c <= 0;
		j += c >= 0;
	}
	*out = m;
	*n = k;
	return 0;
}

static int walk_dir(struct sb_upper_walk *w, int ufd, int lfd, const char *path, int hidden, int depth,
		    struct sb_error *err);

/* A directory of the upper: visited, then (unless the visitor says no) walked. */
static int enter_dir(struct sb_upper_walk *w, struct sb_upper_entry *e, int lfd, int hidden, int depth,
		     struct sb_error *err)
{
	struct stat st;
	int cu, cl = -1, rc;

	if ((rc = sb_lookup_at(&cu, &st, e->dir, e->name)) < 0)
		return rc == -ENOENT ? 0 : sb_error_errno(err, SB_ERR_IO, -rc, _("cannot read '%s' in the disk"), e->path);
	e->fd = cu;
	e->opaque = sb_overlay_opaque(cu);
	if (e->lst && S_ISDIR(e->lst->st_mode) && sb_lookup_at(&cl, &st, lfd, e->name) < 0)
		cl = -1;
	rc = w->visit(w, e, err);
	if (rc == 0 && depth < MAX_DEPTH)
		rc = walk_dir(w, cu, cl, e->path, hidden || e->opaque, depth + 1, err);
	else if (rc == 0)
		rc = w->too_deep(w, e->path, err);
	close(cu);
	if (cl >= 0)
		close(cl);
	return rc < 0 ? rc : 0;
}

/* One name of a directory of the upper (ufd) over the image's (lfd, -1
 * when it has none there); hidden: the image's entries here are gone (an
 * opaque directory at or above). */
static int walk_entry(struct sb_upper_walk *w, int ufd, int lfd, const char *cpath, const char *name, int hidden,
		      int depth, struct sb_error *err)
{
	struct stat ust = { 0 }, lst = { 0 };
	int have_u = fstatat(ufd, name, &ust, AT_SYMLINK_NOFOLLOW) == 0;
	int have_l = lfd >= 0 && fstatat(lfd, name, &lst, AT_SYMLINK_NOFOLLOW) == 0;
	struct sb_upper_entry e = { .path = cpath, .name = name, .dir = ufd, .ust = have_u ? &ust : NULL,
				    .lst = have_l ? &lst : NULL, .whiteout = have_u && sb_overlay_whiteout(&ust),
				    .fd = -1 };

	if (!have_u && !have_l)
		return 0; /* gone since it was listed */
	if (have_u && !e.whiteout && S_ISDIR(ust.st_mode))
		return enter_dir(w, &e, lfd, hidden, depth, err);
	int rc = w->visit(w, &e, err);
	return rc < 0 ? rc : 0;
}

static int walk_dir(struct sb_upper_walk *w, int ufd, int lfd, const char *path, int hidden, int depth,
		    struct sb_error *err)
{
	char **un, **ln = NULL, **names = NULL;
	size_t nu, nl = 0, n = 0;
	int rc = sb_dir_names(&un, &nu, ufd, err);

	/* under an opaque directory the image's names are visited too */
	if (rc == 0 && hidden && w->image_names)
		rc = sb_dir_names(&ln, &nl, lfd, err);
	if (rc == 0 && merge_names(&names, &n, un, nu, ln, nl) < 0)
		rc = nomem(err);
	sb_names_free(un, nu);
	sb_names_free(ln, nl);
	if (rc < 0)
		return rc;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		char *cpath = sb_child_path(path, names[i]);
		if (!cpath)
			rc = nomem(err);
		else if (!is_mount_point(w, cpath))
			rc = walk_entry(w, ufd, lfd, cpath, names[i], hidden, depth, err);
		free(cpath);
	}
	sb_names_free(names, n);
	return rc;
}

int sb_upper_walk(struct sb_upper_walk *w, int upper, int lower, const char *top, struct sb_error *err)
{
	return walk_dir(w, upper, lower, top, 0, 0, err);
}
