#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "base/utf8.h"
#include "sandbox/files.h"
#include "sandbox/sandbox.h"
#include "session/session.h"

#define READ_MAX_DEFAULT (1u << 20)
#define WRITE_MAX (4u << 20)
#define LIST_MAX (1u << 20)

/* Files pass through a private scratch folder of the host: the library's
 * copy (cp) does the resolving inside the sandbox and the refusing. */
static char *scratch(struct sb_error *err)
{
	char tmpl[] = "/tmp/sandbench-mcp-XXXXXX";

	if (!mkdtemp(tmpl)) {
		sb_error_errno(err, SB_ERR_IO, errno, _("cannot make a scratch folder"));
		return NULL;
	}
	char *dir = strdup(tmpl);
	if (!dir) {
		rmdir(tmpl);
		sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	return dir;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *b = slash ? slash + 1 : path;

	return *b && strcmp(b, ".") && strcmp(b, "..") ? b : "file";
}

int mcp_tool_file_read(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err)
{
	unsigned long long max = (unsigned long long)mcp_arg_int(args, "max_bytes", READ_MAX_DEFAULT);
	struct sb_copy_opts o = { .max_bytes = max };
	const char *path = mcp_arg_str(args, "path", "");
	struct sb_copy_result r;
	char *dir = scratch(err), *file = NULL, *data = NULL;
	size_t len = 0;
	int rc;

	if (!dir)
		return SB_ERR_IO;
	file = sb_path_join(dir, base_name(path));
	rc = file ? sb_sandbox_copy_out(&r, ctx->root, mcp_arg_str(args, "name", ""), path, file, &o, err)
		  : sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	if (file)
		sb_copy_result_clear(&r);
	if (file && rc == 0)
		rc = sb_fs_read_file(&data, &len, file, (size_t)max, err);
	if (file)
		unlink(file);
	rmdir(dir);
	free(file);
	free(dir);
	if (rc < 0)
		return rc;
	int binary = !sb_utf8_valid(data, len);
	size_t n;
	char *text = sb_session_text_utf8(data, len, &n);
	*result = text ? json_pack("{s:s, s:s%, s:I, s:b}", "path", path, "content", text, n, "size", (json_int_t)len,
				   "binary", binary)
		       : NULL;
	free(text);
	free(data);
	return 0;
}

int mcp_tool_file_write(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err)
{
	const json_t *content = json_object_get(args, "content");
	const char *path = mcp_arg_str(args, "path", "");
	size_t len = json_string_length(content);
	struct sb_copy_result r;
	char *dir, *file;
	int rc, fd;

	if (len > WRITE_MAX)
		return sb_error_set(err, SB_ERR_LIMIT, _("The content is over %u bytes."), WRITE_MAX);
	if (!(dir = scratch(err)))
		return SB_ERR_IO;
	if (!(file = sb_path_join(dir, base_name(path)))) {
		rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	} else if ((fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) < 0) {
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot write %s"), file);
	} else {
		rc = sb_fs_write_all(fd, json_string_value(content), len);
		if (close(fd) < 0 || rc < 0)
			rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot write %s"), file);
		else {
			rc = sb_sandbox_copy_in(&r, ctx->root, file, mcp_arg_str(args, "name", ""), path, NULL, err);
			sb_copy_result_clear(&r);
		}
		unlink(file);
	}
	rmdir(dir);
	free(file);
	free(dir);
	if (rc == 0)
		*result = json_pack("{s:s, s:I}", "path", path, "size", (json_int_t)len);
	return rc;
}

/* One line of `ls -1Ap`: a name, '/' after a directory's. */
static json_t *entry_json(const char *line, size_t n)
{
	int dir = n > 1 && line[n - 1] == '/';

	return json_pack("{s:s%, s:s}", "name", line, n - (size_t)dir, "type", dir ? "directory" : "other");
}

int mcp_tool_file_list(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err)
{
	const char *path = mcp_arg_str(args, "path", "/workspace");
	char *argv[] = { "ls", "-1Ap", "--", (char *)path, NULL };
	struct sb_exec_opts o = {
		.argv = argv, .stdin_fd = -1, .stdout_fd = -1, .stderr_fd = -1, .capture_max = LIST_MAX, .timeout_ms = 60000,
	};
	struct sb_exec_result res;
	int rc;

	if ((rc = sb_sandbox_exec(&res, ctx->root, mcp_arg_str(args, "name", ""), &o, err)) < 0)
		return rc;
	if (res.exit_code != 0) {
		size_t n;
		char *msg = sb_session_text_utf8(res.errout, res.err_len, &n);
		rc = sb_error_set(err, SB_ERR_NOTFOUND, _("Cannot list '%s': %.*s"), path, (int)strcspn(msg ? msg : "", "\n"),
				  msg ? msg : "");
		free(msg);
		sb_exec_result_clear(&res);
		return rc;
	}
	json_t *entries = json_array();
	for (char *line = res.out, *nl; entries && *line; line = nl + 1) {
		if (!(nl = strchr(line, '\n')))
			nl = line + strlen(line) - 1;
		size_t n = (size_t)(nl - line) + (*nl != '\n');
		if (n && sb_utf8_valid(line, n))
			json_array_append_new(entries, entry_json(line, n));
	}
	sb_exec_result_clear(&res);
	*result = entries ? json_pack("{s:s, s:o}", "path", path, "entries", entries) : NULL;
	return 0;
}
