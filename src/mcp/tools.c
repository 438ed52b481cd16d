#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "base/i18n.h"
#include "base/jsonfile.h"

/* Schema fragments the tools share. */
#define NAME_PROP "\"name\": {\"type\": \"string\", \"description\": \"The sandbox's name.\"}"
#define REF_PROP \
	"\"ref\": {\"type\": \"string\", \"description\": \"The new image's name (without a registry: under " \
	"localhost/).\"}"
#define SESSION_PROPS \
	NAME_PROP ", \"session\": {\"type\": \"string\", \"description\": \"The session's id (session_start returns it).\"}"
#define OBJECT(props, required) \
	"{\"type\": \"object\", \"properties\": {" props "}, \"required\": [" required "], \"additionalProperties\": false}"

/* The tools, the one place to add one: name, description, input schema,
 * handler, flags. */
static const struct mcp_tool tools[] = {
	{ "sandbox_create",
	  "Create and start a sandbox (a gVisor sandbox from an image pinned by digest). Host folders can be "
	  "mounted only from the operator's allow-list.",
	  OBJECT(NAME_PROP ", \"image\": {\"type\": \"string\", \"description\": \"Image reference or digest; default: the "
			   "configured default image.\"}, "
			   "\"kind\": {\"type\": \"string\", \"enum\": [\"temporary\", \"permanent\"]}, "
			   "\"idle_timeout\": {\"type\": \"integer\", \"minimum\": 1, \"description\": \"Seconds of idleness "
			   "before a temporary sandbox expires.\"}, "
			   "\"network\": {\"type\": \"boolean\", \"description\": \"Network access (default: configured).\"}, "
			   "\"disk\": {\"type\": \"string\", \"description\": \"Cap on its disk (root file system "
			   "changes and /workspace), e.g. 512m, 2g; at least 16m.\"}, "
			   "\"mounts\": {\"type\": \"array\", \"items\": {\"type\": \"object\", \"properties\": {"
			   "\"host\": {\"type\": \"string\"}, \"path\": {\"type\": \"string\"}, "
			   "\"mode\": {\"type\": \"string\", \"enum\": [\"ro\", \"rw\"]}}, \"required\": [\"host\", "
			   "\"path\"], \"additionalProperties\": false}}, "
			   "\"service\": {\"type\": \"object\", \"description\": \"A service the sandbox runs and supervises "
			   "(a permanent sandbox unless kind says otherwise).\", \"properties\": {"
			   "\"command\": {\"type\": \"string\", \"description\": \"sh -c text.\"}, "
			   "\"health\": {\"type\": \"string\", \"description\": \"sh -c text; exit 0 is healthy.\"}, "
			   "\"health_interval\": {\"type\": \"integer\", \"minimum\": 1, \"maximum\": 86400}, "
			   "\"restart\": {\"type\": \"string\", \"enum\": [\"no\", \"on-failure\", \"always\"]}}, "
			   "\"required\": [\"command\"], \"additionalProperties\": false}, "
			   "\"publish\": {\"type\": \"array\", \"description\": \"Sandbox ports reachable on the host's "
			   "127.0.0.1 (network on).\", \"items\": {\"type\": \"object\", \"properties\": {"
			   "\"host_port\": {\"type\": \"integer\", \"minimum\": 1, \"maximum\": 65535}, "
			   "\"port\": {\"type\": \"integer\", \"minimum\": 1, \"maximum\": 65535}}, "
			   "\"required\": [\"host_port\", \"port\"], \"additionalProperties\": false}}",
		 "\"name\""),
	  mcp_tool_sandbox_create, MCP_TOOL_WORKER },
	{ "sandbox_list", "List the sandboxes with their state, kind, image, owner and expiry.",
	  OBJECT("\"owner\": {\"type\": \"string\", \"description\": \"Only sandboxes of this owner.\"}", ""),
	  mcp_tool_sandbox_list, MCP_TOOL_READONLY },
	{ "sandbox_inspect", "Show one sandbox: its record, activity, expiry, workspace and address.",
	  OBJECT(NAME_PROP, "\"name\""), mcp_tool_sandbox_inspect, MCP_TOOL_READONLY },
	{ "sandbox_exec",
	  "Run a command in a running sandbox and return its exit code, stdout and stderr. No shell is involved: "
	  "use [\"sh\", \"-c\", \"...\"] for one.",
	  OBJECT(NAME_PROP ", \"command\": {\"type\": \"array\", \"items\": {\"type\": \"string\"}, \"minItems\": 1}, "
			   "\"cwd\": {\"type\": \"string\"}, \"env\": {\"type\": \"object\", \"additionalProperties\": "
			   "{\"type\": \"string\"}}, \"timeout\": {\"type\": \"number\", \"minimum\": 0.001, \"maximum\": "
			   "86400, \"description\": \"Seconds; the command is killed on the deadline (default 600).\"}",
		 "\"name\", \"command\""),
	  mcp_tool_sandbox_exec, MCP_TOOL_WORKER | MCP_TOOL_INTERRUPTIBLE },
	{ "session_start",
	  "Start a persistent shell session in a running sandbox (or return the live one with reuse). Its state "
	  "(cwd, variables) lasts across session_send calls.",
	  OBJECT(NAME_PROP ", \"session\": {\"type\": \"string\", \"description\": \"Its id; default: the lowest free "
			   "number.\"}, \"reuse\": {\"type\": \"boolean\"}, \"cwd\": {\"type\": \"string\"}",
		 "\"name\""),
	  mcp_tool_session_start, MCP_TOOL_WORKER },
	{ "session_send",
	  "Type input into a session (a newline is added unless newline is false), or a control key. Returns the "
	  "output offset to read from.",
	  OBJECT(SESSION_PROPS ", \"text\": {\"type\": \"string\"}, \"newline\": {\"type\": \"boolean\"}, "
			       "\"ctrl\": {\"type\": \"string\", \"enum\": [\"c\", \"d\", \"z\", \"\\\\\"]}",
		 "\"name\", \"session\""),
	  mcp_tool_session_send, 0 },
	{ "session_read",
	  "Read a session's output from an offset (default: the last input) until the prompt is back, a pause "
	  "(wait_idle), nothing came at all (first_timeout) or max_wait passed. Without a wait option it returns "
	  "what there is now.",
	  OBJECT(SESSION_PROPS ", \"since\": {\"type\": \"integer\", \"minimum\": 0}, "
			       "\"wait_idle\": {\"type\": \"number\", \"minimum\": 0, \"maximum\": 86400}, "
			       "\"first_timeout\": {\"type\": \"number\", \"minimum\": 0, \"maximum\": 86400}, "
			       "\"max_wait\": {\"type\": \"number\", \"minimum\": 0, \"maximum\": 86400}, "
			       "\"format\": {\"type\": \"string\", \"enum\": [\"clean\", \"raw\"]}",
		 "\"name\", \"session\""),
	  mcp_tool_session_read, MCP_TOOL_READONLY | MCP_TOOL_WORKER, mcp_tool_session_read_now },
	{ "session_kill", "End a session (SIGTERM hangs its terminal up; SIGINT interrupts its foreground job).",
	  OBJECT(SESSION_PROPS ", \"signal\": {\"type\": \"string\", \"enum\": [\"TERM\", \"KILL\", \"INT\"]}",
		 "\"name\", \"session\""),
	  mcp_tool_session_kill, MCP_TOOL_DESTRUCTIVE },
	{ "file_read", "Read a file inside a sandbox (text, up to max_bytes).",
	  OBJECT(NAME_PROP ", \"path\": {\"type\": \"string\", \"description\": \"Absolute path inside the sandbox.\"}, "
			   "\"max_bytes\": {\"type\": \"integer\", \"minimum\": 1, \"maximum\": 4194304}",
		 "\"name\", \"path\""),
	  mcp_tool_file_read, MCP_TOOL_READONLY | MCP_TOOL_WORKER },
	{ "file_write", "Write a text file inside a sandbox (created or replaced whole).",
	  OBJECT(NAME_PROP ", \"path\": {\"type\": \"string\"}, \"content\": {\"type\": \"string\"}",
		 "\"name\", \"path\", \"content\""),
	  mcp_tool_file_write, MCP_TOOL_WORKER },
	{ "file_list", "List a directory inside a running sandbox.",
	  OBJECT(NAME_PROP ", \"path\": {\"type\": \"string\", \"description\": \"Default: /workspace.\"}", "\"name\""),
	  mcp_tool_file_list, MCP_TOOL_READONLY | MCP_TOOL_WORKER },
	{ "sandbox_diff", "What a sandbox changed: its root file system against its image, its workspace, the exchange folder.",
	  OBJECT(NAME_PROP ", \"max_entries\": {\"type\": \"integer\", \"minimum\": 1, \"maximum\": 100000}", "\"name\""),
	  mcp_tool_sandbox_diff, MCP_TOOL_READONLY | MCP_TOOL_WORKER },
	{ "sandbox_stop", "Stop a sandbox: memory and processes are checkpointed to disk.", OBJECT(NAME_PROP, "\"name\""),
	  mcp_tool_sandbox_stop, MCP_TOOL_WORKER },
	{ "sandbox_restore", "Wake a stopped sandbox from its checkpoint (or cold-start it from its disk).",
	  OBJECT(NAME_PROP, "\"name\""), mcp_tool_sandbox_restore, MCP_TOOL_WORKER },
	{ "sandbox_pause",
	  "Freeze a running sandbox: its processes stop, its memory stays in RAM (no checkpoint). A command, a session "
	  "input or a file copy resumes it by itself.",
	  OBJECT(NAME_PROP, "\"name\""), mcp_tool_sandbox_pause, MCP_TOOL_WORKER },
	{ "sandbox_resume", "Let a paused sandbox's processes carry on.", OBJECT(NAME_PROP, "\"name\""),
	  mcp_tool_sandbox_resume, MCP_TOOL_WORKER },
	{ "sandbox_remove",
	  "Remove a sandbox this server created, with everything of it (its workspace included).",
	  OBJECT(NAME_PROP, "\"name\""), mcp_tool_sandbox_remove, MCP_TOOL_WORKER | MCP_TOOL_DESTRUCTIVE },
	{ "sandbox_fork",
	  "Make a new sandbox from a copy of one this server created: its disk and, when it runs, its memory and "
	  "processes (a running source is checkpointed and restored, which ends its sessions).",
	  OBJECT("\"source\": {\"type\": \"string\", \"description\": \"The sandbox to copy.\"}, " NAME_PROP
		 ", \"kind\": {\"type\": \"string\", \"enum\": [\"temporary\", \"permanent\"], \"description\": "
		 "\"Default: the source's.\"}",
		 "\"source\", \"name\""),
	  mcp_tool_sandbox_fork, MCP_TOOL_WORKER },
	{ "sandbox_commit",
	  "Save a sandbox's disk as a new image on top of its own (a running sandbox is paused while it is read). "
	  "sandbox_create can then start sandboxes from it.",
	  OBJECT(NAME_PROP ", " REF_PROP ", \"message\": {\"type\": \"string\", \"description\": \"The history "
			   "entry's comment.\"}, \"changes\": {\"type\": \"array\", \"items\": {\"type\": \"string\"}, "
			   "\"description\": \"Config changes: 'ENV K=V', 'WORKDIR /d', 'CMD ...', 'USER u[:g]', 'LABEL "
			   "K=V'.\"}, \"include_workspace\": {\"type\": \"boolean\"}, "
			   "\"compression\": {\"type\": \"string\", \"enum\": [\"gzip\", \"zstd\"]}",
		 "\"name\", \"ref\""),
	  mcp_tool_sandbox_commit, MCP_TOOL_WORKER },
	{ "image_build",
	  "Build an image from a Dockerfile, each RUN in a disposable sandbox. The context (and the Dockerfile) "
	  "are host paths inside a folder of the operator's mount allow-list.",
	  OBJECT(REF_PROP ", \"context\": {\"type\": \"string\", \"description\": \"The host directory COPY "
			  "reads from.\"}, \"dockerfile\": {\"type\": \"string\", \"description\": \"Default: "
			  "CONTEXT/Dockerfile.\"}, \"network\": {\"type\": \"boolean\", \"description\": \"Network for "
			  "every RUN (default off).\"}, \"build_args\": {\"type\": \"array\", \"items\": {\"type\": "
			  "\"string\"}, \"description\": \"K=V values for ARG.\"}, \"no_cache\": {\"type\": \"boolean\"}",
		 "\"ref\", \"context\""),
	  mcp_tool_image_build, MCP_TOOL_WORKER },
	{ "image_push",
	  "Upload an installed image to a registry over HTTPS, with the credentials the operator stored for it.",
	  OBJECT("\"image\": {\"type\": \"string\", \"description\": \"An installed image (reference or "
		 "digest).\"}, \"dest\": {\"type\": \"string\", \"description\": \"registry/name[:tag]; default: "
		 "the image's own name.\"}",
		 "\"image\""),
	  mcp_tool_image_push, MCP_TOOL_WORKER },
	{ "service_logs", "A service's output (the newest max_bytes); since_offset: the offset an earlier call returned.",
	  OBJECT(NAME_PROP ", \"since_offset\": {\"type\": \"integer\", \"minimum\": 0}, "
			   "\"max_bytes\": {\"type\": \"integer\", \"minimum\": 1, \"maximum\": 4194304}",
		 "\"name\""),
	  mcp_tool_service_logs, MCP_TOOL_READONLY | MCP_TOOL_WORKER },
	{ "image_list", "List the images sandboxes can be created from.", OBJECT("", ""), mcp_tool_image_list,
	  MCP_TOOL_READONLY },
	{ "pool_set",
	  "Keep size booted sandboxes of this profile (image, network, memory, cpus) that sandbox_create claims "
	  "for a matching temporary sandbox: it starts in milliseconds rather than booting.",
	  OBJECT("\"image\": {\"type\": \"string\", \"minLength\": 1}, "
		 "\"size\": {\"type\": \"integer\", \"minimum\": 1, \"maximum\": 64}, "
		 "\"network\": {\"type\": \"boolean\", \"description\": \"The members' network (default: configured).\"}, "
		 "\"memory\": {\"type\": \"string\", \"description\": \"Memory limit, e.g. 512m, 2g.\"}, "
		 "\"cpus\": {\"type\": \"number\", \"exclusiveMinimum\": 0, \"maximum\": 1024}",
		 "\"image\", \"size\""),
	  mcp_tool_pool_set, MCP_TOOL_WORKER },
	{ "pool_ls", "List the warm pool's profiles and their ready members.", OBJECT("", ""), mcp_tool_pool_ls,
	  MCP_TOOL_READONLY },
	{ "pool_rm", "Remove the warm pool of an image (or all of them) and its booted members.",
	  OBJECT("\"image\": {\"type\": \"string\", \"minLength\": 1}, \"all\": {\"type\": \"boolean\"}", ""),
	  mcp_tool_pool_rm, MCP_TOOL_WORKER },
};

