/* A sandbox's file tree as its guest sees it, read from the host: the
 * overlay of a stopped sandbox (upper over the image's rootfs, whiteouts and
 * opaque directories as overlayfs has them) and the folders bound into it
 * (workspace, exchange, a stopped sandbox's host mounts). Paths are walked
 * one component at a time, each opened O_PATH|O_NOFOLLOW beneath its
 * directory: a symlink is read and resolved here, inside the sandbox, never
 * by the kernel on the host's terms. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "internal.h"
#include "base/fs.h"
#include "base/i18n.h"

#define MAX_LINKS 40
#define MAX_DEPTH 256

int sb_lookup_at(int *out, struct stat *st, int dirfd, const char *name)
{
	struct open_how how = {
		.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
	};
	int fd;

	do
		fd = (int)syscall(SYS_openat2, dirfd, name, &how, sizeof(how));
	while (fd < 0 && (errno == EAGAIN || errno == EINTR));
	if (fd < 0)
		return -errno;
	if (fstat(fd, st) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	*out = fd;
	return 0;
}

int sb_overlay_whiteout(const struct stat *st)
{
	return S_ISCHR(st->st_mode) && st->st_rdev == makedev(0, 0);
}

int sb_overlay_opaque(int fd)
{
	char v[2];
	int dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ssize_t n = dfd >= 0 ? fgetxattr(dfd, SB_OVERLAY_OPAQUE, v, sizeof(v)) : -1;

	if (dfd >= 0)
		close(dfd);
	return n == 1 && v[0] == 'y';
}

static int valid_name(const char *name)
{
	return *name && strcmp(name, ".") && strcmp(name, "..") && !strchr(name, '/');
}

char *sb_child_path(const char *dir, const char *name)
{
	return sb_strdupf("%s%s%s", dir, strcmp(dir, "/") ? "/" : "", name);
}

static int area_at(const struct sb_view *v, const char *path)
{
	for (size_t i = 0; v && i < v->n_areas; i++)
		if (!strcmp(v->areas[i].path, path))
			return (int)i;
	return -1;
}

static void vnode_init(struct sb_vnode *n)
{
	memset(n, 0, sizeof(*n));
	n->fd = n->lower = -1;
	n->area = -1;
}

void sb_vnode_clear(struct sb_vnode *n)
{
	if (!n)
		return;
	if (n->fd >= 0)
		close(n->fd);
	if (n->lower >= 0)
		close(n->lower);
	free(n->path);
	vnode_init(n);
}

static int nomem(struct sb_error *err)
{
	return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
}

char *sb_vnode_label(const struct sb_vnode *n)
{
	if (n->view)
		return sb_strdupf("%s:%s", n->view->name, n->path);
	return strdup(n->path ? n->path : "?");
}

static int open_dir(struct sb_vnode *n, const char *host, struct sb_error *err)
{
	n->fd = open(host, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (n->fd < 0 || fstat(n->fd, &n->st) < 0)
		return sb_error_errno(err, errno == ENOENT ? SB_ERR_NOTFOUND : SB_ERR_IO, errno, _("cannot open '%s'"), host);
	return 0;
}

/* The root of an area, or of the overlay. */
static int area_root(struct sb_vnode *n, const struct sb_view *v, int area, const char *path, struct sb_error *err)
{
	vnode_init(n);
	n->view = v;
	n->area = area;
	if (!(n->path = strdup(path)))
		return nomem(err);
	if (area >= 0)
		return open_dir(n, v->areas[area].host, err);
	if (v->running)
		return 0; /* the guest's: no descriptor */
	n->layered = 1;
	int rc = open_dir(n, v->upper, err);
	if (rc < 0)
		return rc;
	n->opaque = sb_overlay_opaque(n->fd);
	n->lower = open(v->lower, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (n->lower < 0)
		return sb_error_errno(err, SB_ERR_NOTFOUND, errno, _("the image of sandbox '%s' is missing: cannot open '%s'"),
				      v->name, v->lower);
	return 0;
}

static int child_error(struct sb_error *err, int e, const struct sb_vnode *dir, const char *name)
{
	char *label = sb_vnode_label(dir);
	const char *l = label ? label : "?";
	int rc;

	if (e == ENOENT || e == ENOTDIR)
		rc = sb_error_set(err, SB_ERR_NOTFOUND, _("'%s' has no '%s'"), l, name);
	else if (e == EXDEV || e == ELOOP)
		rc = sb_error_set(err, SB_ERR_UNSAFE, _("'%s' in '%s' is refused: it is a mount point or a magic link"), name, l);
	else
		rc = sb_error_errno(err, SB_ERR_IO, e, _("cannot look up '%s' in '%s'"), name, l);
	free(label);
	return rc;
}

/* A child of a layered directory: the upper's entry (a whiteout hides the
 * image's), the image's when the upper has none and the directory is not
 * opaque; a directory in both is merged. */
static int layered_child(struct sb_vnode *out, const struct sb_vnode *dir, const char *name, struct sb_error *err)
{
	struct stat ust = { 0 }, lst = { 0 };
	int u = -1, l = -1, e = 0;
	int lower_visible = dir->lower >= 0 && !dir->opaque;

	if (dir->fd >= 0 && (e = sb_lookup_at(&u, &ust, dir->fd, name)) < 0 && e != -ENOENT)
		return child_error(err, -e, dir, name);
	if (u >= 0 && sb_overlay_whiteout(&ust)) {
		close(u);
		return child_error(err, ENOENT, dir, name);
	}
	if (lower_visible && (u < 0 || S_ISDIR(ust.st_mode)) && (e = sb_lookup_at(&l, &lst, dir->lower, name)) < 0 &&
	    e != -ENOENT) {
		if (u >= 0)
			close(u);
		return child_error(err, -e, dir, name);
	}
	if (u >= 0 && l >= 0 && !S_ISDIR(lst.st_mode)) {
		close(l);
		l = -1;
	}
	if (u < 0 && l < 0)
		return child_error(err, ENOENT, dir, name);
	out->layered = 1;
	out->fd = u;
	out->lower = l;
	out->st = u >= 0 ? ust : lst;
	if (u >= 0 && S_ISDIR(ust.st_mode) && (out->opaque = sb_overlay_opaque(u)) && l >= 0) {
		close(l);
		out->lower = -1;
	}
	return 0;
}

int sb_vnode_child(struct sb_vnode *out, const struct sb_vnode *dir, const char *name, struct sb_error *err)
{
	int rc;

	vnode_init(out);
	if (!valid_name(name))
		return sb_error_set(err, SB_ERR_INVALID, _("'%s' is not a file name"), name);
	char *path = sb_child_path(dir->path, name);
	if (!path)
		return nomem(err);
	int area = area_at(dir->view, path);
	if (area >= 0) {
		if ((rc = area_root(out, dir->view, area, path, err)) < 0)
			sb_vnode_clear(out);
		free(path);
		return rc;
	}
	out->view = dir->view;
	out->area = dir->area;
	out->path = path;
	if (dir->view && dir->area < 0 && dir->view->running) {
		rc = sb_error_set(err, SB_ERR_STATE, _("'%s:%s' is in the running sandbox's root file system"),
				  dir->view->name, path);
		sb_vnode_clear(out);
		return rc;
	}
	if (dir->layered)
		rc = layered_child(out, dir, name, err);
	else if ((rc = sb_lookup_at(&out->fd, &out->st, dir->fd, name)) < 0)
		rc = child_error(err, -rc, dir, name);
	if (rc < 0)
		sb_vnode_clear(out);
	return rc;
}

int sb_vnode_host(struct sb_vnode *node, const char *path, struct sb_error *err)
{
	vnode_init(node);
	if (!(node->path = strdup(path)))
		return nomem(err);
	node->fd = open(path, O_PATH | O_CLOEXEC);
	if (node->fd < 0 || fstat(node->fd, &node->st) < 0)
		return sb_error_errno(err, errno == ENOENT || errno == ENOTDIR ? SB_ERR_NOTFOUND : SB_ERR_IO, errno,
				      _("cannot open '%s'"), path);
	return 0;
}

int sb_vnode_beneath(struct sb_vnode *node, int dirfd, const char *rel, const char *label, struct sb_error *err)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV };

	vnode_init(node);
	if (!(node->path = strdup(label)))
		return nomem(err);
	do
		node->fd = (int)syscall(SYS_openat2, dirfd, rel, &how, sizeof(how));
	while (node->fd < 0 && (errno == EINTR || errno == EAGAIN));
	if (node->fd < 0 && errno == EXDEV)
		return sb_error_set(err, SB_ERR_UNSAFE, _("'%s' leads out of the build context"), label);
	if (node->fd < 0 || fstat(node->fd, &node->st) < 0)
		return sb_error_errno(err, errno == ENOENT || errno == ENOTDIR ? SB_ERR_NOTFOUND : SB_ERR_IO, errno,
				      _("cannot open '%s'"), label);
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void sb_names_free(char **names, size_t n)
{
	for (size_t i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
}

struct names {
	char **v;
	size_t n, cap;
};

static int names_add(struct names *ns, const char *name)
{
	if (ns->n == ns->cap) {
		size_t cap = ns->cap ? ns->cap * 2 : 32;
		char **nv = realloc(ns->v, cap * sizeof(*nv));
		if (!nv)
			return -1;
		ns->v = nv;
		ns->cap = cap;
	}
	if (!(ns->v[ns->n] = strdup(name)))
		return -1;
	ns->n++;
	return 0;
}

static int names_has(const struct names *ns, const char *name)
{
	for (size_t i = 0; i < ns->n; i++)
		if (!strcmp(ns->v[i], name))
			return 1;
	return 0;
}

/* Reads the directory fd (O_PATH) into ns; with hidden, whiteouts go there
 * instead; names already in skip are left out. */
static int read_dir(struct names *ns, struct names *hidden, const struct names *skip, int fd)
{
	int dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	struct dirent *de;
	int rc = 0;

	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return -1;
	}
	while (rc == 0 && (errno = 0, de = readdir(d))) {
		struct stat st;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (skip && names_has(skip, de->d_name))
			continue;
		if (hidden && (de->d_type == DT_CHR || de->d_type == DT_UNKNOWN) &&
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && sb_overlay_whiteout(&st))
			rc = names_add(hidden, de->d_name);
		else
			rc = names_add(ns, de->d_name);
	}
	if (rc == 0 && errno)
		rc = -1;
	closedir(d);
	return rc;
}

