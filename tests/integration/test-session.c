/* Agent sessions with real runsc on a real pty: driven as an agent tool
 * drives a shell (through the library and through the CLI), control taken
 * by a human, secrets, every kind of bad input, stop/restore, long names. */
#include "config.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/ioctl.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/fs.h"
#include "base/proc.h"
#include "sandbox/sandbox.h"
#include "sandbox/timeline.h"
#include "session/session.h"
#include "sbfixture.h"
#include "testutil.h"

#define WAIT_MS 30000

static struct sbf f;

static void setup(void)
{
	sbf_setup(&f, "session");
}

static void teardown(void)
{
	sbf_teardown(&f);
}

TestSuite(session, .init = setup, .fini = teardown, .timeout = 240);

static void create_box(const struct sbf *fx, const char *name, const char *image)
{
	struct tu_run r = tu_sandbench(fx->dir, NULL, "create", name, "--image", image, "--network", "off", NULL);
	cr_assert_eq(r.status, 0, "create %s: %s", name, r.err);
	tu_run_free(&r);
}

static void start_lib(const struct sbf *fx, const char *name, const char *id, const struct sb_session_opts *o,
		      struct sb_session_info *info)
{
	struct sb_error err;

	cr_assert_eq(sb_session_start(info, fx->root, name, id, o, &err), 0, "start: %s", err.msg);
	cr_assert_eq(info->state, SB_SESSION_RUNNING);
}

/* send then read until the condition: the agent's round trip */
static void run_lib(const struct sbf *fx, const char *name, const char *id, const char *input,
		    const struct sb_session_read_opts *ro, struct sb_session_read_result *r)
{
	struct sb_session *s;
	struct sb_error err;
	unsigned long long off;

	cr_assert_eq(sb_session_connect(&s, fx->root, name, id, &err), 0, "%s", err.msg);
	cr_assert_eq(sb_session_send(s, &off, input, strlen(input), SB_SOURCE_AGENT, &err), 0, "%s", err.msg);
	sb_session_close(s);
	struct sb_session_read_opts o = ro ? *ro : (struct sb_session_read_opts){ .max_wait_ms = WAIT_MS };
	o.since = (long long)off;
	cr_assert_eq(sb_session_read(r, fx->root, name, id, &o, &err), 0, "read: %s", err.msg);
}

static void expect_prompt(const struct sb_session_read_result *r, int code, const char *has)
{
	cr_assert_eq(r->reason, SB_READ_PROMPT, "reason %s, output '%.*s'", sb_session_reason_name(r->reason),
		     (int)r->len, r->output);
	cr_assert_eq(r->exit_code, code, "exit code %d, output '%.*s'", r->exit_code, (int)r->len, r->output);
	cr_assert(r->idle && r->prompt && strstr(r->prompt, "# "), "at the prompt: idle %d, offset %llu, dropped %llu",
		  r->idle, r->offset, r->dropped);
	if (has)
		cr_assert(memmem(r->output, r->len, has, strlen(has)), "'%s' in '%.*s'", has, (int)r->len, r->output);
}

/* The agent test of the issue, on a shell given by its path. */
static void agent_flow_lib(const char *name, const char *shell)
{
	struct sb_session_opts o = { .shell = shell };
	struct sb_session_info info, again;
	struct sb_session_read_result r;
	struct sb_error err;

	start_lib(&f, name, "0", &o, &info);
	run_lib(&f, name, "0", "cd /tmp && export X=1\n", NULL, &r);
	expect_prompt(&r, 0, NULL);
	sb_session_read_result_clear(&r);
	run_lib(&f, name, "0", "echo $X $PWD\n", NULL, &r);
	expect_prompt(&r, 0, "1 /tmp\r\n");
	sb_session_read_result_clear(&r);
	run_lib(&f, name, "0", "false\n", NULL, &r);
	expect_prompt(&r, 1, NULL);
	sb_session_read_result_clear(&r);

	/* a question: reported as a dialog, then answered */
	struct sb_session_read_opts idle = { .wait_idle_ms = 20000, .max_wait_ms = WAIT_MS };
	run_lib(&f, name, "0", "printf 'Continue? [Y/n] '; read a; echo answer=$a\n", &idle, &r);
	cr_assert(r.dialog, "dialog: '%.*s'", (int)r.len, r.output);
	cr_assert_eq(r.reason, SB_READ_IDLE, "%s", sb_session_reason_name(r.reason));
	cr_assert(!r.idle);
	sb_session_read_result_clear(&r);
	run_lib(&f, name, "0", "y\n", NULL, &r);
	expect_prompt(&r, 0, "answer=y");
	sb_session_read_result_clear(&r);

	/* sleep 30 interrupted: the prompt is back (130) long before 30 s */
	struct sb_session *s;
	unsigned long long off;
	cr_assert_eq(sb_session_connect(&s, f.root, name, "0", &err), 0, "%s", err.msg);
	cr_assert_eq(sb_session_send(s, &off, "echo sleeping; sleep 30\n", 24, SB_SOURCE_AGENT, &err), 0, "%s", err.msg);
	/* once it sleeps (a ^C typed before the shell reads the line would discard the line) */
	struct sb_session_read_opts started = { .since = (long long)off, .wait_idle_ms = 300, .max_wait_ms = WAIT_MS };
	cr_assert_eq(sb_session_read(&r, f.root, name, "0", &started, &err), 0, "%s", err.msg);
	cr_assert(memmem(r.output, r.len, "sleeping", 8) && r.reason == SB_READ_IDLE, "%s", sb_session_reason_name(r.reason));
	sb_session_read_result_clear(&r);
	cr_assert_eq(sb_session_ctrl(s, NULL, 'c', SB_SOURCE_AGENT, &err), 0, "%s", err.msg);
	sb_session_close(s);
	struct sb_session_read_opts ro = { .since = (long long)off, .max_wait_ms = 20000 };
	cr_assert_eq(sb_session_read(&r, f.root, name, "0", &ro, &err), 0, "%s", err.msg);
	expect_prompt(&r, 130, NULL);
	sb_session_read_result_clear(&r);

	/* a background job, read in a later call from the saved offset */
	run_lib(&f, name, "0", "(read -t 1 x < /dev/zero; sleep 1; echo bg-done) &\n", NULL, &r);
	expect_prompt(&r, 0, NULL);
	unsigned long long saved = r.offset;
	sb_session_read_result_clear(&r);
	struct sb_session_read_opts later = { .since = (long long)saved, .wait_idle_ms = 500, .first_timeout_ms = 20000 };
	cr_assert_eq(sb_session_read(&r, f.root, name, "0", &later, &err), 0, "%s", err.msg);
	cr_assert(memmem(r.output, r.len, "bg-done", 7), "'%.*s'", (int)r.len, r.output);
	cr_assert_eq(r.since, saved);
	sb_session_read_result_clear(&r);

	/* reset: kill and start again gives a fresh shell in the same id */
	cr_assert_eq(sb_session_kill(f.root, name, "0", SIGTERM, &err), 0, "%s", err.msg);
	cr_assert_eq(sb_session_inspect(&again, f.root, name, "0", &err), 0, "%s", err.msg);
	cr_assert_eq(again.state, SB_SESSION_EXITED);
	cr_assert(strstr(again.reason, "killed"), "%s", again.reason);
	sb_session_info_clear(&again);
	start_lib(&f, name, "0", &o, &again);
	cr_assert_neq(again.pid, info.pid);
	run_lib(&f, name, "0", "echo ${X:-unset} $PWD\n", NULL, &r);
	expect_prompt(&r, 0, "unset /workspace");
	sb_session_read_result_clear(&r);
	sb_session_info_clear(&info);
	sb_session_info_clear(&again);
}

