#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "internal.h"
#include "base/i18n.h"

/* The HTTP transport's listening socket: a loopback address or a unix
 * socket, nothing else (the server is never open to the network). */

static const struct {
	const char *host;
	int family;
	const char *addr;
} loopback[] = {
	{ "127.0.0.1", AF_INET, "127.0.0.1" },
	{ "localhost", AF_INET, "127.0.0.1" },
	{ "[::1]", AF_INET6, "::1" },
};

static int listen_unix(int *fd, char *url, size_t size, const char *path, struct sb_error *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;

	if (path[0] != '/' || strlen(path) >= sizeof(sa.sun_path))
		return sb_error_set(err, SB_ERR_INVALID, _("The unix socket path '%s' must be absolute and shorter than %zu bytes."),
				    path, sizeof(sa.sun_path));
	/* a socket left by an earlier server is replaced; anything else is not touched */
	if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
		unlink(path);
	strcpy(sa.sun_path, path);
	if ((*fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot make a socket"));
	mode_t old = umask(0177);
	int rc = bind(*fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (rc < 0 || listen(*fd, 64) < 0) {
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot listen on %s"), path);
		close(*fd);
		return rc;
	}
	snprintf(url, size, "unix:%s", path);
	return 0;
}

static int listen_inet(int *fd, char *url, size_t size, int family, const char *addr, const char *host, long port,
		       struct sb_error *err)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t len;
	int one = 1, rc;

	if (family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;
		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)port);
		inet_pton(AF_INET, addr, &in->sin_addr);
		len = sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		inet_pton(AF_INET6, addr, &in6->sin6_addr);
		len = sizeof(*in6);
	}
	if ((*fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot make a socket"));
	setsockopt(*fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(*fd, (struct sockaddr *)&ss, len) < 0 || listen(*fd, 64) < 0 ||
	    getsockname(*fd, (struct sockaddr *)&ss, &len) < 0) {
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot listen on %s:%ld"), host, port);
		close(*fd);
		return rc;
	}
	port = ntohs(family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port : ((struct sockaddr_in6 *)&ss)->sin6_port);
	snprintf(url, size, "http://%s:%ld/mcp", family == AF_INET ? addr : "[::1]", port);
	return 0;
}

int mcp_listen(int *fd, char *url, size_t size, int *is_unix, const char *spec, struct sb_error *err)
{
	const char *colon = strrchr(spec, ':');
	char *end;

	*is_unix = !strncmp(spec, "unix:", 5);
	if (*is_unix)
		return listen_unix(fd, url, size, spec + 5, err);
	long port = colon ? strtol(colon + 1, &end, 10) : -1;
	if (!colon || colon == spec || !colon[1] || *end || port < 0 || port > 65535)
		return sb_error_set(err, SB_ERR_INVALID, _("The address '%s' is not HOST:PORT or unix:PATH."), spec);
	for (size_t i = 0; i < sizeof(loopback) / sizeof(loopback[0]); i++)
		if (strlen(loopback[i].host) == (size_t)(colon - spec) && !strncmp(spec, loopback[i].host, (size_t)(colon - spec)))
			return listen_inet(fd, url, size, loopback[i].family, loopback[i].addr, loopback[i].host, port, err);
	return sb_error_set(err, SB_ERR_UNSAFE,
			    _("The MCP server listens only on a loopback address (127.0.0.1, [::1], localhost) or a unix socket, not on '%.*s'."),
			    (int)(colon - spec), spec);
}
