/* The urpc client of the direct pause and resume (src/backend/runsc/urpc.c,
 * freeze.c) without runsc: the request's framing, the end of a reply found
 * in a stream, a reply decoded or refused (malformed, oversized, followed by
 * more, carrying a file, never coming), the abstract socket's peer, the edit
 * of runsc's state file, and the CLI chosen for a build that was not
 * measured; the child of a direct exec, which allocates nothing. A forked
 * child plays the sandbox on a socket pair, or is the exec's child. */
#include "config.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/fs.h"
#include "base/root.h"
#include "allocfail.h"
#include "backend/runsc/internal.h"
#include "base/log.h"
#include "testutil.h"

TestSuite(urpc);

Test(urpc, a_call_is_one_compact_object)
{
	char *s;
	json_t *arg = json_pack("{s:s,s:i}", "CID", "sb-1", "Signo", 0);

	cr_assert_eq(sb_urpc_encode(&s, "Lifecycle.Resume", NULL, NULL), 0);
	cr_assert_str_eq(s, "{\"method\":\"Lifecycle.Resume\",\"arg\":null}");
	free(s);
	cr_assert_eq(sb_urpc_encode(&s, "containerManager.Signal", arg, NULL), 0);
	cr_assert_str_eq(s, "{\"method\":\"containerManager.Signal\",\"arg\":{\"CID\":\"sb-1\",\"Signo\":0}}");
	free(s);
	cr_assert_eq(arg->refcount, 1, "the caller keeps its argument");
	json_decref(arg);
	struct sb_error err;
	cr_assert_eq(sb_urpc_encode(&s, "", NULL, &err), SB_ERR_INVALID);
	cr_assert_null(s);
}

static int frame(const char *s, size_t *end)
{
	return sb_urpc_frame_end(end, s, strlen(s));
}

Test(urpc, the_end_of_a_reply_is_found_in_a_stream)
{
	size_t end;
	const char *reply = "{\"success\":true,\"err\":\"\",\"result\":{}}";

	cr_assert_eq(frame(reply, &end), 1);
	cr_assert_eq(end, strlen(reply));
	/* runsc's client reads one byte first, then the rest */
	cr_assert_eq(sb_urpc_frame_end(&end, reply, 1), 0, "incomplete");
	cr_assert_eq(sb_urpc_frame_end(&end, reply, strlen(reply) - 1), 0, "incomplete up to its last brace");
	cr_assert_eq(frame("", &end), 0);
	cr_assert_eq(frame(" \n", &end), 0);
	/* braces and quotes inside strings do not count */
	const char *tricky = " {\"err\":\"a}\\\"{b\\\\\",\"result\":[{}]}";
	cr_assert_eq(frame(tricky, &end), 1);
	cr_assert_eq(end, strlen(tricky));
	cr_assert_eq(frame("{\"err\":\"}\"", &end), 0, "a brace in an open string");
	/* more after the end: the end is still where the first object closes */
	cr_assert_eq(frame("{}{}", &end), 1);
	cr_assert_eq(end, 2);
}

Test(urpc, what_is_no_object_is_refused_unread)
{
	size_t end;

	cr_assert_eq(frame("[1]", &end), SB_ERR_FORMAT);
	cr_assert_eq(frame("\"x\"", &end), SB_ERR_FORMAT);
	cr_assert_eq(frame("HTTP/1.1 200 OK", &end), SB_ERR_FORMAT);
	cr_assert_eq(sb_urpc_frame_end(&end, "{\"a\0\"}", 6), SB_ERR_FORMAT, "a NUL");
	char deep[64] = "";
	for (int i = 0; i < 20; i++)
		strcat(deep, "[");
	cr_assert_eq(frame(deep, &end), SB_ERR_FORMAT, "nested too deeply");
}

static int decode(const char *s, struct sb_urpc_reply *r)
{
	return sb_urpc_decode(r, s, strlen(s));
}

