#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "base/clock.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "base/log.h"
#include "base/proc.h"
#include "sandbox/sandbox.h"

/* A long call runs in a forked worker that writes its CallToolResult down a
 * pipe and exits: the server's one loop keeps answering pings, other calls
 * and cancellations meanwhile. What a cancel does depends on the tool
 * (MCP_TOOL_INTERRUPTIBLE in internal.h): an exec's worker gets SIGTERM,
 * which interrupts the library's running program (sb_proc_interrupt), and its
 * command is killed inside the sandbox too. */

static void on_term(int sig)
{
	(void)sig;
	sb_proc_interrupt(1);
}

static void worker_main(struct sb_mcp_server *srv, int fd, int log_fd, const struct mcp_tool *tool, const json_t *args)
{
	struct sigaction sa = { .sa_handler = on_term };
	FILE *log = log_fd >= 0 ? fdopen(log_fd, "w") : NULL;

	/* line by line: each line becomes a notification as it comes */
	if (log) {
		setvbuf(log, NULL, _IOLBF, 0);
		sb_log_set(log);
	}

	/* no SA_RESTART: the library's waits see EINTR and the flag */
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* runsc's orphans of this call are reaped here, not left to the server */
	sb_sandbox_process_init(NULL);
	json_t *result = mcp_tool_call(srv, tool, args);
	char *text = result ? json_dumps(result, JSON_COMPACT) : NULL;
	if (text)
		sb_fs_write_all(fd, text, strlen(text));
	_exit(text ? 0 : 1);
}

int mcp_call_start(struct mcp_session *s, void *origin, const json_t *id, const json_t *progress_token,
		   const struct mcp_tool *tool, const json_t *args)
{
	struct mcp_call *c;
	int p[2], n = 0;

	for (c = s->srv->calls; c; c = c->next)
		n++;
	if (n >= MCP_MAX_CALLS)
		return SB_ERR_LIMIT;
	int lp[2] = { -1, -1 };
	if (!(c = calloc(1, sizeof(*c))) || pipe2(p, O_CLOEXEC) < 0) {
		free(c);
		return SB_ERR_IO;
	}
	if (s->log_debug && pipe2(lp, O_CLOEXEC) < 0)
		lp[0] = lp[1] = -1;
	pid_t pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		if (lp[0] >= 0) {
			close(lp[0]);
			close(lp[1]);
		}
		free(c);
		return SB_ERR_IO;
	}
	if (pid == 0) {
		close(p[0]);
		if (lp[0] >= 0)
			close(lp[0]);
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		for (int i = 0; i < 2 && null >= 0; i++)
			if (s->worker_null[i] >= 0)
				dup2(null, s->worker_null[i]);
		if (null >= 0)
			close(null);
		worker_main(s->srv, p[1], lp[1], tool, args);
	}
	sb_proc_keep(pid, 1);
	close(p[1]);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	if (lp[0] >= 0) {
		close(lp[1]);
		fcntl(lp[0], F_SETFL, O_NONBLOCK);
	}
	*c = (struct mcp_call){
		.next = s->srv->calls, .sess = s, .origin = origin, .id = json_deep_copy(id),
		.progress_token = progress_token ? json_deep_copy(progress_token) : NULL, .pid = pid, .fd = p[0],
		.log_fd = lp[0], .flags = tool->flags, .next_progress = sb_clock_monotonic_ms() + MCP_PROGRESS_MS,
	};
	s->srv->calls = c;
	return 0;
}

static void call_free(struct mcp_call *c)
{
	close(c->fd);
	if (c->log_fd >= 0)
		close(c->log_fd);
	sb_buf_clear(&c->log);
	/* EOF: the worker is exiting */
	while (waitpid(c->pid, NULL, 0) < 0 && errno == EINTR)
		;
	sb_proc_keep(c->pid, 0);
	json_decref(c->id);
	json_decref(c->progress_token);
	sb_buf_clear(&c->out);
	free(c);
}

static void unlink_call(struct sb_mcp_server *srv, struct mcp_call *c)
{
	for (struct mcp_call **p = &srv->calls; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			return;
		}
}

/* The worker's log lines, each a notifications/message (debug) of its
 * session, related to its request (HTTP: on its stream). */
static void forward_log(struct mcp_call *c)
{
	char buf[16384], *nl;
	ssize_t n;

	if (c->log_fd < 0)
		return;
	while ((n = read(c->log_fd, buf, sizeof(buf))) > 0)
		if (c->log.len < MCP_RESULT_MAX)
			sb_buf_add(&c->log, buf, (size_t)n);
	size_t used = 0;
	while (c->log.len > used && (nl = memchr(c->log.data + used, '\n', c->log.len - used))) {
		size_t len = (size_t)(nl - (c->log.data + used));
		json_t *line = json_stringn(c->log.data + used, len);
		if (line && c->sess)
			c->sess->emit(c->sess, c->origin,
				      json_pack("{s:s, s:s, s:{s:s, s:s, s:o}}", "jsonrpc", "2.0", "method",
						"notifications/message", "params", "level", "debug", "logger", "sandbench",
						"data", line));
		else
			json_decref(line);
		used += len + 1;
	}
	memmove(c->log.data, c->log.data + used, c->log.len - used);
	c->log.len -= used;
}

