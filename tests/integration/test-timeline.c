/* The timeline against the real runsc: execs with their exit status,
 * duration, output size and bounded output; lifecycle changes with their
 * reasons and sources; secrets kept out of everything on disk and off every
 * command line; rotation; a torn last line; --follow; bad input. */
#include "config.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/fs.h"
#include "base/proc.h"
#include "sandbox/sandbox.h"
#include "sandbox/timeline.h"
#include "sbfixture.h"
#include "testutil.h"

static struct sbf f;

static void setup(void)
{
	sbf_setup(&f, "timeline");
}

static void teardown(void)
{
	sbf_teardown(&f);
}

TestSuite(timeline, .init = setup, .fini = teardown, .timeout = 180);

#define SB(...) tu_sandbench(f.dir, NULL, __VA_ARGS__, NULL)

static void create_ok(const char *name)
{
	sbf_ok(SB("create", name, "--image", SBF_IMAGE, "--permanent"), "create");
}

static void config(const char *text)
{
	char *p = sb_strdupf("%s/config", f.dir);
	cr_assert_eq(sb_fs_write_atomic(p, text, strlen(text), 0600, NULL), 0);
	free(p);
}

static char *box_file(const char *name, const char *rel)
{
	char *p = sb_strdupf("%s/sandboxes/%s/%s", f.dir, name, rel);
	cr_assert_not_null(p);
	return p;
}

/* `sandbench timeline NAME --json` as an array of its lines' objects. */
static json_t *timeline(const char *name)
{
	struct tu_run r = SB("timeline", name, "--json");
	json_t *all = json_array();

	cr_assert_eq(r.status, 0, "timeline: %s", r.err);
	char *save = NULL;
	for (char *l = strtok_r(r.out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		json_t *o = json_loads(l, 0, NULL);
		cr_assert_not_null(o, "a line that is not JSON: %s", l);
		json_array_append_new(all, o);
	}
	tu_run_free(&r);
	return all;
}

/* The last entry of kind in t (borrowed). */
static json_t *last(json_t *t, const char *kind)
{
	for (size_t i = json_array_size(t); i-- > 0;) {
		json_t *o = json_array_get(t, i);
		if (!strcmp(json_string_value(json_object_get(o, "kind")), kind))
			return o;
	}
	cr_assert_fail("no %s entry", kind);
	return NULL;
}

static const char *s(json_t *o, const char *key)
{
	const char *v = json_string_value(json_object_get(o, key));
	cr_assert_not_null(v, "no '%s' in the entry", key);
	return v;
}

static long long n(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	cr_assert(json_is_integer(v), "no number '%s' in the entry", key);
	return json_integer_value(v);
}

Test(timeline, exec_is_recorded)
{
	create_ok("box");
	long long t0 = sb_clock_now_ms();
	struct tu_run r = SB("exec", "box", "--", "sh", "-c", "echo out; echo err >&2; exit 3");
	long long t1 = sb_clock_now_ms();
	cr_assert_eq(r.status, 3);
	cr_assert_str_eq(r.out, "out\n", "the caller still gets the output");
	cr_assert(strstr(r.err, "err\n"), "%s", r.err);
	tu_run_free(&r);

	json_t *t = timeline("box");
	json_t *e = last(t, "exec");
	cr_assert_str_eq(s(e, "text"), "sh -c 'echo out; echo err >&2; exit 3'");
	cr_assert_str_eq(s(e, "cwd"), "/workspace");
	cr_assert_str_eq(s(e, "source"), "agent");
	cr_assert_eq(n(e, "exit"), 3);
	cr_assert_eq(n(e, "out_bytes"), 8);
	cr_assert_str_eq(s(e, "stdout"), "out\n");
	cr_assert_str_eq(s(e, "stderr"), "err\n");
	cr_assert(json_is_false(json_object_get(e, "truncated")));
	cr_assert(n(e, "duration_ms") > 0 && n(e, "duration_ms") <= t1 - t0, "duration %lld", n(e, "duration_ms"));
	cr_assert(n(e, "time_ms") >= t0 && n(e, "time_ms") <= t1, "time %lld not in [%lld, %lld]", n(e, "time_ms"), t0, t1);
	json_decref(t);

	/* --json captures instead of passing the output on: recorded the same way */
	r = SB("exec", "box", "--json", "--cwd", "/tmp", "--", "pwd");
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_run_free(&r);
	t = timeline("box");
	e = last(t, "exec");
	cr_assert_str_eq(s(e, "cwd"), "/tmp");
	cr_assert_str_eq(s(e, "stdout"), "/tmp\n");
	cr_assert_eq(n(e, "exit"), 0);
	json_decref(t);

	/* a terminal escape in a command is shown, never sent to the terminal */
	sbf_ok(SB("exec", "box", "--", "echo", "\033]0;owned\007\302\233"), "exec an escape");
	/* the table form: one line per entry */
	r = SB("timeline", "box");
	cr_assert_null(strchr(r.out, '\033'), "a raw ESC reached the terminal");
	cr_assert(strstr(r.out, "echo '\\x1b]0;owned\\x07\\u009b'\n"), "%s", r.out);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "agent      exec          3"), "%s", r.out);
	cr_assert(strstr(r.out, "sh -c 'echo out; echo err >&2; exit 3'\n"), "%s", r.out);
	cr_assert(strstr(r.out, "lifecycle     -         -  running: created\n"), "%s", r.out);
	tu_run_free(&r);
}

