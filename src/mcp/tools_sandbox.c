#include "config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "base/jsonfile.h"
#include "base/units.h"
#include "image/bootstrap.h"
#include "image/store.h"
#include "sandbox/files.h"
#include "sandbox/sandbox.h"
#include "session/session.h"

#define MAX_MOUNTS 16
#define MAX_ARGS 256
#define MAX_ENV 128
#define EXEC_TIMEOUT_S 600
#define EXEC_CAPTURE (1u << 20)

const struct sb_mcp_mount *mcp_host_allowed(const struct sb_mcp_server *srv, const char *real, int inside)
{
	for (size_t i = 0; i < srv->n_mounts; i++) {
		const char *h = srv->mounts[i].host;
		size_t n = strlen(h);
		if (!strcmp(real, h))
			return &srv->mounts[i];
		/* below it, at a path boundary ("/" itself allowed: everything is below) */
		if (inside && !strncmp(real, h, n) && (real[n] == '/' || (n == 1 && h[0] == '/')))
			return &srv->mounts[i];
	}
	return NULL;
}

/* A mount the client asks for, allowed when its host folder is one of the
 * operator's (the same folder once resolved) and the mode no more than given. */
static int allowed_mount(struct sb_sandbox_mount *out, const struct sb_mcp_server *srv, const json_t *m,
			 struct sb_error *err)
{
	const char *host = mcp_arg_str(m, "host", ""), *mode = mcp_arg_str(m, "mode", "ro");
	const struct sb_mcp_mount *allowed;
	char real[PATH_MAX];

	if (!realpath(host, real) || !(allowed = mcp_host_allowed(srv, real, 0)))
		return sb_error_set(err, SB_ERR_UNSAFE, _("The host folder '%s' is not on this server's mount allow-list."), host);
	if (!strcmp(mode, "rw") && allowed->mode != SB_MOUNT_RW)
		return sb_error_set(err, SB_ERR_UNSAFE, _("The host folder '%s' may be mounted read-only only."), host);
	*out = (struct sb_sandbox_mount){ .host = (char *)allowed->host, .path = (char *)mcp_arg_str(m, "path", ""),
					  .mode = strcmp(mode, "rw") ? SB_MOUNT_RO : SB_MOUNT_RW };
	return 0;
}

int mcp_tool_sandbox_create(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err)
{
	struct sb_sandbox_mount mounts[MAX_MOUNTS];
	struct sb_sandbox_label label = { MCP_INSTANCE_LABEL, ctx->srv->instance };
	struct sb_sandbox_spec spec = {
		.name = mcp_arg_str(args, "name", ""), .image = mcp_arg_str(args, "image", SB_IMAGE_DEFAULT_NAME),
		.network = json_is_boolean(json_object_get(args, "network")) ? mcp_arg_bool(args, "network", 0) : -1,
		.idle_timeout = mcp_arg_int(args, "idle_timeout", 0), .owner = ctx->srv->owner,
		.labels = &label, .n_labels = 1, .mounts = mounts,
	};
	const char *kind = mcp_arg_str(args, "kind", NULL);
	const json_t *list = json_object_get(args, "mounts"), *m;
	struct mcp_service_args svc;
	struct sb_sandbox_info info;
	size_t i;
	int rc;

	if ((rc = mcp_service_spec(&svc, args, err)) < 0)
		return rc;
	spec.service = svc.has_service ? &svc.service : NULL;
	spec.publish = svc.publish;
	spec.n_publish = svc.n_publish;
	if (kind)
		spec.kind = sb_sandbox_kind_parse(kind);
	const char *disk = mcp_arg_str(args, "disk", NULL);
	long long size = disk ? sb_units_parse_size(disk) : 0;
	if (size < 0 || (disk && size == 0))
		return sb_error_set(err, SB_ERR_INVALID, _("invalid disk size '%s' (e.g. 512m, 2g)"), disk);
	spec.disk = (unsigned long long)size;
	if (json_array_size(list) > MAX_MOUNTS)
		return sb_error_set(err, SB_ERR_LIMIT, _("At most %d mounts can be given."), MAX_MOUNTS);
	json_array_foreach (list, i, m)
		if (allowed_mount(&mounts[spec.n_mounts++], ctx->srv, m, err) < 0)
			return SB_ERR_UNSAFE;
	if ((rc = sb_sandbox_create(&info, ctx->root, &spec, err)) < 0)
		return rc;
	*result = sb_sandbox_info_json(&info);
	sb_sandbox_info_clear(&info);
	return 0;
}

