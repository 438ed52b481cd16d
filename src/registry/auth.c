#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>
#include <openssl/evp.h>

#include "base/crypto_dl.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "internal.h"

#define SECRET_MAX (64u << 10)
#define TOKEN_RESPONSE_MAX (1u << 20)

/* Reads a file holding secrets; refuses one that others could read. */
static int read_secret_file(char **out, const char *path, struct sb_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY), rc;
	struct stat st;
	size_t len;

	*out = NULL;
	if (fd < 0)
		return sb_error_errno(err, errno == ENOENT ? SB_ERR_NOTFOUND : SB_ERR_IO, errno,
				      _("cannot open credentials file '%s'"), path);
	if (fstat(fd, &st) < 0) {
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot stat credentials file '%s'"), path);
		close(fd);
		return rc;
	}
	close(fd);
	if (!S_ISREG(st.st_mode))
		return sb_error_set(err, SB_ERR_AUTH, _("credentials file '%s' is not a regular file"), path);
	if (st.st_mode & 077)
		return sb_error_set(err, SB_ERR_AUTH,
				    _("credentials file '%s' is accessible by others (mode %04o): chmod 600 it"), path,
				    (unsigned)(st.st_mode & 07777));
	if ((rc = sb_fs_read_file(out, &len, path, SECRET_MAX, err)) < 0)
		return rc;
	return 0;
}

