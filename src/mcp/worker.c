#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "base/clock.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "base/jsonfile.h"
#include "base/log.h"
#include "base/proc.h"
#include "sandbox/sandbox.h"

/* A long call runs in a forked worker that writes its CallToolResult down a
 * pipe and exits: the server's one loop keeps answering pings, other calls
 * and cancellations meanwhile. What a cancel does depends on the tool
 * (MCP_TOOL_INTERRUPTIBLE in internal.h): an exec's worker gets SIGTERM,
 * which interrupts the library's running program (sb_proc_interrupt), and its
 * command is killed inside the sandbox too.
 *
 * The worker is forked before the call comes (the spare), by the spawner
 * (spawner.c), not by the server: a call writes its tool and arguments down
 * the spare's request pipe, and the next spare is forked once the server has
 * nothing in hand. A worker still serves one call only, so a crash or a
 * cancel costs that call alone. */

/* the request a spare reads, {"tool": NAME, "args": {...}, "log": BOOL}: more
 * than any message a transport takes (a stdio line: 4 MiB) */
#define REQUEST_MAX MCP_RESULT_MAX

static void on_term(int sig)
{
	(void)sig;
	sb_proc_interrupt(1);
}

/* A forked process maps its parent's program text page by page as it first
 * runs it, and copies heap and stack pages as it first writes them. A spare
 * does that while it waits (about 2 ms), not on its call's path: measured,
 * an exec call took 70-85 page faults, and takes 25-35 (new pages) after.
 * A request that comes meanwhile stops it: it is not kept waiting. */
static void prefault(int req_fd)
{
	struct pollfd pfd = { .fd = req_fd, .events = POLLIN };
	FILE *maps = fopen("/proc/self/maps", "re");
	char line[PATH_MAX + 128];

	while (maps && fgets(line, sizeof(line), maps) && poll(&pfd, 1, 0) == 0) {
		unsigned long lo, hi;
		char perm[5];
		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perm) != 3)
			continue;
		/* on kernels before 5.14 these fail (EINVAL) and nothing changes */
		if (perm[0] == 'r' && perm[2] == 'x')
			madvise((void *)lo, hi - lo, MADV_POPULATE_READ);
		else if (strstr(line, "[heap]") || strstr(line, "[stack]"))
			madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
	}
	if (maps)
		(void)fclose(maps);
}

static json_t *read_request(int fd)
{
	struct sb_buf in = { 0 };
	char buf[65536];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || in.len + (size_t)n > REQUEST_MAX || sb_buf_add(&in, buf, (size_t)n) < 0)
			break;
	}
	json_t *req = n == 0 && in.len ? json_loadb(in.data, in.len, 0, NULL) : NULL;
	sb_buf_clear(&in);
	close(fd);
	return req;
}

void mcp_worker_main(struct sb_mcp_server *srv, int req_fd, int fd, int log_fd)
{
	struct sigaction sa = { .sa_handler = on_term };

	/* no SA_RESTART: the library's waits see EINTR and the flag */
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* runsc's orphans of this call are reaped here, not left to the server */
	sb_sandbox_process_init(NULL);
	prefault(req_fd);
	json_t *req = read_request(req_fd);
	const struct mcp_tool *tool = mcp_tool_find(srv, mcp_arg_str(req, "tool", ""));
	if (!tool)
		_exit(0);
	FILE *log = json_is_true(json_object_get(req, "log")) ? fdopen(log_fd, "w") : NULL;
	/* line by line: each line becomes a notification as it comes */
	if (log) {
		setvbuf(log, NULL, _IOLBF, 0);
		sb_log_set(log);
	} else {
		close(log_fd);
	}
	json_t *result = mcp_tool_call(srv, tool, json_object_get(req, "args"), fd);
	char *text = result ? sb_json_dumps(result, JSON_COMPACT) : NULL;
	if (text)
		sb_fs_write_all(fd, text, strlen(text));
	close(fd);
	if (log)
		(void)fclose(log); /* the log is the channel a failure would go to */
	/* the answer is out: this process's teardown waits for an idle CPU, so
	 * that the server and its client have theirs first */
	sched_setscheduler(0, SCHED_IDLE, &(struct sched_param){ 0 });
	_exit(text ? 0 : 1);
}

static void close_pair(int p[2])
{
	for (int i = 0; i < 2; i++)
		if (p[i] >= 0)
			close(p[i]);
}

/* Has the spawner fork the spare; a spawner that is gone is started again, once. */
static int spare_fork(struct sb_mcp_server *srv)
{
	int pidfd = -2;

	for (int tries = 0; tries < 2 && pidfd == -2; tries++) {
		int rq[2] = { -1, -1 }, res[2] = { -1, -1 }, lp[2] = { -1, -1 };
		if (mcp_spawner_ready(srv) < 0)
			return SB_ERR_IO;
		if (pipe2(rq, O_CLOEXEC) == 0 && pipe2(res, O_CLOEXEC) == 0 && pipe2(lp, O_CLOEXEC) == 0)
			pidfd = mcp_spawn(srv, (int[3]){ rq[0], res[1], lp[1] });
		else
			pidfd = -1;
		close_pair((int[2]){ rq[0], res[1] });
		close_pair((int[2]){ lp[1], -1 });
		if (pidfd >= 0) {
			srv->spare = (struct mcp_spare){ .pidfd = pidfd, .req_fd = rq[1], .res_fd = res[0], .log_fd = lp[0] };
			return 0;
		}
		close_pair((int[2]){ rq[1], res[0] });
		close_pair((int[2]){ lp[0], -1 });
	}
	return SB_ERR_IO;
}