int mcp_tool_sandbox_list(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err)
{
	const char *owner = mcp_arg_str(args, "owner", NULL);
	struct sb_sandbox_info *list;
	size_t n;
	int rc;

	if ((rc = sb_sandbox_list(&list, &n, ctx->root, err)) < 0)
		return rc;
	json_t *arr = json_array();
	for (size_t i = 0; i < n; i++)
		if (!owner || !strcmp(owner, list[i].rec.owner))
			arr = sb_json_append(arr, sb_sandbox_info_json(&list[i]));
	sb_sandbox_list_free(list, n);
	*result = arr ? json_pack("{s:o}", "sandboxes", arr) : NULL;
	return 0;
}

int mcp_tool_sandbox_inspect(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err)
{
	struct sb_sandbox_info info;
	int rc;

	if ((rc = sb_sandbox_inspect(&info, ctx->root, mcp_arg_str(args, "name", ""), err)) < 0)
		return rc;
	*result = sb_sandbox_info_json(&info);
	sb_sandbox_info_clear(&info);
	return 0;
}

json_t *mcp_text_json(const char *data, size_t len)
{
	size_t n;
	char *valid = sb_session_text_utf8(data ? data : "", data ? len : 0, &n);
	json_t *s = valid ? json_stringn(valid, n) : NULL;

	free(valid);
	return s;
}