Test(session, agent_on_bash_through_the_library)
{
	sbf_bash_image(&f);
	create_box(&f, "ag", SBF_BASH_IMAGE);
	agent_flow_lib("ag", "/bin/bash");

	/* 20 KB of input (a heredoc) arrives intact; the read waits for the prompt after its last line */
	struct sb_buf in = { 0 }, body = { 0 };
	for (int i = 0; i < 300; i++) {
		char line[80];
		int n = snprintf(line, sizeof(line), "line %05d %.60s\n", i,
				 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
		sb_buf_add(&body, line, (size_t)n);
	}
	sb_buf_add(&in, "cat > /tmp/f <<'EOF'\n", 21);
	sb_buf_add(&in, body.data, body.len);
	sb_buf_add(&in, "EOF\nwc -c < /tmp/f; md5sum < /tmp/f\n", 36);
	cr_assert_gt(body.len, 20000);
	char *want = tu_sh_out("printf '%%s' '%s' | md5sum", body.data);
	struct sb_session_read_result r;
	run_lib(&f, "ag", "0", in.data, NULL, &r);
	expect_prompt(&r, 0, want);
	char size[32];
	snprintf(size, sizeof(size), "%zu\r\n", body.len);
	cr_assert(memmem(r.output, r.len, size, strlen(size)), "%.*s", (int)r.len, r.output);
	sb_session_read_result_clear(&r);
	free(want);
	sb_buf_clear(&in);
	sb_buf_clear(&body);
}

Test(session, busybox_sh_works)
{
	struct sb_session_info info;
	struct sb_session_read_result r;

	create_box(&f, "bb", SBF_IMAGE);
	start_lib(&f, "bb", NULL, NULL, &info);
	cr_assert_str_eq(info.id, "0", "the first free number");
	run_lib(&f, "bb", "0", "cd /tmp && export X=1\n", NULL, &r);
	expect_prompt(&r, 0, NULL);
	sb_session_read_result_clear(&r);
	run_lib(&f, "bb", "0", "echo $X $PWD; (exit 3)\n", NULL, &r);
	expect_prompt(&r, 3, "1 /tmp\r\n");
	sb_session_read_result_clear(&r);
	sb_session_info_clear(&info);
}

/* ---- the CLI ---- */

/* session ARGS... (NULL-terminated, at most 12); with want_status 0 its stdout as JSON */
static json_t *cli_json(const char *const *env, int want_status, ...)
{
	const char *a[13] = { NULL };
	va_list ap;

	va_start(ap, want_status);
	for (int i = 0; i < 12 && (a[i] = va_arg(ap, const char *)); i++)
		;
	va_end(ap);
	struct tu_run r = tu_sandbench(f.dir, env, "session", a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9],
				       a[10], a[11], NULL);
	cr_assert_eq(r.status, want_status, "session %s %s %s %s: %d: %s", a[0], a[1], a[2], a[3] ? a[3] : "", r.status,
		     r.err);
	json_t *doc = want_status == 0 ? json_loads(r.out, 0, NULL) : NULL;
	if (want_status == 0)
		cr_assert_not_null(doc, "%s %s: JSON: %s (stderr %s)", a[0], a[1], r.out, r.err);
	tu_run_free(&r);
	return doc;
}

static long long jint(const json_t *doc, const char *key)
{
	return json_integer_value(json_object_get(doc, key));
}

static const char *jstr(const json_t *doc, const char *key)
{
	const char *s = json_string_value(json_object_get(doc, key));
	return s ? s : "";
}

/* session send, then session read --since that offset: two CLI calls */
static json_t *cli_run(const char *name, const char *id, const char *cmd, const char *wait_opt, const char *secs)
{
	json_t *sent = cli_json(NULL, 0, "send", name, id, "--json", "--", cmd, NULL, NULL);
	cr_assert(json_is_true(json_object_get(sent, "accepted")));
	char since[32];
	snprintf(since, sizeof(since), "%lld", jint(sent, "offset"));
	json_decref(sent);
	return cli_json(NULL, 0, "read", name, id, "--since", since, wait_opt ? wait_opt : "--max-wait",
			secs ? secs : "30", "--json", NULL);
}