#define N_TOOLS (sizeof(tools) / sizeof(tools[0]))

static int offered(const struct sb_mcp_server *srv, const struct mcp_tool *t)
{
	return !srv->readonly || (t->flags & MCP_TOOL_READONLY);
}

/* sandbench's tools, then the program's extra ones; NULL past the end */
static const struct mcp_tool *tool_at(const struct sb_mcp_server *srv, size_t i)
{
	return i < N_TOOLS ? &tools[i] : i - N_TOOLS < srv->n_extra ? &srv->extra[i - N_TOOLS] : NULL;
}

static const struct mcp_tool *find(const struct sb_mcp_server *srv, const char *name)
{
	const struct mcp_tool *t;

	for (size_t i = 0; (t = tool_at(srv, i)); i++)
		if (!strcmp(t->name, name))
			return t;
	return NULL;
}

const struct mcp_tool *mcp_tool_find(const struct sb_mcp_server *srv, const char *name)
{
	const struct mcp_tool *t = find(srv, name);

	return t && offered(srv, t) ? t : NULL;
}

int mcp_may_notify(const struct mcp_session *s, const json_t *msg)
{
	const json_t *params = json_object_get(msg, "params");
	const char *name = json_string_value(json_object_get(params, "name"));
	const struct mcp_tool *tool = name ? mcp_tool_find(s->srv, name) : NULL;

	return json_object_get(json_object_get(params, "_meta"), "progressToken") || mcp_log_wanted(s, 0) ||
	       (tool && tool->call);
}

