/* The OCI runtime spec (bundle/config.json) of a sandbox, built with jansson. */
#ifndef SB_SPEC_H
#define SB_SPEC_H

#include <jansson.h>

#include "base/error.h"
#include "sandbox/record.h"

struct sb_spec_params {
	const struct sb_record *rec;     /* name (hostname), mounts, resources */
	const char *rootfs;              /* absolute: the overlay mount point */
	const char *workspace;           /* host dir bound rw at /workspace */
	const char *exchange;            /* host dir bound rw at /exchange; NULL: none */
	const char *netns_path;          /* network namespace to join; NULL: a fresh one */
};

/* The process object of a spec or of `runsc exec --process`. env NULL: the
 * default environment; cwd NULL: /workspace. */
json_t *sb_spec_process(char *const *args, char *const *env, const char *cwd, int terminal,
			unsigned short rows, unsigned short cols);
int sb_spec_build(json_t **out, const struct sb_spec_params *p, struct sb_error *err);
/* Builds and writes bundle_dir/config.json (rewritten before every boot). */
int sb_spec_write(const char *bundle_dir, const struct sb_spec_params *p, struct sb_error *err);

#endif
