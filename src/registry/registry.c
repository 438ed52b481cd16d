#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "image/blob_store.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "image/manifest.h"
#include "image/ref.h"
#include "image/store.h"
#include "registry/registry.h"
#include "internal.h"

/* Attempts per blob: a dropped connection resumes from the bytes we have. */
#define BLOB_ATTEMPTS 4
/* An index may point at an index; real images nest at most once. */
#define INDEX_DEPTH 3
#define PROGRESS_STEP (1ull << 20)
/* Pause before retrying after a server error, times the attempt number. */
#define RETRY_PAUSE_MS 250

enum { RETRY_NO, RETRY_NOW, RETRY_LATER };

struct pull {
	struct sb_root *root;
	struct sb_registry_client *client;
	const char *canonical;
	const struct sb_progress *progress;
};

/* Downloads the manifest (or index) named by reference (the image's own, or,
 * when listed, one an index lists) and checks its digest against the registry's
 * header and against pinned (may be NULL). A pinned manifest already in the
 * store is read from there without any request. */
static int fetch_manifest(struct sb_image_manifest *m, char digest[SB_DIGEST_STR_LEN], struct pull *p,
			  const char *reference, const char *pinned, int listed, struct sb_error *err)
{
	struct sb_registry_buf buf = { .max = SB_MANIFEST_MAX };
	struct sb_registry_sink sink = { sb_registry_buf_write, &buf };
	struct sb_registry_client *c = p->client;
	const char *header;
	char *path = NULL, *local = NULL;
	size_t local_len;
	int rc;

	if (pinned && sb_blob_exists(p->root, pinned) &&
	    sb_blob_get(&local, &local_len, p->root, pinned, SB_MANIFEST_MAX, NULL) == 0) {
		strcpy(digest, pinned);
		rc = sb_image_manifest_parse(m, local, local_len, pinned, err);
		free(local);
		return rc;
	}
	if ((rc = sb_registry_probe(p->client, err)) < 0)
		return rc;
	if (!(path = sb_strdupf("/v2/%s/manifests/%s", c->repository, reference)))
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	rc = sb_registry_get(c, path, SB_MANIFEST_ACCEPT, 0, &sink, err);
	free(path);
	if (rc < 0)
		goto out;
	if (c->resp.status == 404) {
		rc = listed ? sb_error_set(err, SB_ERR_NOTFOUND, _("manifest %s of %s not found on %s"), reference,
					   p->canonical, c->registry)
			    : sb_error_set(err, SB_ERR_NOTFOUND, _("image %s not found on %s"), p->canonical,
					   c->registry);
		goto out;
	}
	if (c->resp.status < 200 || c->resp.status > 299) {
		rc = sb_error_set(err, SB_ERR_NETWORK, _("registry %s answered HTTP %ld for the manifest of %s"),
				  c->registry, c->resp.status, p->canonical);
		goto out;
	}
	if ((rc = sb_sha256_buffer(digest, buf.data ? buf.data : "", buf.len, err)) < 0)
		goto out;
	header = c->resp.content_digest;
	if (header && !strncmp(header, "sha256:", 7) && strcmp(header, digest) != 0) {
		rc = sb_error_set(err, SB_ERR_DIGEST,
				  _("registry %s sent a manifest for %s that does not match its Docker-Content-Digest %s (content is %s)"),
				  c->registry, p->canonical, header, digest);
		goto out;
	}
	if (pinned && strcmp(pinned, digest) != 0) {
		rc = sb_error_set(err, SB_ERR_DIGEST, _("registry %s served %s for %s, which is pinned to %s"),
				  c->registry, digest, p->canonical, pinned);
		goto out;
	}
	if ((rc = sb_image_manifest_parse(m, buf.data ? buf.data : "", buf.len, digest, err)) < 0) {
		sb_error_wrap(err, _("registry %s, image %s"), c->registry, p->canonical);
		goto out;
	}
	/* kept by digest, so that a pinned pull later needs no request */
	if ((rc = sb_blob_put(digest, p->root, buf.data ? buf.data : "", buf.len, err)) < 0)
		sb_image_manifest_clear(m);
out:
	sb_registry_buf_clear(&buf);
	return rc;
}

