#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/archive_dl.h"
#include "base/clock.h"
#include "base/fs.h"
#include "internal.h"
#include "base/i18n.h"
#include "base/log.h"

#define READ_BLOCK (128 * 1024)
#define PROGRESS_MIN_BYTES (1ULL << 20)
#define PROGRESS_MIN_MS 100

#define WHITEOUT ".wh."
#define OPAQUE ".wh..wh..opq"
#define AUFS_META ".wh..wh."

/* Bits kept per path in the set of what this layer wrote. */
enum { WROTE_DIR = 1 };  /* a directory, or the parent of something written */

/* Every SECURE_* check stays on even though paths arrive resolved: they are
 * the second line of defence. No lookup function is installed, so owners are
 * the numeric ids of the archive, never names mapped through the host's passwd. */
static const int extract_flags = ARCHIVE_EXTRACT_PERM | ARCHIVE_EXTRACT_OWNER |
	ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_XATTR | ARCHIVE_EXTRACT_UNLINK |
	ARCHIVE_EXTRACT_SECURE_NODOTDOT | ARCHIVE_EXTRACT_SECURE_NOABSOLUTEPATHS |
	ARCHIVE_EXTRACT_SECURE_SYMLINKS;

static const struct compression {
	const char *name;
	unsigned char magic[6];
	size_t len;
	int (*enable)(struct archive *);  /* NULL: recognised but refused */
	int own_thread;                   /* inflated by gunzip.h beside the extraction */
} compressions[] = {
	{ "gzip", { 0x1f, 0x8b }, 2, archive_read_support_filter_gzip, 1 },
	{ "zstd", { 0x28, 0xb5, 0x2f, 0xfd }, 4, archive_read_support_filter_zstd },
	{ "bzip2", { 'B', 'Z', 'h' }, 3, NULL },
	{ "xz", { 0xfd, '7', 'z', 'X', 'Z', 0 }, 6, NULL },
	{ "lz4", { 0x04, 0x22, 0x4d, 0x18 }, 4, NULL },
	{ "lzip", { 'L', 'Z', 'I', 'P' }, 4, NULL },
	{ "compress", { 0x1f, 0x9d }, 2, NULL },
};

/* xattr namespaces an image may set: trusted.* (overlayfs keeps its own
 * state there) and the rest stay out of the host's filesystem. */
static const char *const xattr_allowed[] = { "user.", "security.capability" };

struct unpacker {
	int root_fd;
	const char *layer;
	struct archive *in, *out;
	struct sb_gunzip *gunzip;       /* gzip layers: the inflating thread */
	int tar_fd;                     /* ... and the plain tar it produces */
	struct sb_pathset *written;
	unsigned long long max_bytes, max_entries, bytes, entries;
	const struct sb_progress *progress;
	struct sb_progress_event ev;
	unsigned long long last_done;
	long long last_ms;
	struct sb_error *err;
	/* the last parent resolved: consecutive entries share it */
	int cache_ok;
	char cache_raw[PATH_MAX], cache_res[PATH_MAX];
	char name[PATH_MAX];    /* cleaned entry name */
	char target[PATH_MAX];  /* where it goes, resolved */
	char link[PATH_MAX];    /* hardlink target, resolved */
	char parent[PATH_MAX];  /* parent of a name being resolved */
	char scratch[PATH_MAX];
};

static void progress_tick(struct unpacker *u, int final)
{
	unsigned long long done;
	long long now;

	if (!u->progress || !u->progress->fn)
		return;
	done = final ? u->ev.total
		     : u->gunzip ? sb_gunzip_consumed(u->gunzip) : (unsigned long long)archive_filter_bytes(u->in, -1);
	now = sb_clock_monotonic_ms();
	if (!final && (done - u->last_done < PROGRESS_MIN_BYTES || now - u->last_ms < PROGRESS_MIN_MS))
		return;
	u->last_done = done;
	u->last_ms = now;
	u->ev.done = done;
	sb_progress_emit(u->progress, &u->ev);
}

static int nomem(struct unpacker *u)
{
	return sb_error_set(u->err, SB_ERR_NOMEM, _("out of memory"));
}