Test(urpc, a_reply_is_decoded_or_refused)
{
	struct sb_urpc_reply r;

	cr_assert_eq(decode("{\"success\":true,\"err\":\"\",\"result\":{}}", &r), 0);
	cr_assert_eq(r.success, 1);
	cr_assert_eq(decode("{\"success\":false,\"err\":\"unknown method\",\"result\":null}", &r), 0);
	cr_assert_eq(r.success, 0);
	cr_assert_str_eq(r.err, "unknown method");
	static const char *const bad[] = {
		"{\"success\":true,\"err\":\"\"}",                          /* no result */
		"{\"success\":1,\"err\":\"\",\"result\":{}}",               /* success not a boolean */
		"{\"success\":true,\"err\":null,\"result\":{}}",            /* err not a string */
		"{\"success\":true,\"err\":\"but\",\"result\":{}}",         /* success with an error */
		"{\"success\":true,\"err\":\"\",\"result\":{}}{}",          /* more after it */
		"{\"success\":true,\"success\":true,\"err\":\"\",\"result\":{}}", /* a key twice */
		"{\"success\":true,\"err\":\"\",\"result\":1,\"more\":1}", /* a member no reply has */
		"{\"success\":true,\"err\":\"\",\"result\":012}",    /* a leading zero */
		"{\"success\":true,\"err\":\"\",\"result\":[1,]}",   /* no value after a comma */
		"{\"success\":true,\"err\":\"\",\"result\":{\"a\"}}", /* a key without a value */
		"{\"success\":true,\"err\":\"\\x\",\"result\":1}",   /* an escape JSON has not */
		"{\"success\":true,\"err\":\"\t\",\"result\":1}",     /* a raw control character */
		"{\"success\":true,\"err\":\"\",\"result\":1.}",     /* a fraction without digits */
		"{\"success\":true,\"err\":\"\",\"result\":tru}",    /* half a word */
		"{\"success\":true,\"err\":\"\",\"result\":1",       /* unclosed */
		"{\"success\":true,\"err\":\"\",\"result\":9223372036854775808}", /* beyond long long */
		"[true]", "not json", "",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_eq(sb_urpc_decode(&r, bad[i], strlen(bad[i])), SB_ERR_FORMAT, "%s", bad[i]);
		cr_assert_eq(r.success, 0, "never a success: %s", bad[i]);
	}
	/* the results the calls read, and what is no integer */
	static const struct {
		const char *doc;
		int has;
		long long v;
	} results[] = {
		{ "{\"success\":true,\"err\":\"\",\"result\":42}", 1, 42 },
		{ " { \"result\" : -7 , \"err\":\"\",\"success\":true } ", 1, -7 },
		{ "{\"success\":true,\"err\":\"\",\"result\":9223372036854775807}", 1, 9223372036854775807LL },
		{ "{\"success\":true,\"err\":\"\",\"result\":-9223372036854775808}", 1, -9223372036854775807LL - 1 },
		{ "{\"success\":true,\"err\":\"\",\"result\":1.5e3}", 0, 0 },
		{ "{\"success\":true,\"err\":\"\",\"result\":null}", 0, 0 },
		{ "{\"success\":true,\"err\":\"\",\"result\":[{\"a\":[\"}\",1,true]},{}]}", 0, 0 },
	};
	for (size_t i = 0; i < sizeof(results) / sizeof(results[0]); i++) {
		cr_assert_eq(decode(results[i].doc, &r), 0, "%s", results[i].doc);
		cr_assert(r.success && r.has_result == results[i].has && r.result == results[i].v, "%s: %d %lld",
			  results[i].doc, r.has_result, r.result);
	}
	/* an error's escapes are read */
	cr_assert_eq(decode("{\"success\":false,\"err\":\"no \\\"x\\\"\\n\\u00e4\",\"result\":null}", &r), 0);
	cr_assert_str_eq(r.err, "no \"x\"\n?");
	/* a long error text is cut, not overrun */
	char *longer = malloc(2000);
	memset(longer, 'e', 1999);
	longer[1999] = '\0';
	char *doc = sb_strdupf("{\"success\":false,\"err\":\"%s\",\"result\":null}", longer);
	cr_assert_eq(decode(doc, &r), 0);
	cr_assert_eq(strlen(r.err), sizeof(r.err) - 1);
	free(doc);
	free(longer);
}

