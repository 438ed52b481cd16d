/* Failure injection: the real runsc behind a wrapper that records every call
 * and fails the operation named by a marker file (ROOT/fail-OP: "exit" makes it
 * fail with a message, "kill" makes it die by SIGKILL before doing anything). */
#include "config.h"

#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/fs.h"
#include "sandbox/sandbox.h"
#include "sbfixture.h"
#include "testutil.h"

static struct sbf f;
static char *wrapper, *env_runsc;

static void setup(void)
{
	sbf_setup(&f, "faults");
	wrapper = sb_strdupf("%s/wrap-runsc", f.dir);
	char *script = sb_strdupf(
		"#!/bin/sh\n"
		"echo \"$*\" >> '%s/calls.log'\n"
		"for a; do case \"$a\" in create|start|exec|checkpoint|restore|delete|kill|state|list|events) op=$a; break;; esac; done\n"
		"if [ -f '%s/fail-'\"$op\" ]; then\n"
		"  case $(cat '%s/fail-'\"$op\") in\n"
		"    exit) echo \"injected failure of $op\" >&2; exit 1;;\n"
		"    kill) kill -9 $$;;\n"
		"  esac\n"
		"fi\n"
		"exec runsc \"$@\"\n", f.dir, f.dir, f.dir);
	cr_assert_eq(sb_fs_write_atomic(wrapper, script, strlen(script), 0755, NULL), 0);
	free(script);
	env_runsc = sb_strdupf("SANDBENCH_RUNSC=%s", wrapper);
	setenv("SANDBENCH_RUNSC", wrapper, 1);
}

static void teardown(void)
{
	unsetenv("SANDBENCH_RUNSC");
	sbf_teardown(&f);
	free(wrapper);
	free(env_runsc);
}

TestSuite(faults, .init = setup, .fini = teardown, .timeout = 120);

#define SB(...) tu_sandbench(f.dir, (const char *[]){ env_runsc, NULL }, __VA_ARGS__, NULL)

static void inject(const char *op, const char *mode)
{
	char *path = sb_strdupf("%s/fail-%s", f.dir, op);
	if (mode)
		cr_assert_eq(sb_fs_write_atomic(path, mode, strlen(mode), 0644, NULL), 0);
	else
		unlink(path);
	free(path);
}

static int run_ok(struct tu_run r)
{
	int ok = r.status == 0;
	if (!ok)
		fprintf(stderr, "sandbench failed (%d): %s", r.status, r.err);
	tu_run_free(&r);
	return ok;
}

/* How many runsc calls of the log have op as their subcommand. */
static int calls_of(const char *op)
{
	char *log = sb_strdupf("%s/calls.log", f.dir), *text = NULL, *save = NULL;
	char *word = sb_strdupf(" %s ", op);
	int n = 0;

	if (sb_fs_read_file(&text, NULL, log, 1 << 20, NULL) == 0)
		for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
			n += strstr(l, word) != NULL;
	free(text), free(log), free(word);
	return n;
}

static char *box_id(void)
{
	struct sb_sandbox_info info;
	cr_assert_eq(sb_sandbox_inspect(&info, f.root, "box", NULL), 0);
	char *id = strdup(info.rec.id);
	sb_sandbox_info_clear(&info);
	return id;
}

static void assert_box_gone(const char *id)
{
	char *dir = sb_strdupf("%s/sandboxes/box", f.dir);
	struct stat st;
	cr_assert_neq(stat(dir, &st), 0);
	cr_assert_not(sbf_mounted_below(dir));
	cr_assert_not(sbf_runsc_has(&f, id));
	cr_assert_not(sbf_cgroup_exists(id));
	free(dir);
}

Test(faults, every_call_has_the_root_and_the_same_shaping_flags)
{
	cr_assert(run_ok(SB("create", "box", "--image", SBF_IMAGE)));
	cr_assert(run_ok(SB("exec", "box", "--", "true")));
	cr_assert(run_ok(SB("stop", "box")));
	cr_assert(run_ok(SB("restore", "box")));
	cr_assert(run_ok(SB("rm", "box")));

	char *log = sb_strdupf("%s/calls.log", f.dir), *text, *save = NULL;
	char *root_flag = sb_strdupf("--root=%s/runsc ", f.dir);
	cr_assert_eq(sb_fs_read_file(&text, NULL, log, 1 << 20, NULL), 0);
	int shaped = 0, lines = 0;
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save), lines++) {
		cr_assert_eq(strncmp(l, root_flag, strlen(root_flag)), 0, "--root first: %s", l);
		const char *rest = l + strlen(root_flag);
		/* the subcommand is the first word that is not a flag; what precedes it is global */
		const char *op = rest;
		while (!strncmp(op, "--", 2) && strchr(op, ' '))
			op = strchr(op, ' ') + 1;
		static const char *const shaping[] = { "create ", "start ", "exec ", "checkpoint ", "restore " };
		for (size_t i = 0; i < sizeof(shaping) / sizeof(shaping[0]); i++) {
			if (strncmp(op, shaping[i], strlen(shaping[i])) != 0)
				continue;
			cr_assert_eq(strncmp(rest, "--network=none --platform=ptrace ", 33), 0, "shaping flags: %s", l);
			cr_assert_eq(op - rest, 33, "nothing else before the subcommand: %s", l);
			shaped++;
		}
		cr_assert_null(strstr(l, "kvm"));
	}
	cr_assert_geq(shaped, 5, "create, start, exec, checkpoint, restore seen");
	cr_assert_geq(lines, 7);
	free(text), free(log), free(root_flag);
}

