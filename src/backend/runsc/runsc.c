#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fs.h"
#include "base/i18n.h"
#include "base/log.h"
#include "internal.h"

struct sb_runsc {
	char *path;
	char *state_dir;                 /* ROOT/runsc */
	char *root_flag;                 /* --root=ROOT/runsc */
};

/* Options of a subcommand, in the order they are emitted. */
enum opt_kind {
	OPT_STR,                         /* "--flag VALUE" from a const char * field */
	OPT_BOOL,                        /* "--flag" when an int field is set */
	OPT_LIST,                        /* "--flag VALUE" for each entry of a char *const * field */
};

struct opt_def {
	const char *flag;
	enum opt_kind kind;
	size_t offset;
};

#define STR(f, field) { f, OPT_STR, offsetof(struct sb_runsc_call, field) }
#define BOOL(f, field) { f, OPT_BOOL, offsetof(struct sb_runsc_call, field) }
#define LIST(f, field) { f, OPT_LIST, offsetof(struct sb_runsc_call, field) }

struct op_def {
	const char *name;
	int shaping;                     /* takes the sandbox-shaping global flags */
	int takes_id;
	const char *const *fixed;        /* constant arguments after the subcommand */
	struct opt_def opts[8];
	int trailing;                    /* 1: call->args after the id; 2: call->signal */
};

static const char *const list_fixed[] = { "--format", "json", NULL };
static const char *const events_fixed[] = { "--stats", NULL };

static const struct op_def ops[] = {
	[SB_RUNSC_CREATE] = { "create", 1, 1, NULL, { STR("--bundle", bundle), STR("--pid-file", pid_file) }, 0 },
	[SB_RUNSC_START] = { "start", 1, 1, NULL, { { 0 } }, 0 },
	[SB_RUNSC_EXEC] = { "exec", 1, 1, NULL,
			    { BOOL("--detach", detach), STR("--pid-file", pid_file),
			      STR("--internal-pid-file", internal_pid_file), STR("--cwd", cwd), STR("--user", user),
			      LIST("--env", env),
			      STR("--process", process_file) }, 1 },
	[SB_RUNSC_STATE] = { "state", 0, 1, NULL, { { 0 } }, 0 },
	[SB_RUNSC_LIST] = { "list", 0, 0, list_fixed, { { 0 } }, 0 },
	[SB_RUNSC_EVENTS] = { "events", 0, 1, events_fixed, { { 0 } }, 0 },
	[SB_RUNSC_KILL] = { "kill", 0, 1, NULL, { STR("--pid", target_pid) }, 2 },
	[SB_RUNSC_DELETE] = { "delete", 0, 1, NULL, { BOOL("-force", force) }, 0 },
	[SB_RUNSC_CHECKPOINT] = { "checkpoint", 1, 1, NULL, { STR("--image-path", image_path) }, 0 },
	[SB_RUNSC_RESTORE] = { "restore", 1, 1, NULL,
			       { BOOL("--detach", detach), STR("--image-path", image_path), STR("--bundle", bundle),
				 STR("--pid-file", pid_file) }, 0 },
	[SB_RUNSC_PAUSE] = { "pause", 0, 1, NULL, { { 0 } }, 0 },
	[SB_RUNSC_RESUME] = { "resume", 0, 1, NULL, { { 0 } }, 0 },
};

static const char *const net_flags[] = {
	[SB_RUNSC_NET_NONE] = "--network=none",
	[SB_RUNSC_NET_SANDBOX] = "--network=sandbox",
	[SB_RUNSC_NET_HOST] = "--network=host",
};

/* The sandbox-shaping flags other than the network: runsc does not store them,
 * so every call for a sandbox repeats them. ptrace: kvm hangs on this host kind. */
static const char *const shaping_flags[] = { "--platform=ptrace", NULL };