/* What the child playing the sandbox does once it has read the request. */
enum script { GOOD_IN_TWO, REFUSE, OVERSIZED, TRAILING, SILENT, HANG_UP, WITH_FILE, A_PID };

/* Reads the request up to its end into req (the parent checks it); the
 * files that came with it are counted in *files (and closed). */
static int read_request(int fd, char *req, size_t cap, int *files)
{
	size_t have = 0, end;
	*files = 0;
	req[0] = '\0';
	while (have < cap - 1) {
		char ctl[CMSG_SPACE(8 * sizeof(int))];
		struct iovec iov = { .iov_base = req + have, .iov_len = cap - 1 - have };
		struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl) };
		ssize_t n = recvmsg(fd, &m, 0);
		if (n <= 0)
			return -1;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
				for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++, (*files)++)
					close(((int *)CMSG_DATA(c))[i]);
		have += (size_t)n;
		req[have] = '\0';
		if (sb_urpc_frame_end(&end, req, have) == 1)
			return 0;
	}
	return -1;
}

static void send_file(int fd, const char *text)
{
	int passed = open("/dev/null", O_RDONLY);
	char ctl[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = (void *)text, .iov_len = strlen(text) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &passed, sizeof(int));
	if (sendmsg(fd, &m, 0) < 0)
		_exit(4);
}

static void play(int fd, enum script s, int report)
{
	char req[512], junk[64];
	const char *ok = "{\"success\":true,\"err\":\"\",\"result\":{}}";
	int files;

	if (read_request(fd, req, sizeof(req), &files) < 0)
		_exit(2);
	if (dprintf(report, "%d files: %s", files, req) < 0)
		_exit(5);
	switch (s) {
	case GOOD_IN_TWO:
		/* the way unet sends it may split anywhere */
		if (write(fd, ok, 9) < 0 || write(fd, ok + 9, strlen(ok) - 9) < 0)
			_exit(6);
		break;
	case REFUSE:
		dprintf(fd, "{\"success\":false,\"err\":\"unknown method\",\"result\":null}");
		break;
	case OVERSIZED:
		dprintf(fd, "{\"success\":true,\"err\":\"\",\"result\":\"");
		for (int i = 0; i < SB_URPC_REPLY_MAX / 64 + 2; i++)
			dprintf(fd, "%064d", i);
		break;
	case TRAILING:
		dprintf(fd, "%s{}", ok);
		break;
	case SILENT:
		break;
	case HANG_UP:
		_exit(0);
	case WITH_FILE:
		send_file(fd, ok);
		break;
	case A_PID:
		dprintf(fd, "{\"success\":true,\"err\":\"\",\"result\":42}");
		break;
	}
	/* until the parent is done with its side */
	while (read(fd, junk, sizeof(junk)) > 0)
		;
	_exit(0);
}

struct played {
	int rc, sent;
	struct sb_urpc_reply reply;
	char request[512];
};

static struct played call_with(enum script s, const int *files, size_t n_files, int timeout_ms)
{
	struct played p = { 0 };
	int sv[2], rep[2];
	struct sb_error err;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	cr_assert_eq(pipe2(rep, O_CLOEXEC), 0);
	pid_t child = fork();
	cr_assert_geq(child, 0);
	if (child == 0) {
		/* the parent stops reading an oversized reply half-way */
		signal(SIGPIPE, SIG_IGN);
		close(sv[0]);
		close(rep[0]);
		play(sv[1], s, rep[1]);
	}
	close(sv[1]);
	close(rep[1]);
	p.rc = sb_urpc_call(&p.reply, &p.sent, sv[0], "Lifecycle.Resume", NULL, files, n_files,
			    sb_clock_monotonic_ms() + timeout_ms, &err);
	close(sv[0]);
	ssize_t n = read(rep[0], p.request, sizeof(p.request) - 1);
	p.request[n > 0 ? n : 0] = '\0';
	close(rep[0]);
	int st;
	cr_assert_eq(waitpid(child, &st, 0), child);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the playing child: %d", st);
	return p;
}