static int set_creds(struct sb_registry_creds *out, const char *user, const char *password, struct sb_error *err)
{
	out->user = strdup(user);
	out->password = strdup(password);
	if (!out->user || !out->password) {
		sb_registry_creds_clear(out);
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	return 0;
}

/* --creds FILE: one line "user:password" (the password may contain ':'). */
static int creds_from_file(struct sb_registry_creds *out, const char *path, struct sb_error *err)
{
	char *text, *colon;
	int rc;

	if ((rc = read_secret_file(&text, path, err)) < 0)
		return rc;
	text[strcspn(text, "\r\n")] = '\0';
	colon = strchr(text, ':');
	if (!colon || colon == text) {
		free(text);
		return sb_error_set(err, SB_ERR_FORMAT, _("credentials file '%s' does not hold 'user:password'"), path);
	}
	*colon = '\0';
	rc = set_creds(out, text, colon + 1, err);
	explicit_bzero(colon + 1, strlen(colon + 1));
	free(text);
	return rc;
}

/* ROOT/credentials.json: {"registry-host": {"username": .., "password": ..}},
 * keyed by the name in references or by the API host (Docker Hub has both). */
static int creds_from_root(struct sb_registry_creds *out, struct sb_root *root, const char *registry,
			   struct sb_error *err)
{
	char *path = sb_root_file(root, "credentials.json"), *text = NULL;
	const char *user, *password;
	json_t *doc = NULL, *entry;
	json_error_t jerr;
	int rc;

	if (!path)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	rc = read_secret_file(&text, path, err);
	if (rc == SB_ERR_NOTFOUND) {
		free(path);
		return 0; /* anonymous */
	}
	if (rc == 0 && !(doc = json_loads(text, 0, &jerr)))
		rc = sb_error_set(err, SB_ERR_FORMAT, _("credentials file '%s' is not valid JSON (line %d: %s)"), path,
				  jerr.line, jerr.text);
	if (text) {
		explicit_bzero(text, strlen(text));
		free(text);
	}
	entry = json_object_get(doc, registry);
	if (!entry)
		entry = json_object_get(doc, sb_registry_api_host(registry));
	if (rc == 0 && entry) {
		user = json_string_value(json_object_get(entry, "username"));
		password = json_string_value(json_object_get(entry, "password"));
		rc = user && password ? set_creds(out, user, password, err)
				      : sb_error_set(err, SB_ERR_FORMAT,
						     _("credentials file '%s': the entry for %s needs \"username\" and \"password\""),
						     path, registry);
	}
	json_decref(doc);
	free(path);
	return rc;
}

int sb_registry_creds_load(struct sb_registry_creds *out, struct sb_root *root, const char *creds_file,
			   const char *registry, struct sb_error *err)
{
	out->user = out->password = NULL;
	return creds_file ? creds_from_file(out, creds_file, err) : creds_from_root(out, root, registry, err);
}

void sb_registry_creds_clear(struct sb_registry_creds *c)
{
	if (c->password)
		explicit_bzero(c->password, strlen(c->password));
	free(c->user);
	free(c->password);
	c->user = c->password = NULL;
}

/* "Authorization: Basic base64(user:password)" */
static int basic_header(char **out, const struct sb_registry_creds *creds, struct sb_error *err)
{
	char *plain;
	size_t len;
	unsigned char *b64;
	int rc;

	*out = NULL;
	if ((rc = sb_crypto_load(err)) < 0)
		return rc;
	if (!(plain = sb_strdupf("%s:%s", creds->user, creds->password)))
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	len = strlen(plain);
	b64 = malloc(4 * ((len + 2) / 3) + 1);
	if (b64) {
		EVP_EncodeBlock(b64, (const unsigned char *)plain, (int)len);
		*out = sb_strdupf("Authorization: Basic %s", (char *)b64);
		explicit_bzero(b64, strlen((char *)b64));
	}
	explicit_bzero(plain, len);
	free(plain);
	free(b64);
	return *out ? 0 : sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
}

static const struct {
	const char *name;
	size_t offset;
} challenge_params[] = {
	{ "realm", offsetof(struct sb_registry_challenge, realm) },
	{ "service", offsetof(struct sb_registry_challenge, service) },
	{ "scope", offsetof(struct sb_registry_challenge, scope) },
};

void sb_registry_challenge_clear(struct sb_registry_challenge *ch)
{
	free(ch->realm);
	free(ch->service);
	free(ch->scope);
}

int sb_registry_challenge_parse(struct sb_registry_challenge *ch, const char *p)
{
	while (*p) {
		const char *key, *end;
		size_t key_len;
		char *value, *v;

		while (*p == ' ' || *p == ',' || *p == '\t')
			p++;
		if (!*p)
			break;
		key = p;
		while (isalnum((unsigned char)*p) || *p == '_' || *p == '-')
			p++;
		key_len = (size_t)(p - key);
		if (*p != '=' || key_len == 0)
			return -1;
		p++;
		value = v = malloc(strlen(p) + 1);
		if (!value)
			return -1;
		if (*p == '"') {
			for (p++; *p && *p != '"'; p++) {
				if (*p == '\\' && p[1])
					p++;
				/* cppcheck-suppress uninitdata ; a write into the new buffer, not a read */
				*v++ = *p;
			}
			if (*p != '"') {
				free(value);
				return -1;
			}
			p++;
		} else {
			end = p + strcspn(p, ", \t");
			memcpy(v, p, (size_t)(end - p));
			v += end - p;
			p = end;
		}
		*v = '\0';
		for (size_t i = 0; i < sizeof(challenge_params) / sizeof(challenge_params[0]); i++) {
			char **field = (char **)((char *)ch + challenge_params[i].offset);
			if (strlen(challenge_params[i].name) == key_len &&
			    !strncasecmp(key, challenge_params[i].name, key_len) && !*field) {
				*field = value;
				value = NULL;
			}
		}
		free(value);
	}
	return 0;
}

static int fetch_token(struct sb_registry_client *c, const struct sb_registry_challenge *ch, struct sb_error *err)
{
	struct sb_registry_buf buf = { .max = TOKEN_RESPONSE_MAX };
	struct sb_registry_sink sink = { sb_registry_buf_write, &buf };
	char *default_scope = NULL;
	const char *scope = ch->scope;
	char *esc_service = NULL, *esc_scope = NULL, *url = NULL, *basic = NULL;
	const char *token;
	json_t *doc = NULL;
	int rc;

	if (!ch->realm)
		return sb_error_set(err, SB_ERR_FORMAT, _("registry %s sent a Bearer challenge without a realm"),
				    c->registry);
	/* the token request may carry the password: only over TLS unless told otherwise */
	if (strncasecmp(ch->realm, "https://", 8) != 0 && !(c->insecure && !strncasecmp(ch->realm, "http://", 7)))
		return sb_error_set(err, SB_ERR_UNSAFE, _("registry %s sends us to a token server that is not HTTPS: %s"),
				    c->registry, ch->realm);
	if (!scope)
		scope = default_scope = sb_strdupf("repository:%s:pull", c->repository);
	if (scope)
		esc_scope = curl_easy_escape(c->curl, scope, 0);
	if (ch->service)
		esc_service = curl_easy_escape(c->curl, ch->service, 0);
	if (esc_scope && (!ch->service || esc_service))
		url = sb_strdupf("%s%cscope=%s%s%s", ch->realm, strchr(ch->realm, '?') ? '&' : '?', esc_scope,
				 esc_service ? "&service=" : "", esc_service ? esc_service : "");
	if (c->creds.user && (rc = basic_header(&basic, &c->creds, err)) < 0)
		goto out;
	if (!url) {
		rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		goto out;
	}
	if ((rc = sb_registry_http(c, url, basic, &(struct sb_registry_request){ .accept = "application/json", .sink = &sink },
				   err)) < 0)
		goto out;
	if (c->resp.status == 401 || c->resp.status == 403) {
		rc = c->creds.user ? sb_error_set(err, SB_ERR_AUTH, _("token server %s refused the credentials of '%s'"),
						  ch->realm, c->creds.user)
				   : sb_error_set(err, SB_ERR_AUTH, _("token server %s requires credentials for %s"),
						  ch->realm, scope);
		goto out;
	}
	if (c->resp.status < 200 || c->resp.status > 299) {
		rc = sb_error_set(err, SB_ERR_NETWORK, _("token server %s answered HTTP %ld"), ch->realm, c->resp.status);
		goto out;
	}
	doc = json_loadb(buf.data ? buf.data : "", buf.len, 0, NULL);
	token = json_string_value(json_object_get(doc, "token"));
	if (!token)
		token = json_string_value(json_object_get(doc, "access_token"));
	if (!token || !*token) {
		rc = sb_error_set(err, SB_ERR_FORMAT, _("token server %s answered without a token"), ch->realm);
		goto out;
	}
	free(c->authorization);
	c->authorization = sb_strdupf("Authorization: Bearer %s", token);
	if (!c->authorization)
		rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
out:
	json_decref(doc);
	if (buf.data)
		explicit_bzero(buf.data, buf.len);
	sb_registry_buf_clear(&buf);
	if (basic)
		explicit_bzero(basic, strlen(basic));
	free(basic);
	free(url);
	curl_free(esc_scope);
	curl_free(esc_service);
	free(default_scope);
	return rc;
}

int sb_registry_auth_answer(struct sb_registry_client *c, const char *challenge, struct sb_error *err)
{
	size_t scheme_len = strcspn(challenge, " \t");
	struct sb_registry_challenge ch = { 0 };
	int rc;

	if (scheme_len == 5 && !strncasecmp(challenge, "Basic", 5)) {
		if (!c->creds.user)
			return sb_error_set(err, SB_ERR_AUTH,
					    _("registry %s requires credentials (--creds FILE or an entry in ROOT/credentials.json)"),
					    c->registry);
		free(c->authorization);
		return basic_header(&c->authorization, &c->creds, err);
	}
	if (scheme_len != 6 || strncasecmp(challenge, "Bearer", 6) != 0)
		return sb_error_set(err, SB_ERR_AUTH, _("registry %s asks for an unsupported authentication scheme: %.*s"),
				    c->registry, (int)scheme_len, challenge);
	if (sb_registry_challenge_parse(&ch, challenge + scheme_len) < 0)
		rc = sb_error_set(err, SB_ERR_FORMAT, _("registry %s sent a malformed challenge: %s"), c->registry,
				  challenge);
	else
		rc = fetch_token(c, &ch, err);
	sb_registry_challenge_clear(&ch);
	return rc;
}