Test(timeline, output_copy_is_bounded)
{
	config("timeline_output = 100\n");
	create_ok("box");
	struct tu_run r = SB("exec", "box", "--", "seq", "1", "20000");
	cr_assert_eq(r.status, 0, "%s", r.err);
	size_t total = strlen(r.out);
	cr_assert_gt(total, 100000, "the caller gets all of it");
	tu_run_free(&r);
	json_t *t = timeline("box");
	json_t *e = last(t, "exec");
	cr_assert_eq(n(e, "out_bytes"), (long long)total, "the size is of the whole output");
	cr_assert_eq(strlen(s(e, "stdout")), 100, "the copy is the head, at the cap");
	cr_assert_eq(strncmp(s(e, "stdout"), "1\n2\n3\n4\n", 8), 0);
	cr_assert(json_is_true(json_object_get(e, "truncated")));
	json_decref(t);

	/* a reader that goes away ends the command as it did without the copy */
	char *bin = tu_buildpath("sandbench");
	cr_assert_eq(tu_sh("timeout 60 '%s' --root '%s' exec box -- seq 1 100000000 | head -1 >/dev/null", bin, f.dir), 0);
	free(bin);
	t = timeline("box");
	e = last(t, "exec");
	cr_assert_str_eq(s(e, "text"), "seq 1 100000000");
	cr_assert_neq(n(e, "exit"), 0, "seq was stopped by the closed pipe");
	json_decref(t);
}

static void lifecycle_is(json_t *e, const char *state, const char *source, const char *detail_part)
{
	cr_assert_str_eq(s(e, "kind"), "lifecycle");
	cr_assert_str_eq(s(e, "text"), state);
	cr_assert_str_eq(s(e, "source"), source, "%s: source %s", state, s(e, "source"));
	cr_assert(strstr(s(e, "detail"), detail_part), "%s: detail '%s' lacks '%s'", state, s(e, "detail"), detail_part);
}

Test(timeline, lifecycle_with_reasons)
{
	create_ok("box");
	sbf_ok(SB("stop", "box"), "stop");
	sbf_ok(SB("restore", "box"), "restore");
	sbf_ok(SB("stop", "box"), "stop");
	/* no memory image: the next restore is a cold start, and says so */
	char *ckpt = box_file("box", "checkpoint");
	cr_assert_eq(sb_fs_remove_tree(ckpt, NULL), 0);
	free(ckpt);
	sbf_ok(SB("restore", "box"), "cold restore");
	json_t *t = timeline("box");
	cr_assert_eq(json_array_size(t), 5, "one entry per change");
	lifecycle_is(json_array_get(t, 0), "running", "agent", "created");
	lifecycle_is(json_array_get(t, 1), "stopped", "agent", "checkpointed");
	lifecycle_is(json_array_get(t, 2), "running", "agent", "restored from checkpoint");
	lifecycle_is(json_array_get(t, 3), "stopped", "agent", "stopped by user");
	lifecycle_is(json_array_get(t, 4), "running", "agent", "cold start");
	json_decref(t);
}

static int pid_gone(void *arg)
{
	return kill(*(pid_t *)arg, 0) < 0;
}