static void cli_prompt(json_t *doc, int code, const char *has)
{
	cr_assert_str_eq(jstr(doc, "reason"), "prompt", "%s: %s", jstr(doc, "reason"), jstr(doc, "output"));
	cr_assert_str_eq(jstr(doc, "state"), "idle");
	cr_assert_eq(jint(doc, "exit_code"), code, "%s", jstr(doc, "output"));
	if (has)
		cr_assert(strstr(jstr(doc, "output"), has), "'%s' in '%s'", has, jstr(doc, "output"));
	json_decref(doc);
}

Test(session, agent_on_bash_through_the_cli)
{
	sbf_bash_image(&f);
	create_box(&f, "cl", SBF_BASH_IMAGE);
	json_t *st = cli_json(NULL, 0, "start", "cl", "a1", "--shell", "/bin/bash", "--json", NULL, NULL);
	cr_assert_str_eq(jstr(st, "sandbox"), "cl");
	cr_assert_str_eq(jstr(st, "id"), "a1");
	cr_assert_str_eq(jstr(st, "state"), "running");
	cr_assert_gt(jint(st, "pid"), 0);
	cr_assert(json_is_integer(json_object_get(st, "offset")) && json_is_integer(json_object_get(st, "created_at")));
	long long pid = jint(st, "pid");
	json_decref(st);

	cli_prompt(cli_run("cl", "a1", "cd /tmp && export X=1", NULL, NULL), 0, NULL);
	cli_prompt(cli_run("cl", "a1", "echo $X $PWD", NULL, NULL), 0, "1 /tmp\r\n");
	json_t *d = cli_run("cl", "a1", "printf 'Continue? [Y/n] '; read a; echo answer=$a", "--wait-idle", "20");
	cr_assert(json_is_true(json_object_get(d, "dialog")), "%s", jstr(d, "output"));
	cr_assert_str_eq(jstr(d, "reason"), "idle");
	json_decref(d);
	cli_prompt(cli_run("cl", "a1", "y", NULL, NULL), 0, "answer=y");

	json_t *sent = cli_run("cl", "a1", "echo sleeping; sleep 30", "--wait-idle", "0.3");
	cr_assert(strstr(jstr(sent, "output"), "sleeping") && !strcmp(jstr(sent, "reason"), "idle"));
	char since[32];
	snprintf(since, sizeof(since), "%lld", jint(sent, "offset"));
	json_decref(sent);
	json_decref(cli_json(NULL, 0, "send", "cl", "a1", "--ctrl", "c", "--json", NULL, NULL));
	cli_prompt(cli_json(NULL, 0, "read", "cl", "a1", "--since", since, "--max-wait", "20", "--json", NULL), 130, NULL);

	json_t *bg = cli_run("cl", "a1", "(read -t 1 x < /dev/zero; sleep 1; echo bg-done) &", NULL, NULL);
	snprintf(since, sizeof(since), "%lld", jint(bg, "offset"));
	cli_prompt(bg, 0, NULL);
	json_t *later = cli_json(NULL, 0, "read", "cl", "a1", "--since", since, "--wait-idle", "0.5", "--first-timeout", "20",
				 "--json", NULL);
	cr_assert(strstr(jstr(later, "output"), "bg-done"), "%s", jstr(later, "output"));
	json_decref(later);

	/* clean drops the escapes and carriage returns; screen renders the terminal */
	struct tu_run r = tu_sandbench(f.dir, NULL, "session", "send", "cl", "a1", "--", "printf 'ab\\rcd\\033[1mX\\n'", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	char off[32];
	snprintf(off, sizeof(off), "%lld", atoll(r.out));
	tu_run_free(&r);
	r = tu_sandbench(f.dir, NULL, "session", "read", "cl", "a1", "--since", off, "--max-wait", "20", "--format", "clean",
			 NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "cdX\n") && strstr(r.out, "root@cl:/tmp# ") && !strchr(r.out, '\033') && !strchr(r.out, '\r'),
		  "clean: %s", r.out);
	tu_run_free(&r);
	r = tu_sandbench(f.dir, NULL, "session", "read", "cl", "a1", "--since", off, "--format", "screen", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "cdX\n"), "screen: %s", r.out);
	tu_run_free(&r);

	/* ls names it; reset through the CLI: kill, then start gives a fresh shell */
	json_t *ls = cli_json(NULL, 0, "ls", "cl", "--json", NULL, NULL, NULL, NULL, NULL);
	cr_assert_eq(json_array_size(ls), 1);
	cr_assert_str_eq(jstr(json_array_get(ls, 0), "id"), "a1");
	cr_assert_eq(jint(json_array_get(ls, 0), "pid"), pid);
	json_decref(ls);
	r = tu_sandbench(f.dir, NULL, "session", "kill", "cl", "a1", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_run_free(&r);
	st = cli_json(NULL, 0, "start", "cl", "a1", "--shell", "/bin/bash", "--json", NULL, NULL);
	cr_assert_neq(jint(st, "pid"), pid);
	json_decref(st);
	cli_prompt(cli_run("cl", "a1", "echo ${X:-unset}", NULL, NULL), 0, "unset");
}

/* ---- control ---- */

