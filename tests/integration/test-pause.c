/* pause and resume with real runsc: a paused sandbox's processes stop and
 * carry on after resume, it shows as paused everywhere; an exec, a session's
 * input or a copy resumes it and the timeline says so; stop, rm, gc and reap
 * of a paused sandbox work (runsc's delete -force of a frozen container
 * panics: they resume it first); the tiered expiry pause,stop=D pauses, then
 * stops, moved along by the injected clock; bad input gets a clear error.
 * Pause and resume go without the runsc CLI on this runsc build (freeze.c),
 * through it on any other, and the two take turns on one sandbox. */
#include "config.h"

#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/fs.h"
#include "sandbox/sandbox.h"
#include "session/session.h"
#include "sbfixture.h"
#include "testutil.h"

#define WAIT_MS 30000

static struct sbf f;

static void setup(void)
{
	sbf_setup(&f, "pause");
}

static void teardown(void)
{
	sbf_teardown(&f);
}

TestSuite(pause, .init = setup, .fini = teardown, .timeout = 300);

#define SB(...) tu_sandbench(f.dir, NULL, __VA_ARGS__, NULL)

static void ok(struct tu_run r, const char *what)
{
	sbf_ok(r, what);
}

static void create(const char *name, const char *const *env, const char *extra1, const char *extra2)
{
	struct tu_run r = tu_sandbench(f.dir, env, "create", name, "--image", SBF_IMAGE, extra1 ? extra1 : "--permanent",
				       extra2, NULL);
	cr_assert_eq(r.status, 0, "create %s: %s", name, r.err);
	tu_run_free(&r);
}

static enum sb_sandbox_state state_of(const char *name)
{
	struct sb_sandbox_info info;
	cr_assert_eq(sb_sandbox_inspect(&info, f.root, name, NULL), 0, "inspect %s", name);
	enum sb_sandbox_state s = info.rec.state;
	sb_sandbox_info_clear(&info);
	return s;
}

/* The state runsc itself reports for the container of name. */
static char *runsc_status(const char *name)
{
	struct sb_sandbox_info info;
	cr_assert_eq(sb_sandbox_inspect(&info, f.root, name, NULL), 0);
	char *s = tu_sh_out("timeout 20 runsc --root %s/runsc state %s 2>/dev/null | sed -n 's/.*\"status\": *\"\\([a-z]*\\)\".*/\\1/p'",
			    f.dir, info.rec.id);
	sb_sandbox_info_clear(&info);
	return s;
}

/* The counter a guest loop writes to its workspace, read on the host. */
struct counter {
	char *path;
	long above;
};

static long counter_value(const char *path)
{
	char *text = NULL;
	long v = -1;
	if (sb_fs_read_file(&text, NULL, path, 64, NULL) == 0)
		v = atol(text);
	free(text);
	return v;
}

static int counter_above(void *arg)
{
	struct counter *c = arg;
	return counter_value(c->path) > c->above;
}

static char *start_counter(const char *name)
{
	/* every 50 ms, renamed into place so that the host never reads half a number */
	ok(SB("exec", name, "--", "sh", "-c",
	      "(i=0; while :; do i=$((i+1)); echo $i > /workspace/n.new; mv /workspace/n.new /workspace/n; "
	      "sleep 0.05; done) >/dev/null 2>&1 &"),
	   "start the counter");
	char *path = sb_strdupf("%s/sandboxes/%s/workspace/n", f.dir, name);
	struct counter c = { path, 2 };
	cr_assert(tu_wait_for(counter_above, &c, WAIT_MS), "the counter of %s runs", name);
	return path;
}

/* The timeline of name as JSON lines, joined. */
static char *timeline(const char *name)
{
	struct tu_run r = SB("timeline", name, "--json");
	cr_assert_eq(r.status, 0, "%s", r.err);
	char *out = r.out;
	r.out = NULL;
	tu_run_free(&r);
	return out;
}

static const char *json_state(json_t *doc)
{
	const char *s = json_string_value(json_object_get(doc, "state"));
	return s ? s : "";
}

