#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>
#include <microhttpd.h>

#include "internal.h"
#include "base/clock.h"
#include "base/i18n.h"
#include "base/jsonfile.h"
#include "base/mhd_dl.h"
#include "base/proc.h"

/* The Streamable HTTP transport (MCP 2025-06-18): POST /mcp carries one
 * JSON-RPC message; a request is answered with application/json when its
 * answer is all that can come (there at once, or held until it comes: no
 * progress asked for, no log lines wanted), else with an event stream that
 * carries its progress and then its answer. DELETE ends a session; there is
 * no GET stream (405). libmicrohttpd runs in this thread, polled with the
 * workers in one loop (its epoll fd). */

#define MAX_SESSIONS 256

struct http_session {
	struct mcp_session s;
	struct http_session *next;
	long long used;                  /* monotonic ms: the oldest idle one makes room */
};

struct http {
	struct sb_mcp_server *srv;
	struct MHD_Daemon *d;
	const char *token;
	int is_unix;
	struct http_session *sessions;
	int n_sessions;
	struct exchange *exchanges;      /* the requests in progress */
};

/* One POST (or DELETE) and what goes back. */
struct exchange {
	struct http *h;
	struct MHD_Connection *conn;
	struct sb_buf body;
	int too_large;
	int pending;                     /* requests whose answer has not come */
	json_t *answer;                  /* the answer that came at once */
	int sse;                         /* answered as an event stream */
	int held;                        /* answered as JSON once its answer comes */
	char sid[33];                    /* the session's id, for that answer */
	struct sb_buf events;
	size_t sent;
	int suspended;
	struct exchange *next;
};

static enum MHD_Result respond(struct MHD_Connection *conn, unsigned status, const char *type, const char *body,
			       const char *session_id, const char *extra_header, const char *extra_value)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result rc;

	if (!r)
		return MHD_NO;
	if (*body)
		MHD_add_response_header(r, "Content-Type", type);
	if (session_id && *session_id)
		MHD_add_response_header(r, "Mcp-Session-Id", session_id);
	if (extra_header)
		MHD_add_response_header(r, extra_header, extra_value);
	rc = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return rc;
}

/* An HTTP-level refusal, with a JSON-RPC error body as the SDK's servers send. */
static enum MHD_Result refuse(struct MHD_Connection *conn, unsigned status, const char *message,
			      const char *extra_header, const char *extra_value)
{
	json_t *doc = mcp_error_msg(NULL, status == 400 ? MCP_INVALID_REQUEST : -32000, message);
	char *text = doc ? sb_json_dumps(doc, JSON_COMPACT) : NULL;
	enum MHD_Result rc = respond(conn, status, "application/json", text ? text : "", NULL, extra_header, extra_value);

	free(text);
	json_decref(doc);
	return rc;
}

static const char *header(struct MHD_Connection *conn, const char *name)
{
	return MHD_lookup_connection_value(conn, MHD_HEADER_KIND, name);
}

/* host[:port] is a loopback name */
static int loopback_host(const char *h, size_t len)
{
	static const char *const names[] = { "localhost", "127.0.0.1", "[::1]" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		size_t n = strlen(names[i]);
		if (len >= n && !strncasecmp(h, names[i], n) && (len == n || h[n] == ':'))
			return 1;
	}
	return 0;
}

/* The DNS-rebinding rule: an Origin, when there is one, is a loopback one;
 * over TCP the Host is a loopback name too. */
static int origin_ok(const struct http *h, struct MHD_Connection *conn)
{
	const char *origin = header(conn, "Origin"), *host = header(conn, "Host");

	if (!h->is_unix && (!host || !loopback_host(host, strlen(host))))
		return 0;
	if (!origin)
		return 1;
	const char *rest = !strncasecmp(origin, "http://", 7) ? origin + 7 : !strncasecmp(origin, "https://", 8) ? origin + 8 : NULL;
	return rest && !strchr(rest, '/') && loopback_host(rest, strlen(rest));
}

