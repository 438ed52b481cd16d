/* commit: a sandbox's overlay upper as one OCI layer (upper_walk.c reads
 * it, copy_tar.c writes the entries, image/commit.c compresses, stores and
 * installs). overlayfs's marks become OCI's: a whiteout (0:0 character
 * device) is ".wh.NAME", an opaque directory gets "DIR/.wh..wh..opq". */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "internal.h"
#include "base/clock.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "base/log.h"
#include "image/ref.h"
#include "sandbox/commit.h"

#define CHUNK (256 * 1024)
#define MAX_XATTRS 32
#define XATTR_LIST_MAX_LEN 65536
#define XATTR_VALUE_MAX_LEN 65536
#define OPAQUE_MARKER ".wh..wh..opq"
#define WHITEOUT_PREFIX ".wh."

/* The xattrs a layer keeps: what the unpacker restores. */
static const char *const kept_xattrs[] = { "user.", "security.capability", NULL };

struct link {
	dev_t dev;
	ino_t ino;
	char *path;                      /* the first name written (tar path) */
};

struct cwalk {
	struct sb_upper_walk walk;       /* first: the walk's visitor gets it */
	struct sb_xsink *out;
	struct sb_commit_result *res;
	unsigned long long budget;       /* file data still allowed (opts' max_bytes) */
	struct link *links;
	size_t n_links, cap_links;
	char *buf;
	char xnames[XATTR_LIST_MAX_LEN];
	char *xvalues[MAX_XATTRS];
	struct sb_xattr xattrs[MAX_XATTRS];
	size_t n_xattrs;
};

static int nomem(struct sb_error *err)
{
	return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
}

static int kept_xattr(const char *name)
{
	for (const char *const *k = kept_xattrs; *k; k++)
		if (!strncmp(name, *k, strlen(*k)))
			return 1;
	return 0;
}

static void xattrs_clear(struct cwalk *w)
{
	for (size_t i = 0; i < w->n_xattrs; i++)
		free(w->xvalues[i]);
	w->n_xattrs = 0;
}

/* The kept xattrs of the entry fd (O_PATH), read through our own
 * descriptor: the very inode looked up, nothing followed. */
static int read_xattrs(struct cwalk *w, int fd, const char *path, struct sb_error *err)
{
	char self[64];
	ssize_t len;

	xattrs_clear(w);
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	if ((len = listxattr(self, w->xnames, sizeof(w->xnames))) < 0)
		return errno == ENOTSUP || errno == ENODATA ? 0
							    : sb_error_errno(err, SB_ERR_IO, errno, _("cannot read the attributes of '%s'"), path);
	for (char *n = w->xnames; n < w->xnames + len && w->n_xattrs < MAX_XATTRS; n += strlen(n) + 1) {
		if (!kept_xattr(n))
			continue;
		char *v = malloc(XATTR_VALUE_MAX_LEN);
		ssize_t vl = v ? getxattr(self, n, v, XATTR_VALUE_MAX_LEN) : -1;
		if (!v)
			return nomem(err);
		if (vl < 0) {
			free(v);
			continue; /* gone since it was listed */
		}
		w->xvalues[w->n_xattrs] = v;
		w->xattrs[w->n_xattrs++] = (struct sb_xattr){ n, v, (size_t)vl };
	}
	return 0;
}

static int emit(struct cwalk *w, const struct sb_xentry *x, struct sb_error *err)
{
	int rc = w->out->begin(w->out, x, err);

	w->res->entries++;
	return rc < 0 ? rc : rc == 0 ? w->out->end(w->out, err) : 0;
}

/* An empty marker file: "dir/.wh.NAME" or "dir/.wh..wh..opq". */
static int emit_marker(struct cwalk *w, const char *dir, const char *marker, const char *name, struct sb_error *err)
{
	char *path = sb_strdupf("%s%s%s%s", dir, dir[0] ? "/" : "", marker, name);
	struct sb_xentry x = { .path = path, .type = S_IFREG, .perm = 0 };
	int rc = path ? emit(w, &x, err) : nomem(err);

	w->res->whiteouts++;
	free(path);
	return rc;
}

/* The tar name of the first link of a hard-linked inode, or NULL (then
 * path is remembered as that first link). */
static int first_link(const char **out, struct cwalk *w, const struct stat *st, const char *path, struct sb_error *err)
{
	*out = NULL;
	for (size_t i = 0; i < w->n_links; i++)
		if (w->links[i].dev == st->st_dev && w->links[i].ino == st->st_ino) {
			*out = w->links[i].path;
			return 0;
		}
	if (w->n_links == w->cap_links) {
		size_t cap = w->cap_links ? w->cap_links * 2 : 16;
		struct link *nl = realloc(w->links, cap * sizeof(*nl));
		if (!nl)
			return nomem(err);
		w->links = nl;
		w->cap_links = cap;
	}
	if (!(w->links[w->n_links].path = strdup(path)))
		return nomem(err);
	w->links[w->n_links].dev = st->st_dev;
	w->links[w->n_links++].ino = st->st_ino;
	return 0;
}

