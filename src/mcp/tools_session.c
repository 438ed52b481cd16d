#include "config.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "base/i18n.h"
#include "session/session.h"

#define NAME(args) mcp_arg_str(args, "name", "")
#define SESSION(args) mcp_arg_str(args, "session", "")

int mcp_tool_session_start(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err)
{
	struct sb_session_opts o = { .reuse = mcp_arg_bool(args, "reuse", 0), .cwd = mcp_arg_str(args, "cwd", NULL) };
	struct sb_session_info info;
	int rc;

	if ((rc = sb_session_start(&info, ctx->root, NAME(args), mcp_arg_str(args, "session", NULL), &o, err)) < 0)
		return rc;
	*result = sb_session_info_json(&info);
	sb_session_info_clear(&info);
	return 0;
}

int mcp_tool_session_send(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err)
{
	const char *text = mcp_arg_str(args, "text", NULL), *ctrl = mcp_arg_str(args, "ctrl", NULL);
	unsigned long long off = 0;
	struct sb_session *s;
	int rc;

	if (!text == !ctrl)
		return sb_error_set(err, SB_ERR_INVALID, _("Give either text or ctrl."));
	if ((rc = sb_session_connect(&s, ctx->root, NAME(args), SESSION(args), err)) < 0)
		return rc;
	if (ctrl) {
		rc = sb_session_ctrl(s, &off, ctrl[0], SB_SOURCE_AGENT, err);
	} else {
		size_t n = strlen(text);
		int nl = mcp_arg_bool(args, "newline", 1);
		char *line = malloc(n + 2);
		if (!line) {
			rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		} else {
			memcpy(line, text, n); /* NOLINT(bugprone-not-null-terminated-result): sent with its length */
			line[n] = '\n';
			rc = sb_session_send(s, &off, line, n + (nl ? 1 : 0), SB_SOURCE_AGENT, err);
			free(line);
		}
	}
	sb_session_close(s);
	if (rc == 0)
		*result = json_pack("{s:I, s:b}", "offset", (json_int_t)off, "accepted", 1);
	return rc;
}

static int seconds_ms(const json_t *args, const char *key)
{
	return (int)(mcp_arg_num(args, key, 0) * 1000);
}

/* The read with the given waits; now: none (what there is at once). final:
 * whether that is what the read with its waits would return too. */
static int read_session(json_t **result, int *final, const struct mcp_ctx *ctx, const json_t *args, int now,
			struct sb_error *err)
{
	struct sb_session_read_opts o = {
		.since = mcp_arg_int(args, "since", -1), .wait_idle_ms = now ? 0 : seconds_ms(args, "wait_idle"),
		.first_timeout_ms = now ? 0 : seconds_ms(args, "first_timeout"), .max_wait_ms = now ? 0 : seconds_ms(args, "max_wait"),
	};
	struct sb_session_read_result r;
	size_t len;
	int rc;

	if ((rc = sb_session_read(&r, ctx->root, NAME(args), SESSION(args), &o, err)) < 0)
		return rc;
	/* the prompt and the end stop every read before any wait is looked at */
	*final = !now || r.reason == SB_READ_PROMPT || r.reason == SB_READ_EXITED ||
		 (!seconds_ms(args, "wait_idle") && !seconds_ms(args, "first_timeout") && !seconds_ms(args, "max_wait"));
	if (!*final) {
		sb_session_read_result_clear(&r);
		return 0;
	}
	/* clean by default: a model reads text, not escape sequences */
	char *text = strcmp(mcp_arg_str(args, "format", "clean"), "raw") ? sb_session_text_clean(r.output, r.len, &len)
									  : sb_session_text_utf8(r.output, r.len, &len);
	*result = text ? sb_session_read_json(&r, text, len) : NULL;
	free(text);
	sb_session_read_result_clear(&r);
	return 0;
}

int mcp_tool_session_read(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err)
{
	int final;

	return read_session(result, &final, ctx, args, 0, err);
}

/* at the prompt already (the common case after a short command): no worker */
int mcp_tool_session_read_now(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err)
{
	int final, rc = read_session(result, &final, ctx, args, 1, err);

	return rc < 0 ? rc : final;
}

int mcp_tool_session_kill(json_t **result, const struct mcp_ctx *ctx, const json_t *args, struct sb_error *err)
{
	static const struct {
		const char *name;
		int sig;
	} sigs[] = { { "TERM", SIGTERM }, { "KILL", SIGKILL }, { "INT", SIGINT } };
	const char *name = mcp_arg_str(args, "signal", "TERM");
	int sig = SIGTERM, rc;

	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (!strcmp(name, sigs[i].name))
			sig = sigs[i].sig;
	if ((rc = sb_session_kill(ctx->root, NAME(args), SESSION(args), sig, err)) < 0)
		return rc;
	*result = json_pack("{s:s, s:s, s:s}", "name", NAME(args), "session", SESSION(args), "signal", name);
	return 0;
}
