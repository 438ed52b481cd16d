/* cp: files into and out of a sandbox (files.h). This file picks the route
 * (host side through the view, or the guest's tar) and the target with
 * docker cp's rules; copy_view.c resolves inside the sandbox, copy_walk.c,
 * copy_write.c and copy_tar.c move the entries, copy_guest.c talks to the
 * guest's tar. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "base/clock.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "base/log.h"
#include "sandbox/timeline.h"

/* What a source or destination path says besides its name. */
struct spec {
	char *path;                      /* trailing '/' and "/." taken off ("/" stays) */
	char *base;                      /* its last component; "" for "/" */
	int slash;                       /* it ended in '/': a directory is meant */
	int contents;                    /* it ended in "/.": a directory's content */
};

static void spec_clear(struct spec *s)
{
	free(s->path);
	free(s->base);
	memset(s, 0, sizeof(*s));
}

static int nomem(struct sb_error *err)
{
	return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
}

static int spec_parse(struct spec *s, const char *path, struct sb_error *err)
{
	size_t len = strlen(path);

	memset(s, 0, sizeof(*s));
	if (!len)
		return sb_error_set(err, SB_ERR_INVALID, _("an empty path"));
	if (len >= 2 && !strcmp(path + len - 2, "/.")) {
		s->contents = s->slash = 1;
		len -= 1;
	}
	while (len > 1 && path[len - 1] == '/') {
		s->slash = 1;
		len--;
	}
	if (!(s->path = strndup(path, len)))
		return nomem(err);
	const char *slash = strrchr(s->path, '/');
	if (!(s->base = strdup(slash ? slash + 1 : s->path)))
		return nomem(err);
	if (!strcmp(s->base, ".") || !strcmp(s->base, ".."))
		s->contents = 1;
	return 0;
}

/* The parent directory of a spec's path ("/" for "/x", "." for "x"). */
static char *parent_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return strdup(".");
	return slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));
}

/* docker cp's rules. dk: what the destination is ('d' a directory, 'f'
 * anything else, 'm' missing), bk: what dst/base is, parent_ok: dst's
 * parent is a directory. The target is name in dir, or (merge) the
 * directory dir itself. */
struct plan {
	int merge;
	char *dir, *name;
};

static void plan_clear(struct plan *p)
{
	free(p->dir);
	free(p->name);
	memset(p, 0, sizeof(*p));
}

/* Sets a plan: name in dir, or (name NULL) a merge into dir. */
static int plan_set(struct plan *p, char *dir, const char *name, struct sb_error *err)
{
	p->merge = !name;
	p->dir = dir;
	p->name = name ? strdup(name) : NULL;
	return !p->dir || (name && !p->name) ? nomem(err) : 0;
}

static int plan_target(struct plan *p, int src_dir, const struct spec *src, const struct spec *dst, char dk, char bk,
		       int parent_ok, const char *where, struct sb_error *err)
{
	memset(p, 0, sizeof(*p));
	if (dk == 'd') {
		if (src_dir && (src->contents || !src->base[0]))
			return plan_set(p, strdup(dst->path), NULL, err);
		if (src_dir && bk == 'f')
			return sb_error_set(err, SB_ERR_EXISTS, _("cannot copy a directory onto the file '%s%s/%s'"), where,
					    dst->path, src->base);
		if (!src_dir && bk == 'd')
			return sb_error_set(err, SB_ERR_EXISTS, _("'%s%s/%s' is a directory: a file cannot replace it"), where,
					    dst->path, src->base);
		if (src_dir && bk == 'd')
			return plan_set(p, sb_strdupf("%s%s%s", dst->path, strcmp(dst->path, "/") ? "/" : "", src->base), NULL,
					err);
		return plan_set(p, strdup(dst->path), src->base, err);
	}
	if (dk == 'f' && src_dir)
		return sb_error_set(err, SB_ERR_EXISTS, _("cannot copy a directory onto the file '%s%s'"), where, dst->path);
	if (dk == 'f' && dst->slash)
		return sb_error_set(err, SB_ERR_NOTFOUND, _("'%s%s' is not a directory"), where, dst->path);
	if (dk == 'm' && !src_dir && dst->slash)
		return sb_error_set(err, SB_ERR_NOTFOUND, _("the directory '%s%s' does not exist"), where, dst->path);
	if (dk == 'm' && !parent_ok)
		return sb_error_set(err, SB_ERR_NOTFOUND, _("the directory that would hold '%s%s' does not exist"), where,
				    dst->path);
	return plan_set(p, parent_of(dst->path), dst->base, err);
}

