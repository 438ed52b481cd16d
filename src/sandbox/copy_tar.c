/* cp's tar streams, through the lazily loaded libarchive: a sink that writes
 * one (to a guest's tar or to the caller's fd) and a source that reads one
 * (from a guest's tar or the caller). What a stream names is untrusted:
 * every name is cleaned, and one that leads out ("..") is refused. */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"
#include "base/archive_dl.h"
#include "base/fs.h"
#include "base/i18n.h"

#define CHUNK (256 * 1024)
#define NAME_MAX_LEN 4095

struct sb_xtar_out {
	struct sb_xsink sink;
	struct archive *a;
	struct archive_entry *e;
	char *prefix;
	int root_owned;
	int (*write)(void *arg, const void *buf, size_t len, struct sb_error *err);
	void *write_arg;
	struct sb_error write_err;       /* why write refused the stream */
	int write_failed;
};

static int archive_fail(struct sb_error *err, struct archive *a, int code, const char *what)
{
	const char *msg = a ? archive_error_string(a) : NULL;

	return sb_error_set(err, code, "%s: %s", what, msg ? msg : _("unknown archive error"));
}

/* prefix/path, prefix alone for the top; "." when both are empty */
static char *out_name(const struct sb_xtar_out *t, const char *path)
{
	if (!t->prefix[0])
		return strdup(path[0] ? path : ".");
	return path[0] ? sb_strdupf("%s/%s", t->prefix, path) : strdup(t->prefix);
}

/* The writer's own error when it refused the stream, libarchive's otherwise. */
static int tar_fail(struct sb_xtar_out *t, struct sb_error *err)
{
	if (!t->write_failed)
		return archive_fail(err, t->a, SB_ERR_IO, _("cannot write the tar stream"));
	if (err)
		*err = t->write_err;
	return t->write_err.code;
}

