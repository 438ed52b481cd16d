/* bench-mcp's driver: on one sandbox, the round trips of `sandbox_exec
 * [true]` and of `session_send true` + `session_read` (until the prompt)
 * through `sandbench mcp` over stdio and over Streamable HTTP, against the
 * same library calls in this process (sb_sandbox_exec; sb_session_send +
 * sb_session_read). Prints medians, p90, the ratio and what the protocol
 * layer adds at the median. Usage: mcp-bench SANDBENCH ROOT IMAGE N [back-to-back] */
#include "config.h"

#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/curl_dl.h"
#include "base/fs.h"
#include "base/proc.h"
#include "sandbox/sandbox.h"
#include "session/session.h"

#define BOX "mcpbench"

static const char *bin, *root_dir;
static struct sb_root *root;
static int n_runs;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void die(const char *what, const char *msg)
{
	fprintf(stderr, "mcp-bench: %s: %s\n", what, msg ? msg : "");
	exit(1);
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(double *v, double p)
{
	qsort(v, (size_t)n_runs, sizeof(*v), cmp_d);
	return v[(int)(p * (n_runs - 1) + 0.5)];
}

static void report(const char *what, double *v, double base)
{
	double p50 = pct(v, 0.5), p90 = pct(v, 0.9);

	printf("%-38s p50 %8.3f ms  p90 %8.3f ms", what, p50, p90);
	if (base > 0)
		printf("  x%.3f  +%.3f ms", p50 / base, p50 - base);
	printf("\n");
}

/* ---- in process: one round trip each ---- */

static double lib_exec(void)
{
	char *argv[] = { "true", NULL };
	struct sb_exec_opts o = { .argv = argv, .stdin_fd = -1, .stdout_fd = -1, .stderr_fd = -1, .timeout_ms = 600000 };
	struct sb_exec_result r;
	struct sb_error err;
	double t0 = now_ms();

	if (sb_sandbox_exec(&r, root, BOX, &o, &err) < 0)
		die("exec", err.msg);
	double t = now_ms() - t0;
	sb_exec_result_clear(&r);
	return t;
}

static double lib_session(const char *id)
{
	struct sb_session_read_opts o = { .max_wait_ms = 30000 };
	struct sb_session_read_result r;
	struct sb_session *s;
	struct sb_error err;
	unsigned long long off;
	double t0 = now_ms();

	if (sb_session_connect(&s, root, BOX, id, &err) < 0 || sb_session_send(s, &off, "true\n", 5, SB_SOURCE_AGENT, &err) < 0)
		die("send", err.msg);
	sb_session_close(s);
	o.since = (long long)off;
	if (sb_session_read(&r, root, BOX, id, &o, &err) < 0 || r.reason != SB_READ_PROMPT)
		die("read", err.msg);
	double t = now_ms() - t0;
	sb_session_read_result_clear(&r);
	return t;
}

/* ---- between samples ---- */

static pid_t servers[2];

/* 1 while PID or one of its children is on a CPU (or in the kernel's
 * uninterruptible sleep): a server forking its next worker after an answer */
static int busy(pid_t pid, int depth)
{
	char path[64], stat[512], *p;
	FILE *f;
	long child;
	int is_busy = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "re"))) {
		p = fgets(stat, sizeof(stat), f) ? strrchr(stat, ')') : NULL;
		fclose(f);
		if (p && (p[2] == 'R' || p[2] == 'D'))
			return 1;
	}
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
	if (depth > 0 && (f = fopen(path, "re"))) {
		while (!is_busy && fscanf(f, "%ld", &child) == 1)
			is_busy = busy((pid_t)child, depth - 1);
		fclose(f);
	}
	return is_busy;
}

/* Each sample starts once the work the last one left behind is done (at
 * most 500 ms): it is timed alone, as calls an agent makes between its
 * model's turns are; "back-to-back" leaves this out. */
static int settle_samples = 1;

static void settle(void)
{
	double deadline = now_ms() + 500;

	while (settle_samples && now_ms() < deadline && (busy(servers[0], 2) || busy(servers[1], 2)))
		usleep(100);
}

/* ---- MCP clients: one request, its answer's result ---- */

struct client {
	json_t *(*call)(struct client *c, json_t *req);   /* steals req */
	FILE *in, *out;                 /* stdio */
	CURL *curl;                     /* http */
	struct curl_slist *headers;
	char session[64];
	int session_sent;               /* its Mcp-Session-Id header is in headers */
	struct sb_buf body;
	int next_id;
};

static json_t *stdio_call(struct client *c, json_t *req)
{
	char *line = NULL;
	size_t cap = 0;

	json_dumpf(req, c->in, JSON_COMPACT);
	fputc('\n', c->in);
	fflush(c->in);
	json_decref(req);
	for (;;) {
		if (getline(&line, &cap, c->out) < 0)
			die("stdio", "the server ended");
		json_t *msg = json_loads(line, 0, NULL);
		/* progress and log notifications are not the answer */
		if (msg && json_object_get(msg, "id")) {
			free(line);
			return msg;
		}
		json_decref(msg);
	}
}