Test(session, a_human_takes_over_and_the_agent_is_refused)
{
	struct sb_session_info info;
	struct sb_session *human, *watcher, *agent;
	struct sb_error err;

	create_box(&f, "tk", SBF_IMAGE);
	start_lib(&f, "tk", "w", NULL, &info);
	sb_session_info_clear(&info);
	cr_assert_eq(sb_session_connect(&watcher, f.root, "tk", "w", &err), 0, "%s", err.msg);
	cr_assert_eq(sb_session_subscribe(watcher, 0, &err), 0, "%s", err.msg);
	cr_assert_eq(sb_session_connect(&human, f.root, "tk", "w", &err), 0, "%s", err.msg);
	cr_assert_eq(sb_session_take(human, SB_SOURCE_WORKBENCH, &err), 0, "%s", err.msg);
	cr_assert_eq(sb_session_inspect(&info, f.root, "tk", "w", &err), 0, "%s", err.msg);
	cr_assert_str_eq(info.controller, "human");
	cr_assert_eq(info.watchers, 1, "watching is not control");
	sb_session_info_clear(&info);

	/* the agent: refused through the library and through the CLI (exit status 11) */
	cr_assert_eq(sb_session_connect(&agent, f.root, "tk", "w", &err), 0, "%s", err.msg);
	cr_assert_eq(sb_session_send(agent, NULL, "echo no\n", 8, SB_SOURCE_AGENT, &err), SB_ERR_BUSY);
	cr_assert(strstr(err.msg, "controlled by a human"), "%s", err.msg);
	cr_assert_eq(sb_session_take(agent, SB_SOURCE_HUMAN, &err), SB_ERR_BUSY, "one controller at a time");
	struct tu_run r = tu_sandbench(f.dir, NULL, "session", "send", "tk", "w", "--", "echo no", NULL);
	cr_assert_eq(r.status, 11, "%d %s", r.status, r.err);
	cr_assert(strstr(r.err, "controlled by a human"), "%s", r.err);
	tu_run_free(&r);

	/* the human types; the line is recorded with its source */
	unsigned long long off;
	cr_assert_eq(sb_session_send(human, &off, "echo typed-by-human\n", 20, SB_SOURCE_HUMAN, &err), 0, "%s", err.msg);
	struct sb_session_read_opts ro = { .since = (long long)off, .max_wait_ms = WAIT_MS };
	struct sb_session_read_result res;
	cr_assert_eq(sb_session_read(&res, f.root, "tk", "w", &ro, &err), 0, "%s", err.msg);
	expect_prompt(&res, 0, "typed-by-human");
	int found = 0;
	for (size_t i = 0; i < res.n_events; i++)
		found |= res.events[i].type == SB_EVENT_INPUT && res.events[i].source == SB_SOURCE_HUMAN &&
			 !strcmp(res.events[i].text, "echo typed-by-human");
	cr_assert(found, "the input event names the human");
	sb_session_read_result_clear(&res);
	/* and so does the sandbox's timeline */
	struct sb_timeline *tl;
	cr_assert_eq(sb_timeline_read(&tl, f.root, "tk", NULL, &err), 0, "%s", err.msg);
	found = 0;
	for (size_t i = 0; i < tl->count; i++)
		found |= tl->entries[i].kind == SB_TIMELINE_INPUT && tl->entries[i].source == SB_TIMELINE_HUMAN &&
			 tl->entries[i].text && !strcmp(tl->entries[i].text, "echo typed-by-human") &&
			 tl->entries[i].session && !strcmp(tl->entries[i].session, "w");
	sb_timeline_free(tl);
	cr_assert(found, "the timeline has the human's line");

	/* handed back: the agent may type again; closing the connection also hands back */
	cr_assert_eq(sb_session_release(human, &err), 0, "%s", err.msg);
	cr_assert_eq(sb_session_send(agent, NULL, "echo ok\n", 8, SB_SOURCE_AGENT, &err), 0, "%s", err.msg);
	cr_assert_eq(sb_session_take(human, SB_SOURCE_HUMAN, &err), 0, "%s", err.msg);
	sb_session_close(human);
	cr_assert_eq(sb_session_send(agent, NULL, "echo ok\n", 8, SB_SOURCE_AGENT, &err), 0, "%s", err.msg);

	/* the watcher saw the output and the agent's input as events */
	int saw_out = 0, saw_input = 0;
	struct sb_session_item it;
	long long deadline = sb_clock_monotonic_ms() + WAIT_MS;
	while (!(saw_out && saw_input) && sb_clock_monotonic_ms() < deadline) {
		struct pollfd p = { .fd = sb_session_fd(watcher), .events = POLLIN };
		poll(&p, 1, 1000);
		while (sb_session_next(watcher, &it, &err) == 1) {
			saw_out |= it.kind == SB_ITEM_OUTPUT && memmem(it.data, it.len, "typed-by-human", 14);
			saw_input |= it.kind == SB_ITEM_EVENT && it.event.type == SB_EVENT_INPUT &&
				     it.event.source == SB_SOURCE_AGENT;
		}
	}
	cr_assert(saw_out && saw_input);
	sb_session_close(watcher);
	sb_session_close(agent);
}

/* ---- secrets ---- */

Test(session, secret_values_stay_out_of_every_file)
{
	static const char value[] = "s3cr3t-V4lue-42";
	create_box(&f, "sec", SBF_IMAGE);
	json_decref(cli_json(NULL, 0, "start", "sec", "0", "--secret-env", "TOKEN=s3cr3t-V4lue-42", "--json", NULL, NULL));
	json_t *d = cli_run("sec", "0", "echo token=$TOKEN", NULL, NULL);
	cr_assert(strstr(jstr(d, "output"), "token=[secret TOKEN]"), "%s", jstr(d, "output"));
	cr_assert(!strstr(jstr(d, "output"), value));
	json_decref(d);
	json_decref(cli_run("sec", "0", "echo s3cr3t-V4lue-42 typed", NULL, NULL));
	struct tu_run k = tu_sandbench(f.dir, NULL, "session", "kill", "sec", "0", NULL);
	cr_assert_eq(k.status, 0, "%s", k.err);
	tu_run_free(&k);
	char *hits = tu_sh_out("grep -rlF -- '%s' '%s/sandboxes/sec' 2>/dev/null; true", value, f.dir);
	cr_assert_str_eq(hits, "", "the value is in: %s", hits);
	free(hits);
	char *events = tu_sh_out("cat '%s/sandboxes/sec/sessions/0/events.jsonl'", f.dir);
	cr_assert(strstr(events, "echo [secret TOKEN] typed"), "typed input redacted: %s", events);
	free(events);
}

/* ---- bad input ---- */

