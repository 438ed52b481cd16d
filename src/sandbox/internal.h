/* Internal to src/sandbox/: only its own files include this header. */
#ifndef SB_SANDBOX_INTERNAL_H
#define SB_SANDBOX_INTERNAL_H

#include <stddef.h>
#include <sys/stat.h>

#include "net/network.h"
#include "sandbox/record.h"
#include "base/root.h"
#include "sandbox/sandbox.h"
#include "sandbox/files.h"
#include "backend/backend.h"
#include "sandbox/settings.h"
#include "base/error.h"
#include "sandbox/timeline.h"

/* One sandbox opened for an operation, with its paths, its lock, its record
 * and its backend. */
enum box_lock {
	BOX_LOCK_NONE,
	BOX_LOCK_SHARED,                 /* exec, shell: the record does not change */
	BOX_LOCK_EXCLUSIVE,              /* every state transition */
};

struct sb_box {
	struct sb_root *root;
	struct sb_record rec;
	int loaded;                      /* rec holds the record */
	char *dir, *rootfs, *upper, *work, *workspace, *checkpoint, *checkpoint_tmp, *checkpoint_used;
	char *activity, *shells, *hosts, *resolv;
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
	char *disk, *disk_image;         /* a capped disk (disk_limit.c): the mount point, the image */
	int capped;                      /* upper, work and workspace are on that disk */
	char **mount_src;                /* dir/mounts/<i> per record mount, once staged for a boot */
	char *mount_changed;             /* why the last boot refused a host mount ("mount changed: ..."); NULL: none */
};

/* A sandbox name or a warm pool member's (sb_sandbox_name_check refuses those). */
int sb_box_name_check(const char *name, struct sb_error *err);
/* sb_sandbox_create without the user's name check (the pool boots members
 * through it) and without the pool's claim. */
int sb_box_create(struct sb_sandbox_info *out, struct sb_root *root, const struct sb_sandbox_spec *spec,
		  struct sb_error *err);
/* The record a create of spec makes (new id, image resolved and pinned),
 * but for the image's configuration, which is not read: a pool member of
 * the same image digest has it (the claim takes it from there). */
int sb_box_new_record(struct sb_record *rec, struct sb_root *root, const struct sb_sandbox_spec *spec,
		      const struct sb_settings *set, struct sb_error *err);
/* Removes pool members no profile wants or that are not running, unless a
 * refill runs (it does the same); the root lock may be held. */
int sb_pool_prune(size_t *removed, struct sb_root *root, struct sb_error *err);
/* Claims a pool member for spec (pool_claim.c): 1 and *out when one
 * matched and is now spec's sandbox, 0 when none did (create boots), 2
 * when members were used up failing to (logged; create boots). */
int sb_pool_claim(struct sb_sandbox_info *out, struct sb_root *root, const struct sb_sandbox_spec *spec,
		  struct sb_error *err);
/* A pool member's namer (pool_namer.c): start starts it in the running
 * member name (nothing where the program or the backend's detached exec is
 * missing; a member it may have started in without its FIFOs is removed);
 * name gives a claimed member b its name through it: 0 named, 1 no namer
 * there (nothing sent: name it otherwise), negative when it failed. */
int sb_pool_namer_start(struct sb_root *root, const char *name, struct sb_error *err);
int sb_pool_namer_name(struct sb_box *b, struct sb_error *err);

/* Fills the paths of sandbox name (checked) and takes its lock; with load, reads
 * the record too (SB_ERR_NOTFOUND naming the sandbox when there is none). */
int sb_box_open(struct sb_box *b, struct sb_root *root, const char *name, enum box_lock lock, int load,
		struct sb_error *err);
void sb_box_close(struct sb_box *b);
/* The paths of b's files below b->dir, upper, work and workspace below
 * disk/ when capped (sb_box_open sets them from what is on disk). */