/* The sandbox of a copy: its record, lock and view. */
struct box {
	struct sb_box b;
	struct sb_view v;
	int open, has_view;
};

static int box_open(struct box *x, struct sb_root *root, const char *name, int writing, struct sb_error *err)
{
	/* the guest's tar runs as an exec: a paused sandbox is woken */
	int rc = sb_sandbox_wake(NULL, root, name, _("files are copied to or from it"), err);

	if (rc < 0)
		return rc;
	rc = sb_box_open(&x->b, root, name, BOX_LOCK_EXCLUSIVE, 1, err);
	x->open = 1;
	/* a record that says running without a live runtime is made stopped first */
	if (rc == 0)
		rc = sb_box_settle_if_gone(&x->b, err);
	if (rc == 0 && x->b.rec.state != SB_STATE_RUNNING && x->b.rec.state != SB_STATE_STOPPED)
		rc = sb_error_set(err, SB_ERR_STATE, _("sandbox '%s' is %s: files are copied to and from running or stopped "
						       "sandboxes only"), name, sb_sandbox_state_name(x->b.rec.state));
	if (rc == 0 && (rc = sb_view_open(&x->v, &x->b, err)) == 0)
		x->has_view = 1;
	if (rc < 0)
		return rc;
	if (x->b.rec.state == SB_STATE_RUNNING) {
		/* like exec: the record was read; the guest's tar runs as an exec */
		sb_box_touch(&x->b, NULL);
		close(x->b.lock_fd);
		x->b.lock_fd = -1;
	} else if (!writing) {
		/* reads of a stopped sandbox only keep it from being restored */
		flock(x->b.lock_fd, LOCK_SH);
	}
	return 0;
}

static void box_close(struct box *x)
{
	if (x->has_view)
		sb_view_clear(&x->v);
	if (x->open)
		sb_box_close(&x->b);
	memset(x, 0, sizeof(*x));
}

static char *label(const char *name, const char *path)
{
	return sb_strdupf("%s:%s", name, path);
}

static void result_init(struct sb_copy_result *r)
{
	if (r)
		memset(r, 0, sizeof(*r));
}

void sb_copy_result_clear(struct sb_copy_result *r)
{
	if (!r)
		return;
	free(r->skipped_first);
	free(r->src);
	free(r->dst);
	memset(r, 0, sizeof(*r));
}

/* The copy's timeline entry: direction, paths, route and bytes, or why it
 * failed. Written after the sandbox's lock is let go (the timeline takes it
 * to create or rotate its file); failing to write it fails nothing. */
static void record_copy(struct sb_root *root, const char *name, const struct sb_copy_result *res, int out, int rc,
			const struct sb_error *err, long long start_ms)
{
	struct sb_timeline_entry e = SB_TIMELINE_ENTRY_INIT(SB_TIMELINE_FILE, sb_timeline_actor());
	char *text = sb_strdupf("cp %s: %s -> %s (%s)", out ? "out" : "in", res->src ? res->src : "?",
				res->dst ? res->dst : "?", res->route == SB_COPY_GUEST ? "guest" : "host");
	struct sb_error why;

	if (!text || !res->src || sb_sandbox_name_check(name, NULL) < 0) {
		free(text);
		return;
	}
	e.text = text;
	e.exit_code = rc < 0 ? 1 : 0;
	e.out_bytes = (long long)res->bytes;
	e.duration_ms = sb_clock_monotonic_ms() - start_ms;
	if (rc < 0)
		e.detail = err && err->msg[0] ? err->msg : _("the copy failed");
	if (sb_timeline_append(root, name, &e, NULL, &why) < 0 && why.code != SB_ERR_NOTFOUND)
		sb_log("no timeline entry for a copy in sandbox '%s': %s", name, why.msg);
	free(text);
}