static int write_failed(struct unpacker *u, const char *what)
{
	int e = archive_errno(u->out);

	if (e > 0)
		return sb_error_errno(u->err, SB_ERR_IO, e, _("layer '%s': cannot extract '%s': %s"),
				      u->layer, what, archive_error_string(u->out));
	return sb_error_set(u->err, SB_ERR_IO, _("layer '%s': cannot extract '%s': %s"),
			    u->layer, what, archive_error_string(u->out));
}

static int read_failed(struct unpacker *u, const char *what)
{
	return sb_error_set(u->err, SB_ERR_FORMAT, _("layer '%s' is corrupt at '%s': %s"), u->layer,
			    what, archive_error_string(u->in));
}

static int resolve_parent(struct unpacker *u, char *out, const char *parent)
{
	int rc;

	if (u->cache_ok && !strcmp(parent, u->cache_raw)) {
		strcpy(out, u->cache_res);
		return 0;
	}
	rc = sb_unpack_resolve(out, u->root_fd, parent, u->err);
	if (rc < 0) {
		sb_error_wrap(u->err, _("layer '%s': entry '%s'"), u->layer, u->name);
		return rc;
	}
	strcpy(u->cache_raw, parent);
	strcpy(u->cache_res, out);
	u->cache_ok = 1;
	return 0;
}

/* out = resolve(parent of name) + "/" + basename(name); name is cleaned. */
static int resolve_entry(struct unpacker *u, char *out, const char *name)
{
	const char *slash = strrchr(name, '/');
	const char *base = slash ? slash + 1 : name;
	size_t pl = slash ? (size_t)(slash - name) : 0;
	int rc;

	memcpy(u->parent, name, pl);
	u->parent[pl] = '\0';
	rc = resolve_parent(u, out, u->parent);
	if (rc < 0)
		return rc;
	size_t n = strlen(out), bl = strlen(base);
	if (n + 1 + bl >= PATH_MAX)
		return sb_error_set(u->err, SB_ERR_UNSAFE, _("layer '%s': entry '%s' is too long inside the root"),
				    u->layer, u->name);
	if (n > 0)
		out[n++] = '/';
	memcpy(out + n, base, bl + 1);
	return 0;
}

/* Records path and its parents as written by this layer. */
static int mark_written(struct unpacker *u, const char *path, unsigned flags)
{
	size_t n = strlen(path);
	int rc = sb_pathset_add(u->written, path, n, flags);

	while (rc >= 0) {
		while (n > 0 && path[n - 1] != '/')
			n--;
		if (n == 0)
			break;
		n--;
		rc = sb_pathset_add(u->written, path, n, WROTE_DIR);
		if (rc == 0)
			break; /* present: its parents are too */
	}
	return rc < 0 ? nomem(u) : 0;
}

static int remove_path(struct unpacker *u, const char *path)
{
	struct stat st;
	int rc;

	u->cache_ok = 0;
	if (fstatat(u->root_fd, path, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		return sb_error_errno(u->err, SB_ERR_IO, errno, _("layer '%s': cannot inspect '%s'"), u->layer, path);
	}
	if ((rc = sb_fs_remove_tree_at(u->root_fd, path, u->err)) < 0)
		sb_error_wrap(u->err, _("layer '%s': entry '%s'"), u->layer, u->name);
	return rc;
}

/* Removes everything below the directory dfd (at path[0..n) in the root)
 * that this layer did not write, descending only into what it wrote. */
static int prune(struct unpacker *u, int dfd, size_t n)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;
	int rc = 0;

	if (!d) {
		close(dfd);
		return sb_error_errno(u->err, SB_ERR_IO, errno, _("layer '%s': cannot list '%s'"), u->layer,
				      n ? u->scratch : "/");
	}
	while (rc == 0 && (de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		size_t len = strlen(de->d_name);
		if (n + 1 + len >= PATH_MAX) {
			rc = sb_error_set(u->err, SB_ERR_UNSAFE, _("layer '%s': path below '%s' is too long"),
					  u->layer, u->scratch);
			break;
		}
		size_t m = n;
		if (m > 0)
			u->scratch[m++] = '/';
		memcpy(u->scratch + m, de->d_name, len + 1);
		m += len;
		int flags = sb_pathset_get(u->written, u->scratch, m);
		if (flags < 0) {
			rc = sb_fs_remove_tree_at(dirfd(d), de->d_name, u->err);
		} else if (flags & WROTE_DIR) {
			int cfd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (cfd >= 0)
				rc = prune(u, cfd, m);
			else if (errno != ENOTDIR && errno != ELOOP) /* replaced by a non-directory */
				rc = sb_error_errno(u->err, SB_ERR_IO, errno, _("layer '%s': cannot open '%s'"),
						    u->layer, u->scratch);
		}
		u->scratch[n] = '\0';
	}
	closedir(d);
	return rc;
}

/* Removes what the layers below left in the directory u->scratch. */
static int hide_lower(struct unpacker *u)
{
	int fd, rc;

	u->cache_ok = 0;
	fd = openat(u->root_fd, *u->scratch ? u->scratch : ".", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT || errno == ENOTDIR || errno == ELOOP)
			return 0; /* nothing below to hide */
		return sb_error_errno(u->err, SB_ERR_IO, errno, _("layer '%s': cannot open '%s'"), u->layer, u->scratch);
	}
	rc = prune(u, fd, strlen(u->scratch));
	if (rc < 0 && u->err && !strstr(u->err->msg, u->layer))
		sb_error_wrap(u->err, _("layer '%s': entry '%s'"), u->layer, u->name);
	return rc;
}

