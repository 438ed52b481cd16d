/* The sandbox lifecycle against the real runsc (as root), through the built
 * sandbench binary and the library. */
#include "config.h"

#include <criterion/criterion.h>
#include <poll.h>
#include <pty.h>
#include <sys/ioctl.h>
#include <termios.h>
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
#include "sandbox/record.h"
#include "sandbox/sandbox.h"
#include "sbfixture.h"
#include "testutil.h"

static struct sbf f;

static void setup(void)
{
	sbf_setup(&f, "sandbox");
}

static void teardown(void)
{
	sbf_teardown(&f);
}

TestSuite(sandbox, .init = setup, .fini = teardown, .timeout = 120);

#define SB(...) tu_sandbench(f.dir, NULL, __VA_ARGS__, NULL)

static void create_ok(const char *name, const char *extra1, const char *extra2)
{
	struct tu_run r = tu_sandbench(f.dir, NULL, "create", name, "--image", SBF_IMAGE, extra1, extra2, NULL);
	cr_assert_eq(r.status, 0, "create %s: %s", name, r.err);
	tu_run_free(&r);
}

static char *sandbox_path(const char *name, const char *rel)
{
	char *s = sb_strdupf("%s/sandboxes/%s/%s", f.dir, name, rel);
	cr_assert_not_null(s);
	return s;
}