/* Follows indexes down to the image manifest for the host platform. */
static int resolve(struct sb_image_manifest *m, char digest[SB_DIGEST_STR_LEN], struct pull *p,
		   const struct sb_image_ref *ref, struct sb_error *err)
{
	const struct sb_descriptor *d;
	char next[SB_DIGEST_STR_LEN];
	int rc;

	rc = fetch_manifest(m, digest, p, ref->digest ? ref->digest : ref->tag, ref->digest, 0, err);
	for (int depth = 0; rc == 0 && m->is_index; depth++) {
		if (depth == INDEX_DEPTH) {
			sb_image_manifest_clear(m);
			return sb_error_set(err, SB_ERR_FORMAT, _("%s: indexes nest more than %d deep"), p->canonical,
					    INDEX_DEPTH);
		}
		if ((rc = sb_image_index_select(&d, m, NULL, NULL, err)) < 0) {
			sb_error_wrap(err, "%s", p->canonical);
			break;
		}
		strcpy(next, d->digest);
		sb_image_manifest_clear(m);
		rc = fetch_manifest(m, digest, p, next, next, 1, err);
	}
	if (rc < 0)
		sb_image_manifest_clear(m);
	return rc;
}

struct blob_sink {
	struct pull *p;
	struct sb_blob_writer *w;
	const struct sb_descriptor *d;
	struct sb_progress_event ev;
	unsigned long long start, reported;
	int checked, retry;
};

/* The start of a Content-Range ("bytes START-END/TOTAL"), or -1. */
static long long range_start(const char *header)
{
	char *end;
	long long v;

	if (!header || strncmp(header, "bytes ", 6) != 0)
		return -1;
	v = strtoll(header + 6, &end, 10);
	return end == header + 6 || *end != '-' ? -1 : v;
}

static int blob_write(void *user, const void *data, size_t len, struct sb_error *err)
{
	struct blob_sink *s = user;
	const struct sb_registry_response *resp = &s->p->client->resp;
	int rc;

	if (!s->checked) {
		s->checked = 1;
		/* a server that ignores Range sends everything again */
		if (s->start && resp->status == 200) {
			if ((rc = sb_blob_writer_restart(s->w, err)) < 0)
				return rc;
			s->start = 0;
		} else if (s->start && range_start(resp->content_range) != (long long)s->start) {
			sb_blob_writer_restart(s->w, NULL);
			s->retry = 1;
			return sb_error_set(err, SB_ERR_NETWORK, _("registry %s answered a range request for %s with %s"),
					    s->p->client->registry, s->d->digest,
					    resp->content_range ? resp->content_range : _("no Content-Range"));
		}
		s->ev.done = s->start;
	}
	if (s->ev.done + len > s->d->size)
		return sb_error_set(err, SB_ERR_DIGEST, _("blob %s is larger than its descriptor says (%llu bytes)"),
				    s->d->digest, s->d->size);
	if ((rc = sb_blob_writer_write(s->w, data, len, err)) < 0)
		return rc;
	s->ev.done += len;
	if (s->ev.done - s->reported >= PROGRESS_STEP || s->ev.done == s->d->size) {
		s->reported = s->ev.done;
		sb_progress_emit(s->p->progress, &s->ev);
	}
	return 0;
}

/* One download attempt, resuming from what earlier attempts left. *again is
 * set when the failure is worth another attempt: RETRY_NOW for a dropped
 * connection, RETRY_LATER for a server error (overload, a bad gateway). */
