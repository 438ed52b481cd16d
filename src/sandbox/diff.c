/* diff: what a sandbox changed against its pinned image, read from its
 * overlay upper (overlayfs's format: a 0:0 character device is a whiteout,
 * a directory with trusted.overlay.opaque=y hides all of the image's below
 * it), and the files of its workspace and exchange folder, listed apart.
 * Nothing is followed: every entry is looked at with fstatat(NOFOLLOW) and
 * every directory opened by one component beneath its parent. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "base/fs.h"
#include "base/i18n.h"

#define DEFAULT_MAX 10000
#define MAX_DEPTH 256

struct dwalk {
	struct sb_upper_walk walk;       /* first: the walk's visitor gets it */
	struct sb_diff *d;
	size_t cap, max, listed[SB_DIFF_AREAS];
	struct sb_error *err;
};

const char *sb_diff_area_name(enum sb_diff_area area)
{
	static const char *const names[] = { "root", "workspace", "exchange" };

	return area < SB_DIFF_AREAS ? names[area] : "unknown";
}

static int nomem(struct sb_error *err)
{
	return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
}

static char type_char(mode_t mode)
{
	return S_ISREG(mode) ? 'f' : S_ISDIR(mode) ? 'd' : S_ISLNK(mode) ? 'l' : 's';
}

static int add(struct dwalk *w, enum sb_diff_area area, enum sb_diff_kind kind, const char *path,
	       const struct stat *st, int opaque)
{
	struct sb_diff *d = w->d;

	if (kind != SB_DIFF_DELETED && S_ISREG(st->st_mode))
		d->bytes[area] += (unsigned long long)st->st_size;
	if (w->listed[area] >= w->max) {
		d->more[area]++;
		return 0;
	}
	if (d->count == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 64;
		struct sb_diff_entry *ne = realloc(d->entries, cap * sizeof(*ne));
		if (!ne)
			return nomem(w->err);
		d->entries = ne;
		w->cap = cap;
	}
	struct sb_diff_entry *e = &d->entries[d->count];
	*e = (struct sb_diff_entry){ area, kind, strdup(path), type_char(st->st_mode),
				     S_ISREG(st->st_mode) ? (unsigned long long)st->st_size : 0, st->st_mtime, opaque };
	if (!e->path)
		return nomem(w->err);
	d->count++;
	w->listed[area]++;
	return 0;
}

/* A change of the root file system: an entry of the upper, or one of the
 * image's that a whiteout or an opaque directory hides. A directory in both
 * is a change only when it is itself: its mode or owner, or made again
 * (opaque); what changed below it is listed. */
static int root_visit(struct sb_upper_walk *uw, const struct sb_upper_entry *e, struct sb_error *err)
{
	struct dwalk *w = (struct dwalk *)uw;
	const struct stat *u = e->ust, *l = e->lst;

	(void)err;
	if (!u || e->whiteout)
		return l ? add(w, SB_DIFF_ROOT, SB_DIFF_DELETED, e->path, l, 0) : 0;
	enum sb_diff_kind kind = l ? SB_DIFF_CHANGED : SB_DIFF_ADDED;
	if (!S_ISDIR(u->st_mode) || !l || e->opaque || !S_ISDIR(l->st_mode) ||
	    (l->st_mode & 07777) != (u->st_mode & 07777) || l->st_uid != u->st_uid || l->st_gid != u->st_gid)
		return add(w, SB_DIFF_ROOT, kind, e->path, u, e->opaque && l);
	return 0;
}

/* too deep to list: at least one more */
static int root_too_deep(struct sb_upper_walk *uw, const char *path, struct sb_error *err)
{
	(void)path;
	(void)err;
	((struct dwalk *)uw)->d->more[SB_DIFF_ROOT]++;
	return 0;
}