static int out_begin(struct sb_xsink *s, const struct sb_xentry *x, struct sb_error *err)
{
	struct sb_xtar_out *t = (struct sb_xtar_out *)s;
	char *name = out_name(t, x->path), *link = x->type == 0 ? out_name(t, x->link) : NULL;

	if (!name || (x->type == 0 && !link)) {
		free(name);
		free(link);
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	archive_entry_clear(t->e);
	archive_entry_copy_pathname(t->e, name);
	archive_entry_set_mode(t->e, (x->type ? x->type : S_IFREG) | x->perm);
	archive_entry_set_uid(t->e, t->root_owned ? 0 : x->uid);
	archive_entry_set_gid(t->e, t->root_owned ? 0 : x->gid);
	archive_entry_set_mtime(t->e, (time_t)x->mtime, 0);
	archive_entry_set_size(t->e, x->type == S_IFREG ? (la_int64_t)x->size : 0);
	if (x->type == S_IFLNK)
		archive_entry_set_symlink(t->e, x->link);
	if (link)
		archive_entry_copy_hardlink(t->e, link);
	for (size_t i = 0; i < x->n_xattrs; i++)
		archive_entry_xattr_add_entry(t->e, x->xattrs[i].name, x->xattrs[i].value, x->xattrs[i].size);
	free(name);
	free(link);
	if (archive_write_header(t->a, t->e) < ARCHIVE_WARN)
		return tar_fail(t, err);
	return x->type == S_IFREG ? 0 : 1;
}

static int out_data(struct sb_xsink *s, const void *buf, size_t len, struct sb_error *err)
{
	struct sb_xtar_out *t = (struct sb_xtar_out *)s;

	while (len > 0) {
		la_ssize_t w = archive_write_data(t->a, buf, len);
		if (w <= 0)
			return tar_fail(t, err);
		buf = (const char *)buf + w;
		len -= (size_t)w;
	}
	return 0;
}

static int out_end(struct sb_xsink *s, struct sb_error *err)
{
	struct sb_xtar_out *t = (struct sb_xtar_out *)s;

	return archive_write_finish_entry(t->a) < ARCHIVE_WARN ? tar_fail(t, err) : 0;
}

static int out_alloc(struct sb_xtar_out **out, const char *prefix, int root_owned, struct sb_error *err)
{
	struct sb_xtar_out *t = calloc(1, sizeof(*t));
	int rc;

	*out = NULL;
	if (!t)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	t->sink = (struct sb_xsink){ out_begin, out_data, out_end };
	t->root_owned = root_owned;
	if ((rc = sb_archive_load(err)) < 0) {
		free(t);
		return rc;
	}
	t->a = archive_write_new();
	t->e = archive_entry_new();
	t->prefix = strdup(prefix);
	if (!t->a || !t->e || !t->prefix) {
		sb_xtar_out_free(t);
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	*out = t;
	return 0;
}

static int out_opened(struct sb_xtar_out **out, struct sb_xtar_out *t, int ok, struct sb_error *err)
{
	if (!ok) {
		int rc = t->write_failed ? tar_fail(t, err) : archive_fail(err, t->a, SB_ERR_IO, _("cannot start the tar stream"));
		sb_xtar_out_free(t);
		*out = NULL;
		return rc;
	}
	*out = t;
	return 0;
}

int sb_xtar_out_new(struct sb_xtar_out **out, int fd, const char *prefix, int gnu, int root_owned,
		    struct sb_error *err)
{
	struct sb_xtar_out *t;
	int rc = out_alloc(&t, prefix, root_owned, err);

	if (rc < 0)
		return rc;
	/* GNU long names for a guest's tar (busybox reads those), pax otherwise */
	return out_opened(out, t,
			  (gnu ? archive_write_set_format_gnutar(t->a) : archive_write_set_format_pax_restricted(t->a)) >=
					  ARCHIVE_OK &&
				  archive_write_open_fd(t->a, fd) >= ARCHIVE_OK,
			  err);
}

static la_ssize_t writer_out(struct archive *a, void *client, const void *buf, size_t len)
{
	struct sb_xtar_out *t = client;

	(void)a;
	if (t->write(t->write_arg, buf, len, &t->write_err) < 0) {
		t->write_failed = 1;
		return -1;
	}
	return (la_ssize_t)len;
}

int sb_xtar_out_new_writer(struct sb_xtar_out **out, int (*write)(void *arg, const void *buf, size_t len,
								  struct sb_error *err),
			   void *arg, struct sb_error *err)
{
	struct sb_xtar_out *t;
	int rc = out_alloc(&t, "", 0, err);

	if (rc < 0)
		return rc;
	t->write = write;
	t->write_arg = arg;
	return out_opened(out, t,
			  archive_write_set_format_pax_restricted(t->a) >= ARCHIVE_OK &&
				  archive_write_open(t->a, t, NULL, writer_out, NULL) >= ARCHIVE_OK,
			  err);
}

struct sb_xsink *sb_xtar_out_sink(struct sb_xtar_out *t)
{
	return &t->sink;
}

int sb_xtar_out_close(struct sb_xtar_out *t, struct sb_error *err)
{
	return archive_write_close(t->a) < ARCHIVE_WARN ? tar_fail(t, err) : 0;
}

void sb_xtar_out_free(struct sb_xtar_out *t)
{
	if (!t)
		return;
	if (t->a)
		archive_write_free(t->a);
	if (t->e)
		archive_entry_free(t->e);
	free(t->prefix);
	free(t);
}

/* The components of an archive name, "." and empty ones dropped, joined
 * again into out; *ncomp how many. -1 for a ".." or an overlong name. */
static int clean_name(char *out, size_t *ncomp, const char *name)
{
	size_t n = 0, len = 0;

	out[0] = '\0';
	for (const char *p = name; *p;) {
		size_t l = strcspn(p, "/");
		if (l == 2 && !strncmp(p, "..", 2))
			return -1;
		if (l && !(l == 1 && p[0] == '.')) {
			if (len + l + 2 > NAME_MAX_LEN)
				return -1;
			if (n++)
				out[len++] = '/';
			memcpy(out + len, p, l);
			len += l;
			out[len] = '\0';
		}
		p += l;
		p += strspn(p, "/");
	}
	*ncomp = n;
	return 0;
}

struct reader {
	struct sb_xsink *s;
	struct archive *a;
	int strip_top, have_top;
	char top[NAME_MAX_LEN + 1];
	size_t top_len;
	char name[NAME_MAX_LEN + 1], link[NAME_MAX_LEN + 1];
	const char *label;
};

/* raw, cleaned and (strip_top) made relative to the top into out */
static int map_name(struct reader *r, char *out, const char *raw, int first, struct sb_error *err)
{
	size_t n;

	if (clean_name(out, &n, raw) < 0)
		return sb_error_set(err, SB_ERR_UNSAFE, _("the tar stream of '%s' has an entry that leads out: '%s'"), r->label,
				    raw);
	if (!r->strip_top)
		return 0;
	if (first) {
		if (n > 1)
			return sb_error_set(err, SB_ERR_FORMAT, _("the tar stream of '%s' does not start with its top: '%s'"),
					    r->label, raw);
		r->top_len = strlen(out);
		memcpy(r->top, out, r->top_len + 1);
		out[0] = '\0';
		return 0;
	}
	if (r->top_len && (strncmp(out, r->top, r->top_len) || (out[r->top_len] && out[r->top_len] != '/')))
		return sb_error_set(err, SB_ERR_FORMAT, _("the tar stream of '%s' has an entry outside its top: '%s'"), r->label,
				    raw);
	size_t skip = r->top_len ? r->top_len + (out[r->top_len] == '/') : 0;
	memmove(out, out + skip, strlen(out + skip) + 1);
	return 0;
}

static int read_entry(struct reader *r, struct archive_entry *ae, char *buf, struct sb_error *err)
{
	const char *hard = archive_entry_hardlink(ae), *sym = archive_entry_symlink(ae);
	int first = !r->have_top, rc;

	r->have_top = 1;
	if ((rc = map_name(r, r->name, archive_entry_pathname(ae) ? archive_entry_pathname(ae) : "", first, err)) < 0 ||
	    (hard && (rc = map_name(r, r->link, hard, 0, err)) < 0))
		return rc;
	/* the top once more (a guest's "./" then "."): already given */
	if (!first && r->strip_top && !r->name[0])
		return 0;
	mode_t mode = archive_entry_mode(ae);
	struct sb_xentry e = {
		.path = r->name, .type = hard ? 0 : mode & S_IFMT, .perm = mode & 07777,
		.mtime = (long long)archive_entry_mtime(ae), .size = hard ? 0 : (unsigned long long)archive_entry_size(ae),
		.link = hard ? r->link : sym,
	};
	if (e.type == S_IFLNK && !sym)
		return sb_error_set(err, SB_ERR_FORMAT, _("the tar stream of '%s' has a symbolic link without a target"), r->label);
	if ((rc = r->s->begin(r->s, &e, err)) != 0)
		return rc < 0 ? rc : 0;
	for (;;) {
		la_ssize_t n = archive_read_data(r->a, buf, CHUNK);
		if (n < 0)
			return archive_fail(err, r->a, SB_ERR_FORMAT, _("cannot read the tar stream"));
		if (n == 0)
			break;
		if ((rc = r->s->data(r->s, buf, (size_t)n, err)) < 0)
			return rc;
	}
	return r->s->end(r->s, err);
}

int sb_xtar_read(struct sb_xsink *s, int fd, int strip_top, const char *label, struct sb_error *err)
{
	struct reader *r = calloc(1, sizeof(*r));
	char *buf = malloc(CHUNK);
	struct archive_entry *ae;
	int rc = r && buf ? sb_archive_load(err) : sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));

	if (rc == 0) {
		*r = (struct reader){ .s = s, .strip_top = strip_top, .label = label };
		if (!(r->a = archive_read_new()))
			rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	if (rc == 0 && (archive_read_support_format_tar(r->a) < ARCHIVE_OK ||
			archive_read_support_filter_gzip(r->a) < ARCHIVE_WARN ||
			archive_read_support_filter_zstd(r->a) < ARCHIVE_WARN || archive_read_open_fd(r->a, fd, CHUNK) < ARCHIVE_OK))
		rc = archive_fail(err, r->a, SB_ERR_FORMAT, _("cannot read the tar stream"));
	while (rc == 0) {
		int h = archive_read_next_header(r->a, &ae);
		if (h == ARCHIVE_EOF)
			break;
		if (h < ARCHIVE_WARN)
			rc = archive_fail(err, r->a, SB_ERR_FORMAT, _("cannot read the tar stream"));
		else
			rc = read_entry(r, ae, buf, err);
	}
	if (rc == 0 && !r->have_top && strip_top)
		rc = sb_error_set(err, SB_ERR_FORMAT, _("the tar stream of '%s' is empty"), label);
	if (r && r->a)
		archive_read_free(r->a);
	free(r);
	free(buf);
	return rc;
}
