/* The MCP server's own parts: the protocol (JSON-RPC dispatch, lifecycle),
 * the tool table, argument checking against each tool's schema, workers for
 * long calls, and the transports. */
#ifndef SB_MCP_INTERNAL_H
#define SB_MCP_INTERNAL_H

#include <jansson.h>
#include <poll.h>
#include <sys/types.h>

#include "base/buf.h"
#include "mcp/mcp.h"

#define MCP_LATEST_VERSION "2025-06-18"
#define MCP_INSTANCE_LABEL "mcp-instance"
/* hex digits of the HTTP bearer token */
#define MCP_TOKEN_LEN 64
/* a POST body over this is refused (413) */
#define MCP_HTTP_BODY_MAX (1u << 20)
/* bytes of a call's result a worker may hand back; output beyond is cut by the tools */
#define MCP_RESULT_MAX (8u << 20)
/* progress notifications of a long call, when the client asked for them */
#define MCP_PROGRESS_MS 1000
/* calls running at once (each a worker); one more is refused */
#define MCP_MAX_CALLS 64
/* resource subscriptions of a server, all its clients together */
#define MCP_MAX_SUBS 64
/* the pollfds of the calls (a result pipe and a log pipe each) and of the subscriptions */
#define MCP_MAX_POLLFDS (2 * MCP_MAX_CALLS + MCP_MAX_SUBS)
/* the server's descriptors below this that its spawner keeps (spawner.c) */
#define MCP_SPAWN_FD_MAX 1024
/* a cancelled worker ends on SIGTERM within this, or is killed */
#define MCP_CANCEL_GRACE_MS 5000

/* JSON-RPC error codes */
enum {
	MCP_PARSE_ERROR = -32700,
	MCP_INVALID_REQUEST = -32600,
	MCP_METHOD_NOT_FOUND = -32601,
	MCP_INVALID_PARAMS = -32602,
	MCP_INTERNAL_ERROR = -32603,
};

struct mcp_session;
/* Hands a message to the client of session (steals msg). origin: what the
 * transport gave with the request this message answers or belongs to (HTTP:
 * the POST it came in), NULL for messages of no request. msg NULL: the
 * request of origin will get no answer (cancelled). */
typedef void (*mcp_emit_fn)(struct mcp_session *s, void *origin, json_t *msg);

/* One client's protocol state (stdio: the one; HTTP: per Mcp-Session-Id). */
struct mcp_session {
	struct sb_mcp_server *srv;
	char id[33];                     /* HTTP's Mcp-Session-Id; "" over stdio */
	char version[16];                /* negotiated at initialize; "" before */
	int initialized;                 /* notifications/initialized came */
	/* logging/setLevel's level: its index in the RFC 5424 list plus one; 0:
	 * not set (info and above). At debug, calls forward sandbench's log. */
	int log_level;
	/* the transport delivers messages of no request (stdio; HTTP has no
	 * server-initiated stream): resources/subscribe is offered */
	int notify;
	mcp_emit_fn emit;
	void *transport;                 /* the transport's own state */
};

/* A tools/call running in a forked worker. */
struct mcp_call {
	struct mcp_call *next;
	struct mcp_session *sess;
	void *origin;
	json_t *id;                      /* the request's id */
	json_t *progress_token;          /* NULL: no progress asked */
	int pidfd;                       /* the worker's */
	int fd;                          /* the worker's result pipe */
	int log_fd;                      /* its log's pipe (logging at debug), else -1 */
	struct sb_buf out, log;          /* out: the worker's notes (lines), then its result */
	long long next_progress;         /* monotonic ms */
	int progress;                    /* the timer's count */
	double last_progress;            /* the last progress sent (when sent_progress) */
	int sent_progress;
	int own_progress;                /* the tool reports its progress: the timer is quiet */
	const char *tool;                /* its name: the logger of its log notes */
	unsigned flags;                  /* the tool's */
	long long cancelled;             /* monotonic ms of the cancel; 0: not cancelled */
	int killed;                      /* SIGKILL sent after the grace */
};