int mcp_tools_add_extra(struct sb_mcp_server *srv, const struct sb_mcp_tool *extra, size_t n, struct sb_error *err)
{
	if (!n)
		return 0;
	if (!(srv->extra = calloc(n, sizeof(*srv->extra))))
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	for (size_t i = 0; i < n; i++) {
		if (!extra[i].name || !extra[i].description || !extra[i].schema || !extra[i].run)
			return sb_error_set(err, SB_ERR_INVALID, _("an extra MCP tool lacks a name, description, schema or handler"));
		if (find(srv, extra[i].name))
			return sb_error_set(err, SB_ERR_EXISTS, _("the MCP tool '%s' exists already"), extra[i].name);
		srv->extra[srv->n_extra++] = (struct mcp_tool){ .name = extra[i].name, .description = extra[i].description,
								 .schema = extra[i].schema, .call = extra[i].run,
								 .flags = extra[i].flags };
	}
	return 0;
}

int mcp_tools_load_schemas(struct sb_mcp_server *srv, struct sb_error *err)
{
	const struct mcp_tool *t;
	json_error_t jerr;

	if (!(srv->schemas = json_object()))
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	for (size_t i = 0; (t = tool_at(srv, i)); i++) {
		json_t *s = json_loads(t->schema, 0, &jerr);
		/* a programming error, caught by every test that starts a server */
		if (!json_is_object(s)) {
			json_decref(s);
			return sb_error_set(err, SB_ERR_FORMAT, "schema of tool %s: %s", t->name, s ? "not an object" : jerr.text);
		}
		if (json_object_set_new(srv->schemas, t->name, s) < 0)
			return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	}
	return 0;
}