int sb_box_set_paths(struct sb_box *b, int capped, struct sb_error *err);
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
	SB_GONE_MEMORY,                  /* the host ended it: it used more than its memory limit */
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
/* Ends registered interactive shells (hang-up, then kill) and waits for them. */
void sb_box_end_shells(struct sb_box *b);
/* Kills the process inside whose pid an exec wrote to ipid_file; nothing
 * when there is none. */
void sb_box_kill_inside(struct sb_box *b, const char *ipid_file);
/* Marks an exec as running until the returned fd is closed (-1 on failure). */
int sb_box_exec_begin(struct sb_box *b);
/* 1 when some exec is running in the sandbox right now. */
int sb_box_exec_running(struct sb_box *b);
/* Touches the activity file (mtime = now, the injectable clock). */
int sb_box_touch(struct sb_box *b, struct sb_error *err);
/* The same without a lock held: an activity file that is not there (the
 * sandbox is being removed) is not made. */
void sb_box_touch_existing(struct sb_box *b);
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
/* A claimed pool member's running network under the box's name (it was
 * from's), and the policies naming the new name applied again; on failure
 * what was from's is removed. Nothing with network off. */
int sb_box_network_claim(struct sb_box *b, const char *from, struct sb_error *err);
/* 1 when a pool member's network (if on) was built under the network
 * settings set has now (pool.c). */
int sb_pool_net_current(const struct sb_record *rec, const struct sb_settings *set);
/* Rootfs of the record's image (ROOT/images/rootfs/<hex>). */
char *sb_box_lower(const struct sb_box *b);

/* A USER value ("name", "uid", "name:group", "uid:gid") in numbers, from
 * rootfs's own /etc/passwd and /etc/group read inside it (user.c). A name
 * that is not there is SB_ERR_NOTFOUND naming it; a uid needs no entry (gid
 * 0 then). home: the entry's, else "/". */
struct sb_user {
	unsigned uid, gid;
	char home[256];
};
int sb_user_resolve(struct sb_user *out, const char *rootfs, const char *spec, struct sb_error *err);

/* A process of a running sandbox as its image's config shapes it
 * (process.c): env is the config's Env, then HOME of the user when neither
 * gives one, then the caller's (a later value wins); cwd the caller's, else
 * WorkingDir, else /workspace; the user the caller's, else User (resolved
 * in the sandbox's own root), else root. */
struct sb_box_proc {
	char **env;                      /* NULL: caller_env as it is */
	char *const *caller_env;
	const char *cwd;
	int has_user;
	struct sb_backend_user user;
	char home_dir[256];
	char *home;                      /* "HOME=..." */
};
int sb_box_proc_make(struct sb_box_proc *out, const struct sb_box *b, char *const *env, const char *cwd,
		     const char *user, struct sb_error *err);
char *const *sb_box_proc_env(const struct sb_box_proc *p);
void sb_box_proc_clear(struct sb_box_proc *p);

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

/* sb_record_transition on behalf of source: SB_TIMELINE_SANDBENCH for the
 * system's own acts (reap, gc, a dead sandbox noticed). */
int sb_record_transition_as(struct sb_root *root, struct sb_record *rec, enum sb_sandbox_state state,
			    const char *reason, enum sb_timeline_source source, struct sb_error *err);
/* Opens name (exclusive lock, record loaded, settled when gone, backend
 * open) when its state is in want (a mask of 1 << state); SB_ERR_STATE
 * "cannot VERB sandbox 'x': it is S" otherwise. */
int sb_box_open_in_state(struct sb_box *b, struct sb_root *root, const char *name, unsigned want, const char *verb,
			 struct sb_error *err);
/* pause.c: freeze and thaw of a box whose lock is held exclusively, its
 * backend open, in state running (pause) or paused (resume). */
int sb_box_pause_locked(struct sb_box *b, const char *reason, enum sb_timeline_source source, struct sb_error *err);
int sb_box_resume_locked(struct sb_box *b, const char *reason, enum sb_timeline_source source, struct sb_error *err);
int sb_box_pause_as(struct sb_root *root, const char *name, const char *reason, enum sb_timeline_source source,
		    struct sb_error *err);
