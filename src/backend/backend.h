/* The backend seam: what the sandbox lifecycle asks of the runtime that holds
 * its sandboxes. One versioned table of operations per backend, in the manner
 * of libgit2's pluggable backends; the record names the backend of every
 * sandbox. runsc (src/backend/runsc/) is the one implementation; front ends
 * never include this header, they reach sandboxes through sandbox/sandbox.h. */
#ifndef SB_BACKEND_H
#define SB_BACKEND_H

#include <stddef.h>

#include "base/error.h"
#include "base/proc.h"
#include "base/root.h"
#include "net/network.h"
#include "sandbox/record.h"

#define SB_BACKEND_OPS_VERSION 1

/* What a backend can do; the lifecycle refuses, and the workbench greys out,
 * what the sandbox's backend lacks. */
enum sb_backend_cap {
	SB_BACKEND_CAP_CHECKPOINT = 1 << 0,  /* stop keeps memory and processes */
	SB_BACKEND_CAP_HOST_MOUNTS = 1 << 1, /* host folders bound in */
	SB_BACKEND_CAP_LIVE_STATS = 1 << 2,  /* memory, CPU and pids of a running sandbox */
	SB_BACKEND_CAP_NET_NAT = 1 << 3,     /* network on through a host netns, bridge and NAT */
};

/* One sandbox as the lifecycle hands it to the backend. Every path is
 * absolute; dir is the sandbox's own directory, where the backend keeps its
 * files (spec, pid file, log). */
struct sb_backend_sandbox {
	const struct sb_record *rec;         /* id, name, network, kind, mounts, limits */
	const char *dir;                     /* ROOT/sandboxes/<name> */
	const char *lower;                   /* the image's rootfs, read-only */
	const char *rootfs, *upper, *work;   /* the sandbox's disk */
	const char *workspace;               /* bound rw at /workspace */
	const char *exchange;                /* bound rw at /exchange; NULL: none */
	const char *hosts, *resolv;          /* files of dir bound read-only at /etc/hosts, /etc/resolv.conf */
	const struct sb_netinfo *net;        /* network on: its namespace; NULL: off */
	int timeout_ms;                      /* deadline of lifecycle calls */
	/* per rec->mounts entry, what boot binds in its place: the host folder
	 * as verified for this boot, never rec->mounts[i].host, whose path may
	 * have changed since; NULL: not verified, boot refuses host mounts */
	const char *const *mount_sources;
};

/* A process to run in a running sandbox. */
/* Who a process runs as (NULL where it is asked for: root). */
struct sb_backend_user {
	unsigned uid, gid;
};

struct sb_backend_exec {
	char *const *argv;
	char *const *env;                    /* "K=V", NULL-terminated; NULL: none */
	/* "K=V" too, whose values must reach no command line and no file: not
	 * even for a moment (plain exec only; NULL: none) */
	char *const *secret_env;
	const char *cwd;
	const struct sb_backend_user *user;   /* NULL: root */
	const char *ipid_file;               /* where its pid inside goes (for kill); NULL: nowhere */
	const char *const *caps;             /* capabilities beyond the default ("CAP_SYS_ADMIN"; plain exec only); NULL: none */
	/* started, not waited for: the call returns once the process runs (its
	 * status 0), and it lives on with the stdio it was given (plain exec
	 * only; SB_ERR_PREREQ where the backend cannot) */
	int detach;
	const char *scratch;                 /* pty: a file the backend may write; the caller removes it */
	unsigned short rows, cols;           /* pty: the terminal's size */
	struct sb_proc_opts proc;            /* deadline, stdio, capture */
};

struct sb_backend_stats {
	unsigned long long memory_usage, memory_limit, cpu_ns, pids;
};

/* Something of the backend's own, for gc: a runtime container and its status. */
struct sb_backend_object {
	char id[64];
	char status[16];                     /* "running", "stopped", ... */
};