static int file_exists(void *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

Test(sandbox, exec_output_and_exit_codes)
{
	create_ok("box", NULL, NULL);
	struct tu_run r = SB("exec", "box", "--", "sh", "-c", "echo out; echo err >&2; exit 3");
	cr_assert_eq(r.status, 3);
	cr_assert_str_eq(r.out, "out\n");
	cr_assert(strstr(r.err, "err"));
	tu_run_free(&r);

	r = SB("exec", "box", "--json", "--", "sh", "-c", "pwd; echo e >&2; exit 7");
	cr_assert_eq(r.status, 7);
	json_t *doc = json_loads(r.out, 0, NULL);
	cr_assert_not_null(doc, "%s", r.out);
	cr_assert_eq(json_integer_value(json_object_get(doc, "exit_code")), 7);
	cr_assert_str_eq(json_string_value(json_object_get(doc, "stdout")), "/workspace\n");
	cr_assert_str_eq(json_string_value(json_object_get(doc, "stderr")), "e\n");
	cr_assert(json_is_integer(json_object_get(doc, "duration_ms")));
	json_decref(doc);
	tu_run_free(&r);
	/* output JSON cannot hold: an error, not an empty or partial document */
	r = SB("exec", "box", "--json", "--", "printf", "\\377");
	cr_assert_eq(r.status, 125);
	cr_assert_str_eq(r.out, "");
	cr_assert(strstr(r.err, "cannot build the JSON output"), "%s", r.err);
	tu_run_free(&r);

	r = SB("exec", "--env", "A=b c", "--cwd", "/tmp", "box", "--", "sh", "-c", "echo \"$A\" $(pwd)");
	cr_assert_str_eq(r.out, "b c /tmp\n");
	tu_run_free(&r);

	/* sandbench's own failure: 125, not the command's status */
	r = SB("exec", "nosuch", "--", "true");
	cr_assert_eq(r.status, 125);
	cr_assert(strstr(r.err, "no sandbox named 'nosuch'"), "%s", r.err);
	tu_run_free(&r);
	/* without "--": the command starts at the first word after the name that is no option */
	r = SB("exec", "box", "sh", "-c", "exit 5");
	cr_assert_eq(r.status, 5, "%s", r.err);
	tu_run_free(&r);
	r = SB("exec", "box", "--", "/no/such/program");
	cr_assert_neq(r.status, 0);
	tu_run_free(&r);
}

Test(sandbox, stop_restore_keeps_files_and_processes)
{
	create_ok("keep", "--permanent", NULL);
	/* the shell leaves the exec's pipes before it starts the sleep: a
	 * background job redirects after its fork, and may still hold them when
	 * the exec has ended and the stop takes its checkpoint */
	struct tu_run r = SB("exec", "keep", "--", "sh", "-c",
			     "echo kept > /workspace/file; echo disk > /root/disk; "
			     "exec </dev/null >/dev/null 2>&1; sleep 1000 & echo $! > /workspace/pid");
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_run_free(&r);
	r = SB("stop", "keep");
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_run_free(&r);

	struct sb_sandbox_info info;
	cr_assert_eq(sb_sandbox_inspect(&info, f.root, "keep", NULL), 0);
	cr_assert_eq(info.rec.state, SB_STATE_STOPPED);
	cr_assert(info.has_checkpoint);
	cr_assert(strstr(info.rec.reason, "checkpoint"), "%s", info.rec.reason);
	char *id = strdup(info.rec.id);
	sb_sandbox_info_clear(&info);
	cr_assert_not(sbf_runsc_has(&f, id), "a stopped sandbox has no runsc container");
	r = SB("exec", "keep", "--", "true");
	cr_assert_eq(r.status, 125, "exec refuses a stopped sandbox");
	cr_assert(strstr(r.err, "stopped"), "%s", r.err);
	tu_run_free(&r);

	r = SB("restore", "keep");
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_run_free(&r);
	/* a checkpoint that could not be restored is a cold start: processes lost (its reason says why) */
	cr_assert_eq(sb_sandbox_inspect(&info, f.root, "keep", NULL), 0);
	cr_assert_not(strstr(info.rec.reason, "cold start"), "%s", info.rec.reason);
	sb_sandbox_info_clear(&info);
	r = SB("exec", "keep", "--", "sh", "-c", "cat /workspace/file /root/disk; kill -0 $(cat /workspace/pid) && echo alive");
	cr_assert_str_eq(r.out, "kept\ndisk\nalive\n", "%s", r.err);
	tu_run_free(&r);
	cr_assert_eq(sb_sandbox_inspect(&info, f.root, "keep", NULL), 0);
	cr_assert_eq(info.rec.state, SB_STATE_RUNNING);
	cr_assert(strstr(info.rec.reason, "restored from checkpoint"), "%s", info.rec.reason);
	/* the consumed image is out of the way until the next stop deletes it */
	cr_assert_not(info.has_checkpoint, "a running sandbox shows no checkpoint");
	sb_sandbox_info_clear(&info);
	char *used = sandbox_path("keep", "checkpoint.used");
	cr_assert(file_exists(used));

	/* without a checkpoint: a cold start from the kept disk, and the reason says so */
	r = SB("stop", "keep");
	tu_run_free(&r);
	cr_assert_not(file_exists(used), "stop deletes the image the restore consumed");
	free(used);
	char *ckpt = sandbox_path("keep", "checkpoint");
	sb_fs_remove_tree(ckpt, NULL);
	free(ckpt);
	r = SB("restore", "keep");
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_run_free(&r);
	cr_assert_eq(sb_sandbox_inspect(&info, f.root, "keep", NULL), 0);
	cr_assert(strstr(info.rec.reason, "cold start"), "%s", info.rec.reason);
	sb_sandbox_info_clear(&info);

	/* a process holding the exec's host pipe makes the memory image unloadable:
	 * restore falls back to a cold start and says why */
	r = SB("exec", "keep", "--", "sh", "-c", "sleep 1000 &");
	tu_run_free(&r);
	r = SB("stop", "keep");
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_run_free(&r);
	r = SB("restore", "keep");
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_run_free(&r);
	cr_assert_eq(sb_sandbox_inspect(&info, f.root, "keep", NULL), 0);
	cr_assert_eq(info.rec.state, SB_STATE_RUNNING);
	cr_assert(strstr(info.rec.reason, "could not be restored") && strstr(info.rec.reason, "cold start"), "%s",
		  info.rec.reason);
	sb_sandbox_info_clear(&info);
	r = SB("exec", "keep", "--", "cat", "/workspace/file");
	cr_assert_str_eq(r.out, "kept\n");
	tu_run_free(&r);

	/* permanent: gone only after rm */
	r = SB("rm", "keep");
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_run_free(&r);
	char *dir = sandbox_path("keep", "");
	struct stat st;
	cr_assert_neq(stat(dir, &st), 0);
	cr_assert_not(sbf_runsc_has(&f, id));
	free(dir);
	free(id);
}

Test(sandbox, temporary_remove_leaves_nothing)
{
	struct sb_sandbox_info info;

	create_ok("tmp", "--temporary=10m", NULL);
	cr_assert_eq(sb_sandbox_inspect(&info, f.root, "tmp", NULL), 0);
	char *id = strdup(info.rec.id);
	cr_assert_eq(info.rec.kind, SB_KIND_TEMPORARY);
	cr_assert_eq(info.rec.idle_timeout, 600);
	sb_sandbox_info_clear(&info);
	char *dir = sandbox_path("tmp", "");
	cr_assert(sbf_mounted_below(dir));
	cr_assert(sbf_runsc_has(&f, id));

	struct tu_run r = SB("rm", "tmp");
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_run_free(&r);
	struct stat st;
	cr_assert_neq(stat(dir, &st), 0, "no files left");
	cr_assert_not(sbf_mounted_below(dir), "no mount left");
	cr_assert_not(sbf_runsc_has(&f, id), "no runsc container left");
	cr_assert_not(sbf_cgroup_exists(id), "no cgroup left");
	r = SB("rm", "tmp");
	cr_assert_eq(r.status, 3, "unknown sandbox: exit 3");
	tu_run_free(&r);
	free(dir);
	free(id);
}

Test(sandbox, exchange_and_host_mounts)
{
	/* outside the state root: the mount policy refuses anything in it */
	char *ro = sb_strdupf("%s-ro-host", f.dir), *rw = sb_strdupf("%s-rw-host", f.dir);
	cr_assert_eq(sb_fs_mkdirs(ro, 0755, NULL), 0);
	cr_assert_eq(sb_fs_mkdirs(rw, 0755, NULL), 0);
	cr_assert_eq(tu_sh("echo host > '%s/in' && echo fromhost > '%s/exchange/x'", ro, f.dir), 0);
	char *m1 = sb_strdupf("%s:/data:ro", ro), *m2 = sb_strdupf("%s:/out:rw", rw);
	struct tu_run r = SB("create", "mnt", "--image", SBF_IMAGE, "--mount", m1, "--mount", m2);
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_run_free(&r);

	r = SB("exec", "mnt", "--", "sh", "-c", "cat /data/in /exchange/x; echo inside > /exchange/y");
	cr_assert_str_eq(r.out, "host\nfromhost\n", "%s", r.err);
	tu_run_free(&r);
	char *y = sb_strdupf("%s/exchange/y", f.dir), *text;
	cr_assert_eq(sb_fs_read_file(&text, NULL, y, 100, NULL), 0);
	cr_assert_str_eq(text, "inside\n");
	free(text);

	r = SB("exec", "mnt", "--", "sh", "-c", "echo no > /data/new");
	cr_assert_neq(r.status, 0, "a read-only mount refuses writes");
	tu_run_free(&r);
	r = SB("exec", "mnt", "--", "sh", "-c", "echo yes > /out/new");
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_run_free(&r);
	char *out = sb_strdupf("%s/new", rw);
	cr_assert_eq(sb_fs_read_file(&text, NULL, out, 100, NULL), 0, "rw writes reach the host");
	cr_assert_str_eq(text, "yes\n");
	free(text);

	/* --no-exchange: no /exchange inside */
	r = SB("create", "noex", "--image", SBF_IMAGE, "--no-exchange");
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_run_free(&r);
	r = SB("exec", "noex", "--", "ls", "/exchange/x");
	cr_assert_neq(r.status, 0);
	tu_run_free(&r);
	tu_remove(ro);
	tu_remove(rw);
	free(ro), free(rw), free(m1), free(m2), free(y), free(out);
}

static const char *now_env(long long t, char *buf, size_t size)
{
	snprintf(buf, size, "SANDBENCH_NOW=%lld", t);
	return buf;
}


Test(sandbox, reap_expires_idle_temporary_ones)
{
	char env_now[64], env_later[64];
	long long now = sb_clock_now();
	const char *at_now[] = { now_env(now, env_now, sizeof(env_now)), NULL };
	const char *later[] = { now_env(now + 120, env_later, sizeof(env_later)), NULL };
	struct tu_run r;

	r = tu_sandbench(f.dir, at_now, "create", "idle", "--image", SBF_IMAGE, "--temporary=60s", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_run_free(&r);
	r = tu_sandbench(f.dir, at_now, "create", "idlestop", "--image", SBF_IMAGE, "--temporary=60s", "--expiry", "stop", NULL);
	tu_run_free(&r);
	r = tu_sandbench(f.dir, at_now, "create", "fresh", "--image", SBF_IMAGE, "--temporary=1h", NULL);
	tu_run_free(&r);
	r = tu_sandbench(f.dir, at_now, "create", "perm", "--image", SBF_IMAGE, "--permanent", NULL);
	tu_run_free(&r);

	/* one whose command started long ago and still runs is not idle */
	r = tu_sandbench(f.dir, at_now, "create", "busy", "--image", SBF_IMAGE, "--temporary=60s", NULL);
	tu_run_free(&r);
	char *bin = tu_buildpath("tests/sandbench-test");
	pid_t pid = fork();
	if (pid == 0) {
		setenv("SANDBENCH_NOW", env_now + strlen("SANDBENCH_NOW="), 1);
		execl(bin, bin, "--root", f.dir, "exec", "busy", "--", "sh", "-c",
		      "touch /workspace/running; while [ ! -f /exchange/release ]; do :; done", (char *)NULL);
		_exit(127);
	}
	sb_proc_keep(pid, 1);
	char *running = sb_strdupf("%s/sandboxes/busy/workspace/running", f.dir);
	cr_assert(tu_wait_for(file_exists, running, 20000), "the long command started");

	r = tu_sandbench(f.dir, later, "reap", "--dry-run", "--json", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	json_t *doc = json_loads(r.out, 0, NULL);
	cr_assert_eq(json_array_size(doc), 2, "%s", r.out);
	json_decref(doc);
	tu_run_free(&r);
	struct sb_sandbox_info info;
	cr_assert_eq(sb_sandbox_inspect(&info, f.root, "idle", NULL), 0, "dry run changes nothing");
	sb_sandbox_info_clear(&info);

	r = tu_sandbench(f.dir, later, "reap", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_run_free(&r);
	cr_assert_eq(sb_sandbox_inspect(&info, f.root, "idle", NULL), SB_ERR_NOTFOUND, "expired with rm");
	cr_assert_eq(sb_sandbox_inspect(&info, f.root, "idlestop", NULL), 0);
	cr_assert_eq(info.rec.state, SB_STATE_STOPPED, "expired with stop: checkpointed");
	cr_assert(info.has_checkpoint);
	cr_assert(strstr(info.rec.reason, "expired"), "%s", info.rec.reason);
	sb_sandbox_info_clear(&info);
	cr_assert_eq(sb_sandbox_inspect(&info, f.root, "fresh", NULL), 0);
	cr_assert_eq(info.rec.state, SB_STATE_RUNNING);
	cr_assert(info.expires_in > 3000 && info.expires_in <= 3600, "time to expiry: %lld", info.expires_in);
	sb_sandbox_info_clear(&info);
	cr_assert_eq(sb_sandbox_inspect(&info, f.root, "perm", NULL), 0);
	cr_assert_eq(info.rec.state, SB_STATE_RUNNING);
	cr_assert_eq(info.expires_in, -1);
	sb_sandbox_info_clear(&info);
	cr_assert_eq(sb_sandbox_inspect(&info, f.root, "busy", NULL), 0, "a running command keeps it");
	cr_assert_eq(info.rec.state, SB_STATE_RUNNING);
	sb_sandbox_info_clear(&info);
	char *release = sb_strdupf("%s/exchange/release", f.dir);
	cr_assert_eq(tu_sh("touch '%s'", release), 0);
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	free(release), free(running), free(bin);

	/* activity resets the countdown */
	r = tu_sandbench(f.dir, later, "touch", "fresh", NULL);
	tu_run_free(&r);
	cr_assert_eq(sb_sandbox_inspect(&info, f.root, "fresh", NULL), 0);
	cr_assert_geq(info.last_activity, now + 120);
	sb_sandbox_info_clear(&info);
}

Test(sandbox, fail_closed_without_runsc)
{
	const char *env[] = { "SANDBENCH_RUNSC=/nonexistent", NULL };
	struct tu_run r = tu_sandbench(f.dir, env, "create", "nope", "--image", SBF_IMAGE, NULL);

	cr_assert_eq(r.status, 5, "%s", r.err);
	cr_assert(strstr(r.err, "runsc"), "%s", r.err);
	tu_run_free(&r);
	char *dir = sandbox_path("nope", "");
	struct stat st;
	cr_assert_neq(stat(dir, &st), 0, "nothing created");
	free(dir);
	r = tu_sandbench(f.dir, env, "run", "--rm", "--image", SBF_IMAGE, "--", "true", NULL);
	cr_assert_eq(r.status, 125);
	tu_run_free(&r);
}

Test(sandbox, runsc_that_cannot_boot_is_cleaned_up)
{
	/* a runsc whose create fails like a broken platform would */
	char *fake = sb_strdupf("%s/fake-runsc", f.dir);
	cr_assert_eq(tu_sh("printf '#!/bin/sh\\nfor a; do [ \"$a\" = create ] && { echo \"creating container: cannot boot: "
			   "platform broken\" >&2; exit 1; }; done\\nexec runsc \"$@\"\\n' > '%s' && chmod +x '%s'",
			   fake, fake), 0);
	char *env0 = sb_strdupf("SANDBENCH_RUNSC=%s", fake);
	char *log = sb_strdupf("SANDBENCH_LOG=%s/runsc.log", f.dir);
	const char *env[] = { env0, log, NULL };
	struct tu_run r = tu_sandbench(f.dir, env, "create", "nob", "--image", SBF_IMAGE, NULL);
	cr_assert_eq(r.status, 1, "%s", r.err);
	/* one line of sandbench's naming what failed; runsc's own words go to the log */
	cr_assert(strstr(r.err, "runsc create") && strstr(r.err, "in the log") && !strstr(r.err, "platform broken"),
		  "%s", r.err);
	tu_run_free(&r);
	char *logged = tu_sh_out("grep -c 'platform broken' '%s/runsc.log'", f.dir);
	cr_assert_neq(strcmp(logged, "0"), 0, "runsc's cause is in the log");
	free(logged);
	free(log);
	char *dir = sandbox_path("nob", "");
	struct stat st;
	cr_assert_neq(stat(dir, &st), 0, "state cleaned up");
	cr_assert_not(sbf_mounted_below(dir));
	free(dir), free(fake), free(env0);
}

Test(sandbox, memory_limit_is_enforced)
{
	create_ok("small", "--memory", "64m");
	struct tu_run r = SB("exec", "small", "--", "sh", "-c", "grep MemTotal /proc/meminfo");
	cr_assert(strstr(r.out, "65536 kB"), "the limit is visible inside: %s", r.out);
	tu_run_free(&r);
	/* a shell variable of 200 MB cannot fit */
	r = SB("exec", "small", "--", "sh", "-c", "x=$(head -c 200000000 /dev/zero | tr '\\0' a); echo ${#x}");
	cr_assert_neq(r.status, 0, "allocating past the limit fails");
	cr_assert_neq(strcmp(r.out, "200000000\n"), 0);
	tu_run_free(&r);
	/* when the limit killed the whole sandbox, sandbench says so and keeps it
	 * stopped with its disk; restore brings it back */
	struct sb_sandbox_info info;
	cr_assert_eq(sb_sandbox_inspect(&info, f.root, "small", NULL), 0);
	if (info.rec.state != SB_STATE_RUNNING) {
		cr_assert_eq(info.rec.state, SB_STATE_STOPPED, "%s", info.rec.reason);
		cr_assert(strstr(info.rec.reason, "more memory than its limit"), "%s", info.rec.reason);
		r = SB("restore", "small");
		cr_assert_eq(r.status, 0, "%s", r.err);
		tu_run_free(&r);
	}
	sb_sandbox_info_clear(&info);
	r = SB("exec", "small", "--", "true");
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_run_free(&r);
}

Test(sandbox, kill_during_create_then_force_remove)
{
	/* a runsc that signals when create starts and then takes its time */
	char *fake = sb_strdupf("%s/slow-runsc", f.dir), *mark = sb_strdupf("%s/marker", f.dir);
	cr_assert_eq(tu_sh("printf '#!/bin/sh\\nfor a; do [ \"$a\" = create ] && { touch %s; sleep 1; }; done\\n"
			   "exec runsc \"$@\"\\n' > '%s' && chmod +x '%s'", mark, fake, fake), 0);
	char *bin = tu_buildpath("sandbench");
	pid_t pid = fork();
	if (pid == 0) {
		setenv("SANDBENCH_RUNSC", fake, 1);
		execl(bin, bin, "--root", f.dir, "create", "half", "--image", SBF_IMAGE, (char *)NULL);
		_exit(127);
	}
	sb_proc_keep(pid, 1); /* ours to wait for: the subreaper must leave it alone */
	cr_assert(tu_wait_for(file_exists, mark, 10000), "create reached runsc");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);

	struct sb_sandbox_info info;
	cr_assert_eq(sb_sandbox_inspect(&info, f.root, "half", NULL), 0, "the half-made sandbox is listed");
	char *id = strdup(info.rec.id);
	sb_sandbox_info_clear(&info);
	struct tu_run r = SB("rm", "--force", "half");
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_run_free(&r);
	char *dir = sandbox_path("half", "");
	cr_assert_not(file_exists(dir), "the directory is gone");
	cr_assert_not(sbf_mounted_below(dir));
	cr_assert_not(sbf_runsc_has(&f, id));
	cr_assert_not(sbf_cgroup_exists(id));
	free(dir), free(id), free(bin), free(fake), free(mark);
}

Test(sandbox, names_unknown_and_duplicates)
{
	struct tu_run r = SB("create", "bad/name", "--image", SBF_IMAGE);
	cr_assert_eq(r.status, 2);
	cr_assert(strstr(r.err, "invalid sandbox name"), "%s", r.err);
	tu_run_free(&r);
	r = SB("create", "-x", "--image", SBF_IMAGE);
	cr_assert_neq(r.status, 0);
	tu_run_free(&r);
	char long_name[80];
	memset(long_name, 'a', 64);
	long_name[64] = '\0';
	r = SB("create", long_name, "--image", SBF_IMAGE);
	cr_assert_eq(r.status, 2);
	tu_run_free(&r);

	create_ok("dup", NULL, NULL);
	r = SB("create", "dup", "--image", SBF_IMAGE);
	cr_assert_eq(r.status, 4);
	cr_assert(strstr(r.err, "already exists"), "%s", r.err);
	tu_run_free(&r);
	r = SB("exec", "dup", "--", "true");
	cr_assert_eq(r.status, 0, "the first one is untouched: %s", r.err);
	tu_run_free(&r);

	r = SB("stop", "ghost");
	cr_assert_eq(r.status, 3);
	cr_assert(strstr(r.err, "no sandbox named 'ghost'"), "%s", r.err);
	tu_run_free(&r);
	r = SB("inspect", "ghost");
	cr_assert_eq(r.status, 3);
	tu_run_free(&r);
	r = SB("create", "noimg", "--image", "nosuch:image");
	cr_assert_eq(r.status, 3, "%s", r.err);
	tu_run_free(&r);
	/* every command that takes a name refuses a bad one before anything
	 * (shell once crashed on it: it closed a sandbox it had not opened) */
	static const char *const bad[][4] = {
		{ "shell", "bad/name" }, { "stop", "bad/name" }, { "restore", "bad/name" }, { "pause", "bad/name" },
		{ "resume", "bad/name" }, { "rm", "bad/name" }, { "fork", "bad/name", "x" }, { "diff", "bad/name" },
		{ "timeline", "bad/name" }, { "logs", "bad/name" }, { "session", "start", "bad/name" },
		{ "exec", "bad/name", "--", "true" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = SB(bad[i][0], bad[i][1], bad[i][2], bad[i][3]);
		/* exec's own failures are 125: its other statuses are the command's */
		cr_assert_eq(r.status, strcmp(bad[i][0], "exec") ? 2 : 125, "%s: %d %s", bad[i][0], r.status, r.err);
		cr_assert(strstr(r.err, "invalid sandbox name 'bad/name'"), "%s: %s", bad[i][0], r.err);
		tu_run_free(&r);
	}
}

Test(sandbox, exec_in_two_sandboxes_runs_in_parallel)
{
	create_ok("a", NULL, NULL);
	create_ok("b", NULL, NULL);
	/* a waits for a file that only b's exec writes: serialised execs would time out */
	char *bin = tu_buildpath("sandbench");
	pid_t pid = fork();
	if (pid == 0) {
		execl(bin, bin, "--root", f.dir, "exec", "--timeout", "60", "a", "--", "sh", "-c",
		      "while [ ! -f /exchange/go ]; do :; done; echo seen > /exchange/done", (char *)NULL);
		_exit(127);
	}
	sb_proc_keep(pid, 1); /* ours to wait for: the subreaper must leave it alone */
	struct tu_run r = SB("exec", "b", "--", "touch", "/exchange/go");
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_run_free(&r);
	int status;
	waitpid(pid, &status, 0);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	char *done = sb_strdupf("%s/exchange/done", f.dir);
	struct stat st;
	cr_assert_eq(stat(done, &st), 0);
	free(done), free(bin);
}

Test(sandbox, ls_and_inspect_json)
{
	create_ok("one", "--label", "team=x");
	struct tu_run r = SB("create", "two", "--image", SBF_IMAGE, "--owner", "plugin:search", "--permanent");
	tu_run_free(&r);
	r = SB("ls", "--json");
	json_t *doc = json_loads(r.out, 0, NULL);
	cr_assert_eq(json_array_size(doc), 2, "%s", r.out);
	json_t *two = json_array_get(doc, 1);
	cr_assert_str_eq(json_string_value(json_object_get(two, "name")), "two");
	cr_assert_str_eq(json_string_value(json_object_get(two, "owner")), "plugin:search");
	cr_assert(json_is_null(json_object_get(two, "expires_in")));
	cr_assert_eq(json_is_false(json_object_get(two, "network")), 1);
	json_decref(doc);
	tu_run_free(&r);
	r = SB("inspect", "--json", "one");
	doc = json_loads(r.out, 0, NULL);
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(doc, "labels"), "team")), "x");
	cr_assert_gt(json_integer_value(json_object_get(json_object_get(doc, "stats"), "memory_usage")), 0,
		     "memory use from runsc events: %s", r.out);
	json_decref(doc);
	tu_run_free(&r);
	r = SB("ls");
	cr_assert(strstr(r.out, "one") && strstr(r.out, "temporary") && strstr(r.out, "permanent"), "%s", r.out);
	tu_run_free(&r);
}

Test(sandbox, run_rm_leaves_nothing)
{
	struct tu_run r = SB("run", "--rm", "--image", SBF_IMAGE, "--", "sh", "-c", "echo once; exit 4");
	cr_assert_eq(r.status, 4, "%s", r.err);
	cr_assert_str_eq(r.out, "once\n");
	tu_run_free(&r);
	struct sb_sandbox_info *list;
	size_t n;
	cr_assert_eq(sb_sandbox_list(&list, &n, f.root, NULL), 0);
	cr_assert_eq(n, 0);
	sb_sandbox_list_free(list, n);
}

/* Reads the session's pty until want shows up or the deadline passes. */
static int read_until(struct sb_shell *s, const char *want, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int waited = 0; waited < 20000 && !strstr(buf, want);) {
		struct pollfd p = { .fd = sb_shell_fd(s), .events = POLLIN };
		int n = poll(&p, 1, 100);
		waited += 100;
		if (n <= 0)
			continue;
		ssize_t r = read(p.fd, buf + len, size - 1 - len);
		if (r <= 0)
			break;
		len += (size_t)r;
		buf[len] = '\0';
	}
	return strstr(buf, want) != NULL;
}

