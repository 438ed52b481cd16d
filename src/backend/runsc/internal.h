/* Internal to src/backend/runsc/: only its own files include this header. */
#ifndef SB_BACKEND_RUNSC_INTERNAL_H
#define SB_BACKEND_RUNSC_INTERNAL_H

#include <jansson.h>
#include <sys/types.h>

#include "backend/backend.h"
#include "base/error.h"
#include "base/proc.h"
#include "base/root.h"
#include "net/network.h"
#include "sandbox/record.h"

/* The runsc driver: every runsc call sandbench makes goes through here. argv is
 * built from tables (global flags before the subcommand, --root on every call,
 * the same sandbox-shaping flags on every call for a sandbox), never a shell
 * string; every call has a deadline; stderr is kept for the error message. */
enum sb_runsc_op {
	SB_RUNSC_CREATE,
	SB_RUNSC_START,
	SB_RUNSC_EXEC,
	SB_RUNSC_STATE,
	SB_RUNSC_LIST,
	SB_RUNSC_EVENTS,
	SB_RUNSC_KILL,
	SB_RUNSC_DELETE,
	SB_RUNSC_CHECKPOINT,
	SB_RUNSC_RESTORE,
	SB_RUNSC_PAUSE,
	SB_RUNSC_RESUME,
};

/* How the sandbox reaches the network; shapes the sandbox, so it is passed
 * identically on every call for it (restoring with another value panics). */
enum sb_runsc_net {
	SB_RUNSC_NET_NONE,       /* --network=none: loopback only */
	SB_RUNSC_NET_SANDBOX,    /* gVisor's own stack in the spec's netns */
	SB_RUNSC_NET_HOST,       /* the spec's netns through the host stack */
};

struct sb_runsc_call {
	enum sb_runsc_op op;
	const char *id;                  /* container id (all but list) */
	enum sb_runsc_net net;
	const char *bundle;              /* absolute: create, restore */
	const char *pid_file;            /* absolute: create, restore, exec --detach */
	const char *image_path;          /* absolute: checkpoint, restore */
	const char *process_file;        /* exec --process */
	const char *internal_pid_file;   /* exec: where runsc writes the process's pid inside */
	const char *target_pid;          /* kill --pid: one process (pid inside) instead of the init */
	const char *cwd;                 /* exec */
	const char *user;                /* exec: "UID:GID" */
	char *const *env;                /* exec: "K=V", NULL-terminated */
	char *const *args;               /* exec: command; NULL-terminated */
	const char *signal;              /* kill: "KILL", "TERM" */
	int force;                       /* delete -force */
	int detach;                      /* exec --detach, restore --detach */
	int any_status;                  /* exec: the command's status is not a runsc failure */
	/* Runs in the child before exec (network namespace tricks); NULL: none. */
	int (*pre_exec)(void *arg);
	void *pre_exec_arg;
	void (*after_fork)(void *arg);   /* see struct sb_proc_opts */
	struct sb_proc_opts proc;        /* deadline and stdio (start from SB_RUNSC_CALL_INIT) */
};

#define SB_RUNSC_CALL_INIT(o, i) { .op = (o), .id = (i), .proc = SB_PROC_OPTS_DEFAULT }

struct sb_runsc;

/* Locates runsc (sb_runsc_locate) for the state root; runsc's own state goes to ROOT/runsc. */
int sb_runsc_open(struct sb_runsc **out, struct sb_root *root, struct sb_error *err);
void sb_runsc_close(struct sb_runsc *rs);
/* Builds the argv of a call (NULL-terminated, malloc'd strings; sb_backend_argv_free). */
int sb_runsc_argv(char ***out, const struct sb_runsc *rs, const struct sb_runsc_call *call, struct sb_error *err);
/* Runs the call. A non-zero runsc status is SB_ERR_RUNTIME naming the operation,
 * the container and runsc's last stderr line (unless call->any_status). res may
 * be NULL; otherwise the caller clears it. */
int sb_runsc_run(struct sb_proc_result *res, struct sb_runsc *rs, const struct sb_runsc_call *call,
		 struct sb_error *err);
const char *sb_runsc_path(const struct sb_runsc *rs);
/* runsc's own state directory, ROOT/runsc (its --root). */
const char *sb_runsc_state_dir(const struct sb_runsc *rs);
/* The identity of the runsc binary at path (its size and modification time:
 * a package upgrade changes them, a reinstall of the same build does not):
 * "runsc:SIZE:MTIME" into out; -1 (out "") when it cannot be read. */