static size_t on_body(char *data, size_t size, size_t n, void *arg)
{
	return sb_buf_add(&((struct client *)arg)->body, data, size * n) == 0 ? size * n : 0;
}

static size_t on_header(char *data, size_t size, size_t n, void *arg)
{
	struct client *c = arg;

	if (!strncasecmp(data, "Mcp-Session-Id: ", 16))
		snprintf(c->session, sizeof(c->session), "%.*s", (int)strcspn(data + 16, "\r\n"), data + 16);
	return size * n;
}

/* the answer: the JSON body, or the last data line of an event stream */
static json_t *http_call(struct client *c, json_t *req)
{
	char *text = json_dumps(req, JSON_COMPACT), *at;

	json_decref(req);
	c->body.len = 0;
	curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, text);
	if (curl_easy_perform(c->curl) != CURLE_OK)
		die("http", "request failed");
	free(text);
	sb_buf_add(&c->body, "", 1);
	if (c->session[0] && !c->session_sent) {
		char h[128];
		c->session_sent = 1;
		snprintf(h, sizeof(h), "Mcp-Session-Id: %s", c->session);
		c->headers = curl_slist_append(c->headers, h);
		curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, c->headers);
	}
	at = c->body.data;
	for (char *d; (d = strstr(at, "data: ")); at = d + 6)
		;
	return json_loads(at, 0, NULL);
}

static json_t *request(struct client *c, const char *method, json_t *params)
{
	json_t *req = json_pack("{s:s, s:i, s:s, s:o}", "jsonrpc", "2.0", "id", ++c->next_id, "method", method, "params", params);
	json_t *ans = c->call(c, req), *res = json_incref(json_object_get(ans, "result"));

	if (!res || json_is_true(json_object_get(res, "isError")))
		die(method, ans ? json_dumps(ans, 0) : "no answer");
	json_decref(ans);
	return res;
}

static json_t *tool(struct client *c, const char *name, json_t *args)
{
	json_t *r = request(c, "tools/call", json_pack("{s:s, s:o}", "name", name, "arguments", args));
	json_t *sc = json_incref(json_object_get(r, "structuredContent"));

	json_decref(r);
	return sc;
}

static void mcp_init(struct client *c, const char *id)
{
	json_decref(request(c, "initialize",
			    json_pack("{s:s, s:{}, s:{s:s, s:s}}", "protocolVersion", "2025-06-18", "capabilities", "clientInfo",
				      "name", "mcp-bench", "version", "1")));
	json_decref(tool(c, "session_start", json_pack("{s:s, s:s}", "name", BOX, "session", id)));
}

static double mcp_exec(struct client *c)
{
	double t0 = now_ms();

	json_decref(tool(c, "sandbox_exec", json_pack("{s:s, s:[s]}", "name", BOX, "command", "true")));
	return now_ms() - t0;
}

static double mcp_session(struct client *c, const char *id)
{
	double t0 = now_ms();
	json_t *sent = tool(c, "session_send", json_pack("{s:s, s:s, s:s}", "name", BOX, "session", id, "text", "true"));
	json_t *r = tool(c, "session_read",
			 json_pack("{s:s, s:s, s:O, s:i}", "name", BOX, "session", id, "since", json_object_get(sent, "offset"),
				   "max_wait", 30));

	if (strcmp(json_string_value(json_object_get(r, "reason")), "prompt"))
		die("session_read", "not at the prompt");
	double t = now_ms() - t0;
	json_decref(sent);
	json_decref(r);
	return t;
}

static pid_t spawn(int *to, int *from, int *err_fd, char *const argv[])
{
	int a[2], b[2], e[2];

	if (pipe(a) < 0 || pipe(b) < 0 || pipe(e) < 0)
		die("pipe", "");
	pid_t pid = fork();
	if (pid == 0) {
		dup2(a[0], 0);
		dup2(b[1], 1);
		dup2(e[1], 2);
		execv(argv[0], argv);
		_exit(127);
	}
	sb_proc_keep(pid, 1);
	close(a[0]);
	close(b[1]);
	close(e[1]);
	*to = a[1];
	*from = b[0];
	*err_fd = e[0];
	return pid;
}

static void stop(pid_t pid)
{
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	sb_proc_keep(pid, 0);
}

static pid_t stdio_start(struct client *c)
{
	char *argv[] = { (char *)bin, "--root", (char *)root_dir, "mcp", NULL };
	int to, from, err_fd;
	pid_t pid = spawn(&to, &from, &err_fd, argv);

	*c = (struct client){ .call = stdio_call, .in = fdopen(to, "w"), .out = fdopen(from, "r") };
	close(err_fd);
	mcp_init(c, "s");
	return pid;
}

static void stdio_stop(struct client *c, pid_t pid)
{
	fclose(c->in);
	fclose(c->out);
	stop(pid);
}

