/* The registry suites' fixture (test-registry, test-push): see regfixture.c. */
#ifndef SB_TEST_REGFIXTURE_H
#define SB_TEST_REGFIXTURE_H

#include <sys/types.h>

#include "base/root.h"

struct regf {
	char *dir;                /* this test's scratch directory */
	char *regdir;             /* the docker-registry's directory in it */
	char *script;             /* tests/fixtures/registry.sh */
	struct sb_root *root;     /* a state root in dir */
	int port;                 /* of the docker-registry, once started */
};
extern struct regf rf;

/* .init and .fini of a suite. */
void rf_setup(void);
void rf_teardown(void);
/* KEY from the images' digests file (BUSYBOX_MANIFEST, ...), malloc'd. */
char *rf_image_digest(const char *key);
/* The OCI layout of a test image (busybox, layered, multiarch, ...). */
char *rf_layout(const char *name);
/* Starts docker-registry (registry.sh options or NULL); sets rf.port. */
void rf_start_registry(const char *options);
/* skopeo copy of a test image to the registry as dest, with extra options. */
void rf_push(const char *image, const char *dest, const char *extra);
/* Starts a python3 fixture server in the background; returns its port. */
int rf_start_server(const char *fixture, const char *args, const char *port_file);
/* bad-registry.py serving the test image with faults; returns its port. */
int rf_start_bad_registry(const char *image, const char *faults);
/* "127.0.0.1:PORT/name" (malloc'd). */
char *rf_ref_at(int port, const char *name);
/* Lines of file matching the grep pattern. */
int rf_count_lines(const char *file, const char *pattern);
/* Writes text to a file of the given mode in rf.dir; its path (malloc'd). */
char *rf_write_secret(const char *name, const char *text, mode_t mode);
/* docker-registry with htpasswd auth (alice / s3cret:x) holding sb/busybox. */
void rf_start_htpasswd_registry(void);
/* token-server.py (server_args) and docker-registry trusting it, holding
 * sb/busybox; returns the token server's port. */
int rf_start_token_registry(const char *server_args);

#endif