Test(session, unknown_names_states_and_offsets)
{
	struct sb_session_info info, again;
	struct sb_session_read_result r;
	struct sb_session *s;
	struct sb_error err;

	cr_assert_eq(sb_session_start(&info, f.root, "ghost", NULL, NULL, &err), SB_ERR_NOTFOUND);
	cr_assert_eq(sb_session_read(&r, f.root, "ghost", "0", NULL, &err), SB_ERR_NOTFOUND);
	cr_assert(strstr(err.msg, "ghost"), "%s", err.msg);
	create_box(&f, "bad", SBF_IMAGE);
	cr_assert_eq(sb_session_read(&r, f.root, "bad", "nope", NULL, &err), SB_ERR_NOTFOUND);
	cr_assert(strstr(err.msg, "sandbox 'bad' has no session 'nope'"), "%s", err.msg);
	cr_assert_eq(sb_session_connect(&s, f.root, "bad", "nope", &err), SB_ERR_NOTFOUND);
	cr_assert_eq(sb_session_kill(f.root, "bad", "nope", SIGTERM, &err), SB_ERR_NOTFOUND);
	cr_assert_eq(sb_session_start(&info, f.root, "bad", "../x", NULL, &err), SB_ERR_INVALID);
	struct tu_run t = tu_sandbench(f.dir, NULL, "session", "send", "bad", "nope", "--", "true", NULL);
	cr_assert_eq(t.status, 3, "not found: %s", t.err);
	tu_run_free(&t);

	/* a second start without --reuse; with it, the same session */
	start_lib(&f, "bad", "0", NULL, &info);
	cr_assert_eq(sb_session_start(&again, f.root, "bad", "0", NULL, &err), SB_ERR_EXISTS);
	cr_assert(strstr(err.msg, "--reuse"), "%s", err.msg);
	cr_assert_eq(sb_session_start(&again, f.root, "bad", "0", &(struct sb_session_opts){ .reuse = 1 }, &err), 0);
	cr_assert(again.reused);
	cr_assert_eq(again.pid, info.pid);
	sb_session_info_clear(&again);

	/* an offset past the end, live and after the end */
	struct sb_session_read_opts far = { .since = 1 << 30 };
	cr_assert_eq(sb_session_read(&r, f.root, "bad", "0", &far, &err), SB_ERR_INVALID);
	cr_assert(strstr(err.msg, "past the end"), "%s", err.msg);

	/* a client that disconnects mid-read, and one that sends garbage: the holder serves on */
	cr_assert_eq(sb_session_connect(&s, f.root, "bad", "0", &err), 0, "%s", err.msg);
	cr_assert_eq(sb_session_subscribe(s, 0, &err), 0, "%s", err.msg);
	sb_session_close(s);
	char *sock = sb_strdupf("%s/sandboxes/bad/sessions/0/sock", f.dir);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	cr_assert_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0, "%s", sock);
	cr_assert_eq(write(fd, "\xff\xff\xff\x7fgarbage", 11), 11);
	char c;
	cr_assert_leq(read(fd, &c, 1), 0, "the holder drops it");
	close(fd);
	free(sock);
	run_lib(&f, "bad", "0", "echo still-here\n", NULL, &r);
	expect_prompt(&r, 0, "still-here");
	sb_session_read_result_clear(&r);

	/* a stopped sandbox */
	cr_assert_eq(sb_sandbox_stop(f.root, "bad", NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(sb_session_start(&again, f.root, "bad", "1", NULL, &err), SB_ERR_STATE);
	cr_assert(strstr(err.msg, "not running"), "%s", err.msg);
	sb_session_info_clear(&info);
}

Test(session, a_flood_is_capped_and_dropped_is_counted)
{
	struct sb_session_opts o = { .log_cap = 64 << 10 };
	struct sb_session_info info;
	struct sb_session_read_result r;
	struct sb_error err;

	create_box(&f, "fl", SBF_IMAGE);
	/* a megabyte through the pty takes half a minute on a loaded machine: a
	 * deadline for a hang, not a time limit */
	struct sb_session_read_opts slow = { .max_wait_ms = 4 * WAIT_MS };

	start_lib(&f, "fl", "0", &o, &info);
	run_lib(&f, "fl", "0", "yes 0123456789abcdef | head -c 1000000; echo; echo flood-end\n", &slow, &r);
	/* a reader behind the cap gets the rest after a drop, still contiguous */
	cr_assert_eq(r.since + r.dropped + r.len, r.offset);
	expect_prompt(&r, 0, "flood-end");
	sb_session_read_result_clear(&r);
	struct sb_session_read_opts all = { .since = 0 };
	cr_assert_eq(sb_session_read(&r, f.root, "fl", "0", &all, &err), 0, "%s", err.msg);
	cr_assert_gt(r.dropped, 900000, "dropped %llu", r.dropped);
	cr_assert_leq(r.len, 64 << 10, "at most the cap: %zu", r.len);
	cr_assert_eq(r.since + r.dropped + r.len, r.offset);
	cr_assert_gt(r.offset, 1000000, "offsets stay absolute");
	sb_session_read_result_clear(&r);
	unsigned long long size = 0;
	char *dir = sb_strdupf("%s/sandboxes/fl/sessions/0", f.dir);
	cr_assert_eq(sb_fs_tree_size(&size, dir, &err), 0);
	cr_assert_lt(size, 200 << 10, "the log stays near its cap: %llu", size);
	free(dir);
	sb_session_info_clear(&info);
}

static int holder_gone(void *arg)
{
	struct sb_session_info info;
	int gone = sb_session_inspect(&info, f.root, "hk", arg, NULL) == 0 && info.state == SB_SESSION_EXITED;

	sb_session_info_clear(&info);
	return gone;
}

Test(session, a_holder_killed_with_sigkill_is_noticed_and_gc_cleans_up)
{
	struct sb_session_info info;
	struct sb_session_read_result r;
	struct sb_error err;

	create_box(&f, "hk", SBF_IMAGE);
	start_lib(&f, "hk", "0", NULL, &info);
	run_lib(&f, "hk", "0", "echo before-kill\n", NULL, &r);
	sb_session_read_result_clear(&r);
	cr_assert_eq(kill(info.pid, SIGKILL), 0);
	cr_assert(tu_wait_for(holder_gone, "0", WAIT_MS), "exited once its holder died");
	struct sb_session_info dead;
	cr_assert_eq(sb_session_inspect(&dead, f.root, "hk", "0", &err), 0, "%s", err.msg);
	cr_assert(strstr(dead.reason, "holder died"), "%s", dead.reason);
	sb_session_info_clear(&dead);
	struct sb_session *s;
	cr_assert_eq(sb_session_connect(&s, f.root, "hk", "0", &err), SB_ERR_STATE);
	cr_assert(strstr(err.msg, "has exited"), "%s", err.msg);
	struct sb_session_read_opts all = { .since = 0 };
	cr_assert_eq(sb_session_read(&r, f.root, "hk", "0", &all, &err), 0, "%s", err.msg);
	cr_assert_eq(r.reason, SB_READ_EXITED);
	cr_assert(memmem(r.output, r.len, "before-kill", 11), "the log survives");
	sb_session_read_result_clear(&r);

	struct tu_run g = tu_sandbench(f.dir, NULL, "gc", NULL);
	cr_assert_eq(g.status, 0, "%s", g.err);
	cr_assert(strstr(g.out, "hk/0"), "gc names it: %s", g.out);
	tu_run_free(&g);
	char *sock = sb_strdupf("%s/sandboxes/hk/sessions/0/sock", f.dir);
	struct stat st;
	cr_assert_neq(lstat(sock, &st), 0, "the stale socket is gone");
	free(sock);
	/* a file an older root left in sessions/ is skipped */
	char *junk = sb_strdupf("%s/sandboxes/hk/sessions/stale-file", f.dir);
	cr_assert_eq(sb_fs_write_atomic(junk, "x", 1, 0600, &err), 0);
	free(junk);
	struct sb_session_info *list;
	size_t n;
	cr_assert_eq(sb_session_list(&list, &n, f.root, "hk", &err), 0, "%s", err.msg);
	cr_assert_eq(n, 1);
	sb_session_list_free(list, n);
	sb_session_info_clear(&info);
}

Test(session, stop_ends_sessions_and_reuse_continues_the_log)
{
	struct sb_session_info info, again;
	struct sb_session_read_result r;
	struct sb_error err;

	create_box(&f, "sr", SBF_IMAGE);
	start_lib(&f, "sr", "0", NULL, &info);
	run_lib(&f, "sr", "0", "echo before-stop\n", NULL, &r);
	unsigned long long end = r.offset;
	sb_session_read_result_clear(&r);
	struct tu_run t = tu_sandbench(f.dir, NULL, "stop", "sr", NULL);
	cr_assert_eq(t.status, 0, "%s", t.err);
	cr_assert(strstr(t.err, "ended session '0'"), "stop says which: %s", t.err);
	tu_run_free(&t);
	cr_assert_eq(sb_session_inspect(&again, f.root, "sr", "0", &err), 0, "%s", err.msg);
	cr_assert_eq(again.state, SB_SESSION_EXITED);
	cr_assert(strstr(again.reason, "stopped"), "%s", again.reason);
	sb_session_info_clear(&again);
	struct sb_sandbox_info box;
	cr_assert_eq(sb_sandbox_restore(f.root, "sr", &err), 0, "%s", err.msg);
	cr_assert_eq(sb_sandbox_inspect(&box, f.root, "sr", NULL), 0);
	cr_assert(strstr(box.rec.reason, "restored from checkpoint"), "no live pty spoilt it: %s", box.rec.reason);
	sb_sandbox_info_clear(&box);
	start_lib(&f, "sr", "0", &(struct sb_session_opts){ .reuse = 1 }, &again);
	cr_assert(!again.reused, "a fresh shell in the same id");
	cr_assert_geq(again.offset, end, "the log continues");
	run_lib(&f, "sr", "0", "echo after-restore\n", NULL, &r);
	expect_prompt(&r, 0, "after-restore");
	sb_session_read_result_clear(&r);
	struct sb_session_read_opts all = { .since = 0 };
	cr_assert_eq(sb_session_read(&r, f.root, "sr", "0", &all, &err), 0, "%s", err.msg);
	cr_assert(memmem(r.output, r.len, "before-stop", 11) && memmem(r.output, r.len, "after-restore", 13));
	int restart = 0;
	for (size_t i = 0; i < r.n_events; i++)
		restart |= r.events[i].type == SB_EVENT_RESTART && r.events[i].offset >= end;
	cr_assert(restart, "a restart marker in the events");
	sb_session_read_result_clear(&r);
	cr_assert_eq(sb_sandbox_remove(f.root, "sr", 0, &err), 0, "%s", err.msg);
	char *dir = sb_strdupf("%s/sandboxes/sr", f.dir);
	struct stat st;
	cr_assert_neq(stat(dir, &st), 0, "rm removes the sessions with the sandbox");
	free(dir);
	sb_session_info_clear(&info);
	sb_session_info_clear(&again);
}

Test(session, the_longest_name_under_a_long_root)
{
	struct sbf lf;
	struct sb_session_info info;
	struct sb_session_read_result r;
	char name[64];

	sbf_setup(&lf, "session-a-long-state-root-for-sun-path");
	memset(name, 'n', 63);
	name[63] = '\0';
	create_box(&lf, name, SBF_IMAGE);
	char *sock = sb_strdupf("%s/sandboxes/%s/sessions/0/sock", lf.dir, name);
	cr_assert_gt(strlen(sock), sizeof(((struct sockaddr_un *)0)->sun_path), "%zu", strlen(sock));
	free(sock);
	start_lib(&lf, name, "0", NULL, &info);
	run_lib(&lf, name, "0", "echo long-ok\n", NULL, &r);
	expect_prompt(&r, 0, "long-ok");
	sb_session_read_result_clear(&r);
	sb_session_info_clear(&info);
	sbf_teardown(&lf);
}

/* ---- attach ---- */

struct attached {
	pid_t pid;
	int in, out;                 /* its stdin (write end), its stdout (read end) */
	struct sb_buf seen;
};

static void attach_start(struct attached *a, const char *name, const char *id, int read_only)
{
	int in[2], out[2];
	char *bin = tu_buildpath("sandbench");

	cr_assert(pipe2(in, O_CLOEXEC) == 0 && pipe2(out, O_CLOEXEC) == 0);
	memset(a, 0, sizeof(*a));
	a->pid = fork();
	if (a->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		execl(bin, bin, "--root", f.dir, "session", "attach", name, id, read_only ? "--read-only" : NULL, NULL);
		_exit(127);
	}
	sb_proc_keep(a->pid, 1);
	close(in[0]);
	close(out[1]);
	a->in = in[1];
	a->out = out[0];
	free(bin);
}

/* what it shows, until want appears (or within_ms pass) */
static int attach_shows_within(struct attached *a, const char *want, int within_ms)
{
	long long deadline = sb_clock_monotonic_ms() + within_ms;

	while (!(a->seen.data && strstr(a->seen.data, want)) && sb_clock_monotonic_ms() < deadline) {
		struct pollfd p = { .fd = a->out, .events = POLLIN };
		char buf[4096];
		if (poll(&p, 1, 1000) <= 0)
			continue;
		ssize_t n = read(a->out, buf, sizeof(buf));
		if (n <= 0)
			break;
		sb_buf_add(&a->seen, buf, (size_t)n);
	}
	return a->seen.data && strstr(a->seen.data, want);
}

static int attach_shows(struct attached *a, const char *want)
{
	return attach_shows_within(a, want, WAIT_MS);
}

/* its exit (killed after the deadline), reading what it shows meanwhile; its
 * output end is closed, its input end is the caller's */
static int attach_reap(struct attached *a)
{
	int status = -1;
	long long deadline = sb_clock_monotonic_ms() + WAIT_MS;
	while (waitpid(a->pid, &status, WNOHANG) == 0 && sb_clock_monotonic_ms() < deadline) {
		struct pollfd p = { .fd = a->out, .events = POLLIN };
		char buf[4096];
		if (poll(&p, 1, 100) > 0 && read(a->out, buf, sizeof(buf)) <= 0)
			poll(NULL, 0, 10);
	}
	if (waitpid(a->pid, &status, WNOHANG) == 0) {
		kill(a->pid, SIGKILL);
		waitpid(a->pid, &status, 0);
	}
	sb_proc_keep(a->pid, 0);
	close(a->out);
	sb_buf_clear(&a->seen);
	return status;
}

/* its input closed (a watcher: SIGTERM), then its exit */
static int attach_end(struct attached *a, int term)
{
	close(a->in);
	if (term)
		kill(a->pid, SIGTERM);
	return attach_reap(a);
}

/* a sandbox of the busybox image with session 0 running in it */
static void box_with_session(const char *name)
{
	struct sb_session_info info;

	create_box(&f, name, SBF_IMAGE);
	start_lib(&f, name, "0", NULL, &info);
	sb_session_info_clear(&info);
}

/* session 0 of the sandbox has this many watchers */
struct watch {
	const char *name;
	int watchers;
};

static int watched(void *arg)
{
	const struct watch *w = arg;
	struct sb_session_info info;
	int yes = sb_session_inspect(&info, f.root, w->name, "0", NULL) == 0 && info.watchers == w->watchers;

	sb_session_info_clear(&info);
	return yes;
}

Test(session, attach_watches_and_takes_control)
{
	struct sb_session_read_result r;
	struct attached a;

	box_with_session("at");
	run_lib(&f, "at", "0", "echo backlog-line\n", NULL, &r);
	sb_session_read_result_clear(&r);

	/* read-only: the backlog, then what the agent types (inline) and its output */
	attach_start(&a, "at", "0", 1);
	cr_assert(attach_shows(&a, "backlog-line"), "%s", a.seen.data ? a.seen.data : "");
	cr_assert(tu_wait_for(watched, &(struct watch){ "at", 1 }, WAIT_MS), "one watcher");
	run_lib(&f, "at", "0", "echo from-agent\n", NULL, &r);
	sb_session_read_result_clear(&r);
	cr_assert(attach_shows(&a, "echo from-agent\r\nfrom-agent"), "%s", a.seen.data ? a.seen.data : "");
	int status = attach_end(&a, 1);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a watcher leaves on TERM: %d", status);

	/* attached: the human types, the agent is refused until the human leaves */
	attach_start(&a, "at", "0", 0);
	cr_assert(tu_wait_for(watched, &(struct watch){ "at", 1 }, WAIT_MS), "attached");
	cr_assert_eq(write(a.in, "echo from-human\r", 16), 16);
	cr_assert(attach_shows(&a, "\nfrom-human"), "%s", a.seen.data ? a.seen.data : "");
	struct tu_run t = tu_sandbench(f.dir, NULL, "session", "send", "at", "0", "--", "true", NULL);
	cr_assert_eq(t.status, 11, "refused while attached: %d %s", t.status, t.err);
	tu_run_free(&t);
	status = attach_end(&a, 0);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "attach ends with its input: %d", status);
	run_lib(&f, "at", "0", "echo handed-back\n", NULL, &r);
	expect_prompt(&r, 0, "handed-back");
	sb_session_read_result_clear(&r);
}