/* ---- out of a sandbox ---- */

/* 'd', 'f' or 'm' for a host path (a symlink to a directory counts as one:
 * the host path is the caller's own) */
static char host_kind(const char *path)
{
	struct stat st;

	if (stat(path, &st) == 0)
		return S_ISDIR(st.st_mode) ? 'd' : 'f';
	return lstat(path, &st) == 0 ? 'f' : 'm';
}

/* The host sink, planned when the source's top arrives (a guest's tar says
 * only then whether it is a file or a directory). */
struct host_sink {
	struct sb_xsink sink;
	struct sb_xdisk disk;
	int ready;
	const struct spec *src, *dst;
};

static int host_plan(struct host_sink *h, int src_dir, struct sb_error *err)
{
	struct plan p;
	char *inside = sb_strdupf("%s/%s", h->dst->path, h->src->base), *parent = parent_of(h->dst->path);
	int rc = inside && parent ? 0 : nomem(err);

	if (rc == 0)
		rc = plan_target(&p, src_dir, h->src, h->dst, host_kind(h->dst->path), host_kind(inside),
				 host_kind(parent) == 'd', "", err);
	free(inside);
	free(parent);
	if (rc < 0)
		return rc;
	int fd = open(p.dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot open '%s'"), p.dir);
	else if ((rc = sb_xdisk_init(&h->disk, fd, p.merge ? p.dir : p.name, p.merge, err)) < 0)
		close(fd);
	if (rc == 0) {
		h->disk.drop_suid = 1;
		h->disk.label = h->dst->path;
		h->ready = 1;
	}
	plan_clear(&p);
	return rc;
}

static int host_begin(struct sb_xsink *s, const struct sb_xentry *e, struct sb_error *err)
{
	struct host_sink *h = (struct host_sink *)s;
	int rc;

	if (!h->ready && (rc = host_plan(h, e->type == S_IFDIR, err)) < 0)
		return rc;
	return h->disk.sink.begin(&h->disk.sink, e, err);
}

static int host_data(struct sb_xsink *s, const void *buf, size_t len, struct sb_error *err)
{
	struct host_sink *h = (struct host_sink *)s;

	return h->disk.sink.data(&h->disk.sink, buf, len, err);
}

static int host_end(struct sb_xsink *s, struct sb_error *err)
{
	struct host_sink *h = (struct host_sink *)s;

	return h->disk.sink.end(&h->disk.sink, err);
}

/* Sends path of the sandbox into sink: host side, or through its guest. */
static int produce_out(struct sb_copy_result *res, struct box *x, struct sb_root *root, const char *name,
		       const struct spec *src, int recursive, struct sb_xsink *sink, struct sb_error *err)
{
	struct sb_vnode n;
	char *guest = NULL;
	int rc = sb_view_resolve(&n, &guest, &x->v, src->path, 1, err);

	if (rc == 1) {
		res->route = SB_COPY_GUEST;
		char *gpath = src->slash ? sb_strdupf("%s/", guest) : strdup(guest);
		rc = gpath ? sb_guest_copy_out(sink, root, name, gpath, recursive, err) : nomem(err);
		free(gpath);
		free(guest);
		return rc;
	}
	if (rc < 0)
		return rc;
	res->route = SB_COPY_HOST;
	if (src->slash && !S_ISDIR(n.st.st_mode))
		rc = sb_error_set(err, SB_ERR_NOTFOUND, _("'%s:%s' is not a directory"), name, src->path);
	else if (S_ISDIR(n.st.st_mode) && !recursive)
		rc = sb_error_set(err, SB_ERR_INVALID, _("'%s:%s' is a directory: copy it with -r"), name, src->path);
	else
		rc = sb_xwalk(sink, &n, err);
	sb_vnode_clear(&n);
	return rc;
}

/* Both copies out: the sink is a host tree (host_dst) or a tar stream (fd). */
static int copy_out(struct sb_copy_result *out, struct sb_root *root, const char *name, const char *path,
		    const char *host_dst, int fd, const struct sb_copy_opts *opts, struct sb_error *err)
{
	struct sb_copy_result own = { 0 };
	struct sb_copy_result *res = out ? out : &own;
	struct spec src = { 0 }, dst = { 0 };
	struct host_sink h = { { host_begin, host_data, host_end }, { .parent = -1 }, 0, &src, &dst };
	struct sb_xtar_out *tar = NULL;
	struct sb_xmeter m;
	struct box x = { 0 };
	long long start = sb_clock_monotonic_ms();
	int rc;

	result_init(res);
	if ((rc = spec_parse(&src, path, err)) == 0 && host_dst)
		rc = spec_parse(&dst, host_dst, err);
	if (rc == 0 && path[0] != '/')
		rc = sb_error_set(err, SB_ERR_INVALID, _("'%s:%s': a path inside a sandbox must be absolute"), name, path);
	if (rc == 0 && !((res->src = label(name, src.path)) && (res->dst = strdup(host_dst ? host_dst : "-"))))
		rc = nomem(err);
	if (rc == 0)
		rc = box_open(&x, root, name, 0, err);
	if (rc == 0 && !host_dst)
		rc = sb_xtar_out_new(&tar, fd, src.contents ? "" : src.base, 0, 0, err);
	if (rc == 0) {
		sb_xmeter_init(&m, tar ? sb_xtar_out_sink(tar) : &h.sink, res, opts ? opts->max_bytes : 0, res->src);
		rc = produce_out(res, &x, root, name, &src, opts && (opts->flags & SB_COPY_RECURSIVE), &m.sink, err);
	}
	if (rc == 0 && tar)
		rc = sb_xtar_out_close(tar, err);
	if (rc == 0 && h.ready)
		rc = sb_xdisk_finish(&h.disk, err);
	if (rc < 0 && h.ready && h.disk.merge)
		sb_error_wrap(err, _("the copy into '%s' stopped half-way (%llu bytes copied)"), host_dst, res->bytes);
	sb_xtar_out_free(tar);
	if (h.ready)
		sb_xdisk_clear(&h.disk);
	box_close(&x);
	record_copy(root, name, res, 1, rc, err, start);
	spec_clear(&src);
	spec_clear(&dst);
	if (res == &own)
		sb_copy_result_clear(&own);
	return rc;
}

int sb_sandbox_copy_out(struct sb_copy_result *out, struct sb_root *root, const char *name, const char *path,
			const char *host_dst, const struct sb_copy_opts *opts, struct sb_error *err)
{
	if (!host_dst || !*host_dst)
		return sb_error_set(err, SB_ERR_INVALID, _("no host path to copy '%s:%s' to"), name, path);
	return copy_out(out, root, name, path, host_dst, -1, opts, err);
}

int sb_sandbox_copy_out_tar(struct sb_copy_result *out, struct sb_root *root, const char *name, const char *path,
			    int fd, const struct sb_copy_opts *opts, struct sb_error *err)
{
	return copy_out(out, root, name, path, NULL, fd, opts, err);
}

/* ---- into a sandbox ---- */

/* The source of a copy in: a host tree or a tar stream. */
struct source {
	struct sb_vnode node;            /* host tree */
	int fd;                          /* tar stream; -1 */
	struct sb_xmeter meter;
	const char *label;
};

static int produce_in(void *arg, struct sb_xsink *sink, struct sb_error *err)
{
	struct source *s = arg;

	s->meter.next = sink;
	if (s->fd >= 0)
		return sb_xtar_read(&s->meter.sink, s->fd, 0, s->label, err);
	return sb_xwalk(&s->meter.sink, &s->node, err);
}

/* 'd', 'f', 'm' of path in the view; 1 with *guest when it is the
 * guest's. A symlink there counts as what it leads to when that is a
 * directory the host can see; otherwise it is an 'f', replaced by the copy. */
static int view_kind(char *kind, char **guest, const struct sb_view *v, const char *path, struct sb_error *err)
{
	struct sb_vnode n, t;
	char *tguest = NULL;
	int rc = sb_view_resolve(&n, guest, v, path, 0, err);

	if (rc == 0) {
		*kind = S_ISDIR(n.st.st_mode) ? 'd' : 'f';
		if (S_ISLNK(n.st.st_mode) && sb_view_resolve(&t, &tguest, v, path, 1, NULL) == 0) {
			if (S_ISDIR(t.st.st_mode))
				*kind = 'd';
			sb_vnode_clear(&t);
		}
		free(tguest);
	} else if (rc == SB_ERR_NOTFOUND) {
		*kind = 'm';
		rc = 0;
	}
	sb_vnode_clear(&n);
	return rc;
}

/* Mount points of the sandbox below target (canonical): entry paths that
 * must not be written in the tree around them. */
static int fences_for(char ***out, const struct sb_view *v, const char *target, struct sb_error *err)
{
	size_t tlen = strcmp(target, "/") ? strlen(target) : 0, n = 0;

	*out = calloc(v->n_areas + 1, sizeof(**out));
	if (!*out)
		return nomem(err);
	for (size_t i = 0; i < v->n_areas; i++) {
		const char *p = v->areas[i].path;
		if (!strncmp(p, target, tlen) && p[tlen] == '/' && !((*out)[n++] = strdup(p + tlen + 1)))
			return nomem(err);
	}
	return 0;
}

/* Drops a stopped sandbox's checkpoint (see SB_COPY_DISCARD_MEMORY). */
static int discard_memory(struct box *x, struct sb_root *root, struct sb_copy_result *res, struct sb_error *err)
{
	sb_fs_remove_tree(x->b.checkpoint_used, NULL);
	if (rename(x->b.checkpoint, x->b.checkpoint_used) < 0)
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot drop the checkpoint of sandbox '%s'"), x->b.rec.name);
	res->memory_discarded = 1;
	return sb_record_transition(root, &x->b.rec, SB_STATE_STOPPED,
				    _("stopped; files were copied into its disk, so its memory was dropped: restore "
				      "cold-starts it"), err);
}

/* May a host-side write go to node n's tree? */
static int writable(struct box *x, struct sb_root *root, const struct sb_vnode *n, const struct sb_copy_opts *opts,
		    struct sb_copy_result *res, struct sb_error *err)
{
	const struct sb_view_area *a = sb_view_area_of(n);
	struct stat st;

	if (a)
		return a->rw ? 0 : sb_error_set(err, SB_ERR_STATE, _("'%s' is mounted read-only in sandbox '%s'"), a->path,
						x->b.rec.name);
	char *img = sb_path_join(x->b.checkpoint, "checkpoint.img");
	int warm = img && stat(img, &st) == 0;
	free(img);
	if (!warm)
		return 0;
	if (!opts || !(opts->flags & SB_COPY_DISCARD_MEMORY))
		return sb_error_set(err, SB_ERR_STATE,
				    _("sandbox '%s' is stopped with its memory checkpointed, and a restored sandbox would "
				      "not reliably see files written into its root file system: restore it and copy "
				      "again, copy into /workspace, or drop its memory (--discard-memory)"), x->b.rec.name);
	return discard_memory(x, root, res, err);
}

/* The host-side sink for a planned target. */
static int view_sink(struct sb_xdisk *d, struct box *x, struct sb_root *root, const struct plan *p,
		     const struct sb_copy_opts *opts, struct sb_copy_result *res, struct sb_error *err)
{
	struct sb_vnode n;
	char *guest = NULL;
	int rc = sb_view_resolve(&n, &guest, &x->v, p->dir, 1, err), fd = -1;

	free(guest);
	if (rc == 1)
		rc = sb_error_set(err, SB_ERR_BUSY, _("'%s:%s' changed while it was copied to"), x->b.rec.name, p->dir);
	if (rc == 0 && !S_ISDIR(n.st.st_mode))
		rc = sb_error_set(err, SB_ERR_NOTFOUND, _("'%s:%s' is not a directory"), x->b.rec.name, p->dir);
	if (rc == 0)
		rc = writable(x, root, &n, opts, res, err);
	if (rc == 0 && n.layered)
		rc = sb_view_upper_dir(&fd, &x->v, n.path, err);
	else if (rc == 0 && (fd = fcntl(n.fd, F_DUPFD_CLOEXEC, 0)) < 0)
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot open '%s:%s'"), x->b.rec.name, p->dir);
	char *target = rc == 0 ? (p->merge ? strdup(n.path) : sb_strdupf("%s/%s", strcmp(n.path, "/") ? n.path : "", p->name))
			       : NULL;
	if (rc == 0 && !target)
		rc = nomem(err);
	if (rc == 0 && (rc = sb_xdisk_init(d, fd, p->merge ? target : p->name, p->merge, err)) == 0) {
		fd = -1;
		d->layered = n.layered;
		d->root_owned = 1;
		rc = fences_for(&d->fences, &x->v, target, err);
		if (rc < 0) /* the caller clears only a disk it got */
			sb_xdisk_clear(d);
	}
	if (fd >= 0)
		close(fd);
	free(target);
	sb_vnode_clear(&n);
	return rc;
}

/* Where a copy in goes: the plan, made with what the view (or the guest)
 * says of the destination. *guest is set when the guest writes it. */
static int plan_in(struct plan *p, char **guest, struct box *x, struct sb_root *root, const char *name, int src_dir,
		   const struct spec *src, const struct spec *dst, struct sb_error *err)
{
	char dk = 'm', bk = 'm', pk = 'm', *where = sb_strdupf("%s:", name), *inside = NULL, *parent = NULL;
	int rc = where ? view_kind(&dk, guest, &x->v, dst->path, err) : nomem(err);

	if (rc == 1) {
		struct sb_guest_probe g;
		struct spec gd;
		/* the guest's path: the destination with the symlinks the host met resolved */
		if ((rc = spec_parse(&gd, *guest, err)) == 0 && (rc = sb_guest_probe(&g, root, name, gd.path, src->base, err)) == 0) {
			gd.slash = dst->slash;
			rc = plan_target(p, src_dir, src, &gd, g.dst, g.base, g.parent, where, err);
		}
		spec_clear(&gd);
	} else if (rc == 0) {
		inside = sb_strdupf("%s/%s", strcmp(dst->path, "/") ? dst->path : "", src->base);
		parent = parent_of(dst->path);
		char *g2 = NULL;
		if (!inside || !parent)
			rc = nomem(err);
		/* a symlink there into the running guest's tree: replaced like any other */
		if (rc == 0 && dk == 'd' && src->base[0] && (rc = view_kind(&bk, &g2, &x->v, inside, err)) == 1)
			rc = 0;
		free(g2);
		g2 = NULL;
		if (rc == 0 && dk == 'm' && (rc = view_kind(&pk, &g2, &x->v, parent, err)) == 1) {
			rc = 0;
			pk = 'd';
		}
		free(g2);
		if (rc == 0)
			rc = plan_target(p, src_dir, src, dst, dk, bk, pk == 'd', where, err);
	}
	free(where);
	free(inside);
	free(parent);
	return rc;
}

static int copy_in(struct sb_copy_result *out, struct sb_root *root, const char *host_src, int fd, const char *name,
		   const char *path, const struct sb_copy_opts *opts, struct sb_error *err)
{
	struct sb_copy_result own = { 0 };
	struct sb_copy_result *res = out ? out : &own;
	struct spec src = { 0 }, dst = { 0 };
	struct source s = { .fd = fd, .label = host_src ? host_src : "-" };
	struct sb_xdisk d = { .parent = -1, .top = -1 };
	struct plan p = { 0 };
	struct box x = { 0 };
	char *guest = NULL;
	long long start = sb_clock_monotonic_ms();
	int rc, src_dir = 1, have_disk = 0;

	result_init(res);
	s.node.fd = s.node.lower = -1;
	rc = spec_parse(&dst, path, err);
	if (rc == 0 && host_src)
		rc = spec_parse(&src, host_src, err);
	else if (rc == 0 && !(src.base = strdup("")))
		rc = nomem(err);
	src.contents = src.contents || !host_src;
	if (rc == 0 && path[0] != '/')
		rc = sb_error_set(err, SB_ERR_INVALID, _("'%s:%s': a path inside a sandbox must be absolute"), name, path);
	if (rc == 0 && !((res->src = strdup(s.label)) && (res->dst = label(name, dst.path))))
		rc = nomem(err);
	if (rc == 0 && host_src && (rc = sb_vnode_host(&s.node, src.path, err)) == 0) {
		src_dir = S_ISDIR(s.node.st.st_mode);
		if (src_dir && !(opts && (opts->flags & SB_COPY_RECURSIVE)))
			rc = sb_error_set(err, SB_ERR_INVALID, _("'%s' is a directory: copy it with -r"), host_src);
		else if (src.slash && !src_dir)
			rc = sb_error_set(err, SB_ERR_NOTFOUND, _("'%s' is not a directory"), host_src);
	}
	if (rc == 0)
		rc = box_open(&x, root, name, 1, err);
	if (rc == 0)
		rc = plan_in(&p, &guest, &x, root, name, src_dir, &src, &dst, err);
	if (rc == 0 && !host_src && !p.merge)
		rc = sb_error_set(err, SB_ERR_NOTFOUND, _("'%s:%s' is not a directory: a tar stream is extracted into one"),
				  name, dst.path);
	sb_xmeter_init(&s.meter, NULL, res, opts ? opts->max_bytes : 0, s.label);
	if (rc == 0 && guest) {
		res->route = SB_COPY_GUEST;
		rc = sb_guest_copy_in(root, name, p.dir, p.merge ? "" : p.name, p.merge, produce_in, &s, err);
	} else if (rc == 0) {
		res->route = SB_COPY_HOST;
		have_disk = (rc = view_sink(&d, &x, root, &p, opts, res, err)) == 0;
		if (rc == 0)
			d.label = res->dst;
		if (rc == 0)
			rc = produce_in(&s, &d.sink, err);
		if (rc == 0)
			rc = sb_xdisk_finish(&d, err);
	}
	if (rc < 0 && p.merge && (res->files || res->dirs))
		sb_error_wrap(err, _("the copy into '%s' stopped half-way (%llu bytes copied)"), res->dst, res->bytes);
	if (have_disk)
		sb_xdisk_clear(&d);
	free(guest);
	plan_clear(&p);
	box_close(&x);
	record_copy(root, name, res, 0, rc, err, start);
	sb_vnode_clear(&s.node);
	spec_clear(&src);
	spec_clear(&dst);
	if (res == &own)
		sb_copy_result_clear(&own);
	return rc;
}

int sb_sandbox_copy_in(struct sb_copy_result *out, struct sb_root *root, const char *host_src, const char *name,
		       const char *path, const struct sb_copy_opts *opts, struct sb_error *err)
{
	if (!host_src || !*host_src)
		return sb_error_set(err, SB_ERR_INVALID, _("no host path to copy to '%s:%s'"), name, path);
	return copy_in(out, root, host_src, -1, name, path, opts, err);
}

int sb_sandbox_copy_in_tar(struct sb_copy_result *out, struct sb_root *root, int fd, const char *name,
			   const char *path, const struct sb_copy_opts *opts, struct sb_error *err)
{
	return copy_in(out, root, NULL, fd, name, path, opts, err);
}