static struct played call_against(enum script s, int timeout_ms)
{
	return call_with(s, NULL, 0, timeout_ms);
}

/* An exec's stdio goes with the request as SCM_RIGHTS, and its pid comes back. */
Test(urpc, files_go_with_the_request_and_an_integer_result_comes_back)
{
	int p[2];

	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	struct played r = call_with(A_PID, (const int[]){ p[0], p[1], p[1] }, 3, 10000);
	cr_assert_eq(r.rc, 0);
	cr_assert(r.reply.success && r.reply.has_result);
	cr_assert_eq(r.reply.result, 42);
	cr_assert_str_eq(r.request, "3 files: {\"method\":\"Lifecycle.Resume\",\"arg\":null}", "what the sandbox got");
	r = call_with(GOOD_IN_TWO, NULL, 0, 10000);
	cr_assert(r.reply.success && !r.reply.has_result, "{} is no integer result");
	struct sb_urpc_reply reply;
	int sent;
	struct sb_error err;
	cr_assert_eq(sb_urpc_call(&reply, &sent, -1, "X", NULL, (const int[]){ 0, 1, 2, 0 }, 4, 0, &err), SB_ERR_LIMIT);
	cr_assert(!sent);
	close(p[0]);
	close(p[1]);
}

Test(urpc, a_call_reads_its_reply_however_it_is_split)
{
	struct played p = call_against(GOOD_IN_TWO, 10000);

	cr_assert_eq(p.rc, 0);
	cr_assert(p.sent);
	cr_assert_eq(p.reply.success, 1);
	cr_assert_str_eq(p.request, "0 files: {\"method\":\"Lifecycle.Resume\",\"arg\":null}", "what the sandbox got");
	p = call_against(REFUSE, 10000);
	cr_assert_eq(p.rc, 0, "a refusal is a reply");
	cr_assert_eq(p.reply.success, 0);
	cr_assert_str_eq(p.reply.err, "unknown method");
}

/* How many of this process's descriptors are /dev/null (the file the child passes). */
static int open_null_fds(void)
{
	int n = 0;

	for (int fd = 0; fd < 256; fd++) {
		char link[64], target[64];
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		ssize_t len = readlink(link, target, sizeof(target) - 1);
		n += len == 9 && !memcmp(target, "/dev/null", 9);
	}
	return n;
}

Test(urpc, a_bad_answer_is_never_a_success)
{
	static const struct {
		enum script s;
		int rc;
	} cases[] = {
		{ OVERSIZED, SB_ERR_LIMIT }, { TRAILING, SB_ERR_FORMAT }, { HANG_UP, SB_ERR_FORMAT },
		{ WITH_FILE, SB_ERR_UNSAFE },
	};
	int before = open_null_fds();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct played p = call_against(cases[i].s, 10000);
		cr_assert_eq(p.rc, cases[i].rc, "case %zu: %d", i, p.rc);
		cr_assert(p.sent, "the request went out: the caller must not try again");
		cr_assert_eq(p.reply.success, 0);
	}
	cr_assert_eq(open_null_fds(), before, "the file passed with a reply was not left open here");
}

Test(urpc, a_sandbox_that_never_answers_ends_at_the_deadline)
{
	struct played p = call_against(SILENT, 300);

	cr_assert_eq(p.rc, SB_ERR_TIMEOUT);
	cr_assert(p.sent);
}

