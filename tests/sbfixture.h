/* Sandbox test fixtures: a scratch state root holding a busybox image rootfs. */
#ifndef SB_SBFIXTURE_H
#define SB_SBFIXTURE_H

#include "base/root.h"

/* The busybox image (image bootstrap --busybox) in the fixture's root. */
#define SBF_IMAGE "busybox:test"

struct sbf {
	char *dir;               /* the state root */
	struct sb_root *root;
};

/* Makes the root and the busybox image; aborts the test on failure. */
void sbf_setup(struct sbf *f, const char *tag);
/* Removes every sandbox of the root (force), then the root. */
void sbf_teardown(struct sbf *f);
/* 1 when path (or a path below it) appears in /proc/self/mountinfo. */
int sbf_mounted_below(const char *path);
/* 1 when runsc (ROOT/runsc) still lists id. */
int sbf_runsc_has(const struct sbf *f, const char *id);
/* 1 when some /sys/fs/cgroup/<controller>/<id> exists. */
int sbf_cgroup_exists(const char *id);

#endif
