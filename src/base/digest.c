#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/crypto_dl.h"
#include "base/digest.h"
#include "base/i18n.h"

struct sb_sha256 {
	EVP_MD_CTX *ctx;
};

int sb_sha256_new(struct sb_sha256 **out, struct sb_error *err)
{
	struct sb_sha256 *h;
	int rc;

	*out = NULL;
	if ((rc = sb_crypto_load(err)) < 0)
		return rc;
	if (!(h = calloc(1, sizeof(*h))))
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	h->ctx = EVP_MD_CTX_new();
	if (!h->ctx || EVP_DigestInit_ex(h->ctx, EVP_sha256(), NULL) != 1) {
		sb_sha256_free(h);
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	*out = h;
	return 0;
}

void sb_sha256_free(struct sb_sha256 *h)
{
	if (!h)
		return;
	EVP_MD_CTX_free(h->ctx);
	free(h);
}

void sb_sha256_update(struct sb_sha256 *h, const void *data, size_t len)
{
	EVP_DigestUpdate(h->ctx, data, len);
}

static void to_digest(char out[SB_DIGEST_STR_LEN], const unsigned char *md)
{
	static const char hex[] = "0123456789abcdef";

	memcpy(out, "sha256:", 7);
	for (int i = 0; i < 32; i++) {
		out[7 + 2 * i] = hex[md[i] >> 4];
		out[8 + 2 * i] = hex[md[i] & 15];
	}
	out[SB_DIGEST_STR_LEN - 1] = '\0';
}

void sb_sha256_final(char out[SB_DIGEST_STR_LEN], struct sb_sha256 *h)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	EVP_DigestFinal_ex(h->ctx, md, &n);
	to_digest(out, md);
}

int sb_sha256_buffer(char out[SB_DIGEST_STR_LEN], const void *data, size_t len, struct sb_error *err)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	int rc;

	if ((rc = sb_crypto_load(err)) < 0)
		return rc;
	if (EVP_Digest(data, len, md, &n, EVP_sha256(), NULL) != 1)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	to_digest(out, md);
	return 0;
}

int sb_sha256_file(char out[SB_DIGEST_STR_LEN], const char *path, struct sb_error *err)
{
	char buf[1 << 16];
	struct sb_sha256 *h;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t r;

	if (fd < 0)
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot read '%s'"), path);
	int rc = sb_sha256_new(&h, err);
	if (rc < 0) {
		close(fd);
		return rc;
	}
	while ((r = read(fd, buf, sizeof(buf))) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			sb_sha256_free(h);
			close(fd);
			return sb_error_errno(err, SB_ERR_IO, e, _("cannot read '%s'"), path);
		}
		sb_sha256_update(h, buf, (size_t)r);
	}
	close(fd);
	sb_sha256_final(out, h);
	sb_sha256_free(h);
	return 0;
}

int sb_digest_valid(const char *s)
{
	if (!s || strncmp(s, "sha256:", 7) != 0)
		return 0;
	s += 7;
	for (int i = 0; i < SB_DIGEST_HEX_LEN; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return s[SB_DIGEST_HEX_LEN] == '\0';
}

const char *sb_digest_hex(const char *digest)
{
	return digest + 7;
}
