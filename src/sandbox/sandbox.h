/* Sandboxes: named runsc sandboxes, each with its own disk (an overlay on its
 * image's rootfs), workspace, mounts and expiry. The public API of the runtime
 * for the command line and the workbench. Every code-running operation checks
 * the prerequisites first and refuses when one is missing (fail closed). */
#ifndef SB_SANDBOX_H
#define SB_SANDBOX_H

#include <stddef.h>
#include <sys/types.h>

#include "base/error.h"
#include "sandbox/record.h"
#include "base/root.h"

/* Options of sb_sandbox_create. Zero values mean "the configured default"
 * (ROOT/config over data/sandbench.conf). The caller keeps ownership. */
struct sb_sandbox_spec {
	const char *name;                        /* [A-Za-z0-9_.-]{1,63}, unique */
	const char *image;                       /* reference or manifest digest (image store) */
	enum sb_sandbox_kind kind;
	long long idle_timeout;                  /* seconds, temporary only; 0: default */
	enum sb_expiry_action expiry_action;
	int network;                             /* -1: default, 0: off, 1: on */
	int no_exchange;                         /* do not mount ROOT/exchange at /exchange */
	const struct sb_sandbox_mount *mounts;   /* host mounts (already policy-checked or not: create checks) */
	size_t n_mounts;
	int allow_sensitive_mounts;              /* accept host paths of the mount policy's deny list */
	unsigned long long memory;               /* bytes; 0: default */
	double cpus;                             /* 0: default (unlimited unless configured) */
	const char *owner;                       /* NULL: none */
	const struct sb_sandbox_label *labels;
	size_t n_labels;
};

/* Splits "HOST:PATH[:ro|rw]" (read-only unless ":rw" is written; HOST may
 * contain ':', PATH may not and is absolute) into out, whose host and path
 * point into text: text is cut at the colons when it parses and untouched when
 * not (SB_ERR_INVALID). Syntax only: sb_sandbox_create resolves the host path
 * and applies the mount policy. */
int sb_sandbox_mount_parse(struct sb_sandbox_mount *out, char *text, struct sb_error *err);

/* A record plus what is derived from the disk and the clock. Listing reads
 * records and activity mtimes only (no runsc call): cheap for hundreds. */
struct sb_sandbox_info {
	struct sb_record rec;
	long long last_activity;                 /* unix seconds */
	long long idle_seconds;                  /* now - last_activity, >= 0 */
	long long expires_in;                    /* seconds until expiry (0: due); -1: never */
	int has_checkpoint;                      /* stopped with memory kept on disk */
	char *dir;                               /* ROOT/sandboxes/<name> */
	char *workspace;                         /* host path of /workspace */
	char address[16];                        /* network on: its IPv4 address (inspect only; "" if none) */
};

/* Live numbers from runsc (one runsc call; running sandboxes only). */
struct sb_sandbox_stats {
	unsigned long long memory_usage;         /* bytes */
	unsigned long long memory_limit;         /* bytes, 0 when unknown */
	unsigned long long cpu_ns;               /* total CPU time */
	unsigned long long pids;
};

/* Checks a name; SB_ERR_INVALID with a message that says what is allowed. */
int sb_sandbox_name_check(const char *name, struct sb_error *err);

/* Creates and starts a sandbox. On failure nothing is left behind, or (when
 * cleaning up failed too) a record in state broken that sb_sandbox_remove
 * with SB_REMOVE_FORCE cleans. */
int sb_sandbox_create(struct sb_sandbox_info *out /* may be NULL */, struct sb_root *root,
		      const struct sb_sandbox_spec *spec, struct sb_error *err);

struct sb_exec_opts {
	char *const *argv;                       /* command and arguments */
	const char *cwd;                         /* NULL: the image's working directory (or /) */
	char *const *env;                        /* "K=V" entries, NULL-terminated; may be NULL */
	int timeout_ms;                          /* <= 0: no deadline; on the deadline the command is killed */
	int stdin_fd;                            /* -1: /dev/null */
	int stdout_fd, stderr_fd;                /* -1: captured into the result */
	size_t capture_max;                      /* bytes kept of each stream; 0: 16 MiB */
};

struct sb_exec_result {
	int exit_code;                           /* the command's exit status, 128+signal when killed */
	int timed_out;
	char *out, *errout;                      /* captured output, NUL-terminated ("" if not captured) */
	size_t out_len, err_len;
	long long duration_ms;
};

/* Runs a command in a running sandbox and touches its activity. Returns 0 when
 * the command ran (whatever its exit status); negative when sandbench could not
 * run it. Execs in different sandboxes run in parallel. */
int sb_sandbox_exec(struct sb_exec_result *out, struct sb_root *root, const char *name,
		    const struct sb_exec_opts *opts, struct sb_error *err);
void sb_exec_result_clear(struct sb_exec_result *r);

/* Ends attached sessions, checkpoints memory and processes to disk and deletes
 * the runsc container. reason: why (NULL: "stopped by user"). */
