/* Services through MCP: the service and published ports of sandbox_create,
 * and a service's output (service_logs). A client publishes on the host's
 * loopback only: another host address is the operator's choice (the CLI's
 * --publish), never the model's. */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"
#include "base/i18n.h"
#include "sandbox/sandbox.h"

int mcp_service_spec(struct mcp_service_args *out, const json_t *args, struct sb_error *err)
{
	const json_t *svc = json_object_get(args, "service"), *list = json_object_get(args, "publish"), *p;
	size_t i;

	memset(out, 0, sizeof(*out));
	if (json_array_size(list) > MCP_MAX_PUBLISH)
		return sb_error_set(err, SB_ERR_LIMIT, _("At most %d ports can be published."), MCP_MAX_PUBLISH);
	json_array_foreach (list, i, p)
		out->publish[out->n_publish++] = (struct sb_publish){ .address = "127.0.0.1",
								      .host_port = (unsigned short)mcp_arg_int(p, "host_port", 0),
								      .port = (unsigned short)mcp_arg_int(p, "port", 0) };
	if (!svc)
		return 0;
	const char *restart = mcp_arg_str(svc, "restart", "on-failure");
	int r = sb_service_restart_parse(restart);
	if (r < 0)
		return sb_error_set(err, SB_ERR_INVALID, _("Unknown restart policy '%s'."), restart);
	out->service = (struct sb_service){ .command = (char *)mcp_arg_str(svc, "command", ""),
					    .health = (char *)mcp_arg_str(svc, "health", NULL),
					    .interval = mcp_arg_int(svc, "health_interval", 0), .restart = r };
	out->has_service = 1;
	return 0;
}

int mcp_tool_service_logs(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err)
{
	unsigned long long pos = (unsigned long long)mcp_arg_int(args, "since_offset", 0);
	size_t max = (size_t)mcp_arg_int(args, "max_bytes", 65536);
	/* the log is capped and rotated inside the guest: what is left after
	 * pos is bounded, and held in memory for this call only */
	int fd = memfd_create("service-logs", MFD_CLOEXEC), rc;

	if (fd < 0)
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot make a buffer for the log"));
	if ((rc = sb_sandbox_logs(&pos, fd, ctx->root, mcp_arg_str(args, "name", ""), 0, err)) < 0) {
		close(fd);
		return rc;
	}
	/* the newest max_bytes, as docker logs --tail keeps the end */
	off_t total = lseek(fd, 0, SEEK_END), start = total > (off_t)max ? total - (off_t)max : 0;
	char *buf = total >= 0 ? malloc((size_t)(total - start) + 1) : NULL;
	ssize_t n = buf ? pread(fd, buf, (size_t)(total - start), start) : -1;
	close(fd);
	if (n < 0) {
		free(buf);
		return sb_error_set(err, SB_ERR_IO, _("cannot read the log back"));
	}
	*result = json_pack("{s:o, s:I, s:b}", "output", mcp_text_json(buf, (size_t)n), "offset", (json_int_t)pos,
			    "truncated", start > 0);
	free(buf);
	return 0;
}
