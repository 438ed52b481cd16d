#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image/blob_store.h"
#include "base/fs.h"
#include "base/hooks.h"
#include "base/i18n.h"

struct sb_blob_writer {
	struct sb_root *root;
	struct sb_sha256 *hash;
	char *partial;          /* file being written */
	char expected[SB_DIGEST_STR_LEN];
	unsigned long long offset, written;
	int fd;
	int committed;
};

char *sb_blob_path(const struct sb_root *root, const char *digest)
{
	if (!sb_digest_valid(digest))
		return NULL;
	return sb_strdupf("%s/images/blobs/sha256/%s", sb_root_path(root), sb_digest_hex(digest));
}

int sb_blob_exists(const struct sb_root *root, const char *digest)
{
	char *path = sb_blob_path(root, digest);
	struct stat st;
	int ok = path && stat(path, &st) == 0 && S_ISREG(st.st_mode);

	free(path);
	return ok;
}

/* Feeds the bytes already in the partial file to the hash, so resume continues it. */
static int rehash_partial(struct sb_blob_writer *w, struct sb_error *err)
{
	char buf[1 << 16];
	ssize_t r;

	if (lseek(w->fd, 0, SEEK_SET) < 0)
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot read '%s'"), w->partial);
	while ((r = read(w->fd, buf, sizeof(buf))) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return sb_error_errno(err, SB_ERR_IO, errno, _("cannot read '%s'"), w->partial);
		sb_sha256_update(w->hash, buf, (size_t)r);
		w->offset += (unsigned long long)r;
	}
	return 0;
}

/* Writers of one expected digest share its partial file, so they take turns:
 * a second writer waits for the first, then resumes what it left or, when the
 * first committed (renamed the file away), starts a fresh partial file.
 * Without this a restart truncates what the other is about to commit. */