int sb_sandbox_stop(struct sb_root *root, const char *name, const char *reason, struct sb_error *err);
/* Wakes a stopped sandbox from its checkpoint; without one (or with one of
 * another runtime build), cold-starts from its kept disk. A sandbox whose
 * runtime is gone (host restart, crash) counts as stopped. The record's
 * reason says which. */
int sb_sandbox_restore(struct sb_root *root, const char *name, struct sb_error *err);

enum sb_remove_flags {
	SB_REMOVE_FORCE = 1 << 0,                /* also broken or half-created sandboxes; ignore runsc errors */
};
/* Removes everything of the sandbox: runsc container, mount, cgroups, files,
 * workspace included. */
int sb_sandbox_remove(struct sb_root *root, const char *name, unsigned flags, struct sb_error *err);
/* Marks activity now (resets the idle countdown). */
int sb_sandbox_touch(struct sb_root *root, const char *name, struct sb_error *err);
/* Lengthens a temporary sandbox's idle timeout by seconds and touches it. */
int sb_sandbox_extend(struct sb_root *root, const char *name, long long seconds, struct sb_error *err);

/* All sandboxes, sorted by name. Records that cannot be read are listed in
 * state broken with the cause as reason. A record that says running whose
 * runtime is gone (checked cheaply: the boot id of its last boot, its
 * sandbox process) is made stopped first, or removed when it was temporary
 * and the host restarted: no listing shows a dead sandbox as running. */
int sb_sandbox_list(struct sb_sandbox_info **out, size_t *count, struct sb_root *root, struct sb_error *err);
void sb_sandbox_list_free(struct sb_sandbox_info *list, size_t count);
int sb_sandbox_inspect(struct sb_sandbox_info *out, struct sb_root *root, const char *name, struct sb_error *err);
void sb_sandbox_info_clear(struct sb_sandbox_info *info);
int sb_sandbox_stats(struct sb_sandbox_stats *out, struct sb_root *root, const char *name, struct sb_error *err);

/* Expiry of idle temporary sandboxes. */
enum sb_reap_flags {
	SB_REAP_DRY_RUN = 1 << 0,
};
struct sb_reap_item {
	char name[SB_SANDBOX_NAME_MAX + 1];
	enum sb_expiry_action action;            /* what was (or would be) done */
	long long idle_seconds;
	int rc;                                  /* 0, or the negative error of the action */
	char message[256];                       /* the error when rc < 0 */
};
/* Applies the expiry action to every due sandbox; *items lists them (free()). */
int sb_sandbox_reap(struct sb_reap_item **items, size_t *count, struct sb_root *root, unsigned flags,
		    struct sb_error *err);
/* Expires one sandbox now by its expiry action (the workbench's "expire now"). */
int sb_sandbox_expire(struct sb_root *root, const char *name, struct sb_error *err);

/* Interactive sessions on a pty (runsc exec --process with terminal: true).
 * Sessions are registered with their sandbox: stop ends them first (a live
 * host pty would make the checkpoint unrestorable). */
struct sb_session;
/* argv NULL: "/bin/sh -i". The pty starts at rows x cols. */
int sb_session_open(struct sb_session **out, struct sb_root *root, const char *name, char *const *argv,
		    unsigned short rows, unsigned short cols, struct sb_error *err);
int sb_session_fd(const struct sb_session *s);           /* the pty master (O_NONBLOCK, O_CLOEXEC) */
pid_t sb_session_pid(const struct sb_session *s);
int sb_session_resize(struct sb_session *s, unsigned short rows, unsigned short cols);
/* Typing counts as activity: touches the sandbox at most once a second. */
void sb_session_activity(struct sb_session *s);
/* 1 and *status (exit status, 128+signal) when the session ended; 0 when still running. */
int sb_session_poll(struct sb_session *s, int *status);
/* Waits up to timeout_ms for the session to end (after its pty reported EOF/EIO);
 * 1 and *status when it did, 0 on the deadline. */
int sb_session_wait(struct sb_session *s, int timeout_ms, int *status);
/* Ends the session if needed (hang-up, then kill), reaps it and unregisters it. */
void sb_session_close(struct sb_session *s);
/* The shell for an interactive session in a running sandbox (login.c): root's
 * login shell from the sandbox's /etc/passwd, else /bin/bash, else /bin/sh,
 * all looked up inside the sandbox's root (base/inroot.h), never through the
 * host's view of its files. *out is malloc'd. When passwd's shell is not the
 * one chosen, *why (why may be NULL) says why, malloc'd: the passwd is
 * missing, refused (a symlink leading out of the root or to a magic link, not
 * a regular file, over 1 MiB) or names no usable shell; else *why is NULL.
 * SB_ERR_STATE when the sandbox is not running, SB_ERR_NOTFOUND when it has no shell. */
int sb_sandbox_login_shell(char **out, char **why, struct sb_root *root, const char *name, struct sb_error *err);

/* Makes this process a child subreaper so that runsc's orphaned helpers are
 * reaped promptly (runsc delete waits for that). Front ends call it once at start.
 * From then on the library reaps exited children it does not know: a child the
 * caller forks and waits for itself must be marked with sb_proc_keep (proc.h). */
int sb_sandbox_process_init(struct sb_error *err);

#endif