/* Everything below a folder with no baseline: all added. */
static int walk_plain(struct dwalk *w, enum sb_diff_area area, int fd, const char *path, int depth)
{
	char **names;
	size_t n;
	int rc = sb_dir_names(&names, &n, fd, w->err);

	for (size_t i = 0; rc == 0 && i < n; i++) {
		struct stat st;
		int cfd, e = sb_lookup_at(&cfd, &st, fd, names[i]);
		char *cpath = sb_child_path(path, names[i]);
		if (!cpath)
			rc = nomem(w->err);
		else if (e == 0 && (rc = add(w, area, SB_DIFF_ADDED, cpath, &st, 0)) == 0 && S_ISDIR(st.st_mode)) {
			if (depth < MAX_DEPTH)
				rc = walk_plain(w, area, cfd, cpath, depth + 1);
			else
				w->d->more[area]++; /* too deep to list: at least one more */
		}
		if (e == 0)
			close(cfd);
		free(cpath);
	}
	sb_names_free(names, n);
	return rc;
}

static int walk_folder(struct dwalk *w, enum sb_diff_area area, const char *host, const char *inside)
{
	int fd = open(host, O_PATH | O_DIRECTORY | O_CLOEXEC), rc;

	if (fd < 0)
		return errno == ENOENT ? 0 : sb_error_errno(w->err, SB_ERR_IO, errno, _("cannot open '%s'"), host);
	rc = walk_plain(w, area, fd, inside, 0);
	close(fd);
	return rc;
}

static int diff_box(struct dwalk *w, struct sb_box *b)
{
	char *lower = sb_box_lower(b);
	int ufd = open(b->upper, O_PATH | O_DIRECTORY | O_CLOEXEC), rc = 0;
	int lfd = lower ? open(lower, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;

	if (ufd < 0)
		rc = sb_error_errno(w->err, SB_ERR_IO, errno, _("cannot open the disk of sandbox '%s'"), b->rec.name);
	else if (lfd < 0)
		rc = sb_error_errno(w->err, SB_ERR_NOTFOUND, errno, _("the image of sandbox '%s' is missing"), b->rec.name);
	if (rc == 0)
		rc = sb_upper_walk(&w->walk, ufd, lfd, "/", w->err);
	if (rc == 0)
		rc = walk_folder(w, SB_DIFF_WORKSPACE, b->workspace, "/workspace");
	if (rc == 0 && b->rec.exchange) {
		char *ex = sb_root_file(b->root, "exchange");
		rc = ex ? walk_folder(w, SB_DIFF_EXCHANGE, ex, "/exchange") : nomem(w->err);
		free(ex);
	}
	if (ufd >= 0)
		close(ufd);
	if (lfd >= 0)
		close(lfd);
	free(lower);
	return rc;
}

int sb_sandbox_diff(struct sb_diff **out, struct sb_root *root, const char *name, const struct sb_diff_opts *opts,
		    struct sb_error *err)
{
	struct sb_diff *d = calloc(1, sizeof(*d));
	struct sb_box b;
	int rc;

	*out = NULL;
	if (!d)
		return nomem(err);
	/* the record is read under the lock; the disk is read after it, as
	 * the guest goes on writing it */
	rc = sb_box_open(&b, root, name, BOX_LOCK_SHARED, 1, err);
	if (b.lock_fd >= 0) {
		close(b.lock_fd);
		b.lock_fd = -1;
	}
	if (rc == 0 && !sb_sandbox_state_live(b.rec.state) && b.rec.state != SB_STATE_STOPPED)
		rc = sb_error_set(err, SB_ERR_STATE, _("sandbox '%s' is %s: it has no disk to compare"), name,
				  sb_sandbox_state_name(b.rec.state));
	if (rc == 0) {
		struct dwalk w = { .walk = { root_visit, root_too_deep, 1, &b.rec }, .d = d,
				   .max = opts && opts->max_entries ? opts->max_entries : DEFAULT_MAX, .err = err };
		d->running = sb_sandbox_state_live(b.rec.state);
		d->exchange = b.rec.exchange;
		rc = diff_box(&w, &b);
	}
	sb_box_close(&b);
	if (rc < 0) {
		sb_diff_free(d);
		return rc;
	}
	*out = d;
	return 0;
}

void sb_diff_free(struct sb_diff *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->count; i++)
		free(d->entries[i].path);
	free(d->entries);
	free(d);
}