Test(sandbox, session_is_a_tty_and_stop_ends_it)
{
	struct sb_shell *s;
	struct sb_error err;
	char buf[8192];

	create_ok("tty", NULL, NULL);
	cr_assert_eq(sb_shell_open(&s, f.root, "tty", &(struct sb_shell_opts){ .rows = 30, .cols = 100 }, &err), 0, "%s", err.msg);
	const char *cmd = "stty size; [ -t 0 ] && echo TTY-$((40+2))\n";
	cr_assert_eq(write(sb_shell_fd(s), cmd, strlen(cmd)), (ssize_t)strlen(cmd));
	cr_assert(read_until(s, "TTY-42", buf, sizeof(buf)), "%s", buf);
	cr_assert(strstr(buf, "30 100"), "the pty size reaches the shell: %s", buf);
	cr_assert_eq(sb_shell_resize(s, 40, 120), 0);
	cmd = "stty size\n";
	cr_assert_eq(write(sb_shell_fd(s), cmd, strlen(cmd)), (ssize_t)strlen(cmd));
	cr_assert(read_until(s, "40 120", buf, sizeof(buf)), "resize follows: %s", buf);

	/* stop ends the attached session first, so the checkpoint stays restorable */
	cr_assert_eq(sb_sandbox_stop(f.root, "tty", NULL, &err), 0, "%s", err.msg);
	int status = -1;
	for (int i = 0; i < 200 && !sb_shell_poll(s, &status); i++)
		poll(NULL, 0, 10);
	cr_assert(sb_shell_poll(s, &status), "the session ended with the stop");
	sb_shell_close(s);
	cr_assert_eq(sb_sandbox_restore(f.root, "tty", &err), 0, "%s", err.msg);
	struct sb_sandbox_info info;
	cr_assert_eq(sb_sandbox_inspect(&info, f.root, "tty", NULL), 0);
	cr_assert_eq(info.rec.state, SB_STATE_RUNNING);
	/* Known runsc limit: under heavy load the sentry may still hold the killed
	 * session's host pty at checkpoint time; restore then says so and cold-starts
	 * (held_host_file_means_a_cold_start_that_says_why) */
	cr_assert(strstr(info.rec.reason, "restored from checkpoint") ||
		  strstr(info.rec.reason, "held a host file"), "%s", info.rec.reason);
	sb_sandbox_info_clear(&info);
}