static int download_once(struct pull *p, const struct sb_descriptor *d, const struct sb_progress_event *ev,
			 int *again, struct sb_error *err)
{
	struct blob_sink s = { .p = p, .d = d, .ev = *ev };
	struct sb_registry_sink sink = { blob_write, &s };
	struct sb_registry_client *c = p->client;
	char got[SB_DIGEST_STR_LEN], *path;
	int rc;

	*again = RETRY_NO;
	if ((rc = sb_blob_writer_open(&s.w, p->root, d->digest, err)) < 0)
		return rc;
	s.start = sb_blob_writer_offset(s.w);
	if (s.start > d->size && (rc = sb_blob_writer_restart(s.w, err)) < 0)
		goto out;
	if (s.start > d->size)
		s.start = 0;
	if (s.start < d->size || d->size == 0) {
		if (!(path = sb_strdupf("/v2/%s/blobs/%s", c->repository, d->digest))) {
			rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
			goto out;
		}
		rc = sb_registry_get(c, path, NULL, s.start, &sink, err);
		free(path);
		if (rc == SB_ERR_NETWORK)
			*again = s.retry || sb_registry_transient(c) ? RETRY_NOW : RETRY_NO;
		if (rc < 0)
			goto out;
		if (c->resp.status == 416) {
			/* what we have is not a prefix the server knows: start over */
			rc = sb_blob_writer_restart(s.w, err);
			*again = rc == 0 ? RETRY_NOW : RETRY_NO;
			if (rc == 0)
				rc = sb_error_set(err, SB_ERR_NETWORK, _("registry %s refused to resume blob %s"),
						  c->registry, d->digest);
			goto out;
		}
		if (c->resp.status == 404) {
			rc = sb_error_set(err, SB_ERR_NOTFOUND, _("blob %s of %s not found on %s"), d->digest,
					  p->canonical, c->registry);
			goto out;
		}
		if (c->resp.status < 200 || c->resp.status > 299) {
			rc = sb_error_set(err, SB_ERR_NETWORK, _("registry %s answered HTTP %ld for blob %s"),
					  c->registry, c->resp.status, d->digest);
			*again = c->resp.status >= 500 ? RETRY_LATER : RETRY_NO;
			goto out;
		}
	}
	s.ev.phase = SB_PROGRESS_VERIFY;
	sb_progress_emit(p->progress, &s.ev);
	if ((rc = sb_blob_writer_commit(got, s.w, err)) < 0)
		sb_error_wrap(err, _("blob of %s from %s"), p->canonical, c->registry);
out:
	sb_blob_writer_free(s.w);
	return rc;
}

/* Downloads with bounded retries, resuming where the last attempt stopped. */
static int download(struct pull *p, const struct sb_descriptor *d, const struct sb_progress_event *ev,
		    struct sb_error *err)
{
	int rc, again = RETRY_NO;

	if ((rc = sb_registry_probe(p->client, err)) < 0)
		return rc;
	for (int attempt = 1;; attempt++) {
		rc = download_once(p, d, ev, &again, err);
		if (rc == 0 || again == RETRY_NO)
			return rc;
		if (attempt == BLOB_ATTEMPTS) {
			sb_error_wrap(err, _("blob %s: giving up after %d attempts"), d->digest, attempt);
			return rc;
		}
		if (again == RETRY_LATER)
			nanosleep(&(struct timespec){ .tv_nsec = RETRY_PAUSE_MS * 1000000L * attempt }, NULL);
	}
}

/* 1 when the blob is in the store (and says so to the progress watcher). */
static int have_blob(struct pull *p, const struct sb_descriptor *d, struct sb_progress_event *ev)
{
	if (!sb_blob_exists(p->root, d->digest))
		return 0;
	ev->done = d->size;
	sb_progress_emit(p->progress, ev);
	return 1;
}

static int fetch_blob(struct pull *p, const struct sb_descriptor *d, int layer, int layers, struct sb_error *err)
{
	struct sb_progress_event ev = {
		.phase = SB_PROGRESS_DOWNLOAD, .item = d->digest, .layer = layer, .layers = layers, .total = d->size,
	};
	char *lock_path;
	int fd, rc;

	if (have_blob(p, d, &ev))
		return 0;
	/* concurrent pulls of one image share the blob's partial file: one
	 * downloads it, the others wait and then find it in the store */
	lock_path = sb_strdupf("%s/images/blobs/partial/%s.lock", sb_root_path(p->root), sb_digest_hex(d->digest));
	if (!lock_path)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 || flock(fd, LOCK_EX) < 0) {
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot lock '%s'"), lock_path);
	} else if (have_blob(p, d, &ev)) {
		rc = 0;
	} else {
		rc = download(p, d, &ev, err);
	}
	/* a waiter that still gets the unlinked lock checks the store first; only
	 * after a failure may two later pulls then race, and one of them fail */
	if (fd >= 0) {
		unlink(lock_path);
		close(fd);
	}
	free(lock_path);
	return rc;
}