static long long activity_of(const char *name)
{
	struct sb_sandbox_info info;

	cr_assert_eq(sb_sandbox_inspect(&info, f.root, name, NULL), 0);
	long long at = info.last_activity;
	sb_sandbox_info_clear(&info);
	return at;
}

static int sleeping(void *name)
{
	struct tu_run r = tu_sandbench(f.dir, NULL, "exec", name, "--", "sh", "-c", "ps | grep -c '[s]leep 1000'", NULL);
	int yes = r.status == 0 && !strcmp(r.out, "1\n");

	tu_run_free(&r);
	return yes;
}

/* Session 0 of sandbox "at" has shown the text since an offset. */
struct shown {
	long long since;
	const char *text;
};

static int at_shows(void *arg)
{
	const struct shown *w = arg;
	struct sb_session_read_opts o = { .max_wait_ms = 200, .since = w->since };
	struct sb_session_read_result r = { 0 };
	int yes = sb_session_read(&r, f.root, "at", "0", &o, NULL) == 0 && memmem(r.output, r.len, w->text, strlen(w->text));

	sb_session_read_result_clear(&r);
	return yes;
}

/* Input is activity; output and watching are not. An interrupt ends the
 * foreground job only; Ctrl-] detaches and hands control back; `send -`
 * types standard input. */
