#include "config.h"

#include <stdlib.h>

#include "session/session.h"

/* The JSON forms of sessions and reads: the CLI's --json and the MCP server's results. */

json_t *sb_session_info_json(const struct sb_session_info *i)
{
	return json_pack("{s:s, s:s, s:I, s:s, s:s, s:o, s:I, s:I, s:I, s:I, s:I, s:s, s:i, s:b, s:I}", "sandbox", i->sandbox,
			 "id", i->id, "pid", (json_int_t)i->pid, "state",
			 i->state == SB_SESSION_RUNNING ? "running" : "exited", "reason", i->reason ? i->reason : "",
			 "exit_code", i->exit_code >= 0 ? json_integer(i->exit_code) : json_null(), "offset",
			 (json_int_t)i->offset, "first", (json_int_t)i->first, "created_at", (json_int_t)i->created_at,
			 "last_input", (json_int_t)i->last_input, "last_output", (json_int_t)i->last_output, "controller",
			 i->controller, "watchers", i->watchers, "reused", i->reused, "lost",
			 (json_int_t)i->lost);
}

json_t *sb_session_read_json(const struct sb_session_read_result *r, const char *text, size_t len)
{
	char *valid = sb_session_text_utf8(text, len, &len);
	json_t *doc = json_pack("{s:I, s:I, s:I, s:s%, s:s, s:o, s:o, s:b, s:I, s:s}", "since", (json_int_t)r->since,
				"offset", (json_int_t)r->offset, "dropped", (json_int_t)r->dropped, "output",
				valid ? valid : "", valid ? len : 0, "state",
				r->state == SB_SESSION_EXITED ? "exited" : r->idle ? "idle" : "running", "exit_code",
				r->exit_code >= 0 ? json_integer(r->exit_code) : json_null(), "prompt",
				r->prompt ? json_string(r->prompt) : json_null(), "dialog", r->dialog, "idle_ms",
				(json_int_t)r->idle_ms, "reason", sb_session_reason_name(r->reason));

	free(valid);
	return valid ? doc : (json_decref(doc), NULL);
}
