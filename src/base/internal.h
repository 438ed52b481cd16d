/* Internal to src/base/: only its own files include this header. */
#ifndef SB_BASE_INTERNAL_H
#define SB_BASE_INTERNAL_H

#include <stddef.h>

#include "base/error.h"

/* Libraries that only some commands need are loaded on first use, not at
 * program start: linking them would cost every sandbench process their
 * start-up (libcurl its TLS stack, libarchive libxml2 and ICU, libcrypto its
 * relocations), while an exec or an ls needs none of them. A wrapper module
 * per library (curl_dl.c, archive_dl.c, crypto_dl.c) defines the functions
 * sandbench calls under their own names and forwards them. */
/* On every forwarder: the program must not export it. A library linked at
 * start (libssh2 links libcrypto, in the test programs) would otherwise call
 * the forwarder instead of its own function, maybe before anything was loaded. */
#define SB_DYNLIB_FORWARDER __attribute__((visibility("hidden")))

struct sb_dynlib_symbol {
	const char *name;
	void **slot;
};

struct sb_dynlib {
	const char *soname;
	const char *package;     /* the Debian package that ships it */
	const struct sb_dynlib_symbol *symbols;
	size_t n_symbols;
	int state;               /* 0: not tried; 1: loaded; -1: failed */
	char error[256];
};

/* Loads the library and fills every symbol slot, once (thread-safe); later
 * calls return the first outcome. SB_ERR_PREREQ names the package. */
int sb_dynlib_load(struct sb_dynlib *lib, struct sb_error *err);
/* 1 when an earlier sb_dynlib_load succeeded (loads nothing itself). */
int sb_dynlib_loaded(const struct sb_dynlib *lib);

#endif
