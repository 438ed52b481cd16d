#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "base/fs.h"
#include "base/i18n.h"

/* The HTTP transport's bearer token: ROOT/mcp-token, made on first use, mode
 * 0600 and root's; a token file anyone else could read is refused, not used. */
int sb_mcp_token(char *out, size_t size, int *created, struct sb_root *root, struct sb_error *err)
{
	char *path = sb_root_file(root, "mcp-token"), *text = NULL;
	struct stat st;
	int rc = 0, fd;

	*created = 0;
	if (!path || size < MCP_TOKEN_LEN + 1) {
		free(path);
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) >= 0) {
		if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (st.st_mode & 077) || st.st_uid != geteuid())
			rc = sb_error_set(err, SB_ERR_UNSAFE,
					  _("The token file %s must be a regular file of this user with mode 0600."), path);
		close(fd);
		if (rc == 0 && (rc = sb_fs_read_file(&text, NULL, path, 256, err)) == 0) {
			text[strcspn(text, "\n")] = '\0';
			if (strlen(text) != MCP_TOKEN_LEN)
				rc = sb_error_set(err, SB_ERR_FORMAT, _("The token file %s does not hold a token."), path);
			else
				snprintf(out, size, "%s", text);
		}
	} else if (errno != ENOENT) {
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot open %s"), path);
	} else if ((rc = mcp_random_hex(out, MCP_TOKEN_LEN / 2, err)) == 0) {
		out[MCP_TOKEN_LEN] = '\n';
		rc = sb_fs_write_atomic(path, out, MCP_TOKEN_LEN + 1, 0600, err);
		out[MCP_TOKEN_LEN] = '\0';
		*created = rc == 0;
	}
	free(text);
	free(path);
	return rc;
}