static int open_partial_locked(struct sb_blob_writer *w, struct sb_error *err)
{
	for (;;) {
		struct stat held, now;
		int fd = open(w->partial, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
		if (fd < 0)
			return sb_error_errno(err, SB_ERR_IO, errno, _("cannot create '%s'"), w->partial);
		while (flock(fd, LOCK_EX) < 0) {
			if (errno != EINTR) {
				int rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot lock '%s'"), w->partial);
				close(fd);
				return rc;
			}
		}
		if (fstat(fd, &held) == 0 && stat(w->partial, &now) == 0 && held.st_ino == now.st_ino &&
		    held.st_dev == now.st_dev) {
			w->fd = fd;
			return 0;
		}
		close(fd);
	}
}

int sb_blob_writer_open(struct sb_blob_writer **out, struct sb_root *root, const char *expected,
			struct sb_error *err)
{
	static unsigned counter;
	struct sb_blob_writer *w;
	int rc;

	*out = NULL;
	if (expected && !sb_digest_valid(expected))
		return sb_error_set(err, SB_ERR_FORMAT, _("'%s' is not a sha256 digest"), expected);
	w = calloc(1, sizeof(*w));
	if (!w)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	w->root = root;
	w->fd = -1;
	if ((rc = sb_sha256_new(&w->hash, err)) < 0) {
		free(w);
		return rc;
	}
	if (expected) {
		strcpy(w->expected, expected);
		w->partial = sb_strdupf("%s/images/blobs/partial/%s", sb_root_path(root), sb_digest_hex(expected));
	} else {
		w->partial = sb_strdupf("%s/images/blobs/partial/new-%ld-%u", sb_root_path(root),
					(long)getpid(), __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED));
	}
	if (!w->partial) {
		sb_blob_writer_free(w);
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	if (expected) {
		rc = open_partial_locked(w, err);
	} else {
		w->fd = open(w->partial, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_TRUNC, 0644);
		rc = w->fd < 0 ? sb_error_errno(err, SB_ERR_IO, errno, _("cannot create '%s'"), w->partial) : 0;
	}
	if (rc < 0) {
		sb_blob_writer_free(w);
		return rc;
	}
	if (expected && (rc = rehash_partial(w, err)) < 0) {
		sb_blob_writer_free(w);
		return rc;
	}
	*out = w;
	return 0;
}

unsigned long long sb_blob_writer_offset(const struct sb_blob_writer *w)
{
	return w->offset;
}

int sb_blob_writer_restart(struct sb_blob_writer *w, struct sb_error *err)
{
	struct sb_sha256 *h;
	int rc = sb_sha256_new(&h, err);

	if (rc < 0)
		return rc;
	sb_sha256_free(w->hash);
	w->hash = h;
	w->offset = w->written = 0;
	if (ftruncate(w->fd, 0) < 0 || lseek(w->fd, 0, SEEK_SET) < 0)
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot truncate '%s'"), w->partial);
	return 0;
}

int sb_blob_writer_write(struct sb_blob_writer *w, const void *data, size_t len, struct sb_error *err)
{
	const char *p = data;
	size_t left = len;

	while (left > 0) {
		ssize_t n = write(w->fd, p, left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return sb_error_errno(err, SB_ERR_IO, errno, _("cannot write blob '%s'"), w->partial);
		p += n;
		left -= (size_t)n;
	}
	sb_sha256_update(w->hash, data, len);
	w->written += len;
	return 0;
}

int sb_blob_writer_commit(char digest[SB_DIGEST_STR_LEN], struct sb_blob_writer *w, struct sb_error *err)
{
	char *dest;
	int rc;

	sb_sha256_final(digest, w->hash);
	if (w->expected[0] && strcmp(digest, w->expected) != 0) {
		unlink(w->partial);
		w->committed = 1; /* nothing left to keep */
		return sb_error_set(err, SB_ERR_DIGEST, _("content does not match its digest: expected %s, got %s"),
				    w->expected, digest);
	}
	/* the test builds' full disk strikes at the blob's last write */
	if (sb_fault_point(SB_FAULT_WRITE, w->partial) < 0 || fsync(w->fd) < 0)
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot write blob '%s'"), w->partial);
	dest = sb_blob_path(w->root, digest);
	if (!dest)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	if (rename(w->partial, dest) < 0) {
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot store blob %s"), digest);
		free(dest);
		return rc;
	}
	free(dest);
	w->committed = 1;
	char *dir = sb_root_file(w->root, "images/blobs/sha256");
	rc = dir ? sb_fs_fsync_dir(dir, err) : sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	free(dir);
	return rc;
}

void sb_blob_writer_free(struct sb_blob_writer *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	if (!w->committed && !w->expected[0] && w->partial)
		unlink(w->partial);
	sb_sha256_free(w->hash);
	free(w->partial);
	free(w);
}

int sb_blob_put(char digest[SB_DIGEST_STR_LEN], struct sb_root *root, const void *data, size_t len,
		struct sb_error *err)
{
	struct sb_blob_writer *w;
	int rc;

	if ((rc = sb_sha256_buffer(digest, data, len, err)) < 0)
		return rc;
	if (sb_blob_exists(root, digest))
		return 0;
	rc = sb_blob_writer_open(&w, root, NULL, err);
	if (rc < 0)
		return rc;
	rc = sb_blob_writer_write(w, data, len, err);
	if (rc == 0)
		rc = sb_blob_writer_commit(digest, w, err);
	sb_blob_writer_free(w);
	return rc;
}

int sb_blob_get(char **out, size_t *len, const struct sb_root *root, const char *digest, size_t max,
		struct sb_error *err)
{
	char actual[SB_DIGEST_STR_LEN];
	char *path = sb_blob_path(root, digest);
	size_t n;
	int rc;

	*out = NULL;
	if (!path)
		return sb_error_set(err, SB_ERR_FORMAT, _("'%s' is not a sha256 digest"), digest);
	rc = sb_fs_read_file(out, &n, path, max, err);
	free(path);
	if (rc < 0)
		return rc == SB_ERR_NOTFOUND ? sb_error_set(err, rc, _("blob %s is not in the store"), digest) : rc;
	if ((rc = sb_sha256_buffer(actual, *out, n, err)) < 0) {
		free(*out);
		*out = NULL;
		return rc;
	}
	if (strcmp(actual, digest) != 0) {
		free(*out);
		*out = NULL;
		return sb_error_set(err, SB_ERR_DIGEST, _("stored blob %s is corrupt (content hashes to %s)"),
				    digest, actual);
	}
	if (len)
		*len = n;
	return 0;
}
