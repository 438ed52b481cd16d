/* A client's connection to a holder: requests with their replies, and the
 * subscription's frames, which may arrive while a reply is awaited. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "internal.h"
#include "base/clock.h"
#include "base/i18n.h"

#define REPLY_MS 10000

struct sb_session {
	int fd;
	char name[64], id[SB_SESSION_ID_MAX + 1];
	struct sb_buf in, pending;       /* from the socket; subscription frames put aside meanwhile */
	size_t in_off, pending_off;
	struct sb_session_event event;   /* the last item's */
	int ended;
};

int sb_session_connect(struct sb_session **out, struct sb_root *root, const char *name, const char *id,
		       struct sb_error *err)
{
	struct sess_dir d;
	struct sockaddr_un sa;
	int rc;

	*out = NULL;
	if ((rc = sess_dir_init(&d, root, name, id, err)) < 0 || (rc = sess_dir_open(&d, err)) < 0) {
		sess_dir_clear(&d);
		return rc;
	}
	struct sb_session *s = calloc(1, sizeof(*s));
	if (!s) {
		sess_dir_clear(&d);
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	snprintf(s->name, sizeof(s->name), "%s", name);
	snprintf(s->id, sizeof(s->id), "%s", id);
	sess_sockaddr(&sa, d.dfd);
	s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s->fd < 0 || connect(s->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;
		/* nobody listens: the holder is gone, or going (its lock goes last) */
		if (e == ECONNREFUSED || !sess_dir_live(d.dfd))
			rc = sb_error_set(err, SB_ERR_STATE, _("session '%s' of sandbox '%s' has exited"), id, name);
		else
			rc = sb_error_errno(err, SB_ERR_IO, e, _("cannot connect to session '%s' of sandbox '%s'"), id, name);
		sess_dir_clear(&d);
		sb_session_close(s);
		return rc;
	}
	sess_dir_clear(&d);
	fcntl(s->fd, F_SETFL, O_NONBLOCK);
	*out = s;
	return 0;
}

void sb_session_close(struct sb_session *s)
{
	if (!s)
		return;
	if (s->fd >= 0)
		close(s->fd);
	sb_buf_clear(&s->in);
	sb_buf_clear(&s->pending);
	sb_session_event_clear(&s->event);
	free(s);
}

int sb_session_fd(const struct sb_session *s)
{
	return s->fd;
}

static int gone(struct sb_session *s, struct sb_error *err)
{
	return sb_error_set(err, SB_ERR_IO, _("the holder of session '%s' of sandbox '%s' went away"), s->id, s->name);
}

static int wait_fd(int fd, short events, long long deadline)
{
	struct pollfd p = { .fd = fd, .events = events };
	long long left = deadline - sb_clock_monotonic_ms();

	return left > 0 && poll(&p, 1, (int)left) > 0 ? 0 : -1;
}

static int put(struct sb_session *s, const struct sb_buf *b, struct sb_error *err)
{
	long long deadline = sb_clock_monotonic_ms() + REPLY_MS;

	for (size_t off = 0; off < b->len;) {
		ssize_t n = send(s->fd, b->data + off, b->len - off, MSG_NOSIGNAL);
		if (n < 0 && errno == EAGAIN && wait_fd(s->fd, POLLOUT, deadline) == 0)
			continue;
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return gone(s, err);
		off += (size_t)n;
	}
	return 0;
}

static int is_reply(uint8_t t)
{
	return t == MSG_OK || t == MSG_ERROR || t == MSG_STATE;
}

int sess_client_request(struct sb_session *s, uint8_t type, const void *head, size_t hlen, const void *body,
			size_t blen, struct sess_frame *reply, struct sb_error *err)
{
	struct sb_buf b = { 0 };
	long long deadline = sb_clock_monotonic_ms() + REPLY_MS;
	int rc;

	if (sess_frame_put(&b, type, head, hlen, body, blen) < 0)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	rc = put(s, &b, err);
	sb_buf_clear(&b);
	while (rc == 0) {
		struct sess_frame f;
		int got = sess_frame_take(&f, &s->in, &s->in_off, err);
		if (got < 0)
			return got;
		if (got == 1 && is_reply(f.type)) {
			*reply = f;
			break;
		}
		if (got == 1) {
			if (sess_frame_put(&s->pending, f.type, f.p, f.len, NULL, 0) < 0)
				return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
			continue;
		}
		ssize_t n = sess_fill(&s->in, &s->in_off, s->fd);
		if (n == -EAGAIN || n == -EINTR) {
			if (wait_fd(s->fd, POLLIN, deadline) < 0)
				return sb_error_set(err, SB_ERR_TIMEOUT, _("session '%s' of sandbox '%s' does not answer"),
						    s->id, s->name);
		} else if (n <= 0) {
			return gone(s, err);
		}
	}
	if (rc == 0 && reply->type == MSG_ERROR) {
		int code = (int)((uint32_t)reply->p[0] | (uint32_t)reply->p[1] << 8 | (uint32_t)reply->p[2] << 16 |
				 (uint32_t)reply->p[3] << 24);
		return sb_error_set(err, code < 0 ? code : SB_ERR_IO, "%.*s", (int)(reply->len - 4), reply->p + 4);
	}
	return rc;
}

static int simple(struct sb_session *s, uint8_t type, const void *head, size_t hlen, const void *body, size_t blen,
		  unsigned long long *offset, struct sb_error *err)
{
	struct sess_frame f;
	int rc = sess_client_request(s, type, head, hlen, body, blen, &f, err);

	if (rc == 0 && offset)
		*offset = f.type == MSG_OK ? sess_get64(f.p) : 0;
	return rc;
}

int sb_session_send(struct sb_session *s, unsigned long long *offset, const void *data, size_t len,
		    enum sb_session_source src, struct sb_error *err)
{
	uint8_t head = (uint8_t)src;
	const char *p = data;
	int rc = 0;