/* 1 when the container may be frozen (dir/paused exists). */
int sb_box_paused_mark(const struct sb_box *b);
/* Before a teardown: resumes a container that may be frozen (errors ignored). */
void sb_box_unfreeze(struct sb_box *b);
/* After a teardown: the container is gone, so is its freeze. */
void sb_box_unmark_paused(struct sb_box *b);
/* sb_sandbox_stop on behalf of source (reap's expiry is SB_TIMELINE_SANDBENCH). */
int sb_box_stop_as(struct sb_root *root, const char *name, const char *reason, enum sb_timeline_source source,
		   struct sb_error *err);
/* A fresh container id ("sb-" and 16 random hex digits). */
int sb_box_new_id(char id[SB_SANDBOX_ID_LEN], struct sb_error *err);
/* The directories of a new sandbox (its disk, workspace, bundle, shells). */
int sb_box_make_dirs(struct sb_box *b, struct sb_error *err);

/* A capped disk (--disk, disk_limit.c): upper, overlay work directory and
 * workspace on an ext4 of rec.disk bytes of their own, the image file
 * SB_BOX_DISK_IMAGE in the sandbox's folder, mounted at SB_BOX_DISK for as
 * long as the sandbox exists (a loop device each). make formats and mounts
 * it for a new sandbox and switches b's paths; attach mounts it when it is
 * not (after a host restart; serialised by a lock on the image); detach
 * unmounts it, before the folder is removed. */
#define SB_BOX_DISK "disk"
#define SB_BOX_DISK_IMAGE "disk.img"
int sb_box_disk_make(struct sb_box *b, struct sb_error *err);
int sb_box_disk_attach(struct sb_box *b, struct sb_error *err);
int sb_box_disk_detach(struct sb_box *b, struct sb_error *err);
/* Undoes a create (or fork) that failed after its directory was made. When
 * that fails too the record stays, in state broken, for rm --force. */
void sb_box_roll_back(struct sb_box *b, const struct sb_error *cause);
/* stop and restore of an opened box whose lock is held exclusively, its
 * backend open, in state running (stop) or stopped (restore). warm_reason:
 * the record's reason when the memory image was restored (NULL: restore's);
 * *restored (may be NULL): whether it was, rather than a cold start. */
int sb_box_stop_locked(struct sb_box *b, const char *reason, enum sb_timeline_source source, struct sb_error *err);
int sb_box_restore_locked(struct sb_box *b, const char *warm_reason, int *restored, struct sb_error *err);
/* Copies the tree of the directory src into the empty directory dst (both
 * open, O_PATH will do) as it is: modes, owners, times, extended attributes
 * (overlayfs's opaque markers), hard links, symlinks (never followed) and
 * overlayfs's whiteouts; other special files are left out and counted in
 * *skipped. Never leaves src's file system. */
int sb_disk_copy(unsigned long long *skipped, int src, int dst, const char *label, struct sb_error *err);
/* sb_timeline_append with the sandbox's settings at hand. locked: this
 * process holds the sandbox's lock (a transition), so creating or rotating
 * the file takes no lock of its own. */
int sb_timeline_add(struct sb_root *root, const char *name, const struct sb_settings *set, int locked,
		    const struct sb_timeline_entry *e, struct sb_redact *r, struct sb_error *err);

/* cp (copy*.c): entries flow from a source (a host tree, the sandbox's view,
 * a tar stream) to a sink (a directory tree, a tar stream). */
struct sb_xentry {
	const char *path;                /* relative to the copy's top, '/'-separated, clean; "" is the top */
	mode_t type;                     /* S_IFREG, S_IFDIR, S_IFLNK, another S_IF* (special); 0: a hard link */
	mode_t perm;                     /* 07777 bits */
	unsigned uid, gid;
	long long mtime;
	unsigned long long size;         /* S_IFREG: the data that follows */
	const char *link;                /* symlink: its target; hard link: the path (relative to the top) */
	const struct sb_xattr *xattrs;   /* extended attributes to keep (tar sinks only); NULL: none */
	size_t n_xattrs;
};