Test(urpc, the_peer_of_an_abstract_socket_is_known)
{
	char name[64];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), fd;
	pid_t peer;
	struct sb_error err;

	/* bound the way Go binds runsc's (a NUL before and after the name) */
	snprintf(name, sizeof(name), "sbtest-urpc.%ld", (long)getpid());
	memcpy(sa.sun_path + 1, name, strlen(name));
	cr_assert_eq(bind(l, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(name) + 2)), 0);
	cr_assert_eq(listen(l, 1), 0);
	cr_assert_eq(sb_urpc_connect(&fd, &peer, name, &err), 0, "%s", err.msg);
	cr_assert_eq(peer, getpid());
	close(fd);
	close(l);
	cr_assert_eq(sb_urpc_connect(&fd, &peer, name, &err), SB_ERR_IO, "nobody listens any more");
	cr_assert_eq(fd, -1);
}

/* runsc's state file as this runsc writes it: compact, the status once */
#define STATE(status, extra) \
	"{\"id\":\"sb-1\",\"spec\":{\"ociVersion\":\"1.0.2\"" extra "},\"status\":\"" status "\",\"goferPid\":10," \
	"\"sandbox\":{\"id\":\"sb-1\",\"pid\":11,\"uid\":65534}}"

static int edit(const char *text, const char *id, const char *from, const char *to, char **out, long *pid)
{
	size_t len;
	return sb_runsc_state_edit(out, &len, pid, text, strlen(text), id, from, to);
}

Test(urpc, runscs_state_file_gets_the_new_status_and_nothing_else)
{
	char *out;
	long pid;

	cr_assert_eq(edit(STATE("running", ""), "sb-1", "running", "paused", &out, &pid), 0);
	cr_assert_str_eq(out, STATE("paused", ""));
	cr_assert_eq(pid, 11);
	free(out);
	cr_assert_eq(edit(STATE("paused", ""), "sb-1", "paused", "running", &out, &pid), 0);
	cr_assert_str_eq(out, STATE("running", ""));
	free(out);
	/* the guard: a resume of a sandbox that is not paused would panic it */
	cr_assert_eq(edit(STATE("running", ""), "sb-1", "paused", "running", &out, &pid), SB_ERR_STATE);
	cr_assert_null(out);
	cr_assert_eq(edit(STATE("stopped", ""), "sb-1", "running", "paused", &out, &pid), SB_ERR_STATE);
	/* not as measured: left to the CLI */
	static const char *const bad[] = {
		STATE("running", ",\"annotations\":{\"status\":\"running\"}"), /* the status twice */
		"{\"id\":\"sb-1\",\"status\": \"running\",\"sandbox\":{\"pid\":11}}", /* not compact */
		"{\"id\":\"sb-2\",\"status\":\"running\",\"sandbox\":{\"pid\":11}}", /* another container */
		"{\"id\":\"sb-1\",\"status\":\"running\",\"sandbox\":{}}",           /* no sandbox pid */
		"{\"id\":\"sb-1\",\"status\":\"running\",\"sandbox\":{\"pid\":1}}",  /* not a sandbox */
		"{\"id\":\"sb-1\",\"status\":\"running\"", "",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_eq(edit(bad[i], "sb-1", "running", "paused", &out, &pid), SB_ERR_FORMAT, "%s", bad[i]);
		cr_assert_null(out);
	}
}

