/* The MCP server: sandbench's sandboxes, sessions and files as Model Context
 * Protocol tools for agent hosts, over stdio (newline-delimited JSON-RPC) or
 * Streamable HTTP on a loopback address or a unix socket (docs/mcp.md). The
 * server only reads and writes the fds and sockets it is given: the front end
 * owns the terminal and the exit status. */
#ifndef SB_MCP_H
#define SB_MCP_H

#include <jansson.h>
#include <stddef.h>

#include "base/error.h"
#include "base/root.h"
#include "sandbox/record.h"

/* A host folder the operator lets MCP clients mount (--allow-mount HOST[:ro|rw]):
 * the most a client may ask for is that mode. */
struct sb_mcp_mount {
	const char *host;
	enum sb_mount_mode mode;
};

/* What a tool is and how it runs. */
enum sb_mcp_tool_flags {
	SB_MCP_TOOL_READONLY = 1 << 0,      /* lists or reads only: offered in --readonly */
	SB_MCP_TOOL_WORKER = 1 << 1,        /* may take long: runs in a forked worker, cancellable, notifies */
	SB_MCP_TOOL_DESTRUCTIVE = 1 << 2,   /* removes or ends something (an annotation for hosts) */
	SB_MCP_TOOL_INTERRUPTIBLE = 1 << 3, /* a cancel sends its worker SIGTERM (sb_proc_interrupt) */
};

/* One running call of a tool: what its notifications go through. */
struct sb_mcp_call;

/* A tool a program adds to the server's own (sb_mcp_opts.extra_tools): the
 * same transports, sessions, argument checking, workers, progress, logging
 * and cancellation serve it. */
struct sb_mcp_tool {
	const char *name;
	const char *description;
	const char *schema;      /* the input JSON Schema as JSON text, listed as written */
	/* 0 and *result, a CallToolResult ({"content": [...]}, optionally
	 * "isError", "structuredContent"; checked before it is sent), or
	 * negative with err: an isError result with err's message */
	int (*run)(json_t **result, struct sb_mcp_call *call, const json_t *args, struct sb_error *err);
	unsigned flags;          /* enum sb_mcp_tool_flags */
};

/* During a call of a worker tool: notifications/progress to the client, when
 * it asked for progress (a value not above the last one sent is dropped: the
 * protocol wants it increasing); total <= 0: unknown. */
int sb_mcp_call_progress(struct sb_mcp_call *call, double progress, double total, struct sb_error *err);
/* During a call of a worker tool: notifications/message at level (an RFC 5424
 * name as MCP spells it: "debug" ... "emergency"), sent when the client's
 * logging/setLevel lets it through (unset: "info" and above). */
int sb_mcp_call_log(struct sb_mcp_call *call, const char *level, const char *text, struct sb_error *err);

struct sb_mcp_opts {
	const char *owner;                       /* the owner of the sandboxes it creates; NULL: "mcp" */
	int readonly;                            /* only listing and reading tools */
	int allow_remove_any;                    /* sandbox_remove also takes sandboxes other instances created */
	const struct sb_mcp_mount *mounts;       /* the allow-list for sandbox_create */
	size_t n_mounts;
	/* tools offered beside sandbench's own (none in the product); the table
	 * stays the caller's and must outlive the server; a name that is taken
	 * already is refused (SB_ERR_EXISTS) */
	const struct sb_mcp_tool *extra_tools;
	size_t n_extra_tools;
};

struct sb_mcp_server;

/* root stays the caller's and must outlive the server. */
int sb_mcp_server_new(struct sb_mcp_server **out, struct sb_root *root, const struct sb_mcp_opts *opts,
		      struct sb_error *err);
void sb_mcp_server_free(struct sb_mcp_server *srv);
/* The instance label sandboxes created by this server carry ("mcp-instance"). */
const char *sb_mcp_server_instance(const struct sb_mcp_server *srv);

/* Parses "HOST[:ro|rw]" (read-only unless ":rw") into out, whose host points
 * into text (cut at the colon). SB_ERR_INVALID when it is not that. */
int sb_mcp_mount_parse(struct sb_mcp_mount *out, char *text, struct sb_error *err);

/* Serves one client on in_fd/out_fd (newline-delimited JSON-RPC) until in_fd
 * ends or stop (may be NULL) becomes non-zero. */
int sb_mcp_serve_stdio(struct sb_mcp_server *srv, int in_fd, int out_fd, volatile int *stop, struct sb_error *err);

/* The bearer token of the HTTP transport, ROOT/mcp-token (mode 0600),
 * generated on first use (*created = 1 then). out holds 65 bytes. */
int sb_mcp_token(char *out, size_t size, int *created, struct sb_root *root, struct sb_error *err);

/* Serves Streamable HTTP at /mcp on listen: "127.0.0.1:PORT", "[::1]:PORT",
 * "localhost:PORT" (port 0: any free one) or "unix:PATH" (a socket of mode
 * 0600); any other address is refused (SB_ERR_UNSAFE). Every request must
 * carry "Authorization: Bearer TOKEN". ready (may be NULL) gets the URL once
 * the socket listens. Runs until stop becomes non-zero. */
int sb_mcp_serve_http(struct sb_mcp_server *srv, const char *listen, const char *token,
		      void (*ready)(void *arg, const char *url), void *arg, volatile int *stop, struct sb_error *err);

/* Where the root server of the socket unit (data/sandbench-mcp.socket) listens. */
#define SB_MCP_SOCKET "/run/sandbench/mcp.sock"

/* For a user who is not root: connects to socket_path and copies in_fd to it
 * and it to out_fd until the server's side ends. SB_ERR_AUTH naming the
 * socket's group when the user may not connect, SB_ERR_PREREQ when nothing
 * serves it. */
int sb_mcp_bridge(const char *socket_path, int in_fd, int out_fd, struct sb_error *err);

#endif