/* Constant time: how long it takes says nothing about how much matched. */
static int token_ok(const struct http *h, struct MHD_Connection *conn)
{
	const char *auth = header(conn, "Authorization");
	unsigned char diff = 0;

	if (!auth || strncasecmp(auth, "Bearer ", 7) || strlen(auth + 7) != strlen(h->token))
		return 0;
	for (size_t i = 0; h->token[i]; i++)
		diff |= (unsigned char)(auth[7 + i] ^ h->token[i]);
	return diff == 0;
}

/* "application/json" among a header's media types (parameters and q ignored) */
static int has_type(const char *value, const char *type)
{
	size_t n = strlen(type);

	for (const char *p = value; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
		while (*p == ' ')
			p++;
		if (!strncasecmp(p, type, n) && (!p[n] || strchr(" ;,", p[n])))
			return 1;
	}
	return 0;
}

static struct http_session *find_session(struct http *h, const char *id)
{
	for (struct http_session *s = h->sessions; s; s = s->next)
		if (id && !strcmp(s->s.id, id))
			return s;
	return NULL;
}

static void drop_session(struct http *h, struct http_session *gone)
{
	for (struct http_session **p = &h->sessions; *p; p = &(*p)->next)
		if (*p == gone) {
			*p = gone->next;
			h->n_sessions--;
			mcp_calls_drop(&gone->s);
			free(gone);
			return;
		}
}

static void emit(struct mcp_session *s, void *origin, json_t *msg);

static struct http_session *new_session(struct http *h)
{
	struct http_session *s, *oldest = NULL;

	/* full: the session unused longest makes room */
	if (h->n_sessions >= MAX_SESSIONS) {
		for (s = h->sessions; s; s = s->next)
			if (!oldest || s->used < oldest->used)
				oldest = s;
		drop_session(h, oldest);
	}
	if (!(s = calloc(1, sizeof(*s))))
		return NULL;
	s->s = (struct mcp_session){ .srv = h->srv, .emit = emit, .transport = h };
	if (mcp_random_hex(s->s.id, 16, NULL) < 0) {
		free(s);
		return NULL;
	}
	s->next = h->sessions;
	h->sessions = s;
	h->n_sessions++;
	return s;
}

static int is_answer(const json_t *msg)
{
	return !json_object_get(msg, "method") && json_object_get(msg, "id");
}

/* The stream has more to send (or is over): its connection goes on. */
static void wake(struct exchange *ex)
{
	if (ex->suspended && ex->conn) {
		ex->suspended = 0;
		MHD_resume_connection(ex->conn);
	}
}

static void emit(struct mcp_session *s, void *origin, json_t *msg)
{
	struct exchange *ex = origin;

	(void)s;
	if (!ex) {
		json_decref(msg);
		return;
	}
	/* msg NULL: the answer will not come (the call was cancelled) */
	if (!msg || is_answer(msg))
		ex->pending--;
	if (!msg) {
		wake(ex);
		return;
	}
	if (!ex->sse) {
		/* at once, or held: the one answer of this POST */
		if (is_answer(msg) && !ex->answer) {
			ex->answer = msg;
			wake(ex);
		} else {
			json_decref(msg);
		}
		return;
	}
	char *text = sb_json_dumps(msg, JSON_COMPACT);
	json_decref(msg);
	if (text) {
		sb_buf_add(&ex->events, "event: message\ndata: ", 21);
		sb_buf_add(&ex->events, text, strlen(text));
		sb_buf_add(&ex->events, "\n\n", 2);
		free(text);
	}
	wake(ex);
}

static ssize_t read_events(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct exchange *ex = cls;

	(void)pos;
	if (ex->sent < ex->events.len) {
		size_t n = ex->events.len - ex->sent < max ? ex->events.len - ex->sent : max;
		memcpy(buf, ex->events.data + ex->sent, n);
		ex->sent += n;
		return (ssize_t)n;
	}
	if (ex->pending <= 0)
		return MHD_CONTENT_READER_END_OF_STREAM;
	/* nothing yet: emit resumes the connection when something comes */
	ex->suspended = 1;
	MHD_suspend_connection(ex->conn);
	return 0;
}

static enum MHD_Result stream(struct exchange *ex, const char *session_id)
{
	struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 65536, read_events, ex, NULL);
	enum MHD_Result rc;

	if (!r)
		return MHD_NO;
	ex->sse = 1;
	MHD_add_response_header(r, "Content-Type", "text/event-stream");
	MHD_add_response_header(r, "Cache-Control", "no-cache");
	if (session_id)
		MHD_add_response_header(r, "Mcp-Session-Id", session_id);
	rc = MHD_queue_response(ex->conn, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return rc;
}