int sb_vnode_list(char ***out, size_t *count, const struct sb_vnode *dir, struct sb_error *err)
{
	struct names ns = { 0 }, hidden = { 0 }, upper = { 0 };
	int rc = 0;

	*out = NULL;
	*count = 0;
	if (dir->fd >= 0)
		rc = read_dir(dir->layered ? &upper : &ns, dir->layered ? &hidden : NULL, NULL, dir->fd);
	if (rc == 0 && dir->layered) {
		for (size_t i = 0; rc == 0 && i < upper.n; i++)
			rc = names_add(&ns, upper.v[i]);
		if (rc == 0 && dir->lower >= 0 && !dir->opaque) {
			for (size_t i = 0; rc == 0 && i < hidden.n; i++)
				rc = names_add(&upper, hidden.v[i]);
			if (rc == 0)
				rc = read_dir(&ns, NULL, &upper, dir->lower);
		}
	}
	/* mount points show as the guest sees them, whatever the tree has there */
	for (size_t i = 0; rc == 0 && dir->view && i < dir->view->n_areas; i++) {
		const char *p = dir->view->areas[i].path, *slash = strrchr(p, '/');
		size_t plen = (size_t)(slash - p);
		int here = !strcmp(dir->path, "/") ? plen == 0 : strlen(dir->path) == plen && !strncmp(p, dir->path, plen);
		if (here && !names_has(&ns, slash + 1))
			rc = names_add(&ns, slash + 1);
	}
	sb_names_free(hidden.v, hidden.n);
	sb_names_free(upper.v, upper.n);
	if (rc < 0) {
		char *label = sb_vnode_label(dir);
		rc = sb_error_errno(err, SB_ERR_IO, errno ? errno : ENOMEM, _("cannot list '%s'"), label ? label : "?");
		free(label);
		sb_names_free(ns.v, ns.n);
		return rc;
	}
	if (ns.n)
		qsort(ns.v, ns.n, sizeof(*ns.v), cmp_names);
	*out = ns.v;
	*count = ns.n;
	return 0;
}