json_t *mcp_tools_list(const struct sb_mcp_server *srv)
{
	const struct mcp_tool *t;
	json_t *list = json_array();

	/* NULL rather than a list with a tool left out */
	for (size_t i = 0; list && (t = tool_at(srv, i)); i++) {
		if (!offered(srv, t))
			continue;
		if (json_array_append_new(
			list, json_pack("{s:s, s:s, s:O, s:{s:b, s:b, s:b}}", "name", t->name, "description", t->description,
					"inputSchema", json_object_get(srv->schemas, t->name), "annotations", "readOnlyHint",
					(t->flags & MCP_TOOL_READONLY) != 0, "destructiveHint",
					(t->flags & MCP_TOOL_DESTRUCTIVE) != 0, "openWorldHint", 0)) < 0) {
			json_decref(list);
			list = NULL;
		}
	}
	return list;
}

json_t *mcp_tool_error_result(const char *code, const char *message)
{
	json_t *doc = json_pack("{s:[{s:s, s:s}], s:{s:s, s:s}, s:b}", "content", "type", "text", "text", message,
				"structuredContent", "error", code, "message", message, "isError", 1);

	/* a message that is not UTF-8 (a path of the host's) still gets an answer */
	return doc || !strcmp(message, "The tool failed.") ? doc : mcp_tool_error_result(code, "The tool failed.");
}

