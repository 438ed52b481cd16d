/* sandbench commit: a sandbox's own disk (its overlay upper) as one new
 * image layer on top of its pinned image, stored as an ordinary image. */
#ifndef SB_SANDBOX_COMMIT_H
#define SB_SANDBOX_COMMIT_H

#include <jansson.h>
#include <stddef.h>

#include "base/digest.h"
#include "base/error.h"
#include "base/root.h"
#include "image/commit.h"
#include "image/store.h"

enum sb_commit_flags {
	SB_COMMIT_WORKSPACE = 1 << 0,    /* /workspace goes into the layer too */
};

/* The file data a commit reads by default: the disk is the guest's, and a
 * sparse file costs it nothing to make however large it says it is. */
#define SB_COMMIT_MAX_DEFAULT (16ULL << 30)

struct sb_commit_opts {
	unsigned flags;                  /* enum sb_commit_flags */
	unsigned long long max_bytes;    /* cap on the file data read; 0: SB_COMMIT_MAX_DEFAULT */
	const char *message;             /* the history entry's comment; NULL: none */
	char *const *changes;            /* --change values (sb_image_changes_check) */
	size_t n_changes;
	enum sb_layer_compression compression;
	const char *created_by;          /* the history entry's; NULL: "sandbench commit NAME" */
	const char *source;              /* what inspect shows; NULL: "commit NAME" */
};

struct sb_commit_result {
	char digest[SB_DIGEST_STR_LEN];  /* the new image (manifest digest) */
	char *ref;                       /* its name ("localhost/x:latest"); NULL: none */
	char parent[SB_DIGEST_STR_LEN];  /* the sandbox's image */
	struct sb_image_new_layer layer;
	unsigned long long entries;      /* tar entries written, whiteouts included */
	unsigned long long whiteouts;    /* deletions and opaque directories */
	unsigned long long skipped;      /* device nodes and sockets left out */
	char *skipped_first;             /* the first of them, or NULL */
	int paused;                      /* it was running: paused around the read */
};

/* Commits sandbox name as image ref (a name without a registry goes under
 * localhost/; NULL: no name, the digest only). The upper is read on the host
 * without following anything: deletions (whiteouts) and directories made
 * again (opaque) become OCI whiteouts (.wh.NAME, .wh..wh..opq); hard links,
 * modes (set-id bits too), numeric owners, mtimes, user.* and
 * security.capability xattrs are kept; FIFOs are written, never opened;
 * device nodes and sockets are left out and counted. The backend's mount
 * points (/workspace unless SB_COMMIT_WORKSPACE, /exchange, /etc/hosts, ...)
 * and the sandbox's host mounts are not part of the disk. A running sandbox
 * is paused around the read and resumed (its processes carry on); a stopped
 * or paused one is read as it is. Bad input is refused before anything is written:
 * SB_ERR_INVALID (ref, a change), SB_ERR_NOTFOUND (no sandbox), SB_ERR_STATE
 * (neither running nor stopped, or a backend that cannot pause). On failure
 * no image is recorded (a layer blob already written is left to prune).
 * A commit entry goes to the sandbox's timeline. */
int sb_sandbox_commit(struct sb_commit_result *out, struct sb_root *root, const char *name, const char *ref,
		      const struct sb_commit_opts *opts, struct sb_error *err);
void sb_commit_result_clear(struct sb_commit_result *r);
/* The result as `sandbench commit --json` prints it (src/sandbox/json.c). */
json_t *sb_commit_result_json(const struct sb_commit_result *r);

#endif