static void expect_listed_paused(const char *name)
{
	struct tu_run r = SB("ls", "--json");
	cr_assert_eq(r.status, 0, "%s", r.err);
	json_t *doc = json_loads(r.out, 0, NULL), *s;
	size_t i;
	int seen = 0;
	json_array_foreach(doc, i, s) {
		if (!strcmp(json_string_value(json_object_get(s, "name")), name)) {
			cr_assert_str_eq(json_state(s), "paused", "ls --json");
			seen = 1;
		}
	}
	cr_assert(seen, "%s listed: %s", name, r.out);
	json_decref(doc);
	tu_run_free(&r);
	r = SB("ls");
	cr_assert(strstr(r.out, "paused"), "ls shows the state: %s", r.out);
	tu_run_free(&r);
	r = SB("inspect", name, "--json");
	doc = json_loads(r.out, 0, NULL);
	cr_assert_str_eq(json_state(doc), "paused", "inspect --json");
	json_decref(doc);
	tu_run_free(&r);
	r = SB("inspect", name);
	cr_assert(strstr(r.out, "paused"), "inspect: %s", r.out);
	tu_run_free(&r);
}

/* The environment that sends sandbench's log to f.dir/log (sbf_take_log). */
static char *log_env[2], log_setting[600];

static const char *const *with_log(void)
{
	snprintf(log_setting, sizeof(log_setting), "SANDBENCH_LOG=%s/log", f.dir);
	log_env[0] = log_setting;
	return (const char *const *)log_env;
}

static char *id_of(const char *name)
{
	struct sb_sandbox_info info;
	cr_assert_eq(sb_sandbox_inspect(&info, f.root, name, NULL), 0, "inspect %s", name);
	char *id = strdup(info.rec.id);
	sb_sandbox_info_clear(&info);
	return id;
}

/* Asserts how the last runs froze or thawed name's container: "direct"
 * (over its control socket, no runsc started) or through the runsc CLI. */
static void expect_path(const char *name, const char *verb, int direct, const char *why)
{
	char *log = sbf_take_log(&f), *id = id_of(name);
	char *done = sb_strdupf("runsc %s %s: direct", verb, id), *cli = sb_strdupf("runsc %s %s\n", verb, id);
	if (direct) {
		cr_assert(strstr(log, done), "%s %s without the runsc CLI: %s", verb, name, log);
		cr_assert(!strstr(log, cli), "%s %s started no runsc: %s", verb, name, log);
	} else {
		cr_assert(strstr(log, cli), "%s %s through the runsc CLI: %s", verb, name, log);
		cr_assert(!strstr(log, done), "%s %s: %s", verb, name, log);
		cr_assert(strstr(log, why), "%s %s through the CLI because '%s': %s", verb, name, why, log);
	}
	free(done);
	free(cli);
	free(id);
	free(log);
}

Test(pause, a_counter_stops_while_paused_and_carries_on_after_resume)
{
	create("frozen", NULL, NULL, NULL);
	create("clock", NULL, NULL, NULL);
	char *n = start_counter("frozen");
	/* the clock sandbox's counter is the test's measure of time passing */
	char *clock = start_counter("clock");

	/* this runsc build's protocol was measured: no runsc is started */
	ok(tu_sandbench(f.dir, with_log(), "pause", "frozen", NULL), "pause");
	expect_path("frozen", "pause", 1, NULL);
	cr_assert_eq(state_of("frozen"), SB_STATE_PAUSED);
	char *st = runsc_status("frozen");
	cr_assert_str_eq(st, "paused", "runsc's own state");
	free(st);
	expect_listed_paused("frozen");
	long at_pause = counter_value(n);
	struct counter tick = { clock, counter_value(clock) + 10 };
	cr_assert(tu_wait_for(counter_above, &tick, WAIT_MS), "the clock sandbox counted on");
	cr_assert_eq(counter_value(n), at_pause, "the paused counter stood still while the other counted 10");
	cr_assert_eq(state_of("frozen"), SB_STATE_PAUSED, "listing and inspecting did not wake it");

	ok(tu_sandbench(f.dir, with_log(), "resume", "frozen", NULL), "resume");
	expect_path("frozen", "resume", 1, NULL);
	cr_assert_eq(state_of("frozen"), SB_STATE_RUNNING);
	st = runsc_status("frozen");
	cr_assert_str_eq(st, "running", "runsc's own state follows the direct resume");
	free(st);
	struct counter on = { n, at_pause };
	cr_assert(tu_wait_for(counter_above, &on, WAIT_MS), "the counter carries on after resume");
	cr_assert(counter_value(n) < at_pause + 100, "from where it was (%ld, paused at %ld): not restarted", counter_value(n),
		  at_pause);

	char *tl = timeline("frozen");
	cr_assert(strstr(tl, "\"text\":\"paused\"") && strstr(tl, "paused by user"), "pause in the timeline: %s", tl);
	cr_assert(strstr(tl, "resumed by user"), "resume in the timeline: %s", tl);
	free(tl);
	free(n);
	free(clock);
	sbf_assert_reconciled(&f, "after pause and resume");
}

