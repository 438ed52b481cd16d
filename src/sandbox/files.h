/* Files in and out of a sandbox (cp) and what it changed against its image
 * (diff). For both front ends: results are structures, nothing is printed.
 *
 * Where the files are read and written (docs/files.md says why):
 * - a running sandbox's root file system through its guest: a tar stream over
 *   an exec of the guest's own tar (runsc's exclusive file access hides host
 *   writes to the upper from the guest);
 * - a stopped sandbox's root file system on the host: its overlay (upper
 *   over the image's rootfs, whiteouts and opaque directories respected);
 *   writes go to the upper;
 * - /workspace and /exchange of either state, and a stopped sandbox's host
 *   mounts, on the host in their folders.
 * Every host-side path is resolved inside the sandbox as its guest would
 * resolve it, one component at a time, without ever following a symlink on
 * the host's terms: a sandbox's symlinks never lead the host out of it.
 * Only regular files, directories and symlinks are copied: a FIFO, device or
 * socket is never opened; at the top it is refused, in a tree left out and
 * counted. */
#ifndef SB_FILES_H
#define SB_FILES_H

#include <jansson.h>
#include <stddef.h>
#include <sys/types.h>

#include "base/error.h"
#include "base/root.h"

/* The default cap on the file data one copy moves. */
#define SB_COPY_MAX_DEFAULT (1ULL << 30)

enum sb_copy_flags {
	SB_COPY_RECURSIVE = 1 << 0,      /* directories too (cp -r); without it a directory is refused */
	/* A stopped sandbox whose memory is checkpointed would not reliably see
	 * files written into its root file system after the restore (measured:
	 * runsc keeps its view of the tree in the checkpoint). Such a copy is
	 * refused unless this flag drops the checkpoint: the next restore then
	 * cold-starts from the disk, processes started afresh. */
	SB_COPY_DISCARD_MEMORY = 1 << 1,
};

struct sb_copy_opts {
	unsigned flags;                  /* enum sb_copy_flags */
	unsigned long long max_bytes;    /* cap on the file data copied; 0: SB_COPY_MAX_DEFAULT */
};

enum sb_copy_route {
	SB_COPY_HOST,                    /* host side, resolved inside the sandbox */
	SB_COPY_GUEST,                   /* a tar stream through the guest's own tar */
};

/* What a copy did (also filled as far as it got when it failed). */
struct sb_copy_result {
	enum sb_copy_route route;
	unsigned long long bytes;        /* file data copied */
	unsigned long long files, dirs, links;
	unsigned long long skipped;      /* special files left out of a tree */
	char *skipped_first;             /* the first of them (path relative to the copy), or NULL */
	char *src, *dst;                 /* what was copied where: "NAME:/path", a host path or "-" */
	int memory_discarded;            /* SB_COPY_DISCARD_MEMORY took effect */
};

/* Copies path inside sandbox name to host_dst, with docker cp's rules: a file
 * to a missing host_dst creates it (its parent must exist; a trailing '/'
 * asks for an existing directory), to a file replaces it, to a directory
 * goes in it under its own name; a directory (SB_COPY_RECURSIVE) to a
 * missing host_dst becomes host_dst, to a directory goes in it under its own
 * name, or merges its content into it when path ends in "/.". A new target
 * appears whole or not at all; a merge can stop half-way (the result says
 * how far). Symlinks in a tree are copied as symlinks, never followed;
 * set-user and set-group-id bits are dropped. Errors: SB_ERR_NOTFOUND (no
 * sandbox, no such path), SB_ERR_INVALID (a relative path, a directory
 * without SB_COPY_RECURSIVE, a directory onto a file), SB_ERR_UNSAFE (a
 * special file, an archive entry leading out), SB_ERR_LIMIT (over the cap),
 * SB_ERR_STATE (neither running nor stopped), SB_ERR_PREREQ (the guest has no
 * tar). out is filled on a failure too (how far it got): clear it either way. */
