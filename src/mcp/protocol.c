#include "config.h"

#include <string.h>

#include "internal.h"
#include "base/i18n.h"

/* The revisions this server speaks, newest first: a client asking for one of
 * them gets it, any other gets the newest (the client then decides). */
static const char *const versions[] = { MCP_LATEST_VERSION, "2025-03-26", "2024-11-05" };

int mcp_version_known(const char *v)
{
	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++)
		if (!strcmp(v, versions[i]))
			return 1;
	return 0;
}

json_t *mcp_error_msg(const json_t *id, int code, const char *message)
{
	return json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", id ? id : json_null(), "error", "code",
			 code, "message", message);
}

json_t *mcp_result_msg(const json_t *id, json_t *result)
{
	return json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id, "result", result);
}

static json_t *do_initialize(struct mcp_session *s, const json_t *params, int *code, struct sb_error *err)
{
	const char *asked = json_string_value(json_object_get(params, "protocolVersion"));
	const char *v = versions[0];

	(void)err;
	if (!asked) {
		*code = MCP_INVALID_PARAMS;
		return NULL;
	}
	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++)
		if (!strcmp(asked, versions[i]))
			v = versions[i];
	snprintf(s->version, sizeof(s->version), "%s", v);
	/* subscriptions need messages of no request: over HTTP there is no stream for them */
	return json_pack("{s:s, s:{s:{s:b}, s:{}, s:{s:b, s:b}}, s:{s:s, s:s, s:s}, s:s}", "protocolVersion", v,
			 "capabilities", "tools", "listChanged", 0, "logging", "resources", "subscribe", s->notify,
			 "listChanged", 0, "serverInfo", "name", "sandbench", "title", "sandbench", "version",
			 PACKAGE_VERSION, "instructions",
			 "Each sandbox is a gVisor sandbox from a pinned image. Create one with sandbox_create, run "
			 "commands with sandbox_exec or a persistent shell with session_start/session_send/"
			 "session_read, move files with file_read/file_write, and remove it when done. A sandbox's "
			 "timeline and a session's output are resources.");
}

static json_t *do_ping(struct mcp_session *s, const json_t *params, int *code, struct sb_error *err)
{
	(void)s, (void)params, (void)code, (void)err;
	return json_object();
}

/* RFC 5424's levels, as MCP names them, most verbose first */
static const char *const log_levels[] = { "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency" };

int mcp_log_level(const char *name)
{
	for (size_t i = 0; name && i < sizeof(log_levels) / sizeof(log_levels[0]); i++)
		if (!strcmp(name, log_levels[i]))
			return (int)i;
	return -1;
}

/* sandbench's own log is diagnostics (debug): a client that does not set a
 * level gets the tools' messages from info on, and not that */
int mcp_log_wanted(const struct mcp_session *s, int level)
{
	return level >= (s->log_level ? s->log_level - 1 : 1);
}

static json_t *do_set_level(struct mcp_session *s, const json_t *params, int *code, struct sb_error *err)
{
	int level = mcp_log_level(json_string_value(json_object_get(params, "level")));

	(void)err;
	if (level < 0) {
		*code = MCP_INVALID_PARAMS;
		return NULL;
	}
	s->log_level = level + 1;
	return json_object();
}

static json_t *do_tools_list(struct mcp_session *s, const json_t *params, int *code, struct sb_error *err)
{
	(void)params, (void)code, (void)err;
	return json_pack("{s:o}", "tools", mcp_tools_list(s->srv));
}

static json_t *do_resources_list(struct mcp_session *s, const json_t *params, int *code, struct sb_error *err)
{
	json_t *list = mcp_resources_list(s->srv, err);

	(void)params, (void)code;
	return list ? json_pack("{s:o}", "resources", list) : NULL;
}

static json_t *do_resource_templates(struct mcp_session *s, const json_t *params, int *code, struct sb_error *err)
{
	(void)s, (void)params, (void)code, (void)err;
	return json_pack("{s:o}", "resourceTemplates", mcp_resource_templates());
}

/* the spec's code for a resource that is not there */
#define MCP_RESOURCE_NOT_FOUND (-32002)

static const char *uri_param(const json_t *params, int *code)
{
	const char *uri = json_string_value(json_object_get(params, "uri"));

	if (!uri)
		*code = MCP_INVALID_PARAMS;
	return uri;
}

static int resource_code(const struct sb_error *err)
{
	return err->code == SB_ERR_NOTFOUND ? MCP_RESOURCE_NOT_FOUND : MCP_INVALID_PARAMS;
}

static json_t *do_resource_read(struct mcp_session *s, const json_t *params, int *code, struct sb_error *err)
{
	const char *uri = uri_param(params, code);
	json_t *doc = uri ? mcp_resource_read(s->srv, uri, err) : NULL;

	if (uri && !doc)
		*code = resource_code(err);
	return doc;
}

static json_t *do_subscribe(struct mcp_session *s, const json_t *params, int *code, struct sb_error *err)
{
	const char *uri = uri_param(params, code);

	if (!s->notify) {
		*code = MCP_METHOD_NOT_FOUND;
		return NULL;
	}
	if (!uri)
		return NULL;
	if (mcp_resource_subscribe(s, uri, err) < 0) {
		*code = resource_code(err);
		return NULL;
	}
	return json_object();
}

static json_t *do_unsubscribe(struct mcp_session *s, const json_t *params, int *code, struct sb_error *err)
{
	const char *uri = uri_param(params, code);

	(void)err;
	if (!uri)
		return NULL;
	mcp_resource_unsubscribe(s, uri);
	return json_object();
}