Test(urpc, another_runsc_build_or_a_missing_state_uses_the_cli)
{
	char *dir = tu_tempdir("urpc"), *fake = sb_path_join(dir, "fake-runsc");
	struct sb_root *root;
	struct sb_runsc *rs;
	struct sb_record rec = { .id = "sb-1", .name = "x" };
	struct sb_backend_sandbox sb = { .rec = &rec, .dir = dir };
	char build[96];

	cr_assert_eq(sb_fs_write_atomic(fake, "#!/bin/sh\nexit 0\n", 17, 0755, NULL), 0);
	setenv("SANDBENCH_RUNSC", fake, 1);
	cr_assert_eq(sb_root_open(&root, dir, NULL), 0);
	cr_assert_eq(sb_runsc_open(&rs, root, NULL), 0);
	cr_assert_eq(sb_runsc_build_of(build, sizeof(build), fake), 0);
	cr_assert(!strncmp(build, "runsc:17:", 9), "size and time: %s", build);
	cr_assert_eq(sb_runsc_build_of(build, sizeof(build), dir), -1, "not a file");
	cr_assert_str_eq(build, "");
	cr_assert_eq(sb_runsc_freeze_direct(rs, "runsc:17:1.000000000", &sb, 1, 1000, NULL), 1, "another build");
	cr_assert_eq(sb_runsc_freeze_direct(rs, "", &sb, 0, 1000, NULL), 1, "an unknown build");
	/* the measured build, but no container of that id in runsc's state */
	cr_assert_eq(sb_runsc_freeze_direct(rs, "runsc:24013136:1681030439.000000000", &sb, 1, 1000, NULL), 1);
	sb_runsc_close(rs);
	sb_root_close(root);
	unsetenv("SANDBENCH_RUNSC");
	tu_remove(dir);
	free(dir);
	free(fake);
}

/* The child of a direct exec (exec_direct.c) against this process playing
 * the sandbox: how it ends, what it sent, the pid file and the log;
 * detach: started, not waited for. */
enum quick_play { QUICK_RUNS, QUICK_REFUSED, QUICK_LOST };
struct quick_run {
	int status, files[3];
	char req[3][1024];
	char *ipid, *log;
};

static struct quick_run quick_against(enum quick_play play, int detach)
{
	static const char *const replies[][3] = {
		[QUICK_RUNS] = { "{\"success\":true,\"err\":\"\",\"result\":null}",
				 "{\"success\":true,\"err\":\"\",\"result\":42}",
				 "{\"success\":true,\"err\":\"\",\"result\":1792}" },
		[QUICK_REFUSED] = { "{\"success\":true,\"err\":\"\",\"result\":null}",
				    "{\"success\":false,\"err\":\"no such file\",\"result\":null}", NULL },
		[QUICK_LOST] = { "{\"success\":true,\"err\":\"\",\"result\":null}",
				 "{\"success\":true,\"err\":\"\",\"result\":42}", NULL },
	};
	struct quick_run r = { 0 };
	char *dir = tu_tempdir("urpc-quick"), *ipid = sb_path_join(dir, "ipid"), *logp = sb_path_join(dir, "log");
	FILE *log = fopen(logp, "a");
	json_t *args = json_pack("{s:[s]}", "argv", "/bin/true");
	int sv[2];

	cr_assert(log && args);
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	struct sb_runsc_quick q = { .id = "sb-1", .ipid_file = ipid, .sock = sv[1],
				    .lock_fd = open(dir, O_RDONLY | O_CLOEXEC), .detach = detach };
	cr_assert_eq(sb_urpc_encode(&q.signal_req, "containerManager.Signal", NULL, NULL), 0);
	cr_assert_eq(sb_urpc_encode(&q.exec_req, "containerManager.ExecuteAsync", args, NULL), 0);
	q.wait_head = strdup("{\"method\":\"containerManager.WaitPID\",\"arg\":{\"CID\":\"sb-1\",\"PID\":");
	json_decref(args);
	sb_log_set(log);
	pid_t child = fork();
	cr_assert_geq(child, 0);
	if (child == 0) {
		close(sv[0]);
		af_forbid();
		sb_runsc_quick_child(&q);
		_exit(99); /* returned: the CLI would run now */
	}
	sb_log_set(NULL);
	sb_runsc_quick_forked(&q);
	cr_assert_eq(q.sock, -1, "the parent's copies are closed");
	for (int i = 0; i < 3 && replies[play][i]; i++) {
		cr_assert_eq(read_request(sv[0], r.req[i], sizeof(r.req[i]), &r.files[i]), 0, "request %d", i);
		cr_assert_eq(write(sv[0], replies[play][i], strlen(replies[play][i])), (ssize_t)strlen(replies[play][i]));
	}
	close(sv[0]);
	int st;
	cr_assert_eq(waitpid(child, &st, 0), child);
	cr_assert(WIFEXITED(st), "the child ended by signal %d (an allocation aborts it)", WTERMSIG(st));
	r.status = WEXITSTATUS(st);
	r.ipid = tu_sh_out("cat %s 2>/dev/null", ipid);
	r.log = tu_sh_out("cat %s", logp);
	sb_runsc_quick_clear(&q);
	cr_assert_eq(fclose(log), 0);
	tu_remove(dir);
	free(dir);
	free(ipid);
	free(logp);
	return r;
}

