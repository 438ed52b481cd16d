/* Internal to src/registry/: only its own files include this header. */
#ifndef SB_REGISTRY_INTERNAL_H
#define SB_REGISTRY_INTERNAL_H

#include <stddef.h>
#include <curl/curl.h>

#include "base/error.h"
#include "registry/registry.h"
#include "base/root.h"

/* Internal to the registry module: an HTTP session with one registry
 * repository (libcurl), its credentials and its authorisation. */
/* Where a successful (2xx) response body goes. */
struct sb_registry_sink {
	int (*write)(void *user, const void *data, size_t len, struct sb_error *err);
	void *user;
};

/* A bounded in-memory body (manifests, tokens). */
struct sb_registry_buf {
	char *data;        /* NUL-terminated */
	size_t len, max;
};

struct sb_registry_creds {
	char *user, *password;   /* both NULL: anonymous */
};

/* What a request sends: len bytes from memory, or of fd from offset on. */
struct sb_registry_body {
	const void *data;        /* NULL: read fd */
	int fd;
	unsigned long long offset, len;
	/* told the bytes sent so far, for progress (may be NULL) */
	void (*sent)(void *user, unsigned long long n);
	void *user;
	unsigned long long pos;  /* kept by the request */
	int read_errno;          /* set when reading fd failed */
};

/* One HTTP exchange with the registry (or its token server). */
struct sb_registry_request {
	const char *method;              /* "GET" (NULL), "HEAD", "POST", "PUT", "PATCH" */
	const char *accept;              /* Accept, or NULL */
	const char *content_type;        /* Content-Type of the body, or NULL */
	const char *content_range;       /* "START-END" of a chunk (PATCH), or NULL */
	unsigned long long range_from;   /* GET: > 0 asks for the bytes from there on */
	struct sb_registry_body *body;   /* POST, PUT and PATCH send it (NULL: empty) */
	const struct sb_registry_sink *sink;  /* where a 2xx body goes (NULL: dropped) */
};

/* The last response's status and the headers the protocol needs. */
struct sb_registry_response {
	long status;
	char *www_authenticate;
	char *content_digest;    /* Docker-Content-Digest */
	char *content_type;
	char *content_range;
	char *location;          /* Location: an upload's next URL */
	char *range;             /* Range: bytes an upload holds ("0-N") */
	char body_excerpt[512];  /* start of a non-2xx body, for messages */
	size_t excerpt_len;
};

struct sb_registry_client {
	CURL *curl;
	char *registry;          /* as in the reference: "docker.io", "127.0.0.1:5000" */
	char *base;              /* "https://registry-1.docker.io" */
	char *repository;
	struct sb_registry_creds creds;
	char *authorization;     /* "Authorization: ..." header once authorised */
	int insecure;
	unsigned char *ca_blob;  /* default CA bundle plus --ca-file */
	size_t ca_blob_len;
	struct sb_registry_response resp;
	const struct sb_registry_sink *sink;
	struct sb_error sink_err;
	int sink_rc;
	char curl_msg[CURL_ERROR_SIZE];
	CURLcode last_curl;
	int probed;
};

int sb_registry_client_new(struct sb_registry_client **out, struct sb_root *root, const char *registry,
			   const char *repository, const struct sb_registry_opts *opts, struct sb_error *err);
void sb_registry_client_free(struct sb_registry_client *c);

/* The request to target: a path of the registry ("/v2/...") or an absolute
 * URL it gave (a Location), answering auth challenges once. Our credentials
 * go only to the registry's own origin. Returns 0 when a response arrived (see
 * c->resp.status: only 2xx bodies reach the sink), SB_ERR_AUTH when the
 * registry refuses us, SB_ERR_NETWORK on transport failure (curl's reason),
 * SB_ERR_IO when the body could not be read, and the sink's error when it
 * failed. */
int sb_registry_request(struct sb_registry_client *c, const char *target, const struct sb_registry_request *req,
			struct sb_error *err);
/* sb_registry_request of a GET. */
int sb_registry_get(struct sb_registry_client *c, const char *path, const char *accept,
		    unsigned long long range_from, const struct sb_registry_sink *sink, struct sb_error *err);
/* One request to an absolute URL with an optional extra header line (the
 * authorisation), no auth handling: what the others are made of. */
int sb_registry_http(struct sb_registry_client *c, const char *url, const char *header,
		     const struct sb_registry_request *req, struct sb_error *err);
/* GET /v2/ once per client: says whether this is a registry and which auth it
 * wants. */
int sb_registry_probe(struct sb_registry_client *c, struct sb_error *err);
/* The curl code of the last transport failure, for the retry decision. */
int sb_registry_transient(const struct sb_registry_client *c);

int sb_registry_buf_write(void *user, const void *data, size_t len, struct sb_error *err);
void sb_registry_buf_clear(struct sb_registry_buf *b);

/* Where the API of a registry named in references lives (docker.io ->
 * registry-1.docker.io; others are their own). */
const char *sb_registry_api_host(const char *registry);

/* registry_auth.c */
int sb_registry_creds_load(struct sb_registry_creds *out, struct sb_root *root, const char *creds_file,
			   const char *registry, struct sb_error *err);
void sb_registry_creds_clear(struct sb_registry_creds *c);
/* Answers a 401's WWW-Authenticate challenge: sets c->authorization (Basic, or
 * a Bearer token fetched from the challenge's realm). */
int sb_registry_auth_answer(struct sb_registry_client *c, const char *challenge, struct sb_error *err);
/* The auth-params of a Bearer challenge (what follows the scheme):
 * key=value or key="quoted \" value", comma or blank separated; the first
 * realm, service and scope are kept (malloc'd), others ignored. -1 when
 * malformed or out of memory (what was kept stays in ch: clear it). */
struct sb_registry_challenge {
	char *realm, *service, *scope;
};
int sb_registry_challenge_parse(struct sb_registry_challenge *ch, const char *params);
void sb_registry_challenge_clear(struct sb_registry_challenge *ch);

#endif
