#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/fs.h"
#include "base/i18n.h"
#include "image/blob_store.h"
#include "image/manifest.h"
#include "image/ref.h"
#include "image/store.h"
#include "registry/registry.h"
#include "internal.h"

/* Attempts per blob: a dropped connection or a server error starts it again. */
#define PUSH_ATTEMPTS 4
#define PROGRESS_STEP (1ull << 20)
/* Pause before retrying after a server error, times the attempt number. */
#define RETRY_PAUSE_MS 250
#define OCTETS "application/octet-stream"

struct push {
	struct sb_root *root;
	struct sb_registry_client *client;
	const char *dest;                    /* canonical destination, for messages */
	char *mount_from;                    /* a repository of this registry that holds the image, or NULL */
	unsigned long long chunk;
	const struct sb_progress *progress;
	struct sb_registry_push_result *out;
};

/* One blob's upload session. */
struct upload {
	struct push *p;
	const struct sb_descriptor *d;
	int fd;
	char *location;                      /* where the session goes on (the registry's last Location) */
	struct sb_progress_event ev;
	unsigned long long base, reported;   /* bytes acknowledged before the current request */
	int again;                           /* the failure is worth another attempt */
};

/* The start of the registry's error body, printable, for messages. */
static const char *excerpt(struct sb_registry_client *c)
{
	char *s = c->resp.body_excerpt;

	for (char *q = s; *q; q++)
		if (!isprint((unsigned char)*q))
			*q = ' ';
	if (strlen(s) > 200)
		s[200] = '\0';
	return s[0] ? s : "-";
}

/* A status we did not expect for the request method (the step: HEAD, POST,
 * PATCH, PUT); a server error may be retried. */
static int unexpected(struct upload *u, const char *method, struct sb_error *err)
{
	struct sb_registry_client *c = u->p->client;

	u->again = c->resp.status >= 500;
	return sb_error_set(err, SB_ERR_NETWORK, _("registry %s answered HTTP %ld to the %s for blob %s: %s"),
			    c->registry, c->resp.status, method, u->d->digest, excerpt(c));
}

/* A transport failure may be retried. */
static int request(struct upload *u, const char *target, const struct sb_registry_request *req,
		   struct sb_error *err)
{
	int rc = sb_registry_request(u->p->client, target, req, err);

	if (rc == SB_ERR_NETWORK && sb_registry_transient(u->p->client))
		u->again = 1;
	return rc;
}

/* request() to a malloc'd target (NULL: out of memory), which it frees. */
static int request_to(struct upload *u, char *target, const struct sb_registry_request *req, struct sb_error *err)
{
	int rc;

	if (!target)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	rc = request(u, target, req, err);
	free(target);
	return rc;
}

/* Takes the Location of the last answer as the session's next URL: a path of
 * the registry or an absolute URL, never one that leaves HTTPS. */
static int take_location(struct upload *u, const char *method, struct sb_error *err)
{
	struct sb_registry_client *c = u->p->client;
	const char *loc = c->resp.location;
	int https = !strncmp(c->base, "https://", 8);

	if (!loc || !*loc)
		return sb_error_set(err, SB_ERR_NETWORK, _("registry %s answered the %s for blob %s without a Location"),
				    c->registry, method, u->d->digest);
	if (loc[0] != '/' && strncmp(loc, "https://", 8) != 0 && (https || strncmp(loc, "http://", 7) != 0))
		return sb_error_set(err, SB_ERR_NETWORK,
				    _("registry %s answered the %s for blob %s with a Location that is not a URL of the registry: '%s'"),
				    c->registry, method, u->d->digest, loc);
	free(u->location);
	if (!(u->location = strdup(loc)))
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	return 0;
}

static void on_sent(void *user, unsigned long long n)
{
	struct upload *u = user;

	u->ev.done = u->base + n;
	if (u->ev.done - u->reported >= PROGRESS_STEP || u->ev.done == u->d->size) {
		u->reported = u->ev.done;
		sb_progress_emit(u->p->progress, &u->ev);
	}
}

/* POST .../blobs/uploads/, a mount from another repository when we know one.
 * *mounted is set when the registry mounted it (201); else the session is open. */
