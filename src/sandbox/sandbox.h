/* Sandboxes: named runsc sandboxes, each with its own disk (an overlay on its
 * image's rootfs), workspace, mounts and expiry. The public API of the runtime
 * for the command line and the workbench. Every code-running operation checks
 * the prerequisites first and refuses when one is missing (fail closed). */
#ifndef SB_SANDBOX_H
#define SB_SANDBOX_H

#include <stddef.h>
#include <sys/types.h>

#include "base/error.h"
#include "base/redact.h"
#include "sandbox/record.h"
#include "base/root.h"
#include "sandbox/timeline.h"

/* Options of sb_sandbox_create. Zero values mean "the configured default"
 * (ROOT/config over data/sandbench.conf). The caller keeps ownership. */
struct sb_sandbox_spec {
	const char *name;                        /* [A-Za-z0-9_.-]{1,63}, unique */
	const char *image;                       /* reference or manifest digest (image store) */
	enum sb_sandbox_kind kind;
	long long idle_timeout;                  /* seconds, temporary only; 0: default */
	enum sb_expiry_action expiry_action;
	long long expiry_stop_after;             /* pause: seconds paused until a stop; 0: none */
	int network;                             /* -1: default, 0: off, 1: on */
	const struct sb_egress *egress;          /* network on: its egress policy; NULL: the default */
	int no_exchange;                         /* do not mount ROOT/exchange at /exchange */
	const struct sb_sandbox_mount *mounts;   /* host mounts (already policy-checked or not: create checks) */
	size_t n_mounts;
	int allow_sensitive_mounts;              /* accept host paths of the mount policy's deny list */
	unsigned long long memory;               /* bytes; 0: default */
	double cpus;                             /* 0: default (unlimited unless configured) */
	unsigned long long disk;                 /* bytes: a disk of this size for upper and workspace; 0: no cap */
	const char *owner;                       /* NULL: none */
	const struct sb_sandbox_label *labels;
	size_t n_labels;
	const struct sb_service *service;        /* NULL or command NULL: none */
	const struct sb_publish *publish;        /* published ports (network on) */
	size_t n_publish;
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
	unsigned long long disk_used, disk_size; /* a capped disk: bytes in use and its usable size; 0 when not mounted */
};

/* Live numbers from runsc (one runsc call; running sandboxes only). */
struct sb_sandbox_stats {
	unsigned long long memory_usage;         /* bytes */
	unsigned long long memory_limit;         /* bytes, 0 when unknown */
	unsigned long long cpu_ns;               /* total CPU time */
	unsigned long long pids;
};

/* Egress policies (net/egress.h). parse builds one from --allow items
 * (ADDRESS[/PREFIX][:PORT], or @NAME for an allow_profile of the
 * configuration): allow mode when there are any, default otherwise; a bad
 * item is SB_ERR_INVALID naming it. set_egress changes the policy of a
 * network-on sandbox, in its record and, when its network is up, at once
 * (open connections included), and notes the change in its timeline.
 * egress_collect moves the connections the policy dropped since the last
 * call into the timeline (kind network, "denied tcp 10.0.0.1:80", at the
 * time of the last attempt); *count (may be NULL) says how many. */
int sb_sandbox_egress_parse(struct sb_egress *out, struct sb_root *root, const char *const *allow, size_t n,
			    struct sb_error *err);
int sb_sandbox_set_egress(struct sb_root *root, const char *name, const struct sb_egress *egress,
			  struct sb_error *err);
int sb_sandbox_egress_collect(size_t *count, struct sb_root *root, const char *name, struct sb_error *err);
/* The policy of a record in one line for people ("deny-all", "allow 10.0.0.0/8:80",
 * "default (internet; no link-local, metadata, host or private addresses)"):
 * malloc'd, NULL when out of memory. */
char *sb_sandbox_egress_text(struct sb_root *root, const struct sb_record *rec);

/* Services (docs/services.md). The spec's service and publish fields go
 * into the record as given; create checks them. */
struct sb_service_status {
	int known;                               /* the supervisor has said something */
	char state[16];                          /* "running", "backoff" (waiting to restart), "exited" */
	char health[16];                         /* "none", "starting", "healthy", "unhealthy" */
	int restarts;
};
/* What the supervisor of a running service sandbox last wrote (in-root,
 * no runsc call: cheap for listings); 1 when known, 0 otherwise. */
int sb_sandbox_service_status(struct sb_service_status *out, const struct sb_sandbox_info *info);
/* The state for people: "running (healthy)", "running (restarting)", "stopped". */
void sb_sandbox_state_text(char *buf, size_t size, const struct sb_sandbox_info *info);
/* {"state", "health", "restarts"}, or JSON null when unknown (new reference). */
json_t *sb_service_status_json(const struct sb_sandbox_info *info);
/* Moves the supervisor's new events (start, exit, restart, health) into the
 * timeline (kind service); *count (may be NULL) says how many. */
