/* Internal to src/sandbox/: only its own files include this header. */
#ifndef SB_SANDBOX_INTERNAL_H
#define SB_SANDBOX_INTERNAL_H

#include <stddef.h>

#include "net/network.h"
#include "sandbox/record.h"
#include "base/root.h"
#include "sandbox/sandbox.h"
#include "backend/backend.h"
#include "sandbox/settings.h"
#include "base/error.h"

/* One sandbox opened for an operation, with its paths, its lock, its record
 * and its backend. */
enum box_lock {
	BOX_LOCK_NONE,
	BOX_LOCK_SHARED,                 /* exec, session: the record does not change */
	BOX_LOCK_EXCLUSIVE,              /* every state transition */
};

struct sb_box {
	struct sb_root *root;
	struct sb_record rec;
	int loaded;                      /* rec holds the record */
	char *dir, *rootfs, *upper, *work, *workspace, *checkpoint, *checkpoint_tmp, *checkpoint_used;
	char *activity, *sessions, *hosts, *resolv;
	char *exec_lock;                 /* held shared by every running exec: reap spares busy sandboxes */
	char *lower, *exchange;          /* filled by sb_box_target */
	int lock_fd;
	const struct sb_backend_ops *be; /* the record's backend, once opened */
	void *be_state;
	struct sb_backend_sandbox target;
	struct sb_settings settings;
	int container_stopped;           /* checkpointed: teardown need not kill it */
	struct sb_netinfo net;           /* network on: set up by sb_box_network_up */
	char *mounts;                    /* dir/mounts: where verified host folders are bound */
	char **mount_src;                /* dir/mounts/<i> per record mount, once staged for a boot */
	char *mount_changed;             /* why the last boot refused a host mount ("mount changed: ..."); NULL: none */
};

/* Fills the paths of sandbox name (checked) and takes its lock; with load, reads
 * the record too (SB_ERR_NOTFOUND naming the sandbox when there is none). */
int sb_box_open(struct sb_box *b, struct sb_root *root, const char *name, enum box_lock lock, int load,
		struct sb_error *err);
void sb_box_close(struct sb_box *b);
/* Takes the sandbox's lock (ROOT/sandboxes/<name>/lock). */
int sb_box_lock(struct sb_box *b, enum box_lock lock, struct sb_error *err);
/* Opens the record's backend on first use. */
int sb_box_backend(struct sb_box *b, struct sb_error *err);
/* The sandbox as its backend sees it, filled from the box and its record. */
const struct sb_backend_sandbox *sb_box_target(struct sb_box *b);
/* Verifies and stages the host mounts (sb_box_stage_mounts), sets the network
 * up, writes the files the host gives the sandbox (hosts, resolv.conf: in its
 * own directory, bound read-only) and boots it through its backend: cold, or
 * from the checkpoint in image_path. On failure the container is deleted again
 * (the disk stays mounted, mounts staged: the caller tears down). */
int sb_box_boot(struct sb_box *b, const char *image_path, struct sb_error *err);
/* Kills and deletes the runsc container, removes its leftover cgroups,
 * unmounts the disk and the staged host mounts. Missing pieces are fine;
 * errors are reported, not fatal with force. */
int sb_box_teardown(struct sb_box *b, int force, struct sb_error *err);
/* Why a record that says running has no live runtime. */
enum sb_gone {
	SB_ALIVE = 0,
	SB_GONE_RESTART,                 /* the host restarted since its last boot */
	SB_GONE_DIED,                    /* its sandbox process is gone */
};
/* Cheap (no runtime call): the boot id of its last boot, then the backend's
 * liveness check. SB_ALIVE for records not in state running. */
enum sb_gone sb_sandbox_gone(const struct sb_record *rec, const char *dir, const struct sb_backend_ops *be,
			     void *be_state);
const char *sb_gone_reason(enum sb_gone why);
enum sb_gone sb_box_gone(struct sb_box *b);
/* Makes a gone sandbox stopped (disk kept, restore cold-starts it) or, for a
 * temporary one whose host restarted, removes it (*removed = 1). The
 * exclusive lock is held. */
int sb_box_settle(struct sb_box *b, enum sb_gone why, int *removed, struct sb_error *err);
/* sb_box_settle when sb_box_gone says so; SB_ERR_NOTFOUND when that removed it. */
int sb_box_settle_if_gone(struct sb_box *b, struct sb_error *err);
/* Removes everything of the sandbox: its container (teardown), its network
 * and its directory, workspace included. */