int sb_sandbox_copy_out(struct sb_copy_result *out, struct sb_root *root, const char *name, const char *path,
			const char *host_dst, const struct sb_copy_opts *opts, struct sb_error *err);
/* The other way: host_src (a file, or a tree with SB_COPY_RECURSIVE) to path
 * inside sandbox name, with the same rules; files become root's. A symlink
 * at the destination inside the sandbox is replaced, never followed. */
int sb_sandbox_copy_in(struct sb_copy_result *out, struct sb_root *root, const char *host_src, const char *name,
		       const char *path, const struct sb_copy_opts *opts, struct sb_error *err);
/* path inside sandbox name as a tar stream written to fd (docker cp NAME:P -):
 * its entries are named after path's last component. */
int sb_sandbox_copy_out_tar(struct sb_copy_result *out, struct sb_root *root, const char *name, const char *path,
			    int fd, const struct sb_copy_opts *opts, struct sb_error *err);
/* A tar stream read from fd (plain, gzip or zstd) extracted into the
 * directory path inside sandbox name (docker cp - NAME:P). Entries that would
 * lead out of it are refused. */
int sb_sandbox_copy_in_tar(struct sb_copy_result *out, struct sb_root *root, int fd, const char *name,
			   const char *path, const struct sb_copy_opts *opts, struct sb_error *err);
void sb_copy_result_clear(struct sb_copy_result *r);

/* What a sandbox changed: its root file system against its pinned image
 * (from the overlay upper), and the files of its workspace and of the
 * exchange folder, which have no image to compare with. */
enum sb_diff_kind {
	SB_DIFF_ADDED = 'A',
	SB_DIFF_CHANGED = 'C',
	SB_DIFF_DELETED = 'D',
};

enum sb_diff_area {
	SB_DIFF_ROOT,                    /* the root file system against the image */
	SB_DIFF_WORKSPACE,               /* /workspace: every file (no baseline) */
	SB_DIFF_EXCHANGE,                /* /exchange, shared with other sandboxes */
	SB_DIFF_AREAS
};

struct sb_diff_entry {
	enum sb_diff_area area;
	enum sb_diff_kind kind;
	char *path;                      /* the path inside the sandbox ("/etc/x", "/workspace/y") */
	char type;                       /* 'f' file, 'd' directory, 'l' symlink, 's' special */
	unsigned long long size;         /* a file's size (deleted: the image's) */
	long long mtime;                 /* unix seconds (deleted: the image's) */
	int opaque;                      /* a directory deleted and made again: nothing of the image's below it shows */
};

struct sb_diff {
	struct sb_diff_entry *entries;   /* by area, then path */
	size_t count;
	size_t more[SB_DIFF_AREAS];      /* entries of each area beyond the cap, counted, not listed */
	unsigned long long bytes[SB_DIFF_AREAS]; /* size of the added and changed files, all of them */
	int running;                     /* read while the sandbox ran: see sb_sandbox_diff */
	int exchange;                    /* the sandbox has the exchange folder */
};

struct sb_diff_opts {
	size_t max_entries;              /* entries listed per area; 0: 10000 */
};

/* Fills *out (free with sb_diff_free). Works on running and stopped
 * sandboxes alike: the host reads the upper as it is now. Measured on this
 * runsc, the guest's writes (a mapped file's too) are on the host as soon as
 * they return; running says that a write still in flight may be missing.
 * Symlinks are never followed; bind-mount points (/workspace, /exchange,
 * /etc/hosts, host mounts ...) are not part of the root's changes. */
int sb_sandbox_diff(struct sb_diff **out, struct sb_root *root, const char *name, const struct sb_diff_opts *opts,
		    struct sb_error *err);
void sb_diff_free(struct sb_diff *d);
/* JSON forms of a diff (an object per area) and of a copy's result. */
json_t *sb_diff_json(const struct sb_diff *d);
json_t *sb_copy_result_json(const struct sb_copy_result *r);
const char *sb_diff_area_name(enum sb_diff_area area);

#endif