int sb_sandbox_service_collect(size_t *count, struct sb_root *root, const char *name, struct sb_error *err);
/* Writes the service's output to fd from *pos (0 at first; afterwards the
 * value this call left, to follow it); since > 0 (unix seconds): on the
 * first call only what was written then or later (to the second). */
int sb_sandbox_logs(unsigned long long *pos, int fd, struct sb_root *root, const char *name, long long since,
		    struct sb_error *err);

/* Checks a name; SB_ERR_INVALID with a message that says what is allowed. */
int sb_sandbox_name_check(const char *name, struct sb_error *err);

/* Creates and starts a sandbox. On failure nothing is left behind, or (when
 * cleaning up failed too) a record in state broken that sb_sandbox_remove
 * with SB_REMOVE_FORCE cleans. */
int sb_sandbox_create(struct sb_sandbox_info *out /* may be NULL */, struct sb_root *root,
		      const struct sb_sandbox_spec *spec, struct sb_error *err);

struct sb_exec_opts {
	char *const *argv;                       /* command and arguments */
	const char *cwd;                         /* NULL: the image's WorkingDir, else /workspace */
	const char *user;                        /* "name", "uid[:gid]", ...; NULL: the image's User, else root */
	char *const *env;                        /* "K=V" entries, NULL-terminated; may be NULL */
	int timeout_ms;                          /* <= 0: no deadline; on the deadline the command is killed */
	int stdin_fd;                            /* -1: /dev/null */
	int stdout_fd, stderr_fd;                /* -1: captured into the result; else it goes there as it comes */
	size_t capture_max;                      /* bytes kept of each stream; 0: 16 MiB */
	enum sb_timeline_source source;          /* who runs it, for the timeline; 0: an agent */
	/* Values kept out of everything sandbench records or shows: the command
	 * gets NAME=VALUE in its environment; the timeline lists the names, and
	 * wherever a value would appear in it (the command, the output) it is
	 * "[secret NAME]". They reach runsc through no command line and no file.
	 * A value under SB_REDACT_MIN_VALUE bytes is refused (SB_ERR_INVALID). */
	const struct sb_secret *secrets;
	size_t n_secrets;
	/* sandbench's own helper command (cp's tar), whose caller records what
	 * it did (a file entry): no exec entry of its own */
	int unrecorded;
};

struct sb_exec_result {
	int exit_code;                           /* the command's exit status, 128+signal when killed */
	int timed_out;
	char *out, *errout;                      /* captured output, NUL-terminated ("" if not captured) */
	size_t out_len, err_len;
	unsigned long long out_bytes;            /* what the command wrote (stdout + stderr), kept or not */
	long long duration_ms;
};

/* Runs a command in a running sandbox, touches its activity and adds it to
 * the timeline (command, cwd, exit status, duration, output size and the
 * first timeline_output bytes of each stream). Returns 0 when
 * the command ran (whatever its exit status); negative when sandbench could not
 * run it. Execs in different sandboxes run in parallel. */
int sb_sandbox_exec(struct sb_exec_result *out, struct sb_root *root, const char *name,
		    const struct sb_exec_opts *opts, struct sb_error *err);
void sb_exec_result_clear(struct sb_exec_result *r);

/* What sb_sandbox_fork did beside making the fork. */
struct sb_fork_report {
	int memory;                              /* the fork carries on the source's memory and processes */
	int source_checkpointed;                 /* the source was running: checkpointed, its sessions ended */
	int source_restored;                     /* ... and restored afterwards (0: see source_error) */
	char source_error[1024];                 /* why restoring the source failed ("" when it did not) */
	unsigned long long skipped;              /* special files of the disk left out (sockets, devices) */
};

/* Makes sandbox name a copy of source: its disk (overlay upper and
 * workspace, copied) and, when source runs or is stopped with a checkpoint,
 * its memory and processes (restored from source's checkpoint image; a
 * running source is checkpointed, which ends its sessions, and restored
 * right after). Network, mounts (verified again at the fork's boot), limits,
 * owner and labels follow the source; kind SB_KIND_DEFAULT keeps its kind.
 * The record names its parent. On failure nothing of name is left behind.
 * out and report may be NULL. */
int sb_sandbox_fork(struct sb_sandbox_info *out, struct sb_fork_report *report, struct sb_root *root,
		    const char *source, const char *name, enum sb_sandbox_kind kind, struct sb_error *err);