int sb_box_destroy(struct sb_box *b, int force, struct sb_error *err);
/* Ends registered interactive sessions (hang-up, then kill) and waits for them. */
void sb_box_end_sessions(struct sb_box *b);
/* Kills the process inside whose pid an exec wrote to ipid_file; nothing
 * when there is none. */
void sb_box_kill_inside(struct sb_box *b, const char *ipid_file);
/* Marks an exec as running until the returned fd is closed (-1 on failure). */
int sb_box_exec_begin(struct sb_box *b);
/* 1 when some exec is running in the sandbox right now. */
int sb_box_exec_running(struct sb_box *b);
/* Touches the activity file (mtime = now, the injectable clock). */
int sb_box_touch(struct sb_box *b, struct sb_error *err);
/* Fills info from the box, taking over its record (b->loaded becomes 0). */
int sb_box_info(struct sb_sandbox_info *out, struct sb_box *b, struct sb_error *err);
/* The network configuration the settings ask for (bridge, subnet). */
struct sb_network_config sb_box_netcfg(const struct sb_settings *s);
/* With network on, sets up (or repairs: runsc strips the address) the
 * sandbox's network; nothing with network off. */
int sb_box_network_up(struct sb_box *b, struct sb_error *err);
/* Removes the sandbox's network (what exists of it); name is used when no
 * record was read. */
int sb_box_network_down(struct sb_box *b, const char *name, struct sb_error *err);
/* Rootfs of the record's image (ROOT/images/rootfs/<hex>). */
char *sb_box_lower(const struct sb_box *b);

/* Host folders given to a sandbox (`--mount HOST:PATH[:ro|rw]`): parsing and
 * the policy that keeps credentials, kernel interfaces, container runtimes and
 * sandbench's own state out of sandboxes. */
struct sb_mount {
	char *host;   /* resolved with realpath: no symlink left */
	char *path;   /* absolute, normalised path inside the sandbox */
	int rw;       /* 0: read-only (the default) */
};

struct sb_mount_policy {
	const char *state_root;  /* refused as a host path (with what is below and above it); may be NULL */
	int allow_sensitive;     /* accept the host paths of the deny list anyway */
};

/* Parses "HOST:PATH[:ro|rw]" (sb_sandbox_mount_parse) and applies the policy.
 * SB_ERR_INVALID for syntax, SB_ERR_NOTFOUND for a missing host path,
 * SB_ERR_UNSAFE for a host path on the deny list or a reserved sandbox path. */
int sb_mount_parse(struct sb_mount *out, const char *spec, const struct sb_mount_policy *policy,
		   struct sb_error *err);
/* The same for a mount given as parts: resolves host, normalises path and
 * applies the policy. */
int sb_mount_resolve(struct sb_mount *out, const char *host, const char *path, int rw,
		     const struct sb_mount_policy *policy, struct sb_error *err);
/* The policy's host rules for host, a path without symlinks; dirfd is the
 * folder there (an O_PATH fd will do) whose entries are checked, or -1 to
 * open it by its path. */
int sb_mount_check_host(const char *host, int dirfd, const struct sb_mount_policy *policy, struct sb_error *err);
/* Refuses two mounts at the same sandbox path or one below another. */
int sb_mount_check_overlaps(const struct sb_mount *mounts, size_t n, struct sb_error *err);
void sb_mount_clear(struct sb_mount *m);

/* Host mounts verified at every boot (mount_verify.c). A host path is walked
 * from "/" one component at a time without following a symlink. */
/* Device and inode of the folder at host (absolute, normalised): what create
 * records. SB_ERR_UNSAFE when a component is a symlink or not a folder,
 * SB_ERR_NOTFOUND when one is missing. */
int sb_mount_identify(unsigned long long *dev, unsigned long long *ino, const char *host, struct sb_error *err);
/* Before a boot: every host mount of the record is walked, its folder compared
 * with the device and inode recorded at create (none recorded: they are
 * recorded now, trust on first use) and checked against the mount policy;
 * the open folder itself, not its path, is then bound at dir/mounts/<i>
 * (private, read-only for ro mounts), which the backend gives the runtime.
 * A refusal sets b->mount_changed to the message ("mount changed: ..."). On
 * failure nothing stays staged. */
int sb_box_stage_mounts(struct sb_box *b, struct sb_error *err);
/* Unmounts (detached when busy) everything in dir/mounts; for teardown, and
 * for gc's leftovers. Nothing staged is fine. */
int sb_box_unstage_mounts(struct sb_box *b, struct sb_error *err);
/* 1 when a host folder is still bound in dir/mounts. */
int sb_box_mounts_staged(const struct sb_box *b);

#endif
