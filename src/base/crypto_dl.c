#include "config.h"

#include <openssl/evp.h>

#include "base/crypto_dl.h"
#include "internal.h"

/* Every libcrypto function sandbench calls: return type, name, parameters,
 * arguments. Callers load the library first (sb_crypto_load). */
#define CRYPTO_FUNCTIONS(F)                                                                                         \
	F(EVP_MD_CTX *, EVP_MD_CTX_new, (void), ())                                                                 \
	F(const EVP_MD *, EVP_sha256, (void), ())                                                                   \
	F(int, EVP_DigestInit_ex, (EVP_MD_CTX * ctx, const EVP_MD *type, ENGINE *impl), (ctx, type, impl))          \
	F(int, EVP_DigestUpdate, (EVP_MD_CTX * ctx, const void *data, size_t len), (ctx, data, len))                \
	F(int, EVP_DigestFinal_ex, (EVP_MD_CTX * ctx, unsigned char *md, unsigned int *len), (ctx, md, len))        \
	F(int, EVP_Digest, (const void *data, size_t len, unsigned char *md, unsigned int *mdlen, const EVP_MD *type, \
			    ENGINE *impl), (data, len, md, mdlen, type, impl))                                      \
	F(int, EVP_EncodeBlock, (unsigned char *t, const unsigned char *f, int n), (t, f, n))

#define SLOT(ret, name, params, args) ret(*name) params; /* NOLINT(bugprone-macro-parentheses): declarators */
static struct {
	CRYPTO_FUNCTIONS(SLOT)
	void (*EVP_MD_CTX_free)(EVP_MD_CTX *ctx);
} api;

#define SYMBOL(ret, name, params, args) { #name, (void **)&api.name },
static const struct sb_dynlib_symbol symbols[] = {
	CRYPTO_FUNCTIONS(SYMBOL)
	{ "EVP_MD_CTX_free", (void **)&api.EVP_MD_CTX_free },
};

static struct sb_dynlib lib = { "libcrypto.so.3", "libssl3", symbols, sizeof(symbols) / sizeof(symbols[0]), 0, "" };

int sb_crypto_load(struct sb_error *err)
{
	return sb_dynlib_load(&lib, err);
}

#define WRAPPER(ret, name, params, args)                                                                            \
	SB_DYNLIB_FORWARDER ret name params                                                                         \
	{                                                                                                           \
		return api.name args;                                                                               \
	}
CRYPTO_FUNCTIONS(WRAPPER)

SB_DYNLIB_FORWARDER void EVP_MD_CTX_free(EVP_MD_CTX *ctx)
{
	api.EVP_MD_CTX_free(ctx);
}