int sb_vnode_open_read(int *out, const struct sb_vnode *n, struct sb_error *err)
{
	int src = n->fd >= 0 ? n->fd : n->lower;
	char self[64], *label;
	struct stat again;
	int fd;

	*out = -1;
	if (!S_ISREG(n->st.st_mode)) {
		label = sb_vnode_label(n);
		int rc = sb_error_set(err, SB_ERR_UNSAFE, _("'%s' is not a regular file: refused"), label ? label : "?");
		free(label);
		return rc;
	}
	/* the very inode looked up, through our own descriptor */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", src);
	fd = open(self, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &again) < 0 || again.st_ino != n->st.st_ino || again.st_dev != n->st.st_dev) {
		int e = fd < 0 ? errno : EAGAIN;
		if (fd >= 0)
			close(fd);
		label = sb_vnode_label(n);
		int rc = sb_error_errno(err, SB_ERR_IO, e, _("cannot open '%s'"), label ? label : "?");
		free(label);
		return rc;
	}
	*out = fd;
	return 0;
}

const struct sb_view_area *sb_view_area_of(const struct sb_vnode *n)
{
	return n->view && n->area >= 0 ? &n->view->areas[n->area] : NULL;
}

/* Resolution: a stack of the directories walked so far (the root first) and
 * the components still to walk. */