Test(sandbox, held_host_file_means_a_cold_start_that_says_why)
{
	struct sb_sandbox_info info;
	struct sb_error err;

	create_ok("held", NULL, NULL);
	/* the background sleep keeps the exec's output pipes, host files to runsc */
	struct tu_run r = SB("exec", "held", "--", "sh", "-c", "sleep 1000 & echo started");
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_run_free(&r);
	cr_assert_eq(sb_sandbox_stop(f.root, "held", NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(sb_sandbox_restore(f.root, "held", &err), 0, "%s", err.msg);
	cr_assert_eq(sb_sandbox_inspect(&info, f.root, "held", NULL), 0);
	cr_assert_eq(info.rec.state, SB_STATE_RUNNING);
	cr_assert(strstr(info.rec.reason, "cold start") && strstr(info.rec.reason, "held a host file"), "%s",
		  info.rec.reason);
	sb_sandbox_info_clear(&info);
	/* the cold start ran no sleep from before */
	r = SB("exec", "held", "--", "sh", "-c", "ps | grep -c '[s]leep 1000'");
	cr_assert_str_eq(r.out, "0\n", "%s", r.err);
	tu_run_free(&r);
}

Test(sandbox, exec_timeout_kills_the_command)
{
	create_ok("slow", NULL, NULL);
	/* NaN, which compares false both ways, and values out of range */
	static const char *const bad[] = { "nan", "-nan", "0", "-1", "86401", "1e300", "inf", "", "5s" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct tu_run b = SB("exec", "--timeout", bad[i], "slow", "--", "true");
		cr_assert(b.status == 2 && strstr(b.err, "invalid timeout"), "--timeout '%s': %d %s", bad[i], b.status, b.err);
		tu_run_free(&b);
	}
	struct tu_run c = SB("create", "nancpu", "--image", SBF_IMAGE, "--cpus", "nan");
	cr_assert(c.status == 2 && strstr(c.err, "invalid CPU count"), "--cpus nan: %d %s", c.status, c.err);
	tu_run_free(&c);
	struct tu_run r = SB("exec", "--timeout", "1", "--json", "slow", "--", "sleep", "30");
	json_t *doc = json_loads(r.out, 0, NULL);
	cr_assert_not_null(doc, "%s %s", r.out, r.err);
	cr_assert(json_is_true(json_object_get(doc, "timed_out")), "%s", r.out);
	cr_assert_lt(json_integer_value(json_object_get(doc, "duration_ms")), 10000);
	cr_assert_neq(r.status, 0);
	json_decref(doc);
	tu_run_free(&r);
	/* the command inside was killed too, not only runsc exec */
	r = SB("exec", "slow", "--", "sh", "-c", "ps | grep -c '[s]leep 30'");
	cr_assert_str_eq(r.out, "0\n", "%s", r.err);
	tu_run_free(&r);
}

Test(sandbox, shell_command_on_a_terminal)
{
	int master, slave;
	struct termios before, after;
	char buf[8192] = "";
	size_t len = 0;

	create_ok("sh", NULL, NULL);
	cr_assert_eq(openpty(&master, &slave, NULL, NULL, &(struct winsize){ .ws_row = 25, .ws_col = 90 }), 0);
	cr_assert_eq(tcgetattr(slave, &before), 0);
	char *bin = tu_buildpath("sandbench");
	pid_t pid = fork();
	if (pid == 0) {
		setsid();
		ioctl(slave, TIOCSCTTY, 0);
		dup2(slave, 0), dup2(slave, 1), dup2(slave, 2);
		execl(bin, bin, "--root", f.dir, "shell", "sh", (char *)NULL);
		_exit(127);
	}
	sb_proc_keep(pid, 1);
	const char *cmd = "stty size; echo SHELL-$((6*7)); exit 7\n";
	cr_assert_eq(write(master, cmd, strlen(cmd)), (ssize_t)strlen(cmd));
	for (int waited = 0; waited < 20000 && !strstr(buf, "SHELL-42"); waited += 100) {
		struct pollfd p = { .fd = master, .events = POLLIN };
		if (poll(&p, 1, 100) <= 0)
			continue;
		ssize_t r = read(master, buf + len, sizeof(buf) - 1 - len);
		if (r <= 0)
			break;
		len += (size_t)r;
		buf[len] = '\0';
	}
	cr_assert(strstr(buf, "SHELL-42"), "%s", buf);
	cr_assert(strstr(buf, "25 90"), "the terminal size reaches the shell: %s", buf);
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 7, "the shell's status is passed through");
	cr_assert_eq(tcgetattr(slave, &after), 0);
	cr_assert_eq(after.c_lflag, before.c_lflag, "the terminal is restored");
	cr_assert_eq(after.c_iflag, before.c_iflag);
	close(master), close(slave);
	free(bin);
}

Test(sandbox, run_rm_cleans_up_on_ctrl_c)
{
	char *bin = tu_buildpath("sandbench");
	pid_t pid = fork();
	if (pid == 0) {
		execl(bin, bin, "--root", f.dir, "run", "--rm", "--image", SBF_IMAGE, "--", "sh", "-c",
		      "touch /exchange/started; sleep 60", (char *)NULL);
		_exit(127);
	}
	sb_proc_keep(pid, 1);
	char *started = sb_strdupf("%s/exchange/started", f.dir);
	cr_assert(tu_wait_for(file_exists, started, 20000), "the command ran");
	kill(pid, SIGINT);
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 130, "exit 128+SIGINT");
	struct sb_sandbox_info *list;
	size_t n;
	cr_assert_eq(sb_sandbox_list(&list, &n, f.root, NULL), 0);
	cr_assert_eq(n, 0, "the sandbox is gone");
	sb_sandbox_list_free(list, n);
	char *sboxes = sb_strdupf("%s/sandboxes", f.dir);
	cr_assert_not(sbf_mounted_below(sboxes));
	free(sboxes), free(started), free(bin);
}