/* The counter at path stands still while clock's counts on by 10. */
static void expect_frozen(const char *path, const char *clock, const char *what)
{
	long at = counter_value(path);
	struct counter tick = { (char *)clock, counter_value(clock) + 10 };
	cr_assert(tu_wait_for(counter_above, &tick, WAIT_MS), "the clock sandbox counted on");
	cr_assert_eq(counter_value(path), at, "%s: the paused counter stood still while the other counted 10", what);
}

static void expect_counting(const char *path, const char *what)
{
	struct counter on = { (char *)path, counter_value(path) };
	cr_assert(tu_wait_for(counter_above, &on, WAIT_MS), "%s: the counter carries on", what);
}

Test(pause, another_runsc_build_uses_the_cli_and_both_paths_take_turns)
{
	/* the same runsc as another build: a copy has another modification time */
	cr_assert_eq(tu_sh("cp \"$(command -v runsc)\" %s/runsc-other", f.dir), 0);
	char *other = sb_strdupf("SANDBENCH_RUNSC=%s/runsc-other", f.dir);
	const char *other_env[] = { other, with_log()[0], NULL };
	const char *why = "not a runsc build whose protocol was measured";

	create("turns", NULL, NULL, NULL);
	create("clock", NULL, NULL, NULL);
	char *n = start_counter("turns"), *clock = start_counter("clock");

	/* paused without the CLI, resumed by the other build's CLI: runsc's own
	 * state said paused, or its resume would have refused */
	ok(tu_sandbench(f.dir, with_log(), "pause", "turns", NULL), "pause");
	expect_path("turns", "pause", 1, NULL);
	expect_frozen(n, clock, "paused without the CLI");
	ok(tu_sandbench(f.dir, other_env, "resume", "turns", NULL), "resume by another build");
	expect_path("turns", "resume", 0, why);
	expect_counting(n, "resumed by the CLI");

	/* paused by the other build's CLI, resumed without it */
	ok(tu_sandbench(f.dir, other_env, "pause", "turns", NULL), "pause by another build");
	expect_path("turns", "pause", 0, why);
	char *st = runsc_status("turns");
	cr_assert_str_eq(st, "paused");
	free(st);
	expect_frozen(n, clock, "paused by the CLI");
	ok(tu_sandbench(f.dir, with_log(), "resume", "turns", NULL), "resume");
	expect_path("turns", "resume", 1, NULL);
	expect_counting(n, "resumed without the CLI");

	/* runsc's state is the guard: resumed behind sandbench's back, the
	 * sandbox is not sent a second resume (its sentry would panic); the
	 * CLI refuses, the sandbox runs on and gc mends the record */
	ok(tu_sandbench(f.dir, with_log(), "pause", "turns", NULL), "pause");
	cr_assert_eq(tu_sh("timeout 20 runsc --root %s/runsc resume %s", f.dir, id_of("turns")), 0);
	free(sbf_take_log(&f));
	struct tu_run r = tu_sandbench(f.dir, with_log(), "resume", "turns", NULL);
	cr_assert_neq(r.status, 0, "the CLI refuses to resume a running container");
	tu_run_free(&r);
	expect_path("turns", "resume", 0, "runsc says it is not paused");
	expect_counting(n, "the sandbox was not harmed");
	ok(SB("gc"), "gc");
	cr_assert_eq(state_of("turns"), SB_STATE_RUNNING);
	free(n);
	free(clock);
	free(other);
	sbf_assert_reconciled(&f, "after pauses and resumes of both paths");
}

