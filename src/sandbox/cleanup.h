/* Review and cleanup (docs/workbench.md): the cleanup plan (everything stale,
 * what removing it frees and keeps), the owners of sandboxes and when they are
 * gone, the exposure of each sandbox. The workbench, the CLI's cleanup and
 * owner commands build on these; they read the root, never guess its layout. */
#ifndef SB_CLEANUP_H
#define SB_CLEANUP_H

#include <jansson.h>
#include <stddef.h>

#include "base/error.h"
#include "base/root.h"

/* The disk of one sandbox, in bytes allocated (st_blocks), each inode once.
 * Measured with lstat only (a guest symlink is a link, never followed) and
 * without crossing into another file system (the rootfs overlay mount). */
struct sb_disk_usage {
	unsigned long long upper;        /* overlay upper: what the sandbox wrote */
	unsigned long long workspace;
	unsigned long long checkpoint;   /* memory kept on disk */
	unsigned long long sessions;     /* session logs */
	unsigned long long other;        /* record, timeline, bundle, ... */
	unsigned long long total;        /* all of the sandbox's folder */
};
int sb_sandbox_disk_usage(struct sb_disk_usage *out, struct sb_root *root, const char *name, struct sb_error *err);

enum sb_cleanup_kind {
	SB_CLEANUP_SANDBOX,              /* action: remove (or expire: its expiry action) */
	SB_CLEANUP_IMAGE,                /* action: image rm (all its references) */
	SB_CLEANUP_PRUNE,                /* action: image prune (blobs, trees, partial downloads) */
	SB_CLEANUP_GC,                   /* action: gc (the whole reconciliation) */
};

enum sb_cleanup_reason {
	SB_STALE_EXPIRED,                /* idle temporary past its expiry */
	SB_STALE_EXPIRING,               /* idle temporary expiring within the plan's horizon */
	SB_STALE_BROKEN,
	SB_STALE_NO_CHECKPOINT,          /* stopped with no memory kept: only its disk is left */
	SB_STALE_OWNER_GONE,
	SB_STALE_UNUSED_IMAGE,           /* no sandbox uses it */
	SB_STALE_UNREFERENCED,           /* blobs and trees of no image */
	SB_STALE_GC,                     /* a finding of gc's dry run */
};

enum sb_cleanup_keeps {
	SB_KEEP_WORKSPACE = 1 << 0,      /* the action keeps the sandbox's disk and workspace (expiry: stop) */
	SB_KEEP_EXCHANGE = 1 << 1,       /* the exchange folder it mounts stays */
	SB_KEEP_HOST_FOLDERS = 1 << 2,   /* the host folders it mounts stay */
};

struct sb_cleanup_item {
	enum sb_cleanup_kind kind;
	enum sb_cleanup_reason reason;
	char name[256];                  /* the sandbox, the image (reference or digest), gc's object */
	char detail[256];                /* why, for people ("idle 2h07m", "owner plugin:x gone") */
	const char *action;              /* "rm", "rm --force", "stop", "image rm", "image prune", "gc" */
	unsigned long long bytes;        /* freed (a measure of now; gc's findings: 0) */
	unsigned keeps;                  /* enum sb_cleanup_keeps */
	size_t host_folders;             /* how many host folders it mounts */
	int permanent;                   /* a permanent sandbox: its workspace goes for good */
	char gc_kind[16];                /* SB_CLEANUP_GC: the finding's kind */
	char digest[80];                 /* SB_CLEANUP_IMAGE: the image's manifest digest */
	long long horizon;               /* the plan's horizon (apply looks again with it) */
	/* after sb_cleanup_apply */
	int applied;
	int rc;                          /* 0, or the negative error */
	char message[1024];              /* the error, or what was done */
};

struct sb_cleanup_plan {
	struct sb_cleanup_item *items;
	size_t count;
	unsigned long long bytes;        /* of all items */
};

/* Everything stale now, sandboxes first (by name), then images, prune, gc;
 * horizon: seconds, temporaries expiring within it are listed too (0: none).
 * Dry runs only (reap's, gc's, image prune's): changes nothing, except that
 * the owners' state file learns who was seen. */
int sb_cleanup_plan(struct sb_cleanup_plan **out, struct sb_root *root, long long horizon, struct sb_error *err);
void sb_cleanup_plan_free(struct sb_cleanup_plan *plan);
/* Applies one item and fills its applied, rc and message. A sandbox is
 * looked at again first: one no longer stale (touched, restored) is left
 * alone with SB_ERR_STATE. Returns item->rc. */
int sb_cleanup_apply(struct sb_cleanup_item *item, struct sb_root *root);
/* Stable names ("expired", "broken", ...) and the JSON form of an item. */
const char *sb_cleanup_reason_name(enum sb_cleanup_reason reason);
json_t *sb_cleanup_item_json(const struct sb_cleanup_item *item);

/* Owners. An owner is seen when any of its sandboxes has activity; it is
 * gone after owner_gone_after (configuration) without any, or once removed
 * with sb_owner_remove (until one of its sandboxes is active again).
 * ROOT/owners.json keeps when each was last seen and removed. */
#define SB_OWNER_MAX 256
struct sb_owner {
	char name[SB_OWNER_MAX];
	size_t sandboxes;
	long long last_seen;             /* unix seconds; 0: never */
	long long removed;               /* unix seconds of owner rm; 0: not removed */
	int gone;
};
/* All owners (of a sandbox, or remembered), sorted by name. */
int sb_owner_list(struct sb_owner **out, size_t *count, struct sb_root *root, struct sb_error *err);
void sb_owner_list_free(struct sb_owner *list);
/* SB_ERR_INVALID for a name that cannot be an owner, SB_ERR_NOTFOUND for one
 * that is unknown. */
int sb_owner_remove(struct sb_root *root, const char *owner, struct sb_error *err);
int sb_owner_name_check(const char *owner, struct sb_error *err);

/* Exposure: what a sandbox reaches and what reaches it, beyond the defaults. */
enum sb_exposure_warn {
	SB_EXPOSE_NETWORK = 1 << 0,      /* network on */
	SB_EXPOSE_OPEN_EGRESS = 1 << 1,  /* ... with the default policy (the internet), not an allow-list */
	SB_EXPOSE_PUBLISHED = 1 << 2,    /* a port published on a non-loopback address */
	SB_EXPOSE_RW_MOUNT = 1 << 3,     /* a host folder mounted read-write */
	SB_EXPOSE_SENSITIVE = 1 << 4,    /* a sensitive host folder accepted */
};
struct sb_exposure {
	char name[64];
	char owner[SB_OWNER_MAX];
	const char *state;               /* "running", ... */
	int network;
	char *egress;                    /* the policy for people ("deny-all", "allow ..."); "" when off */
	char *published;                 /* "127.0.0.1:8080->80 ..."; "" when none */
	char *rw_mounts;                 /* "HOST:PATH ..." of the read-write host mounts; "" when none */
	size_t n_rw, n_ro, n_sensitive;
	int exchange;                    /* the shared exchange folder (the default: no warning) */
	unsigned long long denied;       /* connections the policy dropped (timeline) */
	unsigned warn;                   /* enum sb_exposure_warn: what widens access */
};
int sb_exposure_list(struct sb_exposure **out, size_t *count, struct sb_root *root, struct sb_error *err);
void sb_exposure_list_free(struct sb_exposure *list, size_t count);

#endif