Test(timeline, system_acts_are_sandbench)
{
	/* a sandbox that died is noticed (here by ls) */
	create_ok("dies");
	char *pidfile = box_file("dies", "runsc.pid"), *text;
	cr_assert_eq(sb_fs_read_file(&text, NULL, pidfile, 64, NULL), 0);
	pid_t pid = (pid_t)atol(text);
	cr_assert_gt(pid, 1);
	cr_assert_eq(kill(pid, SIGKILL), 0);
	cr_assert(tu_wait_for(pid_gone, &pid, 20000), "the sandbox process went");
	free(text);
	free(pidfile);
	sbf_ok(SB("ls"), "ls");
	json_t *t = timeline("dies");
	lifecycle_is(last(t, "lifecycle"), "stopped", "sandbench", "died");
	json_decref(t);

	/* expiry by the reaper */
	char at[64], later[64];
	long long now = sb_clock_now();
	snprintf(at, sizeof(at), "SANDBENCH_NOW=%lld", now);
	snprintf(later, sizeof(later), "SANDBENCH_NOW=%lld", now + 120);
	const char *env_at[] = { at, NULL }, *env_later[] = { later, NULL };
	sbf_ok(tu_sandbench(f.dir, env_at, "create", "idle", "--image", SBF_IMAGE, "--temporary=60s", "--expiry", "stop",
			    NULL), "create idle");
	sbf_ok(tu_sandbench(f.dir, env_later, "reap", NULL), "reap");
	t = timeline("idle");
	lifecycle_is(last(t, "lifecycle"), "stopped", "sandbench", "expired after");
	cr_assert_eq(n(last(t, "lifecycle"), "time_ms"), (now + 120) * 1000, "the injected clock");
	json_decref(t);
}

Test(timeline, sources)
{
	create_ok("box");
	sbf_ok(SB("exec", "box", "--as", "human", "--", "true"), "exec --as human");
	json_t *t = timeline("box");
	cr_assert_str_eq(s(last(t, "exec"), "source"), "human");
	json_decref(t);

	struct sb_exec_opts o = { .argv = (char *[]){ "true", NULL }, .stdin_fd = -1, .stdout_fd = -1, .stderr_fd = -1,
				  .source = SB_TIMELINE_WORKBENCH };
	struct sb_exec_result res;
	struct sb_error err;
	cr_assert_eq(sb_sandbox_exec(&res, f.root, "box", &o, &err), 0, "%s", err.msg);
	sb_exec_result_clear(&res);
	t = timeline("box");
	cr_assert_str_eq(s(last(t, "exec"), "source"), "workbench");
	json_decref(t);

	struct tu_run r = SB("exec", "box", "--as", "robot", "--", "true");
	cr_assert_eq(r.status, 2);
	cr_assert(strstr(r.err, "invalid --as 'robot' (agent or human)"), "%s", r.err);
	tu_run_free(&r);
}

#define SECRET "tok-zq9-Secret-value"

/* 1 when some process's command line holds the secret. */
static int secret_in_a_cmdline(void)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int found = 0;

	while (!found && (de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		char path[300], buf[8192];
		snprintf(path, sizeof(path), "/proc/%s/cmdline", de->d_name);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		ssize_t len = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;
		if (fd >= 0)
			close(fd);
		found = len > 0 && memmem(buf, (size_t)len, SECRET, strlen(SECRET)) != NULL;
	}
	closedir(d);
	return found;
}