enum sb_backend_teardown_flags {
	SB_TEARDOWN_FORCE = 1 << 0,          /* go on past errors, report the first */
	SB_TEARDOWN_STOPPED = 1 << 1,        /* checkpointed: nothing runs that needs ending */
};

struct sb_backend_ops {
	int version;                         /* SB_BACKEND_OPS_VERSION */
	const char *name;                    /* as recorded: "runsc" */
	unsigned caps;                       /* enum sb_backend_cap */
	int (*open)(void **out, struct sb_root *root, struct sb_error *err);
	void (*close)(void *be);
	/* Identity of the runtime's build: a checkpoint taken by another build is
	 * not restored. "" when unknown. */
	const char *(*build)(void *be);
	/* Mounts the disk and starts the sandbox: cold, or from the checkpoint in
	 * image_path. On failure its container is gone again; the disk stays. */
	int (*boot)(void *be, const struct sb_backend_sandbox *sb, const char *image_path, struct sb_error *err);
	/* Ends and deletes the container, what it leaked, and unmounts the disk.
	 * Missing pieces are fine. */
	int (*teardown)(void *be, const struct sb_backend_sandbox *sb, unsigned flags, struct sb_error *err);
	/* Runs x in the sandbox; res->status is the command's exit status. */
	int (*exec)(struct sb_proc_result *res, void *be, const struct sb_backend_sandbox *sb,
		    const struct sb_backend_exec *x, struct sb_error *err);
	/* The host command that runs x on a terminal when given a pty as its
	 * controlling terminal and stdio (NULL-terminated; free with
	 * sb_backend_argv_free). */
	int (*pty)(char ***argv, void *be, const struct sb_backend_sandbox *sb, const struct sb_backend_exec *x,
		   struct sb_error *err);
	/* Kills the process inside whose pid an exec wrote to ipid_file. */
	void (*kill)(void *be, const struct sb_backend_sandbox *sb, const char *ipid_file);
	/* Writes memory and processes to image_path and stops the container. */
	int (*checkpoint)(void *be, const struct sb_backend_sandbox *sb, const char *image_path, struct sb_error *err);
	/* Freezes every process of a running sandbox (its disk stops changing)
	 * and lets them carry on again; NULL: the backend cannot. */
	int (*pause)(void *be, const struct sb_backend_sandbox *sb, struct sb_error *err);
	int (*resume)(void *be, const struct sb_backend_sandbox *sb, struct sb_error *err);
	/* 1 when the sandbox runs, 0 when its runtime is gone; cheap (no runtime call). */
	int (*alive)(void *be, const struct sb_backend_sandbox *sb);
	/* 1 when its memory limit ended a sandbox that is no longer alive (asked
	 * before teardown); NULL: the backend cannot tell. */
	int (*out_of_memory)(void *be, const struct sb_backend_sandbox *sb);
	int (*stats)(struct sb_backend_stats *out, void *be, const struct sb_backend_sandbox *sb, struct sb_error *err);
	/* The containers of this root (*out: free()). */
	int (*list)(struct sb_backend_object **out, size_t *count, void *be, struct sb_error *err);
	/* Ends and deletes a container no record accounts for. */
	int (*remove_object)(void *be, const char *id, struct sb_error *err);
	/* 1 when the sandbox's disk is mounted (a stopped one should not be). */
	int (*disk_mounted)(void *be, const struct sb_backend_sandbox *sb);
};

/* be->caps, less what a test build takes away (base/hooks.h). */
unsigned sb_backend_caps(const struct sb_backend_ops *be);

/* The backend named name ("" or NULL: the default); SB_ERR_PREREQ naming it
 * when this build has none of that name. */
int sb_backend_find(const struct sb_backend_ops **out, const char *name, struct sb_error *err);
const struct sb_backend_ops *sb_backend_default(void);
void sb_backend_argv_free(char **argv);

extern const struct sb_backend_ops sb_backend_runsc;
/* Locates runsc: $SANDBENCH_RUNSC, else "runsc" in PATH. *out is malloc'd. */
int sb_runsc_locate(char **out, struct sb_error *err);

#endif