Test(faults, checkpoint_dying_leaves_the_sandbox_running)
{
	cr_assert(run_ok(SB("create", "box", "--image", SBF_IMAGE)));
	inject("checkpoint", "kill");
	struct tu_run r = SB("stop", "box");
	cr_assert_neq(r.status, 0);
	cr_assert(strstr(r.err, "cannot stop sandbox 'box'"), "%s", r.err);
	tu_run_free(&r);
	inject("checkpoint", NULL);
	struct sb_sandbox_info info;
	cr_assert_eq(sb_sandbox_inspect(&info, f.root, "box", NULL), 0);
	cr_assert_eq(info.rec.state, SB_STATE_RUNNING);
	sb_sandbox_info_clear(&info);
	char *tmp = sb_strdupf("%s/sandboxes/box/checkpoint.tmp", f.dir);
	struct stat st;
	cr_assert_neq(stat(tmp, &st), 0, "the partial checkpoint is gone");
	free(tmp);
	cr_assert(run_ok(SB("exec", "box", "--", "true")), "still usable");
	cr_assert(run_ok(SB("stop", "box")), "and stoppable once runsc works");
}

Test(faults, failing_delete_after_checkpoint_leaves_broken_then_force_cleans)
{
	cr_assert(run_ok(SB("create", "box", "--image", SBF_IMAGE)));
	char *id = box_id();
	inject("delete", "exit");
	struct tu_run r = SB("stop", "box");
	cr_assert_neq(r.status, 0);
	tu_run_free(&r);
	struct sb_sandbox_info info;
	cr_assert_eq(sb_sandbox_inspect(&info, f.root, "box", NULL), 0);
	cr_assert_eq(info.rec.state, SB_STATE_BROKEN);
	cr_assert(strstr(info.rec.reason, "injected failure of delete"), "%s", info.rec.reason);
	sb_sandbox_info_clear(&info);
	inject("delete", NULL);

	r = SB("rm", "box");
	cr_assert_eq(r.status, 4, "broken needs --force: %s", r.err);
	cr_assert(strstr(r.err, "--force"), "%s", r.err);
	tu_run_free(&r);
	cr_assert(run_ok(SB("rm", "--force", "box")));
	assert_box_gone(id);
	free(id);
}

Test(faults, failed_restore_rolls_back_to_stopped)
{
	cr_assert(run_ok(SB("create", "box", "--image", SBF_IMAGE)));
	cr_assert(run_ok(SB("exec", "box", "--", "sh", "-c", "echo mem > /tmp/in-memory")));
	cr_assert(run_ok(SB("stop", "box")));
	inject("restore", "exit");
	inject("create", "exit");
	struct tu_run r = SB("restore", "box");
	cr_assert_neq(r.status, 0);
	cr_assert(strstr(r.err, "injected failure of create"), "%s", r.err);
	tu_run_free(&r);
	struct sb_sandbox_info info;
	cr_assert_eq(sb_sandbox_inspect(&info, f.root, "box", NULL), 0);
	cr_assert_eq(info.rec.state, SB_STATE_STOPPED);
	cr_assert(info.has_checkpoint, "the checkpoint is kept for the next try");
	cr_assert(strstr(info.rec.reason, "restore failed"), "%s", info.rec.reason);
	sb_sandbox_info_clear(&info);
	char *dir = sb_strdupf("%s/sandboxes/box/rootfs", f.dir);
	cr_assert_not(sbf_mounted_below(dir), "the disk is unmounted again");
	free(dir);

	inject("restore", NULL);
	inject("create", NULL);
	cr_assert(run_ok(SB("restore", "box")));
	r = SB("exec", "box", "--", "cat", "/tmp/in-memory");
	cr_assert_str_eq(r.out, "mem\n", "the tmpfs (memory) came back: %s", r.err);
	tu_run_free(&r);
}

Test(faults, rm_ends_the_sandbox_process_without_runsc_kill)
{
	cr_assert(run_ok(SB("create", "box", "--image", SBF_IMAGE)));
	char *id = box_id();
	cr_assert(run_ok(SB("rm", "box")));
	cr_assert_eq(calls_of("kill"), 0, "SIGKILL went to the sandbox process directly");
	cr_assert_eq(calls_of("delete"), 1);
	assert_box_gone(id);
	free(id);
}

Test(faults, rm_never_kills_another_process_named_by_the_pid_file)
{
	cr_assert(run_ok(SB("create", "box", "--image", SBF_IMAGE)));
	char *id = box_id();
	/* the pid file names a process that is not the sandbox (as after pid reuse) */
	pid_t bystander = fork();
	if (bystander == 0) {
		pause();
		_exit(0);
	}
	cr_assert_gt(bystander, 0);
	char *pid_file = sb_strdupf("%s/sandboxes/box/runsc.pid", f.dir);
	char *text = sb_strdupf("%ld", (long)bystander);
	cr_assert_eq(sb_fs_write_atomic(pid_file, text, strlen(text), 0644, NULL), 0);
	struct tu_run r = SB("rm", "box");
	int bystander_alive = kill(bystander, 0) == 0;
	kill(bystander, SIGKILL);
	waitpid(bystander, NULL, 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_run_free(&r);
	cr_assert(bystander_alive, "rm left the other process alone");
	cr_assert_eq(calls_of("kill"), 1, "and ended the sandbox through runsc kill");
	assert_box_gone(id);
	free(pid_file), free(text), free(id);
}