/* The diagnostic log's file may take a descriptor the keeper remaps for its
 * own pipe: with the log on, every boot still works and each runsc call,
 * the keeper's too, is logged. */
Test(sandbox, lifecycle_with_the_diagnostic_log_on)
{
	char *log = sb_strdupf("%s/diagnostic.log", f.dir), *env0 = sb_strdupf("SANDBENCH_LOG=%s", log);
	const char *env[] = { env0, NULL };
	static const char *const steps[][3] = {
		{ "create", "logged", "--permanent" }, { "stop", "logged", NULL }, { "restore", "logged", NULL },
	};

	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		struct tu_run r = steps[i][2] ? tu_sandbench(f.dir, env, steps[i][0], steps[i][1], "--image", SBF_IMAGE,
							     steps[i][2], NULL)
					      : tu_sandbench(f.dir, env, steps[i][0], steps[i][1], NULL);
		cr_assert_eq(r.status, 0, "%s with the log on: %s", steps[i][0], r.err);
		tu_run_free(&r);
	}
	struct tu_run r = tu_sandbench(f.dir, env, "exec", "logged", "--", "echo", "ok", NULL);
	cr_assert_str_eq(r.out, "ok\n", "%s", r.err);
	tu_run_free(&r);
	char *text = tu_sh_out("cat %s", log);
	cr_assert(strstr(text, "create, start") && strstr(text, "checkpoint") && strstr(text, "restore"), "%s", text);
	free(text);
	free(env0);
	free(log);
}