/* A regular file's data, at most the size its header gave. */
static int copy_data(struct cwalk *w, int fd, const struct sb_xentry *x, struct sb_error *err)
{
	struct sb_vnode v = { .fd = fd, .lower = -1, .area = -1, .path = (char *)x->path };
	unsigned long long left = x->size;
	int rfd, rc;

	if (fstat(fd, &v.st) < 0)
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot read '%s' in the disk"), x->path);
	if ((rc = sb_vnode_open_read(&rfd, &v, err)) < 0)
		return rc;
	while (rc == 0 && left > 0) {
		ssize_t n = read(rfd, w->buf, left < CHUNK ? (size_t)left : CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? sb_error_errno(err, SB_ERR_IO, errno, _("cannot read '%s' in the disk"), x->path)
				   : sb_error_set(err, SB_ERR_BUSY, _("'%s' shrank while it was committed"), x->path);
			break;
		}
		rc = w->out->data(w->out, w->buf, (size_t)n, err);
		left -= (unsigned long long)n;
	}
	close(rfd);
	return rc;
}

static int emit_file(struct cwalk *w, const struct sb_upper_entry *e, struct sb_xentry *x, struct sb_error *err)
{
	struct stat st;
	const char *first = NULL;
	int fd, rc = sb_lookup_at(&fd, &st, e->dir, e->name);

	if (rc < 0)
		return rc == -ENOENT ? 0 : sb_error_errno(err, SB_ERR_IO, -rc, _("cannot read '%s' in the disk"), e->path);
	if (st.st_nlink > 1 && (rc = first_link(&first, w, &st, x->path, err)) < 0)
		goto out;
	if (first) {
		x->type = 0;
		x->link = first;
		rc = emit(w, x, err);
		goto out;
	}
	x->size = (unsigned long long)st.st_size;
	/* checked before a byte is read: a terabyte of holes is refused at once */
	if (x->size > w->budget) {
		rc = sb_error_set(err, SB_ERR_LIMIT, _("'%s' (%llu bytes) is over the cap on the file data a commit reads "
						       "(%llu bytes left; --max-size)"), x->path, x->size, w->budget);
		goto out;
	}
	w->budget -= x->size;
	if ((rc = read_xattrs(w, fd, e->path, err)) < 0)
		goto out;
	x->xattrs = w->xattrs;
	x->n_xattrs = w->n_xattrs;
	if ((rc = w->out->begin(w->out, x, err)) == 0 && (rc = copy_data(w, fd, x, err)) == 0)
		rc = w->out->end(w->out, err);
	w->res->entries++;
out:
	close(fd);
	return rc < 0 ? rc : 0;
}

static int emit_symlink(struct cwalk *w, const struct sb_upper_entry *e, struct sb_xentry *x, struct sb_error *err)
{
	char target[4096];
	ssize_t len = readlinkat(e->dir, e->name, target, sizeof(target) - 1);

	if (len < 0)
		return errno == ENOENT ? 0 : sb_error_errno(err, SB_ERR_IO, errno, _("cannot read the symbolic link '%s'"), e->path);
	target[len] = '\0';
	x->link = target;
	return emit(w, x, err);
}

static int commit_visit(struct sb_upper_walk *uw, const struct sb_upper_entry *e, struct sb_error *err)
{
	struct cwalk *w = (struct cwalk *)uw;
	const char *rel = e->path + 1;   /* tar names are relative: "etc/x" */
	int rc;

	if (e->whiteout) {
		size_t plen = strlen(rel) - strlen(e->name);
		char *dir = strndup(rel, plen ? plen - 1 : 0);
		rc = dir ? emit_marker(w, dir, WHITEOUT_PREFIX, e->name, err) : nomem(err);
		free(dir);
		return rc;
	}
	const struct stat *st = e->ust;
	struct sb_xentry x = { .path = rel, .type = st->st_mode & S_IFMT, .perm = st->st_mode & 07777, .uid = st->st_uid,
			       .gid = st->st_gid, .mtime = st->st_mtime };
	switch (x.type) {
	case S_IFDIR:
		if ((rc = read_xattrs(w, e->fd, e->path, err)) < 0)
			return rc;
		x.xattrs = w->xattrs;
		x.n_xattrs = w->n_xattrs;
		if ((rc = emit(w, &x, err)) == 0 && e->opaque)
			rc = emit_marker(w, rel, OPAQUE_MARKER, "", err);
		return rc;
	case S_IFREG:
		return emit_file(w, e, &x, err);
	case S_IFLNK:
		return emit_symlink(w, e, &x, err);
	case S_IFIFO:
		return emit(w, &x, err); /* a name only: never opened */
	default:
		/* a device node on a host disk would bypass the sandbox; a socket
		 * has nothing to keep */
		if (!w->res->skipped++ && !(w->res->skipped_first = strdup(e->path)))
			return nomem(err);
		return 0;
	}
}