struct walk {
	struct sb_vnode stack[MAX_DEPTH];
	size_t depth;
	char *rest;
	int links;
};

static void walk_pop_to(struct walk *w, size_t depth)
{
	while (w->depth > depth)
		sb_vnode_clear(&w->stack[--w->depth]);
}

/* Takes the next component off w->rest into comp; 0 when none is left. */
static int next_comp(struct walk *w, char *comp, size_t size)
{
	char *p = w->rest;

	while (*p == '/')
		p++;
	size_t len = strcspn(p, "/");
	if (!len)
		return 0;
	if (len >= size)
		len = size - 1;
	memcpy(comp, p, len);
	comp[len] = '\0';
	memmove(w->rest, p + strcspn(p, "/"), strlen(p + strcspn(p, "/")) + 1);
	return 1;
}

static int more_comps(const struct walk *w)
{
	return w->rest[strspn(w->rest, "/")] != '\0';
}

/* Follows the symlink n: its target goes in front of what is left. */
static int follow(struct walk *w, struct sb_vnode *n, struct sb_error *err)
{
	char target[4096];
	ssize_t len = readlinkat(n->fd >= 0 ? n->fd : n->lower, "", target, sizeof(target) - 1);
	int saved = errno; /* before sb_vnode_label's allocation can change it */
	char *label = sb_vnode_label(n);
	int rc = 0;

	if (++w->links > MAX_LINKS)
		rc = sb_error_set(err, SB_ERR_UNSAFE, _("'%s' is refused: too many symbolic links"), label ? label : "?");
	else if (len < 0)
		rc = sb_error_errno(err, SB_ERR_IO, saved, _("cannot read the symbolic link '%s'"), label ? label : "?");
	free(label);
	sb_vnode_clear(n);
	if (rc < 0 || len < 0) /* len < 0 always set rc: said for the analysers */
		return rc;
	target[len] = '\0';
	if (target[0] == '/')
		walk_pop_to(w, 1);
	char *rest = sb_strdupf("%s/%s", target, w->rest);
	if (!rest)
		return nomem(err);
	free(w->rest);
	w->rest = rest;
	return 0;
}

