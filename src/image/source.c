#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/archive_dl.h"
#include "image/blob_store.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "image/manifest.h"
#include "internal.h"

#define COPY_BUF (1 << 16)
#define MAX_LINK_HOPS 8

/* Top-level files of image archives, kept in memory rather than as blobs. */
static const char *const meta_files[] = { "oci-layout", "index.json", "manifest.json", "repositories" };

struct sb_image_source {
	struct sb_root *root;
	char *path;
	int is_dir;
	enum sb_image_source_kind kind;
	const struct sb_progress *progress;
	json_t *files;   /* archive: entry path -> digest of its content in the store */
	json_t *links;   /* archive: entry path -> path it links to */
	json_t *meta;    /* archive: meta file -> its text */
};

static int is_meta(const char *name)
{
	for (size_t i = 0; i < sizeof(meta_files) / sizeof(meta_files[0]); i++)
		if (!strcmp(name, meta_files[i]))
			return 1;
	return 0;
}

/* Resolves "." and ".." and drops leading "/" and "./": archive paths and
 * link targets compare equal however they were spelt. In place. */
static void normalize(char *p)
{
	char *out = p, *in = p;

	while (*in) {
		size_t n;
		while (*in == '/')
			in++;
		n = strcspn(in, "/");
		if (n == 0)
			break;
		if (n == 1 && in[0] == '.') {
			in += n;
			continue;
		}
		if (n == 2 && in[0] == '.' && in[1] == '.') {
			while (out > p && out[-1] != '/')
				out--;
			if (out > p)
				out--;
			in += n;
			continue;
		}
		if (out > p)
			*out++ = '/';
		memmove(out, in, n);
		out += n;
		in += n;
	}
	*out = '\0';
}

static int safe_name(const char *name)
{
	if (name[0] == '/')
		return 0;
	for (const char *c = name; *c;) {
		size_t n = strcspn(c, "/");
		if (n == 2 && c[0] == '.' && c[1] == '.')
			return 0;
		c += n;
		c += *c == '/';
	}
	return 1;
}

/* Could this first path component belong to an OCI or docker-save archive? */
static int archive_component(const char *path)
{
	size_t n = strcspn(path, "/");
	size_t hex = strspn(path, "0123456789abcdef");

	if (path[n] == '\0' && is_meta(path))
		return 1;
	if (n == 5 && !strncmp(path, "blobs", 5))
		return 1;
	return hex >= SB_DIGEST_HEX_LEN && (hex == n || path[hex] == '.');
}

static int open_archive(struct archive **out, const char *path, struct sb_error *err)
{
	struct archive *a = archive_read_new();

	*out = NULL;
	if (!a)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	archive_read_support_filter_all(a);
	archive_read_support_format_tar(a);
	if (archive_read_open_filename(a, path, COPY_BUF) != ARCHIVE_OK) {
		int rc = sb_error_set(err, SB_ERR_FORMAT, _("cannot read '%s': %s"), path, archive_error_string(a));
		archive_read_free(a);
		return rc;
	}
	*out = a;
	return 0;
}

static int archive_fail(struct archive *a, const char *path, struct sb_error *err)
{
	int errnum = archive_errno(a);

	if (errnum == ENOSPC || errnum == ENOMEM)
		return sb_error_errno(err, SB_ERR_IO, errnum, _("cannot read '%s'"), path);
	return sb_error_set(err, SB_ERR_FORMAT, _("'%s' is not a readable tar archive: %s"), path,
			    archive_error_string(a) ? archive_error_string(a) : _("unknown error"));
}

/* Headers only: is this an image archive, and which kind? Stops at the first
 * entry no image archive has (a rootfs tar is never read to its end here). */
static int classify_archive(enum sb_image_source_kind *kind, const char *path, struct sb_error *err)
{
	int has_layout = 0, has_index = 0, has_manifest = 0, r, rc = 0;
	struct archive_entry *e;
	struct archive *a;

	if ((rc = open_archive(&a, path, err)) < 0)
		return rc;
	*kind = SB_SOURCE_ROOTFS;
	while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK || r == ARCHIVE_WARN) {
		char *name = strdup(archive_entry_pathname(e) ? archive_entry_pathname(e) : "");
		if (!name) {
			rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
			break;
		}
		normalize(name);
		has_layout |= !strcmp(name, "oci-layout");
		has_index |= !strcmp(name, "index.json");
		has_manifest |= !strcmp(name, "manifest.json");
		r = name[0] && !archive_component(name);
		free(name);
		if (r)
			goto out;
	}
	if (rc == 0 && r != ARCHIVE_EOF)
		rc = archive_fail(a, path, err);
	if (has_layout && has_index)
		*kind = SB_SOURCE_OCI;
	else if (has_manifest)
		*kind = SB_SOURCE_DOCKER;
