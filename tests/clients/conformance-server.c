/* sandbench's MCP server (src/mcp/: its JSON-RPC, Streamable HTTP, sessions,
 * workers, progress, logging and cancellation) with the MCP conformance
 * suite's test tools added through sb_mcp_opts.extra_tools, for the suite's
 * tools-call-* and json-schema-2020-12 scenarios (test-mcp-sdk). The product
 * never registers these tools. Each returns what its scenario's description
 * in @modelcontextprotocol/conformance asks for; bad_content returns a
 * result the protocol does not allow, which the server must refuse.
 *   conformance-server --root DIR --listen 127.0.0.1:0
 * The bearer token is ROOT/mcp-token, as for `sandbench mcp --listen`. */
#include "config.h"

#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "base/root.h"
#include "mcp/mcp.h"

/* a 1x1 red PNG and a WAV of eight silent 8-bit samples */
#define PNG "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
#define WAV "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA=="
#define NO_ARGS "{\"type\": \"object\", \"properties\": {}}"
/* the pause between notes the scenarios ask for (~50 ms): the tool's own behaviour */
#define STEP_MS 50

static volatile int stop;

static int text_result(json_t **result, const char *text)
{
	*result = json_pack("{s:[{s:s, s:s}]}", "content", "type", "text", "text", text);
	return 0;
}

static int simple_text(json_t **result, struct sb_mcp_call *call, const json_t *args, struct sb_error *err)
{
	(void)call, (void)args, (void)err;
	return text_result(result, "This is a simple text response for testing.");
}

/* a block of base64 data: image, audio (and, for bad_content, a type there is not) */
static int media_result(json_t **result, const char *type, const char *data, const char *mime)
{
	*result = json_pack("{s:[{s:s, s:s, s:s}]}", "content", "type", type, "data", data, "mimeType", mime);
	return 0;
}

static int image(json_t **result, struct sb_mcp_call *call, const json_t *args, struct sb_error *err)
{
	(void)call, (void)args, (void)err;
	return media_result(result, "image", PNG, "image/png");
}

static int audio(json_t **result, struct sb_mcp_call *call, const json_t *args, struct sb_error *err)
{
	(void)call, (void)args, (void)err;
	return media_result(result, "audio", WAV, "audio/wav");
}

static int embedded(json_t **result, struct sb_mcp_call *call, const json_t *args, struct sb_error *err)
{
	(void)call, (void)args, (void)err;
	*result = json_pack("{s:[{s:s, s:{s:s, s:s, s:s}}]}", "content", "type", "resource", "resource", "uri",
			    "test://embedded-resource", "mimeType", "text/plain", "text", "This is an embedded resource content.");
	return 0;
}

static int mixed(json_t **result, struct sb_mcp_call *call, const json_t *args, struct sb_error *err)
{
	(void)call, (void)args, (void)err;
	*result = json_pack("{s:[{s:s, s:s}, {s:s, s:s, s:s}, {s:s, s:{s:s, s:s, s:s}}]}", "content", "type", "text", "text",
			    "Multiple content types test:", "type", "image", "data", PNG, "mimeType", "image/png", "type",
			    "resource", "resource", "uri", "test://mixed-content-resource", "mimeType", "application/json",
			    "text", "{\"test\":\"data\",\"value\":123}");
	return 0;
}

static int logging(json_t **result, struct sb_mcp_call *call, const json_t *args, struct sb_error *err)
{
	static const char *const lines[] = { "Tool execution started", "Tool processing data", "Tool execution completed" };

	(void)args;
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		if (i)
			poll(NULL, 0, STEP_MS);
		if (sb_mcp_call_log(call, "info", lines[i], err) < 0)
			return -1;
	}
	return text_result(result, "Tool with logging executed successfully");
}

static int failing(json_t **result, struct sb_mcp_call *call, const json_t *args, struct sb_error *err)
{
	(void)result, (void)call, (void)args;
	return sb_error_set(err, SB_ERR_INVALID, "This tool intentionally returns an error for testing");
}

