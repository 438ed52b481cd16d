/* A client of urpc, the RPC that runsc speaks on a sandbox's control socket
 * (gVisor's pkg/urpc over pkg/unet): a unix stream socket carrying one JSON
 * object per message, {"method":M,"arg":A} from the client and
 * {"success":B,"err":S,"result":R} back, with no length prefix and file
 * descriptors (SCM_RIGHTS) only where a method passes files: they go with the
 * request's first bytes (an exec's stdio); a reply that carries files is
 * refused. What the sandbox answers is read with a deadline, its size capped,
 * and refused unless it is exactly one reply. */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/i18n.h"
#include "base/jsonfile.h"
#include "internal.h"

/* nesting of the reply beyond which it is refused unread: ours are flat */
#define URPC_MAX_DEPTH 16

int sb_urpc_encode(char **out, const char *method, json_t *arg, struct sb_error *err)
{
	json_t *call = json_object();

	*out = NULL;
	if (!method || !*method) {
		json_decref(call);
		return sb_error_set(err, SB_ERR_INVALID, _("a urpc call needs a method"));
	}
	/* json_object_set: the caller keeps its reference to arg */
	if (call && json_object_set_new(call, "method", json_string(method)) == 0 &&
	    json_object_set(call, "arg", arg ? arg : json_null()) == 0)
		*out = sb_json_dumps(call, JSON_COMPACT);
	json_decref(call);
	return *out ? 0 : sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
}

int sb_urpc_frame_end(size_t *end, const char *buf, size_t len)
{
	size_t i = 0;
	int depth = 0, in_string = 0, escaped = 0;

	*end = 0;
	while (i < len && buf[i] && strchr(" \t\r\n", buf[i]))
		i++;
	if (i == len)
		return 0;
	if (buf[i] != '{')
		return SB_ERR_FORMAT;
	for (; i < len; i++) {
		char c = buf[i];
		if (c == '\0')
			return SB_ERR_FORMAT;
		if (in_string) {
			if (escaped)
				escaped = 0;
			else if (c == '\\')
				escaped = 1;
			else if (c == '"')
				in_string = 0;
			continue;
		}
		if (c == '"')
			in_string = 1;
		else if (c == '{' || c == '[')
			depth++;
		else if (c == '}' || c == ']')
			depth--;
		if (depth > URPC_MAX_DEPTH)
			return SB_ERR_FORMAT;
		if (depth == 0) {
			*end = i + 1;
			return 1;
		}
	}
	return 0;
}

int sb_urpc_decode(struct sb_urpc_reply *out, const char *buf, size_t len, struct sb_error *err)
{
	json_t *doc = json_loadb(buf, len, JSON_REJECT_DUPLICATES, NULL);
	json_t *success = json_object_get(doc, "success"), *msg = json_object_get(doc, "err");
	int rc = 0;

	memset(out, 0, sizeof(*out));
	/* exactly one object (jansson refuses what follows it), the three fields
	 * of a reply, and no error text on a success */
	if (!json_is_object(doc) || !json_is_boolean(success) || !json_is_string(msg) || !json_object_get(doc, "result") ||
	    (json_is_true(success) && json_string_length(msg) > 0))
		rc = sb_error_set(err, SB_ERR_FORMAT, _("the sandbox's answer is not a urpc reply"));
	else {
		out->success = json_is_true(success);
		snprintf(out->err, sizeof(out->err), "%s", json_string_value(msg));
		json_t *result = json_object_get(doc, "result");
		if ((out->has_result = json_is_integer(result)))
			out->result = json_integer_value(result);
	}
	json_decref(doc);
	return rc;
}

int sb_urpc_connect(int *out, pid_t *peer, const char *name, struct sb_error *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t n = strlen(name);
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	int fd;

	*out = -1;
	*peer = 0;
	/* abstract (a leading NUL); Go's address also counts a trailing NUL */
	if (n == 0 || n + 2 > sizeof(sa.sun_path))
		return sb_error_set(err, SB_ERR_INVALID, _("invalid control socket name"));
	memcpy(sa.sun_path + 1, name, n);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0)
		return sb_error_errno(err, SB_ERR_IO, errno, _("cannot make a socket"));
	if (connect(fd, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 2)) < 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) < 0) {
		int e = errno;
		close(fd);
		return sb_error_errno(err, SB_ERR_IO, e, _("cannot reach the sandbox's control socket"));
	}
	*out = fd;
	*peer = cred.pid;
	return 0;
}