int sb_runsc_build_of(char *out, size_t size, const char *path);

/* A container reached without the runsc CLI (direct.c): open locks runsc's
 * lock of the container, reads its state file, requires status from (the
 * edited text has to instead, for the caller to write), connects to the
 * sandbox's control socket and checks its peer: NULL, or why the CLI should
 * do it (nothing sent yet). close releases it all; fill id, lock_fd = -1,
 * sock = -1 and deadline first. */
struct sb_runsc_direct {
	const char *id;
	char *lock_path, *state_path;
	char *text, *edited;
	size_t len, edited_len;
	long pid;                        /* the sandbox's process */
	int lock_fd, sock;
	long long deadline;              /* monotonic ms */
};
const char *sb_runsc_direct_open(struct sb_runsc_direct *d, const struct sb_runsc *rs, const char *build,
				 const char *from, const char *to);
void sb_runsc_direct_close(struct sb_runsc_direct *d);

/* pause and resume without the runsc CLI (freeze.c, docs/pause.md): for the
 * measured runsc builds only, through runsc's own lock and state file and the
 * sandbox's control socket. 0 done; 1 not done, nothing changed: use the CLI
 * (the log says why); or an error after the request went out (the outcome is
 * unknown: never a success, never a second try). */
int sb_runsc_freeze_direct(struct sb_runsc *rs, const char *build, const struct sb_backend_sandbox *sb, int resume,
			   int timeout_ms, struct sb_error *err);
/* exec without the runsc CLI (exec_direct.c), for the measured builds:
 * init prepares it in the caller (runsc's lock, the control socket, the
 * requests) and returns 1, or 0 when it declines before anything ran
 * (another build, a terminal, a user other than root, a state not as
 * measured, proc NULL): the log says why, and `runsc exec` runs as usual.
 * sb_runsc_quick_child is then the pre_exec hook of the child that would
 * exec `runsc exec`: it runs the process (an OCI process as a --process
 * file has it) on that child's stdio and exits with its status (128+signal),
 * or returns 0 for the CLI when the sandbox refuses the call. detach: the
 * child exits 0 once the process runs, without waiting for it (and fails
 * when the sandbox refuses: no CLI then). forked is the after_fork
 * hook; clear releases what is left. */
struct sb_runsc_quick {
	const char *id;
	const char *ipid_file;           /* where the pid inside goes, as with --internal-pid-file */
	int sock, lock_fd;               /* the control socket and runsc's lock, for the child */
	int detach;                      /* started, not waited for */
	char *signal_req, *exec_req;     /* the requests, encoded */
	char *wait_head;                 /* WaitPID's request up to the pid */
};
int sb_runsc_quick_init(struct sb_runsc_quick *q, const struct sb_runsc *rs, const char *build, const char *id,
			const json_t *proc, const char *ipid_file);
void sb_runsc_quick_forked(void *q);
void sb_runsc_quick_clear(struct sb_runsc_quick *q);
int sb_runsc_quick_child(void *q);
/* runsc's state file text (len bytes) of container id with its status from
 * replaced by to, byte for byte otherwise (*out malloc'd, NUL-terminated);
 * *pid the sandbox's process. SB_ERR_STATE when its status is not from,
 * SB_ERR_FORMAT when it is not as measured (the status not exactly once in
 * runsc's compact form, another id, no sandbox pid). */
int sb_runsc_state_edit(char **out, size_t *out_len, long *pid, const char *text, size_t len, const char *id,
			const char *from, const char *to);

/* urpc, the RPC of a sandbox's control socket (urpc.c): one JSON object per
 * message on a unix stream socket. */
#define SB_URPC_REPLY_MAX 16384          /* bytes of a reply read at most */
#define SB_URPC_FILES_MAX 3               /* files passed with a call (an exec's stdio) */
struct sb_urpc_reply {
	int success;
	char err[256];                   /* the sandbox's error text, cut short */
	int has_result;                  /* result is an integer (a pid, a wait status) */
	long long result;
};
/* {"method":method,"arg":arg} (arg NULL: null; the caller keeps arg); *out malloc'd. */
int sb_urpc_encode(char **out, const char *method, json_t *arg, struct sb_error *err);
/* Where the JSON object at the start of buf (after blanks) ends: 1 and *end
 * (bytes up to and with its closing brace), 0 when it is incomplete, or
 * SB_ERR_FORMAT when buf holds no object or one nested too deeply. */