	/* one frame a chunk; the holder queues them and writes what the terminal takes */
	for (size_t off = 0; rc == 0 && (off < len || off == 0); off += SESS_CHUNK) {
		size_t n = len - off < SESS_CHUNK ? len - off : SESS_CHUNK;
		unsigned long long at;
		rc = simple(s, MSG_INPUT, &head, 1, p + off, n, &at, err);
		if (rc == 0 && off == 0 && offset)
			*offset = at;
		if (len == 0)
			break;
	}
	return rc;
}

int sb_session_ctrl(struct sb_session *s, unsigned long long *offset, char key, enum sb_session_source src,
		    struct sb_error *err)
{
	uint8_t head[2] = { (uint8_t)src, (uint8_t)key };

	return simple(s, MSG_CTRL, head, sizeof(head), NULL, 0, offset, err);
}

int sb_session_resize(struct sb_session *s, unsigned short rows, unsigned short cols, struct sb_error *err)
{
	uint8_t head[4] = { (uint8_t)rows, (uint8_t)(rows >> 8), (uint8_t)cols, (uint8_t)(cols >> 8) };

	return simple(s, MSG_RESIZE, head, sizeof(head), NULL, 0, NULL, err);
}

int sb_session_signal(struct sb_session *s, int sig, struct sb_error *err)
{
	uint8_t head = (uint8_t)sig;

	return simple(s, MSG_SIGNAL, &head, 1, NULL, 0, NULL, err);
}

int sb_session_take(struct sb_session *s, enum sb_session_source who, struct sb_error *err)
{
	uint8_t head = (uint8_t)who;

	return simple(s, MSG_TAKE, &head, 1, NULL, 0, NULL, err);
}

int sb_session_release(struct sb_session *s, struct sb_error *err)
{
	return simple(s, MSG_RELEASE, NULL, 0, NULL, 0, NULL, err);
}

int sb_session_subscribe(struct sb_session *s, unsigned long long since, struct sb_error *err)
{
	unsigned char head[8];

	sess_put64(head, since);
	return simple(s, MSG_SUBSCRIBE, head, sizeof(head), NULL, 0, NULL, err);
}

int sb_session_status(struct sb_session *s, struct sb_session_info *out, struct sb_error *err)
{
	struct sess_frame f = { 0 };
	struct sess_status st;
	int rc = sess_client_request(s, MSG_STATUS, NULL, 0, NULL, 0, &f, err);

	if (rc < 0)
		return rc;
	json_t *doc = f.type == MSG_STATE ? json_loadb((const char *)f.p, f.len, 0, NULL) : NULL;
	if (!json_is_object(doc)) {
		json_decref(doc);
		return sb_error_set(err, SB_ERR_FORMAT, _("session '%s' of sandbox '%s' sent a bad status"), s->id,
				    s->name);
	}
	memset(out, 0, sizeof(*out));
	sess_status_from_json(&st, &out->offset, &out->first, out->controller, &out->watchers, doc);
	json_decref(doc);
	snprintf(out->sandbox, sizeof(out->sandbox), "%s", s->name);
	snprintf(out->id, sizeof(out->id), "%s", s->id);
	out->pid = st.pid;
	out->state = st.state;
	out->reason = strdup(st.reason);
	out->exit_code = st.exit_code;
	out->created_at = st.created_at;
	out->last_input = st.last_input;
	out->last_output = st.last_output;
	out->last_input_off = st.last_input_off;
	out->rows = st.rows;
	out->cols = st.cols;
	out->lost = st.lost;
	return out->reason ? 0 : sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
}

/* The next subscription frame: the ones put aside first, then the socket's. */
static int take(struct sb_session *s, struct sess_frame *f, struct sb_error *err)
{
	int got;

	if (s->pending_off < s->pending.len) {
		got = sess_frame_take(f, &s->pending, &s->pending_off, err);
		if (s->pending_off == s->pending.len)
			s->pending.len = s->pending_off = 0;
		return got;
	}
	if ((got = sess_frame_take(f, &s->in, &s->in_off, err)) != 0)
		return got;
	ssize_t n = sess_fill(&s->in, &s->in_off, s->fd);
	if (n == -EAGAIN || n == -EINTR)
		return 0;
	if (n <= 0)
		return s->ended ? 0 : gone(s, err);
	return sess_frame_take(f, &s->in, &s->in_off, err);
}

int sb_session_next(struct sb_session *s, struct sb_session_item *item, struct sb_error *err)
{
	struct sess_frame f;
	int got;

	sb_session_event_clear(&s->event);
	memset(item, 0, sizeof(*item));
	while ((got = take(s, &f, err)) == 1) {
		switch (f.type) {
		case MSG_OUTPUT:
			item->kind = SB_ITEM_OUTPUT;
			item->offset = sess_get64(f.p);
			item->dropped = sess_get64(f.p + 8);
			item->data = (const char *)f.p + 16;
			item->len = f.len - 16;
			return 1;
		case MSG_EVENT:
			if (sess_event_parse(&s->event, (const char *)f.p, f.len) < 0)
				continue;
			item->kind = SB_ITEM_EVENT;
			item->event = s->event;
			item->offset = s->event.offset;
			return 1;
		case MSG_LIVE:
			item->kind = SB_ITEM_LIVE;
			return 1;
		case MSG_END:
			item->kind = SB_ITEM_END;
			s->ended = 1;
			return 1;
		default:
			continue;   /* a reply nobody waits for */
		}
	}
	if (got == 0 && s->ended) {
		item->kind = SB_ITEM_END;
		return 1;
	}
	return got;
}