/* The session a message belongs to: a new one for initialize, else the one
 * its Mcp-Session-Id names (400 without, 404 for one that is gone). */
static enum MHD_Result session_for(struct http_session **out, struct exchange *ex, const json_t *msg)
{
	const char *id = header(ex->conn, "Mcp-Session-Id");
	const char *method = json_string_value(json_object_get(msg, "method"));

	*out = NULL;
	if (method && !strcmp(method, "initialize") && json_object_get(msg, "id")) {
		if (!(*out = new_session(ex->h)))
			return refuse(ex->conn, MHD_HTTP_SERVICE_UNAVAILABLE, "Out of memory", NULL, NULL);
		return MHD_YES;
	}
	if (!id)
		return refuse(ex->conn, MHD_HTTP_BAD_REQUEST, "Bad Request: Mcp-Session-Id header is required", NULL, NULL);
	if (!(*out = find_session(ex->h, id)))
		return refuse(ex->conn, MHD_HTTP_NOT_FOUND, "Session not found", NULL, NULL);
	return MHD_YES;
}

static enum MHD_Result answer_now(struct exchange *ex, const char *session_id)
{
	char *text = sb_json_dumps(ex->answer, JSON_COMPACT);
	enum MHD_Result rc = text ? respond(ex->conn, MHD_HTTP_OK, "application/json", text, session_id, NULL, NULL) : MHD_NO;

	free(text);
	return rc;
}

static enum MHD_Result post_done(struct exchange *ex)
{
	json_error_t jerr;
	struct http_session *s;
	enum MHD_Result rc;

	if (ex->too_large)
		return refuse(ex->conn, MHD_HTTP_CONTENT_TOO_LARGE, "Payload too large", NULL, NULL);
	json_t *msg = json_loadb(ex->body.data ? ex->body.data : "", ex->body.len, JSON_REJECT_DUPLICATES, &jerr);
	if (!msg || !json_is_object(msg)) {
		json_t *e = mcp_error_msg(NULL, msg ? MCP_INVALID_REQUEST : MCP_PARSE_ERROR, msg ? "Invalid Request" : "Parse error");
		char *text = e ? sb_json_dumps(e, JSON_COMPACT) : NULL;
		rc = respond(ex->conn, MHD_HTTP_BAD_REQUEST, "application/json", text ? text : "", NULL, NULL, NULL);
		free(text);
		json_decref(e);
		json_decref(msg);
		return rc;
	}
	if ((rc = session_for(&s, ex, msg)) != MHD_YES || !s) {
		json_decref(msg);
		return rc;
	}
	const char *v = header(ex->conn, "MCP-Protocol-Version");
	if (v && !mcp_version_known(v)) {
		json_decref(msg);
		return refuse(ex->conn, MHD_HTTP_BAD_REQUEST, "Bad Request: Unsupported protocol version", NULL, NULL);
	}
	s->used = sb_clock_monotonic_ms();
	ex->pending = 1;
	int quiet = !mcp_may_notify(&s->s, msg);
	int request = mcp_handle(&s->s, ex, msg);
	json_decref(msg);
	const char *sid = s->s.id;
	if (!request) {
		ex->pending = 0;
		return respond(ex->conn, MHD_HTTP_ACCEPTED, "", "", NULL, NULL, NULL);
	}
	if (ex->answer || !quiet)
		return ex->answer ? answer_now(ex, sid) : stream(ex, sid);
	/* one response when the answer comes (emit resumes the connection and
	 * libmicrohttpd calls on_request again): no stream to frame and end */
	snprintf(ex->sid, sizeof(ex->sid), "%s", sid);
	ex->held = ex->suspended = 1;
	MHD_suspend_connection(ex->conn);
	return MHD_YES;
}

/* A held request, its connection resumed: its answer; a call cancelled
 * meanwhile has none: an empty stream, as a streamed one that is cancelled
 * ends. */