/* Ends attached shells, checkpoints memory and processes to disk and deletes
 * the runsc container. reason: why (NULL: "stopped by user"). */
int sb_sandbox_stop(struct sb_root *root, const char *name, const char *reason, struct sb_error *err);
/* Wakes a stopped sandbox from its checkpoint; without one (or with one of
 * another runtime build), cold-starts from its kept disk. A sandbox whose
 * runtime is gone (host restart, crash) counts as stopped. The record's
 * reason says which. */
int sb_sandbox_restore(struct sb_root *root, const char *name, struct sb_error *err);
/* Freezes every process of a running sandbox, memory kept in RAM (no
 * checkpoint): state paused. resume lets them carry on (state running). */
int sb_sandbox_pause(struct sb_root *root, const char *name, struct sb_error *err);
int sb_sandbox_resume(struct sb_root *root, const char *name, struct sb_error *err);
/* Resumes the sandbox when it is paused, for what needs it running (why: an
 * exec, an input...; the timeline's reason says so); nothing otherwise, for
 * the price of one lstat. *woken (may be NULL): whether it was paused. */
int sb_sandbox_wake(int *woken, struct sb_root *root, const char *name, const char *why, struct sb_error *err);

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
/* The JSON form of a sandbox (the record plus activity, expiry, workspace):
 * the CLI's ls, inspect, create and the MCP server's results. New reference. */
json_t *sb_sandbox_info_json(const struct sb_sandbox_info *info);
/* What a fork did, as the CLI's --json shows it under "fork". */
json_t *sb_fork_report_json(const struct sb_fork_report *r);
/* Memory in use and its limit, CPU time and tasks of a running sandbox. The
 * runsc backend reads them from the sandbox's own cgroup (microseconds; it
 * falls back to `runsc events` only where it finds none). pids counts the
 * sandbox's host tasks (sentry threads and gofer), not processes inside. */
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
/* What expiry does to it now: its expiry action, or stop for a paused
 * sandbox of pause,stop=D (the second tier). */
enum sb_expiry_action sb_sandbox_expiry_due(const struct sb_sandbox_info *info);

/* Interactive shells on a pty (runsc exec --process with terminal: true).
 * Shells are registered with their sandbox: stop ends them first (a live
 * host pty would make the checkpoint unrestorable). */
struct sb_shell;
struct sb_shell_opts {
	char *const *argv;               /* NULL: "/bin/sh -i" */
	char *const *env;                /* "K=V" over the defaults (PATH, HOME, TERM, LANG) and the
					  * image's Env; may be NULL */
	const char *cwd;                 /* NULL: the image's WorkingDir, else /workspace */
	const char *term;                /* NULL: xterm-256color */
	unsigned short rows, cols;       /* the pty's size; 0: 24 x 80 */
	int no_echo;                     /* the terminal starts with echo off */
	int register_caller;             /* stop waits for the calling process (a session holder, which
					  * records the end) rather than for the runsc exec */
};
/* opts may be NULL (all defaults). */
int sb_shell_open(struct sb_shell **out, struct sb_root *root, const char *name, const struct sb_shell_opts *opts,
		  struct sb_error *err);
int sb_shell_fd(const struct sb_shell *s);           /* the pty master (O_NONBLOCK, O_CLOEXEC) */
pid_t sb_shell_pid(const struct sb_shell *s);
int sb_shell_resize(struct sb_shell *s, unsigned short rows, unsigned short cols);
/* Typing counts as activity: touches the sandbox at most once a second,
 * without its lock (never waits for a stop that is ending this shell). */
void sb_shell_activity(struct sb_shell *s);
/* Kills the shell's process inside the sandbox (its host side follows). */
void sb_shell_kill(struct sb_shell *s);
/* 1 once the backend has written the pid of the shell's process inside: its
 * runsc exec is through its own writes (until then a full disk ends it). */
int sb_shell_settled(const struct sb_shell *s);
/* 1 when stop (or rm) took this shell's registration: it is being ended. */
int sb_shell_ended_by_stop(const struct sb_shell *s);
/* 1 and *status (exit status, 128+signal) when the shell ended; 0 when still running. */
int sb_shell_poll(struct sb_shell *s, int *status);
/* Waits up to timeout_ms for the shell to end (after its pty reported EOF/EIO);
 * 1 and *status when it did, 0 on the deadline. */
int sb_shell_wait(struct sb_shell *s, int timeout_ms, int *status);
/* Ends the shell if needed (hang-up, then kill), reaps it and unregisters it. */
void sb_shell_close(struct sb_shell *s);
/* The shell for an interactive shell in a running sandbox (login.c): root's
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