out:
	archive_read_free(a);
	return rc;
}

static void emit(const struct sb_progress *p, const char *item, unsigned long long done, unsigned long long total)
{
	struct sb_progress_event ev = { .phase = SB_PROGRESS_VERIFY, .item = item, .done = done, .total = total };

	sb_progress_emit(p, &ev);
}

/* Copies the current entry's data into a blob writer. */
static int store_entry(char digest[SB_DIGEST_STR_LEN], struct sb_image_source *src, struct archive *a,
		       const char *name, const char *expected, unsigned long long total, struct sb_error *err)
{
	struct sb_blob_writer *w;
	char *buf = malloc(COPY_BUF);
	la_ssize_t n;
	int rc;

	if (!buf)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	if ((rc = sb_blob_writer_open(&w, src->root, expected, err)) < 0) {
		free(buf);
		return rc;
	}
	if (sb_blob_writer_offset(w) > 0)
		rc = sb_blob_writer_restart(w, err);
	while (rc == 0 && (n = archive_read_data(a, buf, COPY_BUF)) != 0) {
		if (n < 0) {
			rc = archive_fail(a, src->path, err);
			break;
		}
		rc = sb_blob_writer_write(w, buf, (size_t)n, err);
		emit(src->progress, src->path, (unsigned long long)archive_filter_bytes(a, -1), total);
	}
	if (rc == 0 && (rc = sb_blob_writer_commit(digest, w, err)) < 0)
		sb_error_wrap(err, _("'%s' in '%s'"), name, src->path);
	sb_blob_writer_free(w);
	free(buf);
	return rc;
}

/* Indexes an entry: name -> value (taken over). Entry names and meta texts are
 * bytes to the index, looked up and parsed later but never dumped, so jansson
 * need not check that they are UTF-8, and only memory can run out here. */
static int index_put(json_t *index, const char *name, json_t *value, struct sb_error *err)
{
	if (json_object_set_new_nocheck(index, name, value) < 0)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	return 0;
}

static int read_meta_entry(struct sb_image_source *src, struct archive *a, const char *name, la_int64_t size,
			   struct sb_error *err)
{
	char *text;
	la_ssize_t n;

	if (size < 0 || size > SB_MANIFEST_MAX)
		return sb_error_set(err, SB_ERR_LIMIT, _("'%s' in '%s' is too large"), name, src->path);
	if (!(text = calloc(1, (size_t)size + 1)))
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	n = size ? archive_read_data(a, text, (size_t)size) : 0;
	if (n != size) {
		free(text);
		return n < 0 ? archive_fail(a, src->path, err)
			     : sb_error_set(err, SB_ERR_FORMAT, _("'%s' in '%s' is truncated"), name, src->path);
	}
	int rc = index_put(src->meta, name, json_stringn_nocheck(text, (size_t)size), err);
	free(text);
	return rc;
}

/* "blobs/sha256/<hex>" names its own digest. */
static int named_digest(char out[SB_DIGEST_STR_LEN], const char *name)
{
	if (strncmp(name, "blobs/sha256/", 13) != 0)
		return 0;
	snprintf(out, SB_DIGEST_STR_LEN, "sha256:%s", name + 13);
	return sb_digest_valid(out);
}

static int ingest_entry(struct sb_image_source *src, struct archive *a, struct archive_entry *e, char *name,
			unsigned long long total, struct sb_error *err)
{
	char expected[SB_DIGEST_STR_LEN], digest[SB_DIGEST_STR_LEN];
	const char *target;
	int named;

	if ((target = archive_entry_hardlink(e)) != NULL || archive_entry_filetype(e) == AE_IFLNK) {
		char *t;
		if (target || ((target = archive_entry_symlink(e)) && target[0] == '/'))
			t = strdup(target);
		else
			t = sb_strdupf("%s/../%s", name, target ? target : "");
		if (!t)
			return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		normalize(t);
		int rc = index_put(src->links, name, json_string_nocheck(t), err);
		free(t);
		return rc;
	}
	if (archive_entry_filetype(e) != AE_IFREG)
		return 0;
	if (is_meta(name))
		return read_meta_entry(src, a, name, archive_entry_size(e), err);
	named = named_digest(expected, name);
	if (named && sb_blob_exists(src->root, expected))
		return index_put(src->files, name, json_string(expected), err);
	int rc = store_entry(digest, src, a, name, named ? expected : NULL, total, err);
	return rc < 0 ? rc : index_put(src->files, name, json_string(digest), err);
}