static enum MHD_Result answer_held(struct exchange *ex)
{
	if (ex->pending > 0) {
		/* not yet (libmicrohttpd's own call): it waits on */
		ex->suspended = 1;
		MHD_suspend_connection(ex->conn);
		return MHD_YES;
	}
	ex->held = 0;
	return ex->answer ? answer_now(ex, ex->sid) : stream(ex, ex->sid);
}

/* What is refused before a body is read: the address rules, the token, the method, the headers. */
struct refusal {
	unsigned status;
	const char *message, *header, *value;
};

static int deny(struct refusal *r, unsigned status, const char *message, const char *header_name, const char *value)
{
	*r = (struct refusal){ status, message, header_name, value };
	return 1;
}

/* 1 and *r when the request is refused, 0 when its body may come */
static int check_request(struct refusal *r, struct http *h, struct MHD_Connection *conn, const char *url, const char *method)
{
	if (strcmp(url, "/mcp"))
		return deny(r, MHD_HTTP_NOT_FOUND, "Not found: the MCP endpoint is /mcp", NULL, NULL);
	if (!origin_ok(h, conn))
		return deny(r, MHD_HTTP_FORBIDDEN, "Forbidden: the Origin or Host is not a loopback one", NULL, NULL);
	if (!token_ok(h, conn))
		return deny(r, MHD_HTTP_UNAUTHORIZED, "Unauthorized: a valid bearer token is required", "WWW-Authenticate",
			      "Bearer");
	if (strcmp(method, "POST") && strcmp(method, "DELETE"))
		return deny(r, MHD_HTTP_METHOD_NOT_ALLOWED, "Method not allowed", "Allow", "POST, DELETE");
	if (!strcmp(method, "DELETE"))
		return 0;
	const char *type = header(conn, "Content-Type"), *accept = header(conn, "Accept"),
		   *length = header(conn, "Content-Length");
	if (!type || !has_type(type, "application/json"))
		return deny(r, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, "Unsupported Media Type: Content-Type must be application/json",
			      NULL, NULL);
	if (!accept || !has_type(accept, "application/json") || !has_type(accept, "text/event-stream"))
		return deny(r, MHD_HTTP_NOT_ACCEPTABLE,
			      "Not Acceptable: the client must accept both application/json and text/event-stream", NULL, NULL);
	/* a body somewhat over the limit is read (and dropped) before the 413: a
	 * client still sending when the connection closes would see a reset,
	 * not the answer; one far over is refused at once */
	if (length && strtoull(length, NULL, 10) > 16 * (unsigned long long)MCP_HTTP_BODY_MAX)
		return deny(r, MHD_HTTP_CONTENT_TOO_LARGE, "Payload too large", NULL, NULL);
	return 0;
}

static enum MHD_Result do_delete(struct exchange *ex)
{
	struct http_session *s = find_session(ex->h, header(ex->conn, "Mcp-Session-Id"));

	if (!header(ex->conn, "Mcp-Session-Id"))
		return refuse(ex->conn, MHD_HTTP_BAD_REQUEST, "Bad Request: Mcp-Session-Id header is required", NULL, NULL);
	if (!s)
		return refuse(ex->conn, MHD_HTTP_NOT_FOUND, "Session not found", NULL, NULL);
	drop_session(ex->h, s);
	return respond(ex->conn, MHD_HTTP_OK, "", "", NULL, NULL, NULL);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
				  const char *version, const char *data, size_t *size, void **state)
{
	struct http *h = cls;
	struct exchange *ex = *state;

	(void)version;
	if (!ex) {
		struct refusal r;
		/* a refusal is answered at once: nothing to keep of the request */
		if (check_request(&r, h, conn, url, method))
			return refuse(conn, r.status, r.message, r.header, r.value);
		if (!(ex = calloc(1, sizeof(*ex))))
			return MHD_NO;
		*ex = (struct exchange){ .h = h, .conn = conn, .next = h->exchanges };
		h->exchanges = ex;
		*state = ex;
		return MHD_YES;
	}
	if (*size) {
		if (ex->too_large || ex->body.len + *size > MCP_HTTP_BODY_MAX || sb_buf_add(&ex->body, data, *size) < 0) {
			ex->too_large = 1;
			sb_buf_clear(&ex->body);
		}
		*size = 0;
		return MHD_YES;
	}
	if (ex->sse)
		return MHD_YES;
	if (ex->held)
		return answer_held(ex);
	return !strcmp(method, "DELETE") ? do_delete(ex) : post_done(ex);
}