/* Waits for a worker's end (its pidfd readable); block 0: only looks. 1 when it has ended. */
static int worker_ended(int pidfd, int block)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };
	int n;

	while ((n = poll(&p, 1, block ? -1 : 0)) < 0 && errno == EINTR)
		;
	return n != 0;
}

void mcp_spare_end(struct sb_mcp_server *srv)
{
	struct mcp_spare *sp = &srv->spare;

	if (sp->pidfd < 0)
		return;
	/* the request pipe's end without a request: the spare exits */
	close(sp->req_fd);
	close(sp->res_fd);
	close(sp->log_fd);
	worker_ended(sp->pidfd, 1);
	close(sp->pidfd);
	sp->pidfd = -1;
}

int mcp_call_start(struct mcp_session *s, void *origin, const json_t *id, const json_t *progress_token,
		   const struct mcp_tool *tool, const json_t *args)
{
	struct sb_mcp_server *srv = s->srv;
	struct mcp_call *c;
	int n = 0;

	for (c = srv->calls; c; c = c->next)
		n++;
	if (n >= MCP_MAX_CALLS)
		return SB_ERR_LIMIT;
	json_t *req = json_pack("{s:s, s:O, s:b}", "tool", tool->name, "args", args, "log", mcp_log_wanted(s, 0));
	char *text = req ? sb_json_dumps(req, JSON_COMPACT) : NULL;
	json_decref(req);
	if (!text || !(c = calloc(1, sizeof(*c))) || (srv->spare.pidfd < 0 && spare_fork(srv) < 0)) {
		free(text);
		free(c);
		return SB_ERR_IO;
	}
	struct mcp_spare sp = srv->spare;
	srv->spare.pidfd = -1;
	/* a spare that died before its call: the result pipe's end says so ("no result") */
	sb_fs_write_all(sp.req_fd, text, strlen(text));
	free(text);
	close(sp.req_fd);
	fcntl(sp.res_fd, F_SETFL, O_NONBLOCK);
	if (!mcp_log_wanted(s, 0)) {
		close(sp.log_fd);
		sp.log_fd = -1;
	} else {
		fcntl(sp.log_fd, F_SETFL, O_NONBLOCK);
	}
	*c = (struct mcp_call){
		.next = srv->calls, .sess = s, .origin = origin, .id = json_deep_copy(id),
		.progress_token = progress_token ? json_deep_copy(progress_token) : NULL, .pidfd = sp.pidfd, .fd = sp.res_fd,
		.log_fd = sp.log_fd, .flags = tool->flags, .tool = tool->name, .next_progress = sb_clock_monotonic_ms() + MCP_PROGRESS_MS,
	};
	srv->calls = c;
	/* the next call's worker, once the loop is idle (mcp_calls_idle) */
	srv->spare_wanted = 1;
	return 0;
}

void mcp_calls_idle(struct sb_mcp_server *srv)
{
	if (srv->calls)
		return;
	/* one try: a fork that fails is tried again by the next call itself */
	if (srv->spare_wanted && srv->spare.pidfd < 0)
		spare_fork(srv);
	srv->spare_wanted = 0;
}

/* Forgets the workers that answered and have ended since; block: waits for them all. */
static void drop_ended(struct sb_mcp_server *srv, int block)
{
	size_t kept = 0;

	for (size_t i = 0; i < srv->n_exiting; i++) {
		if (worker_ended(srv->exiting[i], block))
			close(srv->exiting[i]);
		else
			srv->exiting[kept++] = srv->exiting[i];
	}
	srv->n_exiting = kept;
}

static void call_free(struct sb_mcp_server *srv, struct mcp_call *c)
{
	close(c->fd);
	if (c->log_fd >= 0)
		close(c->log_fd);
	sb_buf_clear(&c->log);
	/* EOF: the worker is exiting. Not waited for here: its teardown would
	 * hold up the next request; the loop reaps it (reap_exited). */
	if (srv->n_exiting == MCP_MAX_CALLS)
		drop_ended(srv, 1);
	srv->exiting[srv->n_exiting++] = c->pidfd;
	drop_ended(srv, 0);
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
	sb_buf_drop(&c->log, used);
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
	call_free(srv, c);
}

static void signal_worker(const struct mcp_call *c, int sig)
{
	syscall(SYS_pidfd_send_signal, c->pidfd, sig, NULL, 0);
}

/* The worker is told to end; its pipe's EOF then frees the call. The
 * transport hears that no answer comes (emit with NULL). */
