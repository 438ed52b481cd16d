#include "config.h"

#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "internal.h"
#include "base/fs.h"
#include "base/i18n.h"

/* A user who is not root runs `sandbench mcp` as agent hosts launch it; the
 * server runs as root behind a unix socket of the group allowed to use it
 * (the systemd socket unit: one root server per connection). The bridge
 * copies the client's stdio to that socket and back, byte for byte. */

static int connect_error(const char *path, int errnum, struct sb_error *err)
{
	struct stat st;
	struct group *g;

	if (errnum == EACCES || errnum == EPERM) {
		g = stat(path, &st) == 0 ? getgrgid(st.st_gid) : NULL;
		return sb_error_set(err, SB_ERR_AUTH,
				    _("You may not use the sandbench MCP socket %s: it is for the members of the group '%s' "
				      "(an administrator adds you with 'adduser USER %s'; log in again after)."),
				    path, g ? g->gr_name : "sandbench", g ? g->gr_name : "sandbench");
	}
	if (errnum == ENOENT || errnum == ECONNREFUSED)
		return sb_error_set(err, SB_ERR_PREREQ,
				    _("The sandbench MCP socket %s is not served: sandbench needs root, and without it "
				      "'sandbench mcp' reaches the server of the socket unit (systemctl enable --now "
				      "sandbench-mcp.socket)."),
				    path);
	return sb_error_errno(err, SB_ERR_IO, errnum, _("cannot connect to %s"), path);
}

/* copies what from has to to; 0 at the end of from, negative on a failure */
static int pump(int from, int to)
{
	char buf[65536];
	ssize_t n = read(from, buf, sizeof(buf));

	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 1 : -errno;
	if (n == 0)
		return 0;
	return sb_fs_write_all(to, buf, (size_t)n) < 0 ? -EPIPE : 1;
}

int sb_mcp_bridge(const char *socket_path, int in_fd, int out_fd, struct sb_error *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, in_open = 1, rc = 0;

	if (strlen(socket_path) >= sizeof(sa.sun_path))
		return sb_error_set(err, SB_ERR_INVALID, _("The socket path '%s' is too long."), socket_path);
	strcpy(sa.sun_path, socket_path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot make a socket"));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		rc = connect_error(socket_path, errno, err);
		close(fd);
		return rc;
	}
	for (;;) {
		struct pollfd pfd[2] = { { .fd = fd, .events = POLLIN }, { .fd = in_open ? in_fd : -1, .events = POLLIN } };
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			rc = sb_error_errno(err, SB_ERR_IO, errno, _("the MCP bridge's poll failed"));
			break;
		}
		/* the server's side ends the bridge; the client's end of input is passed on */
		if (pfd[0].revents && (rc = pump(fd, out_fd)) <= 0)
			break;
		if (pfd[1].revents && (rc = pump(in_fd, fd)) <= 0) {
			if (rc < 0)
				break;
			in_open = 0;
			shutdown(fd, SHUT_WR);
		}
	}
	close(fd);
	return rc < 0 && rc != -EPIPE ? sb_error_errno(err, SB_ERR_IO, -rc, _("the MCP bridge failed")) : 0;
}