Test(pause, exec_session_input_and_copy_resume_a_paused_sandbox)
{
	struct sb_session_info info;
	struct sb_error err;

	create("wake", NULL, NULL, NULL);
	ok(SB("pause", "wake"), "pause");
	struct tu_run r = SB("exec", "wake", "--", "echo", "awake");
	cr_assert_eq(r.status, 0, "exec on a paused sandbox: %s", r.err);
	cr_assert_str_eq(r.out, "awake\n");
	tu_run_free(&r);
	cr_assert_eq(state_of("wake"), SB_STATE_RUNNING, "the exec resumed it");
	char *tl = timeline("wake");
	cr_assert(strstr(tl, "resumed transparently: a command is run in it"), "%s", tl);
	free(tl);

	/* a session opened before the pause: its next input resumes the sandbox */
	cr_assert_eq(sb_session_start(&info, f.root, "wake", "0", NULL, &err), 0, "%s", err.msg);
	sb_session_info_clear(&info);
	ok(SB("pause", "wake"), "pause again");
	struct sb_session *s;
	unsigned long long off;
	cr_assert_eq(sb_session_connect(&s, f.root, "wake", "0", &err), 0, "%s", err.msg);
	cr_assert_eq(sb_session_send(s, &off, "echo $((6*7))\n", 14, SB_SOURCE_AGENT, &err), 0, "%s", err.msg);
	sb_session_close(s);
	struct sb_session_read_result rr;
	struct sb_session_read_opts ro = { .since = (long long)off, .max_wait_ms = WAIT_MS };
	cr_assert_eq(sb_session_read(&rr, f.root, "wake", "0", &ro, &err), 0, "%s", err.msg);
	cr_assert(memmem(rr.output, rr.len, "42", 2), "the command ran after the input woke it: '%.*s'", (int)rr.len,
		  rr.output);
	sb_session_read_result_clear(&rr);
	cr_assert_eq(state_of("wake"), SB_STATE_RUNNING);
	tl = timeline("wake");
	cr_assert(strstr(tl, "resumed transparently: input to a shell or session in it"), "%s", tl);
	free(tl);

	/* a session started in a paused sandbox */
	ok(SB("pause", "wake"), "pause a third time");
	cr_assert_eq(sb_session_start(&info, f.root, "wake", "1", NULL, &err), 0, "%s", err.msg);
	sb_session_info_clear(&info);
	cr_assert_eq(state_of("wake"), SB_STATE_RUNNING, "session start resumed it");

	/* a copy into a paused sandbox */
	ok(SB("pause", "wake"), "pause a fourth time");
	char *host = sb_strdupf("%s/in.txt", f.dir);
	cr_assert_eq(tu_sh("echo copied > %s", host), 0);
	ok(SB("cp", host, "wake:/tmp/in.txt"), "cp into a paused sandbox");
	cr_assert_eq(state_of("wake"), SB_STATE_RUNNING, "cp resumed it");
	r = SB("exec", "wake", "--", "cat", "/tmp/in.txt");
	cr_assert_str_eq(r.out, "copied\n");
	tu_run_free(&r);
	free(host);
	cr_assert_eq(sb_session_kill(f.root, "wake", "0", 9, NULL), 0);
	cr_assert_eq(sb_session_kill(f.root, "wake", "1", 9, NULL), 0);
}