Test(session, activity_interrupt_detach_and_input_from_stdin)
{
	struct sb_session_read_result r;
	struct attached a;

	box_with_session("at");

	/* the guest's sleep makes its output come 2 s after the input */
	struct sb_session *s;
	struct sb_error err;
	unsigned long long off;
	const char *late = "sleep 2; echo late-$((6*7))\n";
	cr_assert_eq(sb_session_connect(&s, f.root, "at", "0", &err), 0, "%s", err.msg);
	cr_assert_eq(sb_session_send(s, &off, late, strlen(late), SB_SOURCE_AGENT, &err), 0, "%s", err.msg);
	sb_session_close(s);
	long long typed = activity_of("at");
	attach_start(&a, "at", "0", 1);
	cr_assert(tu_wait_for(watched, &(struct watch){ "at", 1 }, WAIT_MS), "one watcher");
	cr_assert(attach_shows(&a, "late-42"), "%s", a.seen.data ? a.seen.data : "");
	attach_end(&a, 1);
	cr_assert_eq(activity_of("at"), typed, "output or a watcher counted as activity");
	/* its prompt too, before the next line: ash's prompt does not say whether
	 * more input waits, so a late one would pass for the next line's */
	struct sb_session_read_opts back = { .max_wait_ms = WAIT_MS, .since = (long long)off };
	cr_assert_eq(sb_session_read(&r, f.root, "at", "0", &back, &err), 0, "%s", err.msg);
	expect_prompt(&r, 0, "late-42");
	sb_session_read_result_clear(&r);

	/* INT ends the foreground job; the shell and the session live on */
	cr_assert_eq(sb_session_connect(&s, f.root, "at", "0", &err), 0, "%s", err.msg);
	cr_assert_eq(sb_session_send(s, &off, "sleep 1000\n", 11, SB_SOURCE_AGENT, &err), 0, "%s", err.msg);
	sb_session_close(s);
	/* an interrupt before the job runs would reach the prompt instead */
	cr_assert(tu_wait_for(sleeping, "at", WAIT_MS), "the job never started");
	struct tu_run t = tu_sandbench(f.dir, NULL, "session", "kill", "at", "0", "--signal", "INT", NULL);
	cr_assert_eq(t.status, 0, "%s", t.err);
	tu_run_free(&t);
	struct sb_session_read_opts o = { .max_wait_ms = WAIT_MS, .since = (long long)off };
	cr_assert_eq(sb_session_read(&r, f.root, "at", "0", &o, &err), 0, "%s", err.msg);
	expect_prompt(&r, 130, NULL);
	sb_session_read_result_clear(&r);

	/* Ctrl-] detaches the one in control: the session stays, the agent may type */
	attach_start(&a, "at", "0", 0);
	cr_assert(tu_wait_for(watched, &(struct watch){ "at", 1 }, WAIT_MS), "attached");
	cr_assert_eq(write(a.in, "echo by-hand\r", 13), 13);
	cr_assert(attach_shows(&a, "\nby-hand"), "%s", a.seen.data ? a.seen.data : "");
	cr_assert_eq(write(a.in, "\x1d", 1), 1);
	int status = attach_reap(&a);
	close(a.in);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "Ctrl-] ends attach with its input still open: %d", status);

	/* `send -`: the input comes from standard input, as it is */
	char *bin = tu_buildpath("sandbench");
	cr_assert_eq(tu_sh("printf 'echo from-$((40+2))-stdin\\n' | '%s' --root '%s' session send at 0 - >/dev/null", bin,
			   f.dir),
		     0);
	free(bin);
	/* a read may end at the prompt before the line is echoed: wait for it */
	cr_assert(tu_wait_for(at_shows, &(struct shown){ (long long)off, "from-42-stdin" }, WAIT_MS),
		  "the line from standard input never showed");
}