struct sb_xattr {
	const char *name;
	const void *value;
	size_t size;
};

/* begin returns 0 (a regular file's data follows, then end), 1 (skip the
 * entry: no data, no end) or a negative error. */
struct sb_xsink {
	int (*begin)(struct sb_xsink *s, const struct sb_xentry *e, struct sb_error *err);
	int (*data)(struct sb_xsink *s, const void *buf, size_t len, struct sb_error *err);
	int (*end)(struct sb_xsink *s, struct sb_error *err);
};

/* Counts what passes to next and enforces the cap; leaves special files out
 * of a tree (refuses one at the top) and counts them. top names the source
 * in messages. */
struct sb_xmeter {
	struct sb_xsink sink;
	struct sb_xsink *next;
	struct sb_copy_result *res;
	unsigned long long max;
	const char *top;
	unsigned long long left;         /* of the current file */
};
void sb_xmeter_init(struct sb_xmeter *m, struct sb_xsink *next, struct sb_copy_result *res, unsigned long long max,
		    const char *top);

/* A sandbox's file tree as its guest sees it, from the host. */
struct sb_view_area {
	char *path;                      /* where it is inside ("/workspace") */
	char *host;                      /* its host folder */
	int rw;
};

struct sb_view {
	const char *name;
	int running;                     /* the root file system is the guest's to read and write */
	char *upper, *lower;             /* stopped: the overlay */
	struct sb_view_area *areas;
	size_t n_areas;
};

/* One entry of a tree (the view's or a host tree), held by O_PATH
 * descriptors: nothing is opened for reading until asked. */
struct sb_vnode {
	int fd;                          /* the entry that shows (the upper's when both have it) */
	int lower;                       /* layered directory: the image's directory below it; -1 */
	int layered;                     /* in the stopped overlay: whiteouts and opaque directories apply */
	int opaque;
	int area;                        /* view: index of its area, -1 the root file system; host: -1 */
	struct stat st;
	char *path;                      /* view: canonical path inside; host: the host path */
	const struct sb_view *view;      /* NULL for a host tree */
};

/* One component name below dirfd as an O_PATH fd and its stat, not
 * followed, never across a mount; -errno on failure. */
int sb_lookup_at(int *out, struct stat *st, int dirfd, const char *name);
/* overlayfs's marks in an upper: a whiteout (a 0:0 character device) hides
 * the image's entry; an opaque directory hides all of the image's below it. */
#define SB_OVERLAY_OPAQUE "trusted.overlay.opaque"
int sb_overlay_whiteout(const struct stat *st);
int sb_overlay_opaque(int dirfd);

int sb_view_open(struct sb_view *v, struct sb_box *b, struct sb_error *err);
void sb_view_clear(struct sb_view *v);
/* Resolves path (absolute) as the guest would: ".." and symlinks inside the
 * sandbox, the last component's too with follow_last. 0 and *node; 1 and
 * *guest (malloc'd path without symlinks up to where the host stopped) when
 * the path leads into a running sandbox's root file system, which only the
 * guest can read. SB_ERR_NOTFOUND when it does not exist. */
int sb_view_resolve(struct sb_vnode *node, char **guest, const struct sb_view *v, const char *path, int follow_last,
		    struct sb_error *err);
/* The upper's directory at path (canonical, in the overlay of a stopped
 * sandbox) as an O_PATH fd, made like the image's where the upper has none
 * yet (overlayfs's copy-up of directories). */