static int start(struct upload *u, int *mounted, struct sb_error *err)
{
	struct sb_registry_client *c = u->p->client;
	struct sb_registry_request req = { .method = "POST" };
	char *path;
	int rc;

	*mounted = 0;
	path = u->p->mount_from ? sb_strdupf("/v2/%s/blobs/uploads/?mount=%s&from=%s", c->repository, u->d->digest,
					     u->p->mount_from)
				: sb_strdupf("/v2/%s/blobs/uploads/", c->repository);
	if ((rc = request_to(u, path, &req, err)) < 0)
		return rc;
	if (c->resp.status == 201 && u->p->mount_from) {
		*mounted = 1;
		return 0;
	}
	if (c->resp.status != 202)
		return unexpected(u, req.method, err);
	return take_location(u, req.method, err);
}

/* location with "digest=D" added to its query (malloc'd). */
static char *with_digest(const struct upload *u)
{
	return sb_strdupf("%s%cdigest=%s", u->location, strchr(u->location, '?') ? '&' : '?', u->d->digest);
}

/* PATCH of bytes [from, from + len): the registry says what it holds after. */
static int send_chunk(struct upload *u, unsigned long long from, unsigned long long len, struct sb_error *err)
{
	struct sb_registry_client *c = u->p->client;
	struct sb_registry_body body = { .fd = u->fd, .offset = from, .len = len, .sent = on_sent, .user = u };
	struct sb_registry_request req = { .method = "PATCH", .content_type = OCTETS, .body = &body };
	char range[64], held[64];
	int rc;

	snprintf(range, sizeof(range), "%llu-%llu", from, from + len - 1);
	snprintf(held, sizeof(held), "0-%llu", from + len - 1);
	req.content_range = range;
	u->base = from;
	if ((rc = request(u, u->location, &req, err)) < 0)
		return rc;
	if (c->resp.status != 202)
		return unexpected(u, req.method, err);
	if (c->resp.range && strcmp(c->resp.range, held) != 0)
		return sb_error_set(err, SB_ERR_NETWORK,
				    _("registry %s holds bytes %s of blob %s after a chunk that ended at byte %llu"),
				    c->registry, c->resp.range, u->d->digest, from + len - 1);
	return take_location(u, req.method, err);
}

/* PUT ...?digest=D with the bytes from `from` to the end (none after chunks). */
static int finish(struct upload *u, unsigned long long from, struct sb_error *err)
{
	struct sb_registry_client *c = u->p->client;
	struct sb_registry_body body = {
		.fd = u->fd, .offset = from, .len = u->d->size - from, .sent = on_sent, .user = u,
	};
	struct sb_registry_request req = { .method = "PUT", .content_type = OCTETS, .body = &body };
	int rc;

	u->base = from;
	if ((rc = request_to(u, with_digest(u), &req, err)) < 0)
		return rc;
	if (c->resp.status != 201)
		return unexpected(u, req.method, err);
	if (c->resp.content_digest && strcmp(c->resp.content_digest, u->d->digest) != 0)
		return sb_error_set(err, SB_ERR_DIGEST, _("registry %s stored blob %s as %s"), c->registry, u->d->digest,
				    c->resp.content_digest);
	return 0;
}

/* One upload session: mounted, or sent whole, or in chunks for a big blob. */
static int upload_once(struct upload *u, struct sb_error *err)
{
	struct push *p = u->p;
	unsigned long long from = 0;
	int mounted, rc;

	u->again = 0;
	u->reported = 0;
	if ((rc = start(u, &mounted, err)) < 0)
		return rc;
	if (mounted) {
		p->out->mounted++;
		return 0;
	}
	if (u->d->size > p->chunk)
		for (; from < u->d->size && rc == 0; from += p->chunk)
			rc = send_chunk(u, from, u->d->size - from < p->chunk ? u->d->size - from : p->chunk, err);
	if (rc == 0)
		rc = finish(u, from < u->d->size ? from : u->d->size, err);
	if (rc == 0) {
		p->out->uploaded++;
		p->out->bytes += u->d->size;
	}
	return rc;
}

/* HEAD .../blobs/D: 1 when the repository has the blob, 0 when not. */
static int exists(struct upload *u, struct sb_error *err)
{
	struct sb_registry_client *c = u->p->client;
	struct sb_registry_request req = { .method = "HEAD" };
	int rc = request_to(u, sb_strdupf("/v2/%s/blobs/%s", c->repository, u->d->digest), &req, err);

	if (rc < 0)
		return rc;
	if (c->resp.status == 200)
		return 1;
	if (c->resp.status == 404)
		return 0;
	return unexpected(u, req.method, err);
}

