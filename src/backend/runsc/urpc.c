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
#include <limits.h>
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

/* The reply's grammar, read without building anything (no allocation: a
 * forked child reads replies too, exec_direct.c). */
struct scan {
	const char *p, *end;
};

static void blanks(struct scan *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\r' || *s->p == '\n'))
		s->p++;
}

static int take(struct scan *s, char c)
{
	blanks(s);
	if (s->p == s->end || *s->p != c)
		return 0;
	s->p++;
	return 1;
}

/* The value of 4 hex digits at p; -1 when they are not. */
static int hex4(const char *p)
{
	int v = 0;

	for (int i = 0; i < 4; i++) {
		char c = (char)(p[i] | 0x20);
		if (!((p[i] >= '0' && p[i] <= '9') || (c >= 'a' && c <= 'f')))
			return -1;
		v = v * 16 + (p[i] <= '9' ? p[i] - '0' : c - 'a' + 10);
	}
	return v;
}

/* A string (after blanks), its text to out (cap bytes with the NUL, cut
 * short; NULL: skipped; a \u escape of other than ASCII reads as '?');
 * *cut whether it was. */
static int string(struct scan *s, char *out, size_t cap, int *cut)
{
	static const char esc[] = "\"\"\\\\//b\bf\fn\nr\rt\t";
	size_t n = 0;

	if (cut)
		*cut = 0;
	if (!take(s, '"'))
		return -1;
	while (s->p < s->end && *s->p != '"') {
		unsigned char c = (unsigned char)*s->p++;
		if (c < 0x20)
			return -1;
		if (c == '\\') {
			const char *e = s->p < s->end ? strchr(esc, *s->p) : NULL;
			int u = s->p < s->end && *s->p == 'u' && s->end - s->p >= 5 ? hex4(s->p + 1) : -1;
			if (u >= 0) {
				c = u > 0 && u < 0x80 ? (unsigned char)u : '?';
				s->p += 5;
			} else if (e && *e && (e - esc) % 2 == 0) {
				c = (unsigned char)e[1];
				s->p++;
			} else {
				return -1;
			}
		}
		if (out && n + 1 < cap)
			out[n++] = (char)c;
		else if (cut)
			*cut = 1;
	}
	if (out)
		out[n] = '\0';
	return take(s, '"') ? 0 : -1;
}

/* A number as JSON writes it: 1 and *v for an integer, 0 for one with a
 * fraction or exponent, -1 for none or an integer beyond long long (which
 * JSON parsers refuse too). */
static int number(struct scan *s, long long *v)
{
	int neg = take(s, '-'), digits = 0, fits = 1;
	unsigned long long u = 0;

	if (s->p == s->end || !(*s->p >= '0' && *s->p <= '9'))
		return -1;
	for (; s->p < s->end && *s->p >= '0' && *s->p <= '9'; s->p++, digits++) {
		if (digits == 1 && u == 0)
			return -1; /* a leading zero */
		fits = fits && u <= (unsigned long long)LLONG_MAX / 10;
		u = fits ? u * 10 + (unsigned long long)(*s->p - '0') : 0;
	}
	fits = fits && u <= (unsigned long long)LLONG_MAX + (unsigned long long)neg;
	int integer = 1;
	if (s->p < s->end && *s->p == '.') {
		const char *at = ++s->p;
		while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
			s->p++;
		if (s->p == at)
			return -1;
		integer = 0;
	}
	if (s->p < s->end && (*s->p == 'e' || *s->p == 'E')) {
		s->p++;
		if (s->p < s->end && (*s->p == '+' || *s->p == '-'))
			s->p++;
		const char *at = s->p;
		while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
			s->p++;
		if (s->p == at)
			return -1;
		integer = 0;
	}
	if (!integer)
		return 0;
	if (!fits)
		return -1;
	*v = neg ? (long long)(0 - u) : (long long)u;
	return 1;
}

static int word(struct scan *s, const char *w)
{
	size_t n = strlen(w);

	blanks(s);
	if ((size_t)(s->end - s->p) < n || memcmp(s->p, w, n))
		return 0;
	s->p += n;
	return 1;
}

/* Any value at depth (the levels of objects and arrays it is in, itself
 * too when it is one, as sb_urpc_frame_end counts); -1 when it is not one. */
static int value(struct scan *s, int depth)
{
	long long v;

	blanks(s);
	if (s->p == s->end)
		return -1;
	if (*s->p == '"')
		return string(s, NULL, 0, NULL);
	if (*s->p == '{' || *s->p == '[') {
		if (depth > URPC_MAX_DEPTH)
			return -1;
		char close = *s->p++ == '{' ? '}' : ']';
		if (take(s, close))
			return 0;
		do {
			if ((close == '}' && (string(s, NULL, 0, NULL) < 0 || !take(s, ':'))) || value(s, depth + 1) < 0)
				return -1;
		} while (take(s, ','));
		return take(s, close) ? 0 : -1;
	}
	if (word(s, "true") || word(s, "false") || word(s, "null"))
		return 0;
	return number(s, &v) < 0 ? -1 : 0;
}

/* One member of the reply: which of the three it was (seen gets its bit),
 * or -1. */
static int member(struct sb_urpc_reply *out, struct scan *s, unsigned *seen)
{
	static const char *const keys[] = { "success", "err", "result" };
	char key[16];
	int cut, k;

	if (string(s, key, sizeof(key), &cut) < 0 || cut || !take(s, ':'))
		return -1;
	for (k = 0; k < 3 && strcmp(key, keys[k]); k++)
		;
	if (k == 3 || (*seen & (1u << k)))
		return -1;
	*seen |= 1u << k;
	if (k == 0) {
		out->success = word(s, "true");
		return out->success || word(s, "false") ? 0 : -1;
	}
	if (k == 1)
		return string(s, out->err, sizeof(out->err), NULL);
	struct scan at = *s;
	blanks(&at);
	if (at.p < at.end && (*at.p == '-' || (*at.p >= '0' && *at.p <= '9'))) {
		int rc = number(s, &out->result);
		out->has_result = rc == 1;
		return rc < 0 ? -1 : 0;
	}
	return value(s, 2); /* in the reply, at level 1 */
}