static void cancel(struct mcp_call *c)
{
	if (c->cancelled)
		return;
	c->sess->emit(c->sess, c->origin, NULL);
	if (c->flags & MCP_TOOL_INTERRUPTIBLE)
		signal_worker(c, SIGTERM);
	else if (c->flags & MCP_TOOL_READONLY)
		signal_worker(c, SIGKILL);
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

/* A note of the worker's tool (sb_mcp_call_progress, sb_mcp_call_log): a
 * notification of its request, when the client wants it. */
static void note(struct mcp_call *c, const json_t *n)
{
	const json_t *p = json_object_get(n, "progress");
	int level = mcp_log_level(json_string_value(json_object_get(n, "level")));
	json_t *params = NULL;
	const char *method = NULL;

	if (c->cancelled || !c->sess)
		return;
	if (json_is_number(p) && c->progress_token && (!c->sent_progress || json_number_value(p) > c->last_progress)) {
		c->own_progress = c->sent_progress = 1;
		c->last_progress = json_number_value(p);
		params = json_pack("{s:O, s:O}", "progressToken", c->progress_token, "progress", p);
		if (params && json_is_number(json_object_get(n, "total")))
			json_object_set(params, "total", json_object_get(n, "total"));
		method = "notifications/progress";
	} else if (level >= 0 && mcp_log_wanted(c->sess, level)) {
		params = json_pack("{s:O, s:s, s:O}", "level", json_object_get(n, "level"), "logger", c->tool, "data",
				   json_object_get(n, "data"));
		method = "notifications/message";
	}
	if (params)
		c->sess->emit(c->sess, c->origin, json_pack("{s:s, s:s, s:o}", "jsonrpc", "2.0", "method", method, "params", params));
}

/* The notes in what the worker wrote so far: every whole line (the result,
 * last, has no newline). */
static void notes(struct mcp_call *c)
{
	size_t used = 0;
	char *nl;

	while (c->out.len > used && (nl = memchr(c->out.data + used, '\n', c->out.len - used))) {
		size_t len = (size_t)(nl - (c->out.data + used));
		json_t *n = json_loadb(c->out.data + used, len, 0, NULL);
		note(c, n);
		json_decref(n);
		used += len + 1;
	}
	sb_buf_drop(&c->out, used);
}

static void progress(struct mcp_call *c, long long now)
{
	/* an interrupted worker that does not end within the grace is killed */
	if (c->cancelled && (c->flags & MCP_TOOL_INTERRUPTIBLE) && now - c->cancelled > MCP_CANCEL_GRACE_MS && !c->killed) {
		signal_worker(c, SIGKILL);
		c->killed = 1;
	}
	if (c->cancelled || !c->progress_token || c->own_progress || now < c->next_progress)
		return;
	c->next_progress = now + MCP_PROGRESS_MS;
	c->progress++;
	c->sent_progress = 1;
	c->last_progress = c->progress;
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

	drop_ended(srv, 0);
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
		/* the pipe's state before the notes' notifications touch errno */
		int ended = n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR);
		notes(c);
		if (ended)
			finish(srv, c);
		else
			progress(c, now);
	}
}

/* A note down the worker's result pipe, one line of compact JSON (which has
 * no newline of its own) */
static int write_note(struct sb_mcp_call *call, json_t *n, struct sb_error *err)
{
	char *text = n ? sb_json_dumps(n, JSON_COMPACT) : NULL;
	int rc = 0;

	json_decref(n);
	if (!call || call->fd < 0)
		rc = sb_error_set(err, SB_ERR_STATE, _("only a tool that runs in a worker sends notifications"));
	else if (!text)
		rc = sb_error_set(err, SB_ERR_INVALID, _("cannot encode the notification (a text that is not UTF-8, a number that is not finite?)"));
	else if (sb_fs_write_all(call->fd, text, strlen(text)) < 0 || sb_fs_write_all(call->fd, "\n", 1) < 0)
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot send a notification"));
	free(text);
	return rc;
}

int sb_mcp_call_progress(struct sb_mcp_call *call, double progress, double total, struct sb_error *err)
{
	json_t *n = json_pack("{s:f}", "progress", progress);

	if (n && total > 0)
		json_object_set_new(n, "total", json_real(total));
	return write_note(call, n, err);
}

int sb_mcp_call_log(struct sb_mcp_call *call, const char *level, const char *text, struct sb_error *err)
{
	if (mcp_log_level(level) < 0)
		return sb_error_set(err, SB_ERR_INVALID, _("'%s' is not a log level"), level ? level : "");
	return write_note(call, json_pack("{s:s, s:s}", "level", level, "data", text), err);
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
	mcp_spare_end(srv);
	while (srv->calls) {
		struct pollfd pfd[MCP_MAX_POLLFDS];
		int n = mcp_calls_pollfds(srv, pfd, MCP_MAX_POLLFDS);
		poll(pfd, (nfds_t)n, mcp_calls_timeout(srv));
		mcp_calls_service(srv);
	}
	drop_ended(srv, 1);
}