/* A worker forked before its call (worker.c): it waits on its request pipe. */
struct mcp_spare {
	int pidfd;                       /* -1: none */
	int req_fd, res_fd, log_fd;      /* the request's write end, the result's and the log's read ends */
};

/* the public flags (mcp.h) under the module's own names */
enum mcp_tool_flags {
	MCP_TOOL_READONLY = SB_MCP_TOOL_READONLY,
	MCP_TOOL_WORKER = SB_MCP_TOOL_WORKER,
	MCP_TOOL_DESTRUCTIVE = SB_MCP_TOOL_DESTRUCTIVE,
	/* what a cancel does to the worker: an interruptible one is interrupted
	 * (SIGTERM: sb_proc_interrupt; an exec's command is killed inside), a
	 * read-only one is killed, any other runs to its end (a create or stop
	 * cut half-way would leave a broken sandbox) and its answer is dropped */
	MCP_TOOL_INTERRUPTIBLE = SB_MCP_TOOL_INTERRUPTIBLE,
};

/* A call's way to its client: a worker's result pipe, where notes (one JSON
 * line each) go before the result (compact JSON, no newline); -1 in the
 * server itself, which sends no notes. */
struct sb_mcp_call {
	int fd;
};

struct mcp_ctx {
	struct sb_mcp_server *srv;
	struct sb_root *root;
};

struct mcp_tool {
	const char *name;
	const char *description;
	const char *schema;              /* the input JSON Schema, as JSON text */
	/* 0 and *result (an object: the structured content), or negative with err */
	int (*run)(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err);
	unsigned flags;
	/* a worker tool's answer when it is there at once (no fork then): 1 and
	 * *result, 0 when the call must wait, negative with err. May be NULL. */
	int (*try_now)(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err);
	/* an extra tool's handler (sb_mcp_tool.run; run is NULL then) */
	int (*call)(json_t **result, struct sb_mcp_call *call, const json_t *args, struct sb_error *err);
};

struct sb_mcp_server {
	struct sb_root *root;
	char owner[64];
	char instance[33];
	int readonly;
	int allow_remove_any;
	struct sb_mcp_mount *mounts;
	size_t n_mounts;
	struct mcp_tool *extra;          /* the program's own tools (sb_mcp_opts.extra_tools) */
	size_t n_extra;
	json_t *schemas;                 /* name -> parsed input schema */
	struct mcp_call *calls;
	struct mcp_spare spare;          /* the next call's worker */
	int spare_wanted;                /* fork one when the loop is idle */
	pid_t spawner_pid;               /* the workers' fork server (spawner.c) */
	int spawner_fd;                  /* its socket; -1: none running */
	/* the transport's fds no worker holds (stdio: the client's pipes, which
	 * would stay open while a worker runs on); -1: none */
	int spawn_null[2];
	unsigned char spawn_fds[MCP_SPAWN_FD_MAX / 8];  /* what the server held when serving started */
	int spawn_fds_known;
	int exiting[MCP_MAX_CALLS];      /* pidfds of workers that answered and may not have ended */
	size_t n_exiting;
	struct mcp_sub *subs;            /* resource subscriptions (resources.c) */
};

/* server.c: bytes random bytes as 2 * bytes hex digits (out holds them and a NUL) */
int mcp_random_hex(char *out, size_t bytes, struct sb_error *err);

/* listen.c: the listening socket for spec (see sb_mcp_serve_http); url: what clients connect to */
int mcp_listen(int *fd, char *url, size_t size, int *is_unix, const char *spec, struct sb_error *err);

/* tools_sandbox.c: the allow-list's entry for the resolved host path real:
 * the folder itself, or (inside) anything below it too; NULL: none */
const struct sb_mcp_mount *mcp_host_allowed(const struct sb_mcp_server *srv, const char *real, int inside);