int sb_urpc_decode(struct sb_urpc_reply *out, const char *buf, size_t len)
{
	struct scan s = { buf, buf + len };
	unsigned seen = 0;
	int ok = take(&s, '{');

	memset(out, 0, sizeof(*out));
	if (ok && !take(&s, '}')) {
		do
			ok = member(out, &s, &seen) == 0;
		while (ok && take(&s, ','));
		ok = ok && take(&s, '}');
	}
	blanks(&s);
	/* exactly one object, the three members of a reply and nothing else,
	 * and no error text on a success */
	if (!ok || s.p != s.end || seen != 7 || (out->success && out->err[0])) {
		memset(out, 0, sizeof(*out));
		return SB_ERR_FORMAT;
	}
	return 0;
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
static int wait_fd(int fd, short events, long long deadline)
{
	for (;;) {
		long long left = deadline - sb_clock_monotonic_ms();
		struct pollfd p = { .fd = fd, .events = events };
		if (left <= 0)
			return SB_URPC_TIMEOUT;
		int n = poll(&p, 1, left > 60000 ? 60000 : (int)left);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return SB_URPC_IO;
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

static int urpc_send(int *sent, int fd, const char *req, size_t len, const int *files, size_t n_files,
		     long long deadline)
{
	size_t off = 0;

	*sent = 0;
	if (n_files > SB_URPC_FILES_MAX)
		return SB_URPC_FILES;
	while (off < len) {
		ssize_t n = *sent ? send(fd, req + off, len - off, MSG_NOSIGNAL | MSG_DONTWAIT)
				  : send_first(fd, req, len, files, n_files);
		if (n > 0) {
			*sent = 1;
			off += (size_t)n;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return SB_URPC_IO;
		int rc = wait_fd(fd, POLLOUT, deadline);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int urpc_recv(char *buf, size_t cap, size_t *len, int fd, long long deadline)
{
	size_t have = 0, end;
	int rc;

	*len = 0;
	for (;;) {
		struct iovec iov = { .iov_base = buf + have, .iov_len = cap - have };
		struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
		/* files passed with it are refused (the kernel closes them: no room was given) */
		ssize_t n = recvmsg(fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			if ((rc = wait_fd(fd, POLLIN, deadline)) < 0)
				return rc;
			continue;
		}
		if (n < 0)
			return SB_URPC_IO;
		if (m.msg_flags & MSG_CTRUNC)
			return SB_URPC_FILES;
		if (n == 0)
			return SB_URPC_CLOSED;
		have += (size_t)n;
		rc = sb_urpc_frame_end(&end, buf, have);
		/* a reply is all the sandbox sends: nothing may follow it */
		if (rc < 0 || (rc == 1 && end != have))
			return SB_URPC_FORMAT;
		if (rc == 1) {
			*len = have;
			return 0;
		}
		if (have == cap)
			return SB_URPC_BIG;
	}
}

int sb_urpc_exchange(struct sb_urpc_reply *out, int *sent, int fd, const char *req, const int *files,
		     size_t n_files, long long deadline, char *buf)
{
	size_t len;
	int rc = urpc_send(sent, fd, req, strlen(req), files, n_files, deadline);

	memset(out, 0, sizeof(*out));
	if (rc == 0)
		rc = urpc_recv(buf, SB_URPC_REPLY_MAX, &len, fd, deadline);
	if (rc == 0 && sb_urpc_decode(out, buf, len) < 0)
		rc = SB_URPC_FORMAT;
	return rc;
}

int sb_urpc_call(struct sb_urpc_reply *out, int *sent, int fd, const char *method, json_t *arg, const int *files,
		 size_t n_files, long long deadline, struct sb_error *err)
{
	char *req = NULL, *buf = malloc(SB_URPC_REPLY_MAX);
	int e, rc = buf ? sb_urpc_encode(&req, method, arg, err) : sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));

	memset(out, 0, sizeof(*out));
	*sent = 0;
	if (rc < 0) {
		free(buf);
		return rc;
	}
	rc = sb_urpc_exchange(out, sent, fd, req, files, n_files, deadline, buf);
	e = errno;
	free(req);
	free(buf);
	switch (rc) {
	case SB_URPC_IO:
		return sb_error_errno(err, SB_ERR_IO, e, *sent ? _("cannot read the sandbox's answer")
							    : _("cannot send to the sandbox"));
	case SB_URPC_TIMEOUT:
		return sb_error_set(err, SB_ERR_TIMEOUT, _("the sandbox did not answer in time"));
	case SB_URPC_CLOSED:
		return sb_error_set(err, SB_ERR_FORMAT, _("the sandbox closed its control socket without an answer"));
	case SB_URPC_FILES:
		return *sent ? sb_error_set(err, SB_ERR_UNSAFE, _("the sandbox's answer carried files"))
			     : sb_error_set(err, SB_ERR_LIMIT, _("at most %d files go with a urpc call"),
					    SB_URPC_FILES_MAX);
	case SB_URPC_FORMAT:
		return sb_error_set(err, SB_ERR_FORMAT, _("the sandbox's answer is not a urpc reply"));
	case SB_URPC_BIG:
		return sb_error_set(err, SB_ERR_LIMIT, _("the sandbox's answer is larger than %zu bytes"),
				    (size_t)SB_URPC_REPLY_MAX);
	}
	return rc;
}