/* The fetch itself; the caller holds the root lock (shared at least). */
static int fetch_locked(char manifest_digest[SB_DIGEST_STR_LEN], char **canonical, struct sb_root *root,
			const char *ref_text, const struct sb_registry_opts *opts, struct sb_error *err)
{
	static const struct sb_registry_opts defaults = { 0 };
	struct sb_image_ref ref = { 0 };
	struct sb_image_manifest m = { 0 };
	struct pull p = { .root = root };
	char *name = NULL;
	int rc;

	*canonical = NULL;
	if (!opts)
		opts = &defaults;
	p.progress = opts->progress;
	if ((rc = sb_image_ref_parse(&ref, ref_text, err)) < 0)
		return rc;
	if (!(name = sb_image_ref_format(&ref))) {
		rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		goto out;
	}
	p.canonical = name;
	if ((rc = sb_registry_client_new(&p.client, root, ref.registry, ref.repository, opts, err)) < 0)
		goto out;
	sb_progress_emit(p.progress, &(struct sb_progress_event){ .phase = SB_PROGRESS_RESOLVE, .item = name });
	if ((rc = resolve(&m, manifest_digest, &p, &ref, err)) < 0)
		goto out;
	if ((rc = fetch_blob(&p, &m.config, 0, (int)m.n_layers, err)) < 0)
		goto out;
	for (size_t i = 0; i < m.n_layers; i++)
		if ((rc = fetch_blob(&p, &m.layers[i], (int)i + 1, (int)m.n_layers, err)) < 0)
			goto out;
	*canonical = name;
	name = NULL;
out:
	sb_image_manifest_clear(&m);
	sb_registry_client_free(p.client);
	sb_image_ref_clear(&ref);
	free(name);
	return rc;
}

int sb_registry_fetch(char manifest_digest[SB_DIGEST_STR_LEN], char **canonical, struct sb_root *root,
		      const char *ref, const struct sb_registry_opts *opts, struct sb_error *err)
{
	char *name = NULL;
	int rc;

	/* shared: other pulls may run, but no prune removes blobs under us */
	if ((rc = sb_root_lock(root, SB_LOCK_SHARED, err)) < 0)
		return rc;
	rc = fetch_locked(manifest_digest, &name, root, ref, opts, err);
	sb_root_unlock(root);
	if (canonical)
		*canonical = name;
	else
		free(name);
	return rc;
}

int sb_registry_pull(char manifest_digest[SB_DIGEST_STR_LEN], char **canonical, struct sb_root *root,
		     const char *ref, const struct sb_registry_opts *opts, struct sb_error *err)
{
	const struct sb_progress *progress = opts ? opts->progress : NULL;
	char *name = NULL, *source = NULL;
	int rc;

	if (canonical)
		*canonical = NULL;
	if ((rc = sb_root_lock(root, SB_LOCK_SHARED, err)) < 0)
		return rc;
	rc = fetch_locked(manifest_digest, &name, root, ref, opts, err);
	if (rc == 0 && !(source = sb_strdupf("pull %s", name)))
		rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	/* the install upgrades our shared lock for its last step and releases it */
	if (rc == 0)
		rc = sb_image_install_from(root, name, manifest_digest, source, progress, err);
	sb_root_unlock(root);
	if (rc == 0)
		sb_progress_emit(progress, &(struct sb_progress_event){ .phase = SB_PROGRESS_DONE, .item = name });
	free(source);
	if (rc == 0 && canonical)
		*canonical = name;
	else
		free(name);
	return rc;
}