static int ingest_archive(struct sb_image_source *src, struct sb_error *err)
{
	struct archive_entry *e;
	struct archive *a;
	struct stat st;
	int r, rc;

	if ((rc = open_archive(&a, src->path, err)) < 0)
		return rc;
	if (stat(src->path, &st) < 0)
		st.st_size = 0;
	while (rc == 0 && ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK || r == ARCHIVE_WARN)) {
		char *name = strdup(archive_entry_pathname(e) ? archive_entry_pathname(e) : "");
		if (!name) {
			rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
			break;
		}
		normalize(name);
		if (name[0])
			rc = ingest_entry(src, a, e, name, (unsigned long long)st.st_size, err);
		free(name);
	}
	if (rc == 0 && r != ARCHIVE_EOF)
		rc = archive_fail(a, src->path, err);
	archive_read_free(a);
	return rc;
}

static int dir_has(const char *dir, const char *name)
{
	char *p = sb_path_join(dir, name);
	struct stat st;
	int ok = p && stat(p, &st) == 0 && S_ISREG(st.st_mode);

	free(p);
	return ok;
}

int sb_image_source_open(struct sb_image_source **out, struct sb_root *root, const char *path,
			 const struct sb_progress *progress, struct sb_error *err)
{
	struct sb_image_source *src;
	struct stat st;
	int rc = 0;

	*out = NULL;
	if ((rc = sb_archive_load(err)) < 0)
		return rc;
	if (stat(path, &st) < 0)
		return sb_error_errno(err, errno == ENOENT ? SB_ERR_NOTFOUND : SB_ERR_IO, errno, _("cannot open '%s'"),
				      path);
	if (!(src = calloc(1, sizeof(*src))))
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	src->root = root;
	src->progress = progress;
	src->is_dir = S_ISDIR(st.st_mode);
	src->path = strdup(path);
	src->files = json_object();
	src->links = json_object();
	src->meta = json_object();
	if (!src->path || !src->files || !src->links || !src->meta) {
		rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	} else if (src->is_dir) {
		if (dir_has(path, "oci-layout") && dir_has(path, "index.json"))
			src->kind = SB_SOURCE_OCI;
		else if (dir_has(path, "manifest.json"))
			src->kind = SB_SOURCE_DOCKER;
		else
			rc = sb_error_set(err, SB_ERR_FORMAT,
					  _("'%s' is neither an OCI image layout nor an unpacked docker save"), path);
	} else if (!S_ISREG(st.st_mode)) {
		rc = sb_error_set(err, SB_ERR_INVALID, _("'%s' is not a file or directory"), path);
	} else if ((rc = classify_archive(&src->kind, path, err)) == 0 && src->kind != SB_SOURCE_ROOTFS) {
		rc = ingest_archive(src, err);
	}
	if (rc < 0) {
		sb_image_source_close(src);
		return rc;
	}
	*out = src;
	return 0;
}

void sb_image_source_close(struct sb_image_source *src)
{
	if (!src)
		return;
	free(src->path);
	json_decref(src->files);
	json_decref(src->links);
	json_decref(src->meta);
	free(src);
}

enum sb_image_source_kind sb_image_source_kind(const struct sb_image_source *src)
{
	return src->kind;
}

/* An archive entry's name after following links. */
static const char *resolve_link(const struct sb_image_source *src, const char *name)
{
	for (int hops = 0; hops < MAX_LINK_HOPS; hops++) {
		const char *next = json_string_value(json_object_get(src->links, name));
		if (!next)
			return name;
		name = next;
	}
	return name;
}

int sb_image_source_has(const struct sb_image_source *src, const char *name)
{
	if (src->is_dir)
		return safe_name(name) && dir_has(src->path, name);
	name = resolve_link(src, name);
	return json_object_get(src->meta, name) || json_object_get(src->files, name);
}

