/* Fuzz target: the bytes are one JSON-RPC message from an MCP client, handed
 * to mcp_handle_text as the stdio and HTTP transports do, on a server over a
 * scratch root. No tool runs: a tools/call naming an offered tool has only its
 * arguments checked against the tool's schema (what guards every tool).
 * A request gets exactly one answer and a notification none; every answer is
 * JSON-RPC 2.0 with a result or an error and the request's id. */
#include "config.h"

#include "fuzz.h"
#include "mcp/internal.h"

static json_t *sent;

static void emit(struct mcp_session *s, void *origin, json_t *msg)
{
	(void)s, (void)origin;
	FUZZ_CHECK(msg);
	FUZZ_CHECK(json_array_append_new(sent, msg) == 0);
}

/* 1 when msg is a tools/call of a tool the server offers: its arguments are
 * checked here instead of the tool being run. */
static int tool_call(struct sb_mcp_server *srv, const char *text, size_t len)
{
	json_t *msg = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL), *params = json_object_get(msg, "params");
	const char *method = json_string_value(json_object_get(msg, "method"));
	const char *name = json_string_value(json_object_get(params, "name"));
	const json_t *args = json_object_get(params, "arguments");
	int taken = 0;

	if (method && !strcmp(method, "tools/call") && name && mcp_tool_find(srv, name) &&
	    (!args || json_is_object(args))) {
		json_t *empty = json_object();
		struct sb_error err = { 0 };
		int rc = mcp_args_check(json_object_get(srv->schemas, name), args ? args : empty, &err);
		FUZZ_CHECK(rc == 0 || (rc < 0 && err.msg[0]));
		json_decref(empty);
		taken = 1;
	}
	json_decref(msg);
	return taken;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sb_mcp_server *srv;
	static const struct sb_mcp_opts opts = { .owner = "fuzz" };

	if (!srv)
		FUZZ_CHECK(sb_mcp_server_new(&srv, fuzz_root(), &opts, NULL) == 0);
	if (tool_call(srv, (const char *)data, size))
		return 0;
	struct mcp_session s = { .srv = srv, .emit = emit, .notify = 1 };
	json_t *msg = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
	const json_t *id = json_object_get(msg, "id");
	int valid_id = json_is_string(id) || json_is_integer(id);

	sent = json_array();
	FUZZ_CHECK(sent);
	int rc = mcp_handle_text(&s, NULL, (const char *)data, size);
	FUZZ_CHECK((rc == 0 || rc == 1) && json_array_size(sent) == (size_t)rc);
	for (size_t i = 0; i < json_array_size(sent); i++) {
		const json_t *m = json_array_get(sent, i), *mid = json_object_get(m, "id");
		const char *version = json_string_value(json_object_get(m, "jsonrpc"));
		FUZZ_CHECK(json_is_object(m) && version && !strcmp(version, "2.0"));
		FUZZ_CHECK(!json_object_get(m, "result") != !json_object_get(m, "error"));
		/* the request's id, or null for an error about a request without a usable one */
		FUZZ_CHECK(mid && (json_is_null(mid) ? !json_object_get(m, "result") : valid_id && json_equal(mid, id)));
	}
	mcp_resource_unsubscribe(&s, NULL);
	json_decref(sent);
	json_decref(msg);
	return 0;
}
