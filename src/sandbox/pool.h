/* The warm pool (docs/pool.md): booted sandboxes kept ready per profile
 * (image pinned by digest, network, memory, cpus), claimed by create when a
 * request matches a profile. Members live under ROOT/sandboxes/ with the
 * reserved name prefix SB_POOL_PREFIX, which users cannot give: listings,
 * reap and cleanup do not see them; gc reconciles them like any sandbox.
 * Profiles: ROOT/pool/profiles.json (atomic, under ROOT/pool/lock). */
#ifndef SB_SANDBOX_POOL_H
#define SB_SANDBOX_POOL_H

#include <stddef.h>
#include <sys/types.h>

#include "base/error.h"
#include "base/root.h"
#include "sandbox/sandbox.h"

#define SB_POOL_PREFIX "_pool-"
#define SB_POOL_SIZE_MAX 64

struct sb_pool_profile {
	char *image;                             /* the reference as given */
	char digest[SB_DIGEST_STR_LEN];          /* pinned manifest digest */
	int network;                             /* 0 off, 1 on */
	unsigned long long memory;               /* bytes (resolved against the settings) */
	double cpus;                             /* 0: no limit */
	int size;                                /* members wanted */
	int ready;                               /* members booted and matching (listing only) */
	char **members;                          /* their internal names (listing only) */
	size_t n_members;
};

/* Sets (adds or replaces) the profile of image and network (an image may
 * have one with network off and one with it on): size 1..SB_POOL_SIZE_MAX,
 * network -1 for the default, memory 0 and cpus 0 for the defaults. Members
 * are booted by the next refill (the caller starts one). */
int sb_pool_set(struct sb_root *root, const char *image, int size, int network, unsigned long long memory,
		double cpus, struct sb_error *err);
/* Profiles with their ready members. */
int sb_pool_list(struct sb_pool_profile **out, size_t *count, struct sb_root *root, struct sb_error *err);
void sb_pool_list_free(struct sb_pool_profile *list, size_t count);
json_t *sb_pool_profile_json(const struct sb_pool_profile *p);
/* Removes the profiles of image (NULL: every profile) and their members;
 * SB_ERR_NOTFOUND when there is no such profile. *removed: members removed. */
int sb_pool_remove(size_t *removed, struct sb_root *root, const char *image, struct sb_error *err);
/* Boots what the profiles lack and removes members that no profile wants
 * or that are not running. One refill at a time (ROOT/pool/refill.lock):
 * when another runs, 0 without doing anything, or with wait after it ended.
 * Failures go to the log and ROOT/pool/refill.log; *failed (may be NULL)
 * counts them. */
int sb_pool_refill(size_t *failed, struct sb_root *root, int wait, struct sb_error *err);
/* sb_pool_refill with wait in a detached process (double fork, setsid,
 * stdio on /dev/null): the caller does not wait for it. Its pid goes to
 * ROOT/pool/refill.pid. Nothing when there is no profile. */
void sb_pool_refill_detached(struct sb_root *root);
/* 1 when a refill holds ROOT/pool/refill.lock now. */
int sb_pool_refilling(struct sb_root *root);
/* 1 when name is a pool member's (reserved) name. */
int sb_pool_member_name(const char *name);

#endif