int sb_urpc_frame_end(size_t *end, const char *buf, size_t len);
/* A reply: exactly one object with a boolean success, a string err (empty on
 * success) and a result, and nothing else; SB_ERR_FORMAT otherwise. */
int sb_urpc_decode(struct sb_urpc_reply *out, const char *buf, size_t len);
/* Connects to the abstract unix socket name (non-blocking); *peer is the pid
 * of its owner (SO_PEERCRED). */
int sb_urpc_connect(int *fd, pid_t *peer, const char *name, struct sb_error *err);
/* One call on fd: sends the request with files (n_files at most
 * SB_URPC_FILES_MAX; they are not in the JSON), reads one reply by deadline
 * (monotonic ms; at most SB_URPC_REPLY_MAX bytes, files refused). *sent:
 * whether any of the request went out (before that, nothing can have
 * happened). */
int sb_urpc_call(struct sb_urpc_reply *out, int *sent, int fd, const char *method, json_t *arg, const int *files,
		 size_t n_files, long long deadline, struct sb_error *err);
/* The same with an encoded request (sb_urpc_encode) and a reply buffer of
 * SB_URPC_REPLY_MAX bytes, async-signal-safe (no allocation, no locale: the
 * forked child of a process with threads calls it, exec_direct.c): 0 or a
 * failure below, with errno for SB_URPC_IO. */
enum {
	SB_URPC_IO = -1,                 /* the socket failed (errno) */
	SB_URPC_TIMEOUT = -2,            /* the deadline passed */
	SB_URPC_CLOSED = -3,             /* the sandbox hung up before it answered */
	SB_URPC_FILES = -4,              /* too many files to send, or files in the reply */
	SB_URPC_FORMAT = -5,             /* not one reply */
	SB_URPC_BIG = -6,                /* a reply over SB_URPC_REPLY_MAX */
};
int sb_urpc_exchange(struct sb_urpc_reply *out, int *sent, int fd, const char *req, const int *files,
		     size_t n_files, long long deadline, char *buf);
/* Where the user finds what runsc said when a call failed: its own words go
 * to sandbench's log, never into a message. */
const char *sb_runsc_log_hint(void);

/* A sandbox's disk: an overlay whose lower layer is the image rootfs (shared,
 * read-only) and whose upper/work dirs belong to the sandbox. */
/* Mounts target (idempotent: an overlay already there is fine). volatile:
 * no syncs to the upper layer, so unmounting costs no filesystem-wide sync
 * (~100 ms on a busy host); for disks that a host crash may lose anyway. */
int sb_overlay_mount(const char *target, const char *lower, const char *upper, const char *work, int volatile_,
		     struct sb_error *err);
/* Unmounts target if mounted; busy mounts are detached lazily. */
int sb_overlay_umount(const char *target, struct sb_error *err);

/* The OCI runtime spec (bundle/config.json) of a sandbox, built with jansson. */
struct sb_spec_params {
	const struct sb_record *rec;     /* name (hostname), mounts, resources */
	const char *rootfs;              /* absolute: the overlay mount point */
	const char *workspace;           /* host dir bound rw at /workspace */
	const char *exchange;            /* host dir bound rw at /exchange; NULL: none */
	const char *netns_path;          /* network namespace to join; NULL: a fresh one */
	const char *hosts, *resolv;      /* host files bound read-only at /etc/hosts, /etc/resolv.conf; NULL: none */
	const char *const *mount_sources;/* bound in place of rec->mounts[i].host (see backend.h) */
};

/* The process object of a spec or of `runsc exec --process`. env NULL: the
 * default environment; cwd NULL: /workspace. NULL when a part of it cannot be
 * built. */
json_t *sb_spec_process(char *const *args, char *const *env, const char *cwd, const struct sb_backend_user *user,
			int terminal, unsigned short rows, unsigned short cols);
/* The process of a plain `runsc exec` as a --process file: what runsc makes
 * of its command line (the container's environment, then env), then more_env;
 * a later value of a variable replaces an earlier one. NULL when a part of it
 * cannot be built. */
/* proc with the capabilities more (NULL-terminated, may be NULL) added to
 * every set; steals proc, NULL when out of memory. */
json_t *sb_spec_add_caps(json_t *proc, const char *const *more);
json_t *sb_spec_exec_process(char *const *args, char *const *env, char *const *more_env, const char *cwd,
			     const struct sb_backend_user *user);
/* The RLIMIT_AS every process of rec's sandbox gets (bytes; 0: no memory
 * limit, none). */