/* Waits until fd is ready for events or the deadline (monotonic ms) passes. */
static int wait_fd(int fd, short events, long long deadline, struct sb_error *err)
{
	for (;;) {
		long long left = deadline - sb_clock_monotonic_ms();
		struct pollfd p = { .fd = fd, .events = events };
		if (left <= 0)
			return sb_error_set(err, SB_ERR_TIMEOUT, _("the sandbox did not answer in time"));
		int n = poll(&p, 1, left > 60000 ? 60000 : (int)left);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return sb_error_errno(err, SB_ERR_IO, errno, _("cannot wait for the sandbox"));
	}
}

/* The first bytes of data with files as SCM_RIGHTS (none: a plain send). */
static ssize_t send_first(int fd, const char *data, size_t len, const int *files, size_t n_files)
{
	union {
		char buf[CMSG_SPACE(SB_URPC_FILES_MAX * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = (void *)data, .iov_len = len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (!n_files)
		return send(fd, data, len, MSG_NOSIGNAL | MSG_DONTWAIT);
	memset(&u, 0, sizeof(u));
	m.msg_control = u.buf;
	m.msg_controllen = CMSG_SPACE(n_files * sizeof(int));
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(n_files * sizeof(int));
	memcpy(CMSG_DATA(c), files, n_files * sizeof(int));
	return sendmsg(fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
}

static int send_all(int *sent, int fd, const char *data, size_t len, const int *files, size_t n_files,
		    long long deadline, struct sb_error *err)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = *sent ? send(fd, data + off, len - off, MSG_NOSIGNAL | MSG_DONTWAIT)
				  : send_first(fd, data, len, files, n_files);
		if (n > 0) {
			*sent = 1;
			off += (size_t)n;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return sb_error_errno(err, SB_ERR_IO, errno, _("cannot send to the sandbox"));
		int rc = wait_fd(fd, POLLOUT, deadline, err);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Reads one reply into buf (cap bytes): *len up to its end. Files passed
 * with it are refused (the kernel closes them: no room was given). */
static int read_reply(char *buf, size_t cap, size_t *len, int fd, long long deadline, struct sb_error *err)
{
	size_t have = 0, end;
	int rc;

	for (;;) {
		struct iovec iov = { .iov_base = buf + have, .iov_len = cap - have };
		struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
		ssize_t n = recvmsg(fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			if ((rc = wait_fd(fd, POLLIN, deadline, err)) < 0)
				return rc;
			continue;
		}
		if (n < 0)
			return sb_error_errno(err, SB_ERR_IO, errno, _("cannot read the sandbox's answer"));
		if (m.msg_flags & MSG_CTRUNC)
			return sb_error_set(err, SB_ERR_UNSAFE, _("the sandbox's answer carried files"));
		if (n == 0)
			return sb_error_set(err, SB_ERR_FORMAT, _("the sandbox closed its control socket without an answer"));
		have += (size_t)n;
		if ((rc = sb_urpc_frame_end(&end, buf, have)) < 0)
			return sb_error_set(err, SB_ERR_FORMAT, _("the sandbox's answer is not a urpc reply"));
		/* a reply is all the sandbox sends: nothing may follow it */
		if (rc == 1 && end != have)
			return sb_error_set(err, SB_ERR_FORMAT, _("the sandbox's answer is not a urpc reply"));
		if (rc == 1) {
			*len = have;
			return 0;
		}
		if (have == cap)
			return sb_error_set(err, SB_ERR_LIMIT, _("the sandbox's answer is larger than %zu bytes"), cap);
	}
}

int sb_urpc_call(struct sb_urpc_reply *out, int *sent, int fd, const char *method, json_t *arg, const int *files,
		 size_t n_files, long long deadline, struct sb_error *err)
{
	char *req = NULL, *buf = malloc(SB_URPC_REPLY_MAX);
	size_t len = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	*sent = 0;
	if (!buf)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	if (n_files > SB_URPC_FILES_MAX) {
		free(buf);
		return sb_error_set(err, SB_ERR_LIMIT, _("at most %d files go with a urpc call"), SB_URPC_FILES_MAX);
	}
	if ((rc = sb_urpc_encode(&req, method, arg, err)) == 0 &&
	    (rc = send_all(sent, fd, req, strlen(req), files, n_files, deadline, err)) == 0 &&
	    (rc = read_reply(buf, SB_URPC_REPLY_MAX, &len, fd, deadline, err)) == 0)
		rc = sb_urpc_decode(out, buf, len, err);
	free(req);
	free(buf);
	return rc;
}