int sb_view_upper_dir(int *out, const struct sb_view *v, const char *path, struct sb_error *err);
/* The area holding a resolved node, or NULL (the root file system). */
const struct sb_view_area *sb_view_area_of(const struct sb_vnode *n);
/* A host path as a node (followed as usual: the caller's own path). */
int sb_vnode_host(struct sb_vnode *node, const char *path, struct sb_error *err);
/* rel below the directory dirfd as a node, symlinks on the way followed only
 * while they stay beneath it (the last one too);
 * SB_ERR_UNSAFE when rel leads out. label names it in messages. */
int sb_vnode_beneath(struct sb_vnode *node, int dirfd, const char *rel, const char *label, struct sb_error *err);
/* Child name of directory dir, not followed; SB_ERR_NOTFOUND when there is none. */
int sb_vnode_child(struct sb_vnode *out, const struct sb_vnode *dir, const char *name, struct sb_error *err);
/* The names in directory dir (a layered one merged), sorted; free with sb_names_free. */
int sb_vnode_list(char ***names, size_t *n, const struct sb_vnode *dir, struct sb_error *err);
void sb_names_free(char **names, size_t n);
/* Opens the regular file n for reading (the very inode looked up). */
int sb_vnode_open_read(int *fd, const struct sb_vnode *n, struct sb_error *err);
void sb_vnode_clear(struct sb_vnode *n);
/* How n is named in messages: "NAME:/path" or the host path (malloc'd). */
char *sb_vnode_label(const struct sb_vnode *n);

/* dir/name for paths inside ("/" + "x" is "/x"; malloc'd). */
char *sb_child_path(const char *dir, const char *name);
/* The sorted names in the directory fd (O_PATH; none for -1), whiteouts
 * included; free with sb_names_free. */
int sb_dir_names(char ***names, size_t *n, int fd, struct sb_error *err);

/* The overlay upper walked for diff and commit (upper_walk.c), in name
 * order, depth first, never following anything. */
struct sb_upper_entry {
	const char *path;                /* inside the sandbox: "/etc/x" */
	const char *name;                /* its last component */
	int dir;                         /* the upper's directory holding it (O_PATH) */
	const struct stat *ust;          /* the upper's entry; NULL: only the image has one (under an opaque directory) */
	const struct stat *lst;          /* the image's; NULL: none, or no image given */
	int whiteout;                    /* ust is overlayfs's whiteout */
	int fd;                          /* a directory of the upper: it (O_PATH); -1 otherwise */
	int opaque;                      /* that directory hides the image's below it */
};

struct sb_upper_walk {
	/* <0: error; 0: go on (into a directory); 1: not into this directory */
	int (*visit)(struct sb_upper_walk *w, const struct sb_upper_entry *e, struct sb_error *err);
	/* a directory too deep to walk: <0 fails the walk, 0 leaves it out */
	int (*too_deep)(struct sb_upper_walk *w, const char *path, struct sb_error *err);
	int image_names;                 /* under an opaque directory, the image's names are visited too */
	const struct sb_record *rec;     /* its host mounts, like the backend's mount points, are left out */
};

/* Walks upper (an O_PATH directory) over lower (the image's, or -1); top
 * is the path inside of upper ("/" for the root file system). */
int sb_upper_walk(struct sb_upper_walk *w, int upper, int lower, const char *top, struct sb_error *err);

/* Sends the tree at top to s: top itself as "", then (recursive) what is
 * below it, depth first. */
int sb_xwalk(struct sb_xsink *s, const struct sb_vnode *top, struct sb_error *err);

/* Writes entries into a directory: the target is name in the directory
 * parent (an fd it takes over), or with merge the directory parent itself
 * (the top entry's name and attributes are then ignored). A new target is
 * made under a temporary name and put in place by sb_xdisk_finish. Entry
 * paths are resolved beneath the target without following any symlink.
 * layered: parent is in a stopped sandbox's overlay upper, where a whiteout
 * is replaced and a directory made over one is opaque. */