/* A handler's outcome as a CallToolResult: the structured content and its text, or isError. */
static json_t *outcome(int rc, json_t *result, const struct sb_error *err)
{
	if (rc < 0) {
		json_decref(result);
		return mcp_tool_error_result(sb_error_name(err->code), err->msg[0] ? err->msg : _("The tool failed."));
	}
	if (!result)
		return mcp_tool_error_result("nomem", _("out of memory"));
	char *text = sb_json_dumps(result, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_t *doc = text ? json_pack("{s:[{s:s, s:s}], s:o, s:b}", "content", "type", "text", "text", text,
				       "structuredContent", result, "isError", 0)
			   : NULL;
	if (!text)
		json_decref(result);
	free(text);
	return doc ? doc : mcp_tool_error_result("nomem", _("out of memory"));
}

/* The content block types of a CallToolResult and the string members each
 * must have (2025-06-18's schema) */
static const struct {
	const char *type;
	const char *members[2];
} content_types[] = {
	{ "text", { "text" } },
	{ "image", { "data", "mimeType" } },
	{ "audio", { "data", "mimeType" } },
	{ "resource", { NULL } },
	{ "resource_link", { "uri", "name" } },
};

static int content_ok(const json_t *c)
{
	const char *type = json_string_value(json_object_get(c, "type"));

	for (size_t i = 0; type && i < sizeof(content_types) / sizeof(content_types[0]); i++) {
		if (strcmp(type, content_types[i].type))
			continue;
		for (size_t m = 0; m < 2 && content_types[i].members[m]; m++)
			if (!json_is_string(json_object_get(c, content_types[i].members[m])))
				return 0;
		/* an embedded resource: its uri and its text or blob */
		const json_t *r = json_object_get(c, "resource");
		return strcmp(type, "resource") ||
		       (json_is_string(json_object_get(r, "uri")) &&
			(json_is_string(json_object_get(r, "text")) || json_is_string(json_object_get(r, "blob"))));
	}
	return 0;
}

/* An extra tool's own CallToolResult, checked: a client gets a result the
 * protocol allows, or an error that says what was wrong. */
static json_t *checked_result(const char *name, json_t *result)
{
	const json_t *content = json_object_get(result, "content"), *c;
	const json_t *is_error = json_object_get(result, "isError"), *sc = json_object_get(result, "structuredContent");
	int ok = json_is_object(result) && json_is_array(content) && (!is_error || json_is_boolean(is_error)) &&
		 (!sc || json_is_object(sc));
	size_t i;
	char msg[256];

	json_array_foreach (content, i, c)
		ok &= content_ok(c);
	if (ok)
		return result;
	json_decref(result);
	snprintf(msg, sizeof(msg), _("The tool %s gave a result the protocol does not allow."), name);
	return mcp_tool_error_result(sb_error_name(SB_ERR_FORMAT), msg);
}

json_t *mcp_tool_call(struct sb_mcp_server *srv, const struct mcp_tool *tool, const json_t *args, int notes_fd)
{
	struct mcp_ctx ctx = { srv, srv->root };
	struct sb_mcp_call call = { notes_fd };
	struct sb_error err = { 0 };
	json_t *result = NULL;
	int rc = mcp_args_check(json_object_get(srv->schemas, tool->name), args, &err);

	if (rc == 0 && tool->call) {
		if ((rc = tool->call(&result, &call, args, &err)) == 0)
			return checked_result(tool->name, result);
	} else if (rc == 0) {
		rc = tool->run(&result, &ctx, args, &err);
	}
	return outcome(rc, result, &err);
}

json_t *mcp_tool_try_now(struct sb_mcp_server *srv, const struct mcp_tool *tool, const json_t *args)
{
	struct mcp_ctx ctx = { srv, srv->root };
	struct sb_error err = { 0 };
	json_t *result = NULL;
	int rc;

	if (!tool->try_now)
		return NULL;
	rc = mcp_args_check(json_object_get(srv->schemas, tool->name), args, &err);
	if (rc == 0 && (rc = tool->try_now(&result, &ctx, args, &err)) == 0)
		return NULL;
	return outcome(rc, result, &err);
}