static int walk_step(struct walk *w, const char *comp, int follow_last, char **guest, struct sb_error *err)
{
	struct sb_vnode *cur = &w->stack[w->depth - 1], n;

	if (!strcmp(comp, "."))
		return 0;
	if (!strcmp(comp, "..")) {
		walk_pop_to(w, w->depth > 1 ? w->depth - 1 : 1);
		return 0;
	}
	const struct sb_view *v = cur->view;
	char *path = sb_child_path(cur->path, comp);
	if (!path)
		return nomem(err);
	/* the running guest's own tree: the rest is the guest's to resolve */
	if (cur->area < 0 && v->running && area_at(v, path) < 0) {
		*guest = more_comps(w) ? sb_strdupf("%s/%s", path, w->rest + strspn(w->rest, "/")) : strdup(path);
		free(path);
		if (!*guest)
			return nomem(err);
		for (size_t len = strlen(*guest); len > 1 && (*guest)[len - 1] == '/'; len--)
			(*guest)[len - 1] = '\0';
		return 1;
	}
	free(path);
	if (w->depth == MAX_DEPTH)
		return sb_error_set(err, SB_ERR_LIMIT, _("a path in sandbox '%s' is too deep"), v->name);
	int rc = sb_vnode_child(&n, cur, comp, err);
	if (rc < 0)
		return rc;
	if (S_ISLNK(n.st.st_mode) && (more_comps(w) || follow_last))
		return follow(w, &n, err);
	if (more_comps(w) && !S_ISDIR(n.st.st_mode)) {
		rc = sb_error_set(err, SB_ERR_NOTFOUND, _("'%s:%s' is not a directory"), v->name, n.path);
		sb_vnode_clear(&n);
		return rc;
	}
	w->stack[w->depth++] = n;
	return 0;
}

int sb_view_resolve(struct sb_vnode *node, char **guest, const struct sb_view *v, const char *path, int follow_last,
		    struct sb_error *err)
{
	static struct walk zero;
	struct walk *w = malloc(sizeof(*w));
	char comp[256];
	int rc;

	vnode_init(node);
	*guest = NULL;
	if (!w)
		return nomem(err);
	*w = zero;
	if (path[0] != '/') {
		free(w);
		return sb_error_set(err, SB_ERR_INVALID, _("'%s:%s': a path inside a sandbox must be absolute"), v->name, path);
	}
	rc = area_root(&w->stack[0], v, area_at(v, "/"), "/", err);
	w->depth = 1;
	if (rc == 0 && !(w->rest = strdup(path)))
		rc = nomem(err);
	while (rc == 0 && next_comp(w, comp, sizeof(comp)))
		rc = walk_step(w, comp, follow_last, guest, err);
	if (rc == 0 && w->stack[w->depth - 1].area < 0 && v->running)
		rc = (*guest = strdup(w->stack[w->depth - 1].path)) ? 1 : nomem(err);
	if (rc == 0) {
		*node = w->stack[--w->depth];
		vnode_init(&w->stack[w->depth]);
	}
	walk_pop_to(w, 0);
	free(w->rest);
	free(w);
	return rc;
}

/* One step of a copy-up: the upper's directory name in up, made like the
 * image's (low, may be -1) when the upper has none yet. */
static int upper_step(int *up, int *low, const char *name, const struct sb_view *v, struct sb_error *err)
{
	struct stat st = { 0 }, lst = { 0 };
	int fd = -1, l = -1, e = sb_lookup_at(&fd, &st, *up, name);
	int has_low = *low >= 0 && sb_lookup_at(&l, &lst, *low, name) == 0 && S_ISDIR(lst.st_mode);

	if (e == -ENOENT) {
		if (mkdirat(*up, name, has_low ? lst.st_mode & 07777 : 0755) < 0 ||
		    fchownat(*up, name, has_low ? lst.st_uid : 0, has_low ? lst.st_gid : 0, AT_SYMLINK_NOFOLLOW) < 0)
			e = -errno;
		else
			e = sb_lookup_at(&fd, &st, *up, name);
	}
	if (e == 0 && !S_ISDIR(st.st_mode)) {
		close(fd);
		e = -ENOTDIR;
	}
	close(*up);
	*up = e == 0 ? fd : -1;
	if (*low >= 0)
		close(*low);
	*low = has_low ? l : -1;
	if (!has_low && l >= 0)
		close(l);
	if (e == -ENOTDIR)
		return sb_error_set(err, SB_ERR_BUSY, _("'%s' in the disk of sandbox '%s' changed while it was copied to"), name,
				    v->name);
	if (e < 0)
		return sb_error_errno(err, SB_ERR_IO, -e, _("cannot copy '%s' up in the disk of sandbox '%s'"), name, v->name);
	return 0;
}