static int file_exists(void *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

Test(timeline, secrets_stay_out)
{
	create_ok("box");
	/* with the diagnostic log on, in the state root: the grep below reads it too */
	char *log = sb_strdupf("SANDBENCH_LOG=%s/diag.log", f.dir);
	const char *logenv[] = { log, NULL };
	struct tu_run r = tu_sandbench(f.dir, logenv, "exec", "box", "--secret-env", "TOKEN=" SECRET, "--", "sh", "-c",
				       "echo \"t=$TOKEN\"; echo " SECRET " >&2", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_str_eq(r.out, "t=" SECRET "\n", "the command got the value, the caller sees its output");
	cr_assert(strstr(r.err, SECRET), "%s", r.err);
	tu_run_free(&r);
	r = SB("exec", "box", "--json", "--secret-env", "TOKEN=" SECRET, "--", "sh", "-c", "echo $TOKEN");
	cr_assert(strstr(r.out, "\"stdout\": \"" SECRET "\\n\""), "--json gives the caller the output: %s", r.out);
	tu_run_free(&r);

	json_t *t = timeline("box");
	json_t *e = json_array_get(t, json_array_size(t) - 2);
	cr_assert_str_eq(s(e, "text"), "sh -c 'echo \"t=$TOKEN\"; echo [secret TOKEN] >&2'");
	cr_assert_str_eq(s(e, "stdout"), "t=[secret TOKEN]\n");
	cr_assert_str_eq(s(e, "stderr"), "[secret TOKEN]\n");
	cr_assert_str_eq(json_string_value(json_array_get(json_object_get(e, "secrets"), 0)), "TOKEN");
	json_decref(t);

	/* while the command runs, no command line shows the value: not runsc's
	 * (it reads the process from a memory file), not sandbench's own (the
	 * argument is blanked once copied) */
	char *bin = tu_buildpath("sandbench"), *release = sb_strdupf("%s/exchange/release", f.dir);
	char *started = box_file("box", "workspace/started");
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		execl(bin, bin, "--root", f.dir, "exec", "box", "--secret-env", "TOKEN=" SECRET, "--", "sh", "-c",
		      "touch /workspace/started; while [ ! -f /exchange/release ]; do :; done; echo $TOKEN", (char *)NULL);
		_exit(127);
	}
	sb_proc_keep(pid, 1);
	cr_assert(tu_wait_for(file_exists, started, 30000), "the command started");
	int seen = secret_in_a_cmdline();
	int fd = open(release, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	close(fd);
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	sb_proc_keep(pid, 0);
	cr_assert(!seen, "the value is in a process's command line");
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	/* NAME alone takes the value from the environment */
	const char *env[] = { "TOKEN=" SECRET, NULL };
	r = tu_sandbench(f.dir, env, "exec", "box", "--secret-env", "TOKEN", "--", "sh", "-c", "echo $TOKEN", NULL);
	cr_assert_str_eq(r.out, SECRET "\n", "%s", r.err);
	tu_run_free(&r);

	struct stat st;
	cr_assert(stat(log + strlen("SANDBENCH_LOG="), &st) == 0 && st.st_size > 0, "the log was on");
	free(log);
	/* nowhere under the state root: timeline, record, logs, runsc's files */
	cr_assert_eq(tu_sh("grep -rqsF -D skip -- '%s' '%s'", SECRET, f.dir), 1, "the value is in a file under the state root");

	/* too short to redact: refused before anything runs */
	t = timeline("box");
	size_t before = json_array_size(t);
	json_decref(t);
	r = SB("exec", "box", "--secret-env", "PIN=12", "--", "true");
	cr_assert_eq(r.status, 2);
	cr_assert(strstr(r.err, "secret 'PIN': the value must be at least 3 bytes long"), "%s", r.err);
	tu_run_free(&r);
	r = SB("exec", "box", "--secret-env", "A B=long enough", "--", "true");
	cr_assert_eq(r.status, 125);
	cr_assert(strstr(r.err, "secret name 'A B': letters, digits and _ only"), "%s", r.err);
	tu_run_free(&r);
	/* the library refuses a short value itself */
	struct sb_secret pin = { "PIN", "12" };
	struct sb_exec_opts o = { .argv = (char *[]){ "true", NULL }, .stdin_fd = -1, .stdout_fd = -1, .stderr_fd = -1,
				  .secrets = &pin, .n_secrets = 1 };
	struct sb_exec_result res;
	struct sb_error err;
	cr_assert_eq(sb_sandbox_exec(&res, f.root, "box", &o, &err), SB_ERR_INVALID);
	cr_assert(strstr(err.msg, "at least 3 bytes"), "%s", err.msg);
	t = timeline("box");
	cr_assert_eq(json_array_size(t), before, "nothing ran");
	json_decref(t);
	free(bin), free(release), free(started);
}

Test(timeline, rotation_keeps_the_newest)
{
	config("timeline_size = 4k\n");
	create_ok("box");
	char mark[32];
	/* about 240 bytes each: two rotations at least */
	for (int i = 0; i < 60; i++) {
		snprintf(mark, sizeof(mark), "mark-%02d", i);
		sbf_ok(SB("exec", "box", "--", "echo", mark), "exec");
	}
	struct stat st;
	char *cur = box_file("box", "timeline.jsonl"), *old = box_file("box", "timeline.jsonl.1");
	cr_assert_eq(stat(old, &st), 0, "rotated");
	cr_assert_leq(st.st_size, 4096);
	cr_assert_eq(stat(cur, &st), 0);
	cr_assert_leq(st.st_size, 4096);
	json_t *t = timeline("box");
	json_t *newest = json_array_get(t, json_array_size(t) - 1);
	cr_assert_str_eq(s(newest, "text"), "echo mark-59");
	cr_assert_str_neq(s(json_array_get(t, 0), "text"), "running", "the oldest went");
	for (size_t i = 1; i < json_array_size(t); i++)
		cr_assert_lt(n(json_array_get(t, i - 1), "pos"), n(json_array_get(t, i), "pos"));
	/* the ones kept are the last ones, none missing in between */
	int first = atoi(s(json_array_get(t, 0), "text") + strlen("echo mark-"));
	cr_assert_eq((size_t)(60 - first), json_array_size(t));
	json_decref(t);
	free(cur), free(old);
}

Test(timeline, torn_last_line_is_skipped)
{
	create_ok("box");
	sbf_ok(SB("exec", "box", "--", "echo", "a"), "exec a");
	/* a crash in the middle of an append */
	char *cur = box_file("box", "timeline.jsonl");
	int fd = open(cur, O_WRONLY | O_APPEND | O_CLOEXEC);
	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, "{\"time_ms\":17,\"kind\":\"ex", 24), 24);
	close(fd);
	json_t *t = timeline("box");
	cr_assert_eq(json_array_size(t), 2, "created and a");
	json_decref(t);
	sbf_ok(SB("exec", "box", "--", "echo", "b"), "exec b");
	t = timeline("box");
	cr_assert_eq(json_array_size(t), 3, "the torn line is skipped and took nothing with it");
	cr_assert_str_eq(s(json_array_get(t, 1), "text"), "echo a");
	cr_assert_str_eq(s(json_array_get(t, 2), "text"), "echo b");
	json_decref(t);
	free(cur);
}

