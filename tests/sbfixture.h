/* Sandbox test fixtures: a scratch state root holding a busybox image rootfs. */
#ifndef SB_SBFIXTURE_H
#define SB_SBFIXTURE_H

#include "base/root.h"
#include "testutil.h"

/* The busybox image (image bootstrap --busybox) in the fixture's root. */
#define SBF_IMAGE "busybox:test"

struct sbf {
	char *dir;               /* the state root */
	struct sb_root *root;
};

/* Makes the root and the busybox image; aborts the test on failure. */
void sbf_setup(struct sbf *f, const char *tag);
/* An image holding the busybox one plus the host's /bin/bash and the shared
 * libraries it needs (ldd), imported offline from a rootfs tar the test
 * makes: the busybox image has no bash. */
#define SBF_BASH_IMAGE "bash:test"
void sbf_bash_image(struct sbf *f);
/* Removes every sandbox of the root (force), then the root. */
void sbf_teardown(struct sbf *f);
/* 1 when path (or a path below it) appears in /proc/self/mountinfo. */
int sbf_mounted_below(const char *path);
/* 1 when runsc (ROOT/runsc) still lists id. */
int sbf_runsc_has(const struct sbf *f, const char *id);
/* 1 when some /sys/fs/cgroup/<controller>/<id> exists. */
int sbf_cgroup_exists(const char *id);
/* Asserts that the root is reconciled (when names the moment): every runsc
 * container, mount and cgroup of the root belongs to a running sandbox, each
 * sandbox folder to a listed sandbox, no state write left its temp file, and
 * with no sandbox running no process names the root. */
void sbf_assert_reconciled(const struct sbf *f, const char *when);
/* Asserts that a sandbench run succeeded (what names the step), then frees it. */
void sbf_ok(struct tu_run r, const char *what);
/* The output (malloc'd) of `sh -c cmd` run by `sandbench exec` in sandbox name
 * of f's root, with env (may be NULL). *status gets its exit status; with
 * status NULL a failure fails the test. */
char *sbf_sh(const struct sbf *f, const char *const *env, const char *name, const char *cmd, int *status);
/* Exit status of an HTTP GET of the network tests' marker file (nettest.h)
 * at target (an address or a name) and port from inside name (busybox nc);
 * 0 only when the marker came back. */
int sbf_get_marker(const struct sbf *f, const char *name, const char *target, int port);
/* What the sandbench runs given SANDBENCH_LOG=ROOT/log wrote there, read and
 * emptied (malloc'd; "" when nothing). */
char *sbf_take_log(const struct sbf *f);
/* The JSON that a command (tu_sandbench) printed, after asserting that it
 * succeeded and printed JSON; frees the run; the caller decrefs. */
json_t *sbf_run_json(struct tu_run r, const char *what);

#endif