/* tools/call answers itself: inline, or later from its worker */
static int do_tools_call(struct mcp_session *s, void *origin, const json_t *id, const json_t *params)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	const json_t *args = json_object_get(params, "arguments");
	const struct mcp_tool *tool = name ? mcp_tool_find(s->srv, name) : NULL;
	char msg[256];

	if (!tool) {
		snprintf(msg, sizeof(msg), "Unknown tool: %s", name ? name : "(no name)");
		s->emit(s, origin, mcp_error_msg(id, MCP_INVALID_PARAMS, msg));
		return 1;
	}
	if (args && !json_is_object(args)) {
		s->emit(s, origin, mcp_error_msg(id, MCP_INVALID_PARAMS, "Tool arguments must be an object"));
		return 1;
	}
	json_t *empty = args ? NULL : json_object();
	const json_t *a = args ? args : empty;
	json_t *now = (tool->flags & MCP_TOOL_WORKER) ? mcp_tool_try_now(s->srv, tool, a) : NULL;
	if (now) {
		s->emit(s, origin, mcp_result_msg(id, now));
	} else if (tool->flags & MCP_TOOL_WORKER) {
		const json_t *token = json_object_get(json_object_get(params, "_meta"), "progressToken");
		int rc = mcp_call_start(s, origin, id, token, tool, a);
		if (rc < 0)
			s->emit(s, origin,
				mcp_result_msg(id, mcp_tool_error_result(sb_error_name(rc),
									 rc == SB_ERR_LIMIT ? _("Too many calls are running: try again when one has ended.")
											    : _("The server could not start a worker for the call."))));
	} else {
		s->emit(s, origin, mcp_result_msg(id, mcp_tool_call(s->srv, tool, a, -1)));
	}
	json_decref(empty);
	return 1;
}

static void on_cancelled(struct mcp_session *s, const json_t *params)
{
	const json_t *id = json_object_get(params, "requestId");

	if (id)
		mcp_call_cancel(s, id);
}

static void on_initialized(struct mcp_session *s, const json_t *params)
{
	(void)params;
	s->initialized = 1;
}

static const struct {
	const char *method;
	json_t *(*run)(struct mcp_session *s, const json_t *params, int *code, struct sb_error *err);
} requests[] = {
	{ "initialize", do_initialize },
	{ "ping", do_ping },
	{ "tools/list", do_tools_list },
	{ "logging/setLevel", do_set_level },
	{ "resources/list", do_resources_list },
	{ "resources/templates/list", do_resource_templates },
	{ "resources/read", do_resource_read },
	{ "resources/subscribe", do_subscribe },
	{ "resources/unsubscribe", do_unsubscribe },
};

static const struct {
	const char *method;
	void (*run)(struct mcp_session *s, const json_t *params);
} notifications[] = {
	{ "notifications/initialized", on_initialized },
	{ "notifications/cancelled", on_cancelled },
};

static int handle_request(struct mcp_session *s, void *origin, const json_t *id, const char *method,
			  const json_t *params)
{
	if (!strcmp(method, "tools/call"))
		return do_tools_call(s, origin, id, params);
	for (size_t i = 0; i < sizeof(requests) / sizeof(requests[0]); i++) {
		if (strcmp(method, requests[i].method))
			continue;
		int code = MCP_INTERNAL_ERROR;
		struct sb_error err = { 0 };
		json_t *result = requests[i].run(s, params, &code, &err);
		const char *msg = err.msg[0] ? err.msg
				  : code == MCP_INVALID_PARAMS ? "Invalid params"
				  : code == MCP_METHOD_NOT_FOUND ? "Method not found" : "Internal error";
		s->emit(s, origin, result ? mcp_result_msg(id, result) : mcp_error_msg(id, code, msg));
		return 1;
	}
	s->emit(s, origin, mcp_error_msg(id, MCP_METHOD_NOT_FOUND, "Method not found"));
	return 1;
}

int mcp_handle(struct mcp_session *s, void *origin, json_t *msg)
{
	const json_t *id = json_object_get(msg, "id");
	const json_t *method = json_object_get(msg, "method");
	const json_t *params = json_object_get(msg, "params");
	const json_t *version = json_object_get(msg, "jsonrpc");

	if (!json_is_object(msg) || !json_is_string(version) || strcmp(json_string_value(version), "2.0")) {
		s->emit(s, origin, mcp_error_msg(NULL, MCP_INVALID_REQUEST, "Invalid Request"));
		return 1;
	}
	/* a response to something we asked: we ask nothing, so nothing to do */
	if (!method && id && (json_object_get(msg, "result") || json_object_get(msg, "error")))
		return 0;
	if (!json_is_string(method) || (id && !json_is_string(id) && !json_is_integer(id)) ||
	    (params && !json_is_object(params))) {
		s->emit(s, origin, mcp_error_msg(id && (json_is_string(id) || json_is_integer(id)) ? id : NULL,
						 MCP_INVALID_REQUEST, "Invalid Request"));
		return 1;
	}
	if (id)
		return handle_request(s, origin, id, json_string_value(method), params);
	for (size_t i = 0; i < sizeof(notifications) / sizeof(notifications[0]); i++)
		if (!strcmp(json_string_value(method), notifications[i].method))
			notifications[i].run(s, params);
	return 0;
}

int mcp_handle_text(struct mcp_session *s, void *origin, const char *text, size_t len)
{
	json_error_t jerr;
	json_t *msg = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	int rc;

	if (!msg) {
		s->emit(s, origin, mcp_error_msg(NULL, MCP_PARSE_ERROR, "Parse error"));
		return 1;
	}
	rc = mcp_handle(s, origin, msg);
	json_decref(msg);
	return rc;
}
