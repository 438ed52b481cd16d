/* Host folders given to a sandbox (`--mount HOST:PATH[:ro|rw]`): parsing and
 * the policy that keeps credentials, kernel interfaces, container runtimes and
 * sandbench's own state out of sandboxes. */
#ifndef SB_MOUNT_POLICY_H
#define SB_MOUNT_POLICY_H

#include <stddef.h>

#include "error.h"

struct sb_mount {
	char *host;   /* resolved with realpath: no symlink left */
	char *path;   /* absolute, normalised path inside the sandbox */
	int rw;       /* 0: read-only (the default) */
};

struct sb_mount_policy {
	const char *state_root;  /* refused as a host path (with what is below and above it); may be NULL */
	int allow_sensitive;     /* accept the host paths of the deny list anyway */
};

/* Parses "HOST:PATH[:ro|rw]" (read-only unless ":rw" is written; HOST may
 * contain ':', PATH may not) and applies the policy. SB_ERR_INVALID for
 * syntax, SB_ERR_NOTFOUND for a missing host path, SB_ERR_UNSAFE for a host
 * path on the deny list or a reserved sandbox path. */
int sb_mount_parse(struct sb_mount *out, const char *spec, const struct sb_mount_policy *policy,
		   struct sb_error *err);
/* The same for a mount given as parts: resolves host, normalises path and
 * applies the policy. */
int sb_mount_resolve(struct sb_mount *out, const char *host, const char *path, int rw,
		     const struct sb_mount_policy *policy, struct sb_error *err);
/* Checks an already resolved mount again (e.g. from a record before a restart):
 * the host path must still resolve to itself and pass the policy. */
int sb_mount_check(const struct sb_mount *m, const struct sb_mount_policy *policy, struct sb_error *err);
/* Refuses two mounts at the same sandbox path or one below another. */
int sb_mount_check_overlaps(const struct sb_mount *mounts, size_t n, struct sb_error *err);
void sb_mount_clear(struct sb_mount *m);

#endif