static int commit_too_deep(struct sb_upper_walk *uw, const char *path, struct sb_error *err)
{
	(void)uw;
	return sb_error_set(err, SB_ERR_LIMIT, _("'%s' is nested too deeply to commit"), path);
}

static int layer_write(void *arg, const void *buf, size_t len, struct sb_error *err)
{
	return sb_layer_writer_write(arg, buf, len, err);
}

/* The workspace folder as /workspace: its own entry, then what it holds. */
static int walk_workspace(struct cwalk *w, const char *host, struct sb_error *err)
{
	int fd = open(host, O_PATH | O_DIRECTORY | O_CLOEXEC), rc;
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0) {
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot open '%s'"), host);
		if (fd >= 0)
			close(fd);
		return rc;
	}
	struct sb_xentry x = { .path = "workspace", .type = S_IFDIR, .perm = st.st_mode & 07777, .uid = st.st_uid,
			       .gid = st.st_gid, .mtime = st.st_mtime };
	if ((rc = emit(w, &x, err)) == 0)
		rc = sb_upper_walk(&w->walk, fd, -1, "/workspace", err);
	close(fd);
	return rc;
}

/* The disk of b as a layer written into lw. */
static int write_layer(struct sb_commit_result *res, struct sb_box *b, struct sb_layer_writer *lw,
		       const struct sb_commit_opts *o, struct sb_error *err)
{
	struct cwalk *w = calloc(1, sizeof(*w));
	struct sb_xtar_out *tar = NULL;
	int ufd = -1, rc = w && (w->buf = malloc(CHUNK)) ? 0 : nomem(err);

	if (rc == 0) {
		w->walk = (struct sb_upper_walk){ commit_visit, commit_too_deep, 0, &b->rec };
		w->res = res;
		w->budget = o->max_bytes ? o->max_bytes : SB_COMMIT_MAX_DEFAULT;
		rc = sb_xtar_out_new_writer(&tar, layer_write, lw, err);
	}
	if (rc == 0 && (ufd = open(b->upper, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot open the disk of sandbox '%s'"), b->rec.name);
	if (rc == 0) {
		w->out = sb_xtar_out_sink(tar);
		rc = sb_upper_walk(&w->walk, ufd, -1, "/", err);
	}
	if (rc == 0 && (o->flags & SB_COMMIT_WORKSPACE))
		rc = walk_workspace(w, b->workspace, err);
	if (rc == 0)
		rc = sb_xtar_out_close(tar, err);
	sb_xtar_out_free(tar);
	if (ufd >= 0)
		close(ufd);
	if (w) {
		xattrs_clear(w);
		for (size_t i = 0; i < w->n_links; i++)
			free(w->links[i].path);
		free(w->links);
		free(w->buf);
		free(w);
	}
	return rc;
}

/* Reads the disk of b, paused around the read when it runs (a paused one
 * stays as it is). */
static int read_disk(struct sb_commit_result *res, struct sb_box *b, struct sb_layer_writer *lw,
		     const struct sb_commit_opts *o, struct sb_error *err)
{
	const struct sb_backend_sandbox *t;
	struct sb_error rerr;
	int rc;

	if (b->rec.state == SB_STATE_STOPPED || b->rec.state == SB_STATE_PAUSED)
		return write_layer(res, b, lw, o, err);
	if (b->rec.state != SB_STATE_RUNNING)
		return sb_error_set(err, SB_ERR_STATE, _("sandbox '%s' is %s: it has no disk to commit"), b->rec.name,
				    sb_sandbox_state_name(b->rec.state));
	if ((rc = sb_box_backend(b, err)) < 0)
		return rc;
	if (!b->be->pause || !b->be->resume)
		return sb_error_set(err, SB_ERR_STATE,
				    _("sandbox '%s' runs on a backend that cannot pause it: stop it, then commit"), b->rec.name);
	t = sb_box_target(b);
	if ((rc = b->be->pause(b->be_state, t, err)) < 0) {
		sb_error_wrap(err, _("cannot pause sandbox '%s' to commit it consistently"), b->rec.name);
		return rc;
	}
	res->paused = 1;
	rc = write_layer(res, b, lw, o, err);
	if (b->be->resume(b->be_state, t, &rerr) < 0) {
		sb_log("commit: sandbox '%s' stays paused: %s", b->rec.name, rerr.msg);
		if (rc == 0) {
			if (err)
				*err = rerr;
			rc = rerr.code;
			sb_error_wrap(err, _("sandbox '%s' was committed but could not be resumed"), b->rec.name);
		}
	}
	return rc;
}

/* The commit's timeline entry; failing to write it fails nothing. */
static void record_commit(struct sb_root *root, const char *name, const struct sb_commit_result *res, int rc,
			  const struct sb_error *err, long long start_ms)
{
	struct sb_timeline_entry e = SB_TIMELINE_ENTRY_INIT(SB_TIMELINE_COMMIT, sb_timeline_actor());
	char *text = sb_strdupf("commit %s%s%s", res->ref ? res->ref : "", res->ref ? " " : "",
				res->digest[0] ? res->digest : "");
	struct sb_error why;

	if (!text)
		return;
	e.text = text;
	e.exit_code = rc < 0 ? 1 : 0;
	e.out_bytes = (long long)res->layer.size;
	e.duration_ms = sb_clock_monotonic_ms() - start_ms;
	if (rc < 0)
		e.detail = err && err->msg[0] ? err->msg : _("the commit failed");
	if (sb_timeline_append(root, name, &e, NULL, &why) < 0 && why.code != SB_ERR_NOTFOUND)
		sb_log("no timeline entry for a commit of sandbox '%s': %s", name, why.msg);
	free(text);
}

/* Everything the caller gave is checked before the sandbox is touched. */
static int check_input(struct sb_commit_result *res, const char *ref, const struct sb_commit_opts *o,
		       struct sb_error *err)
{
	int rc = ref ? sb_image_ref_local(&res->ref, ref, err) : 0;

	if (rc == 0 && (o->compression != SB_LAYER_GZIP && o->compression != SB_LAYER_ZSTD))
		rc = sb_error_set(err, SB_ERR_INVALID, _("unknown layer compression"));
	if (rc == 0)
		rc = sb_image_changes_check(o->changes, o->n_changes, err);
	return rc;
}

int sb_sandbox_commit(struct sb_commit_result *out, struct sb_root *root, const char *name, const char *ref,
		      const struct sb_commit_opts *opts, struct sb_error *err)
{
	static const struct sb_commit_opts defaults = { 0 };
	const struct sb_commit_opts *o = opts ? opts : &defaults;
	struct sb_layer_writer *lw = NULL;
	long long start = sb_clock_monotonic_ms();
	struct sb_box b;
	int rc, opened = 0;

	memset(out, 0, sizeof(*out));
	if ((rc = check_input(out, ref, o, err)) < 0)
		return rc;
	/* shared: prune keeps away from the new blobs until they are an image */
	if ((rc = sb_root_lock(root, SB_LOCK_SHARED, err)) < 0)
		return rc;
	if ((rc = sb_box_open(&b, root, name, BOX_LOCK_SHARED, 1, err)) == 0) {
		opened = 1;
		snprintf(out->parent, sizeof(out->parent), "%s", b.rec.image_digest);
		rc = sb_layer_writer_open(&lw, root, o->compression, err);
	}
	if (rc == 0)
		rc = read_disk(out, &b, lw, o, err);
	if (rc == 0)
		rc = sb_layer_writer_commit(&out->layer, lw, err);
	sb_layer_writer_free(lw);
	char *created_by = !opened ? NULL : o->created_by ? strdup(o->created_by) : sb_strdupf("sandbench commit %s", name);
	char *source = !opened ? NULL : o->source ? strdup(o->source) : sb_strdupf("commit %s", name);
	sb_box_close(&b);
	if (rc == 0 && (!created_by || !source))
		rc = nomem(err);
	if (rc == 0) {
		struct sb_image_commit_opts io = { .parent = out->parent, .ref = out->ref, .message = o->message,
						   .created_by = created_by, .source = source, .changes = o->changes,
						   .n_changes = o->n_changes };
		rc = sb_image_commit(out->digest, root, &out->layer, &io, err);
	} else {
		sb_root_unlock(root);
	}
	free(created_by);
	free(source);
	if (opened)
		record_commit(root, name, out, rc, err, start);
	return rc;
}

void sb_commit_result_clear(struct sb_commit_result *r)
{
	if (!r)
		return;
	free(r->ref);
	free(r->skipped_first);
	memset(r, 0, sizeof(*r));
}