Test(urpc, the_exec_child_runs_the_process_without_allocating)
{
	struct quick_run r = quick_against(QUICK_RUNS, 0);

	cr_assert_eq(r.status, 7, "the process's exit status (1792 = 7 << 8)");
	cr_assert(strstr(r.req[0], "\"method\":\"containerManager.Signal\"") && r.files[0] == 0, "%s", r.req[0]);
	cr_assert(strstr(r.req[1], "\"method\":\"containerManager.ExecuteAsync\",\"arg\":{\"argv\":[\"/bin/true\"]}"),
		  "%s", r.req[1]);
	cr_assert_eq(r.files[1], 3, "stdin, stdout and stderr go with it");
	cr_assert_str_eq(r.req[2], "{\"method\":\"containerManager.WaitPID\",\"arg\":{\"CID\":\"sb-1\",\"PID\":42}}");
	cr_assert_str_eq(r.ipid, "42", "the pid inside, where kill reads it");
	cr_assert(strstr(r.log, "runsc exec sb-1: direct, ") && strstr(r.log, " ms, status 7"), "%s", r.log);
	free(r.ipid);
	free(r.log);
}

Test(urpc, the_exec_child_leaves_a_refusal_to_the_cli_and_a_lost_process_to_the_caller)
{
	struct quick_run r = quick_against(QUICK_REFUSED, 0);

	cr_assert_eq(r.status, 99, "refused before anything ran: the child goes on to exec runsc");
	cr_assert_str_eq(r.ipid, "");
	cr_assert(strstr(r.log, "runsc exec sb-1: through the CLI: the sandbox refused the call: no such file"), "%s",
		  r.log);
	free(r.ipid);
	free(r.log);
	r = quick_against(QUICK_LOST, 0);
	cr_assert_eq(r.status, 128, "started, then no answer: runsc exec's own failure status");
	cr_assert_str_eq(r.ipid, "42");
	cr_assert(strstr(r.log, "runsc exec sb-1: direct, lost: "), "%s", r.log);
	free(r.ipid);
	free(r.log);
}

/* A detached exec (a pool member's namer) ends once the process runs: no
 * WaitPID, status 0; refused, it fails rather than leave it to the CLI,
 * which would wait. */
Test(urpc, a_detached_exec_child_ends_once_the_process_runs)
{
	struct quick_run r = quick_against(QUICK_LOST, 1);

	cr_assert_eq(r.status, 0, "started: the child's status is 0");
	cr_assert(strstr(r.req[1], "\"method\":\"containerManager.ExecuteAsync\""), "%s", r.req[1]);
	cr_assert_str_eq(r.req[2], "", "a detached exec does not wait for the process");
	cr_assert_str_eq(r.ipid, "42", "the pid inside, where kill reads it");
	cr_assert(strstr(r.log, "runsc exec sb-1: direct, ") && strstr(r.log, " ms, detached"), "%s", r.log);
	free(r.ipid);
	free(r.log);
	r = quick_against(QUICK_REFUSED, 1);
	cr_assert_eq(r.status, 128, "refused: a failure, never the CLI");
	cr_assert_str_eq(r.ipid, "");
	cr_assert(strstr(r.log, "runsc exec sb-1: direct, lost: no such file"), "%s", r.log);
	free(r.ipid);
	free(r.log);
}