/* tools.c: the table, the one place a tool is added */
const struct mcp_tool *mcp_tool_find(const struct sb_mcp_server *srv, const char *name);
json_t *mcp_tools_list(const struct sb_mcp_server *srv);
int mcp_tools_load_schemas(struct sb_mcp_server *srv, struct sb_error *err);
int mcp_tools_add_extra(struct sb_mcp_server *srv, const struct sb_mcp_tool *tools, size_t n, struct sb_error *err);
/* 1 when a request may bring notifications before its answer: progress
 * asked for, the server's own log wanted (debug), or a program's own tool,
 * which may send both (sb_mcp_call_progress, sb_mcp_call_log). */
int mcp_may_notify(const struct mcp_session *s, const json_t *msg);
/* Runs tool with args: a CallToolResult (isError on failure). notes_fd: the
 * worker's result pipe, for the call's notes; -1 in the server. */
json_t *mcp_tool_call(struct sb_mcp_server *srv, const struct mcp_tool *tool, const json_t *args, int notes_fd);
/* The CallToolResult of tool's try_now when that answers; NULL: run it in a worker. */
json_t *mcp_tool_try_now(struct sb_mcp_server *srv, const struct mcp_tool *tool, const json_t *args);
json_t *mcp_tool_error_result(const char *code, const char *message);

/* schema.c: args checked against the subset of JSON Schema the tools use
 * (object, properties, required, additionalProperties false, type, enum,
 * minimum, maximum, items) */
int mcp_args_check(const json_t *schema, const json_t *args, struct sb_error *err);

/* args.c: typed access to checked arguments */
const char *mcp_arg_str(const json_t *args, const char *key, const char *dflt);
long long mcp_arg_int(const json_t *args, const char *key, long long dflt);
double mcp_arg_num(const json_t *args, const char *key, double dflt);
int mcp_arg_bool(const json_t *args, const char *key, int dflt);

/* the tools' handlers (tools_*.c) */
int mcp_tool_sandbox_create(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err);
int mcp_tool_sandbox_list(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err);
int mcp_tool_sandbox_inspect(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err);
int mcp_tool_sandbox_exec(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err);
int mcp_tool_sandbox_diff(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err);
int mcp_tool_sandbox_stop(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err);
int mcp_tool_sandbox_pause(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err);
int mcp_tool_sandbox_resume(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err);
int mcp_tool_sandbox_restore(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err);
int mcp_tool_sandbox_remove(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err);
int mcp_tool_sandbox_fork(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err);
int mcp_tool_sandbox_commit(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err);
int mcp_tool_image_build(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err);
int mcp_tool_image_push(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err);
int mcp_tool_image_list(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err);
int mcp_tool_session_start(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err);
int mcp_tool_session_send(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err);
int mcp_tool_session_read(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err);
int mcp_tool_session_read_now(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err);
int mcp_tool_session_kill(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err);
int mcp_tool_file_read(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err);
int mcp_tool_file_write(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err);
int mcp_tool_file_list(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err);
int mcp_tool_pool_set(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err);
int mcp_tool_pool_ls(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err);
int mcp_tool_pool_rm(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err);
int mcp_tool_service_logs(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err);

/* A stream as JSON text: what is not UTF-8 becomes U+FFFD. */
json_t *mcp_text_json(const char *data, size_t len);

/* tools_service.c: sandbox_create's service and publish arguments (ports on
 * the host's loopback only), pointing into args */
#define MCP_MAX_PUBLISH 16
struct mcp_service_args {
	struct sb_service service;
	int has_service;
	struct sb_publish publish[MCP_MAX_PUBLISH];
	size_t n_publish;
};
int mcp_service_spec(struct mcp_service_args *out, const json_t *args, struct sb_error *err);