/* ".wh.NAME" hides NAME of the layers below; what this same layer wrote
 * stays (OCI image spec), so a directory it wrote into only loses the
 * lower content. */
static int whiteout(struct unpacker *u, const char *hidden)
{
	if (!*hidden || !strcmp(hidden, ".") || !strcmp(hidden, ".."))
		return sb_error_set(u->err, SB_ERR_UNSAFE, _("layer '%s': invalid whiteout '%s'"), u->layer, u->name);
	int rc = resolve_entry(u, u->target, u->name);
	if (rc < 0)
		return rc;
	/* u->target ends in ".wh.NAME": cut the prefix off the last component */
	char *base = strrchr(u->target, '/');
	base = base ? base + 1 : u->target;
	memmove(base, base + strlen(WHITEOUT), strlen(base + strlen(WHITEOUT)) + 1);
	int flags = sb_pathset_get(u->written, u->target, strlen(u->target));
	if (flags < 0)
		return remove_path(u, u->target);
	if (!(flags & WROTE_DIR))
		return 0;
	strcpy(u->scratch, u->target);
	return hide_lower(u);
}

/* "DIR/.wh..wh..opq" hides what the layers below left in DIR, wherever the
 * marker sits among the layer's entries. */
static int opaque(struct unpacker *u)
{
	const char *slash = strrchr(u->name, '/');
	size_t pl = slash ? (size_t)(slash - u->name) : 0;
	int rc;

	memcpy(u->parent, u->name, pl);
	u->parent[pl] = '\0';
	rc = resolve_parent(u, u->scratch, u->parent);
	return rc < 0 ? rc : hide_lower(u);
}

static int is_aufs_meta(const char *name)
{
	for (const char *p = name; p; p = strchr(p, '/')) {
		if (*p == '/')
			p++;
		if (!strncmp(p, AUFS_META, strlen(AUFS_META)))
			return 1;
	}
	return 0;
}

static int keep_xattr(const char *name)
{
	for (size_t i = 0; i < sizeof(xattr_allowed) / sizeof(xattr_allowed[0]); i++) {
		size_t n = strlen(xattr_allowed[i]);
		if (!strncmp(name, xattr_allowed[i], n) && (xattr_allowed[i][n - 1] == '.' || name[n] == '\0'))
			return 1;
	}
	return 0;
}

