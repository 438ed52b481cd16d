/* The runsc driver: every runsc call sandbench makes goes through here. argv is
 * built from tables (global flags before the subcommand, --root on every call,
 * the same sandbox-shaping flags on every call for a sandbox), never a shell
 * string; every call has a deadline; stderr is kept for the error message. */
#ifndef SB_RUNSC_H
#define SB_RUNSC_H

#include "base/error.h"
#include "base/proc.h"
#include "base/root.h"

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
	char *const *env;                /* exec: "K=V", NULL-terminated */
	char *const *args;               /* exec: command; NULL-terminated */
	const char *signal;              /* kill: "KILL", "TERM" */
	int force;                       /* delete -force */
	int detach;                      /* exec --detach, restore --detach */
	int any_status;                  /* exec: the command's status is not a runsc failure */
	/* Runs in the child before exec (network namespace tricks); NULL: none. */
	int (*pre_exec)(void *arg);
	void *pre_exec_arg;
	struct sb_proc_opts proc;        /* deadline and stdio (start from SB_RUNSC_CALL_INIT) */
};

#define SB_RUNSC_CALL_INIT(o, i) { .op = (o), .id = (i), .proc = SB_PROC_OPTS_DEFAULT }

struct sb_runsc;

/* Locates runsc (sb_runsc_locate) for the state root; runsc's own state goes to ROOT/runsc. */
int sb_runsc_open(struct sb_runsc **out, struct sb_root *root, struct sb_error *err);
void sb_runsc_close(struct sb_runsc *rs);
/* Builds the argv of a call (NULL-terminated, malloc'd strings): for tests and logs. */
int sb_runsc_argv(char ***out, const struct sb_runsc *rs, const struct sb_runsc_call *call, struct sb_error *err);
void sb_runsc_argv_free(char **argv);
/* Runs the call. A non-zero runsc status is SB_ERR_RUNTIME naming the operation,
 * the container and runsc's last stderr line (unless call->any_status). res may
 * be NULL; otherwise the caller clears it. */
int sb_runsc_run(struct sb_proc_result *res, struct sb_runsc *rs, const struct sb_runsc_call *call,
		 struct sb_error *err);
const char *sb_runsc_path(const struct sb_runsc *rs);

#endif