/* The blob's file in the store, checked against its descriptor's size. */
static int open_blob(struct upload *u, struct sb_error *err)
{
	char *path = sb_blob_path(u->p->root, u->d->digest);
	struct stat st;
	int rc = 0;

	if (!path)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	u->fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (u->fd < 0)
		rc = errno == ENOENT ? sb_error_set(err, SB_ERR_NOTFOUND,
						    _("blob %s of the image is not in the store (pull or import the image again)"),
						    u->d->digest)
				     : sb_error_errno(err, SB_ERR_IO, errno, _("cannot open '%s'"), path);
	else if (fstat(u->fd, &st) < 0 || !S_ISREG(st.st_mode) || (unsigned long long)st.st_size != u->d->size)
		rc = sb_error_set(err, SB_ERR_DIGEST, _("blob %s in the store is not the %llu bytes its descriptor says"),
				  u->d->digest, u->d->size);
	free(path);
	return rc;
}

static int push_blob(struct push *p, const struct sb_descriptor *d, int layer, int layers, struct sb_error *err)
{
	struct upload u = {
		.p = p, .d = d, .fd = -1,
		.ev = { .phase = SB_PROGRESS_UPLOAD, .item = d->digest, .layer = layer, .layers = layers, .total = d->size },
	};
	int rc;

	for (int attempt = 1;; attempt++) {
		rc = exists(&u, err);
		if (rc == 1) {
			p->out->existing++;
			u.ev.done = d->size;
			sb_progress_emit(p->progress, &u.ev);
			rc = 0;
			break;
		}
		if (rc == 0 && (u.fd >= 0 || (rc = open_blob(&u, err)) == 0))
			rc = upload_once(&u, err);
		if (rc == 0 || !u.again)
			break;
		if (attempt == PUSH_ATTEMPTS) {
			sb_error_wrap(err, _("blob %s: giving up after %d attempts"), d->digest, attempt);
			break;
		}
		nanosleep(&(struct timespec){ .tv_nsec = RETRY_PAUSE_MS * 1000000L * attempt }, NULL);
	}
	if (u.fd >= 0)
		close(u.fd);
	free(u.location);
	return rc;
}

/* PUT .../manifests/TAG of the manifest's own bytes. */
static int put_manifest(struct push *p, const char *digest, const char *media_type, const char *tag,
			struct sb_error *err)
{
	struct sb_registry_client *c = p->client;
	struct sb_registry_body body = { 0 };
	struct sb_registry_request req = { .method = "PUT", .content_type = media_type, .body = &body };
	char *data = NULL, *path = NULL;
	size_t len;
	int rc;

	if ((rc = sb_blob_get(&data, &len, p->root, digest, SB_MANIFEST_MAX, err)) < 0)
		return rc;
	body.data = data;
	body.len = len;
	if (!(path = sb_strdupf("/v2/%s/manifests/%s", c->repository, tag)))
		rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	if (rc == 0 && (rc = sb_registry_request(c, path, &req, err)) == 0 && c->resp.status != 201)
		rc = sb_error_set(err, SB_ERR_NETWORK, _("registry %s answered HTTP %ld to the manifest of %s: %s"),
				  c->registry, c->resp.status, p->dest, excerpt(c));
	if (rc == 0 && c->resp.content_digest && strcmp(c->resp.content_digest, digest) != 0)
		rc = sb_error_set(err, SB_ERR_DIGEST, _("registry %s stored the manifest of %s as %s, not as %s"),
				  c->registry, p->dest, c->resp.content_digest, digest);
	free(path);
	free(data);
	return rc;
}

/* The repository of dest's registry the image was pulled from (a mount
 * source), or NULL. */
static char *mount_source(const struct sb_image_info *info, const struct sb_image_ref *dest)
{
	struct sb_image_ref from;
	char *repo = NULL;

	if (!info->source || strncmp(info->source, "pull ", 5) != 0 ||
	    sb_image_ref_parse(&from, info->source + 5, NULL) < 0)
		return NULL;
	if (!strcmp(from.registry, dest->registry) && strcmp(from.repository, dest->repository) != 0)
		repo = strdup(from.repository);
	sb_image_ref_clear(&from);
	return repo;
}

/* Where the image goes: dest, or the image's own reference. */
static int destination(struct sb_image_ref *out, const struct sb_image_info *info, const char *dest,
		       struct sb_error *err)
{
	const char *name = dest ? dest : info->ref;
	int rc;