Test(pause, stop_rm_gc_and_reap_of_a_paused_sandbox)
{
	char env_now[64], env_later[64];
	long long now = sb_clock_now();
	snprintf(env_now, sizeof(env_now), "SANDBENCH_NOW=%lld", now);
	snprintf(env_later, sizeof(env_later), "SANDBENCH_NOW=%lld", now + 600);
	const char *at_now[] = { env_now, NULL }, *later[] = { env_later, NULL };

	/* stop: resumed, then checkpointed; restore brings it back */
	create("st", NULL, NULL, NULL);
	char *n = start_counter("st");
	ok(SB("pause", "st"), "pause st");
	ok(SB("stop", "st"), "stop of a paused sandbox");
	cr_assert_eq(state_of("st"), SB_STATE_STOPPED);
	struct sb_sandbox_info info;
	cr_assert_eq(sb_sandbox_inspect(&info, f.root, "st", NULL), 0);
	cr_assert(info.has_checkpoint, "memory kept on disk");
	sb_sandbox_info_clear(&info);
	char *tl = timeline("st");
	cr_assert(strstr(tl, "resumed to be stopped"), "%s", tl);
	free(tl);
	ok(SB("restore", "st"), "restore");
	struct counter on = { n, counter_value(n) };
	cr_assert(tu_wait_for(counter_above, &on, WAIT_MS), "the counter carries on after stop and restore");
	free(n);

	/* rm */
	create("gone", NULL, NULL, NULL);
	cr_assert_eq(sb_sandbox_inspect(&info, f.root, "gone", NULL), 0);
	char *id = strdup(info.rec.id);
	sb_sandbox_info_clear(&info);
	ok(SB("pause", "gone"), "pause gone");
	ok(SB("rm", "gone"), "rm of a paused sandbox");
	cr_assert_eq(sb_sandbox_inspect(&info, f.root, "gone", NULL), SB_ERR_NOTFOUND);
	cr_assert(!sbf_runsc_has(&f, id), "its container is gone");
	free(id);

	/* gc leaves a paused sandbox paused, and mends a pause the record missed */
	create("kept", NULL, NULL, NULL);
	ok(SB("pause", "kept"), "pause kept");
	ok(SB("gc"), "gc with a paused sandbox");
	cr_assert_eq(state_of("kept"), SB_STATE_PAUSED, "gc left it paused");
	cr_assert_eq(sb_sandbox_inspect(&info, f.root, "kept", NULL), 0);
	/* a resume that died after runsc and before the record */
	cr_assert_eq(tu_sh("timeout 20 runsc --root %s/runsc resume %s", f.dir, info.rec.id), 0);
	ok(SB("gc"), "gc after a half-done resume");
	cr_assert_eq(state_of("kept"), SB_STATE_RUNNING, "gc: the record follows the container");
	/* a pause that died after runsc and before the record */
	cr_assert_eq(tu_sh("timeout 20 runsc --root %s/runsc pause %s", f.dir, info.rec.id), 0);
	ok(SB("gc"), "gc after a half-done pause");
	cr_assert_eq(state_of("kept"), SB_STATE_RUNNING);
	char *st = runsc_status("kept");
	cr_assert_str_eq(st, "running", "gc resumed the frozen container");
	free(st);
	sb_sandbox_info_clear(&info);
	struct tu_run r = SB("exec", "kept", "--", "true");
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_run_free(&r);

	/* reap: a paused temporary sandbox whose action is rm */
	create("idle", at_now, "--temporary=60s", NULL);
	ok(tu_sandbench(f.dir, at_now, "pause", "idle", NULL), "pause idle");
	ok(tu_sandbench(f.dir, later, "reap", NULL), "reap");
	cr_assert_eq(sb_sandbox_inspect(&info, f.root, "idle", NULL), SB_ERR_NOTFOUND, "reaped while paused");
	/* and one whose action is stop */
	create("idlestop", at_now, "--temporary=60s", "--expiry=stop");
	ok(tu_sandbench(f.dir, at_now, "pause", "idlestop", NULL), "pause idlestop");
	ok(tu_sandbench(f.dir, later, "reap", NULL), "reap");
	cr_assert_eq(state_of("idlestop"), SB_STATE_STOPPED, "a paused sandbox of expiry stop is stopped");
	sbf_assert_reconciled(&f, "after stop, rm, gc and reap of paused sandboxes");
}

static long long expires_in(const char *const *env, const char *name)
{
	struct tu_run r = tu_sandbench(f.dir, env, "inspect", name, "--json", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	json_t *doc = json_loads(r.out, 0, NULL);
	json_t *e = json_object_get(doc, "expires_in");
	long long v = json_is_integer(e) ? json_integer_value(e) : -1;
	json_decref(doc);
	tu_run_free(&r);
	return v;
}

Test(pause, tiered_expiry_pauses_then_stops)
{
	char e[4][64];
	long long now = sb_clock_now();
	const long long at[] = { now, now + 120, now + 200, now + 250 };
	const char *env[4][2];
	for (int i = 0; i < 4; i++) {
		snprintf(e[i], sizeof(e[i]), "SANDBENCH_NOW=%lld", at[i]);
		env[i][0] = e[i];
		env[i][1] = NULL;
	}

	create("tier", env[0], "--temporary=60s", "--expiry=pause,stop=2m");
	struct tu_run r = tu_sandbench(f.dir, env[0], "inspect", "tier", NULL);
	cr_assert(strstr(r.out, "pause,stop=2m"), "inspect shows the tiered action: %s", r.out);
	tu_run_free(&r);
	cr_assert_eq(expires_in(env[0], "tier"), 60);

	/* after the idle timeout: paused, and the stop is 2m after the pause */
	r = tu_sandbench(f.dir, env[1], "reap", "--json", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "\"pause\""), "reap paused it: %s", r.out);
	tu_run_free(&r);
	cr_assert_eq(state_of("tier"), SB_STATE_PAUSED);
	cr_assert_eq(expires_in(env[1], "tier"), 120);

	/* within the second idle period: nothing happens */
	ok(tu_sandbench(f.dir, env[2], "reap", NULL), "reap");
	cr_assert_eq(state_of("tier"), SB_STATE_PAUSED, "still paused 80 s after the pause");

	/* after it: stopped, memory checkpointed to disk */
	r = tu_sandbench(f.dir, env[3], "reap", "--json", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "\"stop\""), "reap stopped it: %s", r.out);
	tu_run_free(&r);
	struct sb_sandbox_info info;
	cr_assert_eq(sb_sandbox_inspect(&info, f.root, "tier", NULL), 0);
	cr_assert_eq(info.rec.state, SB_STATE_STOPPED);
	cr_assert(info.has_checkpoint);
	cr_assert_eq(info.expires_in, -1, "a stopped sandbox of pause,stop has nothing more due");
	sb_sandbox_info_clear(&info);
	char *tl = timeline("tier");
	char *p = strstr(tl, "\"text\":\"paused\""), *s = strstr(tl, "\"text\":\"stopped\"");
	cr_assert(p && s && p < s, "paused, then stopped: %s", tl);
	free(tl);
	sbf_assert_reconciled(&f, "after the tiered expiry");
}