/* resources.c: timelines and session logs as resources */
struct mcp_sub;
json_t *mcp_resources_list(struct sb_mcp_server *srv, struct sb_error *err);
json_t *mcp_resource_templates(void);
/* {contents: [...]} of uri, NULL with err */
json_t *mcp_resource_read(struct sb_mcp_server *srv, const char *uri, struct sb_error *err);
int mcp_resource_subscribe(struct mcp_session *s, const char *uri, struct sb_error *err);
/* Ends the subscriptions of s to uri (NULL: all of them: the session went away). */
void mcp_resource_unsubscribe(struct mcp_session *s, const char *uri);
/* Fills up to max pollfds with the subscriptions' descriptors; returns how many. */
int mcp_subs_pollfds(const struct sb_mcp_server *srv, struct pollfd *pfd, int max);
/* After poll: notifications/resources/updated for what grew. */
void mcp_subs_service(struct sb_mcp_server *srv);

/* protocol.c: one parsed message from the client of s. Returns 1 when it
 * was a request (a response will be emitted for it with origin), else 0. */
int mcp_handle(struct mcp_session *s, void *origin, json_t *msg);
/* Raw text of one message (stdio line, HTTP body): parse errors answered. */
int mcp_handle_text(struct mcp_session *s, void *origin, const char *text, size_t len);
/* The index of a log level's name (0: debug ... 7: emergency); -1: not one. */
int mcp_log_level(const char *name);
/* 1 when s's client wants log messages of level (an index) */
int mcp_log_wanted(const struct mcp_session *s, int level);
/* 1 when this server speaks protocol revision v */
int mcp_version_known(const char *v);
json_t *mcp_error_msg(const json_t *id, int code, const char *message);
json_t *mcp_result_msg(const json_t *id, json_t *result);

/* worker.c: long calls in forked workers, served from the transport's poll loop */
int mcp_call_start(struct mcp_session *s, void *origin, const json_t *id, const json_t *progress_token,
		   const struct mcp_tool *tool, const json_t *args);
/* Ends the call of request id (its worker is killed, no response follows). */
void mcp_call_cancel(struct mcp_session *s, const json_t *id);
/* Ends the calls whose answer was to go to origin (its HTTP request went away). */
void mcp_calls_cancel_origin(struct sb_mcp_server *srv, const void *origin);
/* Ends every call of s (the session went away). */
void mcp_calls_drop(struct mcp_session *s);
/* Fills up to max pollfds; returns how many. */
int mcp_calls_pollfds(const struct sb_mcp_server *srv, struct pollfd *pfd, int max);
/* After poll: finishes calls whose worker is done, sends progress. */
void mcp_calls_service(struct sb_mcp_server *srv);
/* ms until the next progress notification is due; -1: none. */
int mcp_calls_timeout(const struct sb_mcp_server *srv);
/* Ends the spare worker, then waits for every call's worker to end (after they were cancelled). */
void mcp_calls_wait(struct sb_mcp_server *srv);
/* The transport has nothing in hand (every answer sent whole): forks the
 * spare if one is wanted and no call runs. */
void mcp_calls_idle(struct sb_mcp_server *srv);
/* Ends the spare worker (it exits without a call) and waits for its end. */
void mcp_spare_end(struct sb_mcp_server *srv);
/* A worker's life (in the spawner's child): waits on req_fd for its one call
 * (none: the server ended), runs it, writes the result to fd and closes it
 * before exiting, so that the server has its answer without waiting for the
 * exit. log_fd: its log lines, when the call asks for them. */
void mcp_worker_main(struct sb_mcp_server *srv, int req_fd, int fd, int log_fd) __attribute__((noreturn));

/* spawner.c: the workers' fork server. Started when a transport starts
 * serving, with the transport's fds that no worker may hold (-1: none); 0,
 * or -1 with errno. */
int mcp_spawner_start(struct sb_mcp_server *srv, const int null[2]);
/* Starts it where none runs (first use, or it died): before the pipes of a
 * worker exist, which it must not hold. 0, or -1. */
int mcp_spawner_ready(struct sb_mcp_server *srv);
/* Ends it and waits for it. */
void mcp_spawner_stop(struct sb_mcp_server *srv);
/* A worker on these pipe ends (request read end, result and log write
 * ends; this process keeps its own copies): its pidfd; -1 when the fork
 * failed, -2 when the spawner is gone (stopped then). */
int mcp_spawn(struct sb_mcp_server *srv, const int fds[3]);

#endif
