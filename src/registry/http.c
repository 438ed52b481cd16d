#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <errno.h>
#include <unistd.h>

#include "base/fs.h"
#include "base/curl_dl.h"
#include "base/i18n.h"
#include "base/log.h"
#include "internal.h"

/* The largest CA bundle we read to extend it with --ca-file. */
#define CA_BUNDLE_MAX (8u << 20)

/* Docker Hub's references say "docker.io"; its API lives elsewhere. */
static const struct {
	const char *name, *api_host;
} registry_aliases[] = {
	{ "docker.io", "registry-1.docker.io" },
	{ "index.docker.io", "registry-1.docker.io" },
};

const char *sb_registry_api_host(const char *registry)
{
	for (size_t i = 0; i < sizeof(registry_aliases) / sizeof(registry_aliases[0]); i++)
		if (!strcmp(registry, registry_aliases[i].name))
			return registry_aliases[i].api_host;
	return registry;
}

/* Headers the protocol needs, by name (case-insensitive). */
static const struct {
	const char *name;
	size_t offset;
} wanted_headers[] = {
	{ "www-authenticate", offsetof(struct sb_registry_response, www_authenticate) },
	{ "docker-content-digest", offsetof(struct sb_registry_response, content_digest) },
	{ "content-type", offsetof(struct sb_registry_response, content_type) },
	{ "content-range", offsetof(struct sb_registry_response, content_range) },
	{ "location", offsetof(struct sb_registry_response, location) },
	{ "range", offsetof(struct sb_registry_response, range) },
};

static void response_reset(struct sb_registry_response *r)
{
	for (size_t i = 0; i < sizeof(wanted_headers) / sizeof(wanted_headers[0]); i++) {
		char **field = (char **)((char *)r + wanted_headers[i].offset);
		free(*field);
		*field = NULL;
	}
	r->status = 0;
	r->excerpt_len = 0;
	r->body_excerpt[0] = '\0';
}

static size_t on_header(char *line, size_t size, size_t n, void *user)
{
	struct sb_registry_client *c = user;
	size_t len = size * n, name_len;
	const char *colon;

	/* a status line starts a new response (redirects, 100-continue) */
	if (len > 5 && !strncmp(line, "HTTP/", 5)) {
		const char *sp = memchr(line, ' ', len);
		response_reset(&c->resp);
		c->resp.status = sp ? strtol(sp + 1, NULL, 10) : 0;
		return len;
	}
	colon = memchr(line, ':', len);
	if (!colon)
		return len;
	name_len = (size_t)(colon - line);
	for (size_t i = 0; i < sizeof(wanted_headers) / sizeof(wanted_headers[0]); i++) {
		if (strlen(wanted_headers[i].name) != name_len || strncasecmp(line, wanted_headers[i].name, name_len))
			continue;
		const char *v = colon + 1, *end = line + len;
		while (v < end && (*v == ' ' || *v == '\t'))
			v++;
		while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' '))
			end--;
		char **field = (char **)((char *)&c->resp + wanted_headers[i].offset);
		free(*field);
		*field = strndup(v, (size_t)(end - v));
	}
	return len;
}

static size_t on_body(char *data, size_t size, size_t n, void *user)
{
	struct sb_registry_client *c = user;
	size_t len = size * n;

	if (c->resp.status < 200 || c->resp.status > 299) {
		size_t room = sizeof(c->resp.body_excerpt) - 1 - c->resp.excerpt_len;
		size_t k = len < room ? len : room;
		memcpy(c->resp.body_excerpt + c->resp.excerpt_len, data, k);
		c->resp.excerpt_len += k;
		c->resp.body_excerpt[c->resp.excerpt_len] = '\0';
		return len;
	}
	if (!c->sink)
		return len;
	c->sink_rc = c->sink->write(c->sink->user, data, len, &c->sink_err);
	return c->sink_rc < 0 ? 0 : len;
}

int sb_registry_buf_write(void *user, const void *data, size_t len, struct sb_error *err)
{
	struct sb_registry_buf *b = user;
	char *grown;

	if (len > b->max - b->len)
		return sb_error_set(err, SB_ERR_LIMIT, _("response is larger than %zu bytes"), b->max);
	grown = realloc(b->data, b->len + len + 1);
	if (!grown)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	b->data = grown;
	memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
	return 0;
}

void sb_registry_buf_clear(struct sb_registry_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = 0;
}