struct sb_xdisk {
	struct sb_xsink sink;
	int parent, layered, merge;
	int root_owned;                  /* entries become 0:0 (into a sandbox) */
	int drop_suid;                   /* set-id bits dropped (out of a sandbox) */
	char **fences;                   /* entry paths refused at and below (mount points); NULL-terminated, owned */
	const char *label;               /* the target in messages (default: name) */
	char *name, *tmp;
	int top;                         /* the target directory once made; -1 */
	mode_t top_perm;
	int cur, cur_dir;                /* the file being written, and its directory */
	char *cur_tmp, *cur_name;
	mode_t cur_perm;
	long long cur_mtime;
};
int sb_xdisk_init(struct sb_xdisk *d, int parent, const char *name, int merge, struct sb_error *err);
int sb_xdisk_finish(struct sb_xdisk *d, struct sb_error *err);
/* Closes, and removes a new target that was not finished. */
void sb_xdisk_clear(struct sb_xdisk *d);

/* Tar streams (copy_tar.c). A sink writing one to fd, entries named
 * prefix/path (prefix "" : path alone; the top as "."), owners 0:0 with
 * root_owned; GNU format for a guest's tar, pax for everyone else. */
struct sb_xtar_out;
int sb_xtar_out_new(struct sb_xtar_out **out, int fd, const char *prefix, int gnu, int root_owned,
		    struct sb_error *err);
/* The same with the stream going to write(arg, ...) instead of an fd (pax). */
int sb_xtar_out_new_writer(struct sb_xtar_out **out, int (*write)(void *arg, const void *buf, size_t len,
								  struct sb_error *err),
			   void *arg, struct sb_error *err);
struct sb_xsink *sb_xtar_out_sink(struct sb_xtar_out *t);
int sb_xtar_out_close(struct sb_xtar_out *t, struct sb_error *err);
void sb_xtar_out_free(struct sb_xtar_out *t);
/* Reads a tar stream from fd into s. strip_top: every entry must lie in one
 * top entry, which becomes "" (a guest's tar of one path); otherwise names
 * are kept (relative to the destination). Names that lead out are refused. */
int sb_xtar_read(struct sb_xsink *s, int fd, int strip_top, const char *label, struct sb_error *err);

/* The guest's tar (copy_guest.c). */
struct sb_guest_probe {
	char dst, base;                  /* 'd' directory, 'f' other (a symlink too), 'm' missing */
	int parent;                      /* dst's parent is a directory */
};
/* What path and path/base are inside the running sandbox name. */
int sb_guest_probe(struct sb_guest_probe *out, struct sb_root *root, const char *name, const char *path,
		   const char *base, struct sb_error *err);
/* Streams path out of the guest as a tar (strip_top) into s. */
int sb_guest_copy_out(struct sb_xsink *s, struct sb_root *root, const char *name, const char *path, int recursive,
		      struct sb_error *err);
/* Streams into the guest: produce(arg, sink) writes entries to a tar sink
 * whose top is named "x"; the guest puts them at dir/name (merge: into the
 * existing directory dir/name, or dir when name is ""). */
int sb_guest_copy_in(struct sb_root *root, const char *name, const char *dir, const char *target, int merge,
		     int (*produce)(void *arg, struct sb_xsink *s, struct sb_error *err), void *arg,
		     struct sb_error *err);

/* Services (service.c, record_service.c). */
/* Starts the service's supervisor in a freshly (cold) booted sandbox; nothing without a service. */
int sb_box_service_start(struct sb_box *b, struct sb_error *err);
json_t *sb_record_service_to_json(json_t *doc, const struct sb_record *r);
int sb_record_service_from_json(struct sb_record *out, const json_t *doc);
void sb_record_service_clear(struct sb_record *rec);

/* Names of an enum's values from a table indexed by them ("unknown" out of
 * range), and back (-1 for none): records and timeline entries share them. */
#define SB_ENUM_NAMES(t) (sizeof(t) / sizeof((t)[0]))
const char *sb_enum_name(const char *const *t, size_t n, int v);
int sb_enum_parse(const char *const *t, size_t n, const char *s);

#endif