/* The request is over (answered, or its client went away): its calls end with it. */
static void on_completed(void *cls, struct MHD_Connection *conn, void **state, enum MHD_RequestTerminationCode toe)
{
	struct http *h = cls;
	struct exchange *ex = *state;

	(void)conn, (void)toe;
	if (!ex)
		return;
	for (struct exchange **p = &h->exchanges; *p; p = &(*p)->next)
		if (*p == ex) {
			*p = ex->next;
			break;
		}
	ex->conn = NULL;
	if (ex->pending > 0)
		mcp_calls_cancel_origin(h->srv, ex);
	json_decref(ex->answer);
	sb_buf_clear(&ex->body);
	sb_buf_clear(&ex->events);
	free(ex);
	*state = NULL;
}

static int serve_loop(struct http *h, int epfd, volatile int *stop)
{
	while (!(stop && *stop)) {
		struct pollfd pfd[1 + MCP_MAX_POLLFDS] = { { .fd = epfd, .events = POLLIN } };
		int n = 1 + mcp_calls_pollfds(h->srv, pfd + 1, MCP_MAX_POLLFDS);
		MHD_UNSIGNED_LONG_LONG mhd_ms;
		int ms = mcp_calls_timeout(h->srv);
		if (MHD_get_timeout(h->d, &mhd_ms) == MHD_YES && (ms < 0 || mhd_ms < (MHD_UNSIGNED_LONG_LONG)ms))
			ms = mhd_ms > 60000 ? 60000 : (int)mhd_ms;
		int ready = poll(pfd, (nfds_t)n, ms);
		if (ready < 0 && errno != EINTR)
			return -errno;
		sb_proc_reap_orphans();
		mcp_calls_service(h->srv);
		MHD_run(h->d);
		/* idle once every request is answered whole, its last chunk sent */
		if (!h->exchanges)
			mcp_calls_idle(h->srv);
	}
	return 0;
}

int sb_mcp_serve_http(struct sb_mcp_server *srv, const char *listen, const char *token,
		      void (*ready)(void *arg, const char *url), void *arg, volatile int *stop, struct sb_error *err)
{
	struct http h = { .srv = srv, .token = token };
	char url[160];
	int fd, rc;

	/* before libmicrohttpd and the listener: the workers' pages are few */
	mcp_spawner_start(srv, (int[2]){ -1, -1 });
	if ((rc = sb_mhd_load(err)) < 0 || (rc = mcp_listen(&fd, url, sizeof(url), &h.is_unix, listen, err)) < 0) {
		mcp_spawner_stop(srv);
		return rc;
	}
	h.d = MHD_start_daemon(MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME, 0, NULL, NULL, on_request, &h,
			       MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_NOTIFY_COMPLETED, on_completed, &h,
			       MHD_OPTION_CONNECTION_LIMIT, (unsigned)128, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)600,
			       MHD_OPTION_END);
	const union MHD_DaemonInfo *info = h.d ? MHD_get_daemon_info(h.d, MHD_DAEMON_INFO_EPOLL_FD) : NULL;
	if (!info) {
		if (h.d)
			MHD_stop_daemon(h.d);
		close(fd);
		return sb_error_set(err, SB_ERR_IO, _("libmicrohttpd could not serve on %s"), url);
	}
	if (ready)
		ready(arg, url);
	rc = serve_loop(&h, info->epoll_fd, stop);
	/* every call is cancelled, which ends and wakes its stream: MHD stops
	 * only without suspended connections */
	while (h.sessions)
		drop_session(&h, h.sessions);
	for (struct exchange *ex = h.exchanges; ex; ex = ex->next)
		wake(ex);
	MHD_run(h.d);
	MHD_stop_daemon(h.d);
	close(fd);
	if (h.is_unix)
		unlink(listen + 5);
	mcp_calls_wait(srv);
	mcp_spawner_stop(srv);
	if (rc < 0)
		return sb_error_errno(err, SB_ERR_IO, -rc, _("the MCP server's poll failed"));
	return 0;
}