int sb_image_source_read(char **out, size_t *len, struct sb_image_source *src, const char *name, struct sb_error *err)
{
	const char *digest;
	json_t *text;
	char *path;
	int rc;

	*out = NULL;
	if (!safe_name(name))
		return sb_error_set(err, SB_ERR_UNSAFE, _("'%s' names a file outside '%s'"), name, src->path);
	if (src->is_dir) {
		if (!(path = sb_path_join(src->path, name)))
			return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		rc = sb_fs_read_file(out, len, path, SB_MANIFEST_MAX, err);
		free(path);
		return rc;
	}
	name = resolve_link(src, name);
	if ((text = json_object_get(src->meta, name)) != NULL) {
		*len = json_string_length(text);
		if (!(*out = malloc(*len + 1)))
			return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		memcpy(*out, json_string_value(text), *len + 1);
		return 0;
	}
	if (!(digest = json_string_value(json_object_get(src->files, name))))
		return sb_error_set(err, SB_ERR_NOTFOUND, _("'%s' has no file '%s'"), src->path, name);
	return sb_blob_get(out, len, src->root, digest, SB_MANIFEST_MAX, err);
}

static int blob_size(unsigned long long *size, struct sb_root *root, const char *digest, struct sb_error *err)
{
	char *path = sb_blob_path(root, digest);
	struct stat st;
	int rc = 0;

	if (!path)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	if (stat(path, &st) < 0)
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot inspect '%s'"), path);
	else if (size)
		*size = (unsigned long long)st.st_size;
	free(path);
	return rc;
}

int sb_image_source_blob(char digest[SB_DIGEST_STR_LEN], unsigned long long *size, struct sb_image_source *src,
			 const char *name, const char *expected, struct sb_error *err)
{
	char got[SB_DIGEST_STR_LEN];
	const char *stored;
	char *path;
	int rc;

	if (!safe_name(name))
		return sb_error_set(err, SB_ERR_UNSAFE, _("'%s' names a file outside '%s'"), name, src->path);
	if (src->is_dir) {
		if (!(path = sb_path_join(src->path, name)))
			return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		rc = sb_image_store_file(got, size, src->root, path, expected, src->progress, err);
		free(path);
	} else {
		name = resolve_link(src, name);
		if (!(stored = json_string_value(json_object_get(src->files, name))))
			return sb_error_set(err, SB_ERR_NOTFOUND, _("'%s' has no file '%s'"), src->path, name);
		if (expected && strcmp(stored, expected) != 0)
			return sb_error_set(err, SB_ERR_DIGEST, _("'%s' in '%s' is %s, not %s as its manifest says"),
					    name, src->path, stored, expected);
		snprintf(got, sizeof(got), "%s", stored);
		rc = blob_size(size, src->root, got, err);
	}
	if (rc == 0 && digest)
		memcpy(digest, got, SB_DIGEST_STR_LEN);
	return rc;
}

int sb_image_store_file(char digest[SB_DIGEST_STR_LEN], unsigned long long *size, struct sb_root *root,
			const char *path, const char *expected, const struct sb_progress *progress,
			struct sb_error *err)
{
	struct sb_blob_writer *w = NULL;
	unsigned long long done = 0;
	char *buf = NULL;
	struct stat st;
	ssize_t n;
	int fd, rc = 0;

	if (expected && sb_blob_exists(root, expected)) {
		memcpy(digest, expected, SB_DIGEST_STR_LEN);
		return blob_size(size, root, expected, err);
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		rc = sb_error_errno(err, errno == ENOENT ? SB_ERR_NOTFOUND : SB_ERR_IO, errno, _("cannot open '%s'"),
				    path);
		goto out;
	}
	if (!(buf = malloc(COPY_BUF))) {
		rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		goto out;
	}
	if ((rc = sb_blob_writer_open(&w, root, expected, err)) < 0 ||
	    (sb_blob_writer_offset(w) > 0 && (rc = sb_blob_writer_restart(w, err)) < 0))
		goto out;
	while ((n = read(fd, buf, COPY_BUF)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot read '%s'"), path);
			goto out;
		}
		if ((rc = sb_blob_writer_write(w, buf, (size_t)n, err)) < 0)
			goto out;
		done += (unsigned long long)n;
		emit(progress, expected ? expected : path, done, (unsigned long long)st.st_size);
	}
	if ((rc = sb_blob_writer_commit(digest, w, err)) < 0)
		sb_error_wrap(err, "'%s'", path);
	else if (size)
		*size = done;
out:
	sb_blob_writer_free(w);
	free(buf);
	if (fd >= 0)
		close(fd);
	return rc;
}
