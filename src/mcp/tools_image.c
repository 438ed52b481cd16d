#include "config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "image/ref.h"
#include "registry/registry.h"
#include "sandbox/build.h"
#include "sandbox/commit.h"

/* Images from sandboxes and Dockerfiles, and pushes: what `sandbench commit`,
 * `image build` and `image push` do, with what an MCP client may name cut
 * down to what the operator allowed. */

#define MAX_LIST 64
/* sandbench's own images (the default image among them): every sandbox_create
 * without an image uses one, so a client does not get to replace them */
#define OWN_NAMESPACE "localhost/sandbench/"

/* The strings of array key (at most MAX_LIST) into list; *n how many. */
static int string_list(char **list, size_t *n, const json_t *args, const char *key, struct sb_error *err)
{
	const json_t *arr = json_object_get(args, key);

	if (json_array_size(arr) > MAX_LIST)
		return sb_error_set(err, SB_ERR_LIMIT, _("At most %d values can be given in '%s'."), MAX_LIST, key);
	for (*n = 0; *n < json_array_size(arr); (*n)++)
		list[*n] = (char *)json_string_value(json_array_get(arr, *n));
	return 0;
}

/* A name for a new image: the library's rules (sb_image_ref_local), and not
 * one of sandbench's own. */
static int new_image_name(const char *ref, struct sb_error *err)
{
	char *canon;
	int rc;

	if ((rc = sb_image_ref_local(&canon, ref, err)) < 0)
		return rc;
	rc = strncmp(canon, OWN_NAMESPACE, strlen(OWN_NAMESPACE)) ? 0
		: sb_error_set(err, SB_ERR_UNSAFE, _("The image name '%s' is sandbench's own: choose another."), canon);
	free(canon);
	return rc;
}

int mcp_tool_sandbox_commit(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err)
{
	char *changes[MAX_LIST];
	const char *ref = mcp_arg_str(args, "ref", "");
	struct sb_commit_opts o = {
		.message = mcp_arg_str(args, "message", NULL), .changes = changes,
		.flags = mcp_arg_bool(args, "include_workspace", 0) ? SB_COMMIT_WORKSPACE : 0,
		.compression = strcmp(mcp_arg_str(args, "compression", "gzip"), "zstd") ? SB_LAYER_GZIP : SB_LAYER_ZSTD,
	};
	struct sb_commit_result res;
	int rc;

	if ((rc = string_list(changes, &o.n_changes, args, "changes", err)) < 0 || (rc = new_image_name(ref, err)) < 0)
		return rc;
	if ((rc = sb_sandbox_commit(&res, ctx->root, mcp_arg_str(args, "name", ""), ref, &o, err)) < 0)
		return rc;
	*result = sb_commit_result_json(&res);
	sb_commit_result_clear(&res);
	return 0;
}

/* A host path a build reads: resolved, and inside a folder of the mount
 * allow-list (the operator's word on what clients may see of the host). */
static int allowed_input(char real[PATH_MAX], const struct sb_mcp_server *srv, const char *path, struct sb_error *err)
{
	if (!realpath(path, real) || !mcp_host_allowed(srv, real, 1))
		return sb_error_set(err, SB_ERR_UNSAFE, _("The host path '%s' is not inside a folder of this server's mount allow-list."),
				    path);
	return 0;
}

int mcp_tool_image_build(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err)
{
	char *build_args[MAX_LIST], context[PATH_MAX], dockerfile[PATH_MAX];
	const char *ref = mcp_arg_str(args, "ref", ""), *file = mcp_arg_str(args, "dockerfile", NULL);
	struct sb_build_opts o = {
		.context = context, .dockerfile = dockerfile, .ref = ref, .network = mcp_arg_bool(args, "network", 0),
		.build_args = build_args, .no_cache = mcp_arg_bool(args, "no_cache", 0), .log_fd = -1,
	};
	struct sb_build_result res;
	int rc;

	if ((rc = string_list(build_args, &o.n_build_args, args, "build_args", err)) < 0 ||
	    (rc = new_image_name(ref, err)) < 0 ||
	    (rc = allowed_input(context, ctx->srv, mcp_arg_str(args, "context", ""), err)) < 0)
		return rc;
	/* the default Dockerfile too is resolved and checked: it may be a link out */
	char *dflt = file ? NULL : sb_strdupf("%s/Dockerfile", context);
	if (!file && !dflt)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	rc = allowed_input(dockerfile, ctx->srv, file ? file : dflt, err);
	free(dflt);
	if (rc < 0 || (rc = sb_build(&res, ctx->root, &o, err)) < 0)
		return rc;
	*result = sb_build_result_json(&res);
	sb_build_result_clear(&res);
	return 0;
}

int mcp_tool_image_push(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err)
{
	/* credentials from ROOT/credentials.json only, over HTTPS: a client names
	 * no host file (credentials, a CA) and cannot turn TLS off */
	struct sb_registry_opts o = { 0 };
	struct sb_registry_push_result res;
	int rc;

	if ((rc = sb_registry_push(&res, ctx->root, mcp_arg_str(args, "image", ""), mcp_arg_str(args, "dest", NULL), &o,
				   err)) < 0)
		return rc;
	*result = sb_registry_push_result_json(&res);
	sb_registry_push_result_clear(&res);
	return 0;
}