static pid_t http_start(struct client *hc, FILE **err_out)
{
	char *argv[] = { (char *)bin, "--root", (char *)root_dir, "mcp", "--listen", "127.0.0.1:0", NULL };
	struct client c = { .call = http_call };
	char url[256] = "", *tok = NULL, *path = sb_strdupf("%s/mcp-token", root_dir), line[512], auth[160];
	int to, from, err_fd;
	pid_t pid = spawn(&to, &from, &err_fd, argv);
	FILE *err = fdopen(err_fd, "r");
	struct sb_error e;

	while (!url[0] && fgets(line, sizeof(line), err))
		if (strstr(line, "listening on "))
			snprintf(url, sizeof(url), "%.*s", (int)strcspn(strstr(line, "on ") + 3, "\n"), strstr(line, "on ") + 3);
	if (!url[0] || sb_fs_read_file(&tok, NULL, path, 256, &e) < 0 || sb_curl_load(&e) < 0)
		die("http server", e.msg);
	tok[strcspn(tok, "\n")] = '\0';
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", tok);
	c.curl = curl_easy_init();
	c.headers = curl_slist_append(NULL, "Content-Type: application/json");
	c.headers = curl_slist_append(c.headers, "Accept: application/json, text/event-stream");
	c.headers = curl_slist_append(c.headers, auth);
	curl_easy_setopt(c.curl, CURLOPT_URL, url);
	curl_easy_setopt(c.curl, CURLOPT_HTTPHEADER, c.headers);
	curl_easy_setopt(c.curl, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c.curl, CURLOPT_HEADERFUNCTION, on_header);
	free(tok);
	free(path);
	close(to);
	close(from);
	*hc = c;
	/* the callbacks get the client where it lives from now on */
	curl_easy_setopt(hc->curl, CURLOPT_WRITEDATA, hc);
	curl_easy_setopt(hc->curl, CURLOPT_HEADERDATA, hc);
	mcp_init(hc, "h");
	*err_out = err;
	return pid;
}

static void http_stop(struct client *c, pid_t pid, FILE *err)
{
	curl_easy_cleanup(c->curl);
	curl_slist_free_all(c->headers);
	sb_buf_clear(&c->body);
	stop(pid);
	fclose(err);
}

int main(int argc, char **argv)
{
	struct sb_sandbox_spec spec = { .name = BOX, .network = 0 };
	struct sb_session_info info;
	struct sb_error err;

	if (argc != 5 && !(argc == 6 && !strcmp(argv[5], "back-to-back")))
		die("usage", "mcp-bench SANDBENCH ROOT IMAGE N [back-to-back]");
	settle_samples = argc == 5;
	bin = argv[1];
	root_dir = argv[2];
	spec.image = argv[3];
	n_runs = atoi(argv[4]);
	double *t[6];
	for (int i = 0; i < 6; i++)
		t[i] = calloc((size_t)n_runs, sizeof(double));
	sb_sandbox_process_init(NULL);
	if (sb_root_open(&root, root_dir, &err) < 0 || sb_sandbox_create(NULL, root, &spec, &err) < 0 ||
	    sb_session_start(&info, root, BOX, "lib", &(struct sb_session_opts){ 0 }, &err) < 0)
		die("set-up", err.msg);
	sb_session_info_clear(&info);
	struct client sc, hc;
	FILE *herr;
	pid_t spid = stdio_start(&sc), hpid = http_start(&hc, &herr);
	servers[0] = spid;
	servers[1] = hpid;
	/* interleaved, so that a slow moment of the machine falls on all three
	 * alike, and the order turned each round: what a server does after
	 * its answer (forking its next worker) falls on each side equally */
	for (int i = 0; i < n_runs; i++)
		for (int k = 0; k < 3; k++)
			switch (settle(), (i + k) % 3) {
			case 0: t[0][i] = lib_exec(); break;
			case 1: t[2][i] = mcp_exec(&sc); break;
			default: t[4][i] = mcp_exec(&hc); break;
			}
	for (int i = 0; i < n_runs; i++)
		for (int k = 0; k < 3; k++)
			switch (settle(), (i + k) % 3) {
			case 0: t[1][i] = lib_session("lib"); break;
			case 1: t[3][i] = mcp_session(&sc, "s"); break;
			default: t[5][i] = mcp_session(&hc, "h"); break;
			}
	stdio_stop(&sc, spid);
	http_stop(&hc, hpid, herr);
	double base_exec = pct(t[0], 0.5), base_sess = pct(t[1], 0.5);
	printf("%d runs each; ratio and what MCP adds are against the library's median\n", n_runs);
	report("exec true: library", t[0], 0);
	report("exec true: MCP stdio", t[2], base_exec);
	report("exec true: MCP HTTP", t[4], base_exec);
	report("session send+read: library", t[1], 0);
	report("session send+read: MCP stdio", t[3], base_sess);
	report("session send+read: MCP HTTP", t[5], base_sess);
	sb_sandbox_remove(root, BOX, SB_REMOVE_FORCE, NULL);
	sb_root_close(root);
	return 0;
}