unsigned long long sb_spec_as_limit(const struct sb_record *rec);
/* Adds that RLIMIT_AS to proc's rlimits; NULL (proc freed) when it cannot:
 * never a process left without its limit. proc NULL: NULL. */
json_t *sb_spec_limit_process(json_t *proc, const struct sb_record *rec);
/* SB_ERR_NOMEM when a part cannot be built: never a spec with a mount or a
 * limit left out. */
int sb_spec_build(json_t **out, const struct sb_spec_params *p, struct sb_error *err);
/* Builds and writes bundle_dir/config.json (rewritten before every boot). */
int sb_spec_write(const char *bundle_dir, const struct sb_spec_params *p, struct sb_error *err);

/* The netstack workaround (notes/runsc.md): how runsc reaches a network-on
 * sandbox's namespace on this runsc/kernel pair. */
/* The refusal this runsc prints; recognised in probes. */
#define SB_NETSTACK_ROOTNS_ERROR "cannot run with network enabled in root network namespace"

/* pre_exec hook for struct sb_proc_opts; arg is the sandbox's netns path
 * (const char *). Refuses (non-zero) unless that path is a network namespace
 * other than the caller's own, because with /proc/sys hidden runsc could no
 * longer tell and would take over the host's interfaces. Only system calls:
 * it runs between fork and exec. */
int sb_netstack_pre_exec(void *arg);

/* *needed: whether runsc must run through sb_netstack_pre_exec for
 * --network=sandbox here. Answered from ROOT/network/netstack.json when it
 * was probed for this runsc binary and kernel; otherwise probes by starting a
 * throw-away sandbox without the workaround and, when runsc refuses with the
 * error above, with it (about 0.3 s, once). SB_ERR_PREREQ when neither works. */
int sb_netstack_needed(int *needed, struct sb_root *root, struct sb_error *err);

/* The pre_exec hook (and its argument) for the runsc calls that set a
 * network-on sandbox's network up (start, restore): the netstack workaround
 * for info's namespace when this runsc/kernel pair needs it, else NULL.
 * Whether it is needed is probed once per runsc binary and kernel. */
/* A call for sandbox sb: its id, network mode and lifecycle deadline. */
struct sb_runsc_call sb_runsc_call_for(const struct sb_backend_sandbox *sb, enum sb_runsc_op op);
/* The backend's boot and teardown (struct sb_backend_ops). */
int sb_runsc_boot(struct sb_runsc *rs, struct sb_root *root, const struct sb_backend_sandbox *sb,
		  const char *image_path, struct sb_error *err);
int sb_runsc_teardown(struct sb_runsc *rs, const struct sb_backend_sandbox *sb, unsigned flags, struct sb_error *err);
/* Removes the cgroup runsc made for container id in every v1 hierarchy (a
 * failed boot can leak it); missing ones are fine. */
void sb_runsc_remove_cgroups(const char *id);
/* A pidfd of sb's runsc-sandbox process when its pid file names one that is
 * alive (checked through /proc), else -1. No runsc call. */
int sb_runsc_sandbox_pidfd(const struct sb_backend_sandbox *sb);
/* Memory, its limit, CPU time and host tasks of a running sandbox from its
 * own cgroup (cgroup.c); SB_ERR_NOTFOUND when it has none we can read. */
int sb_runsc_cgroup_stats(struct sb_backend_stats *out, const struct sb_backend_sandbox *sb, struct sb_error *err);

int sb_runsc_net_hook(int (**fn)(void *), void **arg, struct sb_root *root, const struct sb_netinfo *info,
		      struct sb_error *err);

/* Published ports (forward.c), in the keeper: the listeners of the record's
 * publish entries (*out: malloc'd, one per entry; NULL when none; a port in
 * use is SB_ERR_EXISTS naming it), then the loop that relays their
 * connections to the sandbox and reaps the keeper's children; it ends the
 * process when the last child has ended. */
int sb_runsc_forward_listen(int **out, const struct sb_backend_sandbox *sb, struct sb_error *err);
void sb_runsc_forward_run(const int *listeners, const struct sb_backend_sandbox *sb) __attribute__((noreturn));
/* Has the keeper of a running sandbox with published ports reset every
 * connection it relays (before a checkpoint: this runsc cannot save an open
 * TCP endpoint); 1 when it confirmed within a deadline, 0 otherwise (no
 * keeper, no published port, no answer). */
int sb_runsc_forward_reset(const struct sb_backend_sandbox *sb);

#endif