int sb_runsc_locate(char **out, struct sb_error *err)
{
	const char *env = getenv("SANDBENCH_RUNSC");

	*out = NULL;
	if (env && *env) {
		if (access(env, X_OK) != 0)
			return sb_error_errno(err, SB_ERR_PREREQ, errno, _("runsc at $SANDBENCH_RUNSC '%s' is not executable"), env);
		*out = strdup(env);
		return *out ? 0 : sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	if ((*out = sb_path_search("runsc")))
		return 0;
	return sb_error_set(err, SB_ERR_PREREQ, _("runsc (gVisor) was not found in PATH; install it with 'apt-get install runsc'"));
}

int sb_runsc_open(struct sb_runsc **out, struct sb_root *root, struct sb_error *err)
{
	struct sb_runsc *rs;
	char *state;
	int rc;

	*out = NULL;
	if (!(rs = calloc(1, sizeof(*rs))))
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	if ((rc = sb_runsc_locate(&rs->path, err)) < 0) {
		free(rs);
		return rc;
	}
	state = sb_root_file(root, "runsc");
	rs->root_flag = state ? sb_strdupf("--root=%s", state) : NULL;
	rs->state_dir = state;
	if (!rs->root_flag) {
		sb_runsc_close(rs);
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	*out = rs;
	return 0;
}

void sb_runsc_close(struct sb_runsc *rs)
{
	if (!rs)
		return;
	free(rs->path);
	free(rs->state_dir);
	free(rs->root_flag);
	free(rs);
}

const char *sb_runsc_log_hint(void)
{
	return _("runsc's own message is in the log (-v or SANDBENCH_LOG=FILE)");
}

const char *sb_runsc_path(const struct sb_runsc *rs)
{
	return rs->path;
}

const char *sb_runsc_state_dir(const struct sb_runsc *rs)
{
	return rs->state_dir;
}

struct argv_builder {
	char **v;
	size_t n, cap;
	int failed;
};

static void push(struct argv_builder *b, const char *s)
{
	if (b->failed)
		return;
	if (b->n + 2 > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 32;
		char **v = realloc(b->v, cap * sizeof(*v));
		if (!v) {
			b->failed = 1;
			return;
		}
		b->v = v;
		b->cap = cap;
	}
	if (!(b->v[b->n] = strdup(s))) {
		b->failed = 1;
		return;
	}
	b->v[++b->n] = NULL;
}

static void push_opt(struct argv_builder *b, const struct opt_def *o, const struct sb_runsc_call *c)
{
	const char *base = (const char *)c + o->offset;

	switch (o->kind) {
	case OPT_STR: {
		const char *v = *(const char *const *)base;
		if (v) {
			push(b, o->flag);
			push(b, v);
		}
		break;
	}
	case OPT_BOOL:
		if (*(const int *)base)
			push(b, o->flag);
		break;
	case OPT_LIST:
		for (char *const *l = *(char *const *const *)base; l && *l; l++) {
			push(b, o->flag);
			push(b, *l);
		}
		break;
	}
}

int sb_runsc_argv(char ***out, const struct sb_runsc *rs, const struct sb_runsc_call *call, struct sb_error *err)
{
	struct argv_builder b = { 0 };

	*out = NULL;
	if ((size_t)call->op >= sizeof(ops) / sizeof(ops[0]) || (size_t)call->net >= sizeof(net_flags) / sizeof(net_flags[0]))
		return sb_error_set(err, SB_ERR_INVALID, _("invalid runsc operation"));
	const struct op_def *op = &ops[call->op];
	if (op->takes_id && (!call->id || !*call->id))
		return sb_error_set(err, SB_ERR_INVALID, _("runsc %s needs a container id"), op->name);
	push(&b, rs->path);
	push(&b, rs->root_flag);
	if (op->shaping) {
		push(&b, net_flags[call->net]);
		for (const char *const *f = shaping_flags; *f; f++)
			push(&b, *f);
	}
	push(&b, op->name);
	for (const char *const *f = op->fixed; f && *f; f++)
		push(&b, *f);
	for (size_t i = 0; i < sizeof(op->opts) / sizeof(op->opts[0]) && op->opts[i].flag; i++)
		push_opt(&b, &op->opts[i], call);
	if (op->takes_id)
		push(&b, call->id);
	if (op->trailing == 1)
		for (char *const *a = call->args; a && *a; a++)
			push(&b, *a);
	if (op->trailing == 2)
		push(&b, call->signal ? call->signal : "KILL");
	if (b.failed) {
		sb_backend_argv_free(b.v);
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	*out = b.v;
	return 0;
}

int sb_runsc_run(struct sb_proc_result *res, struct sb_runsc *rs, const struct sb_runsc_call *call,
		 struct sb_error *err)
{
	struct sb_proc_result local;
	struct sb_proc_opts opts = call->proc;
	char **argv, line[300];
	int rc;

	if (!res)
		res = &local;
	memset(res, 0, sizeof(*res));
	if ((rc = sb_runsc_argv(&argv, rs, call, err)) < 0)
		return rc;
	opts.pre_exec = call->pre_exec;
	opts.pre_exec_arg = call->pre_exec_arg;
	opts.after_fork = call->after_fork;
	sb_log("runsc %s %s", ops[call->op].name, call->id ? call->id : "");
	rc = sb_proc_run(res, argv, &opts, err);
	if (rc == SB_ERR_TIMEOUT)
		sb_error_set(err, SB_ERR_TIMEOUT, _("runsc %s of '%s' did not finish within %d s"), ops[call->op].name,
			     call->id ? call->id : "-", opts.timeout_ms / 1000);
	else if (rc == 0 && res->status != 0 && !call->any_status) {
		/* runsc's own words are a diagnosis for the log, not a message */
		sb_log("runsc %s of '%s' failed (exit %d): %s", ops[call->op].name, call->id ? call->id : "-",
		       res->status, sb_proc_last_line(res, line, sizeof(line)));
		rc = sb_error_set(err, SB_ERR_RUNTIME, _("runsc %s of '%s' failed (exit %d); %s"), ops[call->op].name,
				  call->id ? call->id : "-", res->status, sb_runsc_log_hint());
	}
	sb_backend_argv_free(argv);
	if (res == &local)
		sb_proc_result_clear(&local);
	return rc;
}