/* The worker's result, or an error result when it died without one; a
 * cancelled call is answered by nobody (the spec's rule). */
static void finish(struct sb_mcp_server *srv, struct mcp_call *c)
{
	forward_log(c);
	unlink_call(srv, c);
	if (!c->cancelled) {
		json_t *result = c->out.len ? json_loadb(c->out.data, c->out.len, 0, NULL) : NULL;
		if (!result)
			result = mcp_tool_error_result("io", _("The call's worker ended without a result."));
		c->sess->emit(c->sess, c->origin, mcp_result_msg(c->id, result));
	}
	call_free(c);
}

/* The worker is told to end; its pipe's EOF then frees the call. The
 * transport hears that no answer comes (emit with NULL). */
static void cancel(struct mcp_call *c)
{
	if (c->cancelled)
		return;
	c->sess->emit(c->sess, c->origin, NULL);
	if (c->flags & MCP_TOOL_INTERRUPTIBLE)
		kill(c->pid, SIGTERM);
	else if (c->flags & MCP_TOOL_READONLY)
		kill(c->pid, SIGKILL);
	c->cancelled = sb_clock_monotonic_ms();
	c->sess = NULL;
	c->origin = NULL;
}

void mcp_call_cancel(struct mcp_session *s, const json_t *id)
{
	for (struct mcp_call *c = s->srv->calls; c; c = c->next)
		if (c->sess == s && json_equal(c->id, (json_t *)id))
			cancel(c);
}

void mcp_calls_cancel_origin(struct sb_mcp_server *srv, const void *origin)
{
	for (struct mcp_call *c = srv->calls; c; c = c->next)
		if (c->origin == origin)
			cancel(c);
}

void mcp_calls_drop(struct mcp_session *s)
{
	for (struct mcp_call *c = s->srv->calls; c; c = c->next)
		if (c->sess == s)
			cancel(c);
}

int mcp_calls_pollfds(const struct sb_mcp_server *srv, struct pollfd *pfd, int max)
{
	int n = 0;

	for (const struct mcp_call *c = srv->calls; c && n < max; c = c->next) {
		pfd[n++] = (struct pollfd){ .fd = c->fd, .events = POLLIN };
		if (c->log_fd >= 0 && n < max)
			pfd[n++] = (struct pollfd){ .fd = c->log_fd, .events = POLLIN };
	}
	return n;
}

static void progress(struct mcp_call *c, long long now)
{
	/* an interrupted worker that does not end within the grace is killed */
	if (c->cancelled && (c->flags & MCP_TOOL_INTERRUPTIBLE) && now - c->cancelled > MCP_CANCEL_GRACE_MS && !c->killed) {
		kill(c->pid, SIGKILL);
		c->killed = 1;
	}
	if (c->cancelled || !c->progress_token || now < c->next_progress)
		return;
	c->next_progress = now + MCP_PROGRESS_MS;
	c->progress++;
	c->sess->emit(c->sess, c->origin,
		      json_pack("{s:s, s:s, s:{s:O, s:i, s:s}}", "jsonrpc", "2.0", "method", "notifications/progress",
				"params", "progressToken", c->progress_token, "progress", c->progress, "message",
				"running"));
}

void mcp_calls_service(struct sb_mcp_server *srv)
{
	long long now = sb_clock_monotonic_ms();
	struct mcp_call *c = srv->calls, *next;
	char buf[65536];

	for (; c; c = next) {
		next = c->next;
		forward_log(c);
		ssize_t n;
		while ((n = read(c->fd, buf, sizeof(buf))) > 0)
			if (c->out.len + (size_t)n > MCP_RESULT_MAX || sb_buf_add(&c->out, buf, (size_t)n) < 0) {
				sb_buf_clear(&c->out);
				n = 0;
				break;
			}
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			finish(srv, c);
		else
			progress(c, now);
	}
}

int mcp_calls_timeout(const struct sb_mcp_server *srv)
{
	long long now = sb_clock_monotonic_ms(), best = -1;

	for (const struct mcp_call *c = srv->calls; c; c = c->next) {
		int grace = c->cancelled && (c->flags & MCP_TOOL_INTERRUPTIBLE) && !c->killed;
		long long due = grace ? c->cancelled + MCP_CANCEL_GRACE_MS : c->next_progress;
		if (((c->progress_token && !c->cancelled) || grace) && (best < 0 || due - now < best))
			best = due - now > 0 ? due - now : 0;
	}
	return (int)best;
}

void mcp_calls_wait(struct sb_mcp_server *srv)
{
	while (srv->calls) {
		struct pollfd pfd[MCP_MAX_POLLFDS];
		int n = mcp_calls_pollfds(srv, pfd, MCP_MAX_POLLFDS);
		poll(pfd, (nfds_t)n, mcp_calls_timeout(srv));
		mcp_calls_service(srv);
	}
}