static int exec_env(char **env, const json_t *obj, struct sb_error *err)
{
	const char *k;
	json_t *v;
	int n = 0;

	json_object_foreach ((json_t *)obj, k, v) {
		if (n == MAX_ENV)
			return sb_error_set(err, SB_ERR_LIMIT, _("At most %d environment variables can be given."), MAX_ENV);
		if (!*k || strchr(k, '='))
			return sb_error_set(err, SB_ERR_INVALID, _("The environment variable name '%s' is not valid."), k);
		if (!(env[n++] = sb_strdupf("%s=%s", k, json_string_value(v))))
			return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	return 0;
}

int mcp_tool_sandbox_exec(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err)
{
	const json_t *cmd = json_object_get(args, "command");
	char *argv[MAX_ARGS + 1] = { NULL }, *env[MAX_ENV + 1] = { NULL };
	struct sb_exec_opts opts = {
		.argv = argv, .cwd = mcp_arg_str(args, "cwd", NULL), .env = env, .stdin_fd = -1, .stdout_fd = -1,
		.stderr_fd = -1, .capture_max = EXEC_CAPTURE,
		/* always a deadline: it is also what lets an interrupt (a cancel) kill the command inside */
		.timeout_ms = (int)(mcp_arg_num(args, "timeout", EXEC_TIMEOUT_S) * 1000),
	};
	struct sb_exec_result res;
	int rc;

	if (json_array_size(cmd) == 0 || json_array_size(cmd) > MAX_ARGS)
		return sb_error_set(err, SB_ERR_INVALID, _("The command must have 1 to %d words."), MAX_ARGS);
	for (size_t i = 0; i < json_array_size(cmd); i++)
		argv[i] = (char *)json_string_value(json_array_get(cmd, i));
	if ((rc = exec_env(env, json_object_get(args, "env"), err)) == 0 &&
	    (rc = sb_sandbox_exec(&res, ctx->root, mcp_arg_str(args, "name", ""), &opts, err)) == 0) {
		*result = json_pack("{s:i, s:o, s:o, s:I, s:b}", "exit_code", res.exit_code, "stdout",
				    mcp_text_json(res.out, res.out_len), "stderr", mcp_text_json(res.errout, res.err_len),
				    "duration_ms", (json_int_t)res.duration_ms, "timed_out", res.timed_out);
		sb_exec_result_clear(&res);
	}
	for (int i = 0; env[i]; i++)
		free(env[i]);
	return rc;
}

int mcp_tool_sandbox_diff(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err)
{
	struct sb_diff_opts opts = { .max_entries = (size_t)mcp_arg_int(args, "max_entries", 1000) };
	struct sb_diff *d;
	int rc;

	if ((rc = sb_sandbox_diff(&d, ctx->root, mcp_arg_str(args, "name", ""), &opts, err)) < 0)
		return rc;
	*result = sb_diff_json(d);
	sb_diff_free(d);
	return 0;
}

/* stop, restore, pause, resume: the sandbox as it is after */
static int lifecycle(json_t **result, const struct mcp_ctx *ctx, const json_t *args, int rc, struct sb_error *err)
{
	return rc < 0 ? rc : mcp_tool_sandbox_inspect(result, ctx, args, err);
}

int mcp_tool_sandbox_stop(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err)
{
	return lifecycle(result, ctx, args,
			 sb_sandbox_stop(ctx->root, mcp_arg_str(args, "name", ""), "stopped by an MCP client", err), err);
}

int mcp_tool_sandbox_restore(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err)
{
	return lifecycle(result, ctx, args, sb_sandbox_restore(ctx->root, mcp_arg_str(args, "name", ""), err), err);
}

int mcp_tool_sandbox_pause(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err)
{
	return lifecycle(result, ctx, args, sb_sandbox_pause(ctx->root, mcp_arg_str(args, "name", ""), err), err);
}

int mcp_tool_sandbox_resume(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err)
{
	return lifecycle(result, ctx, args, sb_sandbox_resume(ctx->root, mcp_arg_str(args, "name", ""), err), err);
}

static const char *label_of(const struct sb_record *rec, const char *key)
{
	for (size_t i = 0; i < rec->n_labels; i++)
		if (!strcmp(rec->labels[i].key, key))
			return rec->labels[i].value;
	return NULL;
}

/* Whether this server instance created sandbox name (its owner and instance
 * label), or the operator lifted the rule (--allow-remove-any). */
static int may_alter(const struct mcp_ctx *ctx, const char *name, struct sb_error *err)
{
	struct sb_sandbox_info info;
	int rc;

	if ((rc = sb_sandbox_inspect(&info, ctx->root, name, err)) < 0)
		return rc;
	const char *inst = label_of(&info.rec, MCP_INSTANCE_LABEL);
	int ours = !strcmp(info.rec.owner, ctx->srv->owner) && inst && !strcmp(inst, ctx->srv->instance);
	sb_sandbox_info_clear(&info);
	return ours || ctx->srv->allow_remove_any;
}

int mcp_tool_sandbox_remove(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err)
{
	const char *name = mcp_arg_str(args, "name", "");
	int rc;

	if ((rc = may_alter(ctx, name, err)) <= 0)
		return rc < 0 ? rc
			      : sb_error_set(err, SB_ERR_STATE,
					     _("The sandbox '%s' was not created by this MCP server: it is not removed."), name);
	if ((rc = sb_sandbox_remove(ctx->root, name, 0, err)) < 0)
		return rc;
	*result = json_pack("{s:s, s:b}", "name", name, "removed", 1);
	return 0;
}

/* A running source is checkpointed and restored (its sessions end): that
 * alters it, so the rule of sandbox_remove applies. The fork inherits the
 * source's owner and labels: it is this instance's too. */
int mcp_tool_sandbox_fork(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err)
{
	const char *source = mcp_arg_str(args, "source", ""), *kind = mcp_arg_str(args, "kind", NULL);
	struct sb_sandbox_info info;
	struct sb_fork_report rep;
	int rc;

	if ((rc = may_alter(ctx, source, err)) <= 0)
		return rc < 0 ? rc
			      : sb_error_set(err, SB_ERR_STATE,
					     _("The sandbox '%s' was not created by this MCP server: it is not forked."), source);
	if ((rc = sb_sandbox_fork(&info, &rep, ctx->root, source, mcp_arg_str(args, "name", ""),
				  kind ? sb_sandbox_kind_parse(kind) : SB_KIND_DEFAULT, err)) < 0)
		return rc;
	*result = sb_json_set(sb_sandbox_info_json(&info), "fork", sb_fork_report_json(&rep));
	sb_sandbox_info_clear(&info);
	return 0;
}

int mcp_tool_image_list(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err)
{
	struct sb_image_info *list;
	size_t n;
	int rc;

	(void)args;
	if ((rc = sb_image_list(&list, &n, ctx->root, err)) < 0)
		return rc;
	json_t *arr = json_array();
	for (size_t i = 0; i < n; i++)
		arr = sb_json_append(arr, sb_image_info_json(&list[i]));
	sb_image_list_free(list, n);
	*result = arr ? json_pack("{s:o}", "images", arr) : NULL;
	return 0;
}
