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

/* The last response's status and the headers the protocol needs. */
struct sb_registry_response {
	long status;
	char *www_authenticate;
	char *content_digest;    /* Docker-Content-Digest */
	char *content_type;
	char *content_range;
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
};

int sb_registry_client_new(struct sb_registry_client **out, struct sb_root *root, const char *registry,
			   const char *repository, const struct sb_registry_opts *opts, struct sb_error *err);
void sb_registry_client_free(struct sb_registry_client *c);

/* GET base + path (path starts with "/v2/"), answering auth challenges once.
 * range_from > 0 asks for the bytes from there on. Returns 0 when a response
 * arrived (see c->resp.status: only 2xx bodies reach the sink), SB_ERR_AUTH when
 * the registry refuses us, SB_ERR_NETWORK on transport failure (curl's reason)
 * and the sink's error when it failed. */
int sb_registry_get(struct sb_registry_client *c, const char *path, const char *accept,
		    unsigned long long range_from, const struct sb_registry_sink *sink, struct sb_error *err);
/* One GET of an absolute URL with an optional extra header, no auth handling. */
int sb_registry_http_get(struct sb_registry_client *c, const char *url, const char *header,
			 const char *accept, unsigned long long range_from, const struct sb_registry_sink *sink,
			 struct sb_error *err);
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

#endif
