/* OpenSSL's libcrypto, loaded on first use (see dynlib.h): only digests (pulls,
 * imports, the blob store) and basic auth need it. crypto_dl.c defines the
 * EVP_* functions sandbench calls and forwards them. */
#ifndef SB_CRYPTO_DL_H
#define SB_CRYPTO_DL_H

#include "base/error.h"

/* Loads libcrypto now; SB_ERR_PREREQ naming the package when it is missing. */
int sb_crypto_load(struct sb_error *err);

#endif