/* On a terminal, attach follows its size: a resize reaches the session's pty. */
Test(session, attach_on_a_terminal_follows_its_size)
{
	int master, slave;
	char *bin = tu_buildpath("sandbench");

	box_with_session("tty");
	cr_assert_eq(openpty(&master, &slave, NULL, NULL, &(struct winsize){ .ws_row = 24, .ws_col = 80 }), 0);
	pid_t pid = fork();
	if (pid == 0) {
		setsid();
		ioctl(slave, TIOCSCTTY, 0);
		dup2(slave, 0);
		dup2(slave, 1);
		dup2(slave, 2);
		execl(bin, bin, "--root", f.dir, "session", "attach", "tty", "0", NULL);
		_exit(127);
	}
	sb_proc_keep(pid, 1);
	close(slave);
	free(bin);
	struct attached a = { .pid = pid, .in = master, .out = dup(master) };
	cr_assert(attach_shows(&a, "you have control"), "%s", a.seen.data ? a.seen.data : "");
	cr_assert(tu_wait_for(watched, &(struct watch){ "tty", 1 }, WAIT_MS), "attached");
	cr_assert_eq(ioctl(master, TIOCSWINSZ, &(struct winsize){ .ws_row = 33, .ws_col = 99 }), 0);
	/* typed until the new size shows: the resize and the typing race */
	long long deadline = sb_clock_monotonic_ms() + WAIT_MS;
	int seen = 0;
	while (!seen && sb_clock_monotonic_ms() < deadline) {
		cr_assert_eq(write(master, "stty size\r", 10), 10);
		seen = attach_shows_within(&a, "33 99", 1000);
	}
	cr_assert(seen, "the session's pty kept its size: %s", a.seen.data ? a.seen.data : "");
	cr_assert_eq(write(master, "\x1d", 1), 1);
	int status = attach_end(&a, 0);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%d", status);
}