	if (!name[0])
		return sb_error_set(err, SB_ERR_INVALID, _("image %s has no name: say where to push it (image push %s DEST)"),
				    info->digest, info->digest);
	if ((rc = sb_image_ref_parse(out, name, err)) < 0)
		return rc;
	if (out->digest || !out->tag)
		rc = sb_error_set(err, SB_ERR_INVALID, _("push destination '%s' has a digest: name a tag, the digest is the image's"),
				  name);
	else if (!strcmp(out->registry, "localhost"))
		rc = sb_error_set(err, SB_ERR_INVALID,
				  _("%s is a name on this machine, not in a registry: say where to push it (image push %s REGISTRY/NAME)"),
				  name, name);
	if (rc < 0)
		sb_image_ref_clear(out);
	return rc;
}

static int push_locked(struct push *p, const struct sb_image_info *info, const struct sb_image_ref *dest,
		       const struct sb_registry_opts *opts, struct sb_error *err)
{
	struct sb_image_manifest m = { 0 };
	char *text = NULL;
	size_t len;
	int rc;

	if ((rc = sb_blob_get(&text, &len, p->root, info->digest, SB_MANIFEST_MAX, err)) < 0) {
		sb_error_wrap(err, _("the manifest of %s"), p->dest);
		return rc;
	}
	rc = sb_image_manifest_parse(&m, text, len, info->digest, err);
	free(text);
	if (rc < 0)
		return rc;
	if ((rc = sb_registry_client_new(&p->client, p->root, dest->registry, dest->repository, opts, err)) == 0 &&
	    (rc = sb_registry_probe(p->client, err)) == 0)
		rc = push_blob(p, &m.config, 0, (int)m.n_layers, err);
	for (size_t i = 0; rc == 0 && i < m.n_layers; i++)
		rc = push_blob(p, &m.layers[i], (int)i + 1, (int)m.n_layers, err);
	if (rc == 0)
		rc = put_manifest(p, info->digest, m.media_type ? m.media_type : SB_MEDIA_OCI_MANIFEST, dest->tag, err);
	sb_image_manifest_clear(&m);
	return rc;
}

int sb_registry_push(struct sb_registry_push_result *out, struct sb_root *root, const char *image, const char *dest,
		     const struct sb_registry_opts *opts, struct sb_error *err)
{
	static const struct sb_registry_opts defaults = { 0 };
	struct sb_image_ref ref = { 0 };
	struct sb_image_info info = { 0 };
	struct push p = { .root = root, .out = out };
	int rc;

	memset(out, 0, sizeof(*out));
	if (!opts)
		opts = &defaults;
	p.progress = opts->progress;
	p.chunk = opts->chunk_size ? opts->chunk_size : SB_REGISTRY_CHUNK_DEFAULT;
	/* shared: no prune takes the blobs while we read them */
	if ((rc = sb_root_lock(root, SB_LOCK_SHARED, err)) < 0)
		return rc;
	if ((rc = sb_image_resolve(&info, root, image, err)) < 0 || (rc = destination(&ref, &info, dest, err)) < 0)
		goto out;
	if (!(out->reference = sb_image_ref_format(&ref))) {
		rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		goto out;
	}
	p.dest = out->reference;
	p.mount_from = mount_source(&info, &ref);
	sb_progress_emit(p.progress, &(struct sb_progress_event){ .phase = SB_PROGRESS_RESOLVE, .item = p.dest });
	if ((rc = push_locked(&p, &info, &ref, opts, err)) < 0)
		goto out;
	snprintf(out->digest, sizeof(out->digest), "%s", info.digest);
	sb_progress_emit(p.progress, &(struct sb_progress_event){ .phase = SB_PROGRESS_DONE, .item = p.dest });
out:
	sb_root_unlock(root);
	sb_registry_client_free(p.client);
	free(p.mount_from);
	sb_image_info_clear(&info);
	sb_image_ref_clear(&ref);
	if (rc < 0)
		sb_registry_push_result_clear(out);
	return rc;
}

void sb_registry_push_result_clear(struct sb_registry_push_result *r)
{
	if (!r)
		return;
	free(r->reference);
	memset(r, 0, sizeof(*r));
}

json_t *sb_registry_push_result_json(const struct sb_registry_push_result *r)
{
	return json_pack("{s:s, s:s, s:i, s:i, s:i, s:I}", "reference", r->reference, "digest", r->digest, "uploaded",
			 (int)r->uploaded, "existing", (int)r->existing, "mounted", (int)r->mounted, "bytes",
			 (json_int_t)r->bytes);
}
