/* Fuzz targets for the parsers that read untrusted input. Each target file
 * defines LLVMFuzzerTestOneInput; `make fuzz` links them with libFuzzer (clang),
 * and the Criterion suite test-fuzz-replay runs every corpus file through them
 * under the regular (and, in CI, sanitizer) build. */
#ifndef SB_FUZZ_H
#define SB_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fs.h"
#include "base/root.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A broken invariant: says which, then aborts (libFuzzer keeps the input). */
#define FUZZ_CHECK(cond)                                                                      \
	do {                                                                                  \
		if (!(cond)) {                                                                \
			fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, __LINE__, #cond); \
			abort();                                                              \
		}                                                                             \
	} while (0)

/* The input as a NUL-terminated string (malloc'd; aborts when out of memory). */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	FUZZ_CHECK(s);
	if (size)
		memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* A fresh directory under $TMPDIR (default /var/tmp; run-fuzz points it at a
 * tmpfs, where the targets that write files run 3 to 10 times faster). */
static inline char *fuzz_scratch_dir(const char *tag)
{
	const char *tmp = getenv("TMPDIR");
	size_t size = strlen(tmp && *tmp ? tmp : "/var/tmp") + strlen(tag) + 16;
	char *dir = malloc(size);

	FUZZ_CHECK(dir);
	snprintf(dir, size, "%s/sbtest-%s-XXXXXX", tmp && *tmp ? tmp : "/var/tmp", tag);
	FUZZ_CHECK(mkdtemp(dir));
	return dir;
}

/* One scratch state root per process (removed at exit): for the parsers
 * that read their input from a file of the root. */
static char *fuzz_root_dir;
static struct sb_root *fuzz_root_obj;

static inline void fuzz_root_cleanup(void)
{
	sb_root_close(fuzz_root_obj);
	sb_fs_remove_tree(fuzz_root_dir, NULL);
}

static inline struct sb_root *fuzz_root(void)
{
	if (!fuzz_root_obj) {
		fuzz_root_dir = fuzz_scratch_dir("fuzz");
		FUZZ_CHECK(sb_root_open(&fuzz_root_obj, fuzz_root_dir, NULL) == 0);
		atexit(fuzz_root_cleanup);
	}
	return fuzz_root_obj;
}

/* Writes size bytes to ROOT/rel (replacing it). */
static inline void fuzz_root_write(const char *rel, const uint8_t *data, size_t size)
{
	char *path = sb_root_file(fuzz_root(), rel);
	FILE *f = path ? fopen(path, "we") : NULL;

	FUZZ_CHECK(f);
	FUZZ_CHECK(fwrite(data, 1, size, f) == size || size == 0);
	FUZZ_CHECK(fclose(f) == 0);
	free(path);
}

#endif