static int progress(json_t **result, struct sb_mcp_call *call, const json_t *args, struct sb_error *err)
{
	(void)args;
	for (int p = 0; p <= 100; p += 50) {
		if (p)
			poll(NULL, 0, STEP_MS);
		if (sb_mcp_call_progress(call, p, 100, err) < 0)
			return -1;
	}
	return text_result(result, "Tool with progress executed successfully");
}

static int schema_2020_12(json_t **result, struct sb_mcp_call *call, const json_t *args, struct sb_error *err)
{
	(void)call, (void)args, (void)err;
	return text_result(result, "JSON Schema 2020-12 tool executed");
}

static int bad_content(json_t **result, struct sb_mcp_call *call, const json_t *args, struct sb_error *err)
{
	(void)call, (void)args, (void)err;
	return media_result(result, "video", "AAAA", "video/mp4");
}

/* log and progress tools run in workers: their notes go down the worker's pipe */
static const struct sb_mcp_tool tools[] = {
	{ "test_simple_text", "Returns simple text.", NO_ARGS, simple_text, SB_MCP_TOOL_READONLY },
	{ "test_image_content", "Returns an image.", NO_ARGS, image, SB_MCP_TOOL_READONLY },
	{ "test_audio_content", "Returns audio.", NO_ARGS, audio, SB_MCP_TOOL_READONLY },
	{ "test_embedded_resource", "Returns an embedded resource.", NO_ARGS, embedded, SB_MCP_TOOL_READONLY },
	{ "test_multiple_content_types", "Returns text, an image and a resource.", NO_ARGS, mixed, SB_MCP_TOOL_READONLY },
	{ "test_tool_with_logging", "Logs three messages at info while it runs.", NO_ARGS, logging,
	  SB_MCP_TOOL_READONLY | SB_MCP_TOOL_WORKER },
	{ "test_error_handling", "Always fails.", NO_ARGS, failing, SB_MCP_TOOL_READONLY },
	{ "test_tool_with_progress", "Reports progress 0, 50 and 100 of 100 while it runs.", NO_ARGS, progress,
	  SB_MCP_TOOL_READONLY | SB_MCP_TOOL_WORKER },
	{ "json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features",
	  "{\"$schema\": \"https://json-schema.org/draft/2020-12/schema\", \"type\": \"object\", \"$defs\": {\"address\": "
	  "{\"type\": \"object\", \"properties\": {\"street\": {\"type\": \"string\"}, \"city\": {\"type\": \"string\"}}}}, "
	  "\"properties\": {\"name\": {\"type\": \"string\"}, \"address\": {\"$ref\": \"#/$defs/address\"}}, "
	  "\"additionalProperties\": false}",
	  schema_2020_12, SB_MCP_TOOL_READONLY },
	{ "bad_content", "Returns a content block of a type the protocol does not have.", NO_ARGS, bad_content,
	  SB_MCP_TOOL_READONLY },
};

static void on_ready(void *arg, const char *url)
{
	(void)arg;
	fprintf(stderr, "conformance-server: listening on %s\n", url);
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	struct sb_mcp_opts o = { .extra_tools = tools, .n_extra_tools = sizeof(tools) / sizeof(tools[0]) };
	struct sb_mcp_server *srv = NULL;
	struct sb_root *root = NULL;
	struct sb_error err = { 0 };
	char token[128];
	int created, rc = -1;

	if (argc != 5 || strcmp(argv[1], "--root") || strcmp(argv[3], "--listen")) {
		fprintf(stderr, "usage: conformance-server --root DIR --listen ADDR\n");
		return 2;
	}
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (sb_root_open(&root, argv[2], &err) == 0 && sb_mcp_token(token, sizeof(token), &created, root, &err) == 0 &&
	    sb_mcp_server_new(&srv, root, &o, &err) == 0)
		rc = sb_mcp_serve_http(srv, argv[4], token, on_ready, NULL, &stop, &err);
	if (rc < 0)
		fprintf(stderr, "conformance-server: %s\n", err.msg);
	sb_mcp_server_free(srv);
	sb_root_close(root);
	return rc < 0 ? 1 : 0;
}