static int filter_xattrs(struct unpacker *u, struct archive_entry *e)
{
	const char *name;
	const void *value;
	size_t size;
	int dropped = 0;

	if (archive_entry_xattr_reset(e) == 0)
		return 0;
	while (archive_entry_xattr_next(e, &name, &value, &size) == ARCHIVE_OK)
		dropped += !keep_xattr(name);
	if (!dropped)
		return 0;
	struct archive_entry *kept = archive_entry_new();
	if (!kept)
		return nomem(u);
	archive_entry_xattr_reset(e);
	while (archive_entry_xattr_next(e, &name, &value, &size) == ARCHIVE_OK) {
		if (keep_xattr(name))
			archive_entry_xattr_add_entry(kept, name, value, size);
		else
			sb_log("unpack: %s: %s: dropping xattr %s", u->layer, u->name, name);
	}
	archive_entry_xattr_clear(e);
	archive_entry_xattr_reset(kept);
	while (archive_entry_xattr_next(kept, &name, &value, &size) == ARCHIVE_OK)
		archive_entry_xattr_add_entry(e, name, value, size);
	archive_entry_free(kept);
	return 0;
}

/* Makes room at u->target for an entry of type type: a directory in the way
 * of a non-directory goes (libarchive only removes empty ones). */
static int prepare_target(struct unpacker *u, mode_t type)
{
	struct stat st;

	/* libarchive fixes directory modes and times when the layer ends, by
	 * path: a directory it wrote must not turn into a symlink (or a hardlink
	 * to one) before that, or the fixup would follow it out of the root */
	if (type != AE_IFDIR) {
		int flags = sb_pathset_get(u->written, u->target, strlen(u->target));
		if (flags >= 0 && (flags & WROTE_DIR))
			return sb_error_set(u->err, SB_ERR_UNSAFE,
					    _("layer '%s': entry '%s' replaces a directory of the same layer"),
					    u->layer, u->name);
	}
	if (type == AE_IFLNK)
		u->cache_ok = 0;
	if (fstatat(u->root_fd, u->target, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		return sb_error_errno(u->err, SB_ERR_IO, errno, _("layer '%s': cannot inspect '%s'"), u->layer,
				      u->target);
	}
	if (S_ISDIR(st.st_mode) && type != AE_IFDIR)
		return remove_path(u, u->target);
	if (S_ISLNK(st.st_mode) || (type == AE_IFDIR && !S_ISDIR(st.st_mode)))
		u->cache_ok = 0; /* a resolution through it may change */
	return 0;
}

static int copy_data(struct unpacker *u)
{
	const void *buf;
	size_t size;
	la_int64_t offset;
	int r;

	while ((r = archive_read_data_block(u->in, &buf, &size, &offset)) == ARCHIVE_OK) {
		if (archive_write_data_block(u->out, buf, size, offset) < ARCHIVE_WARN)
			return write_failed(u, u->name);
		progress_tick(u, 0);
	}
	return r == ARCHIVE_EOF ? 0 : read_failed(u, u->name);
}

static int extract(struct unpacker *u, struct archive_entry *e)
{
	mode_t type = archive_entry_filetype(e);
	const char *hardlink = archive_entry_hardlink(e);
	int rc;

	if (type == AE_IFCHR || type == AE_IFBLK) {
		sb_log("unpack: %s: skipping device node %s", u->layer, u->name);
		return 0;
	}
	if (archive_entry_size_is_set(e) && archive_entry_size(e) > 0) {
		u->bytes += (unsigned long long)archive_entry_size(e);
		if (u->bytes > u->max_bytes)
			return sb_error_set(u->err, SB_ERR_LIMIT,
					    _("layer '%s' expands to more than %llu bytes at '%s' (decompression bomb?)"),
					    u->layer, u->max_bytes, u->name);
	}
	if (!*u->name) {
		/* "./": the caller owns the root directory itself */
		if (type != AE_IFDIR || hardlink)
			return sb_error_set(u->err, SB_ERR_UNSAFE, _("layer '%s': the root entry is not a directory"),
					    u->layer);
		return 0;
	}
	if (hardlink) {
		rc = sb_unpack_clean_name(u->link, hardlink, _("hardlink target"), u->err);
		if (rc == 0 && !*u->link)
			rc = sb_error_set(u->err, SB_ERR_UNSAFE, _("hardlink target '%s' is the root"), hardlink);
		if (rc == 0)
			rc = resolve_entry(u, u->scratch, u->link);
		if (rc < 0) {
			sb_error_wrap(u->err, _("layer '%s': entry '%s'"), u->layer, u->name);
			return rc;
		}
		strcpy(u->link, u->scratch);
		type = AE_IFREG;
	}
	rc = resolve_entry(u, u->target, u->name);
	if (rc == 0)
		rc = prepare_target(u, type);
	if (rc == 0)
		rc = filter_xattrs(u, e);
	if (rc < 0)
		return rc;
	archive_entry_copy_pathname(e, u->target);
	if (hardlink)
		archive_entry_copy_hardlink(e, u->link);

	int r = archive_write_header(u->out, e);
	if (r < ARCHIVE_WARN)
		return write_failed(u, u->name);
	if (r == ARCHIVE_WARN)
		sb_log("unpack: %s: %s: %s", u->layer, u->name, archive_error_string(u->out));
	if (archive_entry_size(e) > 0 && (rc = copy_data(u)) < 0)
		return rc;
	r = archive_write_finish_entry(u->out);
	if (r < ARCHIVE_WARN)
		return write_failed(u, u->name);
	if (r == ARCHIVE_WARN)
		sb_log("unpack: %s: %s: %s", u->layer, u->name, archive_error_string(u->out));
	return mark_written(u, u->target, type == AE_IFDIR ? WROTE_DIR : 0);
}

static int handle_entry(struct unpacker *u, struct archive_entry *e)
{
	const char *raw = archive_entry_pathname(e);
	int rc;

	if (!raw)
		return sb_error_set(u->err, SB_ERR_FORMAT, _("layer '%s' has an entry without a name"), u->layer);
	if (++u->entries > u->max_entries)
		return sb_error_set(u->err, SB_ERR_LIMIT, _("layer '%s' has more than %llu entries"), u->layer,
				    u->max_entries);
	rc = sb_unpack_clean_name(u->name, raw, _("entry"), u->err);
	if (rc < 0) {
		sb_error_wrap(u->err, _("layer '%s'"), u->layer);
		return rc;
	}

	const char *base = strrchr(u->name, '/');
	base = base ? base + 1 : u->name;
	if (!strcmp(base, OPAQUE))
		rc = opaque(u);
	else if (is_aufs_meta(u->name))
		rc = 0;
	else if (!strncmp(base, WHITEOUT, strlen(WHITEOUT)))
		rc = whiteout(u, base + strlen(WHITEOUT));
	else
		rc = extract(u, e);
	progress_tick(u, 0);
	return rc;
}

static int open_layer(struct unpacker *u, int fd)
{
	unsigned char magic[6] = { 0 };
	const struct compression *c = NULL;
	ssize_t n = pread(fd, magic, sizeof(magic), 0);

	if (n < 0)
		return sb_error_errno(u->err, SB_ERR_IO, errno, _("cannot read layer '%s'"), u->layer);
	for (size_t i = 0; i < sizeof(compressions) / sizeof(compressions[0]) && !c; i++) {
		if ((size_t)n >= compressions[i].len && !memcmp(magic, compressions[i].magic, compressions[i].len))
			c = &compressions[i];
	}
	if (c && !c->enable)
		return sb_error_set(u->err, SB_ERR_FORMAT,
				    _("layer '%s' is compressed with %s; only gzip, zstd or none are supported"),
				    u->layer, c->name);
	u->in = archive_read_new();
	if (!u->in)
		return nomem(u);
	if (c && c->own_thread) {
		int rc = sb_gunzip_start(&u->gunzip, &u->tar_fd, fd, u->layer, u->err);
		if (rc < 0)
			return rc;
		fd = u->tar_fd;
	} else if (c && c->enable(u->in) != ARCHIVE_OK) {
		return sb_error_set(u->err, SB_ERR_PREREQ, _("libarchive cannot read %s tar archives: %s"), c->name,
				    archive_error_string(u->in));
	}
	if (archive_read_support_format_tar(u->in) != ARCHIVE_OK)
		return sb_error_set(u->err, SB_ERR_PREREQ, _("libarchive cannot read tar archives: %s"),
				    archive_error_string(u->in));
	if (archive_read_open_fd(u->in, fd, READ_BLOCK) != ARCHIVE_OK)
		return sb_error_set(u->err, SB_ERR_FORMAT, _("layer '%s' is not a %s tar archive: %s"), u->layer,
				    c ? c->name : "plain", archive_error_string(u->in));
	return 0;
}

static int unpack_entries(struct unpacker *u)
{
	struct archive_entry *e;
	int r, rc = 0;

	u->out = archive_write_disk_new();
	if (!u->out || archive_write_disk_set_options(u->out, extract_flags) != ARCHIVE_OK)
		return nomem(u);
	while (rc == 0) {
		r = archive_read_next_header(u->in, &e);
		if (r == ARCHIVE_EOF)
			break;
		if (r < ARCHIVE_WARN || r == ARCHIVE_RETRY)
			return sb_error_set(u->err, SB_ERR_FORMAT, _("layer '%s' is corrupt after %llu entries: %s"),
					    u->layer, u->entries, archive_error_string(u->in));
		if (r == ARCHIVE_WARN)
			sb_log("unpack: %s: %s", u->layer, archive_error_string(u->in));
		rc = handle_entry(u, e);
	}
	/* directory modes and times are applied here, relative to the root */
	r = archive_write_close(u->out);
	if (rc == 0 && r < ARCHIVE_WARN)
		rc = write_failed(u, _("directory metadata"));
	return rc;
}

int sb_unpack_layer(int root_fd, const char *layer_path, const struct sb_unpack_limits *limits,
		    const struct sb_progress *progress, struct sb_error *err)
{
	struct unpacker *u;
	int fd = -1, cwd = -1, rc;
	struct stat st;

	if ((rc = sb_archive_load(err)) < 0)
		return rc;
	if (!(u = calloc(1, sizeof(*u))))
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	u->root_fd = root_fd;
	u->tar_fd = -1;
	u->layer = layer_path;
	u->err = err;
	u->progress = progress;
	u->max_bytes = limits && limits->max_bytes ? limits->max_bytes : SB_UNPACK_DEFAULT_MAX_BYTES;
	u->max_entries = limits && limits->max_entries ? limits->max_entries : SB_UNPACK_DEFAULT_MAX_ENTRIES;
	u->ev.phase = SB_PROGRESS_UNPACK;
	u->ev.item = strrchr(layer_path, '/') ? strrchr(layer_path, '/') + 1 : layer_path;
	u->last_ms = sb_clock_monotonic_ms();

	if (fstat(root_fd, &st) < 0 || !S_ISDIR(st.st_mode)) {
		rc = sb_error_set(err, SB_ERR_INVALID, _("cannot unpack layer '%s': the root is not a directory"),
				  layer_path);
		goto out;
	}
	fd = open(layer_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		rc = sb_error_errno(err, errno == ENOENT ? SB_ERR_NOTFOUND : SB_ERR_IO, errno,
				    _("cannot open layer '%s'"), layer_path);
		goto out;
	}
	u->ev.total = S_ISREG(st.st_mode) ? (unsigned long long)st.st_size : 0;
	u->written = sb_pathset_new();
	if (!u->written) {
		rc = nomem(u);
		goto out;
	}
	rc = open_layer(u, fd);
	if (rc < 0)
		goto out;
	/* libarchive writes relative to the working directory, and fixes up
	 * directories in archive_write_close(): stay in the root until then */
	cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cwd < 0 || fchdir(root_fd) < 0) {
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot unpack layer '%s': cannot enter the root"),
				    layer_path);
		goto out;
	}
	rc = unpack_entries(u);
	archive_write_free(u->out);
	u->out = NULL;
	if (fchdir(cwd) < 0 && rc == 0)
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot return to the working directory"));
	if (rc == 0)
		progress_tick(u, 1);
out:
	if (cwd >= 0)
		close(cwd);
	archive_read_free(u->in);
	if (u->tar_fd >= 0)
		close(u->tar_fd); /* stops the inflating thread if the extraction gave up */
	struct sb_error gz;
	if (sb_gunzip_finish(u->gunzip, &gz) < 0 && (rc == 0 || rc == SB_ERR_FORMAT))
		rc = sb_error_set(err, gz.code, "%s", gz.msg); /* more precise than "corrupt tar" */
	if (fd >= 0)
		close(fd);
	sb_pathset_free(u->written);
	free(u);
	return rc;
}
