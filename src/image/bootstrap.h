/* The default image's base without a registry: Debian bookworm + python3
 * built with mmdebstrap from a Debian mirror when one is reachable, else a
 * busybox image from the host's static busybox. Either becomes an ordinary
 * pinned image under SB_IMAGE_BASE_NAME; the default image
 * (SB_IMAGE_DEFAULT_NAME) is built on it from a Dockerfile
 * (sandbox/build.h: sb_build_default_image). */
#ifndef SB_IMAGE_BOOTSTRAP_H
#define SB_IMAGE_BOOTSTRAP_H

#include "base/error.h"
#include "image/import.h"
#include "base/progress.h"
#include "base/root.h"

#define SB_IMAGE_DEFAULT_NAME "localhost/sandbench/default:latest"
#define SB_IMAGE_BASE_NAME "localhost/sandbench/base:latest"
#define SB_BOOTSTRAP_DEFAULT_MIRROR "http://deb.debian.org/debian"
#define SB_BOOTSTRAP_DEFAULT_BUSYBOX "/bin/busybox"

enum sb_bootstrap_kind {
	SB_BOOTSTRAP_AUTO,       /* Debian when the mirror answers and mmdebstrap is there, else busybox */
	SB_BOOTSTRAP_DEBIAN,
	SB_BOOTSTRAP_BUSYBOX,
};

struct sb_bootstrap_opts {
	enum sb_bootstrap_kind kind;
	const char *name;        /* NULL: SB_IMAGE_BASE_NAME */
	const char *mirror;      /* NULL: SB_BOOTSTRAP_DEFAULT_MIRROR */
	const char *busybox;     /* NULL: SB_BOOTSTRAP_DEFAULT_BUSYBOX */
	const struct sb_progress *progress;
};

struct sb_bootstrap_result {
	struct sb_image_import_result image;
	enum sb_bootstrap_kind built;        /* SB_BOOTSTRAP_DEBIAN or SB_BOOTSTRAP_BUSYBOX */
	char fallback_reason[1024];          /* why AUTO built busybox ("" otherwise) */
};

int sb_image_bootstrap(struct sb_bootstrap_result *out, struct sb_root *root, const struct sb_bootstrap_opts *opts,
		       struct sb_error *err);

#endif