static void fails_with(struct tu_run r, const char *what, const char *msg)
{
	cr_assert_neq(r.status, 0, "%s fails", what);
	cr_assert(strstr(r.err, msg), "%s: '%s' in '%s'", what, msg, r.err);
	cr_assert(!strchr(r.err, '\n') || strchr(r.err, '\n') == r.err + strlen(r.err) - 1, "one line: %s", r.err);
	tu_run_free(&r);
}

Test(pause, bad_input_gets_a_clear_error)
{
	fails_with(SB("pause", "ghost"), "pause of an unknown sandbox", "no sandbox named 'ghost'");
	fails_with(SB("resume", "ghost"), "resume of an unknown sandbox", "no sandbox named 'ghost'");
	fails_with(SB("pause", "../x"), "pause of a bad name", "sandbox name");
	create("b", NULL, NULL, NULL);
	fails_with(SB("resume", "b"), "resume of a running sandbox", "cannot resume sandbox 'b': it is running");
	ok(SB("pause", "b"), "pause");
	fails_with(SB("pause", "b"), "pause of a paused sandbox", "cannot pause sandbox 'b': it is paused");
	cr_assert_eq(state_of("b"), SB_STATE_PAUSED, "the refused pause changed nothing");
	ok(SB("stop", "b"), "stop");
	fails_with(SB("pause", "b"), "pause of a stopped sandbox", "cannot pause sandbox 'b': it is stopped");
	fails_with(SB("resume", "b"), "resume of a stopped sandbox", "cannot resume sandbox 'b': it is stopped");
	cr_assert_eq(state_of("b"), SB_STATE_STOPPED);
	fails_with(SB("create", "t", "--image", SBF_IMAGE, "--temporary", "--expiry", "pause,stop=soon"),
		   "a tier that is no duration", "pause,stop=DURATION");
	fails_with(SB("create", "t", "--image", SBF_IMAGE, "--temporary", "--expiry", "freeze"), "an unknown action",
		   "pause,stop=DURATION");
	struct sb_sandbox_info info;
	cr_assert_eq(sb_sandbox_inspect(&info, f.root, "t", NULL), SB_ERR_NOTFOUND, "nothing was created");
	fails_with(SB("pause"), "pause without a name", "pause");
}

Test(pause, commit_of_a_paused_sandbox_reads_its_disk_and_leaves_it_paused)
{
	create("src", NULL, NULL, NULL);
	ok(SB("exec", "src", "--", "sh", "-c", "echo kept > /etc/marker"), "write");
	ok(SB("pause", "src"), "pause");
	ok(SB("commit", "src", "localhost/paused:1"), "commit of a paused sandbox");
	cr_assert_eq(state_of("src"), SB_STATE_PAUSED, "still paused after the commit");
	struct tu_run r = SB("create", "from", "--image", "localhost/paused:1", "--permanent");
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_run_free(&r);
	r = SB("exec", "from", "--", "cat", "/etc/marker");
	cr_assert_str_eq(r.out, "kept\n", "the committed disk has the write: %s", r.err);
	tu_run_free(&r);
}