/* libcurl's --cacert replaces the system bundle; --ca-file must add to it. */
static int load_ca_blob(struct sb_registry_client *c, const char *ca_file, struct sb_error *err)
{
	char *system = NULL, *extra = NULL, *default_path = NULL;
	size_t system_len = 0, extra_len;
	int rc;

	if ((rc = sb_fs_read_file(&extra, &extra_len, ca_file, CA_BUNDLE_MAX, err)) < 0) {
		sb_error_wrap(err, _("cannot read CA file"));
		return rc;
	}
	if (curl_easy_getinfo(c->curl, CURLINFO_CAINFO, &default_path) == CURLE_OK && default_path &&
	    sb_fs_read_file(&system, &system_len, default_path, CA_BUNDLE_MAX, NULL) < 0)
		system_len = 0;
	c->ca_blob = malloc(system_len + 1 + extra_len);
	if (!c->ca_blob) {
		free(system);
		free(extra);
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	if (system_len)
		memcpy(c->ca_blob, system, system_len);
	c->ca_blob[system_len] = '\n';
	memcpy(c->ca_blob + system_len + 1, extra, extra_len);
	c->ca_blob_len = system_len + 1 + extra_len;
	free(system);
	free(extra);
	return 0;
}

int sb_registry_client_new(struct sb_registry_client **out, struct sb_root *root, const char *registry,
			   const char *repository, const struct sb_registry_opts *opts, struct sb_error *err)
{
	struct sb_registry_client *c;
	int rc;

	*out = NULL;
	if ((rc = sb_curl_load(err)) < 0)
		return rc;
	if (!(c = calloc(1, sizeof(*c))))
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	c->insecure = opts->insecure;
	c->registry = strdup(registry);
	c->repository = strdup(repository);
	c->base = sb_strdupf("%s://%s", opts->insecure ? "http" : "https", sb_registry_api_host(registry));
	c->curl = curl_easy_init();
	if (!c->registry || !c->repository || !c->base || !c->curl) {
		sb_registry_client_free(c);
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	rc = sb_registry_creds_load(&c->creds, root, opts->creds_file, registry, err);
	if (rc == 0 && opts->ca_file)
		rc = load_ca_blob(c, opts->ca_file, err);
	if (rc < 0) {
		sb_registry_client_free(c);
		return rc;
	}
	curl_easy_setopt(c->curl, CURLOPT_PROTOCOLS_STR, "http,https");
	/* never downgrade an HTTPS session to plain HTTP through a redirect */
	curl_easy_setopt(c->curl, CURLOPT_REDIR_PROTOCOLS_STR, opts->insecure ? "http,https" : "https");
	curl_easy_setopt(c->curl, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(c->curl, CURLOPT_MAXREDIRS, 10L);
	curl_easy_setopt(c->curl, CURLOPT_CONNECTTIMEOUT, 30L);
	/* a stalled transfer is a dropped one: let the retry logic resume it */
	curl_easy_setopt(c->curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(c->curl, CURLOPT_LOW_SPEED_TIME, 60L);
	curl_easy_setopt(c->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c->curl, CURLOPT_BUFFERSIZE, 256L * 1024);
	curl_easy_setopt(c->curl, CURLOPT_USERAGENT, PACKAGE_NAME "/" PACKAGE_VERSION);
	curl_easy_setopt(c->curl, CURLOPT_ERRORBUFFER, c->curl_msg);
	curl_easy_setopt(c->curl, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c->curl, CURLOPT_HEADERDATA, c);
	curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, c);
	if (c->ca_blob) {
		struct curl_blob blob = { .data = c->ca_blob, .len = c->ca_blob_len, .flags = CURL_BLOB_NOCOPY };
		curl_easy_setopt(c->curl, CURLOPT_CAINFO_BLOB, &blob);
	}
	*out = c;
	return 0;
}

void sb_registry_client_free(struct sb_registry_client *c)
{
	if (!c)
		return;
	response_reset(&c->resp);
	curl_easy_cleanup(c->curl);
	sb_registry_creds_clear(&c->creds);
	free(c->registry);
	free(c->repository);
	free(c->base);
	free(c->authorization);
	free(c->ca_blob);
	free(c);
}

static size_t on_read(char *buf, size_t size, size_t n, void *user)
{
	struct sb_registry_body *b = user;
	size_t want = size * n;
	ssize_t got;

	if (!b)
		return 0;
	if (want > b->len - b->pos)
		want = (size_t)(b->len - b->pos);
	if (want == 0)
		return 0;
	if (b->data) {
		memcpy(buf, (const char *)b->data + b->pos, want);
	} else {
		got = pread(b->fd, buf, want, (off_t)(b->offset + b->pos));
		if (got <= 0) {
			b->read_errno = got < 0 ? errno : EIO;
			return CURL_READFUNC_ABORT;
		}
		want = (size_t)got;
	}
	b->pos += want;
	if (b->sent)
		b->sent(b->user, b->pos);
	return want;
}

/* curl rewinds the body to send it again on a new connection. */
static int on_seek(void *user, curl_off_t offset, int origin)
{
	struct sb_registry_body *b = user;

	if (origin != SEEK_SET || offset < 0 || (unsigned long long)offset > (b ? b->len : 0))
		return CURL_SEEKFUNC_CANTSEEK;
	if (b)
		b->pos = (unsigned long long)offset;
	return CURL_SEEKFUNC_OK;
}

/* The request's header lines, NULL-terminated in lines (5 slots); malloc'd
 * ones are also in owned (3 slots). */
static int header_lines(const char *lines[5], char *owned[3], const char *auth, const struct sb_registry_request *req)
{
	size_t n = 0, k = 0;

	lines[n++] = "Expect:";
	if (req->accept && !(lines[n++] = owned[k++] = sb_strdupf("Accept: %s", req->accept)))
		return -1;
	if (req->content_type && !(lines[n++] = owned[k++] = sb_strdupf("Content-Type: %s", req->content_type)))
		return -1;
	if (req->content_range && !(lines[n++] = owned[k++] = sb_strdupf("Content-Range: %s", req->content_range)))
		return -1;
	if (auth)
		lines[n++] = auth;
	while (n < 5)
		lines[n++] = NULL;
	return 0;
}

/* Sets the method, the body and the header list on the handle. */
static int prepare(struct sb_registry_client *c, const char *url, const char *auth,
		   const struct sb_registry_request *req, struct curl_slist **headers)
{
	const char *method = req->method ? req->method : "GET", *lines[5];
	char *owned[3] = { NULL, NULL, NULL }, range[32];
	int upload = strcmp(method, "GET") && strcmp(method, "HEAD"), rc = header_lines(lines, owned, auth, req);
	struct sb_registry_body *body = req->body;

	*headers = NULL;
	for (size_t i = 0; rc == 0 && i < 5 && lines[i]; i++) {
		struct curl_slist *more = curl_slist_append(*headers, lines[i]);
		if (!more)
			rc = -1;
		else
			*headers = more;
	}
	for (size_t i = 0; i < 3; i++)
		free(owned[i]);
	if (rc < 0)
		return rc;
	if (body) {
		body->pos = 0;
		body->read_errno = 0;
	}
	snprintf(range, sizeof(range), "%llu-", req->range_from);
	curl_easy_setopt(c->curl, CURLOPT_URL, url);
	curl_easy_setopt(c->curl, CURLOPT_HTTPGET, 1L);
	curl_easy_setopt(c->curl, CURLOPT_NOBODY, strcmp(method, "HEAD") ? 0L : 1L);
	curl_easy_setopt(c->curl, CURLOPT_UPLOAD, (long)upload);
	/* PUT is the upload's own method; others name theirs */
	curl_easy_setopt(c->curl, CURLOPT_CUSTOMREQUEST, upload && strcmp(method, "PUT") ? method : NULL);
	curl_easy_setopt(c->curl, CURLOPT_INFILESIZE_LARGE, (curl_off_t)(upload && body ? body->len : 0));
	curl_easy_setopt(c->curl, CURLOPT_READFUNCTION, on_read);
	curl_easy_setopt(c->curl, CURLOPT_READDATA, body);
	curl_easy_setopt(c->curl, CURLOPT_SEEKFUNCTION, on_seek);
	curl_easy_setopt(c->curl, CURLOPT_SEEKDATA, body);
	/* an upload's 3xx is an answer, not a place to send the body again */
	curl_easy_setopt(c->curl, CURLOPT_FOLLOWLOCATION, upload ? 0L : 1L);
	curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, *headers);
	curl_easy_setopt(c->curl, CURLOPT_RANGE, req->range_from ? range : NULL);
	return 0;
}

int sb_registry_http(struct sb_registry_client *c, const char *url, const char *header,
		     const struct sb_registry_request *req, struct sb_error *err)
{
	struct curl_slist *headers = NULL;
	CURLcode res;

	if (prepare(c, url, header, req, &headers) < 0) {
		curl_slist_free_all(headers);
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	response_reset(&c->resp);
	c->sink = req->sink;
	c->sink_rc = 0;
	c->curl_msg[0] = '\0';
	if (req->range_from)
		sb_log("registry: %s %s from byte %llu", req->method ? req->method : "GET", url, req->range_from);
	else
		sb_log("registry: %s %s", req->method ? req->method : "GET", url);
	res = curl_easy_perform(c->curl);
	c->sink = NULL;
	/* the handle must not keep pointers into this call's stack */
	curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, NULL);
	curl_easy_setopt(c->curl, CURLOPT_READDATA, NULL);
	curl_easy_setopt(c->curl, CURLOPT_SEEKDATA, NULL);
	curl_slist_free_all(headers);
	curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &c->resp.status);
	c->last_curl = res;
	if (res == CURLE_WRITE_ERROR && c->sink_rc < 0) {
		if (err)
			*err = c->sink_err;
		return c->sink_rc;
	}
	if (res == CURLE_ABORTED_BY_CALLBACK && req->body && req->body->read_errno)
		return sb_error_errno(err, SB_ERR_IO, req->body->read_errno, _("cannot read what is sent to %s"), url);
	if (res != CURLE_OK)
		return sb_error_set(err, SB_ERR_NETWORK, _("cannot fetch %s: %s"), url,
				    c->curl_msg[0] ? c->curl_msg : curl_easy_strerror(res));
	return 0;
}

/* Failures worth resuming: the connection went away or stalled mid-transfer. */
static const CURLcode transient_codes[] = {
	CURLE_PARTIAL_FILE, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_GOT_NOTHING,
	CURLE_OPERATION_TIMEDOUT, CURLE_HTTP2_STREAM,
};

int sb_registry_transient(const struct sb_registry_client *c)
{
	for (size_t i = 0; i < sizeof(transient_codes) / sizeof(transient_codes[0]); i++)
		if (c->last_curl == transient_codes[i])
			return 1;
	return 0;
}

/* 1 when url is on the registry's own origin (our credentials may go there). */
static int own_origin(const struct sb_registry_client *c, const char *url)
{
	size_t n = strlen(c->base);

	return !strncmp(url, c->base, n) && (url[n] == '/' || url[n] == '\0');
}

int sb_registry_request(struct sb_registry_client *c, const char *target, const struct sb_registry_request *req,
			struct sb_error *err)
{
	char *url = target[0] == '/' ? sb_strdupf("%s%s", c->base, target) : strdup(target);
	int rc = 0, own;

	if (!url)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	own = own_origin(c, url);
	/* the first 401 is a challenge to answer; a second one is a refusal */
	for (int round = 0; round < 2; round++) {
		rc = sb_registry_http(c, url, own ? c->authorization : NULL, req, err);
		if (rc < 0 || c->resp.status != 401 || !own)
			break;
		if (round == 1 || !c->resp.www_authenticate) {
			rc = c->creds.user ? sb_error_set(err, SB_ERR_AUTH, _("registry %s refused the credentials of '%s'"),
							  c->registry, c->creds.user)
					   : sb_error_set(err, SB_ERR_AUTH,
							  _("registry %s requires credentials (--creds FILE or an entry in ROOT/credentials.json)"),
							  c->registry);
			break;
		}
		if ((rc = sb_registry_auth_answer(c, c->resp.www_authenticate, err)) < 0)
			break;
	}
	if (rc == 0 && c->resp.status == 403)
		rc = sb_error_set(err, SB_ERR_AUTH, _("registry %s denied access to %s"), c->registry, c->repository);
	free(url);
	return rc;
}

int sb_registry_get(struct sb_registry_client *c, const char *path, const char *accept,
		    unsigned long long range_from, const struct sb_registry_sink *sink, struct sb_error *err)
{
	struct sb_registry_request req = { .accept = accept, .range_from = range_from, .sink = sink };

	return sb_registry_request(c, path, &req, err);
}

int sb_registry_probe(struct sb_registry_client *c, struct sb_error *err)
{
	int rc;

	if (c->probed)
		return 0;
	if ((rc = sb_registry_get(c, "/v2/", NULL, 0, NULL, err)) < 0)
		return rc;
	if (c->resp.status < 200 || c->resp.status > 299)
		return sb_error_set(err, SB_ERR_NETWORK, _("%s does not answer as a registry (HTTP %ld for /v2/)"),
				    c->base, c->resp.status);
	c->probed = 1;
	return 0;
}