int sb_view_upper_dir(int *out, const struct sb_view *v, const char *path, struct sb_error *err)
{
	int up = open(v->upper, O_PATH | O_DIRECTORY | O_CLOEXEC), low = open(v->lower, O_PATH | O_DIRECTORY | O_CLOEXEC);
	char *copy = strdup(path), *save = NULL;
	int rc = up < 0 ? sb_error_errno(err, SB_ERR_IO, errno, _("cannot open '%s'"), v->upper) : copy ? 0 : nomem(err);

	for (char *c = copy ? strtok_r(copy, "/", &save) : NULL; rc == 0 && c; c = strtok_r(NULL, "/", &save))
		rc = upper_step(&up, &low, c, v, err);
	free(copy);
	if (low >= 0)
		close(low);
	if (rc < 0 && up >= 0)
		close(up);
	*out = rc == 0 ? up : -1;
	return rc;
}

static int add_area(struct sb_view *v, const char *path, const char *host, int rw)
{
	struct sb_view_area *a = &v->areas[v->n_areas];

	a->path = strdup(path);
	a->host = strdup(host);
	a->rw = rw;
	v->n_areas++;
	return a->path && a->host ? 0 : -1;
}

/* A stopped sandbox's host mounts are its host folders, as long as they are
 * still the folders create recorded. */
static int add_mounts(struct sb_view *v, const struct sb_record *rec, struct sb_error *err)
{
	for (size_t i = 0; i < rec->n_mounts; i++) {
		const struct sb_sandbox_mount *m = &rec->mounts[i];
		unsigned long long dev, ino;
		int rc = sb_mount_identify(&dev, &ino, m->host, err);
		if (rc == 0 && m->dev && (dev != m->dev || ino != m->ino))
			rc = sb_error_set(err, SB_ERR_UNSAFE, _("mount changed: '%s' is no longer the folder sandbox '%s' was given"),
					  m->host, rec->name);
		if (rc < 0)
			return rc;
		if (add_area(v, m->path, m->host, m->mode == SB_MOUNT_RW) < 0)
			return nomem(err);
	}
	return 0;
}

int sb_view_open(struct sb_view *v, struct sb_box *b, struct sb_error *err)
{
	const struct sb_backend_sandbox *t = sb_box_target(b);
	int rc = 0;

	memset(v, 0, sizeof(*v));
	v->name = b->rec.name;
	v->running = b->rec.state == SB_STATE_RUNNING;
	v->areas = calloc(b->rec.n_mounts + 2, sizeof(*v->areas));
	if (!v->areas || !(v->upper = strdup(b->upper)) || !t->lower || !(v->lower = strdup(t->lower)) ||
	    add_area(v, "/workspace", b->workspace, 1) < 0 || (t->exchange && add_area(v, "/exchange", t->exchange, 1) < 0))
		rc = nomem(err);
	/* a running sandbox's host mounts are read through its guest, which
	 * sees the folder verified at its boot */
	if (rc == 0 && !v->running)
		rc = add_mounts(v, &b->rec, err);
	if (rc < 0)
		sb_view_clear(v);
	return rc;
}

void sb_view_clear(struct sb_view *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->n_areas; i++) {
		free(v->areas[i].path);
		free(v->areas[i].host);
	}
	free(v->areas);
	free(v->upper);
	free(v->lower);
	memset(v, 0, sizeof(*v));
}