struct follower {
	pid_t pid;
	int out;
	char buf[65536];
	size_t len;
};

/* Reads what the follower printed until it holds want or the deadline. */
static int follower_shows(struct follower *fl, const char *want, int timeout_ms)
{
	long long deadline = sb_clock_monotonic_ms() + timeout_ms;

	while (!memmem(fl->buf, fl->len, want, strlen(want))) {
		long long left = deadline - sb_clock_monotonic_ms();
		struct pollfd p = { .fd = fl->out, .events = POLLIN };
		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			return 0;
		ssize_t r = read(fl->out, fl->buf + fl->len, sizeof(fl->buf) - 1 - fl->len);
		if (r <= 0)
			return 0;
		fl->len += (size_t)r;
	}
	return 1;
}

static int exited(void *arg)
{
	struct follower *fl = arg;
	int status;

	if (waitpid(fl->pid, &status, WNOHANG) != fl->pid)
		return 0;
	fl->pid = WIFEXITED(status) ? -WEXITSTATUS(status) - 1 : -1000;
	return 1;
}

Test(timeline, follow_sees_new_entries_and_ends_with_the_sandbox)
{
	struct follower fl = { 0 };
	int p[2];

	create_ok("box");
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	char *bin = tu_buildpath("sandbench");
	fl.pid = fork();
	if (fl.pid == 0) {
		dup2(p[1], 1);
		execl(bin, bin, "--root", f.dir, "timeline", "box", "--follow", "--json", (char *)NULL);
		_exit(127);
	}
	sb_proc_keep(fl.pid, 1);
	close(p[1]);
	fl.out = p[0];
	cr_assert(follower_shows(&fl, "\"detail\":\"created\"", 20000), "what was there: %.*s", (int)fl.len, fl.buf);
	sbf_ok(SB("exec", "box", "--", "echo", "followed-marker"), "exec");
	cr_assert(follower_shows(&fl, "echo followed-marker", 20000), "the new entry: %.*s", (int)fl.len, fl.buf);
	sbf_ok(SB("rm", "box"), "rm");
	pid_t pid = fl.pid;
	cr_assert(tu_wait_for(exited, &fl, 20000), "the follower ends when the sandbox is removed");
	sb_proc_keep(pid, 0);
	cr_assert_eq(fl.pid, -1, "and exits 0 (got %d)", fl.pid);
	close(fl.out);
	free(bin);
}

Test(timeline, bad_input)
{
	struct tu_run r = SB("timeline", "ghost");
	cr_assert_eq(r.status, 3);
	cr_assert(strstr(r.err, "no sandbox named 'ghost'"), "%s", r.err);
	tu_run_free(&r);
	r = SB("timeline", "ghost", "--follow");
	cr_assert_eq(r.status, 3, "--follow of nothing ends at once");
	tu_run_free(&r);
	create_ok("box");
	r = SB("timeline", "box", "--since", "last-week");
	cr_assert_eq(r.status, 2);
	cr_assert(strstr(r.err, "invalid time 'last-week'"), "%s", r.err);
	tu_run_free(&r);
	r = SB("timeline");
	cr_assert_eq(r.status, 2);
	tu_run_free(&r);
	/* --since keeps the newer ones */
	r = SB("timeline", "box", "--since", "1h", "--json");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "\"created\""), "%s", r.out);
	tu_run_free(&r);
	r = SB("timeline", "box", "--since", "2999-01-01", "--json");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_str_eq(r.out, "", "nothing after that");
	tu_run_free(&r);
}
