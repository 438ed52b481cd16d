#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "base/jsonfile.h"
#include "base/proc.h"

/* The stdio transport: one JSON-RPC message per line each way. A line over
 * the limit is answered with a parse error and skipped to its end. */
#define LINE_MAX_BYTES (4u << 20)

struct stdio_transport {
	int out_fd;
	int broken;                      /* the client stopped reading: nothing more is written */
};

static void emit(struct mcp_session *s, void *origin, json_t *msg)
{
	struct stdio_transport *t = s->transport;
	char *text = msg ? sb_json_dumps(msg, JSON_COMPACT) : NULL;

	(void)origin;
	json_decref(msg);
	if (!text)
		return;
	size_t n = strlen(text);
	text[n] = '\n';
	/* the line and its newline in one write where it fits */
	if (!t->broken && sb_fs_write_all(t->out_fd, text, n + 1) < 0)
		t->broken = 1;
	free(text);
}

/* Takes the complete lines of buf; returns how many bytes it used. */
static size_t take_lines(struct mcp_session *s, char *buf, size_t len, int *skipping)
{
	size_t used = 0;
	char *nl;

	while ((nl = memchr(buf + used, '\n', len - used))) {
		size_t n = (size_t)(nl - (buf + used));
		if (!*skipping && n > 0 && !(n == 1 && buf[used] == '\r'))
			mcp_handle_text(s, NULL, buf + used, n);
		*skipping = 0;
		used += n + 1;
	}
	return used;
}

static int serve_loop(struct mcp_session *s, int in_fd, volatile int *stop, struct sb_error *err)
{
	struct sb_mcp_server *srv = s->srv;
	struct stdio_transport *t = s->transport;
	size_t cap = 65536, len = 0;
	char *buf = malloc(cap);
	int skipping = 0, eof = 0;

	if (!buf)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	while (!eof && !t->broken && !(stop && *stop)) {
		struct pollfd pfd[1 + MCP_MAX_POLLFDS] = { { .fd = in_fd, .events = POLLIN } };
		int n = 1 + mcp_calls_pollfds(srv, pfd + 1, 2 * MCP_MAX_CALLS);
		n += mcp_subs_pollfds(srv, pfd + n, MCP_MAX_SUBS);
		int ready = poll(pfd, (nfds_t)n, mcp_calls_timeout(srv));
		if (ready < 0 && errno != EINTR)
			break;
		sb_proc_reap_orphans();
		mcp_calls_service(srv);
		mcp_calls_idle(srv);
		mcp_subs_service(srv);
		if (!(pfd[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		if (len == cap && cap < LINE_MAX_BYTES) {
			char *bigger = realloc(buf, cap * 2);
			if (!bigger)
				break;
			buf = bigger;
			cap *= 2;
		}
		if (len == cap) {
			/* a line over the limit: refused whole */
			emit(s, NULL, mcp_error_msg(NULL, MCP_PARSE_ERROR, "Message too large"));
			skipping = 1;
			len = 0;
		}
		ssize_t got = read(in_fd, buf + len, cap - len);
		if (got <= 0) {
			eof = got == 0 || (errno != EINTR && errno != EAGAIN);
			continue;
		}
		len += (size_t)got;
		size_t used = take_lines(s, buf, len, &skipping);
		memmove(buf, buf + used, len - used);
		len -= used;
	}
	free(buf);
	return 0;
}

int sb_mcp_serve_stdio(struct sb_mcp_server *srv, int in_fd, int out_fd, volatile int *stop, struct sb_error *err)
{
	struct stdio_transport t = { .out_fd = out_fd };
	struct mcp_session s = { .srv = srv, .emit = emit, .transport = &t, .notify = 1 };
	/* no worker holds the client's pipes (one that runs on would keep them open) */
	mcp_spawner_start(srv, (int[2]){ in_fd, out_fd });
	int rc = serve_loop(&s, in_fd, stop, err);

	/* the client is gone: its calls end with it */
	mcp_calls_drop(&s);
	mcp_resource_unsubscribe(&s, NULL);
	mcp_calls_wait(srv);
	mcp_spawner_stop(srv);
	return rc;
}
