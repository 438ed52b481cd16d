/* The warm pool's tools: pool_set, pool_ls, pool_rm (docs/pool.md). */
#include "config.h"

#include "internal.h"
#include "base/i18n.h"
#include "base/jsonfile.h"
#include "base/units.h"
#include "sandbox/pool.h"

int mcp_tool_pool_set(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err)
{
	const char *mem = mcp_arg_str(args, "memory", NULL);
	long long memory = mem ? sb_units_parse_size(mem) : 0;
	int rc;

	if (memory < 0 || (mem && memory == 0))
		return sb_error_set(err, SB_ERR_INVALID, _("invalid memory size '%s' (e.g. 512m, 2g)"), mem);
	if ((rc = sb_pool_set(ctx->root, mcp_arg_str(args, "image", ""), (int)mcp_arg_int(args, "size", 0),
			      mcp_arg_bool(args, "network", -1), (unsigned long long)memory, mcp_arg_num(args, "cpus", 0),
			      err)) < 0)
		return rc;
	/* the members boot behind the call's back */
	sb_pool_refill_detached(ctx->root);
	return mcp_tool_pool_ls(result, ctx, args, err);
}

int mcp_tool_pool_ls(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err)
{
	struct sb_pool_profile *list;
	size_t n;
	int rc;

	(void)args;
	if ((rc = sb_pool_list(&list, &n, ctx->root, err)) < 0)
		return rc;
	json_t *arr = json_array();
	for (size_t i = 0; i < n; i++)
		arr = sb_json_append(arr, sb_pool_profile_json(&list[i]));
	sb_pool_list_free(list, n);
	*result = arr ? json_pack("{s:o, s:b}", "profiles", arr, "refilling", sb_pool_refilling(ctx->root)) : NULL;
	return 0;
}

int mcp_tool_pool_rm(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err)
{
	const char *image = mcp_arg_str(args, "image", NULL);
	size_t removed;
	int rc;

	if (!image == !mcp_arg_bool(args, "all", 0))
		return sb_error_set(err, SB_ERR_INVALID, _("give an image, or all: true"));
	if ((rc = sb_pool_remove(&removed, ctx->root, image, err)) < 0)
		return rc;
	*result = json_pack("{s:I}", "removed", (json_int_t)removed);
	return 0;
}
